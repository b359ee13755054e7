//! BIC-TCP (Xu, Harfoush & Rhee, "Binary Increase Congestion Control for Fast, Long Distance
//! Networks", INFOCOM 2004; L: net/ipv4/tcp_bic.c; stacks-and-ccas.md A.3), in two forms:
//!
//! * **`linux`** — the `tcp_bic` module as in current kernels:
//!   - Increase per RTT, expressed as Linux's `cnt` (ACK units per +1 segment, `inc = cwnd/cnt`
//!     per RTT): `cwnd ≤ low_window` (14): Reno (`cnt = cwnd`). Below `W_max`: binary search,
//!     `dist = (W_max − cwnd)/B` (B = 4): `dist > Smax` (16) → `cnt = cwnd/Smax`;
//!     `dist ≤ 1` → `cnt = cwnd·smooth_part/B` (smooth_part 20: +0.2 per RTT); else
//!     `cnt = cwnd/dist`. At or above `W_max` (max probing): `cwnd < W_max + B` →
//!     `cwnd·smooth_part/B`; `cwnd < W_max + Smax·(B−1)` → `cnt = cwnd·(B−1)/(cwnd − W_max)`;
//!     else `cwnd/Smax`. While `W_max` is unknown (no loss yet, or after an RTO) `cnt ≤ 20`
//!     ("increase cwnd 5% per RTT"). Then the delayed-ACK compensation
//!     `cnt = cnt·16/delayed_ack`, where `delayed_ack` is an EWMA (gain 1/16, in 1/16 units,
//!     starting at 2 packets per ACK) of the packets acknowledged per ACK, updated only in the
//!     Open state (`bictcp_acked`: the state before the ACK, [`AckEvent::outside_open`];
//!     not in recovery either). The EWMA is integer, as in Linux:
//!     `delayed_ack += acked − delayed_ack/16`; with one packet per ACK it settles at 31/16, not
//!     1 (the truncated term stops it), so a flow with an ACK per segment grows ≈ 1.9× the
//!     nominal increments — a Linux property modelled on purpose. `cnt ≥ 1`.
//!   - Decrease: `W_max = cwnd·(1024+β)/2048` if `cwnd < W_max` and fast convergence is on,
//!     else `W_max = cwnd`; `ssthresh = max(basis·β/1024, 2)` with β = 819, or `basis/2` when
//!     `cwnd ≤ low_window` (`bictcp_recalc_ssthresh`).
//!   - RTO (`TCP_CA_Loss`): all BIC state reset (`bictcp_reset`): `W_max` unknown, EWMA back
//!     to 2.
//!   - `initial_ssthresh` (module parameter; 0 = keep the connection's): 0 in current kernels,
//!     100 in the 2.6.13-era module (stacks-and-ccas.md A.3 lists 100).
//! * **`2.6.10`** — the BIC built into Linux 2.6.8–2.6.10 (`sysctl_tcp_bic` = 1, the default):
//!   β = 7/8 (`BICTCP_1_OVER_BETA` = 8: `ssthresh = cwnd − cwnd/8`, `basis/2` at or below
//!   `low_window` 14), the same binary search with `BICTCP_MAX_INCREMENT` = 32 and
//!   `BICTCP_FUNC_OF_MIN_INCR` = 11 in place of Smax and smooth_part, no delayed-ACK
//!   compensation and no 5 % floor before the first loss (with `W_max` = 0 the max-probing
//!   branch gives `cnt = cwnd·3/cwnd` = 3 below 96 segments and `cwnd/32` above). Source, read
//!   for the facts only: the unmodified Linux 2.6.9 tree (HassebJ/linux-2.6.9, commit
//!   f5d8c49c "Initial commit with unmodified linux-2.6.9"): `include/net/tcp.h` defines
//!   `BICTCP_1_OVER_BETA` 8, `BICTCP_MAX_INCREMENT` 32, `BICTCP_FUNC_OF_MIN_INCR` 11
//!   ("log(B/Smin)/log(B/(B−1))+1") and `BICTCP_B` 4, and its `tcp_recalc_ssthresh` holds the
//!   BIC branch (fast convergence, `cwnd − cwnd/8` above `sysctl_tcp_bic_low_window`);
//!   `net/ipv4/tcp_input.c` sets `sysctl_tcp_bic_low_window = 14` and computes `cnt` in
//!   `bictcp_cwnd` (Reno `cnt = cwnd` at or below low_window, the binary search and max probing
//!   above, nothing else), which `reno_cong_avoid` uses as the counter limit; `init_bictcp`
//!   (W_max 0) runs at connection setup and in `tcp_enter_frto_loss` only, so a timeout keeps
//!   `W_max` (`tcp_enter_loss` just calls `tcp_recalc_ssthresh`; see `on_rto`). Linux 2.6.11
//!   (pwanbul/linux-2.6.11, commit 62a37f52, the full 2.6.11 source) still has
//!   `BICTCP_MAX_INCREMENT` 32 and `BICTCP_FUNC_OF_MIN_INCR` 11 in `tcp.h`, the same
//!   `bictcp_cwnd` line for line (`tcp_sock` for `tcp_opt`) and the same `tcp_enter_loss` (β
//!   now `sysctl_tcp_bic_beta` 819/1024 and the fast convergence fixed), and the LKML patch
//!   against `linux-2.6.10/include/net/tcp.h` (hunk `@@ -1280`) shows 2.6.10's
//!   fast-convergence lines as in 2.6.9; 2.6.10 itself was not read, but it lies between two
//!   releases with the same constants and BIC code. Fast convergence computed
//!   `W_max = cwnd·(2·8−1)/(8/2) = cwnd·15/4` instead of `cwnd·15/16` (Yee-Ting Li, "BicTCP
//!   Implementation Bug", LKML 21 Feb 2005; fixed in 2.6.11): [`BicParams::fast_convergence_bug`]
//!   (default on), the fix being `W_max = cwnd − cwnd/16`. After a loss below the previous
//!   maximum the buggy `W_max` is ~4× the window, so BIC probes with its maximum increment.
//!   2.6.9's `bictcp_cwnd` has no `cnt ≥ 1` floor (the model keeps one): `cnt` = 0 needs
//!   `cwnd/32` with 14 < cwnd < 32 and `W_max ≥ cwnd + 132`, which congestion avoidance cannot
//!   reach: every `W_max` comes with an `ssthresh` from the same window (a loss or the first
//!   timeout of a series: `W_max ≤ cwnd·15/4`, `ssthresh = cwnd·7/8`, or at most 52 and half
//!   the window at or below low_window), and congestion avoidance needs `cwnd > ssthresh`.
//!
//! Both: slow start below ssthresh, then the increase above with `aimd::increase_per_cnt` (packets:
//! Linux integer `cnt`; bytes: the same rules on the fractional window without rounding).
//! Parameter `ai_rule` ([`AiRule`]): `"linux-2.6"` is the counter of every Linux BIC before 4.0
//! (2.6.8–2.6.12 inline in `tcp_cong_avoid` with `bictcp_cwnd` as the limit, then
//! `bictcp_cong_avoid` and from 2.6.30 `tcp_cong_avoid_ai(tp, ca->cnt)`): the ACK counts once,
//! also with ABC on, and the window grows one segment per `cnt + 1` ACKs.
//! Simplification (as in `cubic.rs`): `cnt` is recomputed on every ACK, not at most every
//! `HZ/32` while cwnd is unchanged.

