//! FAST TCP (Jin, Wei & Low, "FAST TCP: Motivation, Architecture, Algorithms, Performance",
//! IEEE INFOCOM 2004; stacks-and-ccas.md A.8).
//!
//! Window control (the paper's eq. 2), once per round trip:
//!
//! ```text
//! w ← min{ 2w, (1 − γ)·w + γ·(baseRTT/RTT · w + α) }
//! ```
//!
//! with `baseRTT` the smallest RTT observed (the propagation delay) and `RTT` the current
//! (average) RTT. Its fixed point is `w·(1 − baseRTT/RTT) = α`: each flow keeps `α` packets in
//! the bottleneck queues, whatever the path's capacity (the paper's equilibrium, §3). The `2w`
//! bound makes the start a doubling per RTT, i.e. FAST needs no separate slow start.
//!
//! What the paper does not pin down is modelled as follows — **documented assumptions**, not
//! verified against the (unpublished) FAST implementation:
//!
//! * `α` defaults to **200 packets — UNVERIFIED** (the value reported for the Caltech
//!   experiments); `γ` defaults to 0.5 (UNVERIFIED, "γ ∈ (0, 1]").
//! * The update period is **one round trip — UNVERIFIED** (timed like Linux Vegas:
//!   `after(ack, beg_snd_nxt)`, see `round.rs`), and `RTT` is the **mean of the RTT samples of
//!   the round** (the paper's estimation component uses an averaged RTT; the exact filter is
//!   not published).
//! * An increase is spread over the following round trip (each acknowledged segment adds
//!   `(w_new − w)/w` segments, so a doubling is exactly slow start's one segment per segment
//!   acked) instead of being sent as one burst; a decrease applies at once.
//! * Loss: as described for the FAST Linux patches, FAST falls back on Reno's loss response —
//!   `ssthresh = max(w/2, 2)` on a congestion event (basis per `ssthresh_from`), `cwnd =
//!   ssthresh` when recovery ends, no window update while recovering; an RTO collapses the
//!   window to 1 segment and Reno's slow start runs until the data outstanding at the timeout is
//!   acknowledged, after which the FAST rule resumes from the current window.
//! * The window never goes below 2 segments through the FAST rule (as Vegas); `baseRTT` is kept
//!   for the whole connection.
//! * A round without RTT samples leaves the window alone; before the first sample the Reno rules
//!   apply.

use crate::growth::{may_grow, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::round::DelayRounds;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, SentEvent};

/// FAST's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastParams {
    /// Packets each flow keeps queued in equilibrium (200 — UNVERIFIED).
    pub alpha: f64,
    /// Smoothing of the window update, 0 < γ ≤ 1 (0.5 — UNVERIFIED).
    pub gamma: f64,
    /// Basis of the loss halving.
    pub ssthresh_from: SsthreshBasis,
}

impl Default for FastParams {
    fn default() -> Self {
        FastParams {
            alpha: 200.0,
            gamma: 0.5,
            ssthresh_from: SsthreshBasis::Auto,
        }
    }
}

/// Lower bound of the FAST window, segments (assumption, as Linux Vegas' clamp).
const MIN_WINDOW_SEGMENTS: f64 = 2.0;

/// FAST TCP.
#[derive(Clone, Debug)]
pub struct Fast {
    p: FastParams,
    win: WindowState,
    /// Rounds, RTT samples, `baseRTT`, on/off state (`round::DelayRounds`, as Vegas, FAST and
    /// Compound share them).
    d: DelayRounds,
    /// FAST's real-valued window, segments; `cwnd` is it rounded down (to whole segments in the
    /// packets unit), so fractional updates accumulate across rounds as in the paper's model.
    w: f64,
    /// Window the current increase aims at, segments.
    target: f64,
    /// Increase per acknowledged segment while below `target`.
    incr: f64,
    /// Mean RTT of the last round used by the rule.
    last_rtt: Nanos,
}

