//! HighSpeed TCP (RFC 3649; L: net/ipv4/tcp_highspeed.c; stacks-and-ccas.md A.4).
//!
//! RFC 3649 §5 defines the response function `p(w) = 0.078/w^1.2` for `w > Low_Window = 38`
//! (standard TCP below), the decrease `b(w) = (High_Decrease − 0.5)·(ln w − ln 38)/
//! (ln High_Window − ln 38) + 0.5` (High_Window 83000, High_Decrease 0.1) and the increase
//! `a(w) = w²·p(w)·2·b(w)/(2 − b(w))`, applied as `w += a(w)/w` per ACK and `w ← (1 − b(w))·w`
//! on a congestion event. Appendix B tabulates them; Linux uses that table ([`TABLE`]: `w`, and
//! `b(w)` as `md = ⌊256·b(w)⌋`; `a(w)` is the row number, 1 for rows up to `w = 38`, 2 up to
//! 118, …). The table has 72 rows (w = 38 … 89053, a = 1 … 72) in L: tcp_highspeed.c.
//!
//! * Row lookup (Linux `hstcp_cong_avoid`): the row `i` with `w_{i−1} < cwnd ≤ w_i` (the last
//!   row beyond it), so `a` and `b` are those of the next tabulated window at or above cwnd;
//!   up to 38 segments `a = 1`, `b = 0.5` (standard TCP, RFC 3649 §5 "Low_Window").
//!   Linux moves its row index only on congestion-avoidance ACKs; the decrease uses the row of
//!   the last such ACK. Packets unit: as Linux (a loss in the initial slow start therefore halves,
//!   row 0). Bytes unit: the row of the current window (RFC 3649: `b(w)` of `w`).
//! * Increase: `cwnd += a/cwnd` per ACK (`aimd::increase_per_window`). In the packets unit every
//!   ACK counts once, whatever it acknowledges and with ABC or packet counting on: Linux's
//!   `hstcp_cong_avoid` adds `ai + 1` to `snd_cwnd_cnt` per call in congestion avoidance and
//!   never reads `acked` there (2.6.13 to 6.x alike; ABC, 2.6.15–3.8, changed only
//!   `tcp_slow_start` and `tcp_reno_cong_avoid`), and RFC 3649 §5 applies `a(w)/w` "for each
//!   ACK" too. Bytes unit: the window's byte credit, as before.
//! * Decrease: `ssthresh = max(basis − basis·md/256, 2)` (Linux `hstcp_ssthresh`, integer in the
//!   packets unit); RTO: the same on the first timeout (held on repeated ones), cwnd 1 segment.

use crate::aimd::{decreased_ssthresh, increase_per_window, reduce_on_timeout};
use crate::growth::{CwndUnit, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, RtoEvent};

/// RFC 3649 Appendix B as used by Linux (L: tcp_highspeed.c `hstcp_aimd_vals`): the window `w`
/// of each row (segments) and `md = ⌊256·b(w)⌋`; the row's `a(w)` is its index + 1.
pub const TABLE: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// `md` is `b(w)` in 1/256 (Linux fixed point).
const MD_SCALE: u64 = 256;

/// HighSpeed TCP.
#[derive(Clone, Debug)]
pub struct HighSpeed {
    win: WindowState,
    basis: SsthreshBasis,
    /// Current row (Linux `ca->ai`).
    row: usize,
}

impl HighSpeed {
    pub fn new(init: &CcInit, basis: SsthreshBasis) -> Self {
        HighSpeed {
            win: WindowState::new(init),
            basis,
            row: 0,
        }
    }

    pub fn window(&self) -> &WindowState {
        &self.win
    }

    /// `a(w)` and `b(w)` of the row in use.
    pub fn a_b(&self) -> (u64, f64) {
        (
            self.row as u64 + 1,
            f64::from(TABLE[self.row].1) / MD_SCALE as f64,
        )
    }

