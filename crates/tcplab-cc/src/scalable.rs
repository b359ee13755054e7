//! Scalable TCP (Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area Networks",
//! ACM CCR 33(2), 2003; L: net/ipv4/tcp_scalable.c; stacks-and-ccas.md A.6).
//!
//! Kelly: `cwnd += a` per acknowledged segment (a = 0.01) and `cwnd −= b·cwnd` on a
//! congestion event (b = 0.125): multiplicative increase, so the time to recover from a loss is
//! a constant number of RTTs whatever the rate, and the response function is `w ∝ 1/p`.
//! Linux: `tcp_cong_avoid_ai(tp, min(cwnd, ai_cnt), acked)` — `+1 segment per min(cwnd, ai_cnt)`
//! ACK units, i.e. Reno below `ai_cnt` segments and `1/ai_cnt` per ACK unit above — and
//! `ssthresh = max(cwnd − cwnd/8, 2)`.
//!
//! * `ai_cnt` = 50 (Linux up to 5.6: "We use 50 instead of 100 to account for delayed ack":
//!   counted per ACK, an ACK per two segments gives 1/100 per segment = Kelly's a). Linux 5.7
//!   (Pengcheng Yang, March 2020) counts acknowledged packets and uses 100; with this crate's
//!   ABC setting (`abc_limit > 0`, packets counted) that is `ai_cnt = 100`.
//!   Growth per RTT with one ACK per segment: `W/ai_cnt` segments, ×1.02 per RTT at 50; with
//!   an ACK per two segments and per-ACK counting ×1.01.
//! * `legacy_window` (default 0 = none, Linux): Kelly's "legacy" regime — at or below this
//!   window Scalable behaves as standard TCP, including the halving on loss (Kelly §2; the value
//!   16 sometimes quoted is **UNVERIFIED**). Linux only has the increase side of it (Reno growth
//!   below `ai_cnt`) and always decreases by 1/8.
//! * RTO: `ssthresh` as on a congestion event for the first timeout, held on repeated ones;
//!   cwnd 1 segment.
//! * `ai_rule` ([`AiRule`]): `"linux-2.6"` is the counter of Linux's Scalable before 4.0 — the
//!   2.6.13–2.6.29 `tcp_scalable_cong_avoid` counted every ACK once (`snd_cwnd_cnt++`) and
//!   added a segment when the counter exceeded min(cwnd, 50), i.e. one per min(cwnd, 50) + 1
//!   ACKs, with `tcp_abc` on as well (ABC changed only `tcp_slow_start` and
//!   `tcp_reno_cong_avoid`); 2.6.30 moved the same rule into `tcp_cong_avoid_ai` (758ce5c8d11),
//!   4.0 made it count acknowledged packets (814d488c612). Read in the Linux history for the
//!   facts, nothing copied.

use crate::aimd::{self, decreased_ssthresh, increase_per_cnt, reduce_on_timeout, scaled_ssthresh};
use crate::growth::{AiRule, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, AI_RULE, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, RtoEvent};

/// Scalable TCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalableParams {
    /// ACK units per +1 segment above this many segments (Linux `TCP_SCALABLE_AI_CNT`).
    pub ai_cnt: u32,
    /// Standard TCP at or below this window, segments; 0 = none (Linux).
    pub legacy_window: u32,
    pub ssthresh_from: SsthreshBasis,
    /// Growth-counter rule in the packets unit ([`AiRule`]; parameter `ai_rule`).
    pub ai_rule: AiRule,
}

impl Default for ScalableParams {
    fn default() -> Self {
        ScalableParams {
            ai_cnt: 50,
            legacy_window: 0,
            ssthresh_from: SsthreshBasis::Auto,
            ai_rule: AiRule::Linux4,
        }
    }
}

/// Linux `TCP_SCALABLE_MD_SCALE` = 3: `cwnd − cwnd/8` (Kelly's b = 0.125).
const MD_DEN: u64 = 8;

/// Scalable TCP.
#[derive(Clone, Debug)]
pub struct Scalable {
    p: ScalableParams,
    win: WindowState,
}

