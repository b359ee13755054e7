//! The sender's retransmission queue and SACK scoreboard (RFC 6675 §3–4).
//!
//! Every segment sent and not yet cumulatively acknowledged has a [`Seg`] record, in sequence
//! order, in a ring buffer. Offsets are 64-bit stream offsets (0 = first data byte), so nothing
//! here wraps. Per-ACK cost:
//! * cumulative ACK: pops acknowledged records from the front — O(1) per record;
//! * each SACK block: binary search for its first record (O(log n)), then marks records, each at
//!   most once between timeouts — amortised O(1);
//! * loss marking (RFC 6675 `IsLost`): a record is lost when at least DupThresh SACKed records lie
//!   above it. The SACKed set only grows, so the boundary below which un-SACKed records are lost
//!   only moves up; a scan pointer follows it — amortised O(1);
//! * `NextSeg()` rule 1 (first lost, not yet retransmitted record) keeps a hint pointer — amortised O(1);
//! * `pipe` (RFC 6675 `SetPipe()`) is kept in counters: out − SACKed − lost + retransmitted, which
//!   counts exactly what SetPipe counts for whole-segment records.
//!
//! This avoids the list walks that make ns-3's SACK recovery quadratic at tens of thousands of
//! segments in flight (../shared/peers/README.md).

use super::rate::{RateSampler, TxSnapshot};
use crate::time::Nanos;
use std::collections::VecDeque;

pub const SACKED: u8 = 1;
/// Deemed lost (RFC 6675 IsLost, NewReno's hole, or a timeout) and not SACKed.
pub const LOST: u8 = 2;
/// A retransmission of this record is outstanding (counts in pipe, RFC 6675 SetPipe (b)).
pub const RETRANS: u8 = 4;
/// Was retransmitted at least once (Karn's rule: no RTT samples from it).
pub const EVER_RETRANS: u8 = 8;
/// Its delivery has been counted (rate sampler's C.delivered, `packets_delivered`). Survives a
/// timeout that forgets SACK marks, so data SACKed before it and reported again after the
/// go-back-N resend counts once (draft-cheng-iccrg-delivery-rate-estimation §3.2: each byte
/// once; Linux keeps SACKed skbs marked across an RTO, `tcp_timeout_mark_lost`).
pub const COUNTED: u8 = 16;
/// Flags a timeout keeps.
const KEPT_ON_RTO: u8 = EVER_RETRANS | COUNTED;

/// Records ahead of the front prefetched after a cumulative ACK (four 64-byte records: the
/// two an ACK of a delayed-ACK receiver pops, and the next ACK's).
const PREFETCH_AHEAD: usize = 4;

/// Most DupThresh values the scoreboard tracks (Linux caps tcp_reordering at 300; the studies' stacks use 3).
pub const MAX_DUPTHRESH: usize = 64;

#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub start: u64,
    pub len: u32,
    pub flags: u8,
    pub tx_count: u8,
    /// Last (re)transmission time.
    pub xmit: Nanos,
    pub snap: TxSnapshot,
    /// On a SACKed record: every record from this one up to this offset is SACKed too (a skip
    /// hint for [`Scoreboard::on_sack_block`]; 0 = none). SACK marks are only ever added until a
    /// timeout forgets them all, which clears the hints.
    pub sacked_until: u64,
}

impl Seg {
    #[inline]
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
}

/// What a cumulative ACK or SACK processing step found.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckResult {
    pub bytes_acked: u64,
    pub packets_acked: u32,
    pub bytes_sacked: u64,
    /// Bytes acknowledged cumulatively by this ACK that an earlier ACK had SACKed.
    pub bytes_acked_sacked: u64,
    /// Segments newly delivered by this ACK: cumulatively acknowledged and not SACKed before,
    /// plus newly SACKed (Linux `tcp_newly_delivered`: `tp->delivered` counts a packet once,
    /// when first SACKed or cumulatively acknowledged).
    pub packets_delivered: u32,
    /// Transmission time of the newest record acked or SACKed by this ACK that was never
    /// retransmitted (Karn's rule), for RTT samples without timestamps.
    pub rtt_xmit: Option<Nanos>,
    /// End offset of that record (RACK orders transmissions by (time, end), RFC 8985 §6.1).
    pub rtt_end: u64,
    /// Transmission time of the oldest record cumulatively acknowledged by this ACK that was
    /// neither SACKed before nor ever retransmitted (Linux `first_ackt`; the newest is
    /// `rtt_xmit` as the cumulative walk leaves it). For `rtt_sampling = "linux"`.
    pub first_ackt: Option<Nanos>,
    /// Transmission time of the newest record cumulatively acknowledged by this ACK that was
    /// never retransmitted, SACKed before or not (Linux 2.6 `last_ackt`/`ca_seq_rtt`). For
    /// `rtt_sampling = "linux-2.6"`.
    pub last_cum_ackt: Option<Nanos>,
    /// Transmission times of the oldest and newest records newly SACKed by this ACK that were
    /// never retransmitted (Linux `first_sackt`, `last_sackt`).
    pub first_sackt: Option<Nanos>,
    pub last_sackt: Option<Nanos>,
    /// Some acked record had been retransmitted.
    pub acked_retransmitted: bool,
    /// New SACK information arrived (RFC 6675 duplicate-ACK definition).
    pub new_sack_info: bool,
}

pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// Bytes of all records (unacknowledged data sent).
    pub out_bytes: u64,
    pub sacked_bytes: u64,
    pub lost_bytes: u64,
    pub retrans_bytes: u64,
    /// RFC 6675 `pipe`, `out − sacked − lost + retrans`, kept by every method that changes one
    /// of the four (they are written nowhere else): read several times per segment sent and per
    /// ACK, where its three subtractions were 1 % of an Iwanaga I5 trial's instructions.
    pipe: u64,
    /// Highest SACKed end (RFC 6675 "HighSACKed" + 1 segment).
    pub high_sacked: u64,
    dupthresh: usize,
    /// Starts of the `dupthresh` highest SACKed records, ascending.
    top: [u64; MAX_DUPTHRESH],
    n_top: usize,
    /// Un-SACKed records starting below this offset have been examined for loss marking.
    lost_scan: u64,
    /// Every LOST, not RETRANS, not SACKED record starts at or above this offset.
    retx_hint: u64,
    pub rate: RateSampler,
    /// RACK (RFC 8985): first transmissions below this offset were examined and found lost or
    /// delivered; first transmissions are sent in sequence order, so their send times increase
    /// with the offset and the lost ones form a prefix (amortised O(1) per ACK).
    rack_scan: u64,
    /// Outstanding retransmissions in the order sent. Entries whose record was acknowledged,
    /// SACKed or sent again are skipped when met.
    retx_order: VecDeque<Retx>,
}

/// One retransmission in [`Scoreboard`]'s send order.
#[derive(Clone, Copy, Debug)]
struct Retx {
    start: u64,
    xmit: Nanos,
    /// The highest offset sent (snd_nxt) when it left: data beyond it left later.
    nxt: u64,
}

/// Outcome of a RACK loss-detection pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct RackOutcome {
    pub newly_lost: u64,
    /// When the next segment would be deemed lost if nothing is delivered meanwhile (the RACK
    /// reordering timer, RFC 8985 §6.2 step 5).
    pub timeout: Option<Nanos>,
}

impl Scoreboard {
    pub fn new(dupthresh: u32) -> Self {
        Self::with_buffers(
            dupthresh,
            VecDeque::with_capacity(1024),
            VecDeque::with_capacity(64),
        )
    }

    /// A fresh scoreboard (as [`Scoreboard::new`]) in this one's buffers, emptied: a pooled
    /// background connection reuses its predecessor's allocations. This one is left without
    /// buffers, to be dropped.
    pub fn take_renewed(&mut self, dupthresh: u32) -> Scoreboard {
        let mut segs = std::mem::take(&mut self.segs);
        let mut retx_order = std::mem::take(&mut self.retx_order);
        segs.clear();
        retx_order.clear();
        Self::with_buffers(dupthresh, segs, retx_order)
    }

