//! STARTUP: pacing and cwnd gain 2/ln 2 ≈ 2.885, "the smallest pacing gain that will allow a
//! smoothly increasing pacing rate that will double each RTT" (L: net/ipv4/tcp_bbr.c,
//! `bbr_high_gain`), until the pipe is estimated full.
//!
//! Full-pipe test (Cardwell et al. 2016: "BBR … exits STARTUP when it sees that the delivery
//! rate has stopped increasing … BtlBw grew less than 25 % for three rounds"; Linux
//! `bbr_check_full_bw_reached`): at each round start with a non-app-limited rate sample, if
//! BtlBw ≥ 1.25 · `full_bw` then `full_bw = BtlBw` and the count restarts, else the count grows;
//! three rounds without 25 % growth mean the pipe is full. The state moves to DRAIN in
//! `drain.rs`.

use super::Bbr;

/// "If bw has increased significantly (1.25x), there may be more bw available"
/// (`bbr_full_bw_thresh`).
pub(crate) const FULL_BW_THRESH: f64 = 1.25;
/// "After 3 rounds w/o significant bw growth, estimate pipe is full" (`bbr_full_bw_cnt`).
pub(crate) const FULL_BW_COUNT: u32 = 3;

impl Bbr {
    /// Linux `bbr_check_full_bw_reached`; `valid_sample` = a rate sample that is not
    /// app-limited.
    pub(super) fn check_full_bw_reached(&mut self, valid_sample: bool) {
        if self.full_bw_reached || !self.round_start || !valid_sample {
            return;
        }
        let bw = self.btlbw();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_COUNT;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bbr, Synth};
    use super::super::Mode;
    use crate::{CongestionControl, MS};

    #[test]
    fn test_startup_stays_while_bw_grows_25_percent_per_round() {
        let mut b = bbr(10);
        let mut s = Synth::new(100 * MS);
        let mut bw = 1e6;
        for r in 0..10 {
            s.round(&mut b, bw, 100 * MS);
            assert_eq!(b.mode(), Mode::Startup, "round {r}");
            bw *= 1.3;
        }
        assert!(!b.full_bw_reached());
    }

    #[test]
    fn test_startup_exits_after_three_rounds_without_growth() {
        // Growth, then a plateau: the pipe is full on the 3rd round start without ≥ 25 %
        // growth, and BBR leaves STARTUP.
        let mut b = bbr(10);
        let mut s = Synth::new(100 * MS);
        for bw in [1e6, 2e6, 4e6, 8e6] {
            s.round(&mut b, bw, 100 * MS);
        }
        assert_eq!(b.mode(), Mode::Startup);
        // 9e6 < 1.25·8e6: each of the following rounds counts.
        s.round(&mut b, 9e6, 100 * MS);
        s.round(&mut b, 9e6, 100 * MS);
        assert_eq!(b.mode(), Mode::Startup, "two flat rounds are not enough");
        s.round(&mut b, 9e6, 100 * MS);
        assert!(b.full_bw_reached());
        assert_ne!(b.mode(), Mode::Startup);
        assert!(!b.in_slow_start());
    }

    #[test]
    fn test_startup_ignores_app_limited_rounds() {
        let mut b = bbr(10);
        let mut s = Synth::new(100 * MS);
        s.round(&mut b, 8e6, 100 * MS);
        s.app_limited = true;
        for _ in 0..6 {
            s.round(&mut b, 8e6, 100 * MS);
        }
        assert!(!b.full_bw_reached());
        assert_eq!(b.mode(), Mode::Startup);
    }

    #[test]
    fn test_startup_gains_double_the_rate_per_round() {
        // Pacing and cwnd gain 2.885 in STARTUP.
        let mut b = bbr(10);
        let mut s = Synth::new(100 * MS);
        s.round(&mut b, 8e6, 100 * MS);
        assert_eq!(b.pacing_gain(), 2.885);
        assert_eq!(b.cwnd_gain(), 2.885);
        let want = 2.885 * 8e6 * 0.99;
        assert!(
            (b.pacing_rate_bps() - want).abs() / want < 1e-9,
            "{}",
            b.pacing_rate_bps()
        );
    }
}
