//! Reno window rules (RFC 5681 §3.1–3.2; Linux `tcp_reno_*`, L: net/ipv4/tcp_cong.c), also
//! registered as `newreno`: NewReno (RFC 6582) differs from Reno only in how fast recovery treats
//! partial ACKs, which is the stack's recovery part, so the controller is the same arithmetic
//! under another name.
//!
//! * Slow start and congestion avoidance: [`WindowState::slow_start`] then
//!   [`WindowState::reno_increase`] (about +1 SMSS per RTT), in the personality's unit and ABC
//!   setting (see `growth.rs`). Parameter `ai_rule` ([`AiRule`]): `"linux-2.6"` is Linux
//!   2.2–3.19's counter without ABC, +1 segment per cwnd + 1 ACKs instead of per cwnd.
//! * Congestion event: `ssthresh = max(FlightSize/2, 2·SMSS)` (RFC 5681 §3.1 eq. 4) in the bytes
//!   unit; `max(cwnd/2, 2)` segments from cwnd in the packets unit (Linux `tcp_reno_ssthresh`).
//!   The basis is the `ssthresh_from` parameter ([`SsthreshBasis`]). `cwnd` is left to the
//!   recovery part; recovery exit sets `cwnd = ssthresh` (trait default, RFC 5681 §3.2 step 6).
//! * RTO: the same `ssthresh` on the first timeout, held constant on repeated timeouts of the same
//!   data (RFC 5681 §3.1, text after eq. 4); `cwnd` = 1 segment, the loss window (RFC 5681 §3.1).

use crate::growth::{AiRule, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, Params, AI_RULE, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, RtoEvent};

/// Reno / NewReno window rules.
#[derive(Clone, Debug)]
pub struct Reno {
    name: &'static str,
    win: WindowState,
    basis: SsthreshBasis,
    /// Growth-counter rule in congestion avoidance (parameter `ai_rule`, [`AiRule`]).
    rule: AiRule,
}

impl Reno {
    /// A Reno controller named `"reno"`.
    pub fn new(init: &CcInit, basis: SsthreshBasis) -> Self {
        Reno {
            name: "reno",
            win: WindowState::new(init),
            basis,
            rule: AiRule::Linux4,
        }
    }

    /// The same controller with the growth-counter rule `rule` ([`AiRule`]).
    pub fn with_ai_rule(self, rule: AiRule) -> Self {
        Reno { rule, ..self }
    }

    /// The same window rules, named `"newreno"` (RFC 6582 recovery is done by the stack).
    pub fn newreno(init: &CcInit, basis: SsthreshBasis) -> Self {
        Reno {
            name: "newreno",
            ..Reno::new(init, basis)
        }
    }

    /// The window and its counters.
    pub fn window(&self) -> &WindowState {
        &self.win
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.win.reno_on_ack_rule(self.rule, ev);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.win
            .reno_decrease(self.basis, ev.in_flight, ev.peer_window);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        self.win.reno_timeout(self.basis, ev);
    }

    crate::growth::delegate_window!();
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[SSTHRESH_FROM, AI_RULE];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(
        Reno::new(init, p.ssthresh_from()).with_ai_rule(p.ai_rule()),
    ))
}

