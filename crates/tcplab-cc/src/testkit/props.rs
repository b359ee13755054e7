//! The property-test script shared by every controller: random event sequences (ACKs with or
//! without RTT and delivery-rate samples, sent packets, congestion events, recovery exits,
//! timeouts, idle restarts, undos, window overwrites) run through one interpreter, after each
//! event checking the invariants: cwnd ≥ 1 MSS, ssthresh ≥ 2 MSS after a decrease, a positive
//! pacing rate if any, finite debug variables; no panic or arithmetic overflow (the test
//! profile checks overflow). Two event mixes: [`loss_ops`] for the loss-based controllers
//! (in-flight derived from the window), [`delay_ops`] for the delay- and rate-based ones (rate
//! samples, bursts of sent packets, in-flight given).

use proptest::prelude::*;

use crate::registry::{build, list};
use crate::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, CwndUnit, Nanos, ParamValue, RateSample,
    RtoEvent, SentEvent, WindowGrowth,
};

/// One event of a script.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Ack {
        dt: Nanos,
        segs: u32,
        /// Bytes of a partial segment acknowledged with `segs` (modulo the MSS).
        partial: u32,
        /// Segments newly SACKed.
        sacked: u32,
        rtt: Option<Nanos>,
        in_recovery: bool,
        limited: bool,
        /// (delivery rate, interval, app-limited, jump of the delivered count).
        rate: Option<(f64, Nanos, bool, u64)>,
        /// Segments in flight after the ACK; `None`: the window less what this ACK covers.
        in_flight_segs: Option<u64>,
    },
    Sent {
        dt: Nanos,
        n: u32,
        retrans: bool,
        in_flight_segs: u64,
    },
    Congestion {
        dt: Nanos,
        flight_segs: u64,
    },
    RecoveryExit,
    Rto {
        backoff: u32,
        flight_segs: u64,
        /// The stack keeps the reduction under way (`RtoEvent::keeps_ssthresh`).
        keeps: bool,
    },
    Idle {
        dt: Nanos,
        restart_segs: u64,
    },
    Undo {
        cwnd: u64,
        ssthresh: u64,
    },
    SetCwnd {
        bytes: u64,
    },
}

/// The events the loss-based controllers see: no rate samples, one packet sent at a time.
pub(crate) fn loss_ops() -> impl Strategy<Value = Op> {
    let rtt = prop_oneof![Just(None), (1u64..3_000_000_000).prop_map(Some)];
    prop_oneof![
        8 => (0u64..200_000_000, 0u32..64, 0u32..1448, rtt, proptest::bool::weighted(0.1), proptest::bool::weighted(0.1))
            .prop_map(|(dt, segs, partial, rtt, in_recovery, limited)| Op::Ack {
                dt, segs, partial, sacked: 0, rtt, in_recovery, limited, rate: None, in_flight_segs: None,
            }),
        1 => (0u64..1_000_000_000, 0u64..100_000).prop_map(|(dt, flight_segs)| Op::Congestion { dt, flight_segs }),
        1 => Just(Op::RecoveryExit),
        1 => (1u32..8, 0u64..100_000, proptest::bool::weighted(0.3))
            .prop_map(|(backoff, flight_segs, keeps)| Op::Rto { backoff, flight_segs, keeps }),
        1 => (0u64..100_000_000_000, 0u64..100).prop_map(|(dt, restart_segs)| Op::Idle { dt, restart_segs }),
        1 => (0u64..10_000_000_000, 0u64..1000).prop_map(|(dt, in_flight_segs)| Op::Sent { dt, n: 1, retrans: false, in_flight_segs }),
        1 => (0u64..u64::MAX, 0u64..u64::MAX).prop_map(|(cwnd, ssthresh)| Op::Undo { cwnd, ssthresh }),
        1 => (0u64..(1u64 << 40)).prop_map(|bytes| Op::SetCwnd { bytes }),
    ]
}

