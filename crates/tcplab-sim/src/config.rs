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
    /// One software emulator thread serving these link directions (src/emuthread.rs).
    #[serde(default)]
    pub emulator_thread: Option<EmulatorThreadCfg>,
    /// Free-form metadata (scenario name, ...), ignored by the engine.
    #[serde(default)]
    pub meta: serde_json::Value,
}

/// The emulator thread (src/emuthread.rs): the link directions it serves ("<link>.ab" /
/// "<link>.ba"; each may have no `jitter` of its own) and its two measured distributions.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmulatorThreadCfg {
    pub channels: Vec<String>,
    /// Lateness of a wake-up: its first send after the earliest due time.
    pub wakeup: JitterCfg,
    /// Time between two sends of one wake-up.
    pub send_gap: JitterCfg,
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
    /// Extra one-way delay per packet, drawn from its own random stream (src/link.rs,
    /// "Jitter").
    #[serde(default)]
    pub jitter: JitterCfg,
    /// Timer granularity of a tick-driven emulator such as Dummynet, ns (0: none): packets
    /// leave the queue and the delay line only at multiples of it (src/link.rs, "Timer
    /// ticks"). At most [`MAX_TICK_NS`].
    #[serde(default)]
    pub tick_ns: u64,
}

/// Largest tick accepted (both engines): 1 s, a kernel clock of 1 Hz — far coarser than any
/// HZ a router ran (FreeBSD's default was 100, dummynet(4) recommends 1000).
pub const MAX_TICK_NS: u64 = 1_000_000_000;

impl ChanCfg {
    /// Check the direction's timing (`jitter`, `tick_ns`), as both engines do; the error names
    /// the field below the direction.
    pub fn check_timing(&self) -> Result<(), (String, String)> {
        self.jitter.check()?;
        if self.tick_ns > MAX_TICK_NS {
            return Err((
                "tick_ns".into(),
                format!(
                    "{} ns is more than the largest tick accepted, {MAX_TICK_NS} ns",
                    self.tick_ns
                ),
            ));
        }
        Ok(())
    }
}

/// Distribution of the extra delay a link direction adds to each packet after serialisation
/// (src/link.rs, "Jitter"); the arrival order is kept.
#[derive(Clone, Debug, Deserialize, Default, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum JitterCfg {
    #[default]
    None,
    /// Uniform in [0, `max_ns`].
    Uniform { max_ns: u64 },
    /// A measured distribution given by points `[value_ns, probability]` of its distribution
    /// function, linear between them: values and probabilities non-decreasing, the first
    /// probability 0 and the last 1 (e.g. the kernel engine's emulator lateness as histogram
    /// bucket edges, python/tcplab/kernel/compare.py). A value range with no probability between
    /// two points (a flat step) is never drawn, so a rare outlier keeps its rare weight.
    Empirical { cdf: Vec<(u64, f64)> },
}

/// Largest jitter accepted (both engines): 10 s, far above any host or emulator timing noise.
pub const MAX_JITTER_NS: u64 = 10_000_000_000;

