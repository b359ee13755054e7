//! The normalized config an engine runs (docs/design.md §3), deserialized from JSON.
//! Python validates user input; this module still checks what the engine relies on and returns
//! [`ConfigError`]s naming the field.

use crate::tcp::config::TcpConfig;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub seed: u64,
    pub duration_ns: u64,
    #[serde(default = "default_interval")]
    pub interval_ns: u64,
    #[serde(default)]
    pub record_changes: bool,
    pub nodes: Vec<NodeCfg>,
    pub links: Vec<LinkCfg>,
    pub flows: Vec<FlowCfg>,
    /// Background (cross) traffic, reported in aggregate (crate::background).
    #[serde(default)]
    pub background: Vec<BackgroundCfg>,
    /// Packet captures: which link directions to record (written by the caller's tap).
    #[serde(default)]
    pub capture: Vec<CaptureCfg>,
    /// Free-form metadata (scenario name, ...), ignored by the engine.
    #[serde(default)]
    pub meta: serde_json::Value,
}

/// One capture: the packets handed to these link directions ("<link>.ab" / "<link>.ba"),
/// timestamped when their serialisation starts (what a tap on the wire at the sending end sees;
/// queue overflows are not on the wire and not captured).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureCfg {
    pub name: String,
    pub channels: Vec<String>,
    /// Where the caller writes the capture (the engine itself does no I/O).
    #[serde(default)]
    pub path: Option<String>,
}

fn default_interval() -> u64 {
    crate::time::SEC
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    pub kind: NodeKind,
    /// Host NIC / processing rate: the host's egress is served at min(this, link rate).
    #[serde(default)]
    pub nic_rate_bps: Option<u64>,
    /// Host transmit ring: packets the host can queue before senders are held back.
    #[serde(default)]
    pub nic_ring_pkts: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub name: String,
    pub a: String,
    pub b: String,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    pub ab: ChanCfg,
    pub ba: ChanCfg,
    /// Record queue length, drops and utilisation of this link per interval.
    #[serde(default)]
    pub monitor: bool,
}

fn default_mtu() -> u32 {
    1500
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChanCfg {
    pub rate_bps: u64,
    pub delay_ns: u64,
    #[serde(default)]
    pub queue: QueueCfg,
    #[serde(default)]
    pub loss: LossCfg,
    /// Periods `[start_ns, end_ns)` during which the link is down: everything offered is lost.
    #[serde(default)]
    pub outages: Vec<(u64, u64)>,
    /// Changes of rate, delay and/or loss at given times (src/link.rs, time-varying links).
    #[serde(default)]
    pub schedule: Vec<crate::link::Step>,
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct QueueCfg {
    /// Only "droptail" for now; other disciplines (RED, ...) slot in here.
    #[serde(default = "droptail")]
    pub kind: String,
    #[serde(default)]
    pub limit_pkts: Option<u32>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
}

fn droptail() -> String {
    "droptail".to_string()
}

#[derive(Clone, Debug, Deserialize, Default, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossCfg {
    #[default]
    None,
    /// Independent loss with probability `p` per packet.
    Bernoulli { p: f64 },
    /// Two-state Markov loss (Gilbert 1960; Elliott 1963): per packet, first the state moves
    /// (good→bad with `p_gb`, bad→good with `p_bg`), then the packet is lost with the state's
    /// loss probability.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Lose exactly the packets with these indices (0 = the first packet offered to this link
    /// direction, in the order offered; like ns-2's deterministic error model). For tests and
    /// for reproducing a particular loss pattern.
    List { packets: Vec<u64> },
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    Tcp,
    Udp,
}

/// A congestion-control parameter value.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcaCfg {
    pub name: String,
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
}

impl Default for CcaCfg {
    fn default() -> Self {
        CcaCfg {
            name: "cubic".into(),
            params: BTreeMap::new(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub name: String,
    #[serde(default)]
    pub group: Option<String>,
    pub kind: FlowKind,
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Sized transfer (iperf -n): stop after this many bytes.
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub cca: CcaCfg,
    /// Knobs of the data sender's stack.
    #[serde(default)]
    pub tcp: TcpConfig,
    /// Knobs of the data receiver's stack (default: same as `tcp`).
    #[serde(default)]
    pub receiver_tcp: Option<TcpConfig>,
    /// UDP constant bit rate (IP-layer payload rate as iperf -u -b counts it).
    #[serde(default)]
    pub rate_bps: Option<u64>,
    #[serde(default = "default_udp_payload")]
    pub payload_bytes: u32,
}

fn default_udp_payload() -> u32 {
    1470
}

/// A background source (docs/design.md §3, "background"): many short TCP connections ("tcp")
/// or on-off UDP ("udp") between one host pair, reported in aggregate.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundCfg {
    pub name: String,
    pub kind: FlowKind,
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Offered load: application (payload) bits per second, averaged over the run.
    pub load_bps: u64,
    // TCP mice.
    /// Transfer sizes: bounded Pareto with this shape on [size_min, size_max] bytes.
    #[serde(default)]
    pub size_shape: Option<f64>,
    #[serde(default)]
    pub size_min: Option<u64>,
    #[serde(default)]
    pub size_max: Option<u64>,
    #[serde(default)]
    pub cca: CcaCfg,
    #[serde(default)]
    pub tcp: TcpConfig,
    #[serde(default)]
    pub receiver_tcp: Option<TcpConfig>,
    // On-off UDP.
    /// Sending rate during on periods.
    #[serde(default)]
    pub peak_bps: Option<u64>,
    #[serde(default = "default_udp_payload")]
    pub payload_bytes: u32,
    /// Mean on period; the mean off period follows from load and peak.
    #[serde(default)]
    pub on_mean_ns: Option<u64>,
    /// "exponential" (default) or "pareto" (with `period_shape`).
    #[serde(default)]
    pub periods: Option<String>,
    #[serde(default)]
    pub period_shape: Option<f64>,
}

/// A config problem, naming the field by its dotted path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

pub fn err(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

impl Config {
    pub fn from_json(s: &str) -> Result<Config, ConfigError> {
        serde_json::from_str(s).map_err(|e| err("config", e.to_string()))
    }
}
