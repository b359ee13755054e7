//! Test drivers shared by the unit tests: an idealised ACK stream, one round-trip at a time.
//!
//! Model (the textbook one behind RFC 5681 §3.1 and RFC 3465 §1): at the start of round `r` the
//! sender has a full window of `W = cwnd / MSS` segments outstanding; during the round the
//! receiver acknowledges them with ACKs covering `per_ack` segments each; the next round starts
//! one RTT later with the window the controller holds then. Segments a controller releases
//! during the round belong to the next round, so `in_flight` after an ACK is what is left of the
//! current round's window.

use crate::{AckEvent, CongestionControl, CongestionEvent, Nanos};

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
}

impl Driver {
    pub fn new(mss: u32) -> Self {
        Driver {
            now: 0,
            mss,
            min_rtt: 0,
            acks: 0,
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
        let mss = u64::from(self.mss);
        let start = self.now;
        let w = (cc.cwnd() / mss).max(1);
        let per_ack = u64::from(per_ack.max(1));
        let n = w.div_ceil(per_ack);
        if self.min_rtt == 0 || sample < self.min_rtt {
            self.min_rtt = sample;
        }
        let mut acked = 0;
        let mut last = start;
        for i in 0..n {
            let segs = per_ack.min(w - acked);
            let t = match spacing {
                AckSpacing::Spread => start + rtt * (i + 1) / n,
                AckSpacing::Gap(g) => start + i * g,
            };
            last = t;
            let prior = (w - acked) * mss;
            acked += segs;
            let ev = AckEvent {
                now: t,
                bytes_acked: segs * mss,
                packets_acked: segs as u32,
                packets_delivered: segs as u32,
                prior_in_flight: prior,
                in_flight: (w - acked) * mss,
                rtt_sample: Some(sample),
                srtt: sample,
                min_rtt: self.min_rtt,
                mss: self.mss,
                ..Default::default()
            };
            cc.on_ack(&ev);
            self.acks += 1;
        }
        self.now = (start + rtt).max(last);
        cc.cwnd()
    }
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
        let mss = u64::from(self.mss);
        let start = self.now;
        let w = (cc.cwnd() / mss).max(1);
        let per_ack = u64::from(per_ack.max(1));
        let n = w.div_ceil(per_ack);
        if self.min_rtt == 0 || rtt < self.min_rtt {
            self.min_rtt = rtt;
        }
        let mut acked = 0;
        let mut lost = false;
        for i in 0..n {
            let segs = per_ack.min(w - acked);
            let t = start + rtt * (i + 1) / n;
            loss.count += segs;
            if !lost && loss.count >= loss.every {
                loss.count -= loss.every;
                lost = true;
                cc.on_congestion_event(&CongestionEvent {
                    now: t,
                    in_flight: w * mss,
                    lost_bytes: mss,
                    srtt: rtt,
                    min_rtt: self.min_rtt,
                    mss: self.mss,
                });
            }
            let prior = (w - acked) * mss;
            acked += segs;
            cc.on_ack(&AckEvent {
                now: t,
                bytes_acked: segs * mss,
                packets_acked: segs as u32,
                packets_delivered: segs as u32,
                prior_in_flight: prior,
                in_flight: (w - acked) * mss,
                rtt_sample: Some(rtt),
                srtt: rtt,
                min_rtt: self.min_rtt,
                in_recovery: lost,
                mss: self.mss,
                ..Default::default()
            });
            self.acks += 1;
        }
        self.now = start + rtt;
        if lost {
            cc.on_recovery_exit(self.now);
        }
        (w, lost)
    }
}
