//! Packet-trace functions of `tcplab._core` (crates/tcplab-trace): analyse a capture, read the
//! TCP timestamp option of its segments, write a hand-built capture, write a synthetic
//! bulk-transfer capture.
//!
//! Registered from lib.rs with `trace::register(m)?`.

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyModule, PyString, PyTuple};
use std::io::BufWriter;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use tcplab_trace::analysis::{
    analyze_path, timestamps_path, AnalyzerConfig, DirTimestamps, NoSink, SeriesSink,
};
use tcplab_trace::pcap::{
    emit_tcp_frame, CaptureError, CaptureErrorKind, LinkKind, PcapWriter, PcapngWriter, TcpFrame,
};
use tcplab_trace::report::Value;
use tcplab_trace::synth::{write_bulk_pcap, BulkConfig};
use tcplab_trace::wire::{EthernetAddress, TcpFlags, TcpOptions, TcpRepr};

/// Converts a report value to Python objects (dict, list, int, float, str, bool, None).
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(l) => {
            let list = PyList::empty(py);
            for x in l {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Map(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
        Value::IntArray(a) => PyList::new(py, a)?.into_any(),
        Value::FloatArray(a) => PyList::new(py, a)?.into_any(),
    })
}

/// A capture that cannot be read: `FileNotFoundError`/`OSError` when opening or reading fails,
/// `ValueError` for a malformed file; the message names the file and the byte offset.
fn capture_err(path: &Path, e: CaptureError) -> PyErr {
    let msg = format!("{}: {e}", path.display());
    match &e.kind {
        CaptureErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(msg)
        }
        CaptureErrorKind::Io(_) => PyOSError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

fn secs_to_ns(name: &str, s: Option<f64>) -> PyResult<Option<u64>> {
    match s {
        None => Ok(None),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some((x * 1e9).round() as u64)),
        Some(x) => Err(PyValueError::new_err(format!(
            "{name} must be a time ≥ 0 s, got {x}"
        ))),
    }
}

/// Analyse the pcap or pcapng file at `path` (Ethernet, Linux cooked SLL/SLL2, raw IP, BSD
/// loopback; IPv4 and IPv6) connection by connection, tcptrace-style. Returns a dict:
/// `format`, `capture` (record counters), `seg_kind_names`, and `connections`, a list of dicts
/// with the endpoints `a` (sender of the first packet) and `b`, times, and per direction `a2b`
/// and `b2a` the statistics (see tcplab_trace::report::DIR_FIELDS). With `want_tsg`, each
/// direction also has `series`: columnar lists for time-sequence, RTT and outstanding-data
/// graphs, restricted to `[time_from, time_to]` seconds after the first packet of the capture
/// (statistics always cover the whole capture). The GIL is released while reading.
#[pyfunction]
#[pyo3(signature = (path, time_from=None, time_to=None, want_tsg=false))]
fn analyze_capture<'py>(
    py: Python<'py>,
    path: PathBuf,
    time_from: Option<f64>,
    time_to: Option<f64>,
    want_tsg: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = AnalyzerConfig {
        tsg_from_ns: secs_to_ns("time_from", time_from)?,
        tsg_to_ns: secs_to_ns("time_to", time_to)?,
        ..AnalyzerConfig::default()
    };
    let p = path.clone();
    let value = py.allow_threads(move || {
        if want_tsg {
            let mut sink = SeriesSink::default();
            analyze_path(&p, cfg, &mut sink).map(|rep| rep.to_value_moving(Some(sink)))
        } else {
            analyze_path(&p, cfg, &mut NoSink).map(|rep| rep.to_value(None))
        }
    });
    let value = value.map_err(|e| capture_err(&path, e))?;
    to_py(py, &value)
}

/// One column as `bytes` of native-order values of `N` bytes each (written in place: the only
/// copy between Rust and numpy, whose `frombuffer` reads the bytes object without copying).
fn column<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    v: &[T],
    to_bytes: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len() * N, |b| {
        for (dst, &x) in b.chunks_exact_mut(N).zip(v) {
            dst.copy_from_slice(&to_bytes(x));
        }
        Ok(())
    })
}

