//! The table of congestion-control algorithms: names, parameters with kinds and defaults, and
//! constructors. Scenario validation (Python) and the simulator both go through [`build`], so
//! unknown names, unknown parameters and wrong types are reported the same way everywhere.
//!
//! Adding an algorithm is one [`CcInfo`] entry in `ALGORITHMS` plus its constructor function.

use std::fmt;

use crate::cubic::{Cubic, CubicParams, CubicVersion, HystartMode};
use crate::growth::SsthreshBasis;
use crate::hystart::HystartDetect;
use crate::reno::Reno;
use crate::{CcInit, CongestionControl, MS};

/// The type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    Bool,
    /// A real number; integer values are accepted too.
    Float,
    /// A signed integer.
    Int,
    /// One of the listed strings. A choice that lists `"off"` also accepts `false` (= `"off"`)
    /// and `true` (= its default, or the first other choice if the default is `"off"`), so
    /// `hystart = true` keeps working.
    Choice(&'static [&'static str]),
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKind::Bool => f.write_str("a bool"),
            ParamKind::Float => f.write_str("a float"),
            ParamKind::Int => f.write_str("an integer"),
            ParamKind::Choice(c) => {
                f.write_str("one of ")?;
                write_list(f, c.iter().map(|s| format!("\"{s}\"")))
            }
        }
    }
}

/// One parameter of an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub kind: ParamKind,
    /// Default, spelled as in a scenario: `"true"`, `"0.7"`, `"16"`, `"linux"`.
    pub default: &'static str,
    pub doc: &'static str,
}

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

/// A parameter value as given by a scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Bool(bool),
    Float(f64),
    Int(i64),
    Str(String),
}

impl ParamValue {
    fn type_name(&self) -> &'static str {
        match self {
            ParamValue::Bool(_) => "bool",
            ParamValue::Float(_) => "float",
            ParamValue::Int(_) => "integer",
            ParamValue::Str(_) => "string",
        }
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Str(s) => write!(f, "\"{s}\""),
        }
    }
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

fn write_list<I: Iterator<Item = String>>(f: &mut fmt::Formatter<'_>, items: I) -> fmt::Result {
    for (i, s) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(&s)?;
    }
    Ok(())
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

#[derive(Clone, Copy, Debug, PartialEq)]
enum Resolved {
    Bool(bool),
    Float(f64),
    Int(i64),
    Choice(&'static str),
}

/// Validated parameters of one algorithm: every declared parameter has a value, given or
/// default. Getters panic only if asked for a parameter the algorithm does not declare (a bug
/// in its constructor, caught by the registry tests).
#[derive(Clone, Debug)]
pub struct Params {
    algorithm: &'static str,
    values: Vec<(&'static str, Resolved)>,
}

impl Params {
    fn get(&self, name: &str) -> Resolved {
        match self.values.iter().find(|(n, _)| *n == name) {
            Some((_, v)) => *v,
            None => panic!("{}: parameter \"{name}\" is not declared", self.algorithm),
        }
    }
    pub fn algorithm(&self) -> &'static str {
        self.algorithm
    }
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Resolved::Bool(b) => b,
            v => panic!(
                "{}: parameter \"{name}\" is {v:?}, not a bool",
                self.algorithm
            ),
        }
    }
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Resolved::Float(x) => x,
            v => panic!(
                "{}: parameter \"{name}\" is {v:?}, not a float",
                self.algorithm
            ),
        }
    }
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Resolved::Int(i) => i,
            v => panic!(
                "{}: parameter \"{name}\" is {v:?}, not an integer",
                self.algorithm
            ),
        }
    }
    pub fn choice(&self, name: &str) -> &'static str {
        match self.get(name) {
            Resolved::Choice(c) => c,
            v => panic!(
                "{}: parameter \"{name}\" is {v:?}, not a choice",
                self.algorithm
            ),
        }
    }

    fn invalid(&self, param: &'static str, value: String, reason: &str) -> CcError {
        CcError::InvalidValue {
            algorithm: self.algorithm,
            param,
            value,
            reason: reason.into(),
        }
    }

    /// Resolves `given` against `info`'s declarations.
    pub fn resolve(info: &CcInfo, given: &[(String, ParamValue)]) -> Result<Params, CcError> {
        for (i, (name, _)) in given.iter().enumerate() {
            if !info.params.iter().any(|p| p.name == name) {
                return Err(CcError::UnknownParam {
                    algorithm: info.name,
                    param: name.clone(),
                    allowed: info.params.iter().map(|p| p.name).collect(),
                });
            }
            if given[..i].iter().any(|(n, _)| n == name) {
                return Err(CcError::DuplicateParam {
                    algorithm: info.name,
                    param: name.clone(),
                });
            }
        }
        let mut values = Vec::with_capacity(info.params.len());
        for p in info.params {
            let v = match given.iter().find(|(n, _)| n == p.name) {
                Some((_, v)) => convert(info.name, p, v)?,
                None => parse_default(p).unwrap_or_else(|| {
                    panic!(
                        "{}: default {:?} of \"{}\" does not parse",
                        info.name, p.default, p.name
                    )
                }),
            };
            values.push((p.name, v));
        }
        Ok(Params {
            algorithm: info.name,
            values,
        })
    }
}

