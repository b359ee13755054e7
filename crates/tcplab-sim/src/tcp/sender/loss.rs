//! Loss detection of the sending end beyond duplicate ACKs, sans I/O: SACK-based marking
//! (RFC 6675 IsLost, or FACK for rate-halving), RACK (RFC 8985 §6) and the tail loss probe
//! (TLP, RFC 8985 §7).
//!
//! Owns the RACK state (send time, end and RTT of the most recently sent delivered segment),
//! the reordering window, when the probe timeout (PTO) is due and what the probe sends. Marks
//! lost data on the [`Scoreboard`]; returns deadlines that [`super::TcpSender`] keeps in its
//! [`super::timers::Timers`] and sends the probe itself.

use crate::tcp::recovery::Mode;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::{AckResult, Scoreboard};
use crate::time::Nanos;

/// Worst-case delayed-ACK time added to the PTO when one segment is in flight (RFC 8985 §7.2).
pub const WC_DEL_ACK: Nanos = 200_000_000;

/// Loss marking from SACK information: RFC 6675 IsLost, or FACK for rate-halving, which in
/// the Recovery state (`in_recovery`: fast recovery, not the loss state after a timeout) also
/// finds lost retransmissions ([`Scoreboard::mark_lost_retransmits`]); in FreeBSD's SACK
/// recovery every hole below the highest SACK ([`Scoreboard::mark_holes_lost`]). Returns the bytes newly
/// marked lost (or made eligible again).
#[inline]
pub fn mark_lost_by_sack(sb: &mut Scoreboard, mode: Mode, in_recovery: bool) -> u64 {
    if mode.uses_fack() {
        let lost = sb.mark_lost_fack();
        if in_recovery {
            return lost + sb.mark_lost_retransmits();
        }
        lost
    } else if mode == Mode::FreebsdSack && in_recovery {
        // FreeBSD's SACK recovery: `tcp_sack_output` resends any hole below the highest SACKed
        // byte, and the pipe of its duplicate-ACK rule leaves out every hole byte not yet
        // resent (`tcp_sacked_bytes`); sources at `Mode::FreebsdSack`.
        sb.mark_lost_by_sack() + sb.mark_holes_lost()
    } else {
        sb.mark_lost_by_sack()
    }
}

/// RACK-TLP state (RFC 8985).
#[derive(Clone, Copy, Debug, Default)]
pub struct RackTlp {
    /// Send time and end of the most recently sent segment known delivered (RACK.xmit_ts,
    /// RACK.end_seq) and its RTT (RACK.rtt).
    pub xmit: Nanos,
    pub end: u64,
    pub rtt: Nanos,
    /// A probe is outstanding (TLP.is_retrans-like: no second probe until an ACK advances).
    pub tlp_out: bool,
    /// An original transmission was delivered below the highest SACKed sequence
    /// (RACK.reordering_seen, RFC 8985 §6.2 step 2; Linux `tp->reord_seen`).
    pub reordering_seen: bool,
}

/// What the reordering window depends on besides the RTT (RFC 8985 §6.2 step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReoState {
    /// In fast recovery or in the loss state after a timeout (Linux `icsk_ca_state` ≥
    /// `TCP_CA_Recovery`).
    pub recovering: bool,
    /// At least DupThresh segments are SACKed (Linux `sacked_out ≥ tp->reordering`).
    pub dupthresh_sacked: bool,
}

/// What the tail loss probe sends (RFC 8985 §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A new segment of this many bytes.
    New(u32),
    /// The last segment sent, again.
    Retransmit,
}

impl RackTlp {
    /// RFC 8985 §6.2: remember the newest delivered transmission of this ACK.
    pub fn on_delivered(&mut self, res: &AckResult, now: Nanos) {
        if let Some(x) = res.rtt_xmit {
            if (x, res.rtt_end) > (self.xmit, self.end) {
                self.xmit = x;
                self.end = res.rtt_end;
                self.rtt = now.saturating_sub(x);
            }
        }
    }