    /// Moves the row so that `w_{row−1} < cwnd ≤ w_row` (Linux's incremental search).
    fn update_row(&mut self) {
        let cwnd = self.win.cwnd();
        let mss = self.win.mss();
        let w = |i: usize| u64::from(TABLE[i].0).saturating_mul(mss);
        while self.row < TABLE.len() - 1 && cwnd > w(self.row) {
            self.row += 1;
        }
        while self.row > 0 && cwnd <= w(self.row - 1) {
            self.row -= 1;
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "hstcp"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        let Some(credit) = self.win.grow_slow_start(ev) else {
            return;
        };
        self.update_row();
        // cwnd += a(w)/cwnd per ACK (RFC 3649 §5; Linux snd_cwnd_cnt += ai + 1 per ACK).
        let credit = if self.win.growth().unit == CwndUnit::Packets {
            credit.min(1)
        } else {
            credit
        };
        increase_per_window(&mut self.win, credit, self.row as u64 + 1, 1);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if self.win.growth().unit == CwndUnit::Bytes {
            // RFC 3649: b(w) of the current window.
            self.update_row();
        }
        let md = u64::from(TABLE[self.row].1);
        let basis = self.basis.bytes(&self.win, ev.in_flight, ev.peer_window);
        let s = decreased_ssthresh(&self.win, basis, md, MD_SCALE);
        self.win.set_reduced_ssthresh(self.basis, s);
        self.win.reset_counters();
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        reduce_on_timeout(self, self.basis, ev);
        self.win.on_timeout();
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let (a, b) = self.a_b();
        let vars = [("a", a as f64), ("b", b)];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[SSTHRESH_FROM];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(HighSpeed::new(init, p.ssthresh_from())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, AckSpacing, Driver, MSS, RTT};
    use crate::{CwndUnit, WindowGrowth};

    fn hstcp(unit: CwndUnit, cwnd_seg: u64) -> HighSpeed {
        HighSpeed::new(
            &cc_init(MSS, unit, 0, cwnd_seg, 2 * u64::from(MSS)),
            SsthreshBasis::Auto,
        )
    }

    /// RFC 3649 §5 (reference formulas, independent of the table).
    fn b_rfc(w: f64) -> f64 {
        (0.1 - 0.5) * (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln()) + 0.5
    }
    fn p_rfc(w: f64) -> f64 {
        0.078 / w.powf(1.2)
    }
    fn a_rfc(w: f64) -> f64 {
        w * w * p_rfc(w) * 2.0 * b_rfc(w) / (2.0 - b_rfc(w))
    }

    /// Rows of RFC 3649 Appendix B (w, a(w), b(w) to two decimals).
    const RFC_ROWS: [(u64, u64, f64); 6] = [
        (38, 1, 0.50),
        (118, 2, 0.44),
        (221, 3, 0.41),
        (1058, 8, 0.33),
        (10661, 30, 0.21),
        (84035, 71, 0.10),
    ];

    #[test]
    fn test_table_matches_rfc3649_formulas() {
        // Every row w_i (above Low_Window) is where a(w) reaches the row's integer a = i + 1:
        // |a(w_i) − (i + 1)| < 0.05; md/256 is b(w_i) truncated to 1/256 (within 0.005 of the
        // formula, whose two-decimal rounding the RFC prints).
        for (i, &(w, md)) in TABLE.iter().enumerate().skip(1) {
            let w = f64::from(w);
            assert!(
                (a_rfc(w) - (i + 1) as f64).abs() < 0.05,
                "row {i}: a({w}) = {}",
                a_rfc(w)
            );
            let b = f64::from(md) / 256.0;
            assert!(
                b <= b_rfc(w) + 1e-9 && b_rfc(w) - b < 0.005,
                "row {i}: b({w}) = {} vs md {md}",
                b_rfc(w)
            );
        }
        // Appendix B's windows increase, its decreases b(w) do not.
        assert!(TABLE
            .windows(2)
            .all(|r| r[0].0 < r[1].0 && r[0].1 >= r[1].1));
        assert_eq!((TABLE[0].0, TABLE[TABLE.len() - 1].0), (38, 89053));
        // a(w) and b(w) at Low_Window are standard TCP's 1 and 1/2 (a(38) = 0.955 ≈ 1).
        assert!((a_rfc(38.0) - 1.0).abs() < 0.05);
        assert_eq!(b_rfc(38.0), 0.5);
    }

    /// Growth over one round from `w − a − 1` segments (still in `w`'s row at the round's
    /// end), and the fraction of the window kept by a loss at exactly `w` segments.
    fn at_window(unit: CwndUnit, w: u64, a: u64) -> (f64, f64) {
        let mut cc = hstcp(unit, w - a - 1);
        let mut d = Driver::new(MSS);
        let before = cc.cwnd() as f64;
        let after = d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread) as f64;
        let grew = (after - before) / f64::from(MSS);
        // One congestion-avoidance ACK at w selects w's row (Linux updates it on such ACKs).
        let mut cc = hstcp(unit, w);
        cc.on_ack(&AckEvent {
            bytes_acked: u64::from(MSS),
            packets_acked: 1,
            packets_delivered: 1,
            mss: MSS,
            ..Default::default()
        });
        cc.set_cwnd(w * u64::from(MSS));
        let in_flight = cc.cwnd();
        cc.on_congestion_event(&CongestionEvent {
            in_flight,
            mss: MSS,
            ..Default::default()
        });
        (grew, cc.ssthresh() as f64 / in_flight as f64)
    }

    #[test]
    fn test_avoidance_and_decrease_follow_rfc3649_table_rows() {
        // In w's row the controller adds a(w) segments per RTT with one ACK per segment: in
        // bytes the window grows within the round, which costs up to a²/w; in packets the
        // whole-segment counter can leave the last increment for the next round (−1). A loss
        // at w leaves (1 − b(w))·w: b to the RFC's two decimals, plus Linux's 1/256
        // truncation, plus one whole segment of rounding.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for &(w, a, b) in &RFC_ROWS {
                let (grew, kept) = at_window(unit, w, a);
                let a = a as f64;
                let lo = match unit {
                    CwndUnit::Packets => a - 1.0,
                    CwndUnit::Bytes => a - a * a / w as f64,
                };
                assert!(
                    (lo..=a + 1e-9).contains(&grew),
                    "{unit:?} w={w}: grew {grew}, a(w) = {a}"
                );
                assert!(
                    (kept - (1.0 - b)).abs() <= 0.005 + 1.0 / 256.0 + 1.0 / w as f64,
                    "{unit:?} w={w}: kept {kept}, 1 − b(w) = {}",
                    1.0 - b
                );
            }
        }
    }

    #[test]
    fn test_avoidance_counts_each_ack_once_in_packets() {
        // Linux hstcp_cong_avoid: snd_cwnd_cnt += ai + 1 per ACK, whatever the ACK covers and
        // with ABC (or packet counting) on. At cwnd 100 (row a = 2) the counter reaches 100 on
        // the 50th delayed ACK of two segments, with or without ABC.
        for abc in [0, 2] {
            let init = cc_init(MSS, CwndUnit::Packets, abc, 100, 2 * u64::from(MSS));
            let mut cc = HighSpeed::new(&init, SsthreshBasis::Auto);
            let ev = crate::testkit::delayed_ack(MSS);
            let mut n = 0;
            while cc.cwnd() == 100 * u64::from(MSS) {
                cc.on_ack(&ev);
                n += 1;
            }
            assert_eq!((n, cc.cwnd()), (50, 101 * u64::from(MSS)), "abc={abc}");
        }
    }

    #[test]
    fn test_avoidance_below_low_window_is_reno() {
        // RFC 3649 §5: standard TCP for w ≤ Low_Window.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let (grew, kept) = at_window(unit, 30, 1);
            assert!((grew - 1.0).abs() < 0.05, "{unit:?}: {grew}");
            assert_eq!(kept, 0.5);
        }
    }

    /// Average window (segments per RTT) under one loss per `1/p` delivered segments, after
    /// `warm` loss cycles, over `cycles` cycles.
    fn average_window(unit: CwndUnit, p: f64, start: u64, warm: u32, cycles: u32) -> f64 {
        let mut cc = hstcp(unit, start);
        Driver::new(MSS).average_window(&mut cc, RTT, 1, (1.0 / p).round() as u64, warm, cycles)
    }

    #[test]
    fn test_response_function_matches_rfc3649() {
        // RFC 3649 §5: p = 0.078/w^1.2, i.e. w = (0.078/p)^(1/1.2) ≈ 0.12/p^0.835, where w is
        // the average window of the deterministic loss model behind a(w) (one loss per 1/p
        // segments, windows from (1 − b)W to W: a(w) = w²p·2b/(2 − b) is exactly that model's
        // balance). Expected deviations:
        // * Convexity: a(w) ∝ w^0.8 and b(w) vary over the cycle, so even with the exact
        //   formulas the model's average is not exactly w (a few per cent, either side): 3 %.
        // * Table rounding (above only): a row's a is at most a(w) + 1 and its b at most
        //   0.065/a + 1/256 below b(w) (adjacent rows are Δw ≈ w/(0.8a) apart,
        //   |db/dw| = 0.4/(ln(83000/38)·w), and Linux truncates b to 1/256). Scaling a/b by a
        //   factor f moves the balance w^1.2 ∝ a·(2 − b)/(2b) (the response-function exponent),
        //   so the average by f^(1/1.2) at most, with a and b taken at the cycle's smallest
        //   window w_lo = (1 − b)·2w/(2 − b) where the relative rounding is largest.
        // The run starts at the cycle's smallest window and skips enough cycles for the window
        // to settle (the cycle-to-cycle transient decays by ~(1 − b) per cycle).
        let mut measured = Vec::new();
        for (unit, p, warm, cycles) in [
            (CwndUnit::Packets, 1e-4f64, 30, 40),
            (CwndUnit::Packets, 1e-5, 15, 20),
            (CwndUnit::Packets, 1e-6, 12, 10),
            (CwndUnit::Bytes, 1e-5, 15, 20),
        ] {
            let w_rfc = (0.078 / p).powf(1.0 / 1.2);
            let b = b_rfc(w_rfc);
            let w_lo = (1.0 - b) * 2.0 * w_rfc / (2.0 - b);
            let got = average_window(unit, p, w_lo as u64, warm, cycles);
            let ratio = got / w_rfc;
            let a_lo = a_rfc(w_lo);
            let f = (1.0 + 1.0 / a_lo) * b / (b - 0.065 / a_lo - 1.0 / 256.0);
            let hi = 1.03 * f.powf(1.0 / 1.2);
            assert!(
                (0.97..=hi).contains(&ratio),
                "{unit:?} p={p}: average window {got:.1}, RFC {w_rfc:.1}, ratio {ratio:.4} \
                 not in [0.97, {hi:.4}]"
            );
            // The rounded form of §5 is within 3 % of the exact inverse here.
            assert!(((0.12 / p.powf(0.835)) / w_rfc - 1.0).abs() < 0.03);
            measured.push((p, ratio));
        }
        // Bigger windows (smaller p) mean finer table rows: the ratio must approach 1.
        assert!(
            measured[2].1 < measured[1].1 && measured[1].1 < measured[0].1,
            "{measured:?}"
        );
        eprintln!("hstcp response ratios (average window / RFC 3649 w): {measured:?}");
    }

    #[test]
    fn test_response_below_low_window_is_standard_tcp() {
        // p = 2e-3: standard TCP's deterministic model gives w = √(3/(2p)) = 27.4 (Mathis et
        // al. 1997 with C = √(3/2)), and the cycle peak 4/3·w = 36.5 stays below Low_Window.
        // Whole-segment windows of ~27 segments: ±5 %.
        let p = 2e-3;
        let got = average_window(CwndUnit::Packets, p, 27, 20, 100);
        let want = (1.5 / p).sqrt();
        assert!((got / want - 1.0).abs() < 0.05, "{got} vs {want}");
    }

    #[test]
    fn test_slow_start_loss_halves_in_packets_like_linux() {
        // Linux updates its row only in congestion avoidance: a loss in the initial slow start
        // uses row 0 (b = 0.5) whatever the window. Bytes (RFC): b(w) of the window.
        let mut cc = HighSpeed::new(
            &CcInit {
                mss: MSS,
                initial_cwnd: 1000 * u64::from(MSS),
                initial_ssthresh: u64::MAX,
                growth: WindowGrowth::default(),
            },
            SsthreshBasis::Auto,
        );
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 1_000_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 500_000);
        let mut cc = HighSpeed::new(
            &cc_init(MSS, CwndUnit::Bytes, 0, 1000, u64::MAX),
            SsthreshBasis::Auto,
        );
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 1_000_000,
            mss: MSS,
            ..Default::default()
        });
        // Row 1058 (b = 83/256).
        assert_eq!(cc.ssthresh(), 1_000_000 - 1_000_000 * 83 / 256);
    }
}
