//! The test kit shared by the controllers' unit tests, in one place:
//!
//! * [`cc_init`]: the [`CcInit`] of a test connection.
//! * [`Driver`]: an idealised ACK stream, one round trip at a time (below).
//! * [`bottleneck`]: a packet-level model of flows sharing one FIFO bottleneck, for the delay-
//!   and rate-based controllers, and [`bottleneck::FixedWindow`], a controller that never
//!   changes its window.
//! * [`props`]: the property-test script (random event sequences) and its interpreter, run
//!   against every registered controller.
//!
//! [`Driver`]'s model (the textbook one behind RFC 5681 §3.1 and RFC 3465 §1): at the start of
//! round `r` the sender has a full window of `W = cwnd / MSS` segments outstanding; during the
//! round the receiver acknowledges them with ACKs covering `per_ack` segments each; the next
//! round starts one RTT later with the window the controller holds then. Segments a controller
//! releases during the round belong to the next round, so `in_flight` after an ACK is what is
//! left of the current round's window. A driver made with [`Driver::sending`] also reports
//! every segment of the round with `on_packet_sent` at the round's start (the delay-based
//! controllers time their rounds by `snd_nxt`, see `round.rs`): rounds follow each other
//! without idle time, a round's packets being reported while the previous round's last segment
//! is still in flight (as in a self-clocked flow), so no round start looks like a transmission
//! from idle (Linux `CA_EVENT_TX_START`) except the very first.

pub(crate) mod bottleneck;
pub(crate) mod props;

use crate::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, CwndUnit, Nanos, SentEvent, WindowGrowth,
};

/// The segment size of the unit tests.
pub(crate) const MSS: u32 = 1000;
/// The round-trip time of most unit tests (the base RTT of the delay-based ones).
pub(crate) const RTT: Nanos = 100 * crate::MS;

/// A test connection: `cwnd_seg` segments of `mss` bytes, `ssthresh` bytes, windows counted in
/// `unit` with ABC limit `abc_limit` (RFC 3465; 0 = off).
pub(crate) fn cc_init(
    mss: u32,
    unit: CwndUnit,
    abc_limit: u32,
    cwnd_seg: u64,
    ssthresh: u64,
) -> CcInit {
    CcInit {
        mss,
        initial_cwnd: cwnd_seg * u64::from(mss),
        initial_ssthresh: ssthresh,
        growth: WindowGrowth {
            unit,
            abc_limit,
            count_delivered: false,
            slow_start_inclusive: false,
            ca_increment_truncated: false,
        },
    }
}

/// An ACK at `now` of one `mss` segment, with RTT sample `rtt` (also the smoothed and minimum
/// RTT).
pub(crate) fn ack_one(now: Nanos, rtt: Nanos, mss: u32) -> AckEvent {
    AckEvent {
        now,
        bytes_acked: u64::from(mss),
        packets_acked: 1,
        packets_delivered: 1,
        rtt_sample: Some(rtt),
        srtt: rtt,
        min_rtt: rtt,
        mss,
        ..Default::default()
    }
}

/// A delayed ACK of two `mss` segments (no RTT fields), at time 0.
pub(crate) fn delayed_ack(mss: u32) -> AckEvent {
    AckEvent {
        bytes_acked: 2 * u64::from(mss),
        packets_acked: 2,
        packets_delivered: 2,
        mss,
        ..Default::default()
    }
}

/// An ACK of one `mss` segment during recovery carrying only an RTT sample `rtt` (no smoothed
/// or minimum RTT), at time 0.
pub(crate) fn recovery_ack(rtt: Nanos, mss: u32) -> AckEvent {
    AckEvent {
        bytes_acked: u64::from(mss),
        packets_acked: 1,
        packets_delivered: 1,
        rtt_sample: Some(rtt),
        in_recovery: true,
        mss,
        ..Default::default()
    }
}

/// A loss at `now` with the whole window in flight (FlightSize = cwnd), then the end of its
/// recovery at the same time.
pub(crate) fn loss_episode(cc: &mut dyn CongestionControl, now: Nanos, mss: u32) {
    let in_flight = cc.cwnd();
    cc.on_congestion_event(&CongestionEvent {
        now,
        in_flight,
        mss,
        ..Default::default()
    });
    cc.on_recovery_exit(now);
}

/// When the ACKs of a round arrive.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AckSpacing {
    /// Evenly over the round: ACK `i` of `n` at `start + (i+1)·RTT/n` (a self-clocked flow
    /// whose window fills the pipe).
    Spread,
    /// Back to back, `gap` apart, from the start of the round (a burst spaced by a bottleneck
    /// of one segment per `gap`).
    Gap(Nanos),
}

pub(crate) struct Driver {
    pub now: Nanos,
    pub mss: u32,
    pub min_rtt: Nanos,
    pub acks: u64,
    /// Data delivered so far (for `SentEvent::total_delivered`).
    pub delivered: u64,
    /// Report each round's segments with `on_packet_sent` (see the module doc).
    sends: bool,
}

/// A deterministic loss process: every `every`-th segment delivered is lost (one loss per `1/p`
/// segments, the textbook model behind TCP response functions — Mathis et al. 1997, RFC 3649
/// §5 and Appendix A).
pub(crate) struct LossEvery {
    every: u64,
    count: u64,
}

impl LossEvery {
    pub fn new(every: u64) -> Self {
        LossEvery {
            every: every.max(1),
            count: 0,
        }
    }
}

impl Driver {
    /// A driver that only acknowledges.
    pub fn new(mss: u32) -> Self {
        Driver {
            now: 0,
            mss,
            min_rtt: 0,
            acks: 0,
            delivered: 0,
            sends: false,
        }
    }

