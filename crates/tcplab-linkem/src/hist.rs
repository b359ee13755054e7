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
    /// The distribution itself, as points `[value_ns, probability]` of its distribution function
    /// ([`Hist::cdf`]; empty without samples). `tcplab compare` gives the simulator's link this
    /// distribution as jitter (tcplab_sim::link, "Jitter").
    pub cdf: Vec<(u64, f64)>,
}

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

    /// The distribution function at the edges of the non-empty buckets: for each, its lower
    /// edge at the fraction of samples below the bucket and its upper edge (capped at the
    /// largest sample) at the fraction up to and including it — linear within a bucket (samples
    /// spread evenly in it), flat across empty buckets. First probability 0, last 1; empty
    /// without samples. At most two points per non-empty bucket (≤ 742).
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut out: Vec<(u64, f64)> = Vec::new();
        if self.count == 0 {
            return out;
        }
        let n = self.count as f64;
        let mut seen = 0u64;
        for (b, &k) in self.buckets.iter().enumerate() {
            if k == 0 {
                continue;
            }
            let lo = lower(b).min(self.max_ns);
            let p0 = seen as f64 / n;
            if out.last() != Some(&(lo, p0)) {
                out.push((lo, p0));
            }
            seen += k;
            let hi = upper(b).min(self.max_ns).max(lo);
            out.push((
                hi,
                if seen == self.count {
                    1.0
                } else {
                    seen as f64 / n
                },
            ));
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
            cdf: self.cdf(),
        }
    }
}

/// The lateness of one direction's departures (crates/tcplab-linkem/src/serve.rs module docs):
/// of every packet (`all`), and of the packets that found the emulator idle (`own`: their
/// predecessor had been sent by their due time, so their lateness is the thread's own and not
/// the wait behind a late predecessor).
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    pub all: Hist,
    pub own: Hist,
    last_sent: u64,
}

impl Lateness {
    #[inline]
    pub fn on_departure(&mut self, due: u64, sent: u64) {
        let late = sent.saturating_sub(due);
        self.all.add(late);
        if self.last_sent <= due {
            self.own.add(late);
        }
        self.last_sent = sent;
    }
}

/// The timing of the emulator's one thread over all directions (tcplab_sim::emuthread): a
/// departure that was already due when the thread's previous send happened belongs to the same
/// wake-up; `send_gap` is the time between two sends of one wake-up, `wakeup` a wake-up's
/// lateness — its first send after the earliest due time among its departures (the thread
/// serves its directions in a fixed order, so the earliest due one need not go first).
#[derive(Clone, Debug, Default)]
pub struct ThreadTiming {
    pub wakeup: Hist,
    pub send_gap: Hist,
    prev_sent: Option<u64>,
    first_sent: u64,
    min_due: u64,
}

/// [`ThreadTiming`] as reported.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ThreadSummary {
    pub wakeup_lateness: HistSummary,
    pub send_gap: HistSummary,
}

impl ThreadTiming {
    /// A departure of any direction, in the order the thread sent them.
    #[inline]
    pub fn on_departure(&mut self, due: u64, sent: u64) {
        match self.prev_sent {
            Some(prev) if due <= prev => {
                self.send_gap.add(sent.saturating_sub(prev));
                self.min_due = self.min_due.min(due);
            }
            _ => {
                self.close();
                self.first_sent = sent;
                self.min_due = due;
            }
        }
        self.prev_sent = Some(sent);
    }

    /// Count the wake-up in progress, if any.
    fn close(&mut self) {
        if self.prev_sent.is_some() {
            self.wakeup
                .add(self.first_sent.saturating_sub(self.min_due));
        }
    }

    /// The distributions, the last wake-up counted.
    pub fn summary(&mut self) -> ThreadSummary {
        self.close();
        self.prev_sent = None;
        ThreadSummary {
            wakeup_lateness: self.wakeup.summary(),
            send_gap: self.send_gap.summary(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_thread_timing_splits_wake_ups_and_measures_gaps() {
        let mut t = ThreadTiming::default();
        // Wake-up 1: three packets due at 100, 90 (another direction, served second) and 115,
        // sent at 125, 132, 140: lateness 125 − 90 = 35, gaps 7 and 8.
        t.on_departure(100, 125);
        t.on_departure(90, 132);
        t.on_departure(115, 140);
        // Wake-up 2: due at 200 (after the last send), sent at 220.
        t.on_departure(200, 220);
        let s = t.summary();
        assert_eq!(s.wakeup_lateness.count, 2);
        assert_eq!(s.send_gap.count, 2);
        assert_eq!(s.wakeup_lateness.max_ns, 35);
        assert_eq!(s.send_gap.max_ns, 8);
    }

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
    fn test_own_lateness_counts_a_late_wake_up_once() {
        let mut l = Lateness::default();
        // Packets due every 100 µs; the thread wakes 30 µs late for the first, on time for the
        // second, then sleeps 450 µs past the third's due time and sends it and the four due
        // meanwhile at once (latenesses 450, 350, 250, 150, 50 µs); the next is on time.
        l.on_departure(0, 30_000);
        l.on_departure(100_000, 100_000);
        for k in 0..5u64 {
            l.on_departure(200_000 + k * 100_000, 650_000 + k);
        }
        l.on_departure(700_000, 700_000);
        assert_eq!(l.all.count, 8);
        assert_eq!(l.own.count, 4); // 30 µs, 0, 450 µs, 0
        assert_eq!(l.own.max_ns, 450_000);
        assert_eq!(l.own.sum_ns, 480_000);
        assert_eq!(
            l.all.sum_ns,
            30_000 + 450_000 + 350_000 + 250_000 + 150_000 + 50_000 + 10
        );
    }

    #[test]
    fn test_cdf_is_exact_at_bucket_edges() {
        let mut h = Hist::default();
        assert!(h.cdf().is_empty());
        // 998 samples at 3.5 µs, one at 20.2 µs, one outlier at 7.3 ms.
        for _ in 0..998 {
            h.add(3_500);
        }
        h.add(20_200);
        h.add(7_300_000);
        let c = h.cdf();
        assert_eq!(
            c,
            vec![
                (3_000, 0.0),
                (4_000, 0.998),
                (20_000, 0.998),
                (21_000, 0.999),
                (7_300_000, 0.999),
                (7_300_000, 1.0)
            ]
        );
        // What the simulator accepts.
        let cfg = tcplab_sim::config::JitterCfg::Empirical { cdf: c };
        assert!(cfg.check().is_ok());
        // One sample: a step at it.
        let mut one = Hist::default();
        one.add(42_300);
        assert_eq!(one.cdf(), vec![(42_000, 0.0), (42_300, 1.0)]);
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
