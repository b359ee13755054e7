//! Test drivers shared by the unit tests: an idealised ACK stream, one round-trip at a time.
//!
//! Model (the textbook one behind RFC 5681 §3.1 and RFC 3465 §1): at the start of round `r` the
//! sender has a full window of `W = cwnd / MSS` segments outstanding; during the round the
//! receiver acknowledges them with ACKs covering `per_ack` segments each; the next round starts
//! one RTT later with the window the controller holds then. Segments a controller releases
//! during the round belong to the next round, so `in_flight` after an ACK is what is left of the
//! current round's window.

use crate::{AckEvent, CongestionControl, Nanos};

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
