//! Background (cross) traffic: the random processes of `Config::background`
//! (docs/scenario-format.md, "Background traffic").
//!
//! * TCP mice: connections arrive as a Poisson process (exponential inter-arrival times) and each
//!   transfers a size drawn from a bounded Pareto distribution. Poisson arrivals of user sessions
//!   and connections: Paxson & Floyd, "Wide-area traffic: the failure of Poisson modeling",
//!   IEEE/ACM ToN 3(3), 1995 (session arrivals are well modelled as Poisson, the packets within
//!   them are not); heavy-tailed transfer sizes: Crovella & Bestavros, "Self-similarity in World
//!   Wide Web traffic: evidence and possible causes", IEEE/ACM ToN 5(6), 1997. The bounded Pareto
//!   B(k, p, α) with its moments: Harchol-Balter, Crovella & Murta, "On choosing a task
//!   assignment policy for a distributed server system", JPDC 59(2), 1999, §3. Each mouse is a
//!   real TCP connection of the model (the same `TcpSender`/`TcpReceiver`, handshake included);
//!   `sim.rs` runs them in a pool of endpoint slots.
//! * On-off UDP: `udp::OnOffSource` (exponential or Pareto on and off periods).
//!
//! The offered load of a mice source is λ · E[S] (arrival rate times mean size, in application
//! bytes per second), so λ = load / (8 · E[S]).

use crate::rng::Rng;

/// A bounded Pareto distribution on [`min`, `max`] with shape `alpha` (Harchol-Balter et al.
/// 1999, §3: f(x) = α k^α x^(−α−1) / (1 − (k/p)^α) for k ≤ x ≤ p).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundedPareto {
    pub alpha: f64,
    pub min: f64,
    pub max: f64,
}

impl BoundedPareto {
    /// Whether the parameters describe a distribution (α > 0, 0 < min < max, all finite).
    pub fn valid(&self) -> bool {
        self.alpha.is_finite()
            && self.alpha > 0.0
            && self.min.is_finite()
            && self.max.is_finite()
            && self.min > 0.0
            && self.max > self.min
    }

    fn norm(&self) -> f64 {
        1.0 - (self.min / self.max).powf(self.alpha)
    }

    /// The `j`-th raw moment E[X^j] (j = 1, 2), closed form (ibid.); the α = j case is the
    /// logarithmic limit.
    pub fn moment(&self, j: i32) -> f64 {
        let (a, k, p) = (self.alpha, self.min, self.max);
        let c = a * k.powf(a) / self.norm();
        let jf = j as f64;
        if (a - jf).abs() < 1e-12 {
            c * (p / k).ln()
        } else {
            c * (p.powf(jf - a) - k.powf(jf - a)) / (jf - a)
        }
    }

    pub fn mean(&self) -> f64 {
        self.moment(1)
    }

    /// A draw by inversion of the CDF F(x) = (1 − (k/x)^α) / (1 − (k/p)^α).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        let u = rng.next_f64();
        let x = self.min / (1.0 - u * self.norm()).powf(1.0 / self.alpha);
        x.clamp(self.min, self.max)
    }
}

/// An exponential draw with mean `mean` (inversion: −mean · ln(1 − U), U in [0, 1)).
#[inline]
pub fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -mean * (1.0 - rng.next_f64()).ln()
}

/// A Pareto (type I) draw with shape `alpha` > 1 and mean `mean`: scale x_m = mean (α − 1) / α,
/// x = x_m / (1 − U)^(1/α) (the on/off periods of ns-2's documented Pareto on-off source take
/// the same form; Willinger, Taqqu, Sherman & Wilson, "Self-similarity through
/// high-variability", IEEE/ACM ToN 5(1), 1997, for why heavy-tailed periods matter).
#[inline]
pub fn pareto(rng: &mut Rng, alpha: f64, mean: f64) -> f64 {
    let xm = mean * (alpha - 1.0) / alpha;
    xm / (1.0 - rng.next_f64()).powf(1.0 / alpha)
}

/// Seconds (f64) to nanoseconds, at least 1 ns, saturating.
#[inline]
pub fn to_ns(x: f64) -> u64 {
    if x.is_nan() || x < 1.0 {
        1
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.round() as u64
    }
}

/// The arrival side of a mice source: the next arrival time and its streams. It lives in an
/// endpoint slot (`Endpoint::BgArrivals`) so that the event queue wakes it like any timer;
/// `sim.rs` turns each arrival into a connection.
pub struct MiceArrivals {
    /// Index into `Simulation::bg`.
    pub source: u32,
    pub next: u64,
    pub stop: u64,
    /// Mean inter-arrival time in ns (1 / λ).
    pub mean_gap_ns: f64,
    pub sizes: BoundedPareto,
    /// Inter-arrival times ("bg-arrival" stream), sizes ("bg-size") kept apart so that changing
    /// the size distribution does not move the arrival times.
    pub arrival_rng: Rng,
    pub size_rng: Rng,
}

