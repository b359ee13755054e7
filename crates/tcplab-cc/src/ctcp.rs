//! Compound TCP (draft-sridharan-tcpm-ctcp-02; Tan, Song, Zhang & Sridharan, "A Compound TCP
//! Approach for High-speed and Long Distance Networks", IEEE INFOCOM 2006; stacks-and-ccas.md
//! A.7).
//!
//! The sending window is the sum of a loss-based component `cwnd` (Reno-like) and a delay-based
//! component `dwnd`: `win = min(cwnd + dwnd, awnd)` (`awnd`, the receive window, is applied by
//! the stack). [`CongestionControl::cwnd`] returns `win`.
//!
//! * `cwnd`: standard slow start while `cwnd < ssthresh` (`dwnd` is 0 then); in congestion
//!   avoidance `cwnd += 1/win` per ACK (so `win` as a whole grows like Reno plus `dwnd`'s rule);
//!   on loss `cwnd ← cwnd/2` (`ssthresh = max(cwnd/2, 2)`); on a timeout Reno's rules and
//!   `dwnd = 0`.
//! * `dwnd`, once per round trip (timed as Vegas', see `round.rs`, with its minimum of 3 RTT
//!   samples per round), from `diff = (win/baseRTT − win/RTT)·baseRTT` packets:
//!   `dwnd ← dwnd + (α·win^k − 1)⁺` if `diff < γ`, `dwnd ← (dwnd − ζ·diff)⁺` if `diff ≥ γ`;
//!   on loss `dwnd ← (win·(1 − β) − cwnd/2)⁺`, so the window after a loss is
//!   `max(win·(1 − β), cwnd/2)`.
//! * γ auto-tuning (draft-02; the TUBE scheme of Tan et al.): each round also estimates the
//!   backlog of the loss-based part alone, `diff_reno = (cwnd/baseRTT − cwnd/RTT)·baseRTT`; at a
//!   loss, `γ ← (1 − λ)·γ + λ·(¾·diff_reno)` clamped to `[γ_low, γ_high]`, then wait for a fresh
//!   `diff_reno`. (The ¾ — a Reno flow's mean backlog relative to its peak — and the
//!   "fresh sample" rule are as described for TUBE and implemented in L. Andrew's
//!   `tcp_compound.c`; treat them as documented assumptions.)
//!
//! Defaults: α = 1/8, β = 1/2, k = 0.75, ζ = 1, γ = 30 packets with auto-tuning in [5, 30] and
//! λ = 1/2 (draft-02). The delay-based component is active only while `win ≥ low_window`
//! (default **41 segments — UNVERIFIED**); below it, and in slow start, `dwnd = 0` and CTCP is
//! Reno. RTT for `diff` is the minimum of the round's samples (as Vegas, whose machinery the
//! draft builds on); `baseRTT` is the smallest sample of the connection.
//!
//! Loss response details: like Vegas, the delay-based rules are off in recovery and after an
//! RTO until the data outstanding at the timeout is acknowledged, and a new round starts when
//! the connection is back in the Open state. `win^k` is computed with basic IEEE-754
//! operations only (no libm), so results are identical on every platform.

use crate::growth::{may_grow, CwndUnit, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::round::DelayRounds;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, SentEvent};

/// Compound TCP's parameters (draft-sridharan-tcpm-ctcp-02).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CtcpParams {
    /// Increase factor α of `dwnd` (1/8).
    pub alpha: f64,
    /// Multiplicative decrease β of the whole window on loss (1/2).
    pub beta: f64,
    /// Exponent k of the increase `α·win^k` (0.75).
    pub k: f64,
    /// Decrease factor ζ applied to `diff` (1).
    pub zeta: f64,
    /// Initial (and, without tuning, fixed) backlog threshold γ, packets (30).
    pub gamma: f64,
    /// γ auto-tuning (draft-02).
    pub gamma_tuning: bool,
    /// Range of the tuned γ (5, 30).
    pub gamma_low: f64,
    pub gamma_high: f64,
    /// Forgetting factor λ of the γ tuning (1/2).
    pub lambda: f64,
    /// `dwnd` is used only while `win` is at least this many segments (41, UNVERIFIED).
    pub low_window: u32,
    /// Basis of the timeout's ssthresh (Reno's rule).
    pub ssthresh_from: SsthreshBasis,
}