    /// RFC 8985 §6.2 step 2: an ACK that newly delivers an original transmission (never
    /// retransmitted) ending below the highest SACKed sequence shows reordering. Judged on the
    /// newest such transmission of the ACK (`res.rtt_end`), against `high_sacked` after the
    /// ACK: a late original fills a hole below data already SACKed, and a run of originals
    /// SACKed in order ends at the highest SACKed sequence itself. (The simulator's links never
    /// reorder, so on its paths this stays false; it matters for a trace-driven or reordering
    /// path.)
    pub fn note_reordering(&mut self, res: &AckResult, high_sacked: u64) {
        if res.rtt_xmit.is_some() && res.rtt_end < high_sacked {
            self.reordering_seen = true;
        }
    }

    /// The reordering window (RFC 8985 §6.2 step 4, `RACK_update_reo_wnd`; Linux
    /// `tcp_rack_reo_wnd`, "tcp: support DUPACK threshold in RACK", 4.18): while no reordering
    /// has been seen, zero in recovery and once DupThresh segments are SACKed; otherwise
    /// min_RTT/4, at most SRTT (the D-SACK-driven growth of the multiplier is not modelled).
    pub fn reo_wnd(&self, rtt: &RttEstimator, st: ReoState) -> Nanos {
        if !self.reordering_seen && (st.recovering || st.dupthresh_sacked) {
            return 0;
        }
        (rtt.min_rtt / 4).min(rtt.srtt)
    }

    /// Run RACK loss detection now. Returns bytes newly marked lost and the reordering timer's
    /// deadline (None: no timer).
    pub fn detect(
        &self,
        sb: &mut Scoreboard,
        rtt: &RttEstimator,
        st: ReoState,
        now: Nanos,
    ) -> (u64, Option<Nanos>) {
        if self.xmit == 0 && self.rtt == 0 {
            return (0, None);
        }
        let reo = self.reo_wnd(rtt, st);
        let o = sb.rack_detect(now, (self.xmit, self.end), self.rtt, reo);
        (o.newly_lost, o.timeout)
    }

    /// The probe timeout (RFC 8985 §7.2): 2·SRTT, plus the worst-case delayed-ACK time when
    /// one segment is in flight, never beyond the RTO. `current` is the armed deadline,
    /// returned unchanged when there is no RTT sample yet.
    #[allow(clippy::too_many_arguments)]
    pub fn tlp_deadline(
        &self,
        enabled: bool,
        in_recovery: bool,
        sb: &Scoreboard,
        rtt: &RttEstimator,
        rto_deadline: Option<Nanos>,
        current: Option<Nanos>,
        now: Nanos,
    ) -> Option<Nanos> {
        if !enabled || in_recovery || self.tlp_out || sb.is_empty() {
            return None;
        }
        if !rtt.has_sample() {
            return current;
        }
        let mut pto = 2 * rtt.srtt;
        if sb.len() == 1 {
            pto += WC_DEL_ACK;
        }
        // Never later than the retransmission timer would fire (Linux `tcp_rto_delta_us`).
        let rto_left = rto_deadline.map_or(rtt.rto(), |d| d.saturating_sub(now));
        let pto = pto.min(rtt.rto()).min(rto_left);
        Some(now + pto.max(1))
    }

