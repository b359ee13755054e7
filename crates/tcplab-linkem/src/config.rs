//! The emulator's configuration (JSON). The per-direction channel, queue and loss objects have the
//! same shape as a link direction of the normalized config (docs/design.md §3), so the kernel
//! engine copies them through unchanged; only the interface names are added.

use serde::Deserialize;

/// Everything one emulator process serves.
#[derive(Clone, Debug, Deserialize)]
pub struct EmuConfig {
    /// Link directions to emulate, two per link.
    pub links: Vec<EmuLink>,
    /// Period of the queue samples (docs/design.md §4 `queue_series`), ns.
    #[serde(default = "one_second")]
    pub interval_ns: u64,
    /// Seed of the loss models' random streams.
    #[serde(default)]
    pub seed: u64,
    /// Stop by itself after this long (a safety net against orphaned emulators), ns.
    #[serde(default)]
    pub max_runtime_ns: Option<u64>,
    /// Busy-wait instead of sleeping when the next departure is closer than this, ns: sleeping
    /// costs a timer wake-up of tens of µs, which would be added to every packet's delay.
    #[serde(default = "default_spin")]
    pub spin_ns: u64,
    /// Read control commands (`start <t0_ns>`, `stop`) from standard input; EOF means stop.
    #[serde(default = "yes")]
    pub control_stdin: bool,
    /// Receive buffer of each packet socket, bytes (SO_RCVBUFFORCE). Frames that overflow it are
    /// counted as `socket_drops`, and a run with any is invalid.
    #[serde(default = "default_sockbuf")]
    pub socket_buffer_bytes: u32,
    /// TCP connections to observe at their sender's first hop (src/tcpobs.rs).
    #[serde(default)]
    pub watch: Vec<crate::tcpobs::WatchCfg>,
    /// Flows whose delivered packets and bytes are counted per interval (src/tcpobs.rs).
    #[serde(default)]
    pub count: Vec<crate::tcpobs::CountCfg>,
    /// When not empty, the loss models apply only to packets of these connections (either
    /// direction); every other packet is exempt ([`crate::pipe::Pipe::offer_with`]).
    #[serde(default)]
    pub loss_only: Vec<crate::tcpobs::FlowKey>,
    /// Run the emulator thread under SCHED_FIFO with this priority (1-99), so that wake-ups are
    /// not delayed behind the traffic generators on a busy machine. Falls back to normal
    /// scheduling, and says so in the report, when not permitted.
    #[serde(default)]
    pub realtime_priority: Option<i32>,
}

fn one_second() -> u64 {
    1_000_000_000
}
fn default_spin() -> u64 {
    30_000
}
fn yes() -> bool {
    true
}
fn default_sockbuf() -> u32 {
    16 << 20
}

/// One link between two interfaces of the emulator's namespace. Frames entering `a_if` leave
/// through `b_if` after the `ab` impairments, and the other way round.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuLink {
    pub name: String,
    pub a_if: String,
    pub b_if: String,
    /// Node names of the two ends (reported back in the statistics).
    #[serde(default)]
    pub a: String,
    #[serde(default)]
    pub b: String,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    pub ab: ChanCfg,
    pub ba: ChanCfg,
    /// Record per-interval queue samples for this link.
    #[serde(default = "yes")]
    pub monitor: bool,
}

fn default_mtu() -> u32 {
    1500
}

/// One direction of a link (docs/design.md §3 `links[].ab`) and its queue: the simulator's
/// types, so that both engines read the same fields with the same defaults. A direction's
/// `schedule` of rate, delay and loss changes counts from the experiment's time zero. Outages
/// are not emulated (rejected by [`EmuConfig::check`]).
pub use tcplab_sim::config::{ChanCfg, JitterCfg, QueueCfg};

/// The simulator's loss models (docs/scenario-format.md). On the kernel a `list` index counts
/// every IPv4 packet admitted to the direction, including those of iperf3's control connection
/// unless `loss_only` restricts the model to the scenario's flows.
pub use tcplab_sim::config::LossCfg;
pub use tcplab_sim::link::Step;

impl EmuConfig {
    /// Parse and check a configuration.
    pub fn from_json(s: &str) -> Result<EmuConfig, String> {
        let cfg: EmuConfig = serde_json::from_str(s).map_err(|e| format!("linkem config: {e}"))?;
        cfg.check()?;
        Ok(cfg)
    }