use crate::aimd::{cwnd_segments, decreased_ssthresh, increase_per_cnt, scaled_ssthresh};
use crate::cubic::UndoRule;
use crate::growth::{AiRule, CwndUnit, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, AI_RULE, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, RtoEvent};

/// Which BIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BicVariant {
    /// Current Linux `tcp_bic` module.
    #[default]
    Linux,
    /// Linux 2.6.10's built-in BIC (β = 7/8, the fast-convergence bug).
    Linux2610,
}

impl BicVariant {
    pub const CHOICES: &'static [&'static str] = &["linux", "2.6.10"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "linux" => Some(BicVariant::Linux),
            "2.6.10" => Some(BicVariant::Linux2610),
            _ => None,
        }
    }
}

/// BIC's parameters (stacks-and-ccas.md A.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BicParams {
    pub variant: BicVariant,
    /// Fast convergence (Linux module parameter `fast_convergence` = 1).
    pub fast_convergence: bool,
    /// 2.6.10 only: `W_max = cwnd·15/4` instead of `cwnd·15/16` (LKML Feb 2005).
    pub fast_convergence_bug: bool,
    /// `ssthresh` set at connection start, segments; 0 = keep the connection's initial value.
    pub initial_ssthresh: u32,
    pub ssthresh_from: SsthreshBasis,
    /// Growth-counter rule in the packets unit ([`AiRule`]; parameter `ai_rule`).
    pub ai_rule: AiRule,
    /// What an undo of a spurious reduction restores (parameter `undo_rule`): the prior window
    /// and ssthresh, or Linux 2.6.13–3.2 `bictcp_undo_cwnd`'s max(cwnd, `last_max_cwnd`)
    /// ([`UndoRule::WMax`]: `last_max_cwnd` is 0 after a timeout, which `bictcp_state` resets
    /// BIC on, so a timeout's window is not restored; "tcp: fix undo after RTO for BIC",
    /// N. Cardwell, Jan 2012, Linux 3.3, the companion of CUBIC's 5a45f0086a2).
    pub undo_rule: UndoRule,
}

impl Default for BicParams {
    fn default() -> Self {
        BicParams {
            variant: BicVariant::Linux,
            fast_convergence: true,
            fast_convergence_bug: true,
            initial_ssthresh: 0,
            ssthresh_from: SsthreshBasis::Auto,
            ai_rule: AiRule::Linux4,
            undo_rule: UndoRule::Prior,
        }
    }
}

