//! The event queue and its total order (docs/design.md §2).
//!
//! Events pop in increasing `(time, class, rank, target)`: first by time, then by [`Class`]
//! (packet arrivals, then NIC receive interrupts, then timers, then samples: an interrupt at `t`
//! hands the stack every packet that reached its host up to and including `t`, and a timer or a
//! sample at `t` sees every packet delivered at `t`), then by the *rank* of the entity the event
//! acts on, then by its target index. The key is packed into one `u128` so comparisons are a
//! single integer compare, which makes a heap entry 16 bytes.
//!
//! ## Simultaneous events of different entities
//! A class has one kind of entity (arrivals: link directions, interrupts: hosts, timers:
//! endpoints, samples: the sampler), and two events of one class at the same nanosecond pop in
//! the order of their entities' ranks. A rank is a 41-bit hash of the entity's kind and *name*
//! ([`rank`]: a link direction `"bottleneck.ab"`, a host, a flow's sender or receiver),
//! computed once when the entity is built, so the order of simultaneous events does not depend
//! on where an entity sits in the configuration: swapping two flows in the scenario file swaps
//! their results and changes nothing else (tests/test_flow_order.py). The hash does not take
//! the seed: a run without random elements stays the same run under every seed (a tie between
//! two names always goes the same way, as it went to the flow listed first before). Ranks that
//! collide (2^-41 per pair) fall back to the target index, so keys stay unique per entity.
//!
//! Events of one entity keep their scheduling order: two events with the same time, class and
//! target have equal keys, and they are interchangeable (the event names only what to act on,
//! and the handler looks at the entity's state when it runs: a link direction has at most one
//! arrival event queued, its next packet's; an endpoint's timer runs only when it is the
//! endpoint's current deadline). Until 2026-11-27 the third field was a global scheduling
//! counter (`seq`), which followed the entities' positions: both flows' first packets tie at
//! t = 0, so with two flows swapped every later time differed.

use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Tie-break class of an event at equal time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    /// A packet reaches the far end of a link direction.
    Arrival = 0,
    /// A host's NIC raises a receive interrupt and hands the stack the packets it held
    /// (receive interrupt coalescing, src/host.rs; only with knob `rx_coalesce`).
    Interrupt = 1,
    /// An endpoint's timer (RTO, delayed ACK, persist, pacing, start/stop, NIC wake-up).
    Timer = 2,
    /// A measurement sample.
    Sample = 3,
}

/// What an event acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The head of channel `i`'s in-flight FIFO arrives.
    Channel(u32),
    /// Endpoint `i`'s timer.
    Endpoint(u32),
    /// The periodic sampler.
    Sampler,
    /// Host (node) `i`'s receive interrupt; only with [`Class::Interrupt`], which tells it
    /// apart from a channel with the same index.
    Host(u32),
    /// The head of channel `i`'s in-flight FIFO falls due or is sent, on a channel served by
    /// the emulator thread (src/emuthread.rs). Its own target, so that the arrival path of
    /// every other channel has no test for it; ordered like the channel's arrivals (same
    /// class and rank).
    ThreadChannel(u32),
}

/// Bits of the key that name the [`Target`] (the lowest); above them the entity's rank.
const TARGET_BITS: u32 = 21;
const TARGET_MASK: u128 = (1 << TARGET_BITS) - 1;
/// Bits of an entity's rank ([`rank`]): the rest of the low word below the class.
const RANK_BITS: u32 = 62 - TARGET_BITS;
const RANK_MASK: u64 = (1 << RANK_BITS) - 1;
const ENDPOINT_BASE: u32 = 1 << (TARGET_BITS - 1);
const SAMPLER_CODE: u32 = (1 << TARGET_BITS) - 1;
/// Largest channel or endpoint index an event can name (2^20 − 2).
pub const MAX_TARGET_INDEX: u32 = ENDPOINT_BASE - 2;
/// The code bit that tells a [`Target::ThreadChannel`] from a [`Target::Channel`]: channels are
/// numbered below it.
pub const THREAD_CHANNEL_FLAG: u32 = 1 << (TARGET_BITS - 2);
/// Largest channel index an event can name (2^19 − 1).
pub const MAX_CHANNEL_INDEX: u32 = THREAD_CHANNEL_FLAG - 1;