fn dir_columns<'py>(py: Python<'py>, d: &DirTimestamps) -> PyResult<Bound<'py, PyTuple>> {
    // Capture times stay below 2^63 ns (the year 2262), so they fit numpy's int64.
    let t = column(py, &d.t_ns, |x| {
        i64::try_from(x).unwrap_or(i64::MAX).to_ne_bytes()
    })?;
    let tsval = column(py, &d.tsval, u32::to_ne_bytes)?;
    let tsecr = column(py, &d.tsecr, u32::to_ne_bytes)?;
    let data = column(py, &d.data, |x| [u8::from(x)])?;
    PyTuple::new(py, [t, tsval, tsecr, data])
}

/// The TCP timestamp option (RFC 7323 §3) of every segment of the capture at `path` that
/// carries one, per connection and direction exactly as `analyze_capture` numbers them (the
/// analyzer's own connection tracking runs alongside). Returns a list with one entry per
/// connection, `(a2b, b2a)`; each direction is a tuple of four `bytes` in native byte order, for
/// `numpy.frombuffer`, one value per segment in capture order: capture time (int64, ns since the
/// epoch), TSval (uint32), TSecr (uint32), and whether the segment carries data (uint8, 0 or 1).
/// Errors as `analyze_capture`'s. The GIL is released while reading.
#[pyfunction]
fn capture_timestamps(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyList>> {
    let p = path.clone();
    let conns = py
        .allow_threads(move || timestamps_path(&p, AnalyzerConfig::default()))
        .map_err(|e| capture_err(&path, e))?;
    let out = PyList::empty(py);
    for [a2b, b2a] in &conns {
        out.append(PyTuple::new(
            py,
            [dir_columns(py, a2b)?, dir_columns(py, b2a)?],
        )?)?;
    }
    Ok(out)
}

fn link_kind(name: &str) -> PyResult<LinkKind> {
    Ok(match name {
        "ethernet" => LinkKind::Ethernet,
        "sll" => LinkKind::LinuxSll,
        "sll2" => LinkKind::LinuxSll2,
        "raw" => LinkKind::RawIp,
        "null" => LinkKind::Null,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown link {other:?}: one of ethernet, sll, sll2, raw, null"
            )))
        }
    })
}

fn parse_flags(v: &Bound<'_, PyAny>) -> PyResult<u16> {
    if let Ok(n) = v.extract::<u16>() {
        return Ok(n & 0x1ff);
    }
    let s: String = v.extract()?;
    let mut f = 0u16;
    for c in s.chars() {
        f |= match c.to_ascii_uppercase() {
            'S' => TcpFlags::SYN,
            'F' => TcpFlags::FIN,
            'R' => TcpFlags::RST,
            'P' => TcpFlags::PSH,
            'A' | '.' => TcpFlags::ACK,
            'U' => TcpFlags::URG,
            'E' => TcpFlags::ECE,
            'C' | 'W' => TcpFlags::CWR,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown TCP flag {other:?} in {s:?} (S F R P A U E C)"
                )))
            }
        };
    }
    Ok(f)
}

const PACKET_KEYS: &[&str] = &[
    "t", "t_ns", "src", "dst", "sport", "dport", "seq", "ack", "flags", "win", "len", "mss", "ws",
    "sackok", "ts", "sack", "ttl", "ident",
];