    /// A driver that also reports the segments it sends (see the module doc).
    pub fn sending(mss: u32) -> Self {
        Driver {
            sends: true,
            ..Driver::new(mss)
        }
    }

    /// Runs one round of `rtt` with RTT samples `sample` and returns cwnd (bytes) at its end.
    pub fn round(
        &mut self,
        cc: &mut dyn CongestionControl,
        rtt: Nanos,
        sample: Nanos,
        per_ack: u32,
        spacing: AckSpacing,
    ) -> u64 {
        self.run(cc, rtt, per_ack, spacing, |_| sample, None);
        cc.cwnd()
    }

    /// One round of length `rtt`, ACKs spread over it; ACK `i` of the round carries the sample
    /// `sample(i)`. Returns cwnd (bytes) at the round's end.
    pub fn round_with(
        &mut self,
        cc: &mut dyn CongestionControl,
        rtt: Nanos,
        per_ack: u32,
        sample: impl FnMut(u64) -> Nanos,
    ) -> u64 {
        self.run(cc, rtt, per_ack, AckSpacing::Spread, sample, None);
        cc.cwnd()
    }

    /// One round of length `rtt`, an ACK per segment spread over it, each with the RTT sample
    /// `sample`. Returns cwnd (bytes) at the round's end.
    pub fn steady(&mut self, cc: &mut dyn CongestionControl, rtt: Nanos, sample: Nanos) -> u64 {
        self.round_with(cc, rtt, 1, |_| sample)
    }

    /// One round like [`Driver::round`] (ACKs spread over the RTT, RTT samples `rtt`) under the
    /// loss process. When the loss counter passes `every` the controller gets a congestion event
    /// (FlightSize = the whole window) before that ACK; that ACK and the rest of the round arrive
    /// in recovery (no growth, their segments still count as delivered: the lost one is repaired
    /// within the round), and recovery ends at the round's end. At most one congestion event
    /// per round, as one recovery episode per window. Returns (segments delivered, loss?).
    pub fn round_with_loss(
        &mut self,
        cc: &mut dyn CongestionControl,
        rtt: Nanos,
        per_ack: u32,
        loss: &mut LossEvery,
    ) -> (u64, bool) {
        let (w, lost) = self.run(cc, rtt, per_ack, AckSpacing::Spread, |_| rtt, Some(loss));
        if lost {
            cc.on_recovery_exit(self.now);
        }
        (w, lost)
    }

    /// The average window (segments delivered per round) under the loss process of one loss
    /// per `every` segments, with ACKs of `per_ack` segments each, over `cycles` loss cycles
    /// after `warm` cycles of warm-up: the response function's `w(p)` for `p = 1/every`.
    pub fn average_window(
        &mut self,
        cc: &mut dyn CongestionControl,
        rtt: Nanos,
        per_ack: u32,
        every: u64,
        warm: u32,
        cycles: u32,
    ) -> f64 {
        let mut loss = LossEvery::new(every);
        let (mut segs, mut rounds, mut seen) = (0u64, 0u64, 0u32);
        while seen < warm + cycles {
            let (delivered, lost) = self.round_with_loss(cc, rtt, per_ack, &mut loss);
            if seen >= warm {
                segs += delivered;
                rounds += 1;
            }
            if lost {
                seen += 1;
            }
        }
        segs as f64 / rounds as f64
    }

    /// The round itself; returns (window in segments, loss?).
    fn run(
        &mut self,
        cc: &mut dyn CongestionControl,
        rtt: Nanos,
        per_ack: u32,
        spacing: AckSpacing,
        mut sample: impl FnMut(u64) -> Nanos,
        mut loss: Option<&mut LossEvery>,
    ) -> (u64, bool) {
        let mss = u64::from(self.mss);
        let start = self.now;
        let w = (cc.cwnd() / mss).max(1);
        if self.sends {
            let carry = if self.delivered > 0 { mss } else { 0 };
            for k in 0..w {
                cc.on_packet_sent(&SentEvent {
                    now: start,
                    bytes: self.mss,
                    in_flight: (k + 1) * mss + carry,
                    is_retransmission: false,
                    total_delivered: self.delivered,
                });
            }
        }
        let per_ack = u64::from(per_ack.max(1));
        let n = w.div_ceil(per_ack);
        let mut acked = 0;
        let mut last = start;
        let mut lost = false;
        for i in 0..n {
            let segs = per_ack.min(w - acked);
            let t = match spacing {
                AckSpacing::Spread => start + rtt * (i + 1) / n,
                AckSpacing::Gap(g) => start + i * g,
            };
            last = t;
            let s = sample(i);
            if self.min_rtt == 0 || s < self.min_rtt {
                self.min_rtt = s;
            }
            if let Some(l) = loss.as_deref_mut() {
                l.count += segs;
                if !lost && l.count >= l.every {
                    l.count -= l.every;
                    lost = true;
                    cc.on_congestion_event(&CongestionEvent {
                        now: t,
                        in_flight: w * mss,
                        lost_bytes: mss,
                        srtt: s,
                        min_rtt: self.min_rtt,
                        mss: self.mss,
                        peer_window: u64::MAX,
                    });
                }
            }
            let prior = (w - acked) * mss;
            acked += segs;
            self.delivered += segs * mss;
            cc.on_ack(&AckEvent {
                now: t,
                bytes_acked: segs * mss,
                packets_acked: segs as u32,
                packets_delivered: segs as u32,
                prior_in_flight: prior,
                in_flight: (w - acked) * mss,
                rtt_sample: Some(s),
                srtt: s,
                min_rtt: self.min_rtt,
                in_recovery: lost,
                mss: self.mss,
                ..Default::default()
            });
            self.acks += 1;
        }
        self.now = (start + rtt).max(last);
        (w, lost)
    }
}
