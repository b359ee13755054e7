//! Parameters of the congestion-control algorithms: their declarations ([`ParamInfo`]), the
//! values a scenario gives ([`ParamValue`]), their resolution against the declarations
//! ([`Params::resolve`]), and the helpers every algorithm's parameter table and constructor
//! share ([`SSTHRESH_FROM`], [`Params::invalid`], [`Params::ssthresh_from`], [`Params::int_in`],
//! [`Params::u32`]). Each algorithm declares its own table (`PARAMS`) and constructor (`build`)
//! in its module; [`crate::registry`] lists them.

use std::fmt;

use crate::growth::{AiRule, SsthreshBasis};
use crate::registry::{CcError, CcInfo};

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

pub(crate) fn write_list<I: Iterator<Item = String>>(
    f: &mut fmt::Formatter<'_>,
    items: I,
) -> fmt::Result {
    for (i, s) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(&s)?;
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Resolved {
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

pub(crate) fn parse_default(p: &ParamInfo) -> Option<Resolved> {
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
// Helpers shared by the algorithms' tables and constructors.

/// `ssthresh_from`: what the multiplicative decrease on loss starts from. Every window-based
/// algorithm declares it (all but BBR).
/// The growth-counter rule of the controllers that used Linux's `snd_cwnd_cnt` (Reno, BIC,
/// CUBIC; [`AiRule`]).
pub(crate) const AI_RULE: ParamInfo = ParamInfo {
    name: "ai_rule",
    kind: ParamKind::Choice(AiRule::CHOICES),
    default: "linux-4.0",
    doc: "packets unit: \"linux-4.0\" (+1 segment per cnt counted units; CUBIC also cnt >= 2) \
          or \"linux-2.6\" (Linux 2.2-3.19: the ACK counts once, +1 segment per cnt + 1 ACKs; \
          Reno with ABC on keeps its byte counter; CUBIC cnt >= 1)",
};

pub(crate) const SSTHRESH_FROM: ParamInfo = ParamInfo {
    name: "ssthresh_from",
    kind: ParamKind::Choice(SsthreshBasis::CHOICES),
    default: "auto",
    doc: "basis of the multiplicative decrease: \"cwnd\" (Linux), \"flight_size\" (RFC 5681 \
          eq. 4; for CUBIC RFC 9438 §4.6), \"bsd\" (4.4BSD, FreeBSD 5, OpenBSD, XNU before \
          OS X 10.9: min(cwnd, peer window), whole segments, recomputed on every timeout), \
          \"xnu\" (the same, first timeout only; CUBIC keeps the fast recovery's ssthresh on a \
          timeout during it and takes W_max from the same minimum), \"solaris\" \
          (flight size in whole segments; a backed-off timeout halves ssthresh again) or \"auto\" \
          (cwnd in the packets unit, flight size in bytes)",
};

impl Params {
    /// `InvalidValue` for parameter `param` of the algorithm being built.
    pub(crate) fn invalid(&self, param: &'static str, value: String, reason: &str) -> CcError {
        CcError::InvalidValue {
            algorithm: self.algorithm,
            param,
            value,
            reason: reason.into(),
        }
    }

    /// The [`AI_RULE`] choice.
    pub(crate) fn ai_rule(&self) -> AiRule {
        AiRule::from_name(self.choice(AI_RULE.name)).unwrap_or_default()
    }

    /// The [`SSTHRESH_FROM`] choice.
    pub(crate) fn ssthresh_from(&self) -> SsthreshBasis {
        SsthreshBasis::from_name(self.choice(SSTHRESH_FROM.name)).unwrap_or_default()
    }

    /// An integer parameter in `lo..=hi` (a subrange of `u32`).
    pub(crate) fn int_in(&self, name: &'static str, lo: i64, hi: i64) -> Result<u32, CcError> {
        let v = self.int(name);
        if (lo..=hi).contains(&v) {
            u32::try_from(v).map_err(|_| self.invalid(name, v.to_string(), "out of range"))
        } else {
            Err(self.invalid(name, v.to_string(), &format!("must be in {lo}..={hi}")))
        }
    }

    /// A non-negative integer parameter that fits in `u32`.
    pub(crate) fn u32(&self, name: &'static str) -> Result<u32, CcError> {
        let v = self.int(name);
        u32::try_from(v).map_err(|_| self.invalid(name, v.to_string(), "must be in 0..=2^32-1"))
    }
}