/// Binary search goes to `(W_max + cwnd)/B`-ish points: `BICTCP_B` = 4 (L: tcp_bic.c).
const B: f64 = 4.0;
/// Reno below this window (`low_window` = 14, both variants).
const LOW_WINDOW: f64 = 14.0;
/// Linux module: `max_increment` (Smax) = 16, `smooth_part` = 20, β = 819/1024.
const LINUX_MAX_INCREMENT: f64 = 16.0;
const LINUX_SMOOTH_PART: f64 = 20.0;
const LINUX_BETA: u64 = 819;
const BETA_SCALE: u64 = 1024;
/// Linux module: `cnt ≤ 20` while `W_max` is unknown ("increase cwnd 5% per RTT").
const LINUX_CNT_MAX_NO_WMAX: f64 = 20.0;
/// 2.6.10: `BICTCP_MAX_INCREMENT` 32, `BICTCP_FUNC_OF_MIN_INCR` 11 and `BICTCP_1_OVER_BETA`
/// 8 (β = 7/8): `include/net/tcp.h` of Linux 2.6.9 and (the first two) 2.6.11 (module doc).
const V2610_MAX_INCREMENT: f64 = 32.0;
const V2610_FUNC_OF_MIN_INCR: f64 = 11.0;
const V2610_ONE_OVER_BETA: u64 = 8;
/// Delayed-ACK ratio EWMA in 1/16 (`ACK_RATIO_SHIFT` 4), initially 2 packets per ACK.
const ACK_RATIO_SHIFT: u32 = 4;
const DELAYED_ACK_INIT: u32 = 2 << ACK_RATIO_SHIFT;

/// BIC-TCP.
#[derive(Clone, Debug)]
pub struct Bic {
    p: BicParams,
    win: WindowState,
    /// `W_max` (Linux `last_max_cwnd`) in segments; 0 = unknown.
    w_max: f64,
    /// Packets per ACK ×16 (Linux `delayed_ack`).
    delayed_ack: u32,
    /// Last `cnt` used (for the time series).
    cnt: f64,
}

impl Bic {
    pub fn new(init: &CcInit, p: BicParams) -> Self {
        let mut win = WindowState::new(init);
        if p.initial_ssthresh > 0 {
            // Linux bictcp_init: snd_ssthresh = initial_ssthresh.
            win.set_ssthresh(u64::from(p.initial_ssthresh).saturating_mul(win.mss()));
        }
        Bic {
            p,
            win,
            w_max: 0.0,
            delayed_ack: DELAYED_ACK_INIT,
            cnt: 0.0,
        }
    }

    pub fn params(&self) -> &BicParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// `W_max` in segments (0 = unknown).
    pub fn w_max_segments(&self) -> f64 {
        self.w_max
    }
    /// The delayed-ACK ratio estimate, packets per ACK.
    pub fn delayed_ack_ratio(&self) -> f64 {
        f64::from(self.delayed_ack) / f64::from(1u32 << ACK_RATIO_SHIFT)
    }

    fn integer(&self) -> bool {
        self.win.growth().unit == CwndUnit::Packets
    }

    /// Linux `bictcp_update` (current module) or 2.6.10's `bictcp_cwnd`: ACK units per +1
    /// segment at window `c` segments.
    fn compute_cnt(&self, c: f64) -> f64 {
        let int = self.integer();
        let q = |x: f64| if int { x.floor() } else { x };
        let (max_inc, smooth) = match self.p.variant {
            BicVariant::Linux => (LINUX_MAX_INCREMENT, LINUX_SMOOTH_PART),
            BicVariant::Linux2610 => (V2610_MAX_INCREMENT, V2610_FUNC_OF_MIN_INCR),
        };
        // "start off normal": Reno, returned before the caps below.
        if c <= LOW_WINDOW {
            return c;
        }
        let w_max = self.w_max;
        let mut cnt = if c < w_max {
            // Binary search increase.
            let dist = q((w_max - c) / B);
            if dist > max_inc {
                q(c / max_inc)
            } else if dist <= 1.0 {
                q(c * smooth / B)
            } else {
                q(c / dist)
            }
        } else if c - w_max < B {
            // Max probing: slow start of the probe. (Distances, not sums, so that huge windows
            // cannot round `c − W_max` to 0 in the division below.)
            q(c * smooth / B)
        } else if c - w_max < max_inc * (B - 1.0) {
            q(c * (B - 1.0) / (c - w_max))
        } else {
            q(c / max_inc)
        };
        if self.p.variant == BicVariant::Linux {
            if w_max <= 0.0 && cnt > LINUX_CNT_MAX_NO_WMAX {
                cnt = LINUX_CNT_MAX_NO_WMAX;
            }
            // Delayed-ACK compensation: cnt = (cnt << 4) / delayed_ack.
            cnt = q(cnt * f64::from(1u32 << ACK_RATIO_SHIFT) / f64::from(self.delayed_ack.max(1)));
        }
        // "cannot be zero".
        cnt.max(1.0)
    }