    /// The probe (RFC 8985 §7.3): one new segment if the receiver's window allows (a full one,
    /// or the last of the data), else the last segment again.
    pub fn probe(smss: u32, app_room: u64, rwnd_room: u64) -> Probe {
        let len = (smss as u64).min(app_room).min(rwnd_room);
        if len == smss as u64 || (len > 0 && len == app_room) {
            Probe::New(len as u32)
        } else {
            Probe::Retransmit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn rtt_with(srtt: Nanos) -> RttEstimator {
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, MS, false);
        r.on_sample(srtt);
        r
    }

    fn sent(n: u64, at: Nanos) -> Scoreboard {
        let mut sb = Scoreboard::new(3);
        for i in 0..n {
            sb.on_send_new(i * 1000, 1000, at + i);
        }
        sb
    }

    #[test]
    fn test_tlp_pto_two_srtt() {
        let t = RackTlp::default();
        let sb = sent(3, 0);
        let r = rtt_with(100 * MS);
        let d = t.tlp_deadline(true, false, &sb, &r, None, None, 1000 * MS);
        assert_eq!(d, Some(1000 * MS + 200 * MS));
    }

    #[test]
    fn test_tlp_pto_one_segment_adds_delayed_ack() {
        let t = RackTlp::default();
        let sb = sent(1, 0);
        let r = rtt_with(100 * MS);
        let d = t.tlp_deadline(true, false, &sb, &r, None, None, 0);
        // 2·SRTT + 200 ms = 400 ms, but the RTO (SRTT + 4·RTTVAR = 300 ms) caps it.
        assert_eq!(d, Some(r.rto().min(400 * MS)));
        assert!(r.rto() < 400 * MS);
    }

    #[test]
    fn test_tlp_pto_capped_by_rto_left() {
        let t = RackTlp::default();
        let sb = sent(3, 0);
        let r = rtt_with(100 * MS);
        // The retransmission timer fires in 50 ms: the probe must not come later.
        let d = t.tlp_deadline(true, false, &sb, &r, Some(1050 * MS), None, 1000 * MS);
        assert_eq!(d, Some(1050 * MS));
        // An overdue RTO still leaves the probe at least 1 ns ahead.
        let d = t.tlp_deadline(true, false, &sb, &r, Some(900 * MS), None, 1000 * MS);
        assert_eq!(d, Some(1000 * MS + 1));
    }

    #[test]
    fn test_tlp_not_armed() {
        let sb = sent(3, 0);
        let r = rtt_with(100 * MS);
        let t = RackTlp::default();
        let cur = Some(5);
        assert_eq!(t.tlp_deadline(false, false, &sb, &r, None, cur, 0), None);
        assert_eq!(t.tlp_deadline(true, true, &sb, &r, None, cur, 0), None);
        assert_eq!(
            t.tlp_deadline(true, false, &Scoreboard::new(3), &r, None, cur, 0),
            None
        );
        let out = RackTlp { tlp_out: true, ..t };
        assert_eq!(out.tlp_deadline(true, false, &sb, &r, None, cur, 0), None);
        // No RTT sample yet: the armed deadline stays.
        let fresh = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, MS, false);
        assert_eq!(t.tlp_deadline(true, false, &sb, &fresh, None, cur, 0), cur);
    }

    #[test]
    fn test_tlp_probe_new_or_retransmit() {
        assert_eq!(RackTlp::probe(1000, u64::MAX, 5000), Probe::New(1000));
        assert_eq!(
            RackTlp::probe(1000, 300, 5000),
            Probe::New(300),
            "the end of the data"
        );
        assert_eq!(RackTlp::probe(1000, u64::MAX, 500), Probe::Retransmit);
        assert_eq!(RackTlp::probe(1000, 0, 5000), Probe::Retransmit);
    }

    #[test]
    fn test_rack_on_delivered_keeps_newest() {
        let mut t = RackTlp::default();
        let res = |x: Nanos, end: u64| AckResult {
            rtt_xmit: Some(x),
            rtt_end: end,
            ..AckResult::default()
        };
        t.on_delivered(&res(10 * MS, 2000), 60 * MS);
        assert_eq!((t.xmit, t.end, t.rtt), (10 * MS, 2000, 50 * MS));
        t.on_delivered(&res(5 * MS, 9000), 70 * MS); // sent earlier: ignored
        assert_eq!((t.xmit, t.end), (10 * MS, 2000));
        t.on_delivered(&res(10 * MS, 3000), 80 * MS); // same time, later end
        assert_eq!((t.xmit, t.end, t.rtt), (10 * MS, 3000, 70 * MS));
        t.on_delivered(&AckResult::default(), 90 * MS); // nothing Karn-safe delivered
        assert_eq!(t.end, 3000);
    }

