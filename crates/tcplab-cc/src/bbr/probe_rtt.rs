//! RTprop and PROBE_RTT (Cardwell et al. 2016: "if RTprop hasn't been updated for 10 s, BBR
//! enters ProbeRTT, which reduces the inflight to four packets for at least one round trip";
//! L: net/ipv4/tcp_bbr.c `bbr_update_min_rtt`).
//!
//! * RTprop: each ACK's RTT sample replaces the estimate if it is not larger, or if the estimate
//!   is older than 10 s (`min_rtt_win_sec`).
//! * When the estimate has expired (and the flow is not restarting from idle), PROBE_RTT starts:
//!   cwnd is saved and capped at 4 packets (`mod.rs`), pacing and cwnd gains are 1. Once
//!   inflight is ≤ 4 packets a 200 ms timer and a new round start; PROBE_RTT ends when both
//!   are over: the RTprop stamp is refreshed, cwnd restored to at least the saved value, and the
//!   flow returns to PROBE_BW (or STARTUP if the pipe was never found full).
//! * While in PROBE_RTT, Linux marks the connection app-limited (`tp->app_limited =
//!   delivered + inflight`) so the low delivery rates of the dip are not taken as bandwidth
//!   samples. The stack's rate sampler cannot be told, so the mark is applied here: samples
//!   count as app-limited until the data in flight at the last PROBE_RTT ACK is delivered and
//!   then for the packets sent up to that moment (`total_delivered ≤ snd_nxt` at that moment),
//!   which is what the per-packet flag amounts to for in-order delivery.

use super::{Bbr, CaState, Mode, CWND_MIN_SEGMENTS};
use crate::{AckEvent, Nanos};

impl Bbr {
    /// Linux `bbr_update_min_rtt` (`acked`: data newly delivered by this ACK).
    pub(super) fn update_min_rtt(&mut self, ev: &AckEvent, acked: u64) {
        let expired = ev.now > self.min_rtt_stamp.saturating_add(self.p.min_rtt_window);
        if let Some(rtt) = ev.rtt_sample {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = ev.now;
            }
        }
        if self.p.probe_rtt_duration > 0
            && expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // "Ignore low rate samples during this mode."
            self.app_limited_until_delivered =
                Some(self.rounds.delivered().saturating_add(ev.in_flight).max(1));
            self.app_limited_snd_end = u64::MAX;
            // "Maintain min packets in flight for max(200 ms, 1 round)."
            if self.probe_rtt_done_stamp.is_none() && ev.in_flight <= CWND_MIN_SEGMENTS * self.mss {
                self.probe_rtt_done_stamp = Some(ev.now.saturating_add(self.p.probe_rtt_duration));
                self.probe_rtt_round_done = false;
                self.start_round();
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(ev.now);
                }
            }
        }
        // "Restart after idle ends only once we process a new S/ACK for data."
        if acked > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_check_probe_rtt_done`.
    pub(super) fn check_probe_rtt_done(&mut self, now: Nanos) {
        if self.probe_rtt_done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now; // "wait a while until PROBE_RTT"
        let c = self.win.cwnd().max(self.prior_cwnd);
        self.win.set_cwnd(c);
        self.reset_mode(now);
    }

    /// Clears the PROBE_RTT app-limited mark once the data it covers is delivered.
    pub(super) fn update_app_limited_mark(&mut self) {
        if let Some(m) = self.app_limited_until_delivered {
            if self.rounds.delivered() > m {
                self.app_limited_until_delivered = None;
                self.app_limited_snd_end = self.rounds.snd_nxt();
            }
        }
    }

    /// Linux `bbr_save_cwnd`: remember the last good cwnd before recovery or PROBE_RTT cut it.
    pub(super) fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.win.cwnd();
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.win.cwnd());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{probe_bw, probe_bw_with};
    use super::super::BbrParams;
    use super::*;
    use crate::{CongestionControl, MS, SEC};

    #[test]
    fn test_probe_rtt_entered_when_rtprop_is_ten_seconds_old() {
        // RTprop 100 ms learnt at the start; then every sample is 120 ms. PROBE_RTT starts on
        // the first ACK more than 10 s after the estimate was taken.
        let (mut b, mut s) = probe_bw(2);
        let stamp = b.min_rtt_stamp;
        s.in_flight_segs = Some(100);
        // Rounds of 120 ms with ACKs 6 ms apart: all of them before the expiry stay in
        // PROBE_BW; the round containing it enters PROBE_RTT.
        while s.now + 120 * MS <= stamp + 10 * SEC {
            s.round(&mut b, 8e6, 120 * MS);
            assert_eq!(b.mode(), Mode::ProbeBw, "at {} ms", s.now / MS);
        }
        s.round(&mut b, 8e6, 120 * MS);
        assert_eq!(b.mode(), Mode::ProbeRtt);
        assert_eq!(b.cwnd(), 4 * 1000);
        assert_eq!((b.pacing_gain(), b.cwnd_gain()), (1.0, 1.0));
        // The expired estimate was replaced by the newest sample.
        assert_eq!(b.rtprop(), Some(120 * MS));
    }

    #[test]
    fn test_probe_rtt_lasts_200ms_and_a_round_then_restores() {
        let (mut b, mut s) = probe_bw(2);
        s.in_flight_segs = Some(100);
        let cwnd_before = b.cwnd();
        while b.mode() != Mode::ProbeRtt {
            s.round(&mut b, 8e6, 120 * MS);
        }
        let entered = s.now;
        // Inflight falls to 4 packets: the 200 ms timer starts.
        s.in_flight_segs = Some(4);
        let mut left = None;
        for _ in 0..10 {
            s.round_len(&mut b, 8e6, 50 * MS, 50 * MS);
            assert!(b.cwnd() <= 4 * 1000 || b.mode() != Mode::ProbeRtt);
            if b.mode() != Mode::ProbeRtt {
                left = Some(s.now);
                break;
            }
        }
        let left = left.expect("PROBE_RTT ended");
        let dur = left - entered;
        assert!((200 * MS..=350 * MS).contains(&dur), "{} ms", dur / MS);
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert!(b.cwnd() >= cwnd_before.min(b.cwnd()));
        assert!(b.min_rtt_stamp > entered, "RTprop stamp refreshed");
    }

    #[test]
    fn test_samples_at_or_below_rtprop_keep_it_fresh() {
        let (mut b, mut s) = probe_bw(2);
        s.in_flight_segs = Some(100);
        for _ in 0..150 {
            s.round(&mut b, 8e6, 100 * MS);
            assert_ne!(b.mode(), Mode::ProbeRtt);
        }
        assert!(s.now > 15 * SEC);
    }

    #[test]
    fn test_probe_rtt_rate_samples_are_ignored() {
        // With a 2-round BtlBw window, accepted low samples would replace the estimate within
        // two rounds; the dip's samples are marked app-limited and leave it alone.
        let (mut b, mut s) = probe_bw_with(
            2,
            BbrParams {
                bw_window_rounds: 2,
                ..BbrParams::default()
            },
        );
        s.in_flight_segs = Some(100);
        while b.mode() != Mode::ProbeRtt {
            s.round(&mut b, 8e6, 120 * MS);
        }
        let bw = b.btlbw();
        assert_eq!(bw, 8e6);
        s.in_flight_segs = Some(4);
        let mut rounds = 0;
        while b.mode() == Mode::ProbeRtt {
            s.round_len(&mut b, 0.5e6, 50 * MS, 50 * MS);
            rounds += 1;
        }
        assert!(rounds >= 4, "{rounds}");
        assert_eq!(b.btlbw(), bw);
    }
}
