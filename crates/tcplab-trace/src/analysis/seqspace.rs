//! The record of what one direction has sent, for retransmission detection and RTT sampling.
//!
//! This follows tcptrace's definitions (tcptrace 6.6.7, `rexmit.c`; facts only, no code taken)
//! so that counts agree with it:
//!
//! * Every segment that occupies sequence space (data, SYN, FIN) is recorded as a range. Bytes of
//!   a new segment that fall in an already recorded range are *retransmitted bytes*; a segment
//!   with any such byte is a *retransmitted segment*. The recorded range it overlaps first gets its
//!   send time reset to now; every overlapped range gets its retransmission count raised.
//! * A segment that starts before a recorded range and also ends before that range's end fills a
//!   hole: it is *out of order*.
//! * An ACK marks every range starting below it as acknowledged. A range whose end equals the ACK
//!   and that was not acknowledged before yields an RTT sample (ACK time − send time) if it was
//!   never retransmitted (Karn's rule) and no range before it was sent later than it ("intervening
//!   transmissions": the ACK may be for the later send); otherwise the ACK is "ambiguous" (the
//!   range was retransmitted) or gives "no sample" (intervening transmissions).
//! * An ACK that ends at an already acknowledged range is a duplicate ACK when the caller says
//!   the BSD conditions hold (tcptrace's default definition, after 4.4BSD `tcp_input.c`): no
//!   data, same ACK number and same window as the acker's previous segment, data outstanding.
//! * Adjacent acknowledged ranges are merged, so memory follows the unacknowledged data.
//!
//! tcptrace keeps 32-bit sequence numbers in four quadrants of 2^30; we unwrap to 64 bits
//! instead. The one visible effect of its quadrants, reproduced here, is that an ACK exactly on
//! a quadrant boundary (ACK mod 2^30 = 0) acknowledges the ranges below it without an RTT sample
//! or duplicate-ACK check.

use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
struct Range {
    start: i64,
    /// Exclusive.
    end: i64,
    /// Send time of the latest (re)transmission, ns.
    time: u64,
    retrans: u32,
    /// 0 = not acknowledged; ≥ 1 = acknowledged, counting duplicate ACKs on top.
    acked: u32,
}

/// Result of recording one segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddOutcome {
    pub rexmit_bytes: u64,
    pub out_of_order: bool,
}

/// Result of one ACK.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// An RTT sample in ns (Karn-valid, no intervening transmission).
    pub rtt_ns: Option<u64>,
    /// The ACK ended exactly at a retransmitted range.
    pub ambiguous: bool,
    /// The ACK ended exactly at a range but an earlier range had been sent later.
    pub no_sample: bool,
    pub dupack: bool,
    /// The third duplicate ACK for the same range.
    pub triple_dupack: bool,
    /// Ranges newly acknowledged without a sample of their own.
    pub cumulative: u32,
}

/// Ranges sent by one direction, sorted and non-overlapping.
#[derive(Debug, Default, Clone)]
pub struct SeqSpace {
    ranges: VecDeque<Range>,
}

/// tcptrace's quadrant size.
const QUAD: i64 = 1 << 30;
/// Ranges further than this below the newest one are forgotten (tcptrace frees the quadrant
/// opposite the current one, i.e. what is 2^31 behind).
const FORGET: i64 = 1 << 31;

impl SeqSpace {
    pub fn new() -> Self {
        SeqSpace::default()
    }

    /// Number of ranges held (for tests and memory accounting).
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Records the segment `[start, end)` sent at `now`.
    pub fn add(&mut self, start: i64, end: i64, now: u64) -> AddOutcome {
        let mut out = AddOutcome::default();
        if end <= start {
            return out;
        }
        let mut s = start;
        // Expected case: beyond everything recorded.
        let mut i = match self.ranges.back() {
            Some(last) if last.end <= s => self.ranges.len(),
            _ => self.ranges.partition_point(|r| r.end <= s),
        };
        let mut split = false;
        while i < self.ranges.len() {
            let (rs, re) = (self.ranges[i].start, self.ranges[i].end);
            if s < rs {
                // Starts before this range: the part before it is new.
                if end < re {
                    out.out_of_order = true;
                }
                let piece_end = end.min(rs);
                self.ranges.insert(
                    i,
                    Range {
                        start: s,
                        end: piece_end,
                        time: now,
                        retrans: 0,
                        acked: 0,
                    },
                );
                i += 1;
                if end <= rs {
                    self.trim();
                    return out;
                }
                s = rs;
            }
            // Starts inside range i: retransmitted bytes.
            let r = &mut self.ranges[i];
            r.retrans += 1;
            if !split {
                r.time = now;
            }
            if end <= re {
                out.rexmit_bytes += (end - s) as u64;
                return out;
            }
            split = true;
            out.rexmit_bytes += (re - s) as u64;
            s = re;
            i += 1;
        }
        self.ranges.push_back(Range {
            start: s,
            end,
            time: now,
            retrans: 0,
            acked: 0,
        });
        self.trim();
        out
    }