    fn with_buffers(dupthresh: u32, segs: VecDeque<Seg>, retx_order: VecDeque<Retx>) -> Self {
        Scoreboard {
            segs,
            out_bytes: 0,
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            pipe: 0,
            high_sacked: 0,
            dupthresh: (dupthresh as usize).clamp(1, MAX_DUPTHRESH),
            top: [0; MAX_DUPTHRESH],
            n_top: 0,
            lost_scan: 0,
            retx_hint: u64::MAX,
            rate: RateSampler::default(),
            rack_scan: 0,
            retx_order,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Record `i` (0 = at snd_una).
    #[inline]
    pub fn seg(&self, i: usize) -> &Seg {
        &self.segs[i]
    }

    /// First record (at snd_una).
    pub fn front(&self) -> Option<&Seg> {
        self.segs.front()
    }

    /// RFC 6675 `pipe`: bytes believed to be in the network.
    #[inline]
    pub fn pipe(&self) -> u64 {
        debug_assert_eq!(self.pipe, self.pipe_from_counts());
        self.pipe
    }

    fn pipe_from_counts(&self) -> u64 {
        self.out_bytes - self.sacked_bytes - self.lost_bytes + self.retrans_bytes
    }

    /// Recompute `pipe` after a change of several counts (paths outside the per-packet ones).
    fn refresh_pipe(&mut self) {
        self.pipe = self.pipe_from_counts();
    }

    /// Record a new segment `[start, start+len)` sent at `now`.
    #[inline]
    pub fn on_send_new(&mut self, start: u64, len: u32, now: Nanos) {
        let snap = self.rate.on_send(now, self.pipe() == 0);
        self.segs.push_back(Seg {
            start,
            len,
            flags: 0,
            tx_count: 1,
            xmit: now,
            snap,
            sacked_until: 0,
        });
        self.out_bytes += len as u64;
        self.pipe += len as u64;
    }

    #[inline]
    fn index_of(&self, offset: u64) -> usize {
        // First record whose end is above `offset`. Most lookups land on the first record (a scan
        // pointer at snd_una, a stale HighSACKed): answer those without a binary search, which at
        // 10⁴ records in flight costs a cache miss per step (17 % of a 1 Gbit/s × 200 ms run).
        match self.segs.front() {
            Some(f) if offset < f.end() => 0,
            _ => self.segs.partition_point(|s| s.end() <= offset),
        }
    }

    /// Process a cumulative ACK up to `ack` (exclusive offset).
    pub fn on_cum_ack(&mut self, ack: u64, now: Nanos, res: &mut AckResult) {
        while let Some(front) = self.segs.front() {
            if front.start >= ack {
                break;
            }
            // Read through the front reference and drop the record afterwards: popping it by
            // value copied the 64-byte record out first (≈ 40 instructions per record).
            let s = front;
            if s.flags == 0 && s.end() <= ack {
                // A whole record sent once and neither SACKed nor marked (a bulk flow's every
                // record outside loss episodes): `cum_ack_front` with every flag clear, here
                // and tested once.
                let len = s.len as u64;
                self.out_bytes -= len;
                self.pipe -= len;
                res.bytes_acked += len;
                res.packets_acked += 1;
                res.packets_delivered += 1;
                self.rate.on_delivered(s.len, s.xmit, &s.snap, now);
                res.last_cum_ackt = Some(s.xmit);
                res.rtt_xmit = Some(s.xmit);
                res.rtt_end = s.end();
                if res.first_ackt.is_none() {
                    res.first_ackt = Some(s.xmit);
                }
                self.segs.pop_front();
                continue;
            }
            if !self.cum_ack_front(ack, now, res) {
                break;
            }
        }
        self.lost_scan = self.lost_scan.max(ack);
        // The next ACKs pop the records behind the front, written a round trip ago: with a
        // large window they have left the caches, so start loading a few (a hint).
        if self.segs.len() as u64 >= crate::cache::FAR {
            crate::cache::prefetch(&self.segs[PREFETCH_AHEAD]);
        }
    }

    /// The front record (starting below `ack`) of [`Scoreboard::on_cum_ack`] when it is cut by
    /// `ack` or carries flags; false when the walk stops (the record was trimmed). Out of line:
    /// inlined, its live values made the clean records' loop spill registers.
    #[inline(never)]
    fn cum_ack_front(&mut self, ack: u64, now: Nanos, res: &mut AckResult) -> bool {
        let Some(front) = self.segs.front() else {
            return false;
        };
        if front.end() > ack {
            // ACK inside a record (only after a peer re-segmented); trim it.
            let cut = (ack - front.start) as u32;
            let f = self.segs.front_mut().expect("front");
            self.out_bytes -= cut as u64;
            if f.flags & SACKED != 0 {
                self.sacked_bytes -= cut as u64;
                res.bytes_acked_sacked += cut as u64;
            }
            if f.flags & LOST != 0 {
                self.lost_bytes -= cut as u64;
            }
            if f.flags & RETRANS != 0 {
                self.retrans_bytes -= cut as u64;
            }
            f.start = ack;
            f.len -= cut;
            res.bytes_acked += cut as u64;
            self.refresh_pipe();
            return false;
        }
        let s = front;
        let len = s.len as u64;
        self.out_bytes -= len;
        if s.flags & SACKED != 0 {
            self.sacked_bytes -= len;
        }
        if s.flags & LOST != 0 {
            self.lost_bytes -= len;
        }
        if s.flags & RETRANS != 0 {
            self.retrans_bytes -= len;
        }
        res.bytes_acked += len;
        res.packets_acked += 1;
        if s.flags & SACKED == 0 {
            if s.flags & COUNTED == 0 {
                res.packets_delivered += 1;
                self.rate.on_delivered(s.len, s.xmit, &s.snap, now);
            }
        } else {
            res.bytes_acked_sacked += s.len as u64;
        }
        if s.flags & EVER_RETRANS != 0 {
            res.acked_retransmitted = true;
        } else {
            res.last_cum_ackt = Some(s.xmit);
        }
        if s.flags & EVER_RETRANS == 0 && s.flags & SACKED == 0 {
            res.rtt_xmit = Some(s.xmit);
            res.rtt_end = s.end();
            if res.first_ackt.is_none() {
                res.first_ackt = Some(s.xmit);
            }
        }
        self.segs.pop_front();
        self.refresh_pipe();
        true
    }

    /// Process one SACK block `[left, right)` (offsets). Only whole records are marked.
    pub fn on_sack_block(&mut self, left: u64, right: u64, now: Nanos, res: &mut AckResult) {
        if right <= left {
            return;
        }
        let first = self.index_of(left);
        let mut i = first;
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.start >= right {
                break;
            }
            if s.flags & SACKED != 0 {
                // Nothing to do for SACKed records: skip the run the hint vouches for. Without
                // it every ACK of a long recovery walked all the records its blocks cover
                // (quadratic; half of `tcplab bench` s2's time).
                i = if s.sacked_until > s.end() {
                    self.index_of(s.sacked_until).max(i + 1)
                } else {
                    i + 1
                };
                continue;
            }
            if s.start >= left && s.end() <= right {
                let len = s.len as u64;
                let seg = &mut self.segs[i];
                if seg.flags & LOST != 0 {
                    self.lost_bytes -= len;
                }
                if seg.flags & RETRANS != 0 {
                    self.retrans_bytes -= len;
                }
                let counted = seg.flags & COUNTED != 0;
                seg.flags = (seg.flags & EVER_RETRANS) | SACKED | COUNTED;
                self.sacked_bytes += len;
                self.refresh_pipe();
                res.bytes_sacked += len;
                res.new_sack_info = true;
                if s.flags & EVER_RETRANS == 0 {
                    if res
                        .rtt_xmit
                        .is_none_or(|t| (s.xmit, s.end()) > (t, res.rtt_end))
                    {
                        res.rtt_xmit = Some(s.xmit);
                        res.rtt_end = s.end();
                    }
                    res.first_sackt = Some(res.first_sackt.map_or(s.xmit, |t| t.min(s.xmit)));
                    res.last_sackt = Some(res.last_sackt.map_or(s.xmit, |t| t.max(s.xmit)));
                }
                if !counted {
                    res.packets_delivered += 1;
                    self.rate.on_delivered(s.len, s.xmit, &s.snap, now);
                }
                self.high_sacked = self.high_sacked.max(s.end());
                self.note_sacked(s.start);
            }
            i += 1;
        }
        // Every record wholly inside the block is SACKed now: note the run on its first record.
        let head = match self.segs.get(first) {
            Some(s) if s.start < left => first + 1,
            _ => first,
        };
        let end = self.segs.partition_point(|s| s.end() <= right);
        if end > head {
            let until = self.segs[end - 1].end();
            let h = &mut self.segs[head];
            h.sacked_until = h.sacked_until.max(until);
        }
    }

    /// Keep the `dupthresh` highest SACKed record starts.
    #[inline]
    fn note_sacked(&mut self, start: u64) {
        let k = self.dupthresh;
        if self.n_top < k {
            let pos = self.top[..self.n_top].partition_point(|&x| x < start);
            self.top.copy_within(pos..self.n_top, pos + 1);
            self.top[pos] = start;
            self.n_top += 1;
        } else if start > self.top[0] {
            let pos = self.top[..k].partition_point(|&x| x < start);
            // Drop the smallest (index 0), insert at pos-1.
            self.top.copy_within(1..pos, 0);
            self.top[pos - 1] = start;
        }
    }

    /// RFC 6675 `IsLost` marking: every un-SACKed record with at least DupThresh SACKed records
    /// above it is lost. Returns bytes newly marked.
    #[inline]
    pub fn mark_lost_by_sack(&mut self) -> u64 {
        // The two answers of nearly every ACK, tested where the caller is (inlined); the walk
        // stays out of line.
        if self.n_top < self.dupthresh || self.top[0] <= self.lost_scan {
            return 0;
        }
        self.mark_lost_below(self.top[0])
    }

    /// [`Scoreboard::mark_lost_by_sack`]'s walk, with `boundary` above `lost_scan`.
    #[inline(never)]
    fn mark_lost_below(&mut self, boundary: u64) -> u64 {
        let mut newly = 0;
        let mut i = self.index_of(self.lost_scan);
        while i < self.segs.len() && self.segs[i].start < boundary {
            let s = &mut self.segs[i];
            if s.flags & (SACKED | LOST) == 0 {
                s.flags |= LOST;
                self.lost_bytes += s.len as u64;
                self.pipe -= s.len as u64;
                newly += s.len as u64;
                self.retx_hint = self.retx_hint.min(s.start);
            }
            i += 1;
        }
        self.lost_scan = boundary;
        newly
    }

    /// Every un-SACKed record below the highest SACKed byte is lost: FreeBSD 5.3's SACK holes,
    /// all of which `tcp_sack_output` may resend and `tcp_sacked_bytes` counts as out of the
    /// pipe until resent (sources at `crate::tcp::recovery::Mode::FreebsdSack`). Returns
    /// bytes newly marked.
    pub fn mark_holes_lost(&mut self) -> u64 {
        if self.high_sacked <= self.lost_scan {
            return 0;
        }
        self.mark_lost_below(self.high_sacked)
    }

    /// FACK loss marking (Mathis & Mahdavi, SIGCOMM 1996; Linux 2.4–3.1 `tcp_mark_head_lost`
    /// with FACK): every un-SACKed record more than DupThresh − 1 records below the forward-most
    /// SACKed record is lost, however many records in between were SACKed. Returns bytes newly
    /// marked.
    pub fn mark_lost_fack(&mut self) -> u64 {
        if self.high_sacked == 0 {
            return 0;
        }
        let top = self.index_of(self.high_sacked - 1);
        let Some(limit) = (top + 1).checked_sub(self.dupthresh) else {
            return 0;
        };
        let boundary = self.segs.get(limit).map_or(self.high_sacked, |s| s.start);
        if boundary <= self.lost_scan {
            return 0;
        }
        let mut newly = 0;
        let mut i = self.index_of(self.lost_scan);
        while i < limit {
            let s = &mut self.segs[i];
            if s.flags & (SACKED | LOST) == 0 {
                s.flags |= LOST;
                self.lost_bytes += s.len as u64;
                self.pipe -= s.len as u64;
                newly += s.len as u64;
                self.retx_hint = self.retx_hint.min(s.start);
            }
            i += 1;
        }
        self.lost_scan = boundary;
        newly
    }

    /// Mark the first record lost (fast retransmit of the segment at snd_una; NewReno partial
    /// ACK, RFC 6582 §3.2 step 3). Returns bytes newly marked.
    pub fn mark_head_lost(&mut self) -> u64 {
        if let Some(s) = self.segs.front_mut() {
            if s.flags & (SACKED | LOST) == 0 {
                s.flags |= LOST;
                self.lost_bytes += s.len as u64;
                self.pipe -= s.len as u64;
                self.retx_hint = self.retx_hint.min(s.start);
                return s.len as u64;
            }
        }
        0
    }

    /// Linux 2.6 F-RTO at a timeout (knob `frto_variant = "linux-2.6"`, `tcp_enter_frto`): the
    /// first record, unless SACKed, is to be sent again, whether it was never resent (it is
    /// marked lost) or its earlier retransmission is still out (that retransmission no longer
    /// counts in flight, as Linux clears its SACKED_RETRANS bit).
    pub fn mark_head_for_resend(&mut self) {
        if let Some(start) = self.segs.front().map(|s| s.start) {
            if self.requeue(0) {
                self.retx_hint = self.retx_hint.min(start);
            }
        }
    }

    /// Record `i`, unless SACKed, is to be sent again: a retransmission of it still out no
    /// longer counts (its RETRANS bit cleared), a record never resent becomes lost; either way
    /// it leaves the pipe. Returns false for a SACKed record (left alone).
    fn requeue(&mut self, i: usize) -> bool {
        let s = &mut self.segs[i];
        let len = s.len as u64;
        if s.flags & SACKED != 0 {
            return false;
        }
        if s.flags & RETRANS != 0 {
            s.flags &= !RETRANS;
            self.retrans_bytes -= len;
            self.pipe -= len;
        } else if s.flags & LOST == 0 {
            s.flags |= LOST;
            self.lost_bytes += len;
            self.pipe -= len;
        }
        true
    }

    /// Knob `freebsd_sack_go_back_n`: the SACK holes FreeBSD RELENG_5 rebuilt since a timeout,
    /// when the third duplicate ACK of the go-back-N starts a recovery (sources at
    /// `crate::tcp::sender::episode::Episodes::on_ack`). Every un-SACKed record below the
    /// highest SACKed byte becomes a hole not yet resent in this recovery (lost, its go-back-N
    /// retransmission no longer counted: FreeBSD's rxmit = start, out of sack_bytes_rxmt);
    /// every record at or above it that the go-back-N resent is data sent below snd_nxt (neither
    /// lost nor resent). Returns FreeBSD's snd_nxt, the start of the first lost record the
    /// go-back-N has not resent (SACKed records skipped as `tcp_sack_adjust` skips them), or
    /// `snd_max` when it resent them all. Cold: once per such recovery.
    #[cold]
    pub fn freebsd_rebuild_holes(&mut self, snd_max: u64) -> u64 {
        let nxt = self.next_lost().map_or(snd_max, |i| self.segs[i].start);
        let high = self.high_sacked;
        for i in 0..self.segs.len() {
            if self.segs[i].start < high {
                self.requeue(i);
                continue;
            }
            let s = &mut self.segs[i];
            let len = s.len as u64;
            if s.flags & SACKED != 0 {
                continue;
            }
            if s.flags & RETRANS != 0 {
                // Lost and resent: out of both counts, the pipe unchanged.
                s.flags &= !(RETRANS | LOST);
                self.retrans_bytes -= len;
                self.lost_bytes -= len;
            }
        }
        self.retx_hint = self.segs.front().map_or(u64::MAX, |s| s.start);
        nxt
    }

    /// Knob `freebsd_sack_go_back_n`: record `i`, just resent as FreeBSD's new data from
    /// snd_nxt in a recovery started in the go-back-N, is data sent below snd_nxt: neither lost
    /// nor resent (FreeBSD counts it in snd_nxt − sack_newdata, not in sack_bytes_rxmt).
    #[cold]
    pub fn freebsd_sent_as_new(&mut self, i: usize) {
        let s = &mut self.segs[i];
        if s.flags & (LOST | RETRANS | SACKED) == LOST | RETRANS {
            s.flags &= !(RETRANS | LOST);
            let len = s.len as u64;
            self.retrans_bytes -= len;
            self.lost_bytes -= len;
        }
    }

    /// Knob `freebsd_sack_walk`: the first record at or after `off` (the one holding it) not
    /// SACKed — where FreeBSD's `tcp_sack_adjust` leaves snd_nxt (sources at
    /// `crate::tcp::sender::send::next_segment_freebsd`). Cold: FreeBSD's recoveries after a
    /// timeout only.
    #[cold]
    pub fn first_unsacked_from(&self, off: u64) -> Option<usize> {
        let mut i = self.index_of(off);
        while i < self.segs.len() {
            if self.segs[i].flags & SACKED == 0 {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Knob `freebsd_sack_walk`: record `i` goes again as FreeBSD's new data from its snd_nxt
    /// below snd_max (sources at `crate::tcp::sender::send::next_segment_freebsd`). Lost and
    /// not resent (the go-back-N's rest): it is sent, in flight, neither lost nor resent
    /// ([`Scoreboard::freebsd_sent_as_new`]). Resent from the hole list, or in flight: a second
    /// copy, the record's counts unchanged (FreeBSD counts it in snd_nxt − sack_newdata, and the
    /// hole's rxmit stays in sack_bytes_rxmt). Returns (start, len).
    #[cold]
    pub fn freebsd_walk_send(&mut self, i: usize, now: Nanos) -> (u64, u32) {
        let s = &self.segs[i];
        debug_assert!(s.flags & SACKED == 0);
        if s.flags & (LOST | RETRANS) == LOST {
            let out = self.on_retransmit(i, now);
            self.freebsd_sent_as_new(i);
            return out;
        }
        let s = &mut self.segs[i];
        s.flags |= EVER_RETRANS;
        s.tx_count = s.tx_count.saturating_add(1);
        s.xmit = now;
        (s.start, s.len)
    }

    /// Retransmission timeout: forget SACK marks (the receiver may renege, RFC 2018 §8) and mark
    /// every record lost so it is resent in order in slow start (RFC 5681 §3.1, RFC 6675 §5.1).
    pub fn on_rto(&mut self) {
        for s in self.segs.iter_mut() {
            s.flags = (s.flags & KEPT_ON_RTO) | LOST;
            s.sacked_until = 0;
        }
        self.sacked_bytes = 0;
        self.retrans_bytes = 0;
        self.lost_bytes = self.out_bytes;
        self.refresh_pipe();
        self.n_top = 0;
        self.high_sacked = 0;
        self.lost_scan = self.segs.front().map_or(0, |s| s.start);
        self.retx_hint = self.lost_scan;
        self.retx_order.clear();
    }

    /// Retransmission timeout, keeping SACK marks (Linux; knob `rto_keeps_sack`): every record
    /// not SACKed is marked lost and resent in order in slow start, SACKed records stay SACKed
    /// and are not resent. Linux forgets the marks only on evidence of reneging, i.e. when the
    /// first unacknowledged record is itself SACKed (net/ipv4/tcp_input.c `tcp_enter_loss`,
    /// 2.4/2.6 with `how` = 1 from `tcp_check_sack_reneging`; `tcp_timeout_mark_lost` since
    /// 4.x): then this falls back to [`Scoreboard::on_rto`]. Returns whether the marks were
    /// kept. RFC 2018 §8 only says a sender SHOULD forget them, because a receiver MAY renege.
    pub fn on_rto_keep_sacked(&mut self) -> bool {
        if self.segs.front().is_none_or(|s| s.flags & SACKED != 0) {
            self.on_rto();
            return false;
        }
        for s in self.segs.iter_mut() {
            s.flags = if s.flags & SACKED != 0 {
                (s.flags & KEPT_ON_RTO) | SACKED
            } else {
                (s.flags & KEPT_ON_RTO) | LOST
            };
        }
        self.retrans_bytes = 0;
        self.lost_bytes = self.out_bytes - self.sacked_bytes;
        self.refresh_pipe();
        // Every un-SACKed record is already lost: nothing below the newest record is left for
        // SACK-based loss marking to examine.
        self.lost_scan = self.segs.back().map_or(0, |s| s.end());
        self.retx_hint = self.segs.front().map_or(0, |s| s.start);
        self.retx_order.clear();
        true
    }

    /// Knob `partial_ack_zero_persist`: FreeBSD's `tcp_output` pulled snd_nxt back to snd_una
    /// (sources at `crate::tcp::sender::Sender::bsd_zero_window`): every record not SACKed is
    /// to be sent again from snd_una, in order — marked lost and not resent; SACK marks stay.
    #[cold]
    pub fn pull_back_to_una(&mut self) {
        self.pull_back_from(0);
    }

    /// Knob `freebsd_sack_walk`: FreeBSD's snd_nxt at `from`, below snd_max, when its SACK
    /// recovery ends (the persist stall had pulled it back; sources at
    /// `crate::tcp::sender::episode::Episodes::exit_recovery`): every record from it on that is
    /// not SACKed is to be sent again in order — marked lost and not resent; SACK marks stay.
    #[cold]
    pub fn pull_back_from(&mut self, from: u64) {
        for i in self.segs.partition_point(|s| s.start < from)..self.segs.len() {
            self.requeue(i);
        }
        if self.segs.front().is_none_or(|s| from <= s.start) {
            // Every un-SACKed record is lost: nothing left for SACK-based loss marking.
            self.lost_scan = self.segs.back().map_or(0, |s| s.end());
        }
        self.retx_hint = self.segs.front().map_or(0, |s| s.start);
        self.retx_order.clear();
    }

    /// Linux 2.6 F-RTO gives up (knob `frto_variant = "linux-2.6"`; `tcp_enter_frto_loss`, read
    /// for the facts): every record below `mark` not SACKed is marked lost and resent in order;
    /// SACK marks stay; records from `mark` on (sent after the timeout) stay in flight as they
    /// are ("don't lost mark skbs that were fwd transmitted after RTO"). With `keep_head`
    /// (no ACK advanced since the timeout) the first record's retransmission of the timeout
    /// stays counted in flight rather than being resent. Falls back to [`Scoreboard::on_rto`]
    /// when the first record is SACKed (reneging).
    pub fn on_frto_loss(&mut self, mark: u64, keep_head: bool) {
        if self.segs.front().is_none_or(|s| s.flags & SACKED != 0) {
            self.on_rto();
            return;
        }
        let (mut lost, mut retrans) = (0u64, 0u64);
        for (i, s) in self.segs.iter_mut().enumerate() {
            if i == 0 && keep_head && s.flags & RETRANS != 0 {
                s.flags = (s.flags & KEPT_ON_RTO) | LOST | RETRANS;
                lost += s.len as u64;
                retrans += s.len as u64;
            } else if s.end() <= mark {
                s.flags = if s.flags & SACKED != 0 {
                    (s.flags & KEPT_ON_RTO) | SACKED
                } else {
                    lost += s.len as u64;
                    (s.flags & KEPT_ON_RTO) | LOST
                };
            } else {
                if s.flags & LOST != 0 {
                    lost += s.len as u64;
                }
                if s.flags & RETRANS != 0 {
                    retrans += s.len as u64;
                }
            }
        }
        self.lost_bytes = lost;
        self.retrans_bytes = retrans;
        self.refresh_pipe();
        // Nothing below the mark is left for SACK-based loss marking to examine.
        self.lost_scan = self.lost_scan.max(mark);
        self.retx_hint = self.segs.front().map_or(0, |s| s.start);
        self.retx_order.clear();
    }

    /// Undo of a spurious timeout (knob `undo`; Linux `tcp_try_undo_loss` clears the lost
    /// marks): records marked lost and not yet resent are no longer lost and will not be sent
    /// again; records already resent stay as they are (their retransmission is in flight).
    pub fn undo_lost(&mut self) {
        let mut freed = 0;
        for s in self.segs.iter_mut() {
            if s.flags & (LOST | RETRANS) == LOST {
                s.flags &= !LOST;
                freed += s.len as u64;
            }
        }
        self.lost_bytes -= freed;
        self.refresh_pipe();
        self.lost_scan = self.segs.front().map_or(0, |s| s.start);
        self.retx_hint = u64::MAX;
    }

    /// RFC 6675 `NextSeg()` rule 1: the first lost record not yet retransmitted. Returns its index.
    pub fn next_lost(&mut self) -> Option<usize> {
        if self.retx_hint == u64::MAX || self.lost_bytes <= self.lost_retransmitted_bytes() {
            self.retx_hint = u64::MAX;
            return None;
        }
        let mut i = self.index_of(self.retx_hint);
        while i < self.segs.len() {
            let s = &self.segs[i];
            if s.flags & (LOST | RETRANS | SACKED) == LOST {
                self.retx_hint = s.start;
                return Some(i);
            }
            i += 1;
        }
        self.retx_hint = u64::MAX;
        None
    }

    /// Knob `short_segment_on_rexmit` (BSD go-back-N after a timeout): before the lost, not yet
    /// resent record `i` goes out again, re-cut it to `len` bytes, as 4.4BSD's `tcp_output`
    /// cuts `len = min(so_snd.sb_cc, win) − off` (at most `t_maxseg`) from snd_nxt whatever the
    /// old segment boundaries were (the source is cited in `sender/send.rs`, `next_segment`).
    /// Shorter: the record is split and its rest stays lost, unsent. Longer: bytes are taken
    /// from the front of the following records while they are contiguous and lost, not resent
    /// and not SACKed (a record emptied so is removed); past the last record, up to `new_room`
    /// bytes of new data are appended to it (BSD's segment crosses snd_max). Returns the bytes
    /// of new data appended. Lost bytes and pipe are unchanged by the re-cut (both parts are
    /// lost and unsent); appended new data is counted outstanding and lost until
    /// [`Scoreboard::on_retransmit`] sends the record. No allocation beyond the ring's own
    /// growth: a split inserts one record next to the go-back-N point.
    pub fn recut_lost(&mut self, i: usize, len: u32, new_room: u64) -> u32 {
        debug_assert!(self.segs[i].flags & (LOST | RETRANS | SACKED) == LOST && len > 0);
        let cur = self.segs[i].len;
        if len < cur {
            let mut rest = self.segs[i];
            rest.start += u64::from(len);
            rest.len = cur - len;
            self.segs[i].len = len;
            self.segs.insert(i + 1, rest);
            return 0;
        }
        let mut need = len - cur;
        while need > 0 {
            let end = self.segs[i].end();
            match self.segs.get(i + 1).copied() {
                Some(next) => {
                    if next.start != end || next.flags & (LOST | RETRANS | SACKED) != LOST {
                        break;
                    }
                    let k = need.min(next.len);
                    self.segs[i].len += k;
                    need -= k;
                    if k == next.len {
                        self.segs.remove(i + 1);
                    } else {
                        let n = &mut self.segs[i + 1];
                        n.start += u64::from(k);
                        n.len -= k;
                    }
                }
                None => {
                    let k = u64::from(need).min(new_room) as u32;
                    self.segs[i].len += k;
                    self.out_bytes += u64::from(k);
                    self.lost_bytes += u64::from(k);
                    self.refresh_pipe();
                    return k;
                }
            }
        }
        0
    }

    /// Bytes of records both LOST and RETRANS (lost, and already resent).
    #[inline]
    fn lost_retransmitted_bytes(&self) -> u64 {
        // retrans_bytes counts RETRANS records; RETRANS is only set on LOST records here.
        self.retrans_bytes
    }

    /// Record a retransmission of record `i` at `now`. Returns (start, len).
    pub fn on_retransmit(&mut self, i: usize, now: Nanos) -> (u64, u32) {
        let empty = self.pipe() == 0;
        let nxt = self.segs.back().map_or(0, |s| s.end());
        let snap = self.rate.on_send(now, empty);
        let s = &mut self.segs[i];
        debug_assert!(s.flags & LOST != 0 && s.flags & RETRANS == 0);
        s.flags |= RETRANS | EVER_RETRANS;
        s.tx_count = s.tx_count.saturating_add(1);
        s.xmit = now;
        s.snap = snap;
        self.retrans_bytes += s.len as u64;
        self.pipe += s.len as u64;
        let out = (s.start, s.len);
        self.retx_order.push_back(Retx {
            start: out.0,
            xmit: now,
            nxt,
        });
        out
    }

    /// Tail loss probe without new data (RFC 8985 §7.3): resend the last segment. It stays
    /// counted once in pipe; Karn's rule applies to it from now on.
    pub fn on_probe_retransmit(&mut self, now: Nanos) -> Option<(u64, u32)> {
        let s = self.segs.back_mut()?;
        if s.flags & SACKED != 0 {
            return None;
        }
        s.flags |= EVER_RETRANS;
        s.xmit = now;
        Some((s.start, s.len))
    }

    /// RACK loss detection (RFC 8985 §6.2): an un-SACKed segment sent no later than the most
    /// recently sent delivered segment (`rack_xmit`) is lost once `rack_rtt + reo_wnd` have
    /// passed since it was sent. Lost retransmissions are detected the same way and become
    /// eligible for another retransmission.
    /// `rack` is (send time, end offset) of the most recently sent delivered segment.
    pub fn rack_detect(
        &mut self,
        now: Nanos,
        rack: (Nanos, u64),
        rack_rtt: Nanos,
        reo_wnd: Nanos,
    ) -> RackOutcome {
        let mut out = RackOutcome::default();
        let wait = rack_rtt + reo_wnd;
        // RFC 8985 §6.2 RACK_sent_after: compare send times, then end sequence numbers.
        let consider = |xmit: Nanos, end: u64, out: &mut RackOutcome| -> bool {
            if (xmit, end) >= rack {
                return false;
            }
            let deadline = xmit + wait;
            if deadline <= now {
                true
            } else {
                out.timeout = Some(out.timeout.map_or(deadline, |t: Nanos| t.min(deadline)));
                false
            }
        };
        // First transmissions, in sequence (= send) order.
        self.rack_scan = self.rack_scan.max(self.segs.front().map_or(0, |s| s.start));
        let mut i = self.index_of(self.rack_scan);
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.flags & EVER_RETRANS == 0 && s.flags & SACKED == 0 {
                if !consider(s.xmit, s.end(), &mut out) {
                    break;
                }
                if s.flags & LOST == 0 {
                    self.segs[i].flags |= LOST;
                    self.lost_bytes += s.len as u64;
                    self.pipe -= s.len as u64;
                    out.newly_lost += s.len as u64;
                    self.retx_hint = self.retx_hint.min(s.start);
                }
            }
            self.rack_scan = s.end();
            i += 1;
        }
        // Outstanding retransmissions, in the order they were sent.
        while let Some(r) = self.front_retransmission() {
            let j = self.index_of(r.start);
            if !consider(r.xmit, self.segs[j].end(), &mut out) {
                break;
            }
            out.newly_lost += self.retransmission_lost(j);
        }
        out
    }

    /// FACK's lost-retransmission detection (Linux 2.4–3.x, net/ipv4/tcp_input.c "Event C",
    /// from rate-halving; `tcp_mark_lost_retrans` since 2.6.24; read for the facts, nothing
    /// copied): a retransmission is lost once the receiver has SACKed data beyond what had been
    /// sent when it left (the highest SACKed offset passes that retransmission's snd_nxt), since
    /// it would otherwise have arrived first. Linux applies it in Recovery with FACK, the
    /// caller's condition. Retransmissions leave in send order with a non-decreasing snd_nxt,
    /// so the lost ones form a prefix of the queue (amortised O(1) per ACK). Returns the bytes
    /// made eligible for another retransmission.
    pub fn mark_lost_retransmits(&mut self) -> u64 {
        let mut newly = 0;
        while let Some(r) = self.front_retransmission() {
            if self.high_sacked <= r.nxt {
                break;
            }
            let j = self.index_of(r.start);
            newly += self.retransmission_lost(j);
        }
        newly
    }

    /// The oldest retransmission still outstanding (its record neither acknowledged, SACKed nor
    /// sent again); entries before it are dropped.
    #[inline]
    fn front_retransmission(&mut self) -> Option<Retx> {
        while let Some(&r) = self.retx_order.front() {
            let live = self.segs.front().is_some_and(|f| r.start >= f.start) && {
                let j = self.index_of(r.start);
                j < self.segs.len()
                    && self.segs[j].start == r.start
                    && self.segs[j].xmit == r.xmit
                    && self.segs[j].flags & (RETRANS | SACKED) == RETRANS
            };
            if live {
                return Some(r);
            }
            self.retx_order.pop_front();
        }
        None
    }

    /// The front retransmission, record `j`, is lost too: it leaves pipe and may be sent again.
    /// Returns its length.
    #[inline]
    fn retransmission_lost(&mut self, j: usize) -> u64 {
        let s = &mut self.segs[j];
        s.flags &= !RETRANS;
        let len = s.len as u64;
        self.retrans_bytes -= len;
        self.pipe -= len;
        self.retx_hint = self.retx_hint.min(s.start);
        self.retx_order.pop_front();
        len
    }

    /// Iterate over records (for tests and invariant checks).
    pub fn iter(&self) -> impl Iterator<Item = &Seg> {
        self.segs.iter()
    }

    /// Check the counters against a recount (tests).
    pub fn check_invariants(&self) {
        let (mut out, mut sk, mut lo, mut re) = (0, 0, 0, 0);
        for s in &self.segs {
            out += s.len as u64;
            if s.flags & SACKED != 0 {
                sk += s.len as u64;
                assert_eq!(
                    s.flags & (LOST | RETRANS),
                    0,
                    "SACKED record also lost/retrans"
                );
            }
            if s.flags & LOST != 0 {
                lo += s.len as u64;
            }
            if s.flags & RETRANS != 0 {
                re += s.len as u64;
                assert!(s.flags & LOST != 0);
            }
        }
        assert_eq!(
            (out, sk, lo, re),
            (
                self.out_bytes,
                self.sacked_bytes,
                self.lost_bytes,
                self.retrans_bytes
            )
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64, mss: u32) -> Scoreboard {
        let mut b = Scoreboard::new(3);
        for i in 0..n {
            b.on_send_new(i * mss as u64, mss, i);
        }
        b
    }

    /// Four 1000-byte records; the head marked lost and resent, the third SACKed.
    fn resent_head_and_sacked_third() -> Scoreboard {
        let mut b = board(4, 1000);
        b.mark_head_lost();
        let i = b.next_lost().unwrap();
        b.on_retransmit(i, 10);
        let mut res = AckResult::default();
        b.on_sack_block(2000, 3000, 20, &mut res);
        b
    }

    /// Knob `partial_ack_zero_persist` (FreeBSD tcp_output.c rev. 1.100.2.3: snd_nxt =
    /// snd_una when the window shrank to 0; sources at `Sender::bsd_zero_window`): every record
    /// not SACKed is to go again from snd_una, resent ones included; SACK marks stay.
    #[test]
    fn test_pull_back_to_una() {
        let mut b = resent_head_and_sacked_third();
        assert_eq!((b.lost_bytes, b.retrans_bytes), (1000, 1000));
        b.pull_back_to_una();
        b.check_invariants();
        assert_eq!(
            (b.lost_bytes, b.retrans_bytes, b.sacked_bytes),
            (3000, 0, 1000)
        );
        assert_eq!(b.pipe(), 0);
        let mut order = vec![];
        while let Some(i) = b.next_lost() {
            order.push(b.seg(i).start);
            b.on_retransmit(i, 30);
        }
        assert_eq!(
            order,
            vec![0, 1000, 3000],
            "from snd_una, the SACKed record skipped"
        );
    }

    /// Knob `freebsd_sack_walk`: a SACK recovery ends with FreeBSD's snd_nxt at 1000, below
    /// snd_max: the records from it on that are not SACKed go again in order; the one below it
    /// (resent, outstanding) keeps its counts.
    #[test]
    fn test_pull_back_from() {
        let mut b = resent_head_and_sacked_third();
        b.pull_back_from(1000);
        b.check_invariants();
        assert_eq!(
            (b.lost_bytes, b.retrans_bytes, b.sacked_bytes),
            (3000, 1000, 1000)
        );
        let mut order = vec![];
        while let Some(i) = b.next_lost() {
            order.push(b.seg(i).start);
            b.on_retransmit(i, 30);
        }
        assert_eq!(order, vec![1000, 3000]);
    }

    /// Knob `freebsd_sack_go_back_n` (FreeBSD RELENG_5 tcp_sack.c rev. 1.3.2.1
    /// `tcp_sack_option`, `tcp_sack_output`; read for the facts): six segments out; after the
    /// timeout the go-back-N resent 0..5000 and the receiver SACKs 1000..2000 and 3000..4000.
    /// The rebuilt holes 0..1000 and 2000..3000 are resendable again (rxmit = start, out of
    /// sack_bytes_rxmt); 4000..5000, resent above the highest SACK, is sent data below snd_nxt;
    /// FreeBSD's snd_nxt is 5000, the first segment the go-back-N had not resent.
    #[test]
    fn test_freebsd_rebuild_holes_after_a_go_back_n() {
        let mut b = Scoreboard::new(3);
        for i in 0..6u64 {
            b.on_send_new(i * 1000, 1000, i);
        }
        b.on_rto();
        for i in 0..5 {
            b.on_retransmit(i, 10 + i as u64);
        }
        let mut res = AckResult::default();
        b.on_sack_block(1000, 2000, 20, &mut res);
        b.on_sack_block(3000, 4000, 20, &mut res);
        assert_eq!(b.retrans_bytes, 3000);
        assert_eq!(b.freebsd_rebuild_holes(6000), 5000);
        b.check_invariants();
        assert_eq!(
            (b.retrans_bytes, b.lost_bytes, b.sacked_bytes),
            (0, 3000, 2000)
        );
        assert_eq!(b.pipe(), 1000, "4000..5000 in flight");
        let mut holes = vec![];
        while let Some(i) = b.next_lost() {
            holes.push(b.seg(i).start);
            b.on_retransmit(i, 30);
        }
        assert_eq!(holes, vec![0, 2000, 5000]);
        // Resent as new data: neither lost nor resent any more.
        b.freebsd_sent_as_new(5);
        b.check_invariants();
        assert_eq!((b.retrans_bytes, b.lost_bytes), (2000, 2000));
    }

    #[test]
    fn test_mark_holes_lost_marks_every_hole_below_the_highest_sack() {
        // FreeBSD 5.3's holes (`Mode::FreebsdSack`): records 1, 3 and 5 SACKed, so 0, 2 and 4
        // are holes below the highest SACK; RFC 6675 IsLost (DupThresh 3) marks record 0 only
        // (2 has two SACKed records above it, 4 one), FreeBSD every hole.
        let mut b = board(8, 1000);
        let mut res = AckResult::default();
        for (l, r) in [(1000, 2000), (3000, 4000), (5000, 6000)] {
            b.on_sack_block(l, r, 20, &mut res);
        }
        assert_eq!(b.mark_lost_by_sack(), 1000, "IsLost: record 0 only");
        assert_eq!(b.mark_holes_lost(), 2000, "records 2 and 4");
        let lost: Vec<u64> = b
            .iter()
            .filter(|s| s.flags & LOST != 0)
            .map(|s| s.start)
            .collect();
        assert_eq!(lost, vec![0, 2000, 4000], "nothing above the highest SACK");
        assert_eq!(b.pipe(), 2000, "records 6 and 7");
        assert_eq!(b.mark_holes_lost(), 0);
        b.check_invariants();
    }

    #[test]
    fn test_recut_lost_splits_shifts_and_crosses_into_new_data() {
        // BSD go-back-N (knob `short_segment_on_rexmit`): four 1000-byte records lost by a
        // timeout; the window leaves 300 bytes, then a whole segment, and so on.
        let mut b = board(4, 1000);
        b.on_rto();
        let i = b.next_lost().unwrap();
        assert_eq!(b.recut_lost(i, 300, 0), 0);
        b.check_invariants();
        assert_eq!(b.on_retransmit(i, 10), (0, 300), "the short segment");
        assert_eq!((b.lost_bytes, b.retrans_bytes, b.pipe()), (4000, 300, 300));
        // The next segment starts at the odd offset and takes 300 bytes of the next record.
        let i = b.next_lost().unwrap();
        assert_eq!(b.recut_lost(i, 1000, 0), 0);
        assert_eq!(b.on_retransmit(i, 11), (300, 1000));
        let starts: Vec<(u64, u32)> = b.iter().map(|s| (s.start, s.len)).collect();
        assert_eq!(
            starts,
            vec![
                (0, 300),
                (300, 1000),
                (1300, 700),
                (2000, 1000),
                (3000, 1000)
            ]
        );
        b.check_invariants();
        // A record emptied by the shift is removed: 1700 bytes from 1300 take the rest of
        // (1300, 700) and all of (2000, 1000).
        let i = b.next_lost().unwrap();
        assert_eq!(b.recut_lost(i, 1700, 0), 0);
        assert_eq!(b.on_retransmit(i, 12), (1300, 1700));
        assert_eq!(b.len(), 4);
        // The last lost record, cut at the odd offset, carries new data past snd_max (4000),
        // as far as the room for new data allows.
        let i = b.next_lost().unwrap();
        assert_eq!(b.recut_lost(i, 1300, 200), 200);
        assert_eq!(b.on_retransmit(i, 13), (3000, 1200));
        assert_eq!(
            (b.out_bytes, b.lost_bytes, b.retrans_bytes),
            (4200, 4200, 4200)
        );
        b.check_invariants();
        assert_eq!(b.next_lost(), None);
        // Cumulative ACKs at the new boundaries pop the records.
        let mut r = AckResult::default();
        b.on_cum_ack(1300, 20, &mut r);
        assert_eq!((r.bytes_acked, r.packets_acked), (1300, 2));
        b.check_invariants();
    }

    #[test]
    fn test_recut_lost_does_not_take_sacked_or_resent_bytes() {
        let mut b = board(3, 1000);
        b.on_rto();
        let mut r = AckResult::default();
        b.on_sack_block(1000, 2000, 5, &mut r);
        let i = b.next_lost().unwrap();
        // Record 0 cannot grow into the SACKed record 1: it goes as it is.
        assert_eq!(b.recut_lost(i, 1500, 0), 0);
        assert_eq!(b.on_retransmit(i, 10), (0, 1000));
        let i = b.next_lost().unwrap();
        assert_eq!(b.seg(i).start, 2000);
        // The last record with no room for new data stays as it is.
        assert_eq!(b.recut_lost(i, 1500, 0), 0);
        assert_eq!(b.on_retransmit(i, 11), (2000, 1000));
        b.check_invariants();
    }

    #[test]
    fn test_undo_lost_keeps_resent_records_and_stops_resending() {
        let mut b = board(6, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(4000, 5000, 10, &mut r);
        assert!(b.on_rto_keep_sacked());
        let i = b.next_lost().unwrap();
        b.on_retransmit(i, 20); // record 0 resent
        b.undo_lost();
        b.check_invariants();
        // Record 0 stays lost-and-resent (in flight once); the others are no longer lost.
        assert_eq!(
            (b.lost_bytes, b.retrans_bytes, b.sacked_bytes),
            (1000, 1000, 1000)
        );
        assert_eq!(b.next_lost(), None);
        assert_eq!(b.pipe(), 5000);
    }

    #[test]
    fn test_pipe_counts_sent_minus_sacked_minus_lost_plus_retrans() {
        let mut b = board(10, 1000);
        assert_eq!(b.pipe(), 10_000);
        let mut r = AckResult::default();
        // Segment 0 lost; 1..4 SACKed.
        b.on_sack_block(1000, 5000, 100, &mut r);
        assert_eq!(r.bytes_sacked, 4000);
        assert_eq!(b.pipe(), 6000);
        // ≥ 3 SACKed above segment 0 ⇒ lost (RFC 6675 IsLost).
        assert_eq!(b.mark_lost_by_sack(), 1000);
        assert_eq!(b.pipe(), 5000);
        let i = b.next_lost().unwrap();
        assert_eq!(i, 0);
        b.on_retransmit(i, 200);
        assert_eq!(b.pipe(), 6000);
        assert!(b.next_lost().is_none());
        b.check_invariants();
        assert_eq!(r.packets_delivered, 4);
        let mut r = AckResult::default();
        b.on_cum_ack(5000, 300, &mut r);
        assert_eq!(r.bytes_acked, 5000);
        // Only the retransmitted segment 0 is new: 1..4 were delivered when SACKed.
        assert_eq!((r.packets_acked, r.packets_delivered), (5, 1));
        assert_eq!(r.bytes_acked_sacked, 4000);
        assert!(r.acked_retransmitted);
        assert_eq!(b.pipe(), 5000);
        b.check_invariants();
    }

    #[test]
    fn test_islost_needs_dupthresh_sacked_segments_above() {
        let mut b = board(10, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(1000, 3000, 0, &mut r); // two SACKed above segment 0
        assert_eq!(b.mark_lost_by_sack(), 0);
        b.on_sack_block(4000, 5000, 0, &mut r); // third SACKed (segment 4): segment 0 is lost,
        assert_eq!(b.mark_lost_by_sack(), 1000); // segment 3 has only one SACKed above it
        assert_eq!(b.next_lost(), Some(0));
        b.on_retransmit(0, 1);
        assert_eq!(b.next_lost(), None);
        b.on_sack_block(5000, 7000, 0, &mut r); // now three above segment 3
        assert_eq!(b.mark_lost_by_sack(), 1000);
        assert_eq!(b.next_lost(), Some(3));
        b.check_invariants();
    }

    #[test]
    fn test_fack_marks_by_distance_from_forward_most_sack() {
        // Only segment 6 is SACKed: with FACK, segments 0..=3 (more than 2 below it) are lost;
        // RFC 6675 IsLost would mark none (one SACKed segment above them).
        let mut b = board(10, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(6000, 7000, 0, &mut r);
        assert_eq!(b.mark_lost_by_sack(), 0);
        assert_eq!(b.mark_lost_fack(), 4000);
        b.check_invariants();
    }

    #[test]
    fn test_rack_marks_by_time_and_detects_lost_retransmission() {
        // Segments 0..10 sent at 0..10 ms; segment 9 (sent at 9 ms) is SACKed at 60 ms.
        let ms = 1_000_000;
        let mut b = Scoreboard::new(3);
        for i in 0..10u64 {
            b.on_send_new(i * 1000, 1000, i * ms);
        }
        let mut r = AckResult::default();
        b.on_sack_block(9000, 10_000, 60 * ms, &mut r);
        // RACK.rtt = 51 ms, reo_wnd 5 ms: segment k is lost at k + 56 ms.
        let o = b.rack_detect(60 * ms, (9 * ms, 10_000), 51 * ms, 5 * ms);
        assert_eq!(o.newly_lost, 5000); // segments 0..=4 (deadline ≤ 60 ms)
        assert_eq!(o.timeout, Some(61 * ms)); // segment 5 at 5 + 56 ms
        b.check_invariants();
        // Retransmit segment 0 at 61 ms; a later new segment sent at 70 ms is SACKed at 125 ms,
        // while the retransmission never arrives: it is lost at 61 + 56 = 117 ms ≤ 125 ms.
        let i = b.next_lost().unwrap();
        b.on_retransmit(i, 61 * ms);
        b.on_send_new(10_000, 1000, 70 * ms);
        b.on_sack_block(10_000, 11_000, 125 * ms, &mut r);
        let o = b.rack_detect(125 * ms, (70 * ms, 11_000), 55 * ms, ms);
        assert!(o.newly_lost >= 1000);
        assert_eq!(
            b.next_lost(),
            Some(0),
            "the lost retransmission is eligible again"
        );
        b.check_invariants();
    }

    #[test]
    fn test_fack_finds_lost_retransmission_once_later_data_is_sacked() {
        // Segments 0..10; 0 and 1 lost (FACK marks them on SACKs of 2..=9), both resent while
        // snd_nxt is 10 000. SACKs up to snd_nxt prove nothing; once segment 10, sent after the
        // retransmissions, is SACKed while 0 is still missing, both are lost again (in send
        // order), and a retransmission that is acknowledged meanwhile is not.
        let mut b = board(10, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(2000, 10_000, 1, &mut r);
        assert_eq!(b.mark_lost_fack(), 2000);
        for _ in 0..2 {
            let i = b.next_lost().unwrap();
            b.on_retransmit(i, 2);
        }
        assert_eq!(b.next_lost(), None);
        assert_eq!(
            b.mark_lost_retransmits(),
            0,
            "nothing beyond snd_nxt is SACKed"
        );
        b.on_send_new(10_000, 1000, 3);
        b.on_send_new(11_000, 1000, 3);
        b.on_cum_ack(0, 4, &mut r);
        b.on_sack_block(1000, 2000, 4, &mut r); // the retransmission of 1 arrived
        b.on_sack_block(10_000, 11_000, 4, &mut r);
        assert_eq!(
            b.mark_lost_retransmits(),
            1000,
            "only segment 0's retransmission"
        );
        assert_eq!(b.next_lost(), Some(0));
        assert_eq!(b.mark_lost_retransmits(), 0, "found once");
        b.check_invariants();
    }

    #[test]
    fn test_rto_marks_everything_lost_and_forgets_sacks() {
        let mut b = board(5, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(2000, 3000, 0, &mut r);
        b.on_rto();
        assert_eq!(b.sacked_bytes, 0);
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_lost(), Some(0));
        b.check_invariants();
    }

    proptest::proptest! {
        /// The first-record shortcut of `index_of` answers what the binary search answers, for
        /// offsets below, inside and above the records, after a cumulative ACK that trims the
        /// first record mid-way (a re-segmenting peer) and on an empty board.
        #[test]
        fn prop_index_of_equals_the_binary_search(
            una in 0u64..2500, offsets in proptest::collection::vec(0u64..3000, 1..20)
        ) {
            let mut b = board(20, 100);
            let mut r = AckResult::default();
            b.on_cum_ack(una, 0, &mut r);
            for off in offsets {
                let full = b.segs.partition_point(|s| s.end() <= off);
                proptest::prop_assert_eq!(b.index_of(off), full, "offset {}", off);
            }
        }
    }

    proptest::proptest! {
        /// The skip hints never change what is marked: after any sequence of SACK blocks,
        /// cumulative ACKs and timeouts, a record is SACKed exactly when some block since the
        /// last timeout covered it wholly (the rule without hints).
        #[test]
        fn prop_sack_skip_hints_mark_what_a_full_walk_marks(
            ops in proptest::collection::vec((0u8..10, 0u64..40, 1u64..12), 1..60)
        ) {
            let mut b = board(40, 100);
            let mut blocks: Vec<(u64, u64)> = Vec::new();
            let mut una = 0u64;
            for (kind, at, len) in ops {
                let mut r = AckResult::default();
                match kind {
                    0 => {
                        b.on_rto();
                        blocks.clear();
                    }
                    1 => {
                        una = una.max((at * 100).min(4000));
                        b.on_cum_ack(una, 0, &mut r);
                    }
                    _ => {
                        // Edges off record boundaries too (a re-segmenting peer).
                        let left = at * 100 + if kind == 2 { 50 } else { 0 };
                        let right = (left + len * 100).min(4000);
                        b.on_sack_block(left, right, 0, &mut r);
                        blocks.push((left, right));
                    }
                }
                for i in 0..b.len() {
                    let s = *b.seg(i);
                    let want = blocks.iter().any(|&(l, r)| s.start >= l && s.end() <= r);
                    proptest::prop_assert_eq!(s.flags & SACKED != 0, want, "record at {}", s.start);
                }
                b.check_invariants();
            }
        }
    }

    #[test]
    fn test_data_sacked_before_an_rto_counts_once() {
        // 10 records sent at t = 0; 2..10 are SACKed at 50 ms, 0 and 1 are lost. The RTO at
        // 300 ms forgets the SACK marks and everything is resent (go-back-N); the receiver,
        // which still holds 2..10, then SACKs and acknowledges them again. Only the two lost
        // records are new deliveries (C.delivered counts each byte once, draft-cheng-iccrg-
        // delivery-rate-estimation §3.2) — before COUNTED the burst of re-reported data gave
        // rate samples above the link rate (BBR pacing at 1.5x the bottleneck).
        let ms = 1_000_000u64;
        let mut b = board(10, 1000);
        let mut r = AckResult::default();
        b.rate.begin_ack(10_000);
        b.on_sack_block(2000, 10_000, 50 * ms, &mut r);
        b.rate.end_ack(ms);
        assert_eq!((b.rate.delivered, r.packets_delivered), (8000, 8));
        b.on_rto();
        while let Some(i) = b.next_lost() {
            b.on_retransmit(i, 300 * ms);
        }
        let mut r = AckResult::default();
        b.rate.begin_ack(10_000);
        b.on_sack_block(2000, 10_000, 400 * ms, &mut r);
        b.on_cum_ack(10_000, 400 * ms, &mut r);
        b.rate.end_ack(ms);
        assert_eq!(b.rate.delivered, 10_000);
        assert_eq!(r.packets_delivered, 2);
        assert_eq!(r.bytes_acked, 10_000);
        b.check_invariants();
    }

    #[test]
    fn test_rto_keeping_sacks_resends_only_the_holes() {
        let mut b = board(6, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(2000, 4000, 0, &mut r); // records 2 and 3 SACKed
        let i = b.next_lost().or_else(|| {
            b.mark_head_lost();
            b.next_lost()
        });
        b.on_retransmit(i.unwrap(), 10); // record 0 resent before the timeout
        assert!(b.on_rto_keep_sacked());
        b.check_invariants();
        assert_eq!(b.sacked_bytes, 2000);
        assert_eq!(b.lost_bytes, 4000); // 0, 1, 4, 5
        assert_eq!(b.pipe(), 0);
        let mut resent = vec![];
        while let Some(i) = b.next_lost() {
            resent.push(b.on_retransmit(i, 20).0);
        }
        assert_eq!(resent, vec![0, 1000, 4000, 5000]);
        b.check_invariants();
        // New SACK information after the timeout still marks and counts as before.
        let mut r = AckResult::default();
        b.on_sack_block(5000, 6000, 30, &mut r);
        assert_eq!(r.bytes_sacked, 1000);
        b.check_invariants();
    }

    #[test]
    fn test_rto_forgets_sacks_when_the_head_is_sacked() {
        // A SACKed first record at a timeout means the receiver reneged (Linux
        // tcp_check_sack_reneging): the marks are forgotten as RFC 2018 §8 recommends.
        let mut b = board(4, 1000);
        let mut r = AckResult::default();
        b.on_sack_block(0, 1000, 0, &mut r);
        assert!(!b.on_rto_keep_sacked());
        assert_eq!(b.sacked_bytes, 0);
        assert_eq!(b.next_lost(), Some(0));
        b.check_invariants();
    }

    #[test]
    fn test_heavy_sack_loss_is_linear() {
        // 50 000 segments in flight, every 10th lost: processing must stay cheap and correct.
        let n = 50_000u64;
        let mut b = board(n, 1448);
        let mut r = AckResult::default();
        for i in 0..n {
            if i % 10 != 0 {
                let l = i * 1448;
                b.on_sack_block(l, l + 1448, 1000, &mut r);
                b.mark_lost_by_sack();
            }
        }
        b.check_invariants();
        let mut lost = 0;
        while let Some(i) = b.next_lost() {
            b.on_retransmit(i, 2000);
            lost += 1;
        }
        // All lost but the last hole (fewer than 3 SACKed segments above it? no: 9 above it).
        assert_eq!(lost, n / 10);
    }
}
