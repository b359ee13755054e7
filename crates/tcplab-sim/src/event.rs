//! The event queue and its total order (docs/design.md §2).
//!
//! Events pop in increasing `(time, class, seq)`: first by time, then by [`Class`] (packet
//! arrivals before timers before samples, so a timer or a sample at `t` sees every packet that
//! arrived at `t`), then by `seq`, a counter assigned when the event was scheduled. The key is packed
//! into one `u128` so comparisons are a single integer compare.

use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Tie-break class of an event at equal time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    /// A packet reaches the far end of a link direction.
    Arrival = 0,
    /// An endpoint's timer (RTO, delayed ACK, persist, pacing, start/stop, NIC wake-up).
    Timer = 1,
    /// A measurement sample.
    Sample = 2,
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
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    key: u128,
    pub target: Target,
}

impl Event {
    #[inline]
    pub fn time(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
    #[inline]
    pub fn seq(&self) -> u64 {
        (self.key as u64) & SEQ_MASK
    }
}

const SEQ_MASK: u64 = (1 << 62) - 1;

/// Pack a key: time in the high 64 bits, class in the next 2, seq in the low 62.
#[inline]
pub fn pack_key(time: Nanos, class: Class, seq: u64) -> u128 {
    debug_assert!(seq <= SEQ_MASK);
    ((time as u128) << 64) | ((class as u128) << 62) | (seq as u128)
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the smallest key pops first.
        other.key.cmp(&self.key)
    }
}

/// Priority queue of events with a global scheduling counter.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh sequence number (for events whose key is computed elsewhere, e.g. link FIFOs).
    #[inline]
    pub fn take_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// Schedule with a new sequence number.
    #[inline]
    pub fn schedule(&mut self, time: Nanos, class: Class, target: Target) {
        let seq = self.take_seq();
        self.heap.push(Event {
            key: pack_key(time, class, seq),
            target,
        });
    }

    /// Schedule with a sequence number taken earlier by [`EventQueue::take_seq`].
    #[inline]
    pub fn schedule_with_seq(&mut self, time: Nanos, class: Class, seq: u64, target: Target) {
        self.heap.push(Event {
            key: pack_key(time, class, seq),
            target,
        });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop();
        if e.is_some() {
            self.popped += 1;
        }
        e
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.time())
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
            .map(|e| (e.time(), e.target))
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
    fn test_large_times_do_not_collide_with_class() {
        let mut q = EventQueue::new();
        q.schedule(u64::MAX - 1, Class::Arrival, Target::Channel(1));
        q.schedule(u64::MAX - 2, Class::Sample, Target::Sampler);
        assert_eq!(q.pop().unwrap().target, Target::Sampler);
    }
}
