//! TCP-Illinois (Liu, Başar & Srikant, "TCP-Illinois: A Loss and Delay-Based Congestion
//! Control Algorithm for High-Speed Networks", Performance Evaluation 65(6–7), 2008;
//! L: net/ipv4/tcp_illinois.c; stacks-and-ccas.md A.11).
//!
//! Loss decides *when* to back off, queueing delay decides *how much* to add and remove:
//!
//! * **Delay statistics** (Linux `tcp_illinois_acked`, on every ACK with an RTT sample, also in
//!   recovery): `base_rtt` (minimum), `max_rtt` (maximum) and the sum and count of this
//!   round's samples. `dm = max_rtt − base_rtt` (maximum queueing delay), `da` = this round's
//!   average RTT − `base_rtt` (average queueing delay).
//! * **Once per round** (the first ACK beyond the data outstanding at the round's start,
//!   Linux `after(ack, end_seq)`; rounds are tracked as in `hystart.rs`, by bytes acknowledged
//!   against `snd_una + in_flight` at the round start), outside recovery (`update_params`):
//!   below `win_thresh` (15) segments `α = 1`, `β = 1/2` (Reno); otherwise, if the round had
//!   samples, with `d1 = dm/100`, `d2 = dm/10`, `d3 = 0.8·dm`:
//!   - `α = α_max` (10) when `da ≤ d1` — at once if the delay never rose above `d1`, else after
//!     `theta` (5) consecutive such rounds; otherwise `α = k1/(k2 + da)` through
//!     (d1, α_max) and (dm, α_min = 0.3): `α = (dm−d1)·α_max / ((dm−d1) + (da−d1)·(α_max −
//!     α_min)/α_min)`;
//!   - `β = 1/8` when `da ≤ d2`, `1/2` when `da ≥ d3`, linear in between;
//!   - Linux fixed point: α in 1/128 (`ALPHA_MIN` = ⌊0.3·128⌋ = 38), β in 1/64.
//! * **Increase**: `cwnd += α/cwnd` per ACK unit (`aimd::increase_per_window`).
//! * **Decrease**: `ssthresh = max(basis − basis·β, 2)`. RTO (`TCP_CA_Loss`): that ssthresh on
//!   the first timeout, then α = 1, β = 1/2 and the delay state of the round reset; cwnd 1.
//!
//! Initial α is α_max and β 1/2 (Linux `tcp_illinois_init`). Linux caps samples at
//! `U32_MAX/ALPHA_MAX` µs (3.3 s) against 32-bit overflow; the arithmetic here is 128-bit on
//! nanoseconds, so no cap is needed.

use crate::aimd::{self, decreased_ssthresh, increase_per_window, reduce_on_timeout};
use crate::growth::{SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent};

/// TCP-Illinois' parameters (Linux module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllinoisParams {
    /// Reno below this window, segments (`win_thresh` = 15).
    pub win_thresh: u32,
    /// Rounds of low delay before α returns to α_max (`theta` = 5).
    pub theta: u32,
    pub ssthresh_from: SsthreshBasis,
}

impl Default for IllinoisParams {
    fn default() -> Self {
        IllinoisParams {
            win_thresh: 15,
            theta: 5,
            ssthresh_from: SsthreshBasis::Auto,
        }
    }
}

/// α in 1/128 (Linux `ALPHA_SHIFT` 7): min ⌊0.3·128⌋ = 38, max 10, base 1.
const ALPHA_SCALE: u64 = 128;
const ALPHA_MIN: u64 = 3 * ALPHA_SCALE / 10;
const ALPHA_MAX: u64 = 10 * ALPHA_SCALE;
const ALPHA_BASE: u64 = ALPHA_SCALE;
/// β in 1/64 (Linux `BETA_SHIFT` 6): 1/8 … 1/2.
const BETA_SCALE: u64 = 64;
const BETA_MIN: u64 = BETA_SCALE / 8;
const BETA_MAX: u64 = BETA_SCALE / 2;
const BETA_BASE: u64 = BETA_MAX;

