//! The table of congestion-control algorithms: names, parameters with kinds and defaults, and
//! constructors. Scenario validation (Python) and the simulator both go through [`build`], so
//! unknown names, unknown parameters and wrong types are reported the same way everywhere.
//!
//! Adding an algorithm is one [`CcInfo`] entry in `ALGORITHMS`, naming the parameter table
//! (`PARAMS`) and constructor (`build`) in the algorithm's own module (see [`crate::params`]).

use std::fmt;

use crate::params::{write_list, ParamInfo, ParamValue, Params};
use crate::{CcInit, CongestionControl};

/// Constructor of a registered algorithm from validated parameters.
pub type Constructor = fn(&Params, &CcInit) -> Result<Box<dyn CongestionControl>, CcError>;

/// One registered algorithm.
#[derive(Clone, Copy, Debug)]
pub struct CcInfo {
    /// Name used in scenarios, e.g. `"cubic"`.
    pub name: &'static str,
    pub summary: &'static str,
    /// Where the modelled behaviour comes from.
    pub source: &'static str,
    pub params: &'static [ParamInfo],
    pub constructor: Constructor,
}

/// Why an algorithm could not be built. `Display` gives a complete, user-facing message.
#[derive(Clone, Debug, PartialEq)]
pub enum CcError {
    UnknownAlgorithm {
        name: String,
        known: Vec<&'static str>,
    },
    UnknownParam {
        algorithm: &'static str,
        param: String,
        allowed: Vec<&'static str>,
    },
    DuplicateParam {
        algorithm: &'static str,
        param: String,
    },
    WrongType {
        algorithm: &'static str,
        param: &'static str,
        expected: String,
        got: String,
    },
    InvalidValue {
        algorithm: &'static str,
        param: &'static str,
        value: String,
        reason: String,
    },
    InvalidInit {
        reason: String,
    },
}

impl fmt::Display for CcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CcError::UnknownAlgorithm { name, known } => {
                write!(f, "unknown congestion control \"{name}\"; known: ")?;
                write_list(f, known.iter().map(|s| s.to_string()))
            }
            CcError::UnknownParam {
                algorithm,
                param,
                allowed,
            } => {
                write!(f, "{algorithm}: unknown parameter \"{param}\"; allowed: ")?;
                if allowed.is_empty() {
                    f.write_str("none")
                } else {
                    write_list(f, allowed.iter().map(|s| s.to_string()))
                }
            }
            CcError::DuplicateParam { algorithm, param } => {
                write!(f, "{algorithm}: parameter \"{param}\" given more than once")
            }
            CcError::WrongType {
                algorithm,
                param,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{algorithm}: parameter \"{param}\" must be {expected}, got {got}"
                )
            }
            CcError::InvalidValue {
                algorithm,
                param,
                value,
                reason,
            } => {
                write!(
                    f,
                    "{algorithm}: parameter \"{param}\" = {value} is invalid: {reason}"
                )
            }
            CcError::InvalidInit { reason } => write!(f, "invalid initial values: {reason}"),
        }
    }
}

impl std::error::Error for CcError {}

// ---------------------------------------------------------------------------------------------
// Algorithms.

