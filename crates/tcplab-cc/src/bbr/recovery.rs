//! Loss handling (Cardwell et al. 2016; L: net/ipv4/tcp_bbr.c `bbr_set_cwnd_to_recover_or_
//! restore`, `bbr_ssthresh`, `bbr_set_state`). BBR does not reduce its model on loss:
//!
//! * `ssthresh` is unchanged; entering recovery saves cwnd (`bbr_save_cwnd`).
//! * Every ACK first deducts the data it newly marked lost (`rs->losses`, the stack's
//!   [`crate::AckEvent::bytes_lost`]), leaving at least one packet; packet conservation and the
//!   normal rule below then work from that.
//! * First round of recovery: packet conservation — `cwnd = inflight + acked` on the first
//!   recovery ACK ("cut unused cwnd"), then `cwnd = max(cwnd, inflight + acked)`: one packet
//!   sent per packet delivered. A new round starts at the entry; conservation ends at the next
//!   round start (`update_bw`).
//! * Later recovery rounds: the normal rule, `cwnd = min(cwnd + acked, target)` — "slow-start"
//!   back up to the target.
//! * Leaving recovery (or the loss state of an RTO): `cwnd = max(cwnd, saved cwnd)`.
//! * RTO (`TCP_CA_Loss`): cwnd saved, then 1 packet (`tcp_enter_loss`: inflight + 1), the
//!   full-pipe counter restarts (`full_bw = 0`); the loss state lasts until the data
//!   outstanding at the timeout is acknowledged.
//!
//! The controller governs the window in recovery itself (`governs_recovery()` is true): the
//! stack's recovery part only chooses what to send.

use super::{Bbr, CaState};
use crate::{AckEvent, RtoEvent};

impl Bbr {
    /// Linux `bbr_set_cwnd_to_recover_or_restore`: returns the cwnd to continue from and
    /// whether packet conservation decided it.
    pub(super) fn recover_or_restore(&mut self, ev: &AckEvent, acked: u64) -> (u64, bool) {
        let mut cwnd = self.win.cwnd();
        // "An ACK for P pkts should release at most 2*P packets": first deduct the data this
        // ACK newly marked lost (`rs->losses`), at least 1 packet left; the rest of
        // `bbr_set_cwnd` then slow-starts back towards the target (L: net/ipv4/tcp_bbr.c
        // `bbr_set_cwnd_to_recover_or_restore`).
        if ev.bytes_lost > 0 {
            cwnd = cwnd.saturating_sub(ev.bytes_lost).max(self.mss);
        }
        let (state, prev) = (self.ca_state, self.prev_ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // "Starting 1st round of Recovery, so do packet conservation."
            self.packet_conservation = true;
            self.start_round();
            cwnd = ev.in_flight.saturating_add(acked);
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // "Exiting loss recovery; restore cwnd saved before recovery."
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            (cwnd.max(ev.in_flight.saturating_add(acked)), true)
        } else {
            (cwnd, false)
        }
    }