    /// Not recovering, fewer than DupThresh segments SACKed.
    const OPEN: ReoState = ReoState {
        recovering: false,
        dupthresh_sacked: false,
    };

    #[test]
    fn test_reo_wnd_zero_in_recovery_or_at_dupthresh_until_reordering_is_seen() {
        let r = rtt_with(100 * MS);
        let quarter = r.min_rtt / 4;
        let mut t = RackTlp::default();
        assert_eq!(t.reo_wnd(&r, OPEN), quarter);
        let rec = ReoState {
            recovering: true,
            ..OPEN
        };
        let dup = ReoState {
            dupthresh_sacked: true,
            ..OPEN
        };
        assert_eq!(t.reo_wnd(&r, rec), 0);
        assert_eq!(t.reo_wnd(&r, dup), 0);
        t.reordering_seen = true;
        assert_eq!(t.reo_wnd(&r, rec), quarter);
        assert_eq!(t.reo_wnd(&r, dup), quarter);
    }

    #[test]
    fn test_reordering_seen_when_an_original_fills_a_hole_below_sacked_data() {
        let mut sb = sent(4, 0);
        let mut t = RackTlp::default();
        // Segments 2 and 3 SACKed in order: they end at the highest SACKed sequence.
        let mut res = AckResult::default();
        sb.on_sack_block(2000, 4000, 100 * MS, &mut res);
        t.note_reordering(&res, sb.high_sacked);
        assert!(!t.reordering_seen);
        // The original of segment 1 (never retransmitted) arrives late and is SACKed.
        let mut res = AckResult::default();
        sb.on_sack_block(1000, 2000, 101 * MS, &mut res);
        t.note_reordering(&res, sb.high_sacked);
        assert!(t.reordering_seen);
        // A retransmission filling a hole is not reordering: 5 sent, the last 3 SACKed, the
        // first two marked lost (RFC 6675 IsLost) and retransmitted, then SACKed.
        let mut sb = sent(5, 0);
        let mut t = RackTlp::default();
        let mut res = AckResult::default();
        sb.on_sack_block(2000, 5000, 100 * MS, &mut res);
        t.note_reordering(&res, sb.high_sacked);
        assert_eq!(sb.mark_lost_by_sack(), 2000);
        while let Some(i) = sb.next_lost() {
            sb.on_retransmit(i, 110 * MS);
        }
        let mut res = AckResult::default();
        sb.on_sack_block(1000, 2000, 210 * MS, &mut res);
        assert!(res.bytes_sacked > 0 && res.rtt_xmit.is_none());
        t.note_reordering(&res, sb.high_sacked);
        assert!(!t.reordering_seen);
    }

    #[test]
    fn test_rack_detect_marks_older_segments_lost() {
        let r = rtt_with(100 * MS);
        let mut sb = sent(3, 0);
        let t = RackTlp::default();
        assert_eq!(
            t.detect(&mut sb, &r, OPEN, 500 * MS),
            (0, None),
            "nothing delivered yet"
        );
        // The third segment (sent at 2 ns) is SACKed 100 ms later.
        let mut res = AckResult::default();
        sb.on_sack_block(2000, 3000, 100 * MS, &mut res);
        let mut t = RackTlp::default();
        t.on_delivered(&res, 100 * MS);
        // Right away the older ones are within the reordering window: a timer, no loss.
        let (lost, timer) = t.detect(&mut sb, &r, OPEN, 100 * MS);
        assert_eq!(lost, 0);
        assert!(timer.is_some_and(|d| d > 100 * MS));
        // RACK.rtt + reo_wnd after its transmission each is lost (the first was sent 1 ns
        // before the second).
        let (lost, next) = t.detect(&mut sb, &r, OPEN, timer.unwrap());
        assert_eq!(lost, 1000);
        assert_eq!(next, Some(timer.unwrap() + 1));
        let (lost, next) = t.detect(&mut sb, &r, OPEN, timer.unwrap() + 1);
        assert_eq!((lost, next), (1000, None));
    }
}