pub(crate) fn build_newreno(
    p: &Params,
    init: &CcInit,
) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(
        Reno::newreno(init, p.ssthresh_from()).with_ai_rule(p.ai_rule()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, AckSpacing, Driver, MSS, RTT};
    use crate::{CwndUnit, WindowGrowth};

    fn reno(unit: CwndUnit, abc_limit: u32, cwnd_seg: u64, ssthresh: u64) -> Reno {
        Reno::new(
            &cc_init(MSS, unit, abc_limit, cwnd_seg, ssthresh),
            SsthreshBasis::Auto,
        )
    }

    fn segs(bytes: u64) -> f64 {
        bytes as f64 / f64::from(MSS)
    }

    #[test]
    fn test_slow_start_ack_stream_doubles_per_rtt() {
        // RFC 5681 §3.1: one ACK per segment doubles cwnd each RTT. With an ACK per two
        // segments (the last ACK of an odd window covers one) and per-ACK counting, the window
        // grows by the number of ACKs, ⌈W/2⌉ (≈ ×1.5); with ABC L=2 by the segments, ×2
        // (RFC 3465 §1, §2.2). Start at 5 segments so odd windows occur.
        let half: fn(u64) -> u64 = |w| w + w.div_ceil(2);
        let double: fn(u64) -> u64 = |w| 2 * w;
        let cases = [(1, 0, double), (2, 0, half), (2, 2, double), (1, 2, double)];
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for (per_ack, abc, rule) in cases {
                let mut cc = reno(unit, abc, 5, u64::MAX);
                let mut d = Driver::new(MSS);
                for r in 0..6 {
                    let before = cc.cwnd() / u64::from(MSS);
                    let now = d.round(&mut cc, RTT, RTT, per_ack, AckSpacing::Spread);
                    assert_eq!(
                        now,
                        rule(before) * u64::from(MSS),
                        "{unit:?} per_ack={per_ack} abc={abc} round {r}"
                    );
                }
                assert!(cc.in_slow_start());
            }
        }
    }

    #[test]
    fn test_slow_start_ack_leaves_at_ssthresh() {
        // Slow start ends exactly at ssthresh (Linux tcp_slow_start) and the window then grows
        // by about one segment per RTT.
        let mut cc = reno(CwndUnit::Packets, u32::MAX, 4, 20 * u64::from(MSS));
        let mut d = Driver::new(MSS);
        d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread); // 8
        d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread); // 16
        let w = segs(d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread)); // 20 + CA credit
        assert!(!cc.in_slow_start());
        assert!((20.0..=21.0).contains(&w), "{w}");
    }

    #[test]
    fn test_avoidance_ack_per_segment_grows_one_segment_per_rtt() {
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for abc in [0, 2] {
                let mut cc = reno(unit, abc, 30, 2 * u64::from(MSS));
                let mut d = Driver::new(MSS);
                let start = segs(cc.cwnd());
                for _ in 0..50 {
                    d.round(&mut cc, RTT, RTT, 1, AckSpacing::Spread);
                }
                let per_rtt = (segs(cc.cwnd()) - start) / 50.0;
                // Packets: exactly +1 per cwnd ACKs. Bytes: SMSS²/cwnd per ACK rounds down and
                // cwnd grows within the RTT: at most ~2 % below one segment at 30–80 segments.
                assert!(
                    (per_rtt - 1.0).abs() < 0.03,
                    "{unit:?} abc={abc}: {per_rtt}"
                );
            }
        }
    }

    #[test]
    fn test_avoidance_delayed_ack_packets_without_abc_grows_half_segment_per_rtt() {
        // Linux without ABC counts one unit per ACK: with an ACK per two segments, cwnd/2 ACKs
        // per RTT and +1 segment per cwnd ACKs, i.e. ~+0.5 segment per RTT.
        let mut cc = reno(CwndUnit::Packets, 0, 30, 2 * u64::from(MSS));
        let mut d = Driver::new(MSS);
        let start = segs(cc.cwnd());
        for _ in 0..60 {
            d.round(&mut cc, RTT, RTT, 2, AckSpacing::Spread);
        }
        let per_rtt = (segs(cc.cwnd()) - start) / 60.0;
        assert!((per_rtt - 0.5).abs() < 0.03, "{per_rtt}");
        // With ABC the same ACK stream grows one segment per RTT (RFC 3465 §2.1).
        let mut cc = reno(CwndUnit::Packets, 2, 30, 2 * u64::from(MSS));
        let mut d = Driver::new(MSS);
        for _ in 0..60 {
            d.round(&mut cc, RTT, RTT, 2, AckSpacing::Spread);
        }
        let per_rtt = (segs(cc.cwnd()) - start) / 60.0;
        assert!((per_rtt - 1.0).abs() < 0.03, "{per_rtt}");
    }

    /// ACKs, each covering `per_ack` segments, until the window grows by one segment.
    fn acks_to_next_segment(cc: &mut Reno, per_ack: u32) -> u32 {
        let start = cc.cwnd();
        let ev = AckEvent {
            bytes_acked: u64::from(per_ack * MSS),
            packets_acked: per_ack,
            packets_delivered: per_ack,
            mss: MSS,
            ..Default::default()
        };
        for n in 1..=10_000 {
            cc.on_ack(&ev);
            if cc.cwnd() > start {
                assert_eq!(cc.cwnd(), start + u64::from(MSS));
                return n;
            }
        }
        panic!("no growth");
    }

    #[test]
    fn test_avoidance_linux26_rule_one_segment_per_cwnd_plus_one_acks() {
        // Linux 2.2–3.19 `tcp_reno_cong_avoid` without ABC: the ACK that finds snd_cwnd_cnt at
        // cwnd adds the segment and clears the counter uncounted, so at cwnd = 30 the 31st ACK
        // grows the window, then the 32nd at 31, whatever each ACK covers. Linux ≥ 4.0: the
        // 30th (then the 15th with two segments per ACK, which counts both).
        let ca = |rule: AiRule, abc: u32| {
            reno(CwndUnit::Packets, abc, 30, 2 * u64::from(MSS)).with_ai_rule(rule)
        };
        let mut cc = ca(AiRule::Linux26, 0);
        assert_eq!(acks_to_next_segment(&mut cc, 1), 31);
        assert_eq!(acks_to_next_segment(&mut cc, 2), 32);
        let mut cc = ca(AiRule::Linux4, 0);
        assert_eq!(acks_to_next_segment(&mut cc, 1), 30);
        // With ABC on, Linux 2.6.15–3.8 Reno counted bytes: one segment per window of bytes,
        // under either rule (30 segments: 30 single or 15 double ACKs).
        for rule in [AiRule::Linux26, AiRule::Linux4] {
            let mut cc = ca(rule, 1);
            assert_eq!(acks_to_next_segment(&mut cc, 1), 30, "{rule:?}");
            let mut cc = ca(rule, 2);
            assert_eq!(acks_to_next_segment(&mut cc, 2), 15, "{rule:?}");
        }
        // The bytes unit ignores the rule.
        let mut a = reno(CwndUnit::Bytes, 0, 30, 2 * u64::from(MSS)).with_ai_rule(AiRule::Linux26);
        let mut b = reno(CwndUnit::Bytes, 0, 30, 2 * u64::from(MSS));
        let mut d1 = Driver::new(MSS);
        let mut d2 = Driver::new(MSS);
        for _ in 0..5 {
            let x = d1.round(&mut a, RTT, RTT, 1, AckSpacing::Spread);
            assert_eq!(x, d2.round(&mut b, RTT, RTT, 1, AckSpacing::Spread));
        }
    }

    #[test]
    fn test_avoidance_linux26_rule_delayed_acks_growth_per_rtt() {
        // Per RTT with an ACK per two segments and no ABC: W/2 ACKs and +1 per W + 1 of them,
        // W/(2(W+1)) segments: 0.484 at W = 30, against 0.5 with the 4.0 rule.
        let mut cc =
            reno(CwndUnit::Packets, 0, 30, 2 * u64::from(MSS)).with_ai_rule(AiRule::Linux26);
        let mut d = Driver::new(MSS);
        let start = segs(cc.cwnd());
        for _ in 0..60 {
            d.round(&mut cc, RTT, RTT, 2, AckSpacing::Spread);
        }
        let w = (start + segs(cc.cwnd())) / 2.0;
        let per_rtt = (segs(cc.cwnd()) - start) / 60.0;
        let expect = w / (2.0 * (w + 1.0));
        assert!((per_rtt - expect).abs() < 0.01, "{per_rtt} vs {expect}");
        assert!(per_rtt < 0.49, "{per_rtt}");
    }

    #[test]
    fn test_registry_builds_ai_rule() {
        use crate::params::ParamValue;
        for name in ["reno", "newreno"] {
            let init = cc_init(MSS, CwndUnit::Packets, 0, 30, 2 * u64::from(MSS));
            let mut cc = crate::registry::build(
                name,
                &[("ai_rule".to_string(), ParamValue::Str("linux-2.6".into()))],
                init,
            )
            .unwrap();
            let ev = AckEvent {
                bytes_acked: u64::from(MSS),
                packets_acked: 1,
                packets_delivered: 1,
                mss: MSS,
                ..Default::default()
            };
            for _ in 0..30 {
                cc.on_ack(&ev);
            }
            assert_eq!(cc.cwnd(), 30 * u64::from(MSS), "{name}");
            cc.on_ack(&ev);
            assert_eq!(cc.cwnd(), 31 * u64::from(MSS), "{name}");
        }
    }

    #[test]
    fn test_congestion_event_halves_window() {
        // Packets: Linux max(cwnd/2, 2) from cwnd, whatever the flight size.
        let mut cc = reno(CwndUnit::Packets, 0, 41, u64::MAX);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 10_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 20 * u64::from(MSS));
        cc.on_recovery_exit(0);
        assert_eq!(cc.cwnd(), 20 * u64::from(MSS));
        // Bytes: RFC 5681 eq. 4 from FlightSize.
        let mut cc = reno(CwndUnit::Bytes, 0, 41, u64::MAX);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 30_500,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 15_250);
        // Never below 2 SMSS.
        let mut cc = reno(CwndUnit::Bytes, 0, 3, u64::MAX);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 1_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 2 * u64::from(MSS));
        let mut cc = reno(CwndUnit::Packets, 0, 3, u64::MAX);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 3_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 2 * u64::from(MSS));
    }

    #[test]
    fn test_congestion_event_basis_param_overrides_unit() {
        let init = cc_init(MSS, CwndUnit::Packets, 0, 40_000 / u64::from(MSS), u64::MAX);
        let mut cc = Reno::new(&init, SsthreshBasis::FlightSize);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 10_000,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), 5_000);
    }

    #[test]
    fn test_rto_collapses_to_one_segment_and_holds_ssthresh_on_backoff() {
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = reno(unit, 0, 40, u64::MAX);
            cc.on_rto(&RtoEvent {
                in_flight: 40_000,
                backoff_count: 1,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.cwnd(), u64::from(MSS));
            assert_eq!(cc.ssthresh(), 20_000);
            // Second timeout for the same data: ssthresh held constant (RFC 5681 §3.1).
            cc.on_rto(&RtoEvent {
                in_flight: 1_000,
                backoff_count: 2,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.ssthresh(), 20_000);
            assert_eq!(cc.cwnd(), u64::from(MSS));
            assert!(cc.in_slow_start());
        }
    }

    #[test]
    fn test_bsd_basis_halves_the_smaller_window_in_whole_segments() {
        // 4.4BSD tcp_input.c / tcp_timer.c: win = min(snd_wnd, snd_cwnd) / 2 / t_maxseg.
        let mss = u64::from(MSS);
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            // cwnd 40 segments, peer window 25.5 segments: 12 segments (12.75 truncated), not
            // FlightSize (30 segments outstanding) nor cwnd.
            let init = cc_init(MSS, unit, 0, 40, u64::MAX);
            let mut cc = Reno::newreno(&init, SsthreshBasis::Bsd);
            cc.on_congestion_event(&CongestionEvent {
                in_flight: 30 * mss,
                peer_window: 25 * mss + mss / 2,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.ssthresh(), 12 * mss, "{unit:?}");
            // cwnd the smaller: 7 segments halve to 3 (3.5 truncated), the floor is 2.
            let init = cc_init(MSS, unit, 0, 7, u64::MAX);
            let mut cc = Reno::newreno(&init, SsthreshBasis::Bsd);
            cc.on_congestion_event(&CongestionEvent {
                in_flight: 7 * mss,
                peer_window: 1 << 30,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.ssthresh(), 3 * mss, "{unit:?}");
        }
    }

    #[test]
    fn test_bsd_basis_recomputes_ssthresh_on_every_timeout() {
        // 4.4BSD tcp_timer.c TCPT_REXMT: the rule runs on each expiry, so the second timeout
        // starts from the 1-segment loss window and ssthresh falls to 2 segments, where RFC 5681
        // (the test above) holds it.
        let mss = u64::from(MSS);
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let init = cc_init(MSS, unit, 0, 40, u64::MAX);
            let mut cc = Reno::newreno(&init, SsthreshBasis::Bsd);
            let rto = |backoff_count| RtoEvent {
                in_flight: 40 * mss,
                backoff_count,
                mss: MSS,
                peer_window: 64 * mss,
                ..Default::default()
            };
            cc.on_rto(&rto(1));
            assert_eq!((cc.ssthresh(), cc.cwnd()), (20 * mss, mss), "{unit:?}");
            cc.on_rto(&rto(2));
            assert_eq!((cc.ssthresh(), cc.cwnd()), (2 * mss, mss), "{unit:?}");
        }
    }

    #[test]
    fn test_xnu_basis_sets_ssthresh_on_the_first_timeout_only() {
        // XNU since xnu-2422 (OS X 10.9): tcp_timer.c calls the algorithm's after_timeout only
        // when t_rxtshift == 1; NewReno's takes min(snd_wnd, snd_cwnd) / 2 in whole segments
        // (the BSD rule, here the peer's 30-segment window) and the second timeout holds it.
        let mss = u64::from(MSS);
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let init = cc_init(MSS, unit, 0, 40, u64::MAX);
            let mut cc = Reno::newreno(&init, SsthreshBasis::Xnu);
            let rto = |backoff_count| RtoEvent {
                in_flight: 40 * mss,
                backoff_count,
                mss: MSS,
                peer_window: 30 * mss + 700,
                in_recovery: true,
                ..Default::default()
            };
            cc.on_rto(&rto(1));
            assert_eq!((cc.ssthresh(), cc.cwnd()), (15 * mss, mss), "{unit:?}");
            cc.on_rto(&rto(2));
            assert_eq!((cc.ssthresh(), cc.cwnd()), (15 * mss, mss), "{unit:?}");
        }
    }

    #[test]
    fn test_solaris_basis_halves_flight_size_then_ssthresh_on_each_backoff() {
        // OpenSolaris tcp_timer: npkt = ((backoff ? ssthresh : snxt − suna) >> 1) / mss.
        let mss = u64::from(MSS);
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let init = cc_init(MSS, unit, 0, 40, u64::MAX);
            let mut cc = Reno::newreno(&init, SsthreshBasis::Solaris);
            let rto = |backoff_count| RtoEvent {
                in_flight: 33 * mss + 500,
                backoff_count,
                mss: MSS,
                ..Default::default()
            };
            cc.on_rto(&rto(1));
            assert_eq!(
                cc.ssthresh(),
                16 * mss,
                "{unit:?}: 16.75 segments truncated"
            );
            cc.on_rto(&rto(2));
            assert_eq!(cc.ssthresh(), 8 * mss, "{unit:?}");
            cc.on_rto(&rto(3));
            assert_eq!(cc.ssthresh(), 4 * mss, "{unit:?}");
            cc.on_rto(&rto(4));
            cc.on_rto(&rto(5));
            assert_eq!(
                (cc.ssthresh(), cc.cwnd()),
                (2 * mss, mss),
                "{unit:?}: floor"
            );
        }
    }

    #[test]
    fn test_cwr_completion_keeps_the_smaller_of_cwnd_and_ssthresh() {
        // tcp_complete_cwr: cwnd = min(cwnd, ssthresh); never a raise.
        let mut cc = reno(CwndUnit::Packets, 0, 10, 20 * u64::from(MSS));
        cc.on_cwr_complete(0);
        assert_eq!(cc.cwnd(), 10 * u64::from(MSS));
        cc.set_cwnd(30 * u64::from(MSS));
        cc.on_cwr_complete(0);
        assert_eq!(cc.cwnd(), 20 * u64::from(MSS));
    }

    #[test]
    fn test_ack_in_recovery_or_app_limited_does_not_grow() {
        let mut cc = reno(CwndUnit::Bytes, 0, 10, u64::MAX);
        let ev = AckEvent {
            bytes_acked: 1000,
            packets_acked: 1,
            packets_delivered: 1,
            mss: MSS,
            ..Default::default()
        };
        cc.on_ack(&AckEvent {
            in_recovery: true,
            ..ev
        });
        cc.on_ack(&AckEvent {
            app_limited: true,
            ..ev
        });
        assert_eq!(cc.cwnd(), 10_000);
        cc.on_ack(&ev);
        assert_eq!(cc.cwnd(), 11_000);
    }

    #[test]
    fn test_newreno_is_reno_with_its_own_name() {
        let init = CcInit {
            mss: MSS,
            initial_cwnd: 10_000,
            initial_ssthresh: u64::MAX,
            growth: WindowGrowth::default(),
        };
        let mut a = Reno::new(&init, SsthreshBasis::Auto);
        let mut b = Reno::newreno(&init, SsthreshBasis::Auto);
        assert_eq!(a.name(), "reno");
        assert_eq!(b.name(), "newreno");
        let mut d1 = Driver::new(MSS);
        let mut d2 = Driver::new(MSS);
        for _ in 0..5 {
            let x = d1.round(&mut a, RTT, RTT, 2, AckSpacing::Spread);
            let y = d2.round(&mut b, RTT, RTT, 2, AckSpacing::Spread);
            assert_eq!(x, y);
        }
    }
}
