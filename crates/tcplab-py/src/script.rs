//! `tcplab._core.ScriptSender`: one simulated TCP sender driven segment by segment (issue 14,
//! behaviour scripts). Sans-I/O: Python injects the peer's segments and advances virtual time;
//! the sender's own code (crates/tcplab-sim/src/tcp/sender/) answers, exactly as in a
//! simulation. No network, no event queue.
//!
//! Registered from lib.rs with `script::register(m)?`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use tcplab_sim::endpoint::Cx;
use tcplab_sim::packet::{Packet, Proto, IPV4_HEADER, TCP_HEADER};
use tcplab_sim::rng::Rng;
use tcplab_sim::tcp::config::TcpConfig;
use tcplab_sim::tcp::receiver::TcpReceiver;
use tcplab_sim::tcp::sender::{FlowSpec, TcpSender};

/// A segment as Python sees it: (seq, ack, flags, wnd, payload, opts, mss, wscale, ts_val,
/// ts_ecr, sack blocks). Flags and opts use the bits of `tcplab_sim::packet::{flags, opts}`.
type Seg = (
    u32,
    u32,
    u8,
    u16,
    u32,
    u8,
    u16,
    u8,
    u32,
    u32,
    Vec<(u32, u32)>,
);

fn to_seg(p: &Packet) -> Seg {
    let t = &p.tcp;
    (
        t.seq,
        t.ack,
        t.flags,
        t.wnd,
        p.payload,
        t.opts,
        t.mss,
        t.wscale,
        t.ts_val,
        t.ts_ecr,
        t.sack[..t.n_sack as usize].to_vec(),
    )
}

/// The active-open side of a connection with `bytes` of application data, built from a stack's
/// TCP knobs (`tcp_json`, a TcpConfig object) and congestion-control algorithm `cca`.
#[pyclass(unsendable)]
struct ScriptSender {
    tx: TcpSender,
}

/// Either end of a scripted connection.
trait Driven {
    fn on_packet(&mut self, p: &Packet, cx: &mut Cx);
    fn on_timer(&mut self, cx: &mut Cx);
}

impl Driven for TcpSender {
    fn on_packet(&mut self, p: &Packet, cx: &mut Cx) {
        TcpSender::on_packet(self, p, cx)
    }
    fn on_timer(&mut self, cx: &mut Cx) {
        TcpSender::on_timer(self, cx)
    }
}

impl Driven for TcpReceiver {
    fn on_packet(&mut self, p: &Packet, cx: &mut Cx) {
        TcpReceiver::on_packet(self, p, cx)
    }
    fn on_timer(&mut self, cx: &mut Cx) {
        TcpReceiver::on_timer(self, cx)
    }
}

/// Run `ep` at `now` on the peer's segment `pkt` (or its timers, without one): the segments it
/// sends. The host never holds segments back (its transmit ring is unlimited).
fn drive(ep: &mut impl Driven, now: u64, pkt: Option<&Packet>) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut cx = Cx::new(now, &mut out, u32::MAX, 0);
    match pkt {
        Some(p) => ep.on_packet(p, &mut cx),
        None => ep.on_timer(&mut cx),
    }
    out.iter().map(to_seg).collect()
}

/// A stack's TCP knobs (a TcpConfig object as JSON) and the first hop's MTU, checked.
fn tcp_config(tcp_json: &str, mtu: u32) -> PyResult<TcpConfig> {
    let cfg: TcpConfig = serde_json::from_str(tcp_json)
        .map_err(|e| PyValueError::new_err(format!("tcp config: {e}")))?;
    if mtu < 576 {
        return Err(PyValueError::new_err(format!("mtu {mtu} < 576")));
    }
    Ok(cfg)
}

/// A JSON object of congestion-control parameters, as a scenario's `cca = "name {k = v}"`
/// gives them (the same untagged values as `tcplab_sim::config::ParamValue`).
fn cca_params(cca: &str, json: &str) -> PyResult<Vec<(String, tcplab_cc::ParamValue)>> {
    let params = serde_json::from_str(json)
        .map_err(|e| PyValueError::new_err(format!("cca params: {e}")))?;
    Ok(tcplab_sim::sim::cc_params(&tcplab_sim::config::CcaCfg {
        name: cca.to_string(),
        params,
    }))
}

#[pymethods]
impl ScriptSender {
    /// `cca_params_json`: the personality's parameters for `cca` (its TOML's
    /// `[cca_params.<cca>]`, a JSON object of name → value), as a simulation's flow gets them;
    /// until 2026-11-28 the script runner passed none, so e.g. macOS ran CUBIC with β = 0.7
    /// and the RFC 5681 ssthresh basis instead of its TOML's β = 0.8 and XNU basis
    /// (scripts/macos/rto-cwnd.pkt).
    #[new]
    #[pyo3(signature = (tcp_json, cca, bytes, mtu=1500, isn=0, start_ns=0, cca_params_json="{}"))]
    fn new(
        tcp_json: &str,
        cca: &str,
        bytes: u64,
        mtu: u32,
        isn: u32,
        start_ns: u64,
        cca_params_json: &str,
    ) -> PyResult<Self> {
        let cfg = tcp_config(tcp_json, mtu)?;
        let params = cca_params(cca, cca_params_json)?;
        let growth = tcplab_sim::sim::growth_of(&cfg);
        let spec = FlowSpec {
            flow: 0,
            me: 0,
            peer: 1,
            src: 0,
            dst: 1,
            start: start_ns,
            stop: None,
            bytes: Some(bytes),
            mtu,
            isn,
            cca_name: cca.to_string(),
            cca_params: params.clone(),
            growth,
            prelude: None,
        };
        let init = tcplab_sim::sim::initial_cc(&cfg, mtu);
        let cc = tcplab_cc::build(cca, &params, init)
            .map_err(|e| PyValueError::new_err(format!("cca: {e}")))?;
        Ok(ScriptSender {
            tx: TcpSender::new(spec, cfg, cc),
        })
    }