    /// The checks the emulator relies on; messages name the field.
    pub fn check(&self) -> Result<(), String> {
        if self.interval_ns == 0 {
            return Err("interval_ns: must be > 0".into());
        }
        for (i, w) in self.watch.iter().enumerate() {
            if w.link >= self.links.len() || !(w.data_dir == "ab" || w.data_dir == "ba") {
                return Err(format!(
                    "watch.{i}: no link direction {}.{}",
                    w.link, w.data_dir
                ));
            }
        }
        for (i, c) in self.count.iter().enumerate() {
            if c.link >= self.links.len() || !(c.dir == "ab" || c.dir == "ba") {
                return Err(format!("count.{i}: no link direction {}.{}", c.link, c.dir));
            }
            if c.proto != 6 && c.proto != 17 {
                return Err(format!(
                    "count.{i}.proto: {} is neither 6 (TCP) nor 17 (UDP)",
                    c.proto
                ));
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, l) in self.links.iter().enumerate() {
            for ifname in [&l.a_if, &l.b_if] {
                if ifname.is_empty() || ifname.len() > 15 {
                    return Err(format!(
                        "links.{i}: interface name {ifname:?} must be 1-15 bytes"
                    ));
                }
                if names.contains(&ifname.as_str()) {
                    return Err(format!("links.{i}: interface {ifname:?} is used twice"));
                }
                names.push(ifname);
            }
            if !(68..=65535).contains(&l.mtu) {
                return Err(format!("links.{i}.mtu: {} is outside 68..65535", l.mtu));
            }
            for (dir, c) in [("ab", &l.ab), ("ba", &l.ba)] {
                let f = format!("links.{i}.{dir}");
                if c.queue.kind != "droptail" {
                    return Err(format!(
                        "{f}.queue.kind: {:?} is not supported by the link emulator (droptail only)",
                        c.queue.kind
                    ));
                }
                if !c.outages.is_empty() {
                    return Err(format!("{f}.outages: not supported by the link emulator"));
                }
                check_loss(&f, &c.loss)?;
                tcplab_sim::link::check_schedule(&c.schedule, true)
                    .map_err(|(field, m)| format!("{f}.{field}: {m}"))?;
                c.check_timing()
                    .map_err(|(field, m)| format!("{f}.{field}: {m}"))?;
                for (k, st) in c.schedule.iter().enumerate() {
                    if let Some(l) = &st.loss {
                        check_loss(&format!("{f}.schedule.{k}"), l)?;
                    }
                }
            }
        }
        Ok(())
    }
}

fn check_loss(f: &str, l: &LossCfg) -> Result<(), String> {
    l.check().map_err(|(field, m)| format!("{f}.{field}: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: &str = r#"{"links": [{"name": "bn", "a_if": "l0a", "b_if": "l0b",
        "ab": {"rate_bps": 10000000, "delay_ns": 5000000,
               "queue": {"kind": "droptail", "limit_pkts": 10, "limit_bytes": null},
               "loss": {"model": "bernoulli", "p": 0.01}},
        "ba": {"rate_bps": 10000000, "delay_ns": 5000000}}]}"#;

    #[test]
    fn test_config_parses_design_shapes() {
        let c = EmuConfig::from_json(CFG).unwrap();
        assert_eq!(c.links[0].ab.queue.limit_pkts, Some(10));
        assert_eq!(c.links[0].ab.loss, LossCfg::Bernoulli { p: 0.01 });
        assert_eq!(c.links[0].ba.loss, LossCfg::None);
        assert_eq!(c.interval_ns, 1_000_000_000);
    }

    #[test]
    fn test_config_rejects_bad_values() {
        let bad = CFG.replace("0.01", "1.5");
        assert!(EmuConfig::from_json(&bad)
            .unwrap_err()
            .contains("links.0.ab.loss.p"));
        let bad = CFG.replace("\"droptail\"", "\"red\"");
        assert!(EmuConfig::from_json(&bad)
            .unwrap_err()
            .contains("queue.kind"));
        let bad = CFG.replace("l0b", "l0a");
        assert!(EmuConfig::from_json(&bad)
            .unwrap_err()
            .contains("used twice"));
        let bad = CFG.replace("\"delay_ns\": 5000000}", "\"delay_ns\": 5000000, \"x\": 1}");
        assert!(EmuConfig::from_json(&bad).is_err());
        // The simulator's link directions may have outages; the emulator has none.
        let bad = CFG.replace(
            "\"delay_ns\": 5000000}",
            "\"delay_ns\": 5000000, \"outages\": [[0, 1000]]}",
        );
        assert!(EmuConfig::from_json(&bad)
            .unwrap_err()
            .contains("links.0.ba.outages"));
    }
}