    /// `bictcp_recalc_ssthresh` (and 2.6.10's `tcp_recalc_ssthresh` BIC branch).
    fn reduce(&mut self, in_flight: u64, peer_window: u64) {
        let int = self.integer();
        let q = |x: f64| if int { x.floor() } else { x };
        let c = cwnd_segments(&self.win);
        let below = self.p.fast_convergence && c < self.w_max;
        self.w_max = match (self.p.variant, below) {
            (_, false) => c,
            (BicVariant::Linux, true) => {
                q(c * (BETA_SCALE + LINUX_BETA) as f64 / (2 * BETA_SCALE) as f64)
            }
            // LKML Feb 2005: (cwnd·(2·8−1))/(8/2) = cwnd·15/4.
            (BicVariant::Linux2610, true) if self.p.fast_convergence_bug => q(c * 15.0 / 4.0),
            // The fix (2.6.11): cwnd − cwnd/(2·8) = cwnd·15/16.
            (BicVariant::Linux2610, true) => c - q(c / 16.0),
        };
        let basis = self
            .p
            .ssthresh_from
            .bytes(&self.win, in_flight, peer_window);
        let s = if c <= LOW_WINDOW {
            scaled_ssthresh(&self.win, basis, 1, 2)
        } else {
            match self.p.variant {
                BicVariant::Linux => scaled_ssthresh(&self.win, basis, LINUX_BETA, BETA_SCALE),
                BicVariant::Linux2610 => {
                    // cwnd − cwnd/8 (integer in the packets unit).
                    decreased_ssthresh(&self.win, basis, 1, V2610_ONE_OVER_BETA)
                }
            }
        };
        self.win.set_reduced_ssthresh(self.p.ssthresh_from, s);
        self.win.reset_counters();
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        // bictcp_acked: delayed-ACK EWMA, Open state only (the 2.6.10 BIC had none).
        if self.p.variant == BicVariant::Linux
            && !ev.in_recovery
            && !ev.outside_open
            && ev.packets_acked > 0
        {
            self.delayed_ack = self
                .delayed_ack
                .saturating_add(ev.packets_acked)
                .saturating_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
        let Some(credit) = self.win.grow_slow_start(ev) else {
            return;
        };
        // Linux 2.x counts the ACK once in congestion avoidance, with ABC on too (AiRule).
        let credit = self.p.ai_rule.credit(self.win.growth().unit, credit);
        self.cnt = self.compute_cnt(cwnd_segments(&self.win));
        increase_per_cnt(&mut self.win, self.p.ai_rule, credit, self.cnt);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.reduce(ev.in_flight, ev.peer_window);
    }

    fn on_undo(&mut self, _now: u64, prior_cwnd: u64, prior_ssthresh: u64) {
        if self.p.undo_rule == UndoRule::WMax {
            // Linux 2.6.13–3.2 bictcp_undo_cwnd: max(cwnd, last_max_cwnd); the stack restores
            // the larger ssthresh (tcp_undo_cwr).
            let w_max = (self.w_max * self.win.mss() as f64) as u64; // saturating conversion
            let c = self.win.cwnd().max(w_max);
            self.win.set_cwnd(c);
        } else {
            self.win.set_cwnd(prior_cwnd);
        }
        self.win.set_ssthresh(prior_ssthresh);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        if self.p.ssthresh_from.reduces_on_timeout(ev) {
            // tcp_enter_loss computes ssthresh first (RFC 5681: held on repeated timeouts).
            self.reduce(ev.in_flight, ev.peer_window);
        }
        if self.p.variant == BicVariant::Linux {
            // bictcp_state(TCP_CA_Loss) → bictcp_reset.
            self.w_max = 0.0;
            self.delayed_ack = DELAYED_ACK_INIT;
        }
        // 2.6.10 keeps `W_max` (as the reduction above left it, or unchanged on a repeated
        // timeout): Linux 2.6.9's and 2.6.11's `tcp_enter_loss` (net/ipv4/tcp_input.c) calls
        // `tcp_recalc_ssthresh` but not `init_bictcp`, which runs only at connection setup and
        // in `tcp_enter_frto_loss` (F-RTO, `sysctl_tcp_frto` = 0 by default); the module's
        // reset on TCP_CA_Loss came with tcp_bic.c (2.6.13).
        self.cnt = 0.0;
        self.win.on_timeout();
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let vars = [
            ("w_max", self.w_max),
            ("cnt", self.cnt),
            ("delayed_ack", self.delayed_ack_ratio()),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "variant",
        kind: ParamKind::Choice(BicVariant::CHOICES),
        default: "linux",
        doc: "\"linux\" (current tcp_bic: β 819/1024, Smax 16, smooth_part 20, delayed-ACK \
              compensation) or \"2.6.10\" (built-in BIC of Linux 2.6.8–2.6.10: β 7/8, max \
              increment 32 and func-of-min-incr 11 as in 2.6.9's and 2.6.11's tcp.h)",
    },
    ParamInfo {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: "true",
        doc: "W_max below the window at a loss under the previous W_max (Linux fast_convergence)",
    },
    ParamInfo {
        name: "fast_convergence_bug",
        kind: ParamKind::Bool,
        default: "true",
        doc: "variant 2.6.10 only: W_max = cwnd·15/4 instead of cwnd·15/16 (LKML Feb 2005, \
              fixed in 2.6.11)",
    },
    ParamInfo {
        name: "initial_ssthresh",
        kind: ParamKind::Int,
        default: "0",
        doc: "ssthresh at connection start, segments; 0 keeps the connection's (current \
              Linux 0, the 2.6.13-era module 100)",
    },
    SSTHRESH_FROM,
    AI_RULE,
    ParamInfo {
        name: "undo_rule",
        kind: ParamKind::Choice(UndoRule::CHOICES),
        default: "prior",
        doc: "what an undo of a spurious reduction restores: \"prior\" (the window and \
              ssthresh before it) or \"w_max\" (Linux 2.6.13-3.2 bictcp_undo_cwnd: max(cwnd, \
              last_max_cwnd), 0 after a timeout)",
    },
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let params = BicParams {
        variant: BicVariant::from_name(p.choice("variant")).unwrap_or_default(),
        fast_convergence: p.bool("fast_convergence"),
        fast_convergence_bug: p.bool("fast_convergence_bug"),
        initial_ssthresh: p.int_in("initial_ssthresh", 0, i64::from(u32::MAX))?,
        ssthresh_from: p.ssthresh_from(),
        ai_rule: p.ai_rule(),
        undo_rule: UndoRule::from_name(p.choice("undo_rule")).unwrap_or_default(),
    };
    Ok(Box::new(Bic::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, loss_episode, AckSpacing, Driver, MSS, RTT};
    use crate::CwndUnit;

    fn bic(unit: CwndUnit, cwnd_seg: u64, p: BicParams) -> Bic {
        Bic::new(&cc_init(MSS, unit, 0, cwnd_seg, u64::MAX), p)
    }

    fn segs(bytes: u64) -> f64 {
        bytes as f64 / f64::from(MSS)
    }

    fn loss(cc: &mut Bic) {
        loss_episode(cc, 0, MSS);
    }

    /// Nominal BIC increment per RTT at window `w` with `W_max` = `w_max` (A.3 and the
    /// INFOCOM paper): Reno at or below 14; below W_max min((W_max − w)/B, Smax), or
    /// B/smooth_part when that distance is ≤ 1; above W_max: B/smooth_part while within B of
    /// it, (w − W_max)/(B − 1) while within Smax·(B − 1), else Smax.
    fn nominal_inc(w: f64, w_max: f64, smax: f64, smooth: f64) -> f64 {
        if w <= 14.0 {
            1.0
        } else if w < w_max {
            let d = ((w_max - w) / 4.0).floor();
            if d > smax {
                smax
            } else if d <= 1.0 {
                4.0 / smooth
            } else {
                d
            }
        } else if w < w_max + 4.0 {
            4.0 / smooth
        } else if w < w_max + smax * 3.0 {
            (w - w_max) / 3.0
        } else {
            smax
        }
    }

    /// Sets W_max to 1000 segments with one loss at 1000, then places cwnd at `w` and measures
    /// the growth over one round with ACKs covering `per_ack` segments.
    fn growth_at(unit: CwndUnit, w: u64, per_ack: u32, p: BicParams) -> f64 {
        let mut cc = bic(unit, 1000, p);
        loss(&mut cc);
        assert_eq!(cc.w_max_segments(), 1000.0);
        let mut d = Driver::new(MSS);
        cc.set_cwnd(w * u64::from(MSS));
        cc.set_ssthresh(2 * u64::from(MSS));
        // One round to settle the delayed-ACK EWMA (its fixed point is reached within ~30 ACKs).
        d.round(&mut cc, RTT, RTT, per_ack, AckSpacing::Spread);
        cc.set_cwnd(w * u64::from(MSS));
        let before = segs(cc.cwnd());
        segs(d.round(&mut cc, RTT, RTT, per_ack, AckSpacing::Spread)) - before
    }

    #[test]
    fn test_avoidance_linux26_rule_counts_acks_to_cnt_plus_one() {
        // Linux 2.6 BIC (2.6.10 variant: no delayed-ACK compensation, cnt = cwnd at or below
        // low_window 14): at cwnd 10 the 11th ACK adds the segment, also when each ACK covers
        // two segments and ABC is on (2.6.16: tcp_abc only changed slow start and Reno). The
        // 4.0 rule counts the two segments of each ACK: the 5th ACK.
        let p = |ai_rule| BicParams {
            variant: BicVariant::Linux2610,
            ai_rule,
            ..BicParams::default()
        };
        let ev = crate::testkit::delayed_ack(MSS);
        for (rule, abc, acks) in [
            (AiRule::Linux26, 1, 11),
            (AiRule::Linux26, 0, 11),
            (AiRule::Linux4, 1, 5),
            (AiRule::Linux4, 0, 10),
        ] {
            let init = cc_init(MSS, CwndUnit::Packets, abc, 10, 2 * u64::from(MSS));
            let mut cc = Bic::new(&init, p(rule));
            let mut n = 0;
            while cc.cwnd() == 10 * u64::from(MSS) {
                cc.on_ack(&ev);
                n += 1;
            }
            assert_eq!(
                (n, cc.cwnd()),
                (acks, 11 * u64::from(MSS)),
                "{rule:?} abc={abc}"
            );
        }
    }

    #[test]
    fn test_avoidance_delayed_acks_binary_search_increments_at_wmax_distances() {
        // With an ACK per two segments the EWMA is exactly 2 packets per ACK and compensates
        // the halved ACK count: the increments per RTT are BIC's nominal ones (A.3). The window
        // grows by at most 16 segments in the round, which changes the rule's inputs slightly:
        // tolerance = the nominal increment at the round's end vs start, plus one segment for
        // Linux's integer cnt and whole-segment cwnd.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for &w in &[
                400u64, 900, 960, 980, 990, 997, 1002, 1010, 1030, 1100, 2000,
            ] {
                let got = growth_at(unit, w, 2, BicParams::default());
                let want = nominal_inc(w as f64, 1000.0, 16.0, 20.0);
                let end = nominal_inc(w as f64 + want, 1000.0, 16.0, 20.0);
                let tol = (end - want).abs() + 1.0;
                assert!(
                    (got - want).abs() <= tol,
                    "{unit:?} w={w}: grew {got}, nominal {want} (tol {tol})"
                );
                eprintln!("bic {unit:?} W_max 1000, w {w}: grew {got:.2}/RTT, nominal {want:.2}");
            }
        }
    }

    #[test]
    fn test_avoidance_ack_per_segment_ewma_sticks_at_31_sixteenths() {
        // Linux's integer EWMA: delayed_ack += 1 − delayed_ack/16 from 32 reaches 31 and stays
        // (31/16 = 1); the compensation then divides cnt by 31/16, so an ACK-per-segment flow
        // grows about 31/16 times the nominal increment. At 400 segments (W_max 1000, far
        // below: Smax = 16 per RTT): cnt = ⌊⌊400/16⌋·16/31⌋ = 12 ACKs per segment, and 13 once
        // the window passes 416, so the round's 400 ACKs add between 400/13 ≈ 30.8 and
        // 400/12 ≈ 33.3 segments (nominal: 16).
        let mut cc = bic(CwndUnit::Packets, 1000, BicParams::default());
        loss(&mut cc);
        let mut d = Driver::new(MSS);
        cc.set_cwnd(400_000);
        d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread);
        assert_eq!(cc.delayed_ack_ratio(), 31.0 / 16.0);
        let g = growth_at(CwndUnit::Packets, 400, 1, BicParams::default());
        assert!((30.0..=34.0).contains(&g), "{g}");
        // The same window with delayed ACKs (EWMA exactly 2): the nominal 16.
        let g = growth_at(CwndUnit::Packets, 400, 2, BicParams::default());
        assert!((g - 16.0).abs() <= 1.0, "{g}");
    }