/// The events the delay- and rate-based controllers see: delivery-rate samples (including 0,
/// huge, infinite and NaN rates), sub-microsecond RTTs, SACKs, bursts of sent packets.
pub(crate) fn delay_ops() -> impl Strategy<Value = Op> {
    let rtt = prop_oneof![
        Just(None),
        (1u64..3_000_000_000).prop_map(Some),
        (1u64..1000).prop_map(Some),
    ];
    let rate = prop_oneof![
        Just(None),
        (
            prop_oneof![
                Just(0.0),
                1.0f64..1e11,
                Just(f64::MAX),
                Just(f64::INFINITY),
                Just(f64::NAN)
            ],
            0u64..5_000_000_000,
            any::<bool>(),
            0u64..(1 << 40),
        )
            .prop_map(Some),
    ];
    prop_oneof![
        10 => (0u64..300_000_000, 0u32..64, 0u32..8, rtt, proptest::bool::weighted(0.1),
               proptest::bool::weighted(0.1), rate, 0u64..10_000)
            .prop_map(|(dt, segs, sacked, rtt, in_recovery, limited, rate, in_flight_segs)| {
                Op::Ack { dt, segs, partial: 0, sacked, rtt, in_recovery, limited, rate, in_flight_segs: Some(in_flight_segs) }
            }),
        6 => (0u64..50_000_000, 1u32..64, proptest::bool::weighted(0.1), 0u64..10_000)
            .prop_map(|(dt, n, retrans, in_flight_segs)| {
                Op::Sent { dt, n, retrans, in_flight_segs }
            }),
        1 => (0u64..100_000).prop_map(|flight_segs| Op::Congestion { dt: 0, flight_segs }),
        1 => Just(Op::RecoveryExit),
        1 => (1u32..8, 0u64..100_000, proptest::bool::weighted(0.3))
            .prop_map(|(backoff, flight_segs, keeps)| Op::Rto { backoff, flight_segs, keeps }),
        1 => (0u64..100_000_000_000, 0u64..100)
            .prop_map(|(dt, restart_segs)| Op::Idle { dt, restart_segs }),
        1 => (0u64..u64::MAX, 0u64..u64::MAX)
            .prop_map(|(cwnd, ssthresh)| Op::Undo { cwnd, ssthresh }),
        1 => (0u64..(1u64 << 40)).prop_map(|bytes| Op::SetCwnd { bytes }),
    ]
}

fn p(name: &str, v: ParamValue) -> (String, ParamValue) {
    (name.to_string(), v)
}

fn cubic_params() -> impl Strategy<Value = Vec<(String, ParamValue)>> {
    (
        prop_oneof![Just("off"), Just("linux"), Just("rfc9406")],
        prop_oneof![Just("both"), Just("ack_train"), Just("delay")],
        any::<bool>(),
        any::<bool>(),
        0.01f64..0.99,
        0.001f64..100.0,
        ssthresh_basis(),
        prop_oneof![Just("rfc9438"), Just("2.0"), Just("2.1")],
        (any::<bool>(), any::<bool>()),
        any::<bool>(),
        prop_oneof![Just("linux-4.0"), Just("linux-2.6")],
        prop_oneof![Just("prior"), Just("w_max")],
    )
        .prop_map(
            |(h, d, fc, tf, beta, c, basis, version, bug, dack, ai, undo)| {
                vec![
                    p("hystart", ParamValue::Str(h.into())),
                    p("hystart_detect", ParamValue::Str(d.into())),
                    p("fast_convergence", ParamValue::Bool(fc)),
                    p("tcp_friendliness", ParamValue::Bool(tf)),
                    p("beta", ParamValue::Float(beta)),
                    p("c", ParamValue::Float(c)),
                    p("ssthresh_from", ParamValue::Str(basis.into())),
                    p("version", ParamValue::Str(version.into())),
                    p("v2_scaling_bug", ParamValue::Bool(bug.0)),
                    p("v2_strict_floor", ParamValue::Bool(bug.1)),
                    p("delayed_ack_comp", ParamValue::Bool(dack)),
                    p("ai_rule", ParamValue::Str(ai.into())),
                    p("undo_rule", ParamValue::Str(undo.into())),
                ]
            },
        )
}

/// Every `ssthresh_from` choice (crate::growth::SsthreshBasis::CHOICES).
fn ssthresh_basis() -> impl Strategy<Value = &'static str> + Clone {
    proptest::sample::select(crate::growth::SsthreshBasis::CHOICES)
}