    /// Deliver the peer's segment at `now_ns`; returns the segments the sender emits.
    fn on_packet(&mut self, now_ns: u64, seg: Seg) -> Vec<Seg> {
        drive(&mut self.tx, now_ns, Some(&to_packet(seg)))
    }

    /// Fire the sender's timers at `now_ns` (call at `poll_at()`); returns emitted segments.
    fn on_timer(&mut self, now_ns: u64) -> Vec<Seg> {
        drive(&mut self.tx, now_ns, None)
    }

    /// Next time the sender wants `on_timer`, in ns, or None.
    fn poll_at(&self) -> Option<u64> {
        self.tx.poll_at()
    }

    /// TCP_INFO-like variables: (cwnd bytes, ssthresh bytes, rto ns, retransmits, in-flight
    /// bytes, in recovery, smss, timeouts).
    fn info(&self) -> (u64, u64, u64, u64, u64, bool, u32, u64) {
        (
            self.tx.cwnd(),
            self.tx.ssthresh(),
            self.tx.rto_now(),
            self.tx.stats.retransmits,
            self.tx.in_flight(),
            self.tx.in_recovery(),
            self.tx.smss,
            self.tx.stats.timeouts,
        )
    }

    /// Linux-named state (`tcpi_ca_state`: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss) and
    /// bytes sent and not cumulatively acknowledged (snd_nxt − snd_una: Linux `packets_out`
    /// counts these segments, SACKed or lost ones included).
    fn state(&self) -> (u8, u64) {
        (self.tx.ca_state(), self.tx.snd_nxt - self.tx.snd_una)
    }
}

fn to_packet(seg: Seg) -> Packet {
    let (seq, ack, flags, wnd, payload, opts, mss, wscale, ts_val, ts_ecr, sack) = seg;
    let mut p = Packet {
        ep: 0,
        flow: 0,
        src: 1,
        dst: 0,
        proto: Proto::Tcp,
        wire_len: IPV4_HEADER + TCP_HEADER + payload,
        payload,
        ..Packet::default()
    };
    p.tcp.seq = seq;
    p.tcp.ack = ack;
    p.tcp.flags = flags;
    p.tcp.wnd = wnd;
    p.tcp.opts = opts;
    p.tcp.mss = mss;
    p.tcp.wscale = wscale;
    p.tcp.ts_val = ts_val;
    p.tcp.ts_ecr = ts_ecr;
    for (i, b) in sack.iter().take(4).enumerate() {
        p.tcp.sack[i] = *b;
    }
    p.tcp.n_sack = sack.len().min(4) as u8;
    p
}

/// The passive-open, data-receiving side (the simulator's iperf-server endpoint,
/// crates/tcplab-sim/src/tcp/receiver/mod.rs): it answers a SYN, acknowledges data by the stack's ACK
/// policy (delayed ACK, quick-ACK, SACK) and never sends data of its own.
#[pyclass(unsendable)]
struct ScriptReceiver {
    rx: TcpReceiver,
}

#[pymethods]
impl ScriptReceiver {
    #[new]
    #[pyo3(signature = (tcp_json, mtu=1500))]
    fn new(tcp_json: &str, mtu: u32) -> PyResult<Self> {
        let cfg = tcp_config(tcp_json, mtu)?;
        Ok(ScriptReceiver {
            rx: TcpReceiver::new(0, 0, 1, 0, 1, cfg, mtu, Rng::new(0)),
        })
    }

    /// Deliver the peer's segment at `now_ns`; returns the segments the receiver emits.
    fn on_packet(&mut self, now_ns: u64, seg: Seg) -> Vec<Seg> {
        drive(&mut self.rx, now_ns, Some(&to_packet(seg)))
    }

    /// Fire the receiver's timers (the delayed-ACK timer) at `now_ns`.
    fn on_timer(&mut self, now_ns: u64) -> Vec<Seg> {
        drive(&mut self.rx, now_ns, None)
    }

    fn poll_at(&self) -> Option<u64> {
        self.rx.poll_at()
    }

    /// Payload bytes delivered in order to the application so far.
    fn delivered(&self) -> u64 {
        self.rx.bytes_delivered()
    }
}

/// Add the driver to the `_core` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ScriptSender>()?;
    m.add_class::<ScriptReceiver>()?;
    Ok(())
}