impl Fast {
    /// A FAST controller; parameters are assumed valid (`alpha ≥ 0`, `0 < gamma ≤ 1`).
    pub fn new(init: &CcInit, p: FastParams) -> Self {
        let win = WindowState::new(init);
        let w = win.cwnd() as f64 / win.mss() as f64;
        Fast {
            p,
            win,
            d: DelayRounds::default(),
            w,
            target: w,
            incr: 0.0,
            last_rtt: 0,
        }
    }

    pub fn params(&self) -> &FastParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// Smallest RTT seen, 0 before the first sample.
    pub fn base_rtt(&self) -> Nanos {
        self.d.base_rtt
    }
    /// FAST's real-valued window, segments.
    pub fn w(&self) -> f64 {
        self.w
    }
    /// Window the FAST rule chose at the last update, segments.
    pub fn target(&self) -> f64 {
        self.target
    }
    /// Mean RTT of the round used by the last update.
    pub fn last_rtt(&self) -> Nanos {
        self.last_rtt
    }

    /// The FAST window rule (eq. 2) for window `w` segments; result in segments.
    pub fn rule(&self, w: f64, base_rtt: Nanos, rtt: Nanos) -> f64 {
        let g = self.p.gamma;
        let ratio = base_rtt as f64 / rtt.max(1) as f64;
        let w1 = (1.0 - g) * w + g * (ratio * w + self.p.alpha);
        (2.0 * w).min(w1).max(MIN_WINDOW_SEGMENTS)
    }

    fn enable(&mut self, in_flight: u64) {
        self.d.enable(in_flight);
        self.sync_from_cwnd();
    }

    /// The window was set from outside (recovery, RTO, idle, undo): adopt it and stop any
    /// increase in progress.
    fn sync_from_cwnd(&mut self) {
        self.w = self.win.cwnd() as f64 / self.win.mss() as f64;
        self.target = self.w;
        self.incr = 0.0;
    }

    /// Sets `cwnd` from `w`.
    fn apply_w(&mut self) {
        // A nano-segment of slack so that accumulated rounding (0.1 + 0.1 + ...) does not lose
        // a whole segment; saturating conversion (windows beyond 2^63 bytes are meaningless).
        let bytes = (self.w + 1e-9) * self.win.mss() as f64;
        self.win.set_cwnd(bytes.min(9.2e18) as u64);
    }

    fn reno(&mut self, ev: &AckEvent) {
        self.win.reno_on_ack(ev);
        self.sync_from_cwnd();
    }

    /// Once per RTT: compute the new window and start moving towards it.
    fn update(&mut self, rtt: Nanos) {
        self.last_rtt = rtt;
        let new_w = self.rule(self.w, self.d.base_rtt, rtt);
        if new_w <= self.w {
            // A decrease takes effect at once.
            self.w = new_w;
            self.target = new_w;
            self.incr = 0.0;
            self.apply_w();
        } else {
            // An increase is spread over the next round, in which about w segments are
            // acknowledged, each adding (new − w)/w.
            self.target = new_w;
            self.incr = (new_w - self.w) / self.w;
        }
    }

    /// Applies this ACK's share of the spread increase.
    fn grow_towards_target(&mut self, acked_bytes: u64) {
        if self.incr <= 0.0 || self.w >= self.target {
            return;
        }
        let acked = acked_bytes as f64 / self.win.mss() as f64;
        self.w = (self.w + self.incr * acked).min(self.target);
        if self.w >= self.target {
            self.incr = 0.0;
        }
        self.apply_w();
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if self.d.on_ack(ev) {
            self.sync_from_cwnd();
        }
        if ev.in_recovery || ev.bytes_acked == 0 {
            return;
        }
        if !self.d.enabled || self.d.base_rtt == 0 {
            self.reno(ev);
            return;
        }
        if self.d.rounds.acked_past_mark() {
            self.d.rounds.advance(ev.in_flight);
            if let Some(avg) = self.d.rtt.mean() {
                self.update(avg);
            }
            self.d.rtt.reset();
        }
        if may_grow(ev) {
            self.grow_towards_target(ev.bytes_acked);
        }
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        // Assumption (module doc): Reno's halving on loss.
        self.win
            .reno_decrease(self.p.ssthresh_from, ev.in_flight, ev.peer_window);
        self.d.enabled = false;
        self.sync_from_cwnd();
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        let s = self.win.ssthresh();
        self.win.set_cwnd(s);
        self.enable(0);
    }