static ALGORITHMS: &[CcInfo] = &[
    CcInfo {
        name: "reno",
        summary: "Reno window rules: slow start, +1 segment per RTT, halve on loss, 1 segment \
                  after an RTO",
        source: "RFC 5681 §3.1–3.2; RFC 3465 (ABC); Linux tcp_reno_* (net/ipv4/tcp_cong.c)",
        params: crate::reno::PARAMS,
        constructor: crate::reno::build,
    },
    CcInfo {
        name: "newreno",
        summary: "Reno's window rules under the NewReno name; the partial-ACK recovery of \
                  RFC 6582 is the stack's recovery part",
        source: "RFC 5681 §3.1–3.2; RFC 6582 §3 (recovery, in the stack)",
        params: crate::reno::PARAMS,
        constructor: crate::reno::build_newreno,
    },
    CcInfo {
        name: "cubic",
        summary: "CUBIC window growth W(t) = C(t−K)³ + W_max with Reno-friendly region, fast \
                  convergence and HyStart / HyStart++",
        source: "RFC 9438; RFC 9406 (HyStart++); Ha, Rhee & Xu, SIGOPS OSR 2008; Linux v2.3 \
                 (net/ipv4/tcp_cubic.c)",
        params: crate::cubic::PARAMS,
        constructor: crate::cubic::build,
    },
    CcInfo {
        name: "vegas",
        summary: "TCP Vegas: ±1 segment per RTT to keep between alpha and beta packets queued; \
                  slow-start exit when more than gamma are",
        source: "Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c",
        params: crate::vegas::PARAMS,
        constructor: crate::vegas::build,
    },
    CcInfo {
        name: "fast",
        summary: "FAST TCP: w ← min{2w, (1−γ)w + γ(baseRTT/RTT·w + α)} once per RTT, about \
                  alpha packets queued per flow",
        source: "Jin, Wei & Low, IEEE INFOCOM 2004 (alpha, gamma, update period, loss rule: \
                 documented assumptions)",
        params: crate::fast::PARAMS,
        constructor: crate::fast::build,
    },
    CcInfo {
        name: "ctcp",
        summary: "Compound TCP: win = cwnd + dwnd, a Reno window plus a delay-based window \
                  grown by α·win^k per RTT while the backlog is below γ (γ auto-tuned)",
        source: "draft-sridharan-tcpm-ctcp-02; Tan, Song, Zhang & Sridharan, IEEE INFOCOM 2006",
        params: crate::ctcp::PARAMS,
        constructor: crate::ctcp::build,
    },
    CcInfo {
        name: "bbr",
        summary: "BBR v1: paces at gain·BtlBw (windowed max delivery rate), cwnd = \
                  2·BtlBw·RTprop; STARTUP, DRAIN, PROBE_BW gain cycle, PROBE_RTT",
        source: "Cardwell et al., ACM Queue 14(5) 2016; Linux net/ipv4/tcp_bbr.c",
        params: crate::bbr::PARAMS,
        constructor: crate::bbr::build,
    },
    CcInfo {
        name: "bic",
        summary: "BIC-TCP: binary search toward the last maximum W_max, max probing above it, \
                  β 819/1024; or Linux 2.6.10's built-in BIC (β 7/8, fast-convergence bug)",
        source: "Xu, Harfoush & Rhee, IEEE INFOCOM 2004; Linux net/ipv4/tcp_bic.c; LKML \
                 \"BicTCP Implementation Bug\" (Feb 2005)",
        params: crate::bic::PARAMS,
        constructor: crate::bic::build,
    },
    CcInfo {
        name: "hstcp",
        summary: "HighSpeed TCP: w += a(w)/w per ACK, w ← (1 − b(w))·w on loss, a and b from \
                  RFC 3649's table (standard TCP up to 38 segments)",
        source: "RFC 3649 §5 and Appendix B; Linux net/ipv4/tcp_highspeed.c",
        params: crate::hstcp::PARAMS,
        constructor: crate::hstcp::build,
    },
    CcInfo {
        name: "htcp",
        summary: "H-TCP: α grows with the time since the last congestion event, adaptive \
                  backoff β = RTTmin/RTTmax, bandwidth switch, RTT scaling",
        source: "Leith & Shorten, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c",
        params: crate::htcp::PARAMS,
        constructor: crate::htcp::build,
    },
    CcInfo {
        name: "scalable",
        summary: "Scalable TCP: +1 segment per min(cwnd, ai_cnt) ACKs (×1.01–1.02 per RTT), \
                  keep 7/8 on loss",
        source: "Kelly, ACM CCR 33(2) 2003; Linux net/ipv4/tcp_scalable.c",
        params: crate::scalable::PARAMS,
        constructor: crate::scalable::build,
    },
    CcInfo {
        name: "illinois",
        summary: "TCP-Illinois: additive increase α ∈ [0.3, 10] and decrease β ∈ [1/8, 1/2] \
                  from the average queueing delay, once per RTT",
        source: "Liu, Başar & Srikant, Performance Evaluation 2008; Linux \
                 net/ipv4/tcp_illinois.c",
        params: crate::illinois::PARAMS,
        constructor: crate::illinois::build,
    },
    CcInfo {
        name: "westwood",
        summary: "Westwood+: Reno probing; after loss cwnd = ssthresh = bandwidth estimate × \
                  RTTmin",
        source: "Mascolo et al., MobiCom 2001; Grieco & Mascolo, CCR 2004; Linux \
                 net/ipv4/tcp_westwood.c",
        params: crate::westwood::PARAMS,
        constructor: crate::westwood::build,
    },
];