impl MiceArrivals {
    pub fn poll_at(&self) -> Option<u64> {
        (self.next < self.stop).then_some(self.next)
    }

    /// Take the arrival due at `now`, if any: its size in bytes; advances to the next arrival.
    #[inline]
    pub fn take(&mut self, now: u64) -> Option<u64> {
        if self.next > now || self.next >= self.stop {
            return None;
        }
        let size = self.sizes.sample(&mut self.size_rng).round().max(1.0) as u64;
        let gap = to_ns(exponential(&mut self.arrival_rng, self.mean_gap_ns));
        self.next = self.next.saturating_add(gap);
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bp() -> BoundedPareto {
        BoundedPareto {
            alpha: 1.2,
            min: 8_000.0,
            max: 2_000_000.0,
        }
    }

    #[test]
    fn test_bounded_pareto_sample_mean_matches_closed_form() {
        let d = bp();
        let mut r = Rng::for_entity(3, "bg-size", "t");
        let n = 400_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = d.sample(&mut r);
            assert!((d.min..=d.max).contains(&x));
            sum += x;
        }
        let mean = sum / n as f64;
        let sd = (d.moment(2) - d.mean() * d.mean()).sqrt();
        let se = sd / (n as f64).sqrt();
        // 5 standard errors of the sample mean (the variance is finite: the law is bounded).
        assert!(
            (mean - d.mean()).abs() < 5.0 * se,
            "sample mean {mean}, closed form {}, se {se}",
            d.mean()
        );
    }

    #[test]
    fn test_bounded_pareto_moments_limits() {
        // As max → ∞ with α > 1 the mean tends to α k / (α − 1) (unbounded Pareto).
        let d = BoundedPareto {
            alpha: 1.5,
            min: 1.0,
            max: 1e12,
        };
        assert!((d.mean() - 3.0).abs() < 1e-3, "{}", d.mean());
        // α = 1 and α = 2 use the logarithmic forms and stay finite and ordered.
        let d1 = BoundedPareto {
            alpha: 1.0,
            min: 1.0,
            max: 100.0,
        };
        let d2 = BoundedPareto { alpha: 2.0, ..d1 };
        assert!(d1.mean().is_finite() && d2.moment(2).is_finite());
        assert!(d1.mean() > d2.mean());
        // Within [min, max].
        assert!(d1.mean() > 1.0 && d1.mean() < 100.0);
    }

    #[test]
    fn test_exponential_mean_and_arrival_count() {
        // Poisson process of rate 1/gap over T: count ~ Poisson(T/gap), sd = sqrt(T/gap).
        let mut a = MiceArrivals {
            source: 0,
            next: 0,
            stop: 1_000_000_000_000,   // 1000 s
            mean_gap_ns: 50_000_000.0, // 20 / s
            sizes: bp(),
            arrival_rng: Rng::for_entity(9, "bg-arrival", "m"),
            size_rng: Rng::for_entity(9, "bg-size", "m"),
        };
        let mut n = 0u64;
        while let Some(t) = a.poll_at() {
            while a.take(t).is_some() {
                n += 1;
            }
        }
        let expect = 20_000.0;
        assert!(
            (n as f64 - expect).abs() < 5.0 * expect.sqrt(),
            "{n} arrivals, expected {expect}"
        );
    }

    #[test]
    fn test_arrivals_do_not_depend_on_sizes() {
        let mk = |alpha: f64| MiceArrivals {
            source: 0,
            next: 0,
            stop: 10_000_000_000,
            mean_gap_ns: 1e7,
            sizes: BoundedPareto { alpha, ..bp() },
            arrival_rng: Rng::for_entity(1, "bg-arrival", "x"),
            size_rng: Rng::for_entity(1, "bg-size", "x"),
        };
        let times = |mut a: MiceArrivals| {
            let mut v = Vec::new();
            while let Some(t) = a.poll_at() {
                while a.take(t).is_some() {
                    v.push(t);
                }
            }
            v
        };
        assert_eq!(times(mk(1.2)), times(mk(1.8)));
    }

    #[test]
    fn test_pareto_mean() {
        let mut r = Rng::new(5);
        let n = 200_000;
        // α = 2.5: finite variance (mean 1, var = xm² α / ((α−1)²(α−2)) = 0.6²·2.5/(2.25·0.5)).
        let s: f64 = (0..n).map(|_| pareto(&mut r, 2.5, 1.0)).sum();
        let sd = (0.36f64 * 2.5 / (2.25 * 0.5)).sqrt();
        let se = sd / (n as f64).sqrt();
        assert!((s / n as f64 - 1.0).abs() < 5.0 * se, "{}", s / n as f64);
    }
}