impl Default for CtcpParams {
    fn default() -> Self {
        CtcpParams {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            zeta: 1.0,
            gamma: 30.0,
            gamma_tuning: true,
            gamma_low: 5.0,
            gamma_high: 30.0,
            lambda: 0.5,
            low_window: 41,
            ssthresh_from: SsthreshBasis::Auto,
        }
    }
}

/// `x^k` for `x ≥ 0` with basic IEEE-754 operations only (deterministic on every platform).
/// `k = 0.75` is `√x·√√x` (correctly rounded square roots); other exponents go through
/// `2^(k·log2 x)` with series evaluated to full double precision.
pub(crate) fn pow_det(x: f64, k: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    if k == 0.75 {
        let r = x.sqrt();
        return r * r.sqrt();
    }
    exp2_det(k * log2_det(x))
}

/// log2 of a positive finite `x`.
fn log2_det(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::MAX;
    }
    // Normalise subnormals, then split x = m·2^e with m in [1, 2).
    let (x, bias) = if x < f64::MIN_POSITIVE {
        (x * 2f64.powi(64), 64.0)
    } else {
        (x, 0.0)
    };
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    // ln m = 2·atanh(t), t = (m − 1)/(m + 1) in [0, 1/3).
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let mut term = t;
    let mut sum = 0.0;
    let mut n = 1.0;
    for _ in 0..30 {
        sum += term / n;
        term *= t2;
        n += 2.0;
    }
    e as f64 + 2.0 * sum / std::f64::consts::LN_2 - bias
}

/// 2^y, saturating to 0 and `f64::MAX`.
fn exp2_det(y: f64) -> f64 {
    if y.is_nan() {
        return 0.0;
    }
    if y >= 1023.0 {
        return f64::MAX;
    }
    if y < -1020.0 {
        return 0.0;
    }
    let n = y.floor();
    let f = (y - n) * std::f64::consts::LN_2; // in [0, ln 2)
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..25 {
        term *= f / f64::from(i);
        sum += term;
    }
    sum * f64::from_bits(((n as i64 + 1023) as u64) << 52)
}

/// Compound TCP.
#[derive(Clone, Debug)]
pub struct Ctcp {
    p: CtcpParams,
    /// The loss-based component: `cwnd` and its `ssthresh`.
    win: WindowState,
    /// The delay-based component, segments (real-valued as in the draft's model).
    dwnd: f64,
    /// Rounds, RTT samples, `baseRTT`, on/off state (`round::DelayRounds`, as Vegas, FAST and
    /// Compound share them).
    d: DelayRounds,
    /// Current γ (tuned).
    gamma: f64,
    /// Backlog of the loss-based component from the last round, for the γ tuning.
    diff_reno: Option<f64>,
    last_diff: Option<f64>,
}

impl Ctcp {
    /// A Compound TCP controller; parameters are assumed valid (the registry checks them).
    pub fn new(init: &CcInit, p: CtcpParams) -> Self {
        Ctcp {
            p,
            win: WindowState::new(init),
            dwnd: 0.0,
            d: DelayRounds::default(),
            gamma: p.gamma,
            diff_reno: None,
            last_diff: None,
        }
    }

    pub fn params(&self) -> &CtcpParams {
        &self.p
    }
    /// The loss-based component.
    pub fn loss_window(&self) -> &WindowState {
        &self.win
    }
    /// The delay-based window `dwnd`, segments (real-valued).
    pub fn dwnd_segments(&self) -> f64 {
        self.dwnd
    }
    /// `dwnd` as applied to the sending window, bytes (whole segments in the packets unit).
    pub fn dwnd_bytes(&self) -> u64 {
        let mss = self.win.mss();
        let seg = self.dwnd.clamp(0.0, 1e15);
        match self.win.growth().unit {
            CwndUnit::Packets => (seg + 1e-9).floor() as u64 * mss,
            CwndUnit::Bytes => ((seg + 1e-12) * mss as f64) as u64,
        }
    }
    /// Current backlog threshold γ, packets.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }
    /// `diff` of the last round, packets.
    pub fn last_diff(&self) -> Option<f64> {
        self.last_diff
    }
    /// Smallest RTT seen, 0 before the first sample.
    pub fn base_rtt(&self) -> Nanos {
        self.d.base_rtt
    }