/// Every registered algorithm, in a fixed order.
pub fn list() -> &'static [CcInfo] {
    ALGORITHMS
}

/// The algorithm registered under `name`.
pub fn find(name: &str) -> Option<&'static CcInfo> {
    ALGORITHMS.iter().find(|i| i.name == name)
}

/// Builds the algorithm `name` with `params` (unknown names, unknown or repeated parameters,
/// wrong types and invalid values are errors) for a connection starting with `init`.
pub fn build(
    name: &str,
    params: &[(String, ParamValue)],
    init: CcInit,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let info = find(name).ok_or_else(|| CcError::UnknownAlgorithm {
        name: name.to_string(),
        known: ALGORITHMS.iter().map(|i| i.name).collect(),
    })?;
    if init.mss == 0 {
        return Err(CcError::InvalidInit {
            reason: "mss must be > 0".into(),
        });
    }
    let resolved = Params::resolve(info, params)?;
    (info.constructor)(&resolved, &init)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::parse_default;
    use crate::CwndUnit;

    fn init(unit: CwndUnit, abc_limit: u32) -> CcInit {
        crate::testkit::cc_init(1448, unit, abc_limit, 10, u64::MAX)
    }

    fn p(name: &str, v: ParamValue) -> (String, ParamValue) {
        (name.to_string(), v)
    }

    #[test]
    fn test_registry_builds_every_algorithm_with_defaults() {
        let names: Vec<_> = list().iter().map(|i| i.name).collect();
        assert_eq!(
            names,
            [
                "reno", "newreno", "cubic", "vegas", "fast", "ctcp", "bbr", "bic", "hstcp", "htcp",
                "scalable", "illinois", "westwood"
            ]
        );
        for info in list() {
            for prm in info.params {
                assert!(parse_default(prm).is_some(), "{}: {}", info.name, prm.name);
                assert!(!prm.doc.is_empty());
            }
            let cc = build(info.name, &[], init(CwndUnit::Packets, 0)).unwrap();
            assert_eq!(cc.name(), info.name);
            assert_eq!(cc.cwnd(), 10 * 1448);
            assert_eq!(cc.ssthresh(), u64::MAX);
        }
    }

    /// Windows, threshold and pacing rate after each of a fixed series of events: ACKs at
    /// 50 ms RTT, a loss episode, more ACKs, a timeout, more ACKs.
    fn trajectory(cc: &mut dyn CongestionControl) -> Vec<(u64, u64, Option<u64>)> {
        use crate::testkit::{ack_one, loss_episode};
        let mut out = Vec::new();
        let mut now = 0;
        let mut acks = |cc: &mut dyn CongestionControl, now: &mut crate::Nanos, n: u32| {
            for _ in 0..n {
                *now += crate::MS;
                cc.on_ack(&ack_one(*now, 50 * crate::MS, 1448));
                out.push((cc.cwnd(), cc.ssthresh(), cc.pacing_rate()));
            }
        };
        acks(cc, &mut now, 120);
        loss_episode(cc, now, 1448);
        acks(cc, &mut now, 80);
        cc.on_rto(&crate::RtoEvent {
            now,
            in_flight: cc.cwnd(),
            backoff_count: 1,
            mss: 1448,
            peer_window: u64::MAX,
            in_recovery: false,
            keeps_ssthresh: false,
        });
        acks(cc, &mut now, 60);
        out
    }

    /// Windows, threshold, pacing rate and debug variables after each event of a pseudo-random
    /// series (ACKs of 1–3 segments with varying RTTs and in-flight counts, sends, loss
    /// episodes, a timeout), every ACK carrying `rate(i)` as its delivery-rate sample.
    fn rate_trajectory(
        cc: &mut dyn CongestionControl,
        seed: u64,
        rate: impl Fn(u64) -> Option<crate::RateSample>,
    ) -> Vec<(u64, u64, Option<u64>, Vec<u64>)> {
        let mut x = seed | 1;
        let mut next = move || {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mss, mut now, mut delivered) = (1448u32, 0u64, 0u64);
        let mut out = Vec::new();
        for i in 0..600u64 {
            let r = next();
            now += 1 + r % (4 * crate::MS);
            let segs = 1 + (r >> 8) % 3;
            let rtt = 20 * crate::MS + (r >> 16) % (60 * crate::MS);
            let in_flight = (cc.cwnd() as f64 * ((r >> 24) % 100) as f64 / 80.0) as u64;
            match (r >> 40) % 100 {
                0..=1 => crate::testkit::loss_episode(cc, now, mss),
                2 if i > 300 => cc.on_rto(&crate::RtoEvent {
                    now,
                    in_flight,
                    backoff_count: 1,
                    mss,
                    peer_window: u64::MAX,
                    in_recovery: false,
                    keeps_ssthresh: false,
                }),
                3..=30 => cc.on_packet_sent(&crate::SentEvent {
                    now,
                    bytes: mss,
                    in_flight,
                    is_retransmission: false,
                    total_delivered: delivered,
                }),
                _ => {
                    delivered += segs * u64::from(mss);
                    cc.on_ack(&crate::AckEvent {
                        now,
                        bytes_acked: segs * u64::from(mss),
                        packets_acked: segs as u32,
                        packets_delivered: segs as u32,
                        prior_in_flight: in_flight + segs * u64::from(mss),
                        in_flight,
                        rtt_sample: Some(rtt),
                        srtt: rtt,
                        min_rtt: 20 * crate::MS,
                        rate: rate(i),
                        mss,
                        ..Default::default()
                    });
                }
            }
            let mut vars = [("", 0.0); 16];
            let n = cc.debug_vars(&mut vars);
            let vars = vars[..n].iter().map(|v| v.1.to_bits()).collect();
            out.push((cc.cwnd(), cc.ssthresh(), cc.pacing_rate(), vars));
        }
        out
    }

    #[test]
    fn prop_rate_blind_controllers_ignore_rate() {
        // The stack leaves out delivery-rate samples (`rate: None`) for a controller whose
        // `rate_samples()` is false (tcplab-sim tcp/rate.rs). Such a controller must act the same
        // with and without them, else the saving changes results. BBR says true, and this test
        // would catch it: its trajectory does depend on the samples.
        let sample = |i: u64| {
            Some(crate::RateSample {
                delivery_rate_bps: 1e6 * (1 + i % 97) as f64,
                delivered: 1448 * (1 + i % 7),
                interval: crate::MS * (1 + i % 50),
                is_app_limited: i.is_multiple_of(5),
                prior_in_flight: 1448 * (i % 40),
                total_delivered: 1448 * i,
            })
        };
        let mut checked = 0;
        for info in list() {
            for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
                for seed in [1u64, 0x9e37_79b9_7f4a_7c15, 12345] {
                    let mut with = build(info.name, &[], init(unit, 0)).unwrap();
                    let mut without = build(info.name, &[], init(unit, 0)).unwrap();
                    with.set_random_seed(seed);
                    without.set_random_seed(seed);
                    let a = rate_trajectory(&mut *with, seed, sample);
                    let b = rate_trajectory(&mut *without, seed, |_| None);
                    if with.rate_samples() {
                        assert_eq!(info.name, "bbr", "only BBR reads rate samples");
                        assert_ne!(a, b, "{}: the samples should matter", info.name);
                    } else {
                        assert_eq!(a, b, "{} ({unit:?}, seed {seed})", info.name);
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 6 * (list().len() - 1));
    }

    #[test]
    fn test_copy_state_from_a_fresh_controller_restarts_it() {
        // A pooled connection's controller (tcplab-sim background traffic) is a used one
        // overwritten by a fresh copy: from then on it must act as a freshly built one.
        let i = init(CwndUnit::Packets, 0);
        for info in list() {
            let mut used = build(info.name, &[], i).unwrap();
            used.set_random_seed(3);
            trajectory(&mut *used);
            let fresh = build(info.name, &[], i).unwrap();
            assert_ne!(
                (used.cwnd(), used.ssthresh()),
                (fresh.cwnd(), fresh.ssthresh()),
                "{}: used state",
                info.name
            );
            assert!(used.copy_state_from(&*fresh), "{}", info.name);
            let mut reference = build(info.name, &[], i).unwrap();
            used.set_random_seed(9);
            reference.set_random_seed(9);
            assert_eq!(
                trajectory(&mut *used),
                trajectory(&mut *reference),
                "{}",
                info.name
            );
            // Another algorithm's state is refused and changes nothing.
            let other = build(
                if info.name == "vegas" {
                    "cubic"
                } else {
                    "vegas"
                },
                &[],
                i,
            )
            .unwrap();
            let before = (used.cwnd(), used.ssthresh());
            assert!(!used.copy_state_from(&*other), "{}", info.name);
            assert_eq!((used.cwnd(), used.ssthresh()), before);
        }
    }

    #[test]
    fn test_registry_unknown_algorithm_lists_known_names() {
        let e = build("cubik", &[], init(CwndUnit::Bytes, 0)).err().unwrap();
        assert_eq!(
            e.to_string(),
            "unknown congestion control \"cubik\"; known: reno, newreno, cubic, vegas, fast, ctcp, \
             bbr, bic, hstcp, htcp, scalable, illinois, westwood"
        );
    }

    #[test]
    fn test_registry_unknown_param_lists_allowed() {
        let e = build(
            "reno",
            &[p("beta", ParamValue::Float(0.5))],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "reno: unknown parameter \"beta\"; allowed: ssthresh_from, ai_rule"
        );
    }

    #[test]
    fn test_registry_wrong_type_says_which() {
        let e = build(
            "cubic",
            &[p("beta", ParamValue::Str("x".into()))],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "cubic: parameter \"beta\" must be a float, got string \"x\""
        );
        let e = build(
            "cubic",
            &[p("hystart", ParamValue::Str("yes".into()))],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "cubic: parameter \"hystart\" must be one of \"off\", \"linux\", \"rfc9406\", got string \"yes\""
        );
        let e = build(
            "cubic",
            &[p("fast_convergence", ParamValue::Int(1))],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert!(
            matches!(
                e,
                CcError::WrongType {
                    param: "fast_convergence",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn test_registry_invalid_values_and_duplicates() {
        let e = build(
            "cubic",
            &[p("beta", ParamValue::Float(1.0))],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "cubic: parameter \"beta\" = 1 is invalid: must be in (0, 1)"
        );
        let e = build(
            "cubic",
            &[p("c", ParamValue::Float(f64::NAN))],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert!(matches!(e, CcError::InvalidValue { param: "c", .. }));
        let e = build(
            "cubic",
            &[
                p("c", ParamValue::Float(0.3)),
                p("c", ParamValue::Float(0.5)),
            ],
            init(CwndUnit::Bytes, 0),
        )
        .err()
        .unwrap();
        assert_eq!(e.to_string(), "cubic: parameter \"c\" given more than once");
        let e = build(
            "reno",
            &[],
            CcInit {
                mss: 0,
                ..init(CwndUnit::Bytes, 0)
            },
        )
        .err()
        .unwrap();
        assert!(matches!(e, CcError::InvalidInit { .. }));
    }

    #[test]
    fn test_registry_accepts_int_for_float_and_bool_for_off_choice() {
        let given = [p("beta", ParamValue::Int(0))];
        // 0 is an accepted type but an invalid value.
        assert!(matches!(
            build("cubic", &given, init(CwndUnit::Bytes, 0))
                .err()
                .unwrap(),
            CcError::InvalidValue { param: "beta", .. }
        ));
        let info = find("cubic").unwrap();
        let r = Params::resolve(info, &[p("c", ParamValue::Int(1))]).unwrap();
        assert_eq!(r.float("c"), 1.0);
        let r = Params::resolve(info, &[p("hystart", ParamValue::Bool(true))]).unwrap();
        assert_eq!(r.choice("hystart"), "linux");
        let r = Params::resolve(info, &[p("hystart", ParamValue::Bool(false))]).unwrap();
        assert_eq!(r.choice("hystart"), "off");
        assert!(r.bool("tcp_friendliness"));
        assert_eq!(r.int("hystart_low_window"), 16);
    }
}