fn convert(algorithm: &'static str, p: &ParamInfo, v: &ParamValue) -> Result<Resolved, CcError> {
    let wrong = || CcError::WrongType {
        algorithm,
        param: p.name,
        expected: p.kind.to_string(),
        got: format!("{} {v}", v.type_name()),
    };
    match (p.kind, v) {
        (ParamKind::Bool, ParamValue::Bool(b)) => Ok(Resolved::Bool(*b)),
        (ParamKind::Float, ParamValue::Float(x)) => Ok(Resolved::Float(*x)),
        (ParamKind::Float, ParamValue::Int(i)) => Ok(Resolved::Float(*i as f64)),
        (ParamKind::Int, ParamValue::Int(i)) => Ok(Resolved::Int(*i)),
        (ParamKind::Choice(choices), ParamValue::Str(s)) => choices
            .iter()
            .find(|c| **c == s.as_str())
            .map(|c| Resolved::Choice(c))
            .ok_or_else(wrong),
        (ParamKind::Choice(choices), ParamValue::Bool(b)) if choices.contains(&"off") => {
            if !*b {
                Ok(Resolved::Choice("off"))
            } else if p.default != "off" {
                parse_default(p).ok_or_else(wrong)
            } else {
                choices
                    .iter()
                    .find(|c| **c != "off")
                    .map(|c| Resolved::Choice(c))
                    .ok_or_else(wrong)
            }
        }
        _ => Err(wrong()),
    }
}

fn parse_default(p: &ParamInfo) -> Option<Resolved> {
    match p.kind {
        ParamKind::Bool => match p.default {
            "true" => Some(Resolved::Bool(true)),
            "false" => Some(Resolved::Bool(false)),
            _ => None,
        },
        ParamKind::Float => p.default.parse().ok().map(Resolved::Float),
        ParamKind::Int => p.default.parse().ok().map(Resolved::Int),
        ParamKind::Choice(c) => c
            .iter()
            .find(|s| **s == p.default)
            .map(|s| Resolved::Choice(s)),
    }
}

// ---------------------------------------------------------------------------------------------
// Algorithms.

const SSTHRESH_FROM: ParamInfo = ParamInfo {
    name: "ssthresh_from",
    kind: ParamKind::Choice(SsthreshBasis::CHOICES),
    default: "auto",
    doc: "basis of the multiplicative decrease: \"cwnd\" (Linux), \"flight_size\" (RFC 5681 \
          eq. 4, RFC 9438 §4.6) or \"auto\" (cwnd in the packets unit, flight size in bytes)",
};

const RENO_PARAMS: &[ParamInfo] = &[SSTHRESH_FROM];