/// TCP-Illinois.
#[derive(Clone, Debug)]
pub struct Illinois {
    p: IllinoisParams,
    win: WindowState,
    /// Sum and count of this round's RTT samples (ns).
    sum_rtt: u128,
    cnt_rtt: u64,
    base_rtt: Nanos,
    max_rtt: Nanos,
    /// Bytes acknowledged so far and the round's end mark.
    acked_total: u64,
    end_mark: u64,
    alpha: u64,
    beta: u64,
    rtt_above: bool,
    rtt_low: u32,
}

impl Illinois {
    pub fn new(init: &CcInit, p: IllinoisParams) -> Self {
        Illinois {
            p,
            win: WindowState::new(init),
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: Nanos::MAX,
            max_rtt: 0,
            acked_total: 0,
            end_mark: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    pub fn params(&self) -> &IllinoisParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// Current additive increase, segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / ALPHA_SCALE as f64
    }
    /// Current decrease fraction.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / BETA_SCALE as f64
    }

    fn rtt_reset(&mut self, in_flight: u64) {
        self.end_mark = self.acked_total.saturating_add(in_flight);
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// Linux `alpha()`.
    fn compute_alpha(&mut self, da: u64, dm: u64) -> u64 {
        let d1 = dm / 100;
        if da <= d1 {
            // Never left the low-delay zone: full speed.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait for theta good rounds before going back to α_max.
            self.rtt_low += 1;
            if self.rtt_low < self.p.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        let dm = u128::from(dm - d1);
        let da = u128::from(da - d1);
        let num = dm * u128::from(ALPHA_MAX);
        let den = dm + da * u128::from(ALPHA_MAX - ALPHA_MIN) / u128::from(ALPHA_MIN);
        u64::try_from(num / den.max(1)).unwrap_or(ALPHA_MAX)
    }

    /// Linux `beta()`.
    fn compute_beta(da: u64, dm: u64) -> u64 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = aimd::scale(dm, 8, 10);
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        // b = (βmin·d3 − βmax·d2 + (βmax − βmin)·da)/(d3 − d2), linear from (d2, βmin) to
        // (d3, βmax).
        let num = u128::from(BETA_MIN) * u128::from(d3)
            + u128::from(BETA_MAX - BETA_MIN) * u128::from(da)
            - u128::from(BETA_MAX) * u128::from(d2);
        u64::try_from(num / u128::from(d3 - d2)).unwrap_or(BETA_MAX)
    }

    /// Linux `update_params`.
    fn update_params(&mut self, in_flight: u64) {
        if aimd::cwnd_segments(&self.win) < f64::from(self.p.win_thresh) {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt.saturating_sub(self.base_rtt);
            let avg = u64::try_from(self.sum_rtt / u128::from(self.cnt_rtt)).unwrap_or(u64::MAX);
            let da = avg.saturating_sub(self.base_rtt);
            self.alpha = self.compute_alpha(da, dm);
            self.beta = Self::compute_beta(da, dm);
        }
        self.rtt_reset(in_flight);
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    /// Linux tcp_illinois.c sets `TCP_CONG_RTT_STAMP` (2.6.22–3.14; read for the facts): µs
    /// RTT samples from the send stamps.
    fn rtt_stamp(&self) -> bool {
        true
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if let Some(s) = ev.rtt_sample {
            self.base_rtt = self.base_rtt.min(s);
            self.max_rtt = self.max_rtt.max(s);
            self.cnt_rtt += 1;
            self.sum_rtt += u128::from(s);
        }
        self.acked_total = self.acked_total.saturating_add(ev.bytes_acked);
        if !ev.in_recovery && ev.bytes_acked > 0 && self.acked_total > self.end_mark {
            self.update_params(ev.in_flight);
        }
        let Some(credit) = self.win.grow_slow_start(ev) else {
            return;
        };
        increase_per_window(&mut self.win, credit, self.alpha, ALPHA_SCALE);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        let basis = self
            .p
            .ssthresh_from
            .bytes(&self.win, ev.in_flight, ev.peer_window);
        let s = decreased_ssthresh(&self.win, basis, self.beta, BETA_SCALE);
        self.win.set_reduced_ssthresh(self.p.ssthresh_from, s);
        self.win.reset_counters();
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        reduce_on_timeout(self, self.p.ssthresh_from, ev);
        // tcp_illinois_state(TCP_CA_Loss).
        self.alpha = ALPHA_BASE;
        self.beta = BETA_BASE;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.rtt_reset(ev.in_flight);
        self.win.on_timeout();
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let base = if self.base_rtt == Nanos::MAX {
            0.0
        } else {
            self.base_rtt as f64 / 1e6
        };
        let vars = [
            ("alpha", self.alpha()),
            ("beta", self.beta()),
            ("base_rtt_ms", base),
            ("max_rtt_ms", self.max_rtt as f64 / 1e6),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "win_thresh",
        kind: ParamKind::Int,
        default: "15",
        doc: "Reno (α 1, β 1/2) below this window, segments (Linux win_thresh)",
    },
    ParamInfo {
        name: "theta",
        kind: ParamKind::Int,
        default: "5",
        doc: "low-delay rounds before α returns to its maximum 10 (Linux theta)",
    },
    SSTHRESH_FROM,
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let params = IllinoisParams {
        win_thresh: p.int_in("win_thresh", 0, i64::from(u32::MAX))?,
        theta: p.int_in("theta", 0, i64::from(u32::MAX))?,
        ssthresh_from: p.ssthresh_from(),
    };
    Ok(Box::new(Illinois::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, AckSpacing, Driver, MSS, RTT as BASE};
    use crate::{CwndUnit, Nanos, MS};

    fn illinois(unit: CwndUnit, cwnd_seg: u64) -> Illinois {
        Illinois::new(
            &cc_init(MSS, unit, 0, cwnd_seg, 2 * u64::from(MSS)),
            IllinoisParams::default(),
        )
    }

    /// Reference (Liu, Başar & Srikant 2008 §III; A.11): α from the average queueing delay
    /// `da` and the maximum `dm`.
    fn alpha_ref(da: f64, dm: f64) -> f64 {
        let (amin, amax) = (0.3, 10.0);
        let d1 = dm / 100.0;
        if da <= d1 {
            return amax;
        }
        let k1 = (dm - d1) * amin * amax / (amax - amin);
        let k2 = (dm - d1) * amin / (amax - amin) - d1;
        k1 / (k2 + da)
    }

    fn beta_ref(da: f64, dm: f64) -> f64 {
        let (bmin, bmax) = (0.125, 0.5);
        let (d2, d3) = (dm / 10.0, 0.8 * dm);
        if da <= d2 {
            bmin
        } else if da >= d3 {
            bmax
        } else {
            bmin + (bmax - bmin) * (da - d2) / (d3 - d2)
        }
    }

    /// One round at 100 segments with base RTT 100 ms seen once and the maximum `dm` once,
    /// then rounds whose samples average `BASE + da`; returns (α, β) after the update.
    fn params_at(da: Nanos, dm: Nanos) -> (f64, f64) {
        let mut cc = illinois(CwndUnit::Packets, 100);
        let mut d = Driver::new(MSS);
        d.round(&mut cc, BASE, BASE, 1, AckSpacing::Spread);
        d.round(&mut cc, BASE + dm, BASE + dm, 1, AckSpacing::Spread);
        d.round(&mut cc, BASE + da, BASE + da, 1, AckSpacing::Spread);
        // The first ACK of the next round closes the round above.
        cc.set_cwnd(100 * u64::from(MSS));
        d.round(&mut cc, BASE + da, BASE + da, 1, AckSpacing::Spread);
        (cc.alpha(), cc.beta())
    }

    #[test]
    fn test_avoidance_alpha_and_beta_follow_queueing_delay() {
        // dm = 50 ms. α: 10 at da ≤ dm/100, 0.3 at da = dm, k1/(k2 + da) between; β: 1/8 up
        // to dm/10, 1/2 from 0.8·dm, linear between. Tolerance: Linux's fixed point (α in
        // 1/128 with α_min = 38/128 instead of 0.3, β in 1/64).
        // (da ≤ d1 after a high-delay round waits theta rounds: tested separately.)
        let dm = 50 * MS;
        for da_ms in [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 45.0, 50.0] {
            let da = (da_ms * 1e6) as Nanos;
            let (alpha, beta) = params_at(da, dm);
            let (da_f, dm_f) = (da as f64, dm as f64);
            let a = alpha_ref(da_f, dm_f);
            let b = beta_ref(da_f, dm_f);
            assert!(
                (alpha - a).abs() <= 0.02 * a + 1.0 / 128.0,
                "da {da_ms} ms: α {alpha} vs {a}"
            );
            assert!(
                (beta - b).abs() <= 1.0 / 64.0,
                "da {da_ms} ms: β {beta} vs {b}"
            );
        }
        assert!((alpha_ref(50e6, 50e6) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn test_avoidance_alpha_returns_to_max_after_theta_low_delay_rounds() {
        // After a high-delay round, α stays until 5 consecutive low-delay rounds have passed.
        let mut cc = illinois(CwndUnit::Packets, 100);
        let mut d = Driver::new(MSS);
        let dm = 50 * MS;
        d.round(&mut cc, BASE, BASE, 1, AckSpacing::Spread);
        d.round(&mut cc, BASE + dm, BASE + dm, 1, AckSpacing::Spread);
        d.round(&mut cc, BASE + dm, BASE + dm, 1, AckSpacing::Spread);
        assert!(cc.alpha() < 1.0, "{}", cc.alpha());
        let mut seen = Vec::new();
        for _ in 0..7 {
            cc.set_cwnd(100 * u64::from(MSS));
            d.round(&mut cc, BASE, BASE, 1, AckSpacing::Spread);
            seen.push(cc.alpha());
        }
        // A round's update happens on the first ACK of the next one: the first low round
        // updates from the last high round (α stays low), the next four low-round updates keep
        // it (rtt_low 1 … 4 < theta), the fifth restores α_max.
        let low = seen[0];
        assert!(low < 1.0, "{seen:?}");
        assert_eq!(seen[..5], [low; 5], "{seen:?}");
        assert_eq!(seen[5], 10.0, "{seen:?}");
    }

    /// One round at the base RTT, then one with 50 ms of queueing (so the maximum delay is
    /// known); returns the driver to go on with.
    fn seen_queueing(cc: &mut Illinois) -> Driver {
        let mut d = Driver::new(MSS);
        d.round(cc, BASE, BASE, 1, AckSpacing::Spread);
        let rtt = BASE + 50 * MS;
        d.round(cc, rtt, rtt, 1, AckSpacing::Spread);
        d
    }

    #[test]
    fn test_small_window_is_reno() {
        // Below win_thresh (15): α = 1, β = 1/2.
        let mut cc = illinois(CwndUnit::Bytes, 10);
        let mut d = seen_queueing(&mut cc);
        assert_eq!((cc.alpha(), cc.beta()), (1.0, 0.5));
        let before = cc.cwnd();
        d.round(&mut cc, BASE, BASE, 1, AckSpacing::Spread);
        let grew = (cc.cwnd() - before) as f64 / f64::from(MSS);
        // +1 per RTT, less what the round does not acknowledge (the driver acknowledges
        // ⌊cwnd⌋ whole segments) and the growth within the round: ≤ 2/W.
        let w = before as f64 / f64::from(MSS);
        assert!((1.0 - 2.0 / w..=1.0).contains(&grew), "{grew}");
        let in_flight = cc.cwnd();
        cc.on_congestion_event(&CongestionEvent {
            in_flight,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), in_flight - in_flight / 2);
    }

    #[test]
    fn test_congestion_event_uses_beta_and_rto_resets() {
        // No queueing delay (da = 0 ≤ dm/10): β = 1/8, keep 7/8; α_max = 10 per RTT.
        let mut cc = illinois(CwndUnit::Packets, 100);
        let mut d = seen_queueing(&mut cc);
        for _ in 0..8 {
            cc.set_cwnd(100 * u64::from(MSS));
            d.round(&mut cc, BASE, BASE, 1, AckSpacing::Spread);
        }
        assert_eq!((cc.alpha(), cc.beta()), (10.0, 0.125));
        cc.set_cwnd(100 * u64::from(MSS));
        let before = cc.cwnd();
        d.round(&mut cc, BASE, BASE, 1, AckSpacing::Spread);
        let grew = (cc.cwnd() - before) as f64 / f64::from(MSS);
        assert!((grew - 10.0).abs() <= 1.0, "{grew}");
        cc.set_cwnd(100 * u64::from(MSS));
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 100_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 88_000); // 100 − ⌊100·8/64⌋
        cc.on_rto(&RtoEvent {
            in_flight: 100_000,
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!((cc.alpha(), cc.beta()), (1.0, 0.5));
        assert_eq!(cc.cwnd(), u64::from(MSS));
    }
}