    /// Processes a cumulative ACK (`ack` = next byte expected) received at `now`. `raw_ack` is
    /// the 32-bit field (for tcptrace's quadrant-boundary rule); `dup_ok` says whether the BSD
    /// duplicate-ACK conditions on the acking segment hold.
    pub fn ack(&mut self, ack: i64, raw_ack: u32, now: u64, dup_ok: bool) -> AckOutcome {
        let mut out = AckOutcome::default();
        let on_boundary = i64::from(raw_ack) % QUAD == 0;
        let mut last_xmit = 0u64;
        let mut changed = false;
        for r in self.ranges.iter_mut() {
            if ack <= r.start {
                break;
            }
            if on_boundary {
                // Everything below a boundary ACK lies in tcptrace's "previous quadrant":
                // acknowledged cumulatively, nothing else.
                if r.acked == 0 {
                    r.acked = 1;
                    changed = true;
                    out.cumulative += 1;
                }
                continue;
            }
            last_xmit = last_xmit.max(r.time);
            if r.acked > 0 {
                if ack == r.end && dup_ok {
                    out.dupack = true;
                    r.acked += 1;
                    if r.acked == 4 {
                        out.triple_dupack = true;
                    }
                } else {
                    r.acked = 1;
                }
                continue;
            }
            r.acked = 1;
            changed = true;
            if ack == r.end {
                if last_xmit > r.time {
                    out.no_sample = true;
                } else if r.retrans == 0 {
                    out.rtt_ns = Some(now.saturating_sub(r.time));
                } else {
                    out.ambiguous = true;
                }
            } else {
                out.cumulative += 1;
            }
        }
        if changed {
            self.collapse();
        }
        out
    }

    /// Merges adjacent acknowledged ranges from the front (tcptrace `collapse_quad`): the merged
    /// range keeps the later range's ACK count and the later send time.
    fn collapse(&mut self) {
        let mut i = 0;
        while i + 1 < self.ranges.len() {
            let (a, b) = (self.ranges[i], self.ranges[i + 1]);
            if a.acked == 0 {
                break;
            }
            if b.acked > 0 && a.end == b.start {
                let m = &mut self.ranges[i];
                m.end = b.end;
                m.acked = b.acked;
                m.time = a.time.max(b.time);
                self.ranges.remove(i + 1);
            } else {
                i += 1;
            }
        }
    }

    /// Forgets ranges far behind the newest one so memory stays bounded across wraps.
    fn trim(&mut self) {
        let Some(last) = self.ranges.back() else {
            return;
        };
        let horizon = last.end - FORGET;
        while self.ranges.front().is_some_and(|r| r.end < horizon) {
            self.ranges.pop_front();
        }
    }
}

/// A set of disjoint byte ranges, for "was this ever sent" questions about SACK blocks.
#[derive(Debug, Default, Clone)]
pub struct RangeSet {
    ranges: VecDeque<(i64, i64)>,
}

