//! The analysis report as a plain tree of values (what the Python glue turns into a dict and
//! what `to_json` prints), so no serialization crate is needed.
//!
//! Units: times in seconds (f64) since the first packet of the capture unless named `_ns`;
//! RTTs in milliseconds; windows and sizes in bytes; throughput in bytes and bits per second.
//! Sequence numbers in graph series are relative (see [`crate::analysis::tsg`]).

use crate::analysis::{Connection, Dir, DirSeries, DirStats, Report, SegKind, SeriesSink};
use crate::pcap::Format;

/// A JSON-like value. Arrays of numbers are kept unboxed so large series convert cheaply.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(Vec<(String, Value)>),
    IntArray(Vec<i64>),
    FloatArray(Vec<f64>),
}

impl Value {
    /// Looks up a key in a map (linear; maps are small).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Writes compact JSON. Non-finite floats become `null`.
    pub fn write_json(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => write_f64(out, *f),
            Value::Str(s) => write_str(out, s),
            Value::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, k);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
            Value::IntArray(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{v}");
                }
                out.push(']');
            }
            Value::FloatArray(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_f64(out, *v);
                }
                out.push(']');
            }
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write_json(&mut s);
        s
    }
}

fn write_f64(out: &mut String, f: f64) {
    use std::fmt::Write;
    if f.is_finite() {
        let _ = write!(out, "{f}");
    } else {
        out.push_str("null");
    }
}

fn write_str(out: &mut String, s: &str) {
    use std::fmt::Write;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn opt_u(v: Option<u64>) -> Value {
    v.map_or(Value::Null, |x| Value::Int(x as i64))
}

fn opt_f(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::Float)
}

fn kv(k: &str, v: Value) -> (String, Value) {
    (k.to_string(), v)
}

fn u(x: u64) -> Value {
    Value::Int(x as i64)
}

fn secs(ts: Option<u64>, origin: u64) -> Value {
    ts.map_or(Value::Null, |t| {
        Value::Float(t.saturating_sub(origin) as f64 / 1e9)
    })
}

/// Names of the per-direction fields, in output order (the CSV columns after the connection
/// columns).
pub const DIR_FIELDS: &[&str] = &[
    "packets",
    "ack_pkts",
    "pure_acks",
    "data_pkts",
    "data_bytes",
    "unique_bytes",
    "rexmt_pkts",
    "rexmt_bytes",
    "out_of_order_pkts",
    "zwnd_probe_pkts",
    "zwnd_probe_bytes",
    "pushed_data_pkts",
    "syn_pkts",
    "fin_pkts",
    "rst_pkts",
    "truncated_pkts",
    "sack_pkts",
    "sack_blocks",
    "max_sack_blocks",
    "dsack_pkts",
    "invalid_sack_blocks",
    "invalid_sack_reversed",
    "invalid_sack_below_ack",
    "invalid_sack_beyond_sent",
    "invalid_sack_unsent",
    "mss",
    "window_scale",
    "sack_permitted",
    "timestamps",
    "min_seg_size",
    "max_seg_size",
    "avg_seg_size",
    "win_min",
    "win_max",
    "win_avg",
    "win_zero_adv",
    "rtt_samples",
    "rtt_min_ms",
    "rtt_max_ms",
    "rtt_avg_ms",
    "rtt_stdev_ms",
    "rtt_ambiguous",
    "rtt_no_sample",
    "dup_acks",
    "triple_dupacks",
    "window_checked",
    "window_violations",
    "window_violation_bytes",
    "max_outstanding",
    "first_s",
    "last_s",
    "first_data_s",
    "last_data_s",
    "initial_seq",
    "seq_span",
    "throughput_bytes_per_s",
    "throughput_bps",
];

