//! Packet-timed round trips and per-round RTT statistics, shared by the delay- and rate-based
//! controllers (`vegas`, `fast`, `ctcp`, `bbr`).
//!
//! A *round* is the time it takes for data sent now to be acknowledged. Linux's Vegas (and the
//! Compound and FAST implementations modelled on it) remember `beg_snd_nxt = snd_nxt` when a round
//! starts and end it on the first ACK with `after(ack, beg_snd_nxt)`, i.e. when the cumulative
//! ACK passes the data that was outstanding at the round's start (L: net/ipv4/tcp_vegas.c,
//! `tcp_vegas_cong_avoid`). BBR ends a round when a packet sent after the round's start is
//! delivered (`rs->prior_delivered ≥ next_rtt_delivered`, L: net/ipv4/tcp_bbr.c `bbr_update_bw`);
//! it makes that test itself from the rate sample (`bbr/mod.rs`) and uses this tracker for the
//! counts and the round number.
//!
//! The controller sees neither `snd_nxt` nor per-packet send state, so [`RoundTracker`]
//! rebuilds them from the events: `snd_nxt` is the sum of the new (non-retransmitted) bytes of
//! [`SentEvent`]s, `snd_una` the sum of [`crate::AckEvent::bytes_acked`], and the delivered
//! count the newest [`crate::RateSample::total_delivered`].
//!
//! If the stack never reports a sent packet (a test driver or a stack without that hook), the
//! mark falls back to `snd_una + in_flight` at the round's start.

use crate::{AckEvent, Nanos, SentEvent};

/// Round boundaries from sent and acknowledged byte counts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RoundTracker {
    /// New data sent so far (`snd_nxt` as an offset from the first data byte).
    sent: u64,
    /// Data cumulatively acknowledged so far (`snd_una`).
    acked: u64,
    /// Data delivered so far (`C.delivered`, newest rate sample).
    delivered: u64,
    /// `snd_nxt` when the current round started (Linux `beg_snd_nxt`).
    mark: u64,
    /// Whether any sent packet was reported.
    seen_send: bool,
    /// Rounds completed (Linux BBR `rtt_cnt`).
    count: u64,
}

impl RoundTracker {
    /// Records a packet the stack sent.
    pub fn on_sent(&mut self, ev: &SentEvent) {
        self.seen_send = true;
        if !ev.is_retransmission {
            self.sent = self.sent.saturating_add(u64::from(ev.bytes));
        }
    }

    /// Records the cumulative acknowledgement of `bytes_acked` more bytes.
    pub fn on_acked(&mut self, bytes_acked: u64) {
        self.acked = self.acked.saturating_add(bytes_acked);
        self.delivered = self.delivered.max(self.acked);
    }

    /// Records the stack's delivered count from a rate sample.
    pub fn on_delivered(&mut self, total_delivered: u64) {
        self.delivered = self.delivered.max(total_delivered);
    }

    /// `snd_nxt` as reconstructed from the sent packets.
    pub fn snd_nxt(&self) -> u64 {
        self.sent
    }

    /// `snd_una` as reconstructed from the ACKs.
    pub fn snd_una(&self) -> u64 {
        self.acked
    }

    /// Bytes delivered so far (cumulatively acknowledged or SACKed).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Rounds completed so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Vegas' test `after(ack, beg_snd_nxt)`: the cumulative ACK passed the round's mark.
    pub fn acked_past_mark(&self) -> bool {
        self.acked > self.mark
    }

    /// Starts a new round now (Linux `beg_snd_nxt = snd_nxt`; BBR `next_rtt_delivered`).
    /// `in_flight` is used only when no sent packet was ever reported.
    pub fn start(&mut self, in_flight: u64) {
        self.mark = if self.seen_send {
            self.sent
        } else {
            self.acked.saturating_add(in_flight)
        };
    }

    /// Ends the current round and starts the next one.
    pub fn advance(&mut self, in_flight: u64) {
        self.count = self.count.saturating_add(1);
        self.start(in_flight);
    }
}

/// RTT samples taken during one round (Linux Vegas `minRTT`, `cntRTT`), plus their sum for an
/// average.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoundRtt {
    min: Nanos,
    count: u32,
    sum: u128,
}

impl Default for RoundRtt {
    fn default() -> Self {
        RoundRtt {
            min: Nanos::MAX,
            count: 0,
            sum: 0,
        }
    }
}

impl RoundRtt {
    /// Adds a sample (already made non-zero by the caller).
    pub fn add(&mut self, rtt: Nanos) {
        self.min = self.min.min(rtt);
        self.count = self.count.saturating_add(1);
        self.sum += u128::from(rtt);
    }

    /// Number of samples this round (Linux `cntRTT`).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Smallest sample of the round, if any.
    pub fn min(&self) -> Option<Nanos> {
        (self.count > 0).then_some(self.min)
    }