const CUBIC_PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "hystart",
        kind: ParamKind::Choice(HystartMode::CHOICES),
        default: "linux",
        doc: "slow-start exit: \"off\", \"linux\" (HyStart: ACK train + delay increase) or \
              \"rfc9406\" (HyStart++); true = \"linux\", false = \"off\"",
    },
    ParamInfo {
        name: "hystart_detect",
        kind: ParamKind::Choice(HystartDetect::CHOICES),
        default: "both",
        doc: "Linux HyStart detectors (module parameter hystart_detect)",
    },
    ParamInfo {
        name: "hystart_low_window",
        kind: ParamKind::Int,
        default: "16",
        doc: "Linux HyStart acts only from this window, segments (hystart_low_window)",
    },
    ParamInfo {
        name: "hystart_ack_delta_us",
        kind: ParamKind::Int,
        default: "2000",
        doc: "Linux HyStart: largest ACK spacing that continues an ACK train, µs",
    },
    ParamInfo {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: "true",
        doc: "W_max = cwnd·(1+β)/2 after a loss below the previous W_max (RFC 9438 §4.7)",
    },
    ParamInfo {
        name: "tcp_friendliness",
        kind: ParamKind::Bool,
        default: "true",
        doc: "Reno-friendly region: never grow slower than Reno (RFC 9438 §4.3)",
    },
    ParamInfo {
        name: "beta",
        kind: ParamKind::Float,
        default: "0.7",
        doc: "multiplicative decrease factor β, 0 < β < 1 (Linux: round(β·1024)/1024 = 717/1024)",
    },
    ParamInfo {
        name: "c",
        kind: ParamKind::Float,
        default: "0.4",
        doc: "cubic scaling constant C, segments/s³, > 0",
    },
    SSTHRESH_FROM,
    ParamInfo {
        name: "version",
        kind: ParamKind::Choice(CubicVersion::CHOICES),
        default: "rfc9438",
        doc: "\"rfc9438\" (current: RFC 9438 / Linux v2.3) or \"2.0\" (Linux CUBIC v2.0: β \
              819/1024 unless beta is set, initial ssthresh 100, max increment 16, cnt 50 \
              before the first loss, delayed-ACK compensation, no HyStart)",
    },
    ParamInfo {
        name: "v2_scaling_bug",
        kind: ParamKind::Bool,
        default: "true",
        doc: "version 2.0 only: the 2.6.18 scaling error (growth term cube_rtt_scale 32 instead \
              of 410, max-increment floor 8× too strict; fixed in 2.6.19)",
    },
    ParamInfo {
        name: "initial_ssthresh",
        kind: ParamKind::Int,
        default: "-1",
        doc: "module parameter initial_ssthresh, segments: slow start ends there (0 = keep the \
              connection's; -1 = the version's: 100 for \"2.0\", 0 otherwise; Linux changed \
              the default from 100 to 0 in 2.6.22)",
    },
];

fn basis(p: &Params) -> SsthreshBasis {
    SsthreshBasis::from_name(p.choice("ssthresh_from")).unwrap_or_default()
}

fn build_reno(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(Reno::new(init, basis(p))))
}

fn build_newreno(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(Reno::newreno(init, basis(p))))
}