impl RangeSet {
    pub fn insert(&mut self, s: i64, e: i64) {
        if e <= s {
            return;
        }
        // Common case: extends or follows the last range.
        if let Some(last) = self.ranges.back_mut() {
            if s >= last.0 && s <= last.1 {
                last.1 = last.1.max(e);
                return;
            }
            if s > last.1 {
                self.ranges.push_back((s, e));
                return;
            }
        } else {
            self.ranges.push_back((s, e));
            return;
        }
        // General case: merge with every overlapping or touching range.
        let i = self.ranges.partition_point(|r| r.1 < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < self.ranges.len() && self.ranges[j].0 <= ne {
            ns = ns.min(self.ranges[j].0);
            ne = ne.max(self.ranges[j].1);
            j += 1;
        }
        self.ranges.drain(i..j);
        self.ranges.insert(i, (ns, ne));
    }

    /// Drops everything below `x` (bytes acknowledged need no more checks).
    pub fn trim_below(&mut self, x: i64) {
        while let Some(f) = self.ranges.front_mut() {
            if f.1 <= x {
                self.ranges.pop_front();
            } else {
                f.0 = f.0.max(x);
                break;
            }
        }
    }

    /// True if every byte of `[s, e)` is in the set.
    pub fn covers(&self, s: i64, e: i64) -> bool {
        if e <= s {
            return true;
        }
        let i = self.ranges.partition_point(|r| r.1 <= s);
        self.ranges.get(i).is_some_and(|r| r.0 <= s && r.1 >= e)
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_seqspace_new_data_is_not_retransmission() {
        let mut s = SeqSpace::new();
        assert_eq!(s.add(0, 100, 0), AddOutcome::default());
        assert_eq!(s.add(100, 200, 1), AddOutcome::default());
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn test_seqspace_full_and_partial_retransmission_bytes() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(100, 200, 0);
        assert_eq!(s.add(0, 100, 5).rexmit_bytes, 100);
        // Repacketized: spans the end of one range and 50 new bytes.
        let o = s.add(150, 250, 6);
        assert_eq!(
            o,
            AddOutcome {
                rexmit_bytes: 50,
                out_of_order: false
            }
        );
        // Spans two recorded ranges.
        assert_eq!(s.add(50, 180, 7).rexmit_bytes, 130);
    }

    #[test]
    fn test_seqspace_hole_fill_is_out_of_order() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(200, 300, 0); // 100..200 not seen (lost before the capture point)
        let o = s.add(100, 200, 1);
        assert_eq!(
            o,
            AddOutcome {
                rexmit_bytes: 0,
                out_of_order: true
            }
        );
        // Starts in a hole but ends past the next range's end: a resend that collapsed several
        // segments, not out of order.
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(200, 300, 0);
        let o = s.add(100, 350, 1);
        assert_eq!(
            o,
            AddOutcome {
                rexmit_bytes: 100,
                out_of_order: false
            }
        );
    }

    #[test]
    fn test_seqspace_ack_exact_gives_rtt_sample() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 1_000);
        s.add(100, 200, 2_000);
        let o = s.ack(100, 100, 11_000, false);
        assert_eq!(o.rtt_ns, Some(10_000));
        // A cumulative ACK over two ranges samples only the one it ends at.
        s.add(200, 300, 3_000);
        let o = s.ack(300, 300, 20_000, false);
        assert_eq!((o.rtt_ns, o.cumulative), (Some(17_000), 1));
        assert_eq!(s.len(), 1, "acknowledged ranges merge");
    }

    #[test]
    fn test_seqspace_karn_retransmitted_is_ambiguous() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(0, 100, 500);
        let o = s.ack(100, 100, 900, false);
        assert_eq!((o.rtt_ns, o.ambiguous), (None, true));
    }

    #[test]
    fn test_seqspace_intervening_transmission_gives_no_sample() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(100, 200, 10);
        s.add(0, 100, 50); // retransmission of the first, after the second was sent
        let o = s.ack(100, 100, 60, false);
        assert!(o.ambiguous);
        let o = s.ack(200, 200, 70, false);
        assert_eq!((o.rtt_ns, o.no_sample), (None, true));
    }

    #[test]
    fn test_seqspace_dupacks_counted_only_when_bsd_conditions_hold() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(100, 200, 0);
        s.ack(100, 100, 5, false);
        assert!(!s.ack(100, 100, 6, false).dupack);
        assert!(s.ack(100, 100, 7, true).dupack);
        assert!(!s.ack(100, 100, 8, true).triple_dupack);
        // A non-duplicate ACK in between restarts the count.
        assert!(!s.ack(100, 100, 9, false).dupack);
        assert!(!s.ack(100, 100, 10, true).triple_dupack);
        assert!(!s.ack(100, 100, 11, true).triple_dupack);
        let o = s.ack(100, 100, 12, true);
        assert!(o.dupack && o.triple_dupack);
    }

    #[test]
    fn test_seqspace_quadrant_boundary_ack_no_sample() {
        let mut s = SeqSpace::new();
        let b = 1i64 << 30;
        s.add(b - 100, b, 0);
        let o = s.ack(b, 1u32 << 30, 10, false);
        assert_eq!((o.rtt_ns, o.cumulative), (None, 1));
    }

    #[test]
    fn test_seqspace_old_ranges_forgotten() {
        let mut s = SeqSpace::new();
        s.add(0, 100, 0);
        s.add(FORGET + 200, FORGET + 300, 1);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn test_rangeset_insert_merge_cover_trim() {
        let mut r = RangeSet::default();
        r.insert(0, 10);
        r.insert(10, 20);
        r.insert(30, 40);
        assert_eq!(r.len(), 2);
        assert!(r.covers(5, 20));
        assert!(!r.covers(15, 35));
        r.insert(18, 31);
        assert_eq!(r.len(), 1);
        assert!(r.covers(0, 40));
        r.insert(-10, -5);
        assert_eq!(r.len(), 2);
        r.trim_below(35);
        assert_eq!(r.len(), 1);
        assert!(r.covers(35, 40) && !r.covers(34, 40));
    }
}