/// The per-direction statistics as a map with keys [`DIR_FIELDS`].
pub fn dir_value(st: &DirStats, origin: u64) -> Value {
    let ms = |ns: f64| ns / 1e6;
    let has_rtt = st.rtt.samples > 0;
    let avg_seg = (st.data_pkts > 0).then(|| st.data_bytes as f64 / st.data_pkts as f64);
    let m = vec![
        kv("packets", u(st.packets)),
        kv("ack_pkts", u(st.ack_pkts)),
        kv("pure_acks", u(st.pure_acks)),
        kv("data_pkts", u(st.data_pkts)),
        kv("data_bytes", u(st.data_bytes)),
        kv("unique_bytes", u(st.unique_bytes)),
        kv("rexmt_pkts", u(st.rexmt_pkts)),
        kv("rexmt_bytes", u(st.rexmt_bytes)),
        kv("out_of_order_pkts", u(st.out_of_order_pkts)),
        kv("zwnd_probe_pkts", u(st.zwnd_probe_pkts)),
        kv("zwnd_probe_bytes", u(st.zwnd_probe_bytes)),
        kv("pushed_data_pkts", u(st.pushed_data_pkts)),
        kv("syn_pkts", u(st.syn_pkts)),
        kv("fin_pkts", u(st.fin_pkts)),
        kv("rst_pkts", u(st.rst_pkts)),
        kv("truncated_pkts", u(st.truncated_pkts)),
        kv("sack_pkts", u(st.sack_pkts)),
        kv("sack_blocks", u(st.sack_blocks)),
        kv("max_sack_blocks", u(st.max_sack_blocks)),
        kv("dsack_pkts", u(st.dsack_pkts)),
        kv("invalid_sack_blocks", u(st.invalid_sack_blocks)),
        kv("invalid_sack_reversed", u(st.invalid_sack_reversed)),
        kv("invalid_sack_below_ack", u(st.invalid_sack_below_ack)),
        kv("invalid_sack_beyond_sent", u(st.invalid_sack_beyond_sent)),
        kv("invalid_sack_unsent", u(st.invalid_sack_unsent)),
        kv("mss", opt_u(st.mss.map(u64::from))),
        kv("window_scale", opt_u(st.window_scale.map(u64::from))),
        kv("sack_permitted", Value::Bool(st.sack_permitted)),
        kv("timestamps", Value::Bool(st.timestamps)),
        kv("min_seg_size", u(st.min_seg_size)),
        kv("max_seg_size", u(st.max_seg_size)),
        kv("avg_seg_size", opt_f(avg_seg)),
        kv("win_min", u(st.win_min)),
        kv("win_max", u(st.win_max)),
        kv("win_avg", Value::Float(st.win_avg)),
        kv("win_zero_adv", u(st.win_zero_adv)),
        kv("rtt_samples", u(st.rtt.samples)),
        kv(
            "rtt_min_ms",
            opt_f(has_rtt.then(|| ms(st.rtt.min_ns as f64))),
        ),
        kv(
            "rtt_max_ms",
            opt_f(has_rtt.then(|| ms(st.rtt.max_ns as f64))),
        ),
        kv("rtt_avg_ms", opt_f(st.rtt.mean_ns().map(ms))),
        kv("rtt_stdev_ms", opt_f(st.rtt.stdev_ns().map(ms))),
        kv("rtt_ambiguous", u(st.rtt_ambiguous)),
        kv("rtt_no_sample", u(st.rtt_no_sample)),
        kv("dup_acks", u(st.dup_acks)),
        kv("triple_dupacks", u(st.triple_dupacks)),
        kv("window_checked", Value::Bool(st.window_checked)),
        kv("window_violations", u(st.window_violations)),
        kv("window_violation_bytes", u(st.window_violation_bytes)),
        kv("max_outstanding", u(st.max_outstanding)),
        kv("first_s", secs(st.first_ts_ns, origin)),
        kv("last_s", secs(st.last_ts_ns, origin)),
        kv("first_data_s", secs(st.first_data_ts_ns, origin)),
        kv("last_data_s", secs(st.last_data_ts_ns, origin)),
        kv("initial_seq", opt_u(st.initial_seq.map(u64::from))),
        kv("seq_span", u(st.seq_span)),
        kv("throughput_bytes_per_s", opt_f(st.throughput_bytes_per_s)),
        kv(
            "throughput_bps",
            opt_f(st.throughput_bytes_per_s.map(|b| b * 8.0)),
        ),
    ];
    debug_assert_eq!(m.len(), DIR_FIELDS.len());
    Value::Map(m)
}

fn times(v: &[u64]) -> Value {
    Value::FloatArray(v.iter().map(|&t| t as f64 / 1e9).collect())
}

/// Graph series of one direction: times in seconds since the capture start, sequence numbers
/// relative, segment kinds as [`SegKind`] codes (names in the report's `seg_kind_names`).
/// Takes the vectors out of `s` rather than copying them (series can be long).
pub fn series_value(s: DirSeries) -> Value {
    Value::Map(vec![
        kv("seg_t", times(&s.seg_t_ns)),
        kv("seg_start", Value::IntArray(s.seg_start)),
        kv("seg_end", Value::IntArray(s.seg_end)),
        kv(
            "seg_kind",
            Value::IntArray(s.seg_kind.iter().map(|k| *k as i64).collect()),
        ),
        kv("ack_t", times(&s.ack_t_ns)),
        kv("ack", Value::IntArray(s.ack)),
        kv("win_edge", Value::IntArray(s.win_edge)),
        kv("sack_t", times(&s.sack_t_ns)),
        kv("sack_left", Value::IntArray(s.sack_left)),
        kv("sack_right", Value::IntArray(s.sack_right)),
        kv(
            "sack_valid",
            Value::IntArray(s.sack_valid.iter().map(|&b| i64::from(b)).collect()),
        ),
        kv("rtt_t", times(&s.rtt_t_ns)),
        kv(
            "rtt_ms",
            Value::FloatArray(s.rtt_ns.iter().map(|&r| r as f64 / 1e6).collect()),
        ),
        kv("out_t", times(&s.out_t_ns)),
        kv("outstanding", Value::IntArray(s.outstanding)),
    ])
}