/// One packet dict → (timestamp ns, frame description).
fn packet_from_dict(
    i: usize,
    d: &Bound<'_, PyDict>,
    link: LinkKind,
) -> PyResult<(u64, TcpFrame<'static>)> {
    let ctx = |e: PyErr| PyValueError::new_err(format!("packet {i}: {e}"));
    for k in d.keys() {
        let k: String = k.extract()?;
        if !PACKET_KEYS.contains(&k.as_str()) {
            return Err(PyValueError::new_err(format!(
                "packet {i}: unknown key {k:?} (known: {})",
                PACKET_KEYS.join(", ")
            )));
        }
    }
    let get = |k: &str| d.get_item(k);
    let ts_ns: u64 = match (get("t_ns")?, get("t")?) {
        (Some(v), _) => v.extract().map_err(ctx)?,
        (None, Some(v)) => {
            let s: f64 = v.extract().map_err(ctx)?;
            secs_to_ns("t", Some(s)).map_err(ctx)?.unwrap_or(0)
        }
        (None, None) => {
            return Err(PyValueError::new_err(format!(
                "packet {i}: needs t or t_ns"
            )))
        }
    };
    let addr = |k: &str| -> PyResult<IpAddr> {
        let s: String = get(k)?
            .ok_or_else(|| PyValueError::new_err(format!("packet {i}: needs {k}")))?
            .extract()?;
        s.parse().map_err(|_| {
            PyValueError::new_err(format!("packet {i}: {k} {s:?} is not an IP address"))
        })
    };
    let int = |k: &str, dflt: u64, max: u64| -> PyResult<u64> {
        match get(k)? {
            None => Ok(dflt),
            Some(v) => {
                let x: u64 = v.extract().map_err(ctx)?;
                if x > max {
                    return Err(PyValueError::new_err(format!(
                        "packet {i}: {k} = {x} exceeds {max}"
                    )));
                }
                Ok(x)
            }
        }
    };
    let (src, dst) = (addr("src")?, addr("dst")?);
    let mut options = TcpOptions {
        mss: get("mss")?.map(|v| v.extract()).transpose().map_err(ctx)?,
        window_scale: get("ws")?.map(|v| v.extract()).transpose().map_err(ctx)?,
        sack_permitted: get("sackok")?
            .map(|v| v.extract())
            .transpose()
            .map_err(ctx)?
            .unwrap_or(false),
        timestamp: get("ts")?.map(|v| v.extract()).transpose().map_err(ctx)?,
        ..TcpOptions::default()
    };
    if let Some(v) = get("sack")? {
        let blocks: Vec<(u32, u32)> = v.extract().map_err(ctx)?;
        if blocks.len() > 4 {
            return Err(PyValueError::new_err(format!(
                "packet {i}: at most 4 SACK blocks"
            )));
        }
        options.set_sack_blocks(&blocks);
    }
    let flags = match get("flags")? {
        Some(v) => parse_flags(&v).map_err(ctx)?,
        None => TcpFlags::ACK,
    };
    let tcp = TcpRepr {
        src_port: int("sport", 0, 65535)? as u16,
        dst_port: int("dport", 0, 65535)? as u16,
        seq: int("seq", 0, u64::from(u32::MAX))? as u32,
        ack: int("ack", 0, u64::from(u32::MAX))? as u32,
        flags: TcpFlags(flags),
        window: int("win", 65535, 65535)? as u16,
        urgent: 0,
        options,
    };
    let mac = |ip: IpAddr| match ip {
        IpAddr::V4(v4) => EthernetAddress::from_ipv4(v4),
        IpAddr::V6(v6) => {
            let o = v6.octets();
            EthernetAddress([2, 0, o[12], o[13], o[14], o[15]])
        }
    };
    Ok((
        ts_ns,
        TcpFrame {
            link,
            src_mac: mac(src),
            dst_mac: mac(dst),
            src,
            dst,
            ttl: int("ttl", 64, 255)? as u8,
            ident: int("ident", 0, 65535)? as u16,
            dscp_ecn: 0,
            tcp,
            payload_len: int("len", 0, 65000)? as usize,
            payload: &[],
        },
    ))
}