/// Random parameters for the loss-based controllers (bic, hstcp, htcp, scalable, illinois,
/// westwood).
fn loss_based_params() -> impl Strategy<Value = (&'static str, Vec<(String, ParamValue)>)> {
    let basis = ssthresh_basis;
    let s = |v: &str| ParamValue::Str(v.into());
    prop_oneof![
        (
            prop_oneof![Just("linux"), Just("2.6.10")],
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(0i64), 1i64..1000],
            basis(),
            prop_oneof![Just("linux-4.0"), Just("linux-2.6")],
        )
            .prop_map(move |(v, fc, bug, iss, b, ai)| (
                "bic",
                vec![
                    p("variant", s(v)),
                    p("fast_convergence", ParamValue::Bool(fc)),
                    p("fast_convergence_bug", ParamValue::Bool(bug)),
                    p("initial_ssthresh", ParamValue::Int(iss)),
                    p("ssthresh_from", s(b)),
                    p("ai_rule", s(ai)),
                ]
            )),
        basis().prop_map(move |b| ("hstcp", vec![p("ssthresh_from", s(b))])),
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            basis(),
            proptest::sample::select(crate::htcp::HtcpVersion::CHOICES),
            prop_oneof![Just(100i64), Just(250), Just(1000), 1i64..10_000],
        )
            .prop_map(move |(r, bw, ab, b, v, hz)| (
                "htcp",
                vec![
                    p("rtt_scaling", ParamValue::Bool(r)),
                    p("bandwidth_switch", ParamValue::Bool(bw)),
                    p("adaptive_backoff", ParamValue::Bool(ab)),
                    p("ssthresh_from", s(b)),
                    p("version", s(v)),
                    p("hz", ParamValue::Int(hz)),
                ]
            )),
        (1i64..200, 0i64..100, basis()).prop_map(move |(ai, lw, b)| (
            "scalable",
            vec![
                p("ai_cnt", ParamValue::Int(ai)),
                p("legacy_window", ParamValue::Int(lw)),
                p("ssthresh_from", s(b)),
            ]
        )),
        (0i64..100, 0i64..10, basis()).prop_map(move |(wt, th, b)| (
            "illinois",
            vec![
                p("win_thresh", ParamValue::Int(wt)),
                p("theta", ParamValue::Int(th)),
                p("ssthresh_from", s(b)),
            ]
        )),
        basis().prop_map(move |b| ("westwood", vec![p("ssthresh_from", s(b))])),
    ]
}

/// Random parameters for the delay- and rate-based controllers (vegas, fast, ctcp, bbr).
fn delay_params() -> impl Strategy<Value = (&'static str, Vec<(String, ParamValue)>)> {
    let basis = ssthresh_basis();
    prop_oneof![
        (0i64..10, 0i64..10, 0i64..10, basis.clone()).prop_map(|(a, extra, g, b)| (
            "vegas",
            vec![
                p("alpha", ParamValue::Int(a)),
                p("beta", ParamValue::Int(a + extra)),
                p("gamma", ParamValue::Int(g)),
                p("ssthresh_from", ParamValue::Str(b.into())),
            ]
        )),
        (0.0f64..1000.0, 0.01f64..=1.0, basis.clone()).prop_map(|(a, g, b)| (
            "fast",
            vec![
                p("alpha", ParamValue::Float(a)),
                p("gamma", ParamValue::Float(g)),
                p("ssthresh_from", ParamValue::Str(b.into())),
            ]
        )),
        (
            (0.001f64..2.0, 0.01f64..0.99, 0.1f64..1.9, 0.0f64..3.0),
            (
                0.0f64..100.0,
                any::<bool>(),
                0.0f64..10.0,
                0.0f64..50.0,
                0.01f64..=1.0
            ),
            (0i64..200, basis),
        )
            .prop_map(|((a, b, k, z), (g, t, lo, span, l), (low, basis))| (
                "ctcp",
                vec![
                    p("alpha", ParamValue::Float(a)),
                    p("beta", ParamValue::Float(b)),
                    p("k", ParamValue::Float(k)),
                    p("zeta", ParamValue::Float(z)),
                    p("gamma", ParamValue::Float(g)),
                    p("gamma_tuning", ParamValue::Bool(t)),
                    p("gamma_low", ParamValue::Float(lo)),
                    p("gamma_high", ParamValue::Float(lo + span)),
                    p("lambda", ParamValue::Float(l)),
                    p("low_window", ParamValue::Int(low)),
                    p("ssthresh_from", ParamValue::Str(basis.into())),
                ]
            )),
        (
            (1.01f64..5.0, 1.0f64..4.0, 1i64..=64),
            (1i64..20_000, 0i64..1000, 0.0f64..0.5, any::<bool>()),
            prop_oneof![Just("auto"), Just("0"), Just("2"), Just("7")],
        )
            .prop_map(|((sg, cg, rounds), (win, prt, margin, qb), cs)| (
                "bbr",
                vec![
                    p("startup_gain", ParamValue::Float(sg)),
                    p("cwnd_gain", ParamValue::Float(cg)),
                    p("bw_window_rounds", ParamValue::Int(rounds)),
                    p("min_rtt_window_ms", ParamValue::Int(win)),
                    p("probe_rtt_ms", ParamValue::Int(prt)),
                    p("pacing_margin", ParamValue::Float(margin)),
                    p("quantization_budget", ParamValue::Bool(qb)),
                    p("cycle_start", ParamValue::Str(cs.into())),
                ]
            )),
    ]
}