    fn on_cwr_complete(&mut self, _now: Nanos) {
        // tcp_complete_cwr's min rule, then back to Open: the FAST rule resumes (as Vegas).
        let w = self.win.cwnd().min(self.win.ssthresh());
        self.win.set_cwnd(w);
        self.enable(0);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        self.win.reno_timeout(self.p.ssthresh_from, ev);
        self.d.enabled = false;
        self.sync_from_cwnd();
        self.d.loss_until = Some(self.d.rounds.snd_nxt());
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.d.rounds.on_sent(ev);
    }

    fn on_idle_restart(&mut self, _now: Nanos, restart_window: u64) {
        let w = self.win.cwnd().min(restart_window);
        self.win.set_cwnd(w);
        self.enable(0);
    }

    fn on_undo(&mut self, _now: Nanos, prior_cwnd: u64, prior_ssthresh: u64) {
        self.win.set_cwnd(prior_cwnd);
        self.win.set_ssthresh(prior_ssthresh);
        self.sync_from_cwnd();
    }

    fn cwnd(&self) -> u64 {
        self.win.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.win.ssthresh()
    }
    fn set_cwnd(&mut self, cwnd: u64) {
        self.win.set_cwnd(cwnd);
        self.sync_from_cwnd();
    }
    fn set_ssthresh(&mut self, ssthresh: u64) {
        self.win.set_ssthresh(ssthresh);
    }