fn build_cubic(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let beta = p.float("beta");
    if !(beta > 0.0 && beta < 1.0) {
        return Err(p.invalid("beta", beta.to_string(), "must be in (0, 1)"));
    }
    let c = p.float("c");
    if !(c.is_finite() && c > 0.0) {
        return Err(p.invalid("c", c.to_string(), "must be a positive finite number"));
    }
    let low = p.int("hystart_low_window");
    let low = u32::try_from(low).map_err(|_| {
        p.invalid(
            "hystart_low_window",
            low.to_string(),
            "must be in 0..=2^32-1",
        )
    })?;
    let delta = p.int("hystart_ack_delta_us");
    let delta_ns = u64::try_from(delta)
        .ok()
        .and_then(|us| us.checked_mul(MS / 1000))
        .ok_or_else(|| p.invalid("hystart_ack_delta_us", delta.to_string(), "must be ≥ 0"))?;
    let params = CubicParams {
        hystart: HystartMode::from_name(p.choice("hystart")).unwrap_or_default(),
        hystart_detect: HystartDetect::from_name(p.choice("hystart_detect")).unwrap_or_default(),
        hystart_low_window: low,
        hystart_ack_delta: delta_ns,
        fast_convergence: p.bool("fast_convergence"),
        tcp_friendliness: p.bool("tcp_friendliness"),
        beta,
        c,
        ssthresh_from: basis(p),
        version: CubicVersion::from_name(p.choice("version")).unwrap_or_default(),
        v2_scaling_bug: p.bool("v2_scaling_bug"),
        initial_ssthresh: match p.int("initial_ssthresh") {
            -1 => None,
            v => Some(u32::try_from(v).map_err(|_| {
                p.invalid(
                    "initial_ssthresh",
                    v.to_string(),
                    "must be -1 (the version's), 0 (keep the connection's) or a segment count",
                )
            })?),
        },
    };
    Ok(Box::new(Cubic::new(init, params)))
}

