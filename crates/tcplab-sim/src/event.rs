//! The event queue and its total order (docs/design.md §2).
//!
//! Events pop in increasing `(time, class, seq)`: first by time, then by [`Class`] (packet
//! arrivals, then NIC receive interrupts, then timers, then samples: an interrupt at `t` hands
//! the stack every packet that reached its host up to and including `t`, and a timer or a sample
//! at `t` sees every packet delivered at `t`), then by `seq`, a counter assigned when the event was scheduled. The key is packed
//! into one `u128` so comparisons are a single integer compare; the event's target rides in the
//! key's lowest bits (below `seq`, so it never affects the order), which makes a heap entry 16 bytes.

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
}

/// Bits of the key below `seq` that name the [`Target`]; they never decide the order (`seq` is
/// unique), they only save carrying the target beside the key.
const TARGET_BITS: u32 = 21;
const TARGET_MASK: u128 = (1 << TARGET_BITS) - 1;
/// Bits of `seq`: 2^41 ≈ 2.2·10^12 events per run (days of computing at ~10^7 events/s);
/// [`EventQueue::take_seq`] panics rather than wrap.
const SEQ_BITS: u32 = 62 - TARGET_BITS;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const ENDPOINT_BASE: u32 = 1 << (TARGET_BITS - 1);
const SAMPLER_CODE: u32 = (1 << TARGET_BITS) - 1;
/// Largest channel or endpoint index an event can name (2^20 − 2).
pub const MAX_TARGET_INDEX: u32 = ENDPOINT_BASE - 2;