/// The invariants every controller keeps after every event (see the module doc).
pub(crate) fn check_invariants(
    cc: &dyn CongestionControl,
    mss: u64,
    decreased: bool,
) -> Result<(), TestCaseError> {
    prop_assert!(cc.cwnd() >= mss, "cwnd {} < 1 MSS", cc.cwnd());
    if decreased {
        prop_assert!(
            cc.ssthresh() >= 2 * mss,
            "ssthresh {} < 2 MSS",
            cc.ssthresh()
        );
    }
    if let Some(r) = cc.pacing_rate() {
        prop_assert!(r > 0, "pacing rate 0");
    }
    let mut extra = [("", 0.0f64); 16];
    let n = cc.debug_vars(&mut extra);
    for (name, v) in &extra[..n] {
        prop_assert!(v.is_finite(), "{name} = {v}");
    }
    Ok(())
}

/// Runs the script `ops` on `cc`, checking the invariants after each event.
pub(crate) fn run_ops(
    cc: &mut dyn CongestionControl,
    mss: u32,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let m = u64::from(mss);
    let mut now: Nanos = 0;
    let mut delivered: u64 = 0;
    for o in ops {
        let mut decreased = false;
        match *o {
            Op::Ack {
                dt,
                segs,
                partial,
                sacked,
                rtt,
                in_recovery,
                limited,
                rate,
                in_flight_segs,
            } => {
                now += dt;
                let bytes = u64::from(segs) * m + u64::from(partial % mss);
                delivered += bytes + u64::from(sacked) * m;
                let (prior_in_flight, in_flight) = match in_flight_segs {
                    Some(s) => ((s + u64::from(segs)) * m, s * m),
                    None => (cc.cwnd(), cc.cwnd().saturating_sub(bytes)),
                };
                let rate = rate.map(|(bps, interval, app, jump)| RateSample {
                    delivery_rate_bps: bps,
                    delivered: bytes,
                    interval,
                    is_app_limited: app,
                    prior_in_flight: in_flight,
                    // Sometimes the stack's count jumps (SACKed data, other ACKs).
                    total_delivered: delivered + jump % 3 * jump,
                });
                let srtt = rtt.unwrap_or(0);
                cc.on_ack(&AckEvent {
                    now,
                    bytes_acked: bytes,
                    packets_acked: segs,
                    packets_delivered: segs,
                    bytes_sacked: u64::from(sacked) * m,
                    prior_in_flight,
                    in_flight,
                    rtt_sample: rtt,
                    srtt,
                    min_rtt: srtt,
                    in_recovery,
                    // SACKed data outstanding means Linux's Disorder state at the least.
                    outside_open: in_recovery || sacked > 0,
                    app_limited: limited,
                    rate,
                    mss,
                    // Losses marked by this ACK (BBR deducts them), some in recovery.
                    bytes_lost: if in_recovery {
                        u64::from(sacked) * m
                    } else {
                        0
                    },
                });
            }
            Op::Sent {
                dt,
                n,
                retrans,
                in_flight_segs,
            } => {
                now += dt;
                for k in 0..u64::from(n) {
                    cc.on_packet_sent(&SentEvent {
                        now,
                        bytes: mss,
                        in_flight: (in_flight_segs + k + 1) * m,
                        is_retransmission: retrans,
                        total_delivered: delivered,
                    });
                }
            }
            Op::Congestion { dt, flight_segs } => {
                now += dt;
                cc.on_congestion_event(&CongestionEvent {
                    now,
                    in_flight: flight_segs * m,
                    lost_bytes: m,
                    mss,
                    // Any window: the BSD basis takes min(cwnd, this).
                    peer_window: flight_segs * m,
                    ..Default::default()
                });
                decreased = true;
            }
            Op::RecoveryExit => cc.on_recovery_exit(now),
            Op::Rto {
                backoff,
                flight_segs,
                keeps,
            } => {
                cc.on_rto(&RtoEvent {
                    now,
                    in_flight: flight_segs * m,
                    backoff_count: backoff,
                    mss,
                    peer_window: flight_segs * m,
                    in_recovery: keeps,
                    keeps_ssthresh: keeps,
                });
                decreased = true;
            }
            Op::Idle { dt, restart_segs } => {
                now += dt;
                cc.on_idle_restart(now, restart_segs * m);
            }
            Op::Undo { cwnd, ssthresh } => cc.on_undo(now, cwnd, ssthresh),
            Op::SetCwnd { bytes } => cc.set_cwnd(bytes),
        }
        check_invariants(cc, m, decreased)?;
    }
    Ok(())
}

