//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation-02, as BBR uses it).
//! Each segment carries a snapshot of the connection's delivery state taken when it was sent;
//! when it is delivered (ACKed or SACKed for the first time) the newest such snapshot bounds a
//! sampling interval.

use crate::time::Nanos;
use tcplab_cc::RateSample;

/// Delivery state snapshotted into a segment at (re)transmission.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxSnapshot {
    pub delivered: u64,
    pub delivered_ns: Nanos,
    pub first_tx_ns: Nanos,
    pub app_limited: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    /// Bytes delivered so far (C.delivered).
    pub delivered: u64,
    delivered_ns: Nanos,
    first_tx_ns: Nanos,
    /// Delivered-count mark until which samples are app-limited (C.app_limited), 0 = none.
    app_limited_until: u64,
    /// No samples: the controller reads none ([`tcplab_cc::CongestionControl::rate_samples`]),
    /// so only `delivered` is kept (snapshots are empty, `end_ack` gives `None`). Per segment
    /// and ACK this was ≈ 45 instructions per delivered packet of a bulk CUBIC flow (README
    /// "Performance", round 9).
    pub off: bool,
    /// Time of the last retransmission timeout of a SACK connection (0 = none); see
    /// [`RateSampler::on_rto`].
    // Sample under construction for the current ACK.
    have: bool,
    prior_delivered: u64,
    prior_ns: Nanos,
    send_elapsed: Nanos,
    ack_elapsed: Nanos,
    is_app_limited: bool,
    prior_in_flight: u64,
}

impl RateSampler {
    /// Snapshot for a segment sent at `now`; `in_flight_empty` if nothing was outstanding.
    #[inline]
    pub fn on_send(&mut self, now: Nanos, in_flight_empty: bool) -> TxSnapshot {
        if self.off {
            return TxSnapshot::default();
        }
        if in_flight_empty {
            self.first_tx_ns = now;
            self.delivered_ns = now;
        }
        TxSnapshot {
            delivered: self.delivered,
            delivered_ns: self.delivered_ns,
            first_tx_ns: self.first_tx_ns,
            app_limited: self.app_limited_until != 0,
        }
    }

    /// The sender ran out of data or receive window with `in_flight` outstanding (draft §3.4).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// Start processing an ACK.
    #[inline]
    pub fn begin_ack(&mut self, prior_in_flight: u64) {
        self.have = false;
        self.prior_in_flight = prior_in_flight;
    }

    /// A segment of `len` bytes sent at `xmit` with snapshot `snap` was delivered at `now`.
    #[inline]
    pub fn on_delivered(&mut self, len: u32, xmit: Nanos, snap: &TxSnapshot, now: Nanos) {
        self.delivered += len as u64;
        if self.off {
            return;
        }
        self.delivered_ns = now;
        if !self.have || snap.delivered >= self.prior_delivered {
            self.have = true;
            self.prior_delivered = snap.delivered;
            self.prior_ns = snap.delivered_ns;
            self.is_app_limited = snap.app_limited;
            self.send_elapsed = xmit.saturating_sub(snap.first_tx_ns);
            self.ack_elapsed = now.saturating_sub(snap.delivered_ns);
            self.first_tx_ns = xmit;
        }
    }

    /// Finish the ACK: the sample, if valid (interval ≥ min RTT, draft §3.3).
    pub fn end_ack(&mut self, min_rtt: Nanos) -> Option<RateSample> {
        if self.off {
            return None;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        if !self.have {
            return None;
        }
        let interval = self.send_elapsed.max(self.ack_elapsed);
        let delivered = self.delivered - self.prior_delivered;
        if interval == 0 || interval < min_rtt {
            return None;
        }
        // `x as f64` below 2^63 through the signed conversion, the same value: one instruction
        // on x86-64 instead of the unsigned conversion's four (per ACK).
        let float = |x: u64| i64::try_from(x).map_or(x as f64, |v| v as f64);
        Some(RateSample {
            delivery_rate_bps: float(delivered) * 8e9 / float(interval),
            delivered,
            interval,
            is_app_limited: self.is_app_limited,
            prior_in_flight: self.prior_in_flight,
            total_delivered: self.delivered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_steady_stream_measures_send_rate() {
        // One 1000-byte segment sent every ms, each delivered 50 ms after it was sent: in steady
        // state the sampled rate is 1000 B/ms = 8 Mbit/s.
        let ms = 1_000_000u64;
        let mut r = RateSampler::default();
        let mut sent: Vec<(Nanos, TxSnapshot)> = Vec::new();
        let mut last = None;
        for t in 0..300u64 {
            if t >= 50 {
                let (x, s) = sent[(t - 50) as usize];
                r.begin_ack(0);
                r.on_delivered(1000, x, &s, t * ms);
                last = r.end_ack(10 * ms);
            }
            let empty = t == 0;
            sent.push((t * ms, r.on_send(t * ms, empty)));
        }
        let rs = last.unwrap();
        assert!(
            (rs.delivery_rate_bps - 8e6).abs() / 8e6 < 0.01,
            "{}",
            rs.delivery_rate_bps
        );
        assert!(!rs.is_app_limited);
    }
}