impl Target {
    #[inline]
    fn code(self) -> u32 {
        match self {
            Target::Channel(i) => {
                debug_assert!(i <= MAX_TARGET_INDEX);
                i
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

    #[inline]
    fn from_code(c: u32, class: u128) -> Target {
        if class == Class::Interrupt as u128 {
            Target::Host(c)
        } else if c < ENDPOINT_BASE {
            Target::Channel(c)
        } else if c == SAMPLER_CODE {
            Target::Sampler
        } else {
            Target::Endpoint(c - ENDPOINT_BASE)
        }
    }
}

/// An event: its key `(time, class, seq)` with the target in the lowest bits, one `u128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    key: u128,
}

impl Event {
    #[inline]
    pub fn time(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
    #[inline]
    pub fn seq(&self) -> u64 {
        ((self.key >> TARGET_BITS) as u64) & SEQ_MASK
    }
    /// The channel of a packet arrival ([`Class::Arrival`] naming a [`Target::Channel`]), the
    /// event most runs are made of: one mask test on the key's low word instead of decoding the
    /// class and the target.
    #[inline(always)]
    pub fn arrival_channel(&self) -> Option<u32> {
        const NOT_CHANNEL_ARRIVAL: u64 = (3 << 62) | ENDPOINT_BASE as u64;
        let lo = self.key as u64;
        (lo & NOT_CHANNEL_ARRIVAL == 0).then_some((lo & TARGET_MASK as u64) as u32)
    }
    #[inline]
    pub fn target(&self) -> Target {
        Target::from_code((self.key & TARGET_MASK) as u32, (self.key >> 62) & 3)
    }
}

/// Pack a key: time in the high 64 bits, class in the next 2, seq in the next 41, then the
/// target. Comparing two keys compares `(time, class, seq)`: seqs are unique, so the target bits
/// never decide.
#[inline]
pub fn pack_key(time: Nanos, class: Class, seq: u64, target: Target) -> u128 {
    debug_assert!(seq <= SEQ_MASK);
    ((time as u128) << 64)
        | ((class as u128) << 62)
        | ((seq as u128) << TARGET_BITS)
        | target.code() as u128
}

/// Most events a queue holds in its sorted array ([`EventQueue`]) before it becomes a heap.
pub const SMALL_EVENTS: usize = 32;
/// A heap that comes down to this many events goes back to the sorted array (half of
/// [`SMALL_EVENTS`], so that a queue near the limit does not switch back and forth).
pub const SHRINK_EVENTS: usize = SMALL_EVENTS / 2;

/// Priority queue of events with a global scheduling counter.
///
/// A run holds few events at once (at most one arrival per link direction, one timer per
/// endpoint, the sampler), so the queue starts as an array sorted in decreasing key order,
/// the next event last: taking it is a `pop`, and a new event (most often due soon) is moved
/// from the end to its place past the few sooner ones. A queue that comes to hold more than
/// [`SMALL_EVENTS`] events becomes a binary heap, and goes back to the array once it holds
/// [`SHRINK_EVENTS`] or fewer. Keys are unique, so the order of pops is the same either way.
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
    next_seq: u64,
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
            next_seq: 0,
            popped: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh sequence number (for events whose key is computed elsewhere, e.g. link FIFOs).
    #[inline]
    pub fn take_seq(&mut self) -> u64 {
        let s = self.next_seq;
        assert!(s <= SEQ_MASK, "event sequence numbers exhausted");
        self.next_seq += 1;
        s
    }

    /// The sequence number the next [`EventQueue::take_seq`] returns.
    #[inline]
    pub fn peek_seq(&self) -> u64 {
        self.next_seq
    }

    /// Schedule with a new sequence number.
    #[inline]
    pub fn schedule(&mut self, time: Nanos, class: Class, target: Target) {
        let seq = self.take_seq();
        self.insert(pack_key(time, class, seq, target));
    }

    /// Schedule with a sequence number taken earlier by [`EventQueue::take_seq`].
    #[inline]
    pub fn schedule_with_seq(&mut self, time: Nanos, class: Class, seq: u64, target: Target) {
        self.insert(pack_key(time, class, seq, target));
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
        let mut i = small.len() - 1;
        while i > 0 && small[i - 1] < key {
            small[i] = small[i - 1];
            i -= 1;
        }
        small[i] = key;
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

    /// Remove the event [`EventQueue::peek`] returned and schedule another with a sequence
    /// number taken earlier, in one step instead of a pop and a push (one sift of the heap).
    #[inline]
    pub fn replace_next(&mut self, time: Nanos, class: Class, seq: u64, target: Target) {
        let key = pack_key(time, class, seq, target);
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

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_order_time_then_class_then_seq() {
        let mut q = EventQueue::new();
        q.schedule(10, Class::Sample, Target::Sampler);
        q.schedule(10, Class::Timer, Target::Endpoint(1));
        q.schedule(10, Class::Timer, Target::Endpoint(2));
        q.schedule(5, Class::Sample, Target::Sampler);
        q.schedule(10, Class::Arrival, Target::Channel(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time(), e.target()))
            .collect();
        assert_eq!(
            order,
            vec![
                (5, Target::Sampler),
                (10, Target::Channel(0)),
                (10, Target::Endpoint(1)),
                (10, Target::Endpoint(2)),
                (10, Target::Sampler),
            ]
        );
    }

    #[test]
    fn test_interrupts_after_arrivals_before_timers() {
        let mut q = EventQueue::new();
        q.schedule(10, Class::Timer, Target::Endpoint(3));
        q.schedule(10, Class::Interrupt, Target::Host(3));
        q.schedule(10, Class::Arrival, Target::Channel(3));
        q.schedule(9, Class::Interrupt, Target::Host(MAX_TARGET_INDEX));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time(), e.target()))
            .collect();
        assert_eq!(
            order,
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
        q.schedule(u64::MAX - 1, Class::Arrival, Target::Channel(1));
        q.schedule(u64::MAX - 2, Class::Sample, Target::Sampler);
        assert_eq!(q.pop().unwrap().target(), Target::Sampler);
    }

    #[test]
    fn test_targets_round_trip_and_do_not_affect_order() {
        let mut q = EventQueue::new();
        q.schedule(7, Class::Timer, Target::Endpoint(MAX_TARGET_INDEX));
        q.schedule(7, Class::Timer, Target::Channel(0));
        q.schedule(7, Class::Timer, Target::Channel(MAX_TARGET_INDEX));
        q.schedule(7, Class::Timer, Target::Endpoint(0));
        q.schedule(7, Class::Timer, Target::Sampler);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.target()).collect();
        assert_eq!(
            order,
            vec![
                Target::Endpoint(MAX_TARGET_INDEX),
                Target::Channel(0),
                Target::Channel(MAX_TARGET_INDEX),
                Target::Endpoint(0),
                Target::Sampler,
            ]
        );
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
            a.schedule(t, c, Target::Endpoint(t as u32));
            b.schedule(t, c, Target::Endpoint(t as u32));
        }
        let seq = a.take_seq();
        assert_eq!(b.take_seq(), seq);
        a.pop();
        a.schedule_with_seq(4, Class::Arrival, seq, Target::Channel(2));
        b.peek();
        b.replace_next(4, Class::Arrival, seq, Target::Channel(2));
        let pa: Vec<_> = std::iter::from_fn(|| a.pop())
            .map(|e| (e.time(), e.target()))
            .collect();
        let pb: Vec<_> = std::iter::from_fn(|| b.pop())
            .map(|e| (e.time(), e.target()))
            .collect();
        assert_eq!(pa, pb);
        assert_eq!(a.popped(), b.popped());
    }

    #[test]
    fn test_queue_pops_like_a_plain_heap() {
        // Random schedules, removals and pops: the sorted array, then the heap whose removals
        // are deferred (the next schedule takes the top slot) and which goes back to the array
        // when it shrinks, pop in the same order as a plain heap.
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
                    let seq = q.take_seq();
                    q.schedule_with_seq(t, Class::Arrival, seq, Target::Channel(1));
                    plain.push(Reverse(pack_key(
                        t,
                        Class::Arrival,
                        seq,
                        Target::Channel(1),
                    )));
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