    /// A retransmission timeout (`tcp_enter_loss` + `bbr_set_state(TCP_CA_Loss)`).
    pub(super) fn on_timeout(&mut self, ev: &RtoEvent) {
        if ev.sets_ssthresh() {
            // bbr_ssthresh (bbr_save_cwnd) runs where tcp_enter_loss calls ssthresh(): the
            // stack's gate, RtoEvent::sets_ssthresh.
            self.save_cwnd();
        }
        // Everything outstanding is presumed lost: cwnd = inflight + 1 = 1 packet.
        self.win.set_cwnd(self.mss);
        self.ca_state = CaState::Loss;
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.loss_until = Some(self.rounds.snd_nxt());
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{probe_bw, Synth};
    use super::Bbr;
    use crate::{AckEvent, CongestionControl, CongestionEvent, RateSample, RtoEvent, MS};

    fn recovery_ack(s: &mut Synth, in_flight_segs: u64, acked_segs: u64) -> AckEvent {
        s.delivered += acked_segs * 1000;
        s.now += MS;
        AckEvent {
            now: s.now,
            bytes_acked: acked_segs * 1000,
            packets_acked: acked_segs as u32,
            packets_delivered: acked_segs as u32,
            prior_in_flight: (in_flight_segs + acked_segs) * 1000,
            in_flight: in_flight_segs * 1000,
            rtt_sample: Some(100 * MS),
            srtt: 100 * MS,
            min_rtt: 100 * MS,
            in_recovery: true,
            rate: Some(RateSample {
                delivery_rate_bps: 8e6,
                delivered: 100_000,
                interval: 100 * MS,
                is_app_limited: false,
                prior_in_flight: (in_flight_segs + acked_segs) * 1000,
                total_delivered: s.delivered,
            }),
            mss: 1000,
            ..Default::default()
        }
    }

    /// PROBE_BW with 100 packets out, one loss: recovery entered and its first ACK taken
    /// (packet conservation: cwnd = inflight 80 + acked 1).
    fn in_recovery_after_first_ack() -> (Bbr, Synth) {
        let (mut b, mut s) = probe_bw(2);
        s.in_flight_segs = Some(100);
        s.round(&mut b, 8e6, 100 * MS);
        s.send(&mut b, 100);
        b.on_congestion_event(&CongestionEvent {
            in_flight: 100_000,
            lost_bytes: 1000,
            mss: 1000,
            ..Default::default()
        });
        b.on_ack(&recovery_ack(&mut s, 80, 1));
        assert_eq!(b.cwnd(), 81_000, "packet conservation on entry");
        (b, s)
    }

    #[test]
    fn test_loss_keeps_ssthresh_and_conserves_packets_in_first_round() {
        let (mut b, mut s) = probe_bw(2);
        s.in_flight_segs = Some(100);
        s.round(&mut b, 8e6, 100 * MS);
        let cwnd0 = b.cwnd();
        let ss0 = b.ssthresh();
        // 100 packets outstanding when the loss is detected.
        s.send(&mut b, 100);
        b.on_congestion_event(&CongestionEvent {
            in_flight: 100_000,
            lost_bytes: 10_000,
            mss: 1000,
            ..Default::default()
        });
        assert_eq!(b.ssthresh(), ss0, "BBR leaves ssthresh alone");
        assert!(b.governs_recovery());
        // First recovery ACK: cwnd = inflight + acked = 80 + 1.
        b.on_ack(&recovery_ack(&mut s, 80, 1));
        assert_eq!(b.cwnd(), 81_000);
        // Same round: never below inflight + acked, and no growth beyond it.
        b.on_ack(&recovery_ack(&mut s, 79, 1));
        assert_eq!(b.cwnd(), 81_000);
        b.on_ack(&recovery_ack(&mut s, 85, 1));
        assert_eq!(b.cwnd(), 86_000);
        // Round over once data sent after the entry is delivered: the 97 segments left of the
        // old flight and one new one. Then cwnd grows by what is delivered (up to the target).
        let mark = s.sent;
        s.send(&mut b, 5);
        let rest = (mark - s.delivered) / 1000 + 1;
        let before = b.cwnd();
        b.on_ack(&recovery_ack(&mut s, 80, rest));
        let target = b.inflight_target(b.btlbw(), 2.0);
        assert_eq!(b.cwnd(), (before + rest * 1000).min(target));
        assert!(b.cwnd() > 81_000);
        // Recovery ends: cwnd back to (at least) the saved value, within the target.
        b.on_recovery_exit(s.now);
        let mut ev = recovery_ack(&mut s, 80, 1);
        ev.in_recovery = false;
        b.on_ack(&ev);
        assert_eq!(b.cwnd(), cwnd0.min(target).max(b.cwnd()));
        assert!(b.cwnd() >= cwnd0.min(target), "{} vs {cwnd0}", b.cwnd());
    }

    #[test]
    fn test_episode_started_on_the_ack_ending_the_last_keeps_cwnd() {
        // Linux `tcp_fastretrans_alert` ends a recovery and, when losses are still marked
        // (`lost_out`), starts the next on the same ACK: `bbr_main` then sees Recovery →
        // Recovery — neither the restore of the saved cwnd nor a new packet conservation. With
        // an ACK in the Open state between the two, both happen.
        let run = |open_ack_between: bool| {
            let (mut b, mut s) = in_recovery_after_first_ack();
            // The round ends (data sent after the entry delivered): cwnd regrows.
            let mark = s.sent;
            s.send(&mut b, 5);
            let rest = (mark - s.delivered) / 1000 + 1;
            b.on_ack(&recovery_ack(&mut s, 80, rest));
            for _ in 0..40 {
                b.on_ack(&recovery_ack(&mut s, 80, 2));
            }
            let grown = b.cwnd();
            assert!(grown > 150_000, "{grown}");
            b.on_recovery_exit(s.now);
            if open_ack_between {
                let mut ev = recovery_ack(&mut s, 80, 1);
                ev.in_recovery = false;
                b.on_ack(&ev);
            }
            b.on_congestion_event(&CongestionEvent {
                in_flight: 80_000,
                lost_bytes: 1000,
                mss: 1000,
                ..Default::default()
            });
            let before = b.cwnd();
            b.on_ack(&recovery_ack(&mut s, 60, 1));
            (grown, before, b.cwnd())
        };
        let (grown, before, after) = run(false);
        assert_eq!(before, grown);
        // The normal rule goes on (cwnd + acked, up to the target): no cut to inflight + acked.
        assert!(
            (grown..=grown + 1000).contains(&after),
            "no conservation without an Open ACK between episodes: {after} vs {grown}"
        );
        let (_, _, after) = run(true);
        assert_eq!(
            after, 61_000,
            "a new episode from Open conserves packets again"
        );
    }

    #[test]
    fn test_losses_marked_by_an_ack_are_deducted_first() {
        // Linux `bbr_set_cwnd_to_recover_or_restore`: cwnd − losses (≥ 1 packet), then the
        // rest. After the conservation round: cwnd − lost + acked (below the target).
        let (mut b, mut s) = in_recovery_after_first_ack();
        // In conservation the floor inflight + acked still holds.
        let mut ev = recovery_ack(&mut s, 70, 1);
        ev.bytes_lost = 30_000;
        b.on_ack(&ev);
        assert_eq!(b.cwnd(), 71_000, "max(81 − 30, 70 + 1)");
        // The round ends; then an ACK delivering 2 and marking 5 lost: 71 − 5 + 2 (+ the
        // round-ending ACK's own growth first).
        let mark = s.sent;
        s.send(&mut b, 5);
        let rest = (mark - s.delivered) / 1000 + 1;
        b.on_ack(&recovery_ack(&mut s, 60, rest));
        let before = b.cwnd();
        let mut ev = recovery_ack(&mut s, 60, 2);
        ev.bytes_lost = 5000;
        b.on_ack(&ev);
        assert_eq!(b.cwnd(), before - 5000 + 2000);
        // Never below one packet before the 4-packet floor of the normal rule.
        let mut ev = recovery_ack(&mut s, 1, 1);
        ev.bytes_lost = 10_000_000;
        b.on_ack(&ev);
        assert_eq!(b.cwnd(), 4000);
    }

    #[test]
    fn test_rto_collapses_to_one_packet_then_restores_after_loss_state() {
        let (mut b, mut s) = probe_bw(2);
        s.in_flight_segs = Some(100);
        s.round(&mut b, 8e6, 100 * MS);
        let cwnd0 = b.cwnd();
        s.send(&mut b, 100);
        b.on_rto(&RtoEvent {
            in_flight: 100_000,
            backoff_count: 1,
            mss: 1000,
            ..Default::default()
        });
        assert_eq!(b.cwnd(), 1000);
        // ACKs of retransmissions grow cwnd by the data delivered.
        let mut ev = recovery_ack(&mut s, 1, 1);
        ev.in_recovery = false;
        b.on_ack(&ev);
        assert_eq!(b.cwnd(), 4000, "never below 4 packets outside PROBE_RTT");
        assert!(b.cwnd() < cwnd0);
        // The data outstanding at the timeout acknowledged: loss state over, cwnd restored.
        let mut ev = recovery_ack(&mut s, 0, 99);
        ev.in_recovery = false;
        b.on_ack(&ev);
        let target = b.inflight_target(b.btlbw(), 2.0);
        assert!(b.cwnd() >= cwnd0.min(target), "{} vs {cwnd0}", b.cwnd());
    }
}
