//! Pacing, sans I/O: when the next paced departure may leave, and how many segments leave
//! together in one pacing slot (knob `pacing_quantum`).
//!
//! * `segment` (the engine's default): every segment is its own slot; the next departure is
//!   one segment's payload at the pacing rate later.
//! * `linux-tso-autosize`: Linux's internal pacing since the EDT rework (4.20) with TSO
//!   autosizing (3.12), read for the facts in net/ipv4/tcp_output.c (nothing copied):
//!   - one slot sends one buffer (`sk_buff`) of up to `tcp_tso_autosize` segments back to
//!     back, which the device's (software) GSO cuts into MTU-sized packets: bytes = pacing
//!     rate / 2^`sk_pacing_shift` (10, so about 1 ms of data), plus `sk_gso_max_size` (64 KB)
//!     / 2^(min RTT in µs / 2^`tcp_tso_rtt_log` (9)) when that exponent is under 32 ("tcp:
//!     adjust TSO packet sizes based on min_rtt", 5.18), at most 64 KB, at least the controller's
//!     `min_tso_segs` (BBR: 1 below 1.2 Mbit/s, else 2, `bbr_min_tso_segs`) or the stack's
//!     `tcp_min_tso_segs` (2);
//!   - a buffer holds contiguous bytes of one kind: new data (`tcp_write_xmit`) or one
//!     retransmitted run (`tcp_xmit_retransmit_queue`); each checks the pacing time first
//!     (`tcp_pacing_check`), so one slot sends one buffer;
//!   - after a buffer leaves, the departure time advances by its length at the pacing rate,
//!     less up to half of that for the time the send was late ("take into account OS jitter",
//!     `tcp_update_skb_after_send`), and not at all for the connection's first 10 data
//!     segments ("original sch_fq does not pace first 10 MSS").
//!
//!   Measured on this machine's 6.18 kernel (kernel engine, BBR, 20 Mbit/s × 40 ms): half of
//!   the departures follow the previous one back to back (identify's `burst_frac` 0.50), none
//!   with the `segment` model (0.01).
//!
//! Not modelled: `tcp_tso_should_defer` (Linux skips it when the last write was under 1 ms
//! ago, which a paced flow's always is), and the device's line-rate serialisation of a buffer
//! (its packets leave back to back, as any back-to-back segments do here).

// `sk_gso_max_size` (`GSO_LEGACY_MAX_SIZE`), bytes: the TSO model's frame limit.
use super::tso::MAX_FRAME as GSO_MAX_SIZE;
use crate::time::Nanos;

/// Which pacing model (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PacingQuantumCfg {
    /// One segment per pacing slot.
    #[serde(rename = "segment")]
    Segment,
    /// Linux ≥ 4.20: one TSO-autosized buffer per slot.
    #[serde(rename = "linux-tso-autosize")]
    LinuxTsoAutosize,
}

/// `sk_pacing_shift`: a buffer holds 1/2^10 s of data at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `tcp_tso_rtt_log`: min RTT in µs is shifted right by this much.
const TSO_RTT_LOG: u32 = 9;
/// `tcp_min_tso_segs` default.
pub const MIN_TSO_SEGS: u32 = 2;
/// Data segments sent before pacing starts (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

/// Linux `tcp_tso_autosize`: segments per buffer at pacing rate `rate_bps` (payload bit/s),
/// minimum RTT `min_rtt` (0: none yet), segment size `mss`, floor `min_tso`.
pub fn autosize_segments(rate_bps: u64, min_rtt: Nanos, mss: u32, min_tso: u32) -> u32 {
    let mut bytes = (rate_bps / 8) >> PACING_SHIFT;
    if min_rtt > 0 {
        let r = (min_rtt / 1_000) >> TSO_RTT_LOG;
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
    }
    let bytes = bytes.min(GSO_MAX_SIZE);
    let segs = (bytes / u64::from(mss.max(1))).min(u64::from(u32::MAX)) as u32;
    segs.max(min_tso.max(1))
}

/// Linux `tcp_tso_segs`: segments per GSO buffer at pacing rate `rate_bps` — autosized
/// ([`autosize_segments`], at least the controller's `min_tso_segs` or else `tcp_min_tso_segs`)
/// and at most the device's `gso_max_segs` (knob `gso_max_segs`, `sk_gso_max_segs`).
pub fn tso_segs(
    rate_bps: u64,
    min_rtt: Nanos,
    mss: u32,
    min_tso: Option<u32>,
    gso_max_segs: u32,
) -> u32 {
    autosize_segments(rate_bps, min_rtt, mss, min_tso.unwrap_or(MIN_TSO_SEGS))
        .min(gso_max_segs.max(1))
}

