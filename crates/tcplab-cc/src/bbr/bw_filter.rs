//! The BtlBw estimator: the maximum delivery rate over the last `window` packet-timed rounds
//! (Cardwell et al., ACM Queue 2016: "BtlBw = max(deliveryRate) over a window of 6–10 RTTs";
//! Linux `bbr_bw_rtts = CYCLE_LEN + 2 = 10`, L: net/ipv4/tcp_bbr.c).
//!
//! Linux keeps an approximation of that windowed maximum (Kathleen Nichols' three-sample
//! `minmax` running max, L: lib/win_minmax.c); this filter is exact instead: it remembers the
//! largest sample of each of the last `window` rounds in a fixed ring (no allocation after
//! construction). As Linux's filter, it ages only when a sample is inserted: the window is the
//! `window` rounds up to the newest inserted sample, so while every sample is rejected (an
//! app-limited phase) the estimate is kept "no matter how long" (tcp_bbr.c, `bbr_update_bw`).
//! Both agree whenever the maximum sample is younger than the window; the minmax approximation
//! may keep an expired maximum up to a quarter window longer.

/// Largest supported window, in rounds.
pub(crate) const MAX_WINDOW: usize = 64;

/// Round number of an empty slot.
const EMPTY: u64 = u64::MAX;

/// Windowed maximum over packet-timed rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MaxFilter {
    window: u64,
    /// (round, largest sample of that round) per ring slot; slot = round mod window.
    slots: [(u64, f64); MAX_WINDOW],
    /// Round of the newest inserted sample.
    latest: u64,
}

impl MaxFilter {
    /// A filter over `window` rounds (clamped to 1..=MAX_WINDOW).
    pub fn new(window: u64) -> Self {
        MaxFilter {
            window: window.clamp(1, MAX_WINDOW as u64),
            slots: [(EMPTY, 0.0); MAX_WINDOW],
            latest: 0,
        }
    }

    /// Adds `sample` taken in round `round` (rounds never decrease).
    pub fn update(&mut self, round: u64, sample: f64) {
        if !sample.is_finite() || sample < 0.0 || round == EMPTY {
            return;
        }
        self.latest = self.latest.max(round);
        let slot = &mut self.slots[(round % self.window) as usize];
        if slot.0 != round {
            // The slot held an older round, which has left the window: start this round's.
            *slot = (round, sample);
        } else if sample > slot.1 {
            slot.1 = sample;
        }
    }

    /// The maximum over the rounds `(latest − window, latest]`, `latest` being the round of the
    /// newest sample; 0 if none.
    pub fn get(&self) -> f64 {
        let latest = self.latest;
        self.slots[..self.window as usize]
            .iter()
            .filter(|(r, _)| *r != EMPTY && *r <= latest && latest - *r < self.window)
            .map(|(_, v)| *v)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_max_over_last_ten_rounds() {
        let mut f = MaxFilter::new(10);
        assert_eq!(f.get(), 0.0);
        f.update(1, 5.0);
        f.update(1, 7.0);
        f.update(1, 6.0);
        assert_eq!(f.get(), 7.0);
        for r in 2..=10 {
            f.update(r, 3.0);
            assert_eq!(f.get(), 7.0, "round {r}");
        }
        // Round 11: round 1 (the 7) left the window (1, 11].
        f.update(11, 3.0);
        assert_eq!(f.get(), 3.0);
        // A larger sample replaces at once.
        f.update(12, 9.0);
        assert_eq!(f.get(), 9.0);
    }

    #[test]
    fn test_maximum_ages_only_when_samples_arrive() {
        // No sample for many rounds (all rejected as app-limited): the estimate is kept; the
        // next accepted sample ages it by its own round.
        let mut f = MaxFilter::new(10);
        f.update(3, 8.0);
        assert_eq!(f.get(), 8.0);
        f.update(12, 1.0);
        assert_eq!(f.get(), 8.0, "round 3 is within (2, 12]");
        f.update(13, 1.0);
        assert_eq!(f.get(), 1.0);
        f.update(30, 2.0);
        assert_eq!(f.get(), 2.0);
    }

    #[test]
    fn test_ignores_non_finite_samples() {
        let mut f = MaxFilter::new(10);
        f.update(1, f64::NAN);
        f.update(1, f64::INFINITY);
        f.update(1, -1.0);
        assert_eq!(f.get(), 0.0);
    }
}