    #[test]
    fn test_delayed_ack_ewma_samples_open_state_acks_only() {
        // bictcp_acked (every Linux BIC): delayed_ack += acked − delayed_ack/16 only when the
        // ACK arrives in the Open state. From 32 (2 per ACK) an Open ACK of 40 packets gives
        // 32 + 40 − 2 = 70; the same ACK outside Open (Disorder, the end of a recovery) or in
        // recovery leaves 32.
        let ev = |outside_open, in_recovery| AckEvent {
            bytes_acked: 40 * u64::from(MSS),
            packets_acked: 40,
            packets_delivered: 40,
            outside_open,
            in_recovery,
            mss: MSS,
            ..Default::default()
        };
        for (outside, rec, ratio) in [
            (false, false, 70.0 / 16.0),
            (true, false, 2.0),
            (false, true, 2.0),
        ] {
            let mut cc = bic(CwndUnit::Packets, 100, BicParams::default());
            cc.on_ack(&ev(outside, rec));
            assert_eq!(cc.delayed_ack_ratio(), ratio, "outside={outside} rec={rec}");
        }
    }

    #[test]
    fn test_congestion_event_beta_819_and_fast_convergence() {
        // Linux: ssthresh = ⌊cwnd·819/1024⌋; W_max = cwnd on the first loss, then
        // ⌊cwnd·1843/2048⌋ after a loss below it.
        let mut cc = bic(CwndUnit::Packets, 1000, BicParams::default());
        loss(&mut cc);
        assert_eq!(cc.ssthresh(), 799_000);
        assert_eq!(cc.cwnd(), 799_000);
        assert_eq!(cc.w_max_segments(), 1000.0);
        loss(&mut cc);
        assert_eq!(cc.w_max_segments(), (799.0 * 1843.0 / 2048.0f64).floor());
        assert_eq!(cc.ssthresh(), 799 * 819 / 1024 * 1000);
        // At or below low_window: halve.
        let mut cc = bic(CwndUnit::Packets, 14, BicParams::default());
        loss(&mut cc);
        assert_eq!(cc.ssthresh(), 7_000);
        // Bytes: β·FlightSize.
        let mut cc = bic(CwndUnit::Bytes, 1000, BicParams::default());
        loss(&mut cc);
        assert_eq!(cc.ssthresh(), 1_000_000 * 819 / 1024);
    }