impl Scalable {
    pub fn new(init: &CcInit, p: ScalableParams) -> Self {
        Scalable {
            p,
            win: WindowState::new(init),
        }
    }

    pub fn params(&self) -> &ScalableParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }

    fn legacy(&self) -> bool {
        aimd::cwnd_segments(&self.win) <= f64::from(self.p.legacy_window)
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        let Some(credit) = self.win.grow_slow_start(ev) else {
            return;
        };
        if self.legacy() {
            self.win.reno_increase(credit);
        } else {
            // +1 per min(cwnd, ai_cnt) ACK units (per that + 1 ACKs under Linux 2.x's counter).
            let cnt = aimd::cwnd_segments(&self.win).min(f64::from(self.p.ai_cnt.max(1)));
            let credit = self.p.ai_rule.credit(self.win.growth().unit, credit);
            increase_per_cnt(&mut self.win, self.p.ai_rule, credit, cnt);
        }
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        let basis = self
            .p
            .ssthresh_from
            .bytes(&self.win, ev.in_flight, ev.peer_window);
        let s = if self.legacy() {
            scaled_ssthresh(&self.win, basis, 1, 2)
        } else {
            // basis − basis/8, Linux integer: cwnd − (cwnd >> 3).
            decreased_ssthresh(&self.win, basis, 1, MD_DEN)
        };
        self.win.set_reduced_ssthresh(self.p.ssthresh_from, s);
        self.win.reset_counters();
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        reduce_on_timeout(self, self.p.ssthresh_from, ev);
        self.win.on_timeout();
    }

    crate::growth::delegate_window!();
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "ai_cnt",
        kind: ParamKind::Int,
        default: "50",
        doc: "ACK units per +1 segment above that window (Linux TCP_SCALABLE_AI_CNT: 50 per ACK \
              up to 5.6, 100 per packet from 5.7), ≥ 1",
    },
    ParamInfo {
        name: "legacy_window",
        kind: ParamKind::Int,
        default: "0",
        doc: "standard TCP (Reno increase, halving) at or below this window, segments; 0 = \
              none as Linux (Kelly's legacy window; 16 is UNVERIFIED)",
    },
    SSTHRESH_FROM,
    AI_RULE,
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let params = ScalableParams {
        ai_cnt: p.int_in("ai_cnt", 1, i64::from(u32::MAX))?,
        legacy_window: p.int_in("legacy_window", 0, i64::from(u32::MAX))?,
        ssthresh_from: p.ssthresh_from(),
        ai_rule: p.ai_rule(),
    };
    Ok(Box::new(Scalable::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, AckSpacing, Driver, MSS, RTT};
    use crate::CwndUnit;

    fn scalable(unit: CwndUnit, abc_limit: u32, cwnd_seg: u64, p: ScalableParams) -> Scalable {
        Scalable::new(
            &cc_init(MSS, unit, abc_limit, cwnd_seg, 2 * u64::from(MSS)),
            p,
        )
    }

    fn segs(b: u64) -> f64 {
        b as f64 / f64::from(MSS)
    }

    /// Mean growth factor per RTT over `rounds` rounds.
    fn growth_factor(unit: CwndUnit, abc: u32, per_ack: u32, ai_cnt: u32, start: u64) -> f64 {
        let p = ScalableParams {
            ai_cnt,
            ..Default::default()
        };
        let mut cc = scalable(unit, abc, start, p);
        let mut d = Driver::new(MSS);
        let rounds = 20;
        let w0 = segs(cc.cwnd());
        for _ in 0..rounds {
            d.round(&mut cc, RTT, RTT, per_ack, AckSpacing::Spread);
        }
        (segs(cc.cwnd()) / w0).powf(1.0 / f64::from(rounds))
    }

    #[test]
    fn test_avoidance_linux26_rule_counts_acks_to_min_cwnd_ai_cnt_plus_one() {
        // Linux 2.6 Scalable: each ACK counts once, with ABC on too, and the segment comes when
        // the counter exceeds min(cwnd, 50): the 51st ACK at cwnd 80, the 11th at cwnd 10. The
        // 4.0 rule with ABC counts the two segments of each ACK (25th and 5th ACK); without
        // ABC every ACK is one unit (50th and 10th).
        let ev = crate::testkit::delayed_ack(MSS);
        for (rule, abc, cwnd, acks) in [
            (AiRule::Linux26, 1, 80, 51),
            (AiRule::Linux26, 0, 80, 51),
            (AiRule::Linux26, 1, 10, 11),
            (AiRule::Linux4, 1, 80, 25),
            (AiRule::Linux4, 1, 10, 5),
            (AiRule::Linux4, 0, 80, 50),
        ] {
            let p = ScalableParams {
                ai_rule: rule,
                ..Default::default()
            };
            let mut cc = scalable(CwndUnit::Packets, abc, cwnd, p);
            let mut n = 0;
            while cc.cwnd() == cwnd * u64::from(MSS) {
                cc.on_ack(&ev);
                n += 1;
            }
            assert_eq!(
                (n, cc.cwnd()),
                (acks, (cwnd + 1) * u64::from(MSS)),
                "{rule:?} abc={abc} cwnd={cwnd}"
            );
        }
    }

    #[test]
    fn test_avoidance_multiplicative_growth_per_rtt() {
        // Derivation: a round acknowledges W segments. One ACK per segment: W ACKs, +1 per 50
        // → W/50 per RTT, ×1.02 (Kelly's a = 0.01 per segment would be ×1.01). An ACK per two
        // segments without ABC: W/2 ACK units → ×1.01 (why Linux used 50). With ABC (packets
        // counted, Linux ≥ 5.7) and ai_cnt = 100: ×1.01 with either ACK pattern. At cwnd = 100
        // and 1000 alike (scale-free). Whole-segment windows lose < 1 segment per round: the
        // tolerance is 1/W per RTT on the factor.
        let cases = [
            (0, 1, 50, 1.02),
            (0, 2, 50, 1.01),
            (2, 1, 100, 1.01),
            (2, 2, 100, 1.01),
        ];
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for (abc, per_ack, ai, want) in cases {
                for start in [100u64, 1000] {
                    let got = growth_factor(unit, abc, per_ack, ai, start);
                    assert!(
                        (got - want).abs() <= 1.0 / start as f64,
                        "{unit:?} abc={abc} per_ack={per_ack} ai={ai} W={start}: ×{got}"
                    );
                }
            }
        }
    }

    #[test]
    fn test_avoidance_below_ai_cnt_is_reno() {
        // min(cwnd, 50) = cwnd below 50 segments: +1 per RTT.
        let mut cc = scalable(CwndUnit::Packets, 0, 20, ScalableParams::default());
        let mut d = Driver::new(MSS);
        for r in 1..=10 {
            d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread);
            assert_eq!(segs(cc.cwnd()), 20.0 + f64::from(r));
        }
    }

    #[test]
    fn test_congestion_event_keeps_seven_eighths() {
        // Kelly b = 0.125; Linux cwnd − cwnd/8 (integer).
        for (unit, w, want) in [
            (CwndUnit::Packets, 1000, 875_000),
            (CwndUnit::Packets, 1001, 876_000),
            (CwndUnit::Bytes, 1001, 875_875),
        ] {
            let mut cc = scalable(unit, 0, w, ScalableParams::default());
            let in_flight = cc.cwnd();
            cc.on_congestion_event(&CongestionEvent {
                in_flight,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.ssthresh(), want, "{unit:?} {w}");
        }
    }

    #[test]
    fn test_legacy_window_halves_and_grows_like_reno() {
        let p = ScalableParams {
            legacy_window: 16,
            ai_cnt: 5,
            ..Default::default()
        };
        // At 16 segments: halving and +1 per RTT (ai_cnt 5 would give +3 per RTT).
        let mut cc = scalable(CwndUnit::Packets, 0, 16, p);
        let mut d = Driver::new(MSS);
        d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread);
        assert_eq!(segs(cc.cwnd()), 17.0);
        let mut cc = scalable(CwndUnit::Packets, 0, 16, p);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 16_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 8_000);
        // Above it: 1/8.
        let mut cc = scalable(CwndUnit::Packets, 0, 40, p);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 40_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 35_000);
    }

    /// Average window under one loss per `1/p` segments (deterministic; testkit).
    fn average_window(unit: CwndUnit, per_ack: u32, p: f64, start: u64) -> f64 {
        let mut cc = scalable(unit, 0, start, ScalableParams::default());
        let every = (1.0 / p).round() as u64;
        Driver::new(MSS).average_window(&mut cc, RTT, per_ack, every, 40, 80)
    }

    #[test]
    fn test_response_function_is_inverse_in_p() {
        // Kelly 2003: w ∝ 1/p. Derivation for this loss model (one loss per 1/p segments, a
        // round = one RTT delivering the window): each full round multiplies the window by
        // g = 1 + a (a = 1/50 per segment with an ACK per segment, 1/100 with an ACK per two);
        // the loss round grows only until the loss, on average half a round (×(1 + a/2)); the
        // loss multiplies by 1 − b (b = 1/8). Balance over a cycle of m rounds:
        // (m − 1)·ln g + a/2 = ln(1/(1 − b)), and since a cycle delivers 1/p segments the
        // average window is w = 1/(p·m) with m = 1 + (ln(1/(1 − b)) − a/2)/ln(1 + a): 0.138/p
        // (a = 1/50) and 0.0718/p (a = 1/100). Kelly's fluid figure a/(p·ln(1/(1 − b))),
        // 0.150/p and 0.0749/p, is the limit of many rounds per cycle, which Scalable never
        // reaches (a cycle is only ~7 or ~14 rounds).
        // Tolerance 1 % + 5/w: the loss point averages half a round only over many cycles
        // (1 %); whole segments: Linux's cut cwnd − ⌊cwnd/8⌋ keeps half a segment more on
        // average, which shortens the cycle by ≈ 0.5/(w(1 − b)(ln(1/(1 − b)) − a/2)) ≈ 4.6/w,
        // and a round's ACKs cover whole segments.
        // Bytes unit: the decrease applies to FlightSize (RFC 5681 eq. 4, `ssthresh_from`
        // "auto"), which the driver reports as the window the loss round started with, so
        // the loss round's partial growth is not kept: m = 1 + ln(1/(1 − b))/ln(1 + a) = 7.74,
        // w·p = 0.129.
        let b: f64 = 1.0 / 8.0;
        for (unit, per_ack, a) in [
            (CwndUnit::Packets, 1, 1.0 / 50.0),
            (CwndUnit::Packets, 2, 1.0 / 100.0),
            (CwndUnit::Bytes, 1, 1.0 / 50.0),
        ] {
            let kept = if unit == CwndUnit::Bytes {
                0.0
            } else {
                a / 2.0
            };
            let m = 1.0 + ((1.0 / (1.0 - b)).ln() - kept) / (1.0 + a).ln();
            let want = 1.0 / m;
            let mut wp = Vec::new();
            for p in [3e-4, 1e-4, 3e-5, 1e-5] {
                let w = want / p;
                let got = average_window(unit, per_ack, p, w as u64) * p;
                let tol = 0.01 + 5.0 / w;
                assert!(
                    (got / want - 1.0).abs() <= tol,
                    "{unit:?} per_ack={per_ack} p={p}: w·p = {got:.4}, derived {want:.4}"
                );
                wp.push(got);
            }
            // Scale-free: w·p the same over the decade p = 1e-4 … 1e-5 (1 % + 5/w).
            assert!(
                (wp[1] / wp[3] - 1.0).abs() <= 0.01 + 5.0 * p_w(want, 1e-4),
                "{unit:?} per_ack={per_ack}: w·p {wp:?}"
            );
            let fluid = a / (1.0 / (1.0 - b)).ln();
            eprintln!(
                "scalable {unit:?} per_ack={per_ack}: w·p at p = 3e-4, 1e-4, 3e-5, 1e-5: \
                 {wp:.4?}, derived {want:.4}, fluid {fluid:.4}, a/b {:.4}",
                a / b
            );
        }
    }

    /// 1/w at loss rate p for w·p = `wp`.
    fn p_w(wp: f64, p: f64) -> f64 {
        p / wp
    }
}
