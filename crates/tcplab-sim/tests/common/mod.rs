//! Builders for end-to-end simulator tests: a dumbbell like the one
//! `python/tcplab/scenario/topology.py` expands (hosts — r1 — bottleneck — r2 — hosts), written
//! directly as normalized config.
#![allow(dead_code)]

use serde_json::{json, Value};
use tcplab_sim::RunResult;

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

pub struct Dumbbell {
    pub rate_bps: u64,
    /// Base RTT (propagation only).
    pub rtt_ns: u64,
    pub queue_pkts: u32,
    pub access_rate_bps: u64,
    /// Packet limit of every host's access-link queue (the host's qdisc).
    pub access_queue_pkts: u32,
    pub fwd_loss: Value,
    pub rev_loss: Value,
    pub fwd_outages: Vec<(u64, u64)>,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub seed: u64,
    pub record_changes: bool,
    pub flows: Vec<Value>,
}

impl Dumbbell {
    pub fn new(rate_bps: u64, rtt_ns: u64, queue_pkts: u32, duration_ns: u64) -> Self {
        Dumbbell {
            rate_bps,
            rtt_ns,
            queue_pkts,
            access_rate_bps: (rate_bps * 10).max(1_000_000_000),
            access_queue_pkts: 10_000,
            fwd_loss: json!({"model": "none"}),
            rev_loss: json!({"model": "none"}),
            fwd_outages: vec![],
            duration_ns,
            interval_ns: SEC,
            seed: 1,
            record_changes: false,
            flows: vec![],
        }
    }

    /// Add a TCP flow from a left host to a right host (`reverse`: right to left).
    pub fn tcp(mut self, name: &str, cca: &str, start_ns: u64, tcp: Value) -> Self {
        let i = self.flows.len();
        self.flows.push(json!({
            "name": name, "kind": "tcp", "src": format!("s{i}"), "dst": format!("d{i}"),
            "start_ns": start_ns, "cca": {"name": cca}, "tcp": tcp,
        }));
        self
    }

    pub fn tcp_reverse(mut self, name: &str, cca: &str, start_ns: u64, tcp: Value) -> Self {
        let i = self.flows.len();
        self.flows.push(json!({
            "name": name, "kind": "tcp", "src": format!("d{i}"), "dst": format!("s{i}"),
            "start_ns": start_ns, "cca": {"name": cca}, "tcp": tcp,
        }));
        self
    }

    pub fn udp(mut self, name: &str, rate_bps: u64, start_ns: u64, stop_ns: u64) -> Self {
        let i = self.flows.len();
        self.flows.push(json!({
            "name": name, "kind": "udp", "src": format!("s{i}"), "dst": format!("d{i}"),
            "start_ns": start_ns, "stop_ns": stop_ns, "rate_bps": rate_bps, "payload_bytes": 1470,
        }));
        self
    }

    pub fn flow_field(mut self, idx: usize, key: &str, v: Value) -> Self {
        self.flows[idx][key] = v;
        self
    }

    pub fn config(&self) -> Value {
        let access_delay = 50_000u64; // 0.05 ms each way on each access link
        let bott_delay = self.rtt_ns / 2 - 2 * access_delay;
        let mut nodes = vec![
            json!({"name": "r1", "kind": "router"}),
            json!({"name": "r2", "kind": "router"}),
        ];
        let q = |limit: u32| json!({"kind": "droptail", "limit_pkts": limit});
        let mut links = vec![json!({
            "name": "bottleneck", "a": "r1", "b": "r2", "mtu": 1500, "monitor": true,
            "ab": {"rate_bps": self.rate_bps, "delay_ns": bott_delay, "queue": q(self.queue_pkts),
                   "loss": self.fwd_loss, "outages": self.fwd_outages},
            "ba": {"rate_bps": self.rate_bps, "delay_ns": bott_delay, "queue": q(self.queue_pkts),
                   "loss": self.rev_loss},
        })];
        for i in 0..self.flows.len() {
            for (h, r) in [(format!("s{i}"), "r1"), (format!("d{i}"), "r2")] {
                nodes.push(json!({"name": h, "kind": "host"}));
                let ch = json!({"rate_bps": self.access_rate_bps, "delay_ns": access_delay, "queue": q(self.access_queue_pkts)});
                links.push(json!({"name": format!("{h}-{r}"), "a": h, "b": r, "mtu": 1500, "ab": ch, "ba": ch}));
            }
        }
        json!({
            "seed": self.seed, "duration_ns": self.duration_ns, "interval_ns": self.interval_ns,
            "record_changes": self.record_changes,
            "nodes": nodes, "links": links, "flows": self.flows,
        })
    }

    pub fn run(&self) -> RunResult {
        tcplab_sim::run_json(&self.config().to_string()).expect("valid config")
    }
}

/// Mean goodput of flow `f` over intervals whose end time is in (from, to].
pub fn mean_goodput(r: &RunResult, f: u32, from_ns: u64, to_ns: u64) -> f64 {
    let s = &r.series;
    let v: Vec<f64> = (0..s.flow.len())
        .filter(|&i| s.flow[i] == f && s.time_ns[i] > from_ns && s.time_ns[i] <= to_ns)
        .map(|i| s.goodput_bps[i])
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Write a config to /tmp for the `runjson` example (debugging aid).
pub fn dump(d: &Dumbbell, path: &str) {
    std::fs::write(path, d.config().to_string()).unwrap();
}