    /// FAST has no slow start of its own (the `2w` bound plays that role); only Reno's rules
    /// after a timeout have one.
    fn in_slow_start(&self) -> bool {
        !self.d.enabled && self.win.in_slow_start()
    }

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let queued = if self.last_rtt > 0 && self.d.base_rtt > 0 {
            self.w * (1.0 - self.d.base_rtt as f64 / self.last_rtt as f64)
        } else {
            0.0
        };
        let vars = [
            ("base_rtt_ms", self.d.base_rtt as f64 / 1e6),
            ("rtt_ms", self.last_rtt as f64 / 1e6),
            ("w", self.w),
            ("target", self.target),
            ("queued_est", queued),
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
        default: "200",
        doc: "packets each flow keeps queued in equilibrium, ≥ 0 (200: UNVERIFIED)",
    },
    ParamInfo {
        name: "gamma",
        kind: ParamKind::Float,
        default: "0.5",
        doc: "smoothing of the once-per-RTT window update, in (0, 1] (0.5: UNVERIFIED)",
    },
    SSTHRESH_FROM,
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let alpha = p.float("alpha");
    if !(alpha.is_finite() && (0.0..=1e9).contains(&alpha)) {
        return Err(p.invalid("alpha", alpha.to_string(), "must be in [0, 1e9]"));
    }
    let gamma = p.float("gamma");
    if !(gamma > 0.0 && gamma <= 1.0) {
        return Err(p.invalid("gamma", gamma.to_string(), "must be in (0, 1]"));
    }
    let params = FastParams {
        alpha,
        gamma,
        ssthresh_from: p.ssthresh_from(),
    };
    Ok(Box::new(Fast::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::bottleneck::Bottleneck;
    use crate::testkit::{cc_init, recovery_ack, Driver, MSS, RTT as BASE};
    use crate::{CwndUnit, MS, SEC};

    fn fast(unit: CwndUnit, cwnd_seg: u64, alpha: f64) -> Fast {
        Fast::new(
            &cc_init(MSS, unit, 0, cwnd_seg, u64::MAX),
            FastParams {
                alpha,
                ..FastParams::default()
            },
        )
    }

    fn segs(c: &Fast) -> f64 {
        c.cwnd() as f64 / f64::from(MSS)
    }

    /// The paper's eq. 2, written out independently for the reference.
    fn reference(w: f64, base: f64, rtt: f64, alpha: f64, gamma: f64) -> f64 {
        (2.0 * w).min((1.0 - gamma) * w + gamma * (base / rtt * w + alpha))
    }

    #[test]
    fn test_start_doubles_per_rtt_below_equilibrium() {
        // No queueing (RTT = baseRTT): w + γα > 2w while w < γα = 100, so the 2w bound rules
        // and the window doubles each round (one segment per segment acknowledged).
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = fast(unit, 10, 200.0);
            let mut d = Driver::sending(MSS);
            d.steady(&mut cc, BASE, BASE); // baseRTT learnt, first update at its first ACK
            let mut w = segs(&cc);
            for r in 0..3 {
                d.steady(&mut cc, BASE, BASE);
                let now = segs(&cc);
                assert!(
                    (now - 2.0 * w).abs() <= 1.0,
                    "{unit:?} round {r}: {w} -> {now}"
                );
                w = now;
            }
        }
    }

    #[test]
    fn test_update_follows_equation_above_the_doubling_bound() {
        // w = 160, base 100 ms, RTT 125 ms: (1−γ)w + γ(0.8w + α) = 80 + 0.5·(128 + 20) = 154.
        let mut cc = fast(CwndUnit::Bytes, 160, 20.0);
        cc.d.base_rtt = BASE;
        cc.update(BASE * 5 / 4);
        let expect = reference(160.0, 0.1, 0.125, 20.0, 0.5);
        assert!((expect - 154.0).abs() < 1e-9);
        assert!((cc.w() - expect).abs() < 1e-9, "{}", cc.w());
        assert_eq!(cc.cwnd(), 154_000);
        // An increase is spread: w = 100 with no queueing aims at min(200, 100 + 10) = 110,
        // reached after one window (100 segments) of ACKs.
        let mut cc = fast(CwndUnit::Packets, 100, 20.0);
        cc.d.base_rtt = BASE;
        cc.update(BASE);
        assert!((cc.target() - 110.0).abs() < 1e-9);
        assert_eq!(cc.cwnd(), 100_000);
        for _ in 0..50 {
            cc.grow_towards_target(1000);
        }
        assert_eq!(cc.cwnd(), 105_000);
        for _ in 0..50 {
            cc.grow_towards_target(1000);
        }
        assert_eq!(cc.cwnd(), 110_000);
    }

    #[test]
    fn test_fixed_rtt_converges_to_alpha_over_queueing_fraction() {
        // With RTT held at 1.25·baseRTT the rule's fixed point is w·(1 − 0.8) = α: w* = 5α.
        // (Near it the error shrinks by 1 − γ·(1 − 0.8) = 0.9 per round.)
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = fast(unit, 10, 20.0);
            let mut d = Driver::sending(MSS);
            d.steady(&mut cc, BASE, BASE);
            let rtt = BASE * 5 / 4;
            for _ in 0..100 {
                d.steady(&mut cc, rtt, rtt);
            }
            let w = segs(&cc);
            assert!((w - 100.0).abs() <= 1.0, "{unit:?}: {w}");
        }
    }

    #[test]
    fn test_congestion_event_halves_and_recovery_exit_restores() {
        let mut cc = fast(CwndUnit::Packets, 100, 20.0);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 100_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 50_000);
        // No update while recovering.
        cc.d.base_rtt = BASE;
        cc.on_ack(&recovery_ack(BASE, MSS));
        assert_eq!(cc.cwnd(), 100_000);
        cc.on_recovery_exit(0);
        assert_eq!(cc.cwnd(), 50_000);
        cc.on_rto(&RtoEvent {
            in_flight: 50_000,
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.cwnd(), 1000);
        assert!(cc.in_slow_start());
    }