/// An entity's rank among simultaneous events of its class (module docs): a hash of the
/// entity's kind and name (not of the seed), already shifted into place in the key's low word.
/// Computed once per entity, when it is built.
pub fn rank(kind: &str, name: &str) -> u64 {
    (crate::rng::derive_seed(0, "event-rank", &format!("{kind}:{name}")) & RANK_MASK) << TARGET_BITS
}

impl Target {
    #[inline]
    fn code(self) -> u32 {
        match self {
            Target::Channel(i) => {
                // With the flag bit: a thread channel's arrival (`channel_arrival`).
                debug_assert!(i & !THREAD_CHANNEL_FLAG <= MAX_CHANNEL_INDEX);
                i
            }
            Target::ThreadChannel(i) => {
                debug_assert!(i <= MAX_CHANNEL_INDEX);
                THREAD_CHANNEL_FLAG | i
            }
            Target::Endpoint(i) => {
                debug_assert!(i <= MAX_TARGET_INDEX);
                ENDPOINT_BASE | i
            }
            Target::Sampler => SAMPLER_CODE,
            Target::Host(i) => {
                debug_assert!(i <= MAX_TARGET_INDEX);
                i
            }
        }
    }

    /// Channel `id`'s arrival target given its thread flag (0 or [`THREAD_CHANNEL_FLAG`]), for
    /// the packet path, where a branch costs: a `Channel` whose index carries the flag bit has
    /// the code of [`Target::ThreadChannel`]`(id)`, which is what the key holds and what
    /// [`Event::target`] decodes.
    #[inline(always)]
    pub fn channel_arrival(id: u32, thread_flag: u32) -> Target {
        debug_assert!(id <= MAX_CHANNEL_INDEX);
        debug_assert!(thread_flag == 0 || thread_flag == THREAD_CHANNEL_FLAG);
        Target::Channel(id | thread_flag)
    }

    #[inline]
    fn from_code(c: u32, class: u128) -> Target {
        if class == Class::Interrupt as u128 {
            Target::Host(c)
        } else if c < THREAD_CHANNEL_FLAG {
            Target::Channel(c)
        } else if c < ENDPOINT_BASE {
            Target::ThreadChannel(c - THREAD_CHANNEL_FLAG)
        } else if c == SAMPLER_CODE {
            Target::Sampler
        } else {
            Target::Endpoint(c - ENDPOINT_BASE)
        }
    }
}

/// An event: its key `(time, class, rank, target)`, one `u128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    key: u128,
}

