//! A fixed-size histogram of durations (no allocation per sample) for the emulator's self-check:
//! 1 µs buckets below 100 µs, 10 µs below 1 ms, 100 µs below 10 ms, 1 ms below 100 ms, then one
//! overflow bucket. Quantiles are reported as the upper edge of their bucket (an upper bound).
//! Hand-written, not `hdrhistogram`: these fixed buckets are a few lines, allocation-free, and
//! all the self-check reports; a configurable-precision library would add a dependency only.

use serde::Serialize;

const N_BUCKETS: usize = 100 + 90 + 90 + 90 + 1;

#[derive(Clone, Debug)]
pub struct Hist {
    buckets: [u64; N_BUCKETS],
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HistSummary {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// The distribution itself: its value at probabilities 0, 1/100, …, 1 ([`Hist::inverse_cdf`];
    /// empty without samples). `tcplab compare` gives the simulator's link this distribution
    /// as jitter (tcplab_sim::link, "Jitter").
    pub quantiles_ns: Vec<u64>,
}

/// Points of [`HistSummary::quantiles_ns`].
pub const QUANTILE_POINTS: usize = 101;

impl Default for Hist {
    fn default() -> Self {
        Hist {
            buckets: [0; N_BUCKETS],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

fn bucket(ns: u64) -> usize {
    let us = ns / 1000;
    if us < 100 {
        us as usize
    } else if us < 1_000 {
        100 + ((us - 100) / 10) as usize
    } else if us < 10_000 {
        190 + ((us - 1_000) / 100) as usize
    } else if us < 100_000 {
        280 + ((us - 10_000) / 1_000) as usize
    } else {
        N_BUCKETS - 1
    }
}

/// Lower edge of bucket `b`, ns.
fn lower(b: usize) -> u64 {
    if b == 0 {
        0
    } else {
        upper(b - 1)
    }
}

/// Upper edge of bucket `b`, ns.
fn upper(b: usize) -> u64 {
    let us = if b < 100 {
        b as u64 + 1
    } else if b < 190 {
        100 + (b as u64 - 99) * 10
    } else if b < 280 {
        1_000 + (b as u64 - 189) * 100
    } else if b < 370 {
        10_000 + (b as u64 - 279) * 1_000
    } else {
        u64::MAX / 1000
    };
    us * 1000
}

impl Hist {
    #[inline]
    pub fn add(&mut self, ns: u64) {
        self.buckets[bucket(ns)] += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return upper(b).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// The value at probabilities k/(n−1), k = 0..n: within its bucket a rank is placed
    /// linearly between the bucket's edges (samples spread evenly in it), the result capped
    /// at the largest sample. Empty without samples.
    pub fn inverse_cdf(&self, n: usize) -> Vec<u64> {
        if self.count == 0 || n < 2 {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(n);
        let mut b = 0;
        let mut before = 0u64; // samples in buckets before `b`
        for k in 0..n {
            // Rank in [0, count]: the fraction of samples at or below the value.
            let rank = k as f64 / (n - 1) as f64 * self.count as f64;
            while b < N_BUCKETS - 1
                && (self.buckets[b] == 0 || ((before + self.buckets[b]) as f64) < rank)
            {
                before += self.buckets[b];
                b += 1;
            }
            let within = ((rank - before as f64) / self.buckets[b].max(1) as f64).clamp(0.0, 1.0);
            let hi = upper(b).min(self.max_ns.max(lower(b)));
            let v = lower(b) + ((hi - lower(b)) as f64 * within) as u64;
            out.push(v.min(self.max_ns));
        }
        out
    }

    pub fn summary(&self) -> HistSummary {
        HistSummary {
            count: self.count,
            mean_ns: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64
            },
            p50_ns: self.quantile(0.5),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.max_ns,
            quantiles_ns: self.inverse_cdf(QUANTILE_POINTS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_hist_bucket_edges_are_monotone() {
        let mut last = 0;
        for ns in (0..200_000_000u64).step_by(997) {
            let b = bucket(ns);
            assert!(b >= last);
            assert!(upper(b) > ns, "ns {ns} bucket {b} upper {}", upper(b));
            last = b;
        }
    }

    #[test]
    fn test_inverse_cdf_spreads_ranks_within_buckets() {
        let mut h = Hist::default();
        assert!(h.inverse_cdf(101).is_empty());
        // 1000 samples, 0.5 µs apart: 2 per 1-µs bucket from 0 to 500 µs (10-µs buckets above
        // 100 µs); the inverse CDF is close to the line p × 500 µs.
        for k in 0..1000u64 {
            h.add(k * 500);
        }
        let q = h.inverse_cdf(101);
        assert_eq!(q.len(), 101);
        assert_eq!(q[0], 0);
        assert_eq!(q[100], 499_500); // the largest sample
        assert!(q.windows(2).all(|w| w[0] <= w[1]));
        for (k, &v) in q.iter().enumerate() {
            let want = k as f64 * 5_000.0;
            assert!((v as f64 - want).abs() <= 10_000.0, "p{k}: {v} vs {want}");
        }
        // One value: every quantile within its bucket, capped at it.
        let mut one = Hist::default();
        one.add(42_300);
        let q1 = one.inverse_cdf(5);
        assert_eq!(q1[0], 42_000);
        assert_eq!(*q1.last().unwrap(), 42_300);
    }

    #[test]
    fn test_hist_quantiles_bound_samples() {
        let mut h = Hist::default();
        for us in 1..=1000u64 {
            h.add(us * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.mean_ns - 500_500.0).abs() < 1e-6);
        assert!(
            s.p50_ns >= 500_000 && s.p50_ns <= 510_000,
            "p50 {}",
            s.p50_ns
        );
        assert!(
            s.p99_ns >= 990_000 && s.p99_ns <= 1_000_000,
            "p99 {}",
            s.p99_ns
        );
        assert_eq!(s.max_ns, 1_000_000);
        assert_eq!(Hist::default().summary().p99_ns, 0);
    }
}

/// The rate a link direction delivered while it was backlogged: over every busy period (a run of
/// departures each of which found the link busy since the previous one) lasting at least
/// `min_span_ns` of scheduled time, Σ scheduled span / Σ actual span between the period's first
/// and last departure. Jitter of individual departures cancels out within a period (only its two
/// ends count); a thread that cannot keep up stretches the actual span and lowers the ratio.
#[derive(Clone, Debug)]
pub struct RateMeter {
    min_span_ns: u64,
    cur: Option<Period>,
    ideal_ns: u128,
    actual_ns: u128,
    periods: u64,
    packets: u64,
}

#[derive(Clone, Copy, Debug)]
struct Period {
    first_due: u64,
    first_sent: u64,
    last_due: u64,
    last_sent: u64,
    n: u64,
}

impl RateMeter {
    pub fn new(min_span_ns: u64) -> RateMeter {
        RateMeter {
            min_span_ns,
            cur: None,
            ideal_ns: 0,
            actual_ns: 0,
            periods: 0,
            packets: 0,
        }
    }

    /// A departure scheduled at `due` that left at `sent`.
    pub fn on_departure(&mut self, back_to_back: bool, due: u64, sent: u64) {
        match &mut self.cur {
            Some(p) if back_to_back => {
                p.last_due = due;
                p.last_sent = sent;
                p.n += 1;
            }
            _ => {
                self.close();
                self.cur = Some(Period {
                    first_due: due,
                    first_sent: sent,
                    last_due: due,
                    last_sent: sent,
                    n: 1,
                });
            }
        }
    }

    fn close(&mut self) {
        if let Some(p) = self.cur.take() {
            let ideal = p.last_due - p.first_due;
            if ideal >= self.min_span_ns {
                self.ideal_ns += ideal as u128;
                self.actual_ns += p.last_sent.saturating_sub(p.first_sent) as u128;
                self.periods += 1;
                self.packets += p.n;
            }
        }
    }

    /// Close the current period (end of run).
    pub fn finish(&mut self) {
        self.close();
    }

    /// Delivered / configured rate, if any period qualified.
    pub fn ratio(&self) -> Option<f64> {
        (self.actual_ns > 0).then(|| self.ideal_ns as f64 / self.actual_ns as f64)
    }

    pub fn periods(&self) -> u64 {
        self.periods
    }

    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Actual time measured, ns.
    pub fn span_ns(&self) -> u64 {
        self.actual_ns as u64
    }
}

#[cfg(test)]
mod rate_tests {
    use super::*;

    #[test]
    fn test_rate_meter_jitter_cancels_within_period() {
        let mut m = RateMeter::new(1_000);
        // 11 departures 100 ns apart; the middle ones leave up to 40 ns late, the ends on time.
        for k in 0..=10u64 {
            let late = if k == 0 || k == 10 { 0 } else { (k * 7) % 40 };
            m.on_departure(k > 0, k * 100, k * 100 + late);
        }
        m.finish();
        assert_eq!(m.ratio(), Some(1.0));
        assert_eq!((m.periods(), m.packets()), (1, 11));
    }

    #[test]
    fn test_rate_meter_slow_sender_lowers_ratio_and_short_periods_ignored() {
        let mut m = RateMeter::new(1_000);
        // A short period (span 100 ns) is ignored.
        m.on_departure(false, 0, 0);
        m.on_departure(true, 100, 500);
        // A long one where every departure slips by 10 %.
        for k in 0..=20u64 {
            m.on_departure(k > 0, 10_000 + k * 100, 10_000 + k * 110);
        }
        m.finish();
        let r = m.ratio().unwrap();
        assert!((r - 1.0 / 1.1).abs() < 1e-9, "ratio {r}");
        assert_eq!(m.periods(), 1);
        assert_eq!(RateMeter::new(1).ratio(), None);
    }
}