/// The buffer being sent in the current slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Buffer {
    /// When it started (all of it leaves at this instant).
    start: Nanos,
    /// The departure time it may advance from (Linux `tcp_wstamp_ns`, at least `start`).
    base: Nanos,
    /// How late the slot was taken (`credit`).
    late: Nanos,
    /// Payload bytes so far.
    bytes: u64,
    /// Segments it may still take.
    left: u32,
    /// Offset just after its last byte, and whether it holds retransmissions.
    next_off: u64,
    retransmit: bool,
}

/// The pacing state of one sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacer {
    mode: PacingQuantumCfg,
    buf: Option<Buffer>,
    /// Data segments sent so far (Linux `data_segs_out`).
    data_segs_out: u64,
}

impl Pacer {
    pub fn new(mode: PacingQuantumCfg) -> Pacer {
        Pacer {
            mode,
            buf: None,
            data_segs_out: 0,
        }
    }

    /// The gate: may a segment leave at `now`, before knowing which? Either the slot has come
    /// (`pace_next` ≤ `now`) or a buffer begun at `now` has room for more.
    #[inline]
    pub fn gate_open(&self, now: Nanos, pace_next: Nanos) -> bool {
        pace_next <= now || self.buf.is_some_and(|b| b.start == now && b.left > 0)
    }

    /// May the segment at `off` (a retransmission or new data) leave at `now`: the slot has
    /// come, or it continues the buffer begun at `now` (contiguous, of the same kind).
    #[inline]
    pub fn may_send(&self, now: Nanos, pace_next: Nanos, off: u64, retransmit: bool) -> bool {
        pace_next <= now || self.continues(now, off, retransmit)
    }

    pub fn continues(&self, now: Nanos, off: u64, retransmit: bool) -> bool {
        self.buf.is_some_and(|b| {
            b.start == now && b.left > 0 && b.next_off == off && b.retransmit == retransmit
        })
    }