impl Event {
    #[inline]
    pub fn time(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
    /// The channel of a packet arrival ([`Class::Arrival`] naming a [`Target::Channel`]), the
    /// event most runs are made of: one mask test on the key's low word instead of decoding the
    /// class and the target.
    #[inline(always)]
    pub fn arrival_channel(&self) -> Option<u32> {
        const NOT_CHANNEL_ARRIVAL: u64 = (3 << 62) | (ENDPOINT_BASE | THREAD_CHANNEL_FLAG) as u64;
        let lo = self.key as u64;
        (lo & NOT_CHANNEL_ARRIVAL == 0).then_some((lo & TARGET_MASK as u64) as u32)
    }
    #[inline]
    pub fn target(&self) -> Target {
        Target::from_code((self.key & TARGET_MASK) as u32, (self.key >> 62) & 3)
    }
}

/// Pack a key: time in the high 64 bits, class in the next 2, then the entity's `rank` (as
/// [`rank`] returns it: shifted into place) and the target.
#[inline]
pub fn pack_key(time: Nanos, class: Class, rank: u64, target: Target) -> u128 {
    debug_assert!(rank & !(RANK_MASK << TARGET_BITS) == 0);
    ((time as u128) << 64) | ((class as u128) << 62) | (rank | target.code() as u64) as u128
}

/// Most events a queue holds in its sorted array ([`EventQueue`]) before it becomes a heap.
pub const SMALL_EVENTS: usize = 32;
/// A heap that comes down to this many events goes back to the sorted array (half of
/// [`SMALL_EVENTS`], so that a queue near the limit does not switch back and forth).
pub const SHRINK_EVENTS: usize = SMALL_EVENTS / 2;

/// Priority queue of events.
///
/// A run holds few events at once (at most one arrival per link direction, one timer per
/// endpoint, the sampler), so the queue starts as an array sorted in decreasing key order,
/// the next event last: taking it is a `pop`, and a new event (most often due soon) is moved
/// from the end to its place past the few sooner ones. A queue that comes to hold more than
/// [`SMALL_EVENTS`] events becomes a binary heap, and goes back to the array once it holds
/// [`SHRINK_EVENTS`] or fewer. Equal keys are interchangeable events (module docs), so the
/// order of pops is the same either way.
///
/// Going back matters on long runs: an endpoint whose deadline moves earlier schedules a new
/// timer event and leaves the old one to be skipped when it fires, so a burst of such moves
/// (two dozen within 3 ms in an Iwanaga I5 CUBIC trial) can fill the array once. Before the
/// queue went back, that made the rest of the 300-s run use the heap with about ten events in
/// it: 9 % of the run's instructions and a fifth of its mispredicted branches (cachegrind).
pub struct EventQueue {
    /// While not `big`: the first `n` are the keys, decreasing (the smallest, next to pop,
    /// last).
    small: [u128; SMALL_EVENTS],
    n: usize,
    /// `SMALL_EVENTS` while the array is in use, 0 once `big` (one comparison tells whether an
    /// insert goes to the array).
    small_cap: usize,
    /// Once `big`: keys, negated order (`Reverse`): `BinaryHeap` is a max-heap and the
    /// smallest key pops first.
    heap: BinaryHeap<Reverse<u128>>,
    big: bool,
    /// (`big` only) The heap's top is an event already removed ([`EventQueue::remove_next`])
    /// whose slot the next schedule takes over (see there); every reading method removes it
    /// first.
    vacant: bool,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            small: [0; SMALL_EVENTS],
            n: 0,
            small_cap: SMALL_EVENTS,
            heap: BinaryHeap::new(),
            big: false,
            vacant: false,
            popped: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule an event at `time` of `class` on `target`, an entity of `rank` ([`rank`]).
    #[inline]
    pub fn schedule(&mut self, time: Nanos, class: Class, rank: u64, target: Target) {
        self.insert(pack_key(time, class, rank, target));
    }

    /// Put `key` in the queue.
    #[inline(always)]
    fn insert(&mut self, key: u128) {
        if self.n < self.small_cap {
            self.n += 1;
            Self::sink(&mut self.small[..self.n], key);
        } else {
            self.insert_big(key);
        }
    }

    /// The last key of `small` is `key`: move it towards the front past the smaller keys.
    #[inline(always)]
    fn sink(small: &mut [u128], key: u128) {
        // A walk of references, not indices: no bounds checks in the loop.
        let Some((mut hole, sooner)) = small.split_last_mut() else {
            return;
        };
        for k in sooner.iter_mut().rev() {
            if *k >= key {
                break;
            }
            *hole = *k;
            hole = k;
        }
        *hole = key;
    }

    /// [`EventQueue::insert`] on a heap (turning the array into one when full): into the
    /// vacant top slot when there is one (one sift down instead of the pop's sift and the
    /// push's), else as a push.
    #[inline(never)]
    fn insert_big(&mut self, key: u128) {
        if !self.big {
            self.big = true;
            self.small_cap = 0;
            self.heap
                .extend(self.small[..self.n].iter().map(|&k| Reverse(k)));
            self.n = 0;
        }
        if self.vacant {
            self.vacant = false;
            if let Some(mut top) = self.heap.peek_mut() {
                *top = Reverse(key); // sifts down when `top` is dropped
            }
        } else {
            self.heap.push(Reverse(key));
        }
    }