    fn win_segments(&self) -> f64 {
        self.cwnd() as f64 / self.win.mss() as f64
    }

    fn enable(&mut self, in_flight: u64) {
        self.d.enable(in_flight);
        self.diff_reno = None;
    }

    /// Loss-based component per ACK: slow start, then `cwnd += 1/win` (draft §3: the loss-based
    /// part grows by one segment per `win` of credit).
    fn grow_cwnd(&mut self, ev: &AckEvent) {
        let credit = self.win.slow_start(ev);
        if credit > 0 {
            let per = match self.win.growth().unit {
                CwndUnit::Packets => self.cwnd() / self.win.mss(),
                CwndUnit::Bytes => self.cwnd(),
            };
            self.win.additive_increase(per, credit);
        }
    }

    /// The once-per-RTT `dwnd` rules for the round's RTT `rtt` (called with ≥ 3 samples, in
    /// congestion avoidance, `win ≥ low_window`).
    fn delay_update(&mut self, rtt: Nanos, may_increase: bool) {
        let base = self.d.base_rtt.max(1) as f64;
        let rtt = (rtt as f64).max(base);
        let queueing = 1.0 - base / rtt;
        let win = self.win_segments();
        // diff = (win/baseRTT − win/RTT)·baseRTT = win·(1 − baseRTT/RTT).
        let diff = win * queueing;
        self.last_diff = Some(diff);
        let cwnd = self.win.cwnd() as f64 / self.win.mss() as f64;
        self.diff_reno = Some(cwnd * queueing);
        if diff < self.gamma {
            if may_increase {
                // dwnd += (α·win^k − 1)⁺.
                self.dwnd += (self.p.alpha * pow_det(win, self.p.k) - 1.0).max(0.0);
            }
        } else {
            // dwnd = (dwnd − ζ·diff)⁺.
            self.dwnd = (self.dwnd - self.p.zeta * diff).max(0.0);
        }
    }

    /// γ tuning at a loss (draft-02): γ ← (1 − λ)γ + λ·¾·diff_reno, clamped.
    fn tune_gamma(&mut self) {
        if !self.p.gamma_tuning {
            return;
        }
        if let Some(dr) = self.diff_reno.take() {
            let sample = 0.75 * dr;
            let g = (1.0 - self.p.lambda) * self.gamma + self.p.lambda * sample;
            self.gamma = g.clamp(self.p.gamma_low, self.p.gamma_high);
        }
    }
}