    /// A segment of `len` payload bytes at `off` left at `now`, paced at `rate_bps` (payload
    /// bit/s); `quantum` gives the buffer size in segments when a new buffer starts. Returns
    /// the next departure time.
    #[allow(clippy::too_many_arguments)]
    pub fn on_send(
        &mut self,
        now: Nanos,
        pace_next: Nanos,
        off: u64,
        len: u32,
        retransmit: bool,
        rate_bps: u64,
        quantum: impl FnOnce() -> u32,
    ) -> Nanos {
        let gap = |bytes: u64| (bytes * 8 * 1_000_000_000).checked_div(rate_bps);
        match self.mode {
            PacingQuantumCfg::Segment => gap(u64::from(len)).map_or(pace_next, |g| now + g),
            PacingQuantumCfg::LinuxTsoAutosize => {
                if len > 0 {
                    self.data_segs_out += 1;
                }
                if !self.continues(now, off, retransmit) {
                    self.buf = Some(Buffer {
                        start: now,
                        base: pace_next.max(now),
                        late: now.saturating_sub(pace_next),
                        bytes: 0,
                        left: quantum().max(1),
                        next_off: off,
                        retransmit,
                    });
                }
                let Some(b) = self.buf.as_mut() else {
                    return pace_next;
                };
                b.bytes += u64::from(len);
                b.left -= 1;
                b.next_off = off + u64::from(len);
                if self.data_segs_out < UNPACED_SEGMENTS {
                    return b.base;
                }
                match gap(b.bytes) {
                    Some(g) => b.base + g - (g / 2).min(b.late),
                    None => b.base,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const MSS: u32 = 1448;

    #[test]
    fn test_autosize_one_ms_of_data_with_floor() {
        // 20 Mbit/s: 2 500 000 B/s >> 10 = 2 441 B: one segment, floor 2.
        assert_eq!(autosize_segments(20_000_000, 40 * MS, MSS, 2), 2);
        // 100 Mbit/s: 12 207 B → 8 segments.
        assert_eq!(autosize_segments(100_000_000, 40 * MS, MSS, 2), 8);
        // BBR below 1.2 Mbit/s asks for a floor of 1.
        assert_eq!(autosize_segments(1_000_000, 40 * MS, MSS, 1), 1);
        // 10 Gbit/s: capped at 64 KB (45 segments).
        assert_eq!(autosize_segments(10_000_000_000, 40 * MS, MSS, 2), 45);
    }

    #[test]
    fn test_autosize_small_min_rtt_adds_gso_share() {
        // min RTT 1 ms: 1000 µs >> 9 = 1, so 64 KB >> 1 = 32 KB more.
        let s = autosize_segments(20_000_000, MS, MSS, 2);
        assert_eq!(s, ((2_441 + 32_768) / 1448) as u32);
        // 20 ms: 20 000 >> 9 = 39 ≥ 32, nothing added; no sample yet: nothing added.
        assert_eq!(autosize_segments(20_000_000, 20 * MS, MSS, 2), 2);
        assert_eq!(autosize_segments(20_000_000, 0, MSS, 2), 2);
    }

    #[test]
    fn test_segment_mode_one_segment_per_slot() {
        let mut p = Pacer::new(PacingQuantumCfg::Segment);
        // 1000 bytes at 8 Mbit/s = 1 ms.
        let next = p.on_send(5 * MS, 0, 0, 1000, false, 8_000_000, || 4);
        assert_eq!(next, 6 * MS);
        assert!(!p.gate_open(5 * MS, next));
        assert!(!p.may_send(5 * MS, next, 1000, false));
    }

    /// Send `n` segments of new data at `now` from `off` while the pacer allows.
    fn burst(p: &mut Pacer, now: Nanos, mut next: Nanos, off: &mut u64, q: u32) -> (u32, Nanos) {
        let mut sent = 0;
        while p.gate_open(now, next) && p.may_send(now, next, *off, false) {
            next = p.on_send(now, next, *off, 1000, false, 8_000_000, || q);
            *off += 1000;
            sent += 1;
            assert!(sent < 100);
        }
        (sent, next)
    }

    #[test]
    fn test_linux_buffer_of_quantum_then_wait_its_length() {
        let mut p = Pacer::new(PacingQuantumCfg::LinuxTsoAutosize);
        p.data_segs_out = 100;
        let mut off = 0;
        let (sent, next) = burst(&mut p, 10 * MS, 10 * MS, &mut off, 3);
        assert_eq!(sent, 3, "one buffer of 3 segments leaves at once");
        assert_eq!(
            next,
            13 * MS,
            "the next slot is 3 ms (3000 B at 8 Mbit/s) later"
        );
        // Before then nothing leaves; at the slot, the next buffer.
        assert!(!p.gate_open(12 * MS, next));
        let (sent, next) = burst(&mut p, 13 * MS, next, &mut off, 3);
        assert_eq!((sent, next), (3, 16 * MS));
    }

    #[test]
    fn test_linux_buffer_holds_one_kind_and_contiguous_bytes() {
        let mut p = Pacer::new(PacingQuantumCfg::LinuxTsoAutosize);
        p.data_segs_out = 100;
        let now = 10 * MS;
        let next = p.on_send(now, now, 5000, 1000, true, 8_000_000, || 4);
        // A retransmission of the next bytes continues the buffer; new data or a gap does not.
        assert!(p.may_send(now, next, 6000, true));
        assert!(!p.may_send(now, next, 6000, false));
        assert!(!p.may_send(now, next, 9000, true));
        assert!(
            p.gate_open(now, next),
            "the buffer has room: the gate is open"
        );
    }

    #[test]
    fn test_linux_late_slot_shortens_the_gap_by_at_most_half() {
        let mut p = Pacer::new(PacingQuantumCfg::LinuxTsoAutosize);
        p.data_segs_out = 100;
        // The slot was due at 10 ms and taken at 10.4 ms: 2 ms of gap less 0.4 ms.
        let now = 10 * MS + 400_000;
        let next = p.on_send(now, 10 * MS, 0, 1000, false, 4_000_000, || 1);
        assert_eq!(next, now + 2 * MS - 400_000);
        // 5 ms late: at most half of the 2 ms gap is forgiven.
        let now = 20 * MS;
        let next = p.on_send(now, 15 * MS, 1000, 1000, false, 4_000_000, || 1);
        assert_eq!(next, now + MS);
    }

    #[test]
    fn test_linux_first_ten_segments_unpaced() {
        let mut p = Pacer::new(PacingQuantumCfg::LinuxTsoAutosize);
        let mut off = 0;
        // Buffers of 2: the first nine segments add no departure time, so buffers follow one
        // another at once; the 10th segment's buffer (segments 9 and 10, 2000 bytes at
        // 8 Mbit/s) is the first paced, and the 11th waits for it.
        let (sent, next) = burst(&mut p, MS, MS, &mut off, 2);
        assert_eq!((sent, next), (10, 3 * MS));
    }
}