    /// Remove the vacant top slot, if any (before anything reads the heap).
    #[inline]
    fn settle(&mut self) {
        if self.vacant {
            self.vacant = false;
            self.heap.pop();
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = if self.n > 0 {
            self.n -= 1;
            Some(self.small[self.n])
        } else if self.big {
            self.settle();
            let e = self.heap.pop().map(|Reverse(key)| key);
            if self.heap.len() <= SHRINK_EVENTS {
                self.shrink();
            }
            e
        } else {
            None
        };
        if e.is_some() {
            self.popped += 1;
        }
        e.map(|key| Event { key })
    }

    /// The next event, left in the queue (remove it with [`EventQueue::remove_next`] or
    /// [`EventQueue::replace_next`]).
    #[inline]
    pub fn peek(&mut self) -> Option<Event> {
        // `n − 1` wraps when the array is empty: one test for "not empty" and "in bounds".
        if let Some(&key) = self.small.get(self.n.wrapping_sub(1)) {
            Some(Event { key })
        } else if self.big {
            self.settle();
            self.heap.peek().map(|&Reverse(key)| Event { key })
        } else {
            None
        }
    }

    /// Remove the event [`EventQueue::peek`] returned. On a heap the removal is deferred: its
    /// slot stays at the top, marked vacant, and the next event scheduled takes it over (the
    /// handler of an event usually schedules one: a forwarded packet's arrival at the next
    /// hop, a timer).
    #[inline]
    pub fn remove_next(&mut self) {
        if !self.big {
            if self.n > 0 {
                self.n -= 1;
                self.popped += 1;
            }
            return;
        }
        debug_assert!(!self.vacant && !self.heap.is_empty());
        if !self.heap.is_empty() {
            self.vacant = true;
            self.popped += 1;
            if self.heap.len() <= SHRINK_EVENTS + 1 {
                self.shrink();
            }
        }
    }

    /// Turn the heap back into the sorted array (it holds at most [`SHRINK_EVENTS`] events once
    /// the vacant slot is gone). The heap keeps its allocation for the next time.
    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        self.settle();
        let n = self.heap.len();
        debug_assert!(n <= SHRINK_EVENTS);
        for (slot, Reverse(key)) in self.small.iter_mut().zip(self.heap.drain()) {
            *slot = key;
        }
        // Decreasing, the next event last.
        self.small[..n].sort_unstable_by(|a, b| b.cmp(a));
        self.n = n;
        self.big = false;
        self.small_cap = SMALL_EVENTS;
    }

    /// Remove the event [`EventQueue::peek`] returned and schedule another, in one step
    /// instead of a pop and a push (one sift of the heap).
    #[inline]
    pub fn replace_next(&mut self, time: Nanos, class: Class, rank: u64, target: Target) {
        let key = pack_key(time, class, rank, target);
        // As in `peek`: one test for "not empty" and "in bounds".
        let last = self.n.wrapping_sub(1);
        if last < SMALL_EVENTS {
            self.popped += 1;
            Self::sink(&mut self.small[..=last], key);
            return;
        }
        if !self.big {
            self.insert(key);
            return;
        }
        self.replace_next_big(key);
    }