impl CongestionControl for Ctcp {
    fn name(&self) -> &'static str {
        "ctcp"
    }

    /// L. Andrew's Linux `tcp_compound.c` (the Caltech/Microsoft patch, port to 2.6.23, Nov
    /// 2007; read for the facts) sets `TCP_CONG_RTT_STAMP`: µs RTT samples from the send stamps.
    fn rtt_stamp(&self) -> bool {
        true
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if self.d.on_ack(ev) {
            self.diff_reno = None;
        }
        if ev.in_recovery || ev.bytes_acked == 0 {
            return;
        }
        let grow = may_grow(ev);
        if grow {
            self.grow_cwnd(ev);
        }
        if !self.d.enabled || !self.d.rounds.acked_past_mark() {
            return;
        }
        self.d.rounds.advance(ev.in_flight);
        if self.win.in_slow_start() || self.win_segments() < f64::from(self.p.low_window) {
            // Below the activation window, and in slow start, CTCP is Reno.
            self.dwnd = 0.0;
        } else if let Some(min) = self.d.rtt.min().filter(|_| self.d.rtt.count() > 2) {
            self.delay_update(min, grow);
        }
        self.d.rtt.reset();
    }

    fn on_congestion_event(&mut self, _ev: &CongestionEvent) {
        self.tune_gamma();
        let mss = self.win.mss() as f64;
        let win = self.win_segments();
        let cwnd = self.win.cwnd() as f64 / mss;
        // dwnd = (win·(1 − β) − cwnd/2)⁺ and cwnd = cwnd/2 (draft §3).
        self.dwnd = (win * (1.0 - self.p.beta) - cwnd / 2.0).max(0.0);
        self.win.set_ssthresh(self.win.cwnd() / 2);
        self.win.reset_counters();
        self.d.enabled = false;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        let s = self.win.ssthresh();
        self.win.set_cwnd(s);
        self.enable(0);
    }

    fn on_cwr_complete(&mut self, _now: Nanos) {
        // tcp_complete_cwr's min rule on the loss-based window, then back to Open: the delay
        // component resumes (it was disabled by the congestion event, as in recovery).
        let w = self.win.cwnd().min(self.win.ssthresh());
        self.win.set_cwnd(w);
        self.enable(0);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        if self.p.ssthresh_from.reduces_on_timeout(ev) {
            // Reno's rule on the whole window (what the stack's FlightSize or cwnd is).
            let basis = self.p.ssthresh_from.of_window(
                self.win.growth().unit,
                self.cwnd(),
                ev.in_flight,
                ev.peer_window,
            );
            self.win
                .set_reduced_ssthresh(self.p.ssthresh_from, basis / 2);
        }
        // Timeout: dwnd = 0 (draft §3), cwnd = 1 segment.
        self.dwnd = 0.0;
        self.win.on_timeout();
        self.d.on_rto();
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.d.rounds.on_sent(ev);
    }

    fn on_idle_restart(&mut self, _now: Nanos, restart_window: u64) {
        let w = self.cwnd().min(restart_window);
        self.dwnd = 0.0;
        self.win.set_cwnd(w);
        self.enable(0);
    }

    /// `win = cwnd + dwnd`.
    fn cwnd(&self) -> u64 {
        self.win.cwnd().saturating_add(self.dwnd_bytes())
    }
    /// The threshold of the loss-based part plus `dwnd`, i.e. the whole window the stack should
    /// return to after recovery: `cwnd/2 + dwnd` after a loss.
    fn ssthresh(&self) -> u64 {
        match self.win.ssthresh() {
            u64::MAX => u64::MAX,
            s => s.saturating_add(self.dwnd_bytes()),
        }
    }
    /// The stack sets the whole window: `dwnd` is kept (as far as it fits above one segment)
    /// and `cwnd` takes the rest.
    fn set_cwnd(&mut self, cwnd: u64) {
        let mss = self.win.mss();
        let d = self.dwnd_bytes().min(cwnd.saturating_sub(mss));
        if d < self.dwnd_bytes() {
            self.dwnd = d as f64 / mss as f64;
        }
        self.win.set_cwnd(cwnd - d);
    }
    fn set_ssthresh(&mut self, ssthresh: u64) {
        if ssthresh == u64::MAX {
            self.win.set_ssthresh(u64::MAX);
        } else {
            self.win
                .set_ssthresh(ssthresh.saturating_sub(self.dwnd_bytes()));
        }
    }
    fn in_slow_start(&self) -> bool {
        self.win.in_slow_start()
    }

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let mss = self.win.mss() as f64;
        let vars = [
            ("dwnd", self.dwnd),
            ("loss_cwnd", self.win.cwnd() as f64 / mss),
            ("gamma", self.gamma),
            ("diff", self.last_diff.unwrap_or(-1.0)),
            ("base_rtt_ms", self.d.base_rtt as f64 / 1e6),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        kind: ParamKind::Float,
        default: "0.125",
        doc: "dwnd increase factor α in α·win^k − 1 per RTT, > 0",
    },
    ParamInfo {
        name: "beta",
        kind: ParamKind::Float,
        default: "0.5",
        doc: "multiplicative decrease of the whole window on loss, in (0, 1)",
    },
    ParamInfo {
        name: "k",
        kind: ParamKind::Float,
        default: "0.75",
        doc: "exponent k of the dwnd increase α·win^k, in (0, 2)",
    },
    ParamInfo {
        name: "zeta",
        kind: ParamKind::Float,
        default: "1",
        doc: "dwnd decrease per packet of backlog when diff ≥ γ, ≥ 0",
    },
    ParamInfo {
        name: "gamma",
        kind: ParamKind::Float,
        default: "30",
        doc: "backlog threshold γ in packets (initial value when tuned)",
    },
    ParamInfo {
        name: "gamma_tuning",
        kind: ParamKind::Bool,
        default: "true",
        doc: "tune γ at each loss from the loss-based part's backlog (draft-02)",
    },
    ParamInfo {
        name: "gamma_low",
        kind: ParamKind::Float,
        default: "5",
        doc: "lower bound of the tuned γ, packets",
    },
    ParamInfo {
        name: "gamma_high",
        kind: ParamKind::Float,
        default: "30",
        doc: "upper bound of the tuned γ, packets",
    },
    ParamInfo {
        name: "lambda",
        kind: ParamKind::Float,
        default: "0.5",
        doc: "forgetting factor λ of the γ tuning, in (0, 1]",
    },
    ParamInfo {
        name: "low_window",
        kind: ParamKind::Int,
        default: "41",
        doc: "the delay-based part is active only from this window, segments (41: UNVERIFIED)",
    },
    SSTHRESH_FROM,
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let check = |name: &'static str, ok: fn(f64) -> bool, reason: &str| {
        let v = p.float(name);
        if v.is_finite() && ok(v) {
            Ok(v)
        } else {
            Err(p.invalid(name, v.to_string(), reason))
        }
    };
    let alpha = check("alpha", |v| v > 0.0 && v <= 1e6, "must be in (0, 1e6]")?;
    let beta = check("beta", |v| v > 0.0 && v < 1.0, "must be in (0, 1)")?;
    let k = check("k", |v| v > 0.0 && v < 2.0, "must be in (0, 2)")?;
    let zeta = check("zeta", |v| (0.0..=1e6).contains(&v), "must be in [0, 1e6]")?;
    let gamma = check("gamma", |v| (0.0..=1e9).contains(&v), "must be in [0, 1e9]")?;
    let gamma_low = check(
        "gamma_low",
        |v| (0.0..=1e9).contains(&v),
        "must be in [0, 1e9]",
    )?;
    let gamma_high = check(
        "gamma_high",
        |v| (0.0..=1e9).contains(&v),
        "must be in [0, 1e9]",
    )?;
    if gamma_high < gamma_low {
        return Err(p.invalid("gamma_high", gamma_high.to_string(), "must be ≥ gamma_low"));
    }
    let lambda = check("lambda", |v| v > 0.0 && v <= 1.0, "must be in (0, 1]")?;
    let params = CtcpParams {
        alpha,
        beta,
        k,
        zeta,
        gamma,
        gamma_tuning: p.bool("gamma_tuning"),
        gamma_low,
        gamma_high,
        lambda,
        low_window: p.u32("low_window")?,
        ssthresh_from: p.ssthresh_from(),
    };
    Ok(Box::new(Ctcp::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reno::Reno;
    use crate::testkit::bottleneck::Bottleneck;
    use crate::testkit::{Driver, MSS, RTT as BASE};
    use crate::SEC;

    fn init(unit: CwndUnit, cwnd_seg: u64, ssthresh_seg: Option<u64>) -> CcInit {
        let ssthresh = ssthresh_seg.map_or(u64::MAX, |s| s * u64::from(MSS));
        crate::testkit::cc_init(MSS, unit, 0, cwnd_seg, ssthresh)
    }

    fn ctcp(unit: CwndUnit, cwnd_seg: u64, ssthresh_seg: Option<u64>) -> Ctcp {
        Ctcp::new(&init(unit, cwnd_seg, ssthresh_seg), CtcpParams::default())
    }

    fn segs(b: u64) -> f64 {
        b as f64 / f64::from(MSS)
    }

    #[test]
    fn test_pow_det_matches_reference() {
        for &x in &[1e-3, 0.5, 1.0, 2.0, 41.0, 100.0, 1234.5, 1e6, 1e12] {
            for &k in &[0.75, 0.8, 0.5, 1.0, 1.5] {
                let r = pow_det(x, k);
                let want = f64::powf(x, k);
                assert!(((r - want) / want).abs() < 1e-13, "{x}^{k}: {r} vs {want}");
            }
        }
        assert_eq!(pow_det(0.0, 0.75), 0.0);
        assert_eq!(pow_det(f64::NAN, 0.75), 0.0);
    }

    #[test]
    fn test_dwnd_rises_by_alpha_win_k_minus_one_when_diff_below_gamma() {
        // diff = 0 < γ: dwnd += α·win^0.75 − 1. win = 100: 0.125·100^0.75 − 1 = 2.9528.
        let mut cc = ctcp(CwndUnit::Bytes, 100, Some(50));
        cc.d.base_rtt = BASE;
        cc.delay_update(BASE, true);
        let want = 0.125 * 100f64.powf(0.75) - 1.0;
        assert!(
            (cc.dwnd_segments() - want).abs() < 1e-12,
            "{}",
            cc.dwnd_segments()
        );
        assert_eq!(cc.cwnd(), 100_000 + (want * 1000.0) as u64);
        // Again from win = 102.95...: the increase uses the whole window.
        let win = segs(cc.cwnd());
        cc.delay_update(BASE, true);
        let want2 = want + 0.125 * win.powf(0.75) - 1.0;
        assert!((cc.dwnd_segments() - want2).abs() < 1e-9);
        // Diff just below γ still increases; at γ it decreases.
        let mut cc = ctcp(CwndUnit::Bytes, 100, Some(50));
        cc.d.base_rtt = BASE;
        // diff = 100·(1 − base/rtt) = 29 → rtt = base/0.71.
        cc.delay_update((BASE as f64 / 0.71) as Nanos, true);
        assert!(cc.dwnd_segments() > 2.9);
        assert!(cc.last_diff().unwrap() < 30.0);
    }

    #[test]
    fn test_dwnd_falls_by_zeta_diff_when_diff_at_least_gamma() {
        // cwnd 60 + dwnd 50 = win 110; RTT with diff = 40 ≥ 30: dwnd = 50 − 40 = 10.
        let mut cc = ctcp(CwndUnit::Bytes, 60, Some(30));
        cc.d.base_rtt = BASE;
        cc.dwnd = 50.0;
        let rtt = (BASE as f64 * 110.0 / 70.0).round() as Nanos;
        cc.delay_update(rtt, true);
        assert!((cc.last_diff().unwrap() - 40.0).abs() < 1e-6);
        assert!(
            (cc.dwnd_segments() - 10.0).abs() < 1e-6,
            "{}",
            cc.dwnd_segments()
        );
        // A backlog above dwnd empties it, never below 0.
        let rtt = 2 * BASE; // diff = 70·0.5 = 35 > 10
        cc.delay_update(rtt, true);
        assert_eq!(cc.dwnd_segments(), 0.0);
        assert_eq!(cc.cwnd(), 60_000);
    }

    #[test]
    fn test_congestion_event_sets_dwnd_from_win_and_halves_cwnd() {
        // Loss: dwnd = (win·(1 − β) − cwnd/2)⁺, cwnd = cwnd/2; the window after recovery is
        // max(win/2, cwnd/2).
        for (cwnd, dwnd, want_dwnd) in [(60u64, 40.0, 20.0), (90, 10.0, 5.0), (100, 0.0, 0.0)] {
            for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
                let mut cc = ctcp(unit, cwnd, Some(10));
                cc.dwnd = dwnd;
                cc.on_congestion_event(&CongestionEvent {
                    in_flight: cc.cwnd(),
                    mss: MSS,
                    ..Default::default()
                });
                assert!((cc.dwnd_segments() - want_dwnd).abs() < 1e-9);
                assert_eq!(cc.ssthresh(), (cwnd / 2) * 1000 + (want_dwnd as u64) * 1000);
                cc.on_recovery_exit(0);
                assert_eq!(cc.cwnd(), 50_000, "{unit:?} cwnd {cwnd} dwnd {dwnd}");
                assert_eq!(cc.loss_window().cwnd(), cwnd / 2 * 1000);
            }
        }
    }

    #[test]
    fn test_stack_setting_window_keeps_dwnd() {
        // RFC 6675 recovery sets cwnd = ssthresh at entry: the split is preserved.
        let mut cc = ctcp(CwndUnit::Packets, 60, Some(10));
        cc.dwnd = 40.0;
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 100_000,
            mss: MSS,
            ..Default::default()
        });
        let s = cc.ssthresh();
        cc.set_cwnd(s);
        assert_eq!(cc.cwnd(), 50_000);
        assert_eq!(cc.loss_window().cwnd(), 30_000);
        assert!((cc.dwnd_segments() - 20.0).abs() < 1e-9);
        // A window smaller than dwnd squeezes dwnd (cwnd keeps one segment).
        cc.set_cwnd(5_000);
        assert_eq!(cc.cwnd(), 5_000);
        assert_eq!(cc.loss_window().cwnd(), 1_000);
    }

    #[test]
    fn test_rto_zeroes_dwnd() {
        let mut cc = ctcp(CwndUnit::Packets, 60, Some(10));
        cc.dwnd = 40.0;
        cc.on_rto(&RtoEvent {
            in_flight: 100_000,
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.dwnd_segments(), 0.0);
        assert_eq!(cc.cwnd(), 1000);
        assert_eq!(cc.ssthresh(), 50_000);
    }

    #[test]
    fn test_gamma_tuning_moves_toward_three_quarters_of_reno_backlog() {
        // γ ← (1 − λ)γ + λ·¾·diff_reno, clamped to [5, 30], once per fresh diff_reno.
        let mut cc = ctcp(CwndUnit::Bytes, 60, Some(10));
        let loss = |cc: &mut Ctcp| {
            cc.on_congestion_event(&CongestionEvent {
                mss: MSS,
                ..Default::default()
            })
        };
        cc.diff_reno = Some(20.0);
        loss(&mut cc);
        assert!((cc.gamma() - 22.5).abs() < 1e-12);
        loss(&mut cc); // no fresh sample: unchanged
        assert!((cc.gamma() - 22.5).abs() < 1e-12);
        for want in [11.25, 5.625, 5.0] {
            cc.diff_reno = Some(0.0);
            loss(&mut cc);
            assert!((cc.gamma() - want).abs() < 1e-12, "{}", cc.gamma());
        }
        cc.diff_reno = Some(1000.0);
        loss(&mut cc);
        assert_eq!(cc.gamma(), 30.0);
        // Off: γ stays.
        let mut cc = Ctcp::new(
            &init(CwndUnit::Bytes, 60, Some(10)),
            CtcpParams {
                gamma_tuning: false,
                ..CtcpParams::default()
            },
        );
        cc.diff_reno = Some(0.0);
        loss(&mut cc);
        assert_eq!(cc.gamma(), 30.0);
    }

    #[test]
    fn test_below_low_window_and_in_slow_start_ctcp_is_reno() {
        // Rounds at baseRTT (diff 0) with win < 41 in congestion avoidance: no dwnd.
        let mut cc = ctcp(CwndUnit::Packets, 30, Some(10));
        let mut d = Driver::sending(MSS);
        for _ in 0..5 {
            d.steady(&mut cc, BASE, BASE);
            assert_eq!(cc.dwnd_segments(), 0.0);
        }
        // Slow start up to 64 segments: dwnd stays 0 however large the window.
        let mut cc = ctcp(CwndUnit::Packets, 10, Some(64));
        let mut d = Driver::sending(MSS);
        while cc.in_slow_start() {
            d.steady(&mut cc, BASE, BASE);
        }
        assert_eq!(cc.dwnd_segments(), 0.0);
    }

    #[test]
    fn test_rounds_at_base_rtt_grow_win_by_dwnd_rule_plus_one() {
        // Congestion avoidance at win ≥ 41 without queueing: per round the loss-based part
        // adds about one segment (1/win per ACK) and dwnd adds (α·win^0.75 − 1)⁺, so the whole
        // window follows w ← w + α·w^0.75 (the draft's combined rule). Compare with that
        // recursion over 20 rounds.
        let mut cc = ctcp(CwndUnit::Bytes, 60, Some(30));
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        d.steady(&mut cc, BASE, BASE);
        let mut w_ref = segs(cc.cwnd());
        let start = w_ref;
        for _ in 0..20 {
            d.steady(&mut cc, BASE, BASE);
            w_ref += 0.125 * w_ref.powf(0.75);
        }
        let w = segs(cc.cwnd());
        assert!(
            (w - w_ref).abs() / (w_ref - start) < 0.05,
            "{w} vs reference {w_ref}"
        );
        assert!(cc.dwnd_segments() > 0.0);
    }

    #[test]
    fn test_rounds_with_backlog_above_gamma_shrink_dwnd_to_zero() {
        let mut cc = ctcp(CwndUnit::Packets, 60, Some(30));
        cc.dwnd = 100.0;
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        // RTT 1.5·base: diff = win/3 ≥ 30 at win ≥ 90, so dwnd falls by diff per round until
        // diff < γ. (The first round at the new RTT is judged on the samples before it.)
        let rtt = 3 * BASE / 2;
        d.steady(&mut cc, rtt, rtt);
        let mut last = cc.dwnd_segments();
        let mut decreases = 0;
        loop {
            let win = segs(cc.cwnd());
            d.steady(&mut cc, rtt, rtt);
            let now = cc.dwnd_segments();
            let diff = cc.last_diff().unwrap();
            // The decision's window is win plus the ≈1 segment cwnd gained in the round.
            assert!((diff - win / 3.0).abs() < 1.0, "diff {diff} at win {win}");
            if diff < 30.0 {
                // Backlog back under γ: dwnd grows again.
                assert!(now > last);
                break;
            }
            assert!(
                (now - (last - diff).max(0.0)).abs() < 1e-9,
                "{last} -> {now}"
            );
            last = now;
            decreases += 1;
        }
        assert!(decreases >= 2, "{decreases}");
    }

    #[test]
    fn test_long_fat_pipe_ctcp_fills_faster_than_reno() {
        // 100 Mbit/s, 100 ms (BDP 1250 packets); both start in congestion avoidance at 60
        // segments (as after a loss). Reno needs ~1190 RTTs to fill the pipe; CTCP's
        // w ← w + α·w^0.75 a few tens.
        let rounds_to_fill = |cc: Box<dyn CongestionControl>| {
            let mut m = Bottleneck::new(100_000_000, MSS);
            m.add_flow(cc, BASE, 0);
            let bdp = m.bdp_packets(0);
            let mut t = 0;
            while t < 200 * SEC {
                t += BASE;
                m.run_until(t);
                if segs(m.flows[0].cc.cwnd()) >= bdp {
                    return t / BASE;
                }
            }
            u64::MAX
        };
        let i = init(CwndUnit::Packets, 60, Some(60));
        let c = rounds_to_fill(Box::new(Ctcp::new(&i, CtcpParams::default())));
        let r = rounds_to_fill(Box::new(Reno::new(&i, SsthreshBasis::Auto)));
        // Reference recursion for CTCP.
        let (mut w, mut n) = (60.0f64, 0u64);
        while w < 1250.0 {
            w += 0.125 * w.powf(0.75);
            n += 1;
        }
        eprintln!("rounds to fill: ctcp {c}, reno {r}, ctcp reference {n}");
        assert!(c <= n + 5, "ctcp {c} rounds, reference {n}");
        assert!(r > 10 * c, "reno {r} vs ctcp {c}");
    }
}
