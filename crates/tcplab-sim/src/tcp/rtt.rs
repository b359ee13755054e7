//! RTT estimation and the retransmission timeout (RFC 6298), with the knobs OSes differ in:
//! minimum RTO applied to the whole RTO (RFC 6298 §2.4) or to the variance term (Linux: RTO =
//! SRTT + max(4·RTTVAR, rto_min)), clock granularity G, initial and maximum RTO.

use crate::time::Nanos;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    pub srtt: Nanos,
    pub rttvar: Nanos,
    pub min_rtt: Nanos,
    pub latest: Nanos,
    has_sample: bool,
    rto: Nanos,
    /// Consecutive backoffs of the current RTO (RFC 6298 §5.5).
    pub backoff: u32,
    min_rto: Nanos,
    max_rto: Nanos,
    granularity: Nanos,
    min_on_variance: bool,
}

impl RttEstimator {
    pub fn new(
        initial_rto: Nanos,
        min_rto: Nanos,
        max_rto: Nanos,
        g: Nanos,
        min_on_var: bool,
    ) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            min_rtt: 0,
            latest: 0,
            has_sample: false,
            rto: initial_rto.min(max_rto),
            backoff: 0,
            min_rto,
            max_rto,
            granularity: g.max(1),
            min_on_variance: min_on_var,
        }
    }

    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// Quantise a duration to the clock granularity as a tick-based clock measures it: the
    /// difference of two tick counts, at least one tick (a zero-tick sample counts as one tick,
    /// the usual jiffies-clock convention).
    pub fn quantise(&self, sent: Nanos, now: Nanos) -> Nanos {
        let g = self.granularity;
        ((now / g).saturating_sub(sent / g)).max(1) * g
    }

    /// Feed one RTT measurement `r` (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4).
    pub fn on_sample(&mut self, r: Nanos) {
        let r = r.max(1);
        self.latest = r;
        self.min_rtt = if self.has_sample {
            self.min_rtt.min(r)
        } else {
            r
        };
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
        } else {
            let err = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        self.backoff = 0;
        self.rto = self.compute_rto();
    }

    fn compute_rto(&self) -> Nanos {
        let var = (4 * self.rttvar).max(self.granularity);
        let rto = if self.min_on_variance {
            self.srtt + var.max(self.min_rto)
        } else {
            (self.srtt + var).max(self.min_rto)
        };
        rto.min(self.max_rto)
    }

    /// The current RTO including exponential backoff (RFC 6298 §5.5), capped at the maximum.
    pub fn rto(&self) -> Nanos {
        let shift = self.backoff.min(30);
        self.rto.saturating_mul(1u64 << shift).min(self.max_rto)
    }

    /// Base RTO without backoff.
    pub fn base_rto(&self) -> Nanos {
        self.rto
    }

    /// Double the RTO after a timeout (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    #[test]
    fn test_first_sample_sets_srtt_and_rttvar() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, MS, false);
        e.on_sample(100 * MS);
        assert_eq!(e.srtt, 100 * MS);
        assert_eq!(e.rttvar, 50 * MS);
        // RFC 6298: RTO = 100 + 4·50 = 300 ms, raised to min 1 s.
        assert_eq!(e.rto(), SEC);
    }

    #[test]
    fn test_linux_style_min_on_variance() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS, true);
        for _ in 0..50 {
            e.on_sample(100 * MS);
        }
        // Converged: RTTVAR → 0, so RTO = SRTT + 200 ms.
        assert!(e.rto() >= 300 * MS && e.rto() < 305 * MS, "{}", e.rto());
    }

    #[test]
    fn test_backoff_doubles_and_caps() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, MS, false);
        e.back_off();
        assert_eq!(e.rto(), 2 * SEC);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), 60 * SEC);
        e.on_sample(10 * MS);
        assert_eq!(e.backoff, 0);
    }

    #[test]
    fn test_quantise_to_ticks() {
        let e = RttEstimator::new(SEC, SEC, 60 * SEC, 10 * MS, false);
        assert_eq!(e.quantise(5 * MS, 14 * MS), 10 * MS);
        assert_eq!(e.quantise(MS, 2 * MS), 10 * MS); // zero ticks counts as one
        assert_eq!(e.quantise(9 * MS, 31 * MS), 30 * MS);
    }
}