    #[test]
    fn test_cwr_completion_resumes_the_fast_rule() {
        // A local-congestion CWR (Linux tcp_enter_cwr → ssthresh) disables the rule like a
        // recovery does; its completion (tcp_complete_cwr → Open) must re-enable it, or FAST
        // stays on Reno's rules for the rest of the connection.
        let mut cc = fast(CwndUnit::Packets, 100, 20.0);
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 100_000,
            mss: MSS,
            ..Default::default()
        });
        cc.set_cwnd(60_000); // the stack's CWR cut: min(ssthresh, in flight + 1) at once
        assert!(!cc.d.enabled);
        cc.on_cwr_complete(0);
        assert!(cc.d.enabled, "the FAST rule runs again after CWR");
        assert_eq!(cc.cwnd(), 60_000.min(cc.ssthresh()));
        // With no queueing the rule adds γ·α = 10 segments per round again (a fresh round
        // first, as vegas_enable); Reno's rules would add one segment per round.
        let w0 = segs(&cc);
        d.steady(&mut cc, BASE, BASE);
        d.steady(&mut cc, BASE, BASE);
        assert!(segs(&cc) >= w0 + 15.0, "{w0} -> {}", segs(&cc));
    }

    /// FAST flows on the model bottleneck (10 Mbit/s, 1000 B: 1250 pkt/s; base RTT 40 ms:
    /// BDP 50 packets). Returns the mean backlog after `settle` s and each flow's queue
    /// estimate w·(1 − baseRTT/RTT) from its own view.
    fn run_bottleneck(flows: usize, alpha: f64, secs: u64, settle: u64) -> (f64, Vec<f64>) {
        let mut m = Bottleneck::new(10_000_000, MSS);
        for _ in 0..flows {
            m.add_flow(fast(CwndUnit::Packets, 2, alpha), 40 * MS, 0);
        }
        m.sample_every = 5 * MS;
        m.run_until(secs * SEC);
        let q = m.mean_backlog_from(settle * SEC);
        let est = m
            .flows
            .iter()
            .map(|f| {
                let w = f.cc.cwnd() as f64 / f64::from(MSS);
                w * (1.0 - f.cc.base_rtt() as f64 / f.cc.last_rtt() as f64)
            })
            .collect();
        eprintln!("FAST x{flows}, alpha {alpha}: backlog {q:.2}, per-flow w(1-base/RTT) {est:?}");
        (q, est)
    }

    #[test]
    fn test_bottleneck_one_flow_queues_alpha_packets() {
        // Equilibrium (Jin, Wei & Low 2004 §3): w·(1 − baseRTT/RTT) = α, i.e. α packets queued.
        let (q, est) = run_bottleneck(1, 20.0, 30, 10);
        assert!((q - 20.0).abs() <= 2.0, "backlog {q}");
        assert!((est[0] - 20.0).abs() <= 2.0, "{est:?}");
    }

    #[test]
    fn test_bottleneck_two_flows_queue_alpha_each() {
        let (q, est) = run_bottleneck(2, 20.0, 40, 20);
        assert!((q - 40.0).abs() <= 4.0, "backlog {q}");
        for e in &est {
            assert!((e - 20.0).abs() <= 2.0, "{est:?}");
        }
    }

    #[test]
    fn test_bottleneck_default_alpha_queues_200_packets() {
        // The default α = 200 (UNVERIFIED) on a 20 Mbit/s, 100 ms path (BDP 250 packets).
        let mut m = Bottleneck::new(20_000_000, MSS);
        m.add_flow(fast(CwndUnit::Packets, 10, 200.0), 100 * MS, 0);
        m.sample_every = 10 * MS;
        m.run_until(60 * SEC);
        let q = m.mean_backlog_from(30 * SEC);
        assert!((q - 200.0).abs() <= 10.0, "backlog {q}");
    }
}