/// Write a capture of hand-described TCP packets, for tests and examples. Each packet is a dict:
/// `t` (s) or `t_ns`, `src`, `dst` (IP strings), `sport`, `dport`, `seq`, `ack`, `flags`
/// (letters from "SFRPAUEC" or an int; default "A"), `win` (field value, default 65535), `len`
/// (payload bytes, zero-filled), and options `mss`, `ws`, `sackok`, `ts` (tsval, tsecr), `sack`
/// (list of (left, right)); also `ttl`, `ident`. `format` is "pcap" (nanosecond) or "pcapng";
/// `link` one of ethernet, sll, sll2, raw, null. Frames longer than `snaplen` are cut.
/// Returns the number of packets written.
#[pyfunction]
#[pyo3(signature = (path, packets, format="pcap", link="ethernet", snaplen=262_144))]
fn write_tcp_capture(
    path: PathBuf,
    packets: &Bound<'_, PyList>,
    format: &str,
    link: &str,
    snaplen: u32,
) -> PyResult<usize> {
    let lk = link_kind(link)?;
    let mut frames = Vec::with_capacity(packets.len());
    for (i, p) in packets.iter().enumerate() {
        let d = p
            .downcast::<PyDict>()
            .map_err(|_| PyValueError::new_err(format!("packet {i}: not a dict")))?;
        frames.push(packet_from_dict(i, d, lk)?);
    }
    let io_err = |e: std::io::Error| PyOSError::new_err(format!("{}: {e}", path.display()));
    let file = BufWriter::new(std::fs::File::create(&path).map_err(io_err)?);
    let mut buf = Vec::with_capacity(2048);
    match format {
        "pcap" => {
            let mut w = PcapWriter::with_options(file, lk.linktype(), snaplen).map_err(io_err)?;
            for (i, (ts, f)) in frames.iter().enumerate() {
                emit_tcp_frame(&mut buf, f)
                    .map_err(|e| PyValueError::new_err(format!("packet {i}: {e}")))?;
                w.write_packet(*ts, &buf).map_err(io_err)?;
            }
            w.into_inner().map_err(io_err)?;
        }
        "pcapng" => {
            let mut w = PcapngWriter::new(file).map_err(io_err)?;
            let iface = w.add_interface(lk.linktype(), snaplen, 9).map_err(io_err)?;
            for (i, (ts, f)) in frames.iter().enumerate() {
                emit_tcp_frame(&mut buf, f)
                    .map_err(|e| PyValueError::new_err(format!("packet {i}: {e}")))?;
                w.write_packet(iface, *ts, &buf).map_err(io_err)?;
            }
            w.into_inner().map_err(io_err)?;
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown format {other:?}: pcap or pcapng"
            )))
        }
    }
    Ok(frames.len())
}

/// Write a synthetic bulk transfer as seen at the sender (tcplab_trace::synth): handshake,
/// `segments` data segments of 1448 bytes, every `loss_every`-th lost once downstream and
/// retransmitted after SACK or duplicate-ACK loss detection, FIN exchange; initial sequence
/// number `isn`. Returns the number of packets. The GIL is released while writing.
#[pyfunction]
#[pyo3(signature = (path, segments=1000, loss_every=100, isn=0xfff0_0000, link="ethernet", ipv6=false, snaplen=262_144, sack=true))]
#[allow(clippy::too_many_arguments)]
fn synth_bulk_capture(
    py: Python<'_>,
    path: PathBuf,
    segments: u64,
    loss_every: u64,
    isn: u32,
    link: &str,
    ipv6: bool,
    snaplen: u32,
    sack: bool,
) -> PyResult<u64> {
    let cfg = BulkConfig {
        segments,
        loss_every,
        isn_a: isn,
        link: link_kind(link)?,
        ipv6,
        sack,
        ..BulkConfig::default()
    };
    let p = path.clone();
    py.allow_threads(move || {
        let f = std::fs::File::create(&p)?;
        write_bulk_pcap(cfg, BufWriter::with_capacity(1 << 20, f), snaplen)
    })
    .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))
}

/// Add the packet-trace functions to the `_core` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_capture, m)?)?;
    m.add_function(wrap_pyfunction!(capture_timestamps, m)?)?;
    m.add_function(wrap_pyfunction!(write_tcp_capture, m)?)?;
    m.add_function(wrap_pyfunction!(synth_bulk_capture, m)?)?;
    Ok(())
}