fn growth() -> impl Strategy<Value = WindowGrowth> {
    (
        prop_oneof![Just(CwndUnit::Packets), Just(CwndUnit::Bytes)],
        prop_oneof![Just(0u32), Just(1), Just(2), Just(8), Just(u32::MAX)],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(unit, abc_limit, slow_start_inclusive, ca_increment_truncated)| WindowGrowth {
                unit,
                abc_limit,
                count_delivered: false,
                slow_start_inclusive,
                ca_increment_truncated,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn prop_every_controller_keeps_invariants(
        algo in 0usize..list().len(),
        g in growth(),
        mss in prop_oneof![Just(1u32), Just(536), Just(1448), Just(9000)],
        iw_segs in 1u64..100,
        ops in proptest::collection::vec(loss_ops(), 1..400),
    ) {
        let info = &list()[algo];
        let init = CcInit { mss, initial_cwnd: iw_segs * u64::from(mss), initial_ssthresh: u64::MAX, growth: g };
        let mut cc = build(info.name, &[], init).unwrap();
        run_ops(cc.as_mut(), mss, &ops)?;
    }

    /// The stack's gate (`RtoEvent::sets_ssthresh`): a timeout inside a reduction Linux keeps
    /// (`keeps_ssthresh`) leaves every controller's ssthresh as it was, from any state, and
    /// still takes cwnd to the loss window (BBR: one segment, `bbr_recovery`).
    #[test]
    fn prop_timeout_keeping_the_reduction_leaves_ssthresh(
        algo in 0usize..list().len(),
        g in growth(),
        mss in prop_oneof![Just(536u32), Just(1448)],
        iw_segs in 1u64..100,
        ops in proptest::collection::vec(loss_ops(), 1..200),
        backoff in 1u32..4,
        flight_segs in 0u64..10_000,
    ) {
        let info = &list()[algo];
        let init = CcInit { mss, initial_cwnd: iw_segs * u64::from(mss), initial_ssthresh: u64::MAX, growth: g };
        let mut cc = build(info.name, &[], init).unwrap();
        run_ops(cc.as_mut(), mss, &ops)?;
        let before = cc.ssthresh();
        let m = u64::from(mss);
        cc.on_rto(&RtoEvent {
            now: 1 << 50,
            in_flight: flight_segs * m,
            backoff_count: backoff,
            mss,
            peer_window: flight_segs * m,
            in_recovery: true,
            keeps_ssthresh: true,
        });
        prop_assert_eq!(cc.ssthresh(), before, "{}", info.name);
        prop_assert!(cc.cwnd() <= m.max(before), "{}: cwnd {}", info.name, cc.cwnd());
    }

    #[test]
    fn prop_cubic_with_random_params_keeps_invariants(
        params in cubic_params(),
        g in growth(),
        ops in proptest::collection::vec(loss_ops(), 1..400),
    ) {
        let init = CcInit { mss: 1448, initial_cwnd: 14_480, initial_ssthresh: u64::MAX, growth: g };
        let mut cc = build("cubic", &params, init).unwrap();
        run_ops(cc.as_mut(), 1448, &ops)?;
    }

    #[test]
    fn prop_loss_based_with_random_params_keep_invariants(
        (name, params) in loss_based_params(),
        g in growth(),
        mss in prop_oneof![Just(1u32), Just(536), Just(1448), Just(9000)],
        iw_segs in 1u64..100,
        ops in proptest::collection::vec(loss_ops(), 1..400),
    ) {
        let init = CcInit { mss, initial_cwnd: iw_segs * u64::from(mss), initial_ssthresh: u64::MAX, growth: g };
        let mut cc = build(name, &params, init).unwrap();
        run_ops(cc.as_mut(), mss, &ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn prop_delay_and_rate_controllers_keep_invariants(
        (name, params) in delay_params(),
        unit in prop_oneof![Just(CwndUnit::Packets), Just(CwndUnit::Bytes)],
        abc_limit in prop_oneof![Just(0u32), Just(2), Just(u32::MAX)],
        mss in prop_oneof![Just(1u32), Just(536), Just(1448), Just(9000)],
        iw_segs in 1u64..100,
        ops in proptest::collection::vec(delay_ops(), 1..400),
    ) {
        let init = super::cc_init(mss, unit, abc_limit, iw_segs, u64::MAX);
        let mut cc = build(name, &params, init).unwrap();
        check_invariants(cc.as_ref(), u64::from(mss), false)?;
        run_ops(cc.as_mut(), mss, &ops)?;
    }
}