static ALGORITHMS: &[CcInfo] = &[
    CcInfo {
        name: "reno",
        summary: "Reno window rules: slow start, +1 segment per RTT, halve on loss, 1 segment \
                  after an RTO",
        source: "RFC 5681 §3.1–3.2; RFC 3465 (ABC); Linux tcp_reno_* (net/ipv4/tcp_cong.c)",
        params: RENO_PARAMS,
        constructor: build_reno,
    },
    CcInfo {
        name: "newreno",
        summary: "Reno's window rules under the NewReno name; the partial-ACK recovery of \
                  RFC 6582 is the stack's recovery part",
        source: "RFC 5681 §3.1–3.2; RFC 6582 §3 (recovery, in the stack)",
        params: RENO_PARAMS,
        constructor: build_newreno,
    },
    CcInfo {
        name: "cubic",
        summary: "CUBIC window growth W(t) = C(t−K)³ + W_max with Reno-friendly region, fast \
                  convergence and HyStart / HyStart++",
        source: "RFC 9438; RFC 9406 (HyStart++); Ha, Rhee & Xu, SIGOPS OSR 2008; Linux v2.3 \
                 (net/ipv4/tcp_cubic.c)",
        params: CUBIC_PARAMS,
        constructor: build_cubic,
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
    use crate::{AckEvent, CongestionEvent, CwndUnit, Nanos, RtoEvent, SentEvent, WindowGrowth};
    use proptest::prelude::*;

    fn init(unit: CwndUnit, abc_limit: u32) -> CcInit {
        CcInit {
            mss: 1448,
            initial_cwnd: 10 * 1448,
            initial_ssthresh: u64::MAX,
            growth: WindowGrowth {
                unit,
                abc_limit,
                count_delivered: false,
            },
        }
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
            "reno: unknown parameter \"beta\"; allowed: ssthresh_from"
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

    // -----------------------------------------------------------------------------------------
    // Property tests: random event sequences for every registered controller.

    #[derive(Clone, Debug)]
    enum Op {
        Ack {
            dt: Nanos,
            segs: u32,
            partial: u32,
            rtt: Option<Nanos>,
            in_recovery: bool,
            limited: bool,
        },
        Congestion {
            dt: Nanos,
            flight_segs: u64,
        },
        RecoveryExit,
        Rto {
            backoff: u32,
            flight_segs: u64,
        },
        Idle {
            dt: Nanos,
            restart_segs: u64,
        },
        Sent {
            dt: Nanos,
            flight_segs: u64,
        },
        Undo {
            cwnd: u64,
            ssthresh: u64,
        },
        SetCwnd {
            bytes: u64,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        let rtt = prop_oneof![Just(None), (1u64..3_000_000_000).prop_map(Some)];
        prop_oneof![
            8 => (0u64..200_000_000, 0u32..64, 0u32..1448, rtt, proptest::bool::weighted(0.1), proptest::bool::weighted(0.1))
                .prop_map(|(dt, segs, partial, rtt, in_recovery, limited)| Op::Ack { dt, segs, partial, rtt, in_recovery, limited }),
            1 => (0u64..1_000_000_000, 0u64..100_000).prop_map(|(dt, flight_segs)| Op::Congestion { dt, flight_segs }),
            1 => Just(Op::RecoveryExit),
            1 => (1u32..8, 0u64..100_000).prop_map(|(backoff, flight_segs)| Op::Rto { backoff, flight_segs }),
            1 => (0u64..100_000_000_000, 0u64..100).prop_map(|(dt, restart_segs)| Op::Idle { dt, restart_segs }),
            1 => (0u64..10_000_000_000, 0u64..1000).prop_map(|(dt, flight_segs)| Op::Sent { dt, flight_segs }),
            1 => (0u64..u64::MAX, 0u64..u64::MAX).prop_map(|(cwnd, ssthresh)| Op::Undo { cwnd, ssthresh }),
            1 => (0u64..(1u64 << 40)).prop_map(|bytes| Op::SetCwnd { bytes }),
        ]
    }

    fn cubic_params() -> impl Strategy<Value = Vec<(String, ParamValue)>> {
        (
            prop_oneof![Just("off"), Just("linux"), Just("rfc9406")],
            prop_oneof![Just("both"), Just("ack_train"), Just("delay")],
            any::<bool>(),
            any::<bool>(),
            0.01f64..0.99,
            0.001f64..100.0,
            prop_oneof![Just("auto"), Just("cwnd"), Just("flight_size")],
            prop_oneof![Just("rfc9438"), Just("2.0")],
            any::<bool>(),
        )
            .prop_map(|(h, d, fc, tf, beta, c, basis, version, bug)| {
                vec![
                    p("hystart", ParamValue::Str(h.into())),
                    p("hystart_detect", ParamValue::Str(d.into())),
                    p("fast_convergence", ParamValue::Bool(fc)),
                    p("tcp_friendliness", ParamValue::Bool(tf)),
                    p("beta", ParamValue::Float(beta)),
                    p("c", ParamValue::Float(c)),
                    p("ssthresh_from", ParamValue::Str(basis.into())),
                    p("version", ParamValue::Str(version.into())),
                    p("v2_scaling_bug", ParamValue::Bool(bug)),
                ]
            })
    }

    /// Random parameters for the loss-based controllers (bic, hstcp, htcp, scalable, illinois,
    /// westwood).
    fn loss_based_params() -> impl Strategy<Value = (&'static str, Vec<(String, ParamValue)>)> {
        let basis = || prop_oneof![Just("auto"), Just("cwnd"), Just("flight_size")];
        let s = |v: &str| ParamValue::Str(v.into());
        prop_oneof![
            (
                prop_oneof![Just("linux"), Just("2.6.10")],
                any::<bool>(),
                any::<bool>(),
                prop_oneof![Just(0i64), 1i64..1000],
                basis(),
            )
                .prop_map(move |(v, fc, bug, iss, b)| (
                    "bic",
                    vec![
                        p("variant", s(v)),
                        p("fast_convergence", ParamValue::Bool(fc)),
                        p("fast_convergence_bug", ParamValue::Bool(bug)),
                        p("initial_ssthresh", ParamValue::Int(iss)),
                        p("ssthresh_from", s(b)),
                    ]
                )),
            basis().prop_map(move |b| ("hstcp", vec![p("ssthresh_from", s(b))])),
            (any::<bool>(), any::<bool>(), any::<bool>(), basis()).prop_map(
                move |(r, bw, ab, b)| (
                    "htcp",
                    vec![
                        p("rtt_scaling", ParamValue::Bool(r)),
                        p("bandwidth_switch", ParamValue::Bool(bw)),
                        p("adaptive_backoff", ParamValue::Bool(ab)),
                        p("ssthresh_from", s(b)),
                    ]
                )
            ),
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

    fn check_invariants(
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
        let mut extra = [("", 0.0f64); 16];
        let n = cc.debug_vars(&mut extra);
        for (name, v) in &extra[..n] {
            prop_assert!(v.is_finite(), "{name} = {v}");
        }
        Ok(())
    }

    fn run_ops(cc: &mut dyn CongestionControl, mss: u32, ops: &[Op]) -> Result<(), TestCaseError> {
        let mssb = u64::from(mss);
        let mut now: Nanos = 0;
        for o in ops {
            let mut decreased = false;
            match *o {
                Op::Ack {
                    dt,
                    segs,
                    partial,
                    rtt,
                    in_recovery,
                    limited,
                } => {
                    now += dt;
                    let bytes = u64::from(segs) * mssb + u64::from(partial % mss);
                    let srtt = rtt.unwrap_or(0);
                    cc.on_ack(&AckEvent {
                        now,
                        bytes_acked: bytes,
                        packets_acked: segs,
                        packets_delivered: segs,
                        prior_in_flight: cc.cwnd(),
                        in_flight: cc.cwnd().saturating_sub(bytes),
                        rtt_sample: rtt,
                        srtt,
                        min_rtt: srtt,
                        in_recovery,
                        app_limited: limited,
                        mss,
                        ..Default::default()
                    });
                }
                Op::Congestion { dt, flight_segs } => {
                    now += dt;
                    cc.on_congestion_event(&CongestionEvent {
                        now,
                        in_flight: flight_segs * mssb,
                        mss,
                        ..Default::default()
                    });
                    decreased = true;
                }
                Op::RecoveryExit => cc.on_recovery_exit(now),
                Op::Rto {
                    backoff,
                    flight_segs,
                } => {
                    cc.on_rto(&RtoEvent {
                        now,
                        in_flight: flight_segs * mssb,
                        backoff_count: backoff,
                        mss,
                    });
                    decreased = true;
                }
                Op::Idle { dt, restart_segs } => {
                    now += dt;
                    cc.on_idle_restart(now, restart_segs * mssb);
                }
                Op::Sent { dt, flight_segs } => {
                    now += dt;
                    cc.on_packet_sent(&SentEvent {
                        now,
                        bytes: mss,
                        in_flight: flight_segs * mssb + mssb,
                        ..Default::default()
                    });
                }
                Op::Undo { cwnd, ssthresh } => cc.on_undo(now, cwnd, ssthresh),
                Op::SetCwnd { bytes } => cc.set_cwnd(bytes),
            }
            check_invariants(cc, mssb, decreased)?;
        }
        Ok(())
    }

    fn growth() -> impl Strategy<Value = WindowGrowth> {
        (
            prop_oneof![Just(CwndUnit::Packets), Just(CwndUnit::Bytes)],
            prop_oneof![Just(0u32), Just(1), Just(2), Just(8), Just(u32::MAX)],
        )
            .prop_map(|(unit, abc_limit)| WindowGrowth {
                unit,
                abc_limit,
                count_delivered: false,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn prop_every_controller_keeps_invariants(
            algo in 0usize..list().len(),
            g in growth(),
            mss in prop_oneof![Just(1u32), Just(536), Just(1448), Just(9000)],
            iw_segs in 1u64..100,
            ops in proptest::collection::vec(op(), 1..400),
        ) {
            let info = &list()[algo];
            let init = CcInit { mss, initial_cwnd: iw_segs * u64::from(mss), initial_ssthresh: u64::MAX, growth: g };
            let mut cc = build(info.name, &[], init).unwrap();
            run_ops(cc.as_mut(), mss, &ops)?;
        }

        #[test]
        fn prop_cubic_with_random_params_keeps_invariants(
            params in cubic_params(),
            g in growth(),
            ops in proptest::collection::vec(op(), 1..400),
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
            ops in proptest::collection::vec(op(), 1..400),
        ) {
            let init = CcInit { mss, initial_cwnd: iw_segs * u64::from(mss), initial_ssthresh: u64::MAX, growth: g };
            let mut cc = build(name, &params, init).unwrap();
            run_ops(cc.as_mut(), mss, &ops)?;
        }
    }
}