    #[inline(never)]
    fn replace_next_big(&mut self, key: u128) {
        debug_assert!(!self.vacant);
        if self.heap.is_empty() {
            self.heap.push(Reverse(key));
            return;
        }
        if let Some(mut top) = self.heap.peek_mut() {
            *top = Reverse(key); // sifts down when `top` is dropped
        }
        self.popped += 1;
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Nanos> {
        self.peek().map(|e| e.time())
    }

    pub fn len(&self) -> usize {
        if self.big {
            self.heap.len() - usize::from(self.vacant)
        } else {
            self.n
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Count an event that its scheduler handled without queueing it, as if it had been
    /// scheduled and popped (a packet passed on at admission, src/sim.rs "Passing packets on"),
    /// so that [`EventQueue::popped`] counts the events of the run either way.
    #[inline(always)]
    pub fn count_unqueued(&mut self) {
        self.popped += 1;
    }

    /// Events popped so far (with those counted by [`EventQueue::count_unqueued`]).
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue) -> Vec<(Nanos, Target)> {
        std::iter::from_fn(|| q.pop())
            .map(|e| (e.time(), e.target()))
            .collect()
    }

    #[test]
    fn test_order_time_then_class_then_rank() {
        let (r1, r2) = (rank("ep", "a.snd"), rank("ep", "b.snd"));
        let (lo, hi) = if r1 < r2 { (1, 2) } else { (2, 1) };
        let mut q = EventQueue::new();
        q.schedule(10, Class::Sample, 0, Target::Sampler);
        q.schedule(10, Class::Timer, r1, Target::Endpoint(1));
        q.schedule(10, Class::Timer, r2, Target::Endpoint(2));
        q.schedule(5, Class::Sample, 0, Target::Sampler);
        q.schedule(10, Class::Arrival, rank("ch", "l.ab"), Target::Channel(0));
        assert_eq!(
            drain(&mut q),
            vec![
                (5, Target::Sampler),
                (10, Target::Channel(0)),
                (10, Target::Endpoint(lo)),
                (10, Target::Endpoint(hi)),
                (10, Target::Sampler),
            ]
        );
    }

    #[test]
    fn test_simultaneous_events_order_by_name_rank_not_by_position() {
        // Six entities' events at one time, scheduled in every rotation of their order (as if
        // their flows or links were listed in another order, which moves their indices too):
        // they always pop in the order of their names' ranks.
        let names = [
            "vista.snd",
            "linux.snd",
            "vista.rcv",
            "linux.rcv",
            "f0.snd",
            "x",
        ];
        let ranks: Vec<u64> = names.iter().map(|n| rank("ep", n)).collect();
        let mut by_rank: Vec<usize> = (0..names.len()).collect();
        by_rank.sort_by_key(|&i| ranks[i]);
        let expect: Vec<&str> = by_rank.iter().map(|&i| names[i]).collect();
        for shift in 0..names.len() {
            let mut q = EventQueue::new();
            // Position `pos` holds entity `(pos + shift) % n`, and is its target index.
            let at: Vec<usize> = (0..names.len())
                .map(|p| (p + shift) % names.len())
                .collect();
            for (pos, &e) in at.iter().enumerate() {
                q.schedule(100, Class::Timer, ranks[e], Target::Endpoint(pos as u32));
            }
            let got: Vec<&str> = drain(&mut q)
                .into_iter()
                .map(|(_, t)| match t {
                    Target::Endpoint(pos) => names[at[pos as usize]],
                    t => panic!("{t:?}"),
                })
                .collect();
            assert_eq!(got, expect, "shift {shift}");
        }
        // The rank is a function of the kind and the name only.
        assert_eq!(rank("ep", "x"), ranks[5]);
        assert_ne!(rank("ch", "x"), ranks[5]);
        // Not a trivial order: the names' ranks are not in the order the names were listed.
        assert_ne!(by_rank, (0..names.len()).collect::<Vec<_>>());
    }

    #[test]
    fn test_same_entity_events_are_equal_and_colliding_ranks_fall_back_to_target() {
        // One entity, one time: equal keys (interchangeable events).
        let r = rank("ep", "a");
        assert_eq!(
            pack_key(4, Class::Timer, r, Target::Endpoint(9)),
            pack_key(4, Class::Timer, r, Target::Endpoint(9))
        );
        // Two entities whose ranks collide still have distinct keys, ordered by target index.
        let mut q = EventQueue::new();
        q.schedule(4, Class::Timer, r, Target::Endpoint(9));
        q.schedule(4, Class::Timer, r, Target::Endpoint(2));
        assert_eq!(
            drain(&mut q),
            vec![(4, Target::Endpoint(2)), (4, Target::Endpoint(9))]
        );
    }

    #[test]
    fn test_interrupts_after_arrivals_before_timers() {
        let mut q = EventQueue::new();
        let r = RANK_MASK << TARGET_BITS; // the largest rank: class still decides first
        q.schedule(10, Class::Timer, 0, Target::Endpoint(3));
        q.schedule(10, Class::Interrupt, 0, Target::Host(3));
        q.schedule(10, Class::Arrival, r, Target::Channel(3));
        q.schedule(9, Class::Interrupt, r, Target::Host(MAX_TARGET_INDEX));
        assert_eq!(
            drain(&mut q),
            vec![
                (9, Target::Host(MAX_TARGET_INDEX)),
                (10, Target::Channel(3)),
                (10, Target::Host(3)),
                (10, Target::Endpoint(3)),
            ]
        );
    }

    #[test]
    fn test_large_times_do_not_collide_with_class() {
        let mut q = EventQueue::new();
        q.schedule(u64::MAX - 1, Class::Arrival, 0, Target::Channel(1));
        q.schedule(
            u64::MAX - 2,
            Class::Sample,
            RANK_MASK << TARGET_BITS,
            Target::Sampler,
        );
        assert_eq!(q.pop().unwrap().target(), Target::Sampler);
    }

    #[test]
    fn test_targets_round_trip_and_rank_decides_before_them() {
        let mut q = EventQueue::new();
        let ts = [
            Target::Endpoint(MAX_TARGET_INDEX),
            Target::Channel(0),
            Target::Channel(MAX_CHANNEL_INDEX),
            Target::ThreadChannel(0),
            Target::ThreadChannel(MAX_CHANNEL_INDEX),
            Target::Endpoint(0),
            Target::Sampler,
        ];
        // Ranks in the reverse of the targets' codes: the ranks decide.
        for (i, &t) in ts.iter().enumerate() {
            q.schedule(7, Class::Timer, ((10 - i) as u64) << TARGET_BITS, t);
        }
        let order: Vec<_> = drain(&mut q).into_iter().map(|(_, t)| t).collect();
        let mut expect = ts.to_vec();
        expect.reverse();
        assert_eq!(order, expect);
        // The arrival fast path decodes the same channel.
        let e = Event {
            key: pack_key(
                3,
                Class::Arrival,
                RANK_MASK << TARGET_BITS,
                Target::Channel(77),
            ),
        };
        assert_eq!(e.arrival_channel(), Some(77));
        let e = Event {
            key: pack_key(3, Class::Timer, 0, Target::Channel(77)),
        };
        assert_eq!(e.arrival_channel(), None);
    }

    #[test]
    fn test_replace_next_pops_like_pop_then_push() {
        let mut a = EventQueue::new();
        let mut b = EventQueue::new();
        for (t, c) in [
            (5, Class::Timer),
            (3, Class::Arrival),
            (9, Class::Sample),
            (3, Class::Timer),
        ] {
            a.schedule(t, c, t << TARGET_BITS, Target::Endpoint(t as u32));
            b.schedule(t, c, t << TARGET_BITS, Target::Endpoint(t as u32));
        }
        a.pop();
        a.schedule(4, Class::Arrival, 1 << TARGET_BITS, Target::Channel(2));
        b.peek();
        b.replace_next(4, Class::Arrival, 1 << TARGET_BITS, Target::Channel(2));
        assert_eq!(drain(&mut a), drain(&mut b));
        assert_eq!(a.popped(), b.popped());
    }

    #[test]
    fn test_queue_pops_like_a_plain_heap() {
        // Random schedules, removals and pops: the sorted array, then the heap whose removals
        // are deferred (the next schedule takes the top slot) and which goes back to the array
        // when it shrinks, pop in the same order as a plain heap. Few distinct ranks and
        // targets, so that equal keys occur too.
        let mut rng = crate::rng::Rng::new(7);
        let mut q = EventQueue::new();
        let mut plain: BinaryHeap<Reverse<u128>> = BinaryHeap::new();
        let (mut was_big, mut switches) = (false, 0);
        for i in 0..40_000 {
            let op = rng.next_u64() % 4;
            // First half: the queue stays below SMALL_EVENTS (the sorted array); then it grows
            // into a heap.
            let op = if i < 20_000 && op < 2 && q.len() >= SMALL_EVENTS - 8 {
                3
            } else {
                op
            };
            // A heap only above SHRINK_EVENTS; above SMALL_EVENTS always one.
            assert!(q.big || q.len() <= SMALL_EVENTS);
            assert!(!q.big || q.len() > SHRINK_EVENTS);
            if i < 20_000 {
                assert!(!q.big);
            }
            switches += usize::from(q.big != was_big);
            was_big = q.big;
            match op {
                0 | 1 => {
                    let t = rng.next_u64() % 1000;
                    let r = (rng.next_u64() % 4) << TARGET_BITS;
                    let target = Target::Channel((rng.next_u64() % 3) as u32);
                    q.schedule(t, Class::Arrival, r, target);
                    plain.push(Reverse(pack_key(t, Class::Arrival, r, target)));
                }
                2 => {
                    let e = q.peek().map(|e| e.key);
                    assert_eq!(e, plain.peek().map(|r| r.0));
                    if e.is_some() {
                        q.remove_next();
                        plain.pop();
                    }
                }
                _ => {
                    assert_eq!(q.pop().map(|e| e.key), plain.pop().map(|r| r.0));
                }
            }
            assert_eq!(q.len(), plain.len());
        }
        // The random walk of the second half crossed both limits, both ways, several times.
        assert!(switches >= 4, "{switches}");
    }
}