impl JitterCfg {
    /// The checks both engines rely on; the error names the field below the direction.
    pub fn check(&self) -> Result<(), (String, String)> {
        let big = |field: &str, v: u64| {
            Err((
                format!("jitter.{field}"),
                format!("{v} ns is more than the largest jitter accepted, {MAX_JITTER_NS} ns"),
            ))
        };
        match self {
            JitterCfg::None => Ok(()),
            JitterCfg::Uniform { max_ns } if *max_ns > MAX_JITTER_NS => big("max_ns", *max_ns),
            JitterCfg::Uniform { .. } => Ok(()),
            JitterCfg::Empirical { cdf } => {
                let field = |i: usize| format!("jitter.cdf[{i}]");
                if cdf.len() < 2 {
                    return Err((
                        "jitter.cdf".into(),
                        format!(
                            "{} points; give at least 2 (probabilities 0 and 1)",
                            cdf.len()
                        ),
                    ));
                }
                for (i, &(v, p)) in cdf.iter().enumerate() {
                    if !(0.0..=1.0).contains(&p) {
                        return Err((field(i), format!("probability {p} is outside [0, 1]")));
                    }
                    if v > MAX_JITTER_NS {
                        return big(&format!("cdf[{i}]"), v);
                    }
                    if i > 0 && (v < cdf[i - 1].0 || p < cdf[i - 1].1) {
                        return Err((
                            field(i),
                            format!(
                                "[{v}, {p}] is below the point before it, {:?}: values and \
                                 probabilities must not decrease",
                                cdf[i - 1]
                            ),
                        ));
                    }
                }
                if cdf[0].1 != 0.0 || cdf[cdf.len() - 1].1 != 1.0 {
                    return Err((
                        "jitter.cdf".into(),
                        format!(
                            "probabilities run from {} to {}; they must run from 0 to 1",
                            cdf[0].1,
                            cdf[cdf.len() - 1].1
                        ),
                    ));
                }
                Ok(())
            }
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
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

/// A missing `queue`: drop-tail without limits.
impl Default for QueueCfg {
    fn default() -> Self {
        QueueCfg {
            kind: droptail(),
            limit_pkts: None,
            limit_bytes: None,
        }
    }
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

impl LossCfg {
    /// Every probability within [0, 1] (both engines: the simulator's links and the kernel
    /// engine's link emulator); the error names the field below the direction (`loss.p`).
    pub fn check(&self) -> Result<(), (String, String)> {
        let prob = |name: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err((
                    format!("loss.{name}"),
                    format!("probability {p} is outside [0, 1]"),
                ))
            }
        };
        match *self {
            LossCfg::None | LossCfg::List { .. } => Ok(()),
            LossCfg::Bernoulli { p } => prob("p", p),
            LossCfg::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                prob("p_gb", p_gb)?;
                prob("p_bg", p_bg)?;
                prob("loss_good", loss_good)?;
                prob("loss_bad", loss_bad)
            }
        }
    }
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

/// Declares a traffic source's config struct: the fields every flow and background source has
/// (written once here), then its own. A macro rather than `#[serde(flatten)]`, which serde does
/// not support together with `deny_unknown_fields`.
macro_rules! traffic_cfg {
    ($(#[$m:meta])* pub struct $name:ident { $($own:tt)* }) => {
        $(#[$m])*
        #[derive(Clone, Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            pub name: String,
            pub kind: FlowKind,
            pub src: String,
            pub dst: String,
            #[serde(default)]
            pub start_ns: u64,
            #[serde(default)]
            pub stop_ns: Option<u64>,
            /// TCP: the data sender's congestion control.
            #[serde(default)]
            pub cca: CcaCfg,
            /// TCP: knobs of the data sender's stack.
            #[serde(default)]
            pub tcp: TcpConfig,
            /// TCP: knobs of the data receiver's stack (default: same as `tcp`).
            #[serde(default)]
            pub receiver_tcp: Option<TcpConfig>,
            /// UDP payload per datagram.
            #[serde(default = "default_udp_payload")]
            pub payload_bytes: u32,
            $($own)*
        }
    };
}

traffic_cfg! {
    /// A flow (docs/design.md §3, "flows"): one TCP connection or UDP stream.
    pub struct FlowCfg {
        #[serde(default)]
        pub group: Option<String>,
        /// Sized transfer (iperf -n): stop after this many bytes.
        #[serde(default)]
        pub bytes: Option<u64>,
        /// UDP constant bit rate (IP-layer payload rate as iperf -u -b counts it).
        #[serde(default)]
        pub rate_bps: Option<u64>,
        /// TCP: the application's opening write before its bulk data, in bytes (iperf3's
        /// 37-byte cookie); the bulk follows `prelude_gap_ns` after these bytes are
        /// acknowledged ([`crate::tcp::sender::Prelude`]). None: bulk data from the start.
        #[serde(default)]
        pub prelude_bytes: Option<u32>,
        /// TCP: time from the prelude's acknowledgement to the first bulk write.
        #[serde(default)]
        pub prelude_gap_ns: u64,
    }
}

fn default_udp_payload() -> u32 {
    1470
}

traffic_cfg! {
    /// A background source (docs/design.md §3, "background"): many short TCP connections
    /// ("tcp") or on-off UDP ("udp") between one host pair, reported in aggregate.
    pub struct BackgroundCfg {
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
        // On-off UDP.
        /// Sending rate during on periods.
        #[serde(default)]
        pub peak_bps: Option<u64>,
        /// Mean on period; the mean off period follows from load and peak.
        #[serde(default)]
        pub on_mean_ns: Option<u64>,
        /// "exponential" (default) or "pareto" (with `period_shape`).
        #[serde(default)]
        pub periods: Option<String>,
        #[serde(default)]
        pub period_shape: Option<f64>,
    }
}

impl FlowCfg {
    /// A sized transfer's bytes as TCP carries them: the opening write, if any, then `bytes`.
    pub fn bytes_written(&self) -> Option<u64> {
        self.bytes
            .map(|b| b + self.prelude_bytes.map_or(0, u64::from))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_flow_and_background_share_fields_and_reject_unknown_keys() {
        let common =
            r#""name":"x","kind":"tcp","src":"a","dst":"b","start_ns":5,"cca":{"name":"reno"}"#;
        let f: FlowCfg = serde_json::from_str(&format!("{{{common},\"bytes\":9}}")).unwrap();
        let b: BackgroundCfg =
            serde_json::from_str(&format!("{{{common},\"load_bps\":1000}}")).unwrap();
        for (name, start, cca, payload) in [
            (&f.name, f.start_ns, &f.cca.name, f.payload_bytes),
            (&b.name, b.start_ns, &b.cca.name, b.payload_bytes),
        ] {
            assert_eq!(
                (name.as_str(), start, cca.as_str(), payload),
                ("x", 5, "reno", 1470)
            );
        }
        assert_eq!((f.bytes, b.load_bps), (Some(9), 1000));
        // Each keeps its own keys to itself.
        assert!(serde_json::from_str::<FlowCfg>(&format!("{{{common},\"load_bps\":1}}")).is_err());
        assert!(serde_json::from_str::<BackgroundCfg>(&format!(
            "{{{common},\"load_bps\":1,\"bytes\":9}}"
        ))
        .is_err());
    }

    #[test]
    fn test_loss_check_names_the_probability_outside_0_1() {
        let ge = |loss_bad| LossCfg::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.5,
            loss_good: 0.0,
            loss_bad,
        };
        assert!(ge(1.0).check().is_ok());
        assert!(LossCfg::Bernoulli { p: 0.0 }.check().is_ok());
        assert_eq!(ge(1.5).check().unwrap_err().0, "loss.loss_bad");
        let e = LossCfg::Bernoulli { p: f64::NAN }.check().unwrap_err();
        assert_eq!(e.0, "loss.p");
        assert!(e.1.contains("outside [0, 1]"), "{}", e.1);
    }
}