fn conn_value(c: &Connection, origin: u64, series: Option<[DirSeries; 2]>) -> Value {
    let mut m = vec![
        kv("index", u(c.index as u64)),
        kv("a", Value::Str(c.a.to_string())),
        kv("b", Value::Str(c.b.to_string())),
        kv("a_addr", Value::Str(c.a.ip().to_string())),
        kv("a_port", u(u64::from(c.a.port()))),
        kv("b_addr", Value::Str(c.b.ip().to_string())),
        kv("b_port", u(u64::from(c.b.port()))),
        kv("first_s", secs(Some(c.first_ts_ns), origin)),
        kv("last_s", secs(Some(c.last_ts_ns), origin)),
        kv(
            "duration_s",
            Value::Float(c.last_ts_ns.saturating_sub(c.first_ts_ns) as f64 / 1e9),
        ),
        kv("first_ts_ns", u(c.first_ts_ns)),
        kv("packets", u(c.packets)),
        kv("complete", Value::Bool(c.complete())),
        kv("reset", Value::Bool(c.reset())),
    ];
    let mut series = series.map(|[a, b]| [Some(a), Some(b)]);
    for d in [Dir::AtoB, Dir::BtoA] {
        let mut dv = dir_value(c.stats(d), origin);
        let s = series.as_mut().and_then(|s| s[d.index()].take());
        if let (Some(s), Value::Map(ref mut mm)) = (s, &mut dv) {
            mm.push(kv("series", series_value(s)));
        }
        m.push(kv(d.name(), dv));
    }
    Value::Map(m)
}

impl Report {
    /// The report as a value tree; with `series`, each direction gets a `series` map (copied
    /// from the sink; see [`Report::to_value_moving`] to avoid the copy).
    pub fn to_value(&self, series: Option<&SeriesSink>) -> Value {
        self.to_value_moving(series.cloned())
    }

    /// As [`Report::to_value`], moving the series out of the sink.
    pub fn to_value_moving(&self, series: Option<SeriesSink>) -> Value {
        let origin = self.capture.first_ts_ns.unwrap_or(0);
        let cap = &self.capture;
        let fmt = match self.format {
            Some(Format::Pcap { nanos: true, .. }) => "pcap-ns",
            Some(Format::Pcap { nanos: false, .. }) => "pcap",
            Some(Format::Pcapng) => "pcapng",
            None => "unknown",
        };
        let mut series = series.map(|s| s.series);
        let conns = self
            .connections
            .iter()
            .map(|c| {
                let s = series
                    .as_mut()
                    .map(|s| s.get_mut(c.index).map(std::mem::take).unwrap_or_default());
                conn_value(c, origin, s)
            })
            .collect();
        let kinds = [
            SegKind::Data,
            SegKind::Retransmission,
            SegKind::WindowViolation,
            SegKind::ZeroWindowProbe,
            SegKind::OutOfOrder,
            SegKind::Syn,
            SegKind::Fin,
        ];
        Value::Map(vec![
            kv("format", Value::Str(fmt.to_string())),
            kv(
                "capture",
                Value::Map(vec![
                    kv("records", u(cap.records)),
                    kv("tcp_packets", u(cap.tcp_packets)),
                    kv("udp_packets", u(cap.udp_packets)),
                    kv("fragments", u(cap.fragments)),
                    kv("other_ip", u(cap.other_ip)),
                    kv("not_ip", u(cap.not_ip)),
                    kv("unsupported_link", u(cap.unsupported_link)),
                    kv("malformed", u(cap.malformed)),
                    kv("snapped", u(cap.snapped)),
                    kv("first_ts_ns", opt_u(cap.first_ts_ns)),
                    kv("last_ts_ns", opt_u(cap.last_ts_ns)),
                    kv(
                        "duration_s",
                        match (cap.first_ts_ns, cap.last_ts_ns) {
                            (Some(a), Some(b)) => Value::Float(b.saturating_sub(a) as f64 / 1e9),
                            _ => Value::Null,
                        },
                    ),
                ]),
            ),
            kv(
                "seg_kind_names",
                Value::List(
                    kinds
                        .iter()
                        .map(|k| Value::Str(k.name().to_string()))
                        .collect(),
                ),
            ),
            kv("connections", Value::List(conns)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_value_json_escapes_and_nonfinite() {
        let v = Value::Map(vec![
            kv("s", Value::Str("a\"b\\c\n\u{1}".into())),
            kv("f", Value::FloatArray(vec![1.5, f64::NAN])),
            kv(
                "l",
                Value::List(vec![Value::Null, Value::Bool(true), Value::Int(-3)]),
            ),
        ]);
        assert_eq!(
            v.to_json(),
            r#"{"s":"a\"b\\c\n\u0001","f":[1.5,null],"l":[null,true,-3]}"#
        );
        assert_eq!(
            v.get("l"),
            Some(&Value::List(vec![
                Value::Null,
                Value::Bool(true),
                Value::Int(-3)
            ]))
        );
    }

    #[test]
    fn test_dir_value_has_every_field_in_order() {
        let v = dir_value(&DirStats::default(), 0);
        let Value::Map(m) = v else { panic!() };
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, DIR_FIELDS);
    }
}