    fn v2610(bug: bool) -> BicParams {
        BicParams {
            variant: BicVariant::Linux2610,
            fast_convergence_bug: bug,
            ..Default::default()
        }
    }

    #[test]
    fn test_congestion_event_2610_beta_seven_eighths_and_bug() {
        // 2.6.10: ssthresh = cwnd − cwnd/8.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = bic(unit, 1000, v2610(true));
            loss(&mut cc);
            assert_eq!(cc.ssthresh(), 875_000, "{unit:?}");
            assert_eq!(cc.w_max_segments(), 1000.0);
            // Second loss below W_max at 875: buggy W_max = 875·15/4 = 3281.25.
            loss(&mut cc);
            let want = if unit == CwndUnit::Packets {
                3281.0
            } else {
                3281.25
            };
            assert_eq!(cc.w_max_segments(), want, "{unit:?}");
            // The fix: 875 − 875/16.
            let mut cc = bic(unit, 1000, v2610(false));
            loss(&mut cc);
            loss(&mut cc);
            let want = if unit == CwndUnit::Packets {
                875.0 - 54.0
            } else {
                875.0 * 15.0 / 16.0
            };
            assert_eq!(cc.w_max_segments(), want, "{unit:?}");
        }
    }

    #[test]
    fn test_avoidance_2610_bug_probes_at_max_increment() {
        // After the second loss (cwnd 1000 → 875 → 766) the buggy W_max (3281) is far above
        // the window, so the binary search uses the maximum increment, 32 per RTT, with an ACK
        // per segment (2.6.10 had no delayed-ACK compensation). With the fix W_max = 821 and the search
        // moves (W_max − cwnd)/4 per RTT: 13 at the round's start, 10 at its end (≈ 779).
        let mut cc = bic(CwndUnit::Packets, 1000, v2610(true));
        loss(&mut cc);
        loss(&mut cc);
        let w0 = segs(cc.cwnd());
        assert_eq!(w0, 766.0);
        let mut d = Driver::new(MSS);
        let g = segs(d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread)) - w0;
        // cnt = ⌊c/32⌋ is 23 at 766 and 24 from 768 on: c/cnt ∈ [32, 33.4], ± 1 segment.
        assert!((31.0..=34.4).contains(&g), "bug: grew {g}");

        let mut cc = bic(CwndUnit::Packets, 1000, v2610(false));
        loss(&mut cc);
        loss(&mut cc);
        assert_eq!(cc.w_max_segments(), 821.0);
        let mut d = Driver::new(MSS);
        let g = segs(d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread)) - w0;
        assert!((10.0 - 1.0..=13.0 + 1.0).contains(&g), "fixed: grew {g}");
    }

    #[test]
    fn test_avoidance_before_first_loss_grows_at_least_five_percent() {
        // Linux: cnt ≤ 20 while W_max is unknown; with delayed ACKs (EWMA 2) that is ≥ 5 %
        // per RTT. At 1000 segments the max-probing rule from W_max = 0 gives Smax = 16 per
        // RTT, below 5 % = 50: the floor must win.
        let mut cc = bic(CwndUnit::Packets, 1000, BicParams::default());
        cc.set_ssthresh(2 * u64::from(MSS));
        let mut d = Driver::new(MSS);
        let w = segs(d.round(&mut cc, RTT, RTT, 2, AckSpacing::Spread));
        assert!((w - 1050.0).abs() <= 1.0, "{w}");
    }

    #[test]
    fn test_rto_resets_wmax_and_collapses_window() {
        // The module (bictcp_state on TCP_CA_Loss) forgets W_max; 2.6.10's tcp_enter_loss
        // recomputes it in tcp_recalc_ssthresh and keeps it: after a loss at 100 (W_max 100,
        // cwnd 100 − 12 = 88) the timeout at 88 < 100 sets the buggy 88·15/4 = 330 (the fix:
        // 88 − 5 = 83) and ssthresh 88 − 11 = 77; a second timeout of the series (no
        // reduction) keeps them.
        for (variant, bug, want) in [
            (BicVariant::Linux, true, 0.0),
            (BicVariant::Linux2610, true, 330.0),
            (BicVariant::Linux2610, false, 83.0),
        ] {
            let p = BicParams {
                variant,
                fast_convergence_bug: bug,
                ..Default::default()
            };
            let mut cc = bic(CwndUnit::Packets, 100, p);
            loss(&mut cc);
            let rto = |backoff_count| RtoEvent {
                in_flight: 80_000,
                backoff_count,
                mss: MSS,
                ..Default::default()
            };
            cc.on_rto(&rto(1));
            assert_eq!(cc.cwnd(), u64::from(MSS));
            assert_eq!(cc.w_max_segments(), want, "{variant:?} bug={bug}");
            assert!(cc.ssthresh() >= 2 * u64::from(MSS));
            if variant == BicVariant::Linux2610 {
                assert_eq!(cc.ssthresh(), 77 * u64::from(MSS));
                cc.on_rto(&rto(2));
                assert_eq!(cc.w_max_segments(), want);
                assert_eq!(cc.ssthresh(), 77 * u64::from(MSS));
            }
        }
    }

    #[test]
    fn test_timeout_in_kept_recovery_leaves_2610_wmax_and_ssthresh() {
        // Linux 2.6.10's tcp_enter_loss does not call tcp_recalc_ssthresh inside a recovery
        // short of its point (RtoEvent::keeps_ssthresh), and its built-in BIC has no Loss-state
        // reset: W_max and ssthresh stay as the loss at 100 left them (100, 88). Recomputed
        // instead, they would become 83 (fast convergence at 88 < 100) and 77.
        let p = BicParams {
            variant: BicVariant::Linux2610,
            fast_convergence_bug: false,
            ..Default::default()
        };
        for (keeps, w_max, ssthresh) in [(true, 100.0, 88), (false, 83.0, 77)] {
            let mut cc = bic(CwndUnit::Packets, 100, p);
            loss(&mut cc);
            assert_eq!(cc.w_max_segments(), 100.0);
            cc.on_rto(&RtoEvent {
                in_flight: 80_000,
                backoff_count: 1,
                mss: MSS,
                keeps_ssthresh: keeps,
                ..Default::default()
            });
            assert_eq!(cc.cwnd(), u64::from(MSS));
            assert_eq!(cc.w_max_segments(), w_max, "keeps={keeps}");
            assert_eq!(cc.ssthresh(), ssthresh * u64::from(MSS), "keeps={keeps}");
        }
    }

    #[test]
    fn test_avoidance_2610_increments_at_wmax_distances() {
        // 2.6.10 (2.6.9/2.6.11 include/net/tcp.h): Smax = BICTCP_MAX_INCREMENT 32 and the
        // smooth part BICTCP_FUNC_OF_MIN_INCR 11 (+4/11 ≈ 0.36 segment per RTT within B of
        // W_max), no delayed-ACK compensation, so with an ACK per segment the increments per
        // RTT are the nominal ones. 16/20 (the module's) would fail at 800 (16 vs 32), 1200
        // (16 vs 32) and over the 11 rounds near W_max below (0.2 vs 0.36 per RTT). Windows of
        // at least 800 segments, so that the round's own growth (≤ 32) dilutes the bytes
        // unit's per-ACK increment (32·MSS/cwnd) by less than a segment.
        let p = BicParams {
            variant: BicVariant::Linux2610,
            ..Default::default()
        };
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for &w in &[800u64, 900, 960, 990, 997, 1002, 1010, 1030, 1200, 2000] {
                let got = growth_at(unit, w, 1, p);
                let want = nominal_inc(w as f64, 1000.0, 32.0, 11.0);
                let end = nominal_inc(w as f64 + want, 1000.0, 32.0, 11.0);
                let tol = (end - want).abs() + 1.0;
                assert!(
                    (got - want).abs() <= tol,
                    "{unit:?} w={w}: grew {got}, nominal {want} (tol {tol})"
                );
            }
            // Within B of W_max the increment is 4/11 per RTT, not the module's 4/20: over 11
            // rounds at 997 the window gains 4 segments (±1), the module's rule 2.2.
            let mut cc = bic(unit, 1000, p);
            loss(&mut cc);
            cc.set_cwnd(997 * u64::from(MSS));
            cc.set_ssthresh(2 * u64::from(MSS));
            let mut d = Driver::new(MSS);
            for _ in 0..11 {
                d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread);
            }
            let g = segs(cc.cwnd()) - 997.0;
            assert!(
                (3.0..=5.0).contains(&g),
                "{unit:?}: 11 rounds near W_max grew {g}"
            );
        }
    }

    #[test]
    fn test_avoidance_2610_before_first_loss_no_floor() {
        // 2.6.10 (W_max 0, no 5 % floor): below 96 segments the max-probing branch gives
        // cnt = cwnd·3/cwnd = 3, a third of the window per RTT with an ACK per segment; at
        // 1000 segments cnt = 1000/32 = 31: +32 per RTT (the module: ≥ 5 %, 50).
        let p = BicParams {
            variant: BicVariant::Linux2610,
            ..Default::default()
        };
        for (w0, lo, hi) in [(60u64, 76.0, 82.0), (1000, 1030.0, 1034.0)] {
            let mut cc = bic(CwndUnit::Packets, w0, p);
            cc.set_ssthresh(2 * u64::from(MSS));
            let mut d = Driver::new(MSS);
            let w = segs(d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread));
            assert!((lo..=hi).contains(&w), "from {w0}: {w}");
        }
    }

    #[test]
    fn test_undo_after_rto_w_max_rule_keeps_the_collapsed_window() {
        // Linux 2.6.13-3.2: the timeout reset last_max_cwnd, so bictcp_undo_cwnd gives
        // max(cwnd, 0) = cwnd (linux-2.6.16/undo-dsack-rto.pkt); "prior" restores the window.
        let rto = RtoEvent {
            in_flight: 3 * u64::from(MSS),
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        };
        for (rule, want) in [(UndoRule::WMax, 2), (UndoRule::Prior, 3)] {
            let p = BicParams {
                undo_rule: rule,
                initial_ssthresh: 100,
                ..Default::default()
            };
            let mut cc = bic(CwndUnit::Packets, 3, p);
            cc.on_rto(&rto);
            assert_eq!(cc.cwnd(), u64::from(MSS));
            cc.set_cwnd(2 * u64::from(MSS));
            cc.on_undo(0, 3 * u64::from(MSS), 100 * u64::from(MSS));
            assert_eq!(cc.cwnd(), want * u64::from(MSS), "{rule:?}");
            assert_eq!(cc.ssthresh(), 100 * u64::from(MSS), "{rule:?}");
        }
        // After a fast-retransmit reduction W_max is known and the rule restores at least it.
        let p = BicParams {
            undo_rule: UndoRule::WMax,
            ..Default::default()
        };
        let mut cc = bic(CwndUnit::Packets, 100, p);
        loss(&mut cc);
        let w_max = cc.w_max_segments();
        assert!(w_max > 0.0 && (cc.cwnd() as f64) < w_max * f64::from(MSS));
        cc.on_undo(0, 100 * u64::from(MSS), u64::MAX);
        assert_eq!(cc.cwnd(), (w_max * f64::from(MSS)) as u64);
    }

    #[test]
    fn test_initial_ssthresh_param_sets_threshold() {
        let p = BicParams {
            initial_ssthresh: 100,
            ..Default::default()
        };
        let cc = bic(CwndUnit::Packets, 10, p);
        assert_eq!(cc.ssthresh(), 100_000);
        let cc = bic(CwndUnit::Packets, 10, BicParams::default());
        assert_eq!(cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn test_slow_start_ack_below_ssthresh_doubles() {
        let mut cc = bic(CwndUnit::Bytes, 10, BicParams::default());
        let mut d = Driver::new(MSS);
        assert_eq!(d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread), 20_000);
    }
}
