//! Measurement: per-interval samples of every flow (iperf-style goodput at the receiver, web100 /
//! TCP_INFO-style sender variables) and of monitored links (queue, drops, utilisation), stored
//! column-wise (docs/design.md §4). Columns grow by amortised `Vec` pushes once per interval, not
//! per packet.

use crate::link::{LinkStats, QueueSample};
use serde::Serialize;

/// Per-flow samples, one row per flow per interval end.
#[derive(Default, Serialize)]
pub struct FlowSeries {
    pub flow: Vec<u32>,
    pub time_ns: Vec<u64>,
    pub goodput_bps: Vec<f64>,
    pub delivered_bytes: Vec<u64>,
    pub cwnd_bytes: Vec<f64>,
    pub cwnd_segments: Vec<f64>,
    pub ssthresh_bytes: Vec<f64>,
    pub srtt_ns: Vec<f64>,
    pub rttvar_ns: Vec<f64>,
    pub rto_ns: Vec<f64>,
    pub snd_una: Vec<f64>,
    pub snd_nxt: Vec<f64>,
    pub in_flight_bytes: Vec<f64>,
    pub rwnd_bytes: Vec<f64>,
    pub retransmits: Vec<f64>,
    pub fast_retransmits: Vec<f64>,
    pub timeouts: Vec<f64>,
    pub dupacks: Vec<f64>,
    pub sack_blocks: Vec<f64>,
    pub pacing_rate_bps: Vec<f64>,
}

/// Sender variables at one instant (NaN where not applicable, e.g. UDP).
#[derive(Clone, Copy, Debug)]
pub struct SenderVars {
    pub cwnd_bytes: f64,
    pub cwnd_segments: f64,
    pub ssthresh_bytes: f64,
    pub srtt_ns: f64,
    pub rttvar_ns: f64,
    pub rto_ns: f64,
    pub snd_una: f64,
    pub snd_nxt: f64,
    pub in_flight_bytes: f64,
    pub rwnd_bytes: f64,
    pub retransmits: f64,
    pub fast_retransmits: f64,
    pub timeouts: f64,
    pub dupacks: f64,
    pub sack_blocks: f64,
    pub pacing_rate_bps: f64,
}

impl SenderVars {
    pub const NAN: SenderVars = SenderVars {
        cwnd_bytes: f64::NAN,
        cwnd_segments: f64::NAN,
        ssthresh_bytes: f64::NAN,
        srtt_ns: f64::NAN,
        rttvar_ns: f64::NAN,
        rto_ns: f64::NAN,
        snd_una: f64::NAN,
        snd_nxt: f64::NAN,
        in_flight_bytes: f64::NAN,
        rwnd_bytes: f64::NAN,
        retransmits: f64::NAN,
        fast_retransmits: f64::NAN,
        timeouts: f64::NAN,
        dupacks: f64::NAN,
        sack_blocks: f64::NAN,
        pacing_rate_bps: f64::NAN,
    };
}

impl FlowSeries {
    pub fn push(&mut self, flow: u32, t: u64, goodput: f64, delivered: u64, v: &SenderVars) {
        self.flow.push(flow);
        self.time_ns.push(t);
        self.goodput_bps.push(goodput);
        self.delivered_bytes.push(delivered);
        self.cwnd_bytes.push(v.cwnd_bytes);
        self.cwnd_segments.push(v.cwnd_segments);
        self.ssthresh_bytes.push(v.ssthresh_bytes);
        self.srtt_ns.push(v.srtt_ns);
        self.rttvar_ns.push(v.rttvar_ns);
        self.rto_ns.push(v.rto_ns);
        self.snd_una.push(v.snd_una);
        self.snd_nxt.push(v.snd_nxt);
        self.in_flight_bytes.push(v.in_flight_bytes);
        self.rwnd_bytes.push(v.rwnd_bytes);
        self.retransmits.push(v.retransmits);
        self.fast_retransmits.push(v.fast_retransmits);
        self.timeouts.push(v.timeouts);
        self.dupacks.push(v.dupacks);
        self.sack_blocks.push(v.sack_blocks);
        self.pacing_rate_bps.push(v.pacing_rate_bps);
    }
}

/// Monitored link samples, one row per channel per interval end (docs/design.md §4
/// `queue_series`): the simulator's and the kernel engine's link emulator's (crate
/// `tcplab-linkem`), so both report the same columns.
#[derive(Default, Serialize)]
pub struct QueueSeries {
    /// Link names, filled from `channel` when the run finishes (no per-sample strings).
    pub link: Vec<String>,
    /// The caller's index of the sampled link direction.
    #[serde(skip)]
    pub channel: Vec<u32>,
    pub dir: Vec<&'static str>,
    pub time_ns: Vec<u64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub drops: Vec<u64>,
    pub lost: Vec<u64>,
    pub utilization: Vec<f64>,
}

impl QueueSeries {
    /// One sample `q` of link direction `channel` (`dir`) at time `t`.
    pub fn push(&mut self, channel: u32, dir: &'static str, t: u64, q: &QueueSample) {
        self.channel.push(channel);
        self.dir.push(dir);
        self.time_ns.push(t);
        self.queue_pkts.push(q.queue_pkts);
        self.queue_bytes.push(q.queue_bytes);
        self.drops.push(q.drops);
        self.lost.push(q.lost);
        self.utilization.push(q.utilization);
    }

    /// Fill `link` with the name of each sample's link direction (`name(channel)`).
    pub fn name_links(&mut self, name: impl Fn(u32) -> String) {
        self.link = self.channel.iter().map(|&c| name(c)).collect();
    }
}

/// A link direction's totals (docs/design.md §4 `links`), from its link model's counters; the
/// kernel engine's link emulator reports the same fields (and more).
#[derive(Serialize)]
pub struct LinkTotals {
    pub name: String,
    pub dir: &'static str,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub packets: u64,
    pub bytes: u64,
    pub drops: u64,
    pub lost: u64,
    pub busy_ns: u64,
    pub max_queue_pkts: u32,
    pub monitor: bool,
}

/// Which link direction [`LinkTotals::new`] describes.
pub struct LinkId {
    pub name: String,
    pub dir: &'static str,
    pub from: String,
    pub to: String,
    pub monitor: bool,
}

impl LinkTotals {
    /// The totals of link direction `id`, configured with `rate_bps` and `delay_ns`, whose model
    /// counted `s`.
    pub fn new(id: LinkId, rate_bps: u64, delay_ns: u64, s: &LinkStats) -> LinkTotals {
        LinkTotals {
            name: id.name,
            dir: id.dir,
            from: id.from,
            to: id.to,
            rate_bps,
            delay_ns,
            packets: s.packets,
            bytes: s.bytes,
            drops: s.drops,
            lost: s.lost,
            busy_ns: s.busy_ps / 1000,
            max_queue_pkts: s.max_queue_pkts,
            monitor: id.monitor,
        }
    }
}

/// Every change of cwnd or ssthresh (when `record_changes`).
#[derive(Default, Serialize)]
pub struct ChangeLog {
    pub flow: Vec<u32>,
    pub time_ns: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    pub ssthresh_bytes: Vec<f64>,
    pub in_flight_bytes: Vec<u64>,
}

/// Jain's fairness index (Jain, Chiu, Hawe, DEC-TR-301, 1984): (Σx)² / (n·Σx²); 1 for no
/// values or all zeros. For the Rust tests; the reported results use the Python side's one
/// function, `tcplab.results.jain_index` (also used by `tcplab compare`).
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_jain_bounds() {
        assert!((jain_index(&[5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