    /// Mean of the round's samples, if any.
    pub fn mean(&self) -> Option<Nanos> {
        (self.count > 0).then(|| (self.sum / u128::from(self.count)) as Nanos)
    }

    /// Forgets the round's samples (Linux: `cntRTT = 0; minRTT = 0x7fffffff`).
    pub fn reset(&mut self) {
        *self = RoundRtt::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(bytes: u32) -> SentEvent {
        SentEvent {
            bytes,
            ..Default::default()
        }
    }

    #[test]
    fn test_round_ends_when_ack_passes_snd_nxt_at_start() {
        // Linux Vegas: beg_snd_nxt = snd_nxt; the round ends on the first ACK after it.
        let mut r = RoundTracker::default();
        for _ in 0..10 {
            r.on_sent(&sent(1000));
        }
        r.start(0);
        assert_eq!(r.mark, 10_000);
        // New data sent during the round does not move the mark.
        r.on_sent(&sent(1000));
        r.on_acked(10_000);
        assert!(!r.acked_past_mark(), "ack == beg_snd_nxt is not after it");
        r.on_acked(1000);
        assert!(r.acked_past_mark());
        r.advance(0);
        assert_eq!(r.count(), 1);
        assert_eq!(r.mark, 11_000);
    }

    #[test]
    fn test_retransmissions_do_not_move_snd_nxt() {
        let mut r = RoundTracker::default();
        r.on_sent(&sent(1000));
        r.on_sent(&SentEvent {
            bytes: 1000,
            is_retransmission: true,
            ..Default::default()
        });
        assert_eq!(r.snd_nxt(), 1000);
    }

    #[test]
    fn test_round_mark_falls_back_to_in_flight_without_send_reports() {
        let mut r = RoundTracker::default();
        r.on_acked(3000);
        r.start(7000);
        assert_eq!(r.mark, 10_000);
    }

    #[test]
    fn test_round_rtt_min_mean_count() {
        let mut s = RoundRtt::default();
        assert_eq!(s.min(), None);
        assert_eq!(s.mean(), None);
        for x in [30, 10, 20] {
            s.add(x);
        }
        assert_eq!((s.min(), s.mean(), s.count()), (Some(10), Some(20), 3));
        s.reset();
        assert_eq!(s.count(), 0);
    }
}

/// The once-per-RTT state the delay-based controllers share (`vegas`, `fast`, `ctcp`), as Linux's
/// tcp_vegas.c keeps it and its derivatives (FAST, Compound) reuse it: the round tracker, the
/// round's RTT samples, `baseRTT`, whether the delay rules are active (`doing_vegas_now`) and the
/// end of a timeout's loss period.
#[derive(Clone, Debug)]
pub(crate) struct DelayRounds {
    pub rounds: RoundTracker,
    pub rtt: RoundRtt,
    /// Smallest RTT of the connection (Linux `baseRTT`), 0 = none yet.
    pub base_rtt: Nanos,
    /// The delay rules are active (Linux `doing_vegas_now`: the connection is in the Open state).
    pub enabled: bool,
    /// After an RTO the rules stay off until `snd_una` reaches this (`snd_nxt` at the timeout;
    /// Linux leaves the Loss state at `high_seq`).
    pub loss_until: Option<u64>,
}

impl Default for DelayRounds {
    fn default() -> Self {
        DelayRounds {
            rounds: RoundTracker::default(),
            rtt: RoundRtt::default(),
            base_rtt: 0,
            enabled: true,
            loss_until: None,
        }
    }
}

impl DelayRounds {
    /// Linux `vegas_enable`: the rules on, a fresh round from the current `snd_nxt`.
    pub fn enable(&mut self, in_flight: u64) {
        self.enabled = true;
        self.rounds.start(in_flight);
        self.rtt.reset();
    }

    /// The first part of every ACK (`tcp_vegas_pkts_acked` and the state check of
    /// `tcp_vegas_cong_avoid`): count the ACK, leave a timeout's loss period once `snd_una`
    /// passes its end (then [`DelayRounds::enable`]), take the RTT sample into the round and
    /// `baseRTT`. Returns whether the rules were re-enabled, for the controller's own reset.
    pub fn on_ack(&mut self, ev: &AckEvent) -> bool {
        self.rounds.on_acked(ev.bytes_acked);
        let mut enabled = false;
        if let Some(m) = self.loss_until {
            if self.rounds.snd_una() >= m && !ev.in_recovery {
                self.loss_until = None;
                self.enable(ev.in_flight);
                enabled = true;
            }
        }
        if let Some(s) = ev.rtt_sample {
            let v = s.max(1);
            if self.base_rtt == 0 || v < self.base_rtt {
                self.base_rtt = v;
            }
            self.rtt.add(v);
        }
        enabled
    }

    /// A timeout: the rules off until the data outstanding now is acknowledged.
    pub fn on_rto(&mut self) {
        self.enabled = false;
        self.loss_until = Some(self.rounds.snd_nxt());
    }
}
