//! The simulation: builds network and endpoints from a [`Config`], runs the event loop, samples
//! measurements, and returns a [`RunResult`] (docs/design.md §4).
//!
//! ## Passing packets on
//! A packet that reaches a router is forwarded at once: its arrival event does nothing but offer
//! it to the next channel at the arrival time. When the outcome of that offer cannot depend on
//! anything that happens before the arrival, the event is not needed, and a channel that
//! *passes on* ([`Network::plan_passing`]) makes the offer to the next channel when it admits
//! the packet, with the arrival time as the offer's time (the link model takes time as an
//! argument: src/link.rs). That holds when, for a channel A whose far end is a router:
//! * every next channel B that A's packets take is fed by A alone (computed from the host pairs
//!   that packets travel between: each flow's and background source's two hosts, both ways;
//!   `forward` and `pass_on` check it on every packet), so B's offers come in A's arrival
//!   order, each at its arrival time, as before; B's own arrival events keep their keys (an
//!   event's key is its time, class, rank and target, not when it was scheduled);
//! * the packet is alone on A's wire (else it waits behind the others for their events, so the
//!   order into B is kept; A passes on again once its wire is empty);
//! * nothing reads B between now and the arrival: B is not any host's egress (its sending end
//!   is a router), the end-of-run totals count offers up to the run's end only (the arrival must
//!   be no later than the duration), and a monitored B is read by the queue sample, so the
//!   arrival must be no later than the next sample (arrivals at a sample's time come before it:
//!   docs/design.md §2);
//! * neither channel is served by the emulator thread, and no capture is configured (captures
//!   record in offer order).
//!
//! The skipped event still counts in the result's `events`. Results are identical with and
//! without (`Simulation::new_without_passing`, tests `test_passing_on_changes_no_result_*`);
//! only pool slots are freed and reused in another order, which no result depends on. On
//! bench s1 (one flow over two access links and a bottleneck) two of each packet's three hops
//! pass on, both ways.

use crate::background::{exponential, to_ns, BoundedPareto, MiceArrivals};
use crate::config::{err, BackgroundCfg, Config, ConfigError, FlowKind, NodeKind, ParamValue};
use crate::endpoint::{Cx, Endpoint};
use crate::event::{Class, EventQueue, Target};
use crate::host::{Hold, HostTotals, TimerSlack};
use crate::measure::{ChangeLog, FlowSeries, LinkId, LinkTotals, QueueSeries, SenderVars};
use crate::net::{Channel, Network, Offer, PacketId, NO_PASS, NO_ROUTE};
use crate::packet::{Packet, Proto};
use crate::rng::Rng;
use crate::tcp::config::{CwndUnitCfg, GrowthCreditCfg, TcpConfig};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{FlowSpec, Prelude, TcpSender};
use crate::time::Nanos;
use crate::udp::{OnOffSource, Periods, UdpSink, UdpSource};
use serde::Serialize;
use tcplab_cc::{CcInit, CwndUnit, WindowGrowth};

/// Receives the packets of the configured captures (docs/design.md; `Config::capture`). The
/// engine stays free of I/O: the caller decides what to do with them (the Python glue writes pcap).
pub trait PacketTap {
    /// Packet `pkt` starts serialisation at `ts` on a channel of capture `capture`.
    fn on_packet(&mut self, capture: usize, channel: &Channel, ts: Nanos, pkt: &Packet);
    /// The run is over: flush, and report the first error, if any.
    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// A flow as the engine tracks it.
pub struct FlowInfo {
    pub name: String,
    pub group: String,
    pub kind: FlowKind,
    pub src_name: String,
    pub dst_name: String,
    pub sender: u32,
    pub receiver: u32,
    pub bytes_target: Option<u64>,
}

/// Per-flow totals in the raw result.
#[derive(Serialize)]
pub struct FlowTotals {
    pub name: String,
    pub group: String,
    pub kind: &'static str,
    pub src: String,
    pub dst: String,
    pub bytes_delivered: u64,
    pub data_packets_delivered: u64,
    pub bytes_sent: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub dupacks: u64,
    pub sack_blocks: u64,
    pub dsack_blocks: u64,
    pub invalid_sack_blocks: u64,
    pub sent_beyond_rwnd: u64,
    /// Entries into CWR on a full host transmit queue (local congestion).
    pub local_cwr: u64,
    /// Congestion reductions undone as spurious (knob `undo`).
    pub undos: u64,
    pub tlp_probes: u64,
    pub zero_window_probes: u64,
    pub syn_retransmits: u64,
    pub completion_ns: Option<u64>,
    pub established: bool,
    /// Receiver: segments that arrived out of order, duplicated, or beyond the offered window.
    pub rx_out_of_order: u64,
    pub rx_duplicates: u64,
    pub rx_beyond_window: u64,
    pub udp_sent: u64,
    pub udp_received: u64,
}

/// Totals of one background source (docs/design.md §4, "background"): in aggregate, not per
/// connection.
#[derive(Serialize, Clone, Debug, Default)]
pub struct BgTotals {
    pub name: String,
    pub kind: &'static str,
    pub src: String,
    pub dst: String,
    /// Configured offered load (application bits per second).
    pub load_bps: u64,
    /// Connections (TCP) started, finished (all data and the FIN acknowledged) and given up
    /// (SYN retries exhausted); those still open at the end are the rest.
    pub flows_started: u64,
    pub flows_completed: u64,
    pub flows_failed: u64,
    /// Sum of the sizes of the connections started (TCP).
    pub bytes_offered: u64,
    /// Application bytes delivered to the receivers (TCP and UDP), open connections included.
    pub bytes_delivered: u64,
    /// Sum over completed connections of (last byte delivered − arrival time).
    pub completion_ns_sum: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub udp_sent: u64,
    pub udp_received: u64,
    /// Connection slots the pool grew to (the most connections open at once).
    pub pool_slots: u64,
}

/// A background source as the engine runs it.
struct BgState {
    totals: BgTotals,
    /// TCP mice: what each connection is built from.
    mice: Option<Box<MiceTemplate>>,
}

struct MiceTemplate {
    src: u16,
    dst: u16,
    mtu: u32,
    rmtu: u32,
    tcp: TcpConfig,
    rtcp: TcpConfig,
    /// The next connection's flow description (its per-connection fields are set at arrival).
    spec: FlowSpec,
    /// A freshly built controller: each connection starts with a copy of it.
    cc0: Box<dyn tcplab_cc::CongestionControl>,
    /// The controller of the last connection retired, to hold the next one's copy.
    spare_cc: Option<Box<dyn tcplab_cc::CongestionControl>>,
    isn_rng: Rng,
    rx_rng: Rng,
    /// Seeds of the connections' timer-slack streams (knob `timer_slack`).
    slack_rng: Rng,
    /// Sender endpoint index of each free slot (its receiver is the next index). A free slot
    /// keeps its finished sender and receiver: the next connection renews them in place
    /// (`TcpSender::renew`, `TcpReceiver::renew`), so that after warm-up a connection allocates
    /// nothing.
    free: Vec<u32>,
}

/// The raw result of one trial (docs/design.md §4).
#[derive(Serialize)]
pub struct RunResult {
    pub engine: &'static str,
    pub sim_packets: u64,
    pub events: u64,
    pub end_ns: u64,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub flows: Vec<FlowTotals>,
    pub links: Vec<LinkTotals>,
    pub series: FlowSeries,
    pub queue_series: QueueSeries,
    pub changes: Option<ChangeLog>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BgTotals>,
    /// Hosts with receive interrupt coalescing (knob `rx_coalesce`), in node order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostTotals>,
}

pub struct Simulation {
    pub now: Nanos,
    duration: Nanos,
    interval: Nanos,
    pub net: Network,
    ev: EventQueue,
    pub eps: Vec<Endpoint>,
    ep_node: Vec<u16>,
    ep_sched: Vec<Option<Nanos>>,
    /// Endpoints whose host's timers fire late (knob `timer_slack`, src/host.rs), and the
    /// deadline their scheduled firing was drawn for (so a deadline is drawn once).
    ep_slack: Vec<Option<Box<TimerSlack>>>,
    ep_due: Vec<Option<Nanos>>,
    pub flows: Vec<FlowInfo>,
    out: Vec<Packet>,
    /// Data packets (TCP segments with payload, UDP datagrams) delivered to receiving endpoints.
    pub data_delivered: u64,
    series: FlowSeries,
    queues: QueueSeries,
    changes: Option<ChangeLog>,
    last_cwnd: Vec<(u64, u64)>,
    prev_delivered: Vec<u64>,
    prev_link: Vec<crate::link::SampleMark>,
    last_sample: Nanos,
    /// Capture index per channel (`u32::MAX` = not captured).
    capture_of: Vec<u32>,
    tap: Option<Box<dyn PacketTap + Send>>,
    /// Endpoints below this index are the flows'; the rest belong to background sources.
    fg_eps: usize,
    /// Flow id of each endpoint's current connection; a packet for a background slot's earlier
    /// connection is discarded on arrival (a pool slot is reused, its old packets may still
    /// be in flight).
    ep_flow: Vec<u32>,
    /// Background source of each endpoint (`u32::MAX`: not background).
    ep_bg: Vec<u32>,
    /// Rank of each endpoint's timer events among simultaneous ones (src/event.rs): from the
    /// flow's name and the side (a background source's name and the slot's number).
    ep_rank: Vec<u64>,
    /// Arrival time and size of the connection in each background sender slot.
    ep_mouse: Vec<(Nanos, u64)>,
    bg: Vec<BgState>,
    /// Flow id of the next background connection (after the flows' ids).
    next_bg_flow: u32,
    /// Latest arrival time at which a channel with `pass_on` hands a packet on at admission
    /// ("Passing packets on" below): `[end of the run, next queue sample]`, indexed by the
    /// channel's `pass_sampled`.
    pass_by: [Nanos; 2],
}

/// A flow's congestion-control parameters as the controllers' registry takes them.
pub fn cc_params(cfg: &crate::config::CcaCfg) -> Vec<(String, tcplab_cc::ParamValue)> {
    cfg.params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                ParamValue::Bool(b) => tcplab_cc::ParamValue::Bool(*b),
                ParamValue::Int(i) => tcplab_cc::ParamValue::Int(*i),
                ParamValue::Float(f) => tcplab_cc::ParamValue::Float(*f),
                ParamValue::Str(s) => tcplab_cc::ParamValue::Str(s.clone()),
            };
            (k.clone(), v)
        })
        .collect()
}

/// Whether a background connection renews its pool slot's finished endpoints in place (always,
/// except in the test that compares renewal with endpoints built anew).
#[cfg(not(test))]
#[inline(always)]
fn slot_renewal_enabled() -> bool {
    true
}

#[cfg(test)]
thread_local! {
    static NO_SLOT_RENEWAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn slot_renewal_enabled() -> bool {
    !NO_SLOT_RENEWAL.with(|c| c.get())
}

/// The window-growth rules a flow's TCP knobs select (also used by the script driver).
pub fn growth_of(t: &TcpConfig) -> WindowGrowth {
    WindowGrowth {
        unit: match t.cwnd_unit {
            CwndUnitCfg::Packets => CwndUnit::Packets,
            CwndUnitCfg::Bytes => CwndUnit::Bytes,
        },
        abc_limit: t.abc,
        count_delivered: t.growth_credit == GrowthCreditCfg::Delivered,
        slow_start_inclusive: t.slow_start_inclusive,
        ca_increment_truncated: t.ca_increment_truncated,
    }
}

/// The controller's initial values before the handshake, for a first hop of `mtu` (an MSS of
/// `mtu` − 52: IPv4 and TCP headers with the timestamp option); the sender builds it again with
/// the negotiated MSS when the handshake completes (also used by the script driver).
pub fn initial_cc(t: &TcpConfig, mtu: u32) -> CcInit {
    CcInit {
        mss: mtu - 52,
        initial_cwnd: t.iw().bytes(mtu - 52),
        initial_ssthresh: t.initial_ssthresh.unwrap_or(u64::MAX),
        growth: growth_of(t),
    }
}

/// The node id of host `name`, or an error naming `field`.
fn host_id(net: &Network, name: &str, field: String) -> Result<u16, ConfigError> {
    let i = net
        .nodes
        .iter()
        .position(|n| n.name == name)
        .ok_or_else(|| err(field.clone(), format!("unknown node {name:?}")))?;
    if net.nodes[i].kind != NodeKind::Host {
        return Err(err(
            field,
            format!("{name:?} is a router; flows run between hosts"),
        ));
    }
    Ok(i as u16)
}

impl Simulation {
    pub fn new(cfg: &Config) -> Result<Simulation, ConfigError> {
        Self::build(cfg, true)
    }

    /// [`Simulation::new`] without passing packets on at admission ("Passing packets on"):
    /// every hop has its arrival event (tests compare the two).
    pub fn new_without_passing(cfg: &Config) -> Result<Simulation, ConfigError> {
        Self::build(cfg, false)
    }

    fn build(cfg: &Config, passing: bool) -> Result<Simulation, ConfigError> {
        if cfg.duration_ns == 0 {
            return Err(err("duration_ns", "must be > 0"));
        }
        if cfg.interval_ns == 0 {
            return Err(err("interval_ns", "must be > 0"));
        }
        let mut net = Network::build(cfg)?;
        let mut eps = Vec::new();
        let mut ep_node = Vec::new();
        let mut flows = Vec::new();
        let mut slack_of: Vec<(u32, TimerSlack)> = Vec::new();
        for (fi, f) in cfg.flows.iter().enumerate() {
            let src = host_id(&net, &f.src, format!("flows[{fi}].src"))?;
            let dst = host_id(&net, &f.dst, format!("flows[{fi}].dst"))?;
            if src == dst {
                return Err(err(
                    format!("flows[{fi}].dst"),
                    "source and destination are the same host",
                ));
            }
            if net.next_hop(src, dst) == NO_ROUTE || net.next_hop(dst, src) == NO_ROUTE {
                return Err(err(
                    format!("flows[{fi}]"),
                    format!("no route between {:?} and {:?}", f.src, f.dst),
                ));
            }
            let sender = eps.len() as u32;
            let receiver = sender + 1;
            let stop = f.stop_ns.map(|s| s.min(cfg.duration_ns));
            match f.kind {
                FlowKind::Tcp => {
                    let mtu = net.channels[net.next_hop(src, dst) as usize].mtu;
                    if mtu < 576 {
                        return Err(err(
                            format!("flows[{fi}]"),
                            format!("first-hop MTU {mtu} < 576"),
                        ));
                    }
                    if f.prelude_bytes == Some(0) {
                        return Err(err(
                            format!("flows[{fi}].prelude_bytes"),
                            "an opening write needs at least 1 byte (or no prelude_bytes)",
                        ));
                    }
                    let isn = f.tcp.isn.unwrap_or_else(|| {
                        Rng::for_entity(cfg.seed, "isn", &f.name).next_u64() as u32
                    });
                    let spec = FlowSpec {
                        flow: fi as u32,
                        me: sender,
                        peer: receiver,
                        src,
                        dst,
                        start: f.start_ns,
                        stop,
                        bytes: f.bytes,
                        mtu,
                        isn,
                        cca_name: f.cca.name.clone(),
                        cca_params: cc_params(&f.cca),
                        growth: growth_of(&f.tcp),
                        prelude: f.prelude_bytes.map(|bytes| Prelude {
                            bytes,
                            gap: f.prelude_gap_ns,
                        }),
                    };
                    // Built here to validate the algorithm and its parameters; the sender rebuilds it
                    // with the negotiated MSS when the handshake completes.
                    let init = initial_cc(&f.tcp, mtu);
                    let cc = tcplab_cc::build(&spec.cca_name, &spec.cca_params, init)
                        .map_err(|e| err(format!("flows[{fi}].cca"), e.to_string()))?;
                    eps.push(Endpoint::TcpSender(Box::new(TcpSender::new(
                        spec,
                        f.tcp.clone(),
                        cc,
                    ))));
                    if f.tcp.tso {
                        net.count_frames_at(src);
                    }
                    let rcfg = f.receiver_tcp.clone().unwrap_or_else(|| f.tcp.clone());
                    let rmtu = net.channels[net.next_hop(dst, src) as usize].mtu;
                    if let Some(cap) = rcfg.rx_capacity {
                        net.add_ingress(dst, cap, rcfg.rx_ring, rmtu);
                    }
                    net.set_rx_coalesce(src, f.tcp.rx_coalesce, f.tcp.rx_ring)
                        .map_err(|m| err(format!("flows[{fi}].tcp.rx_coalesce"), m))?;
                    net.set_rx_coalesce(dst, rcfg.rx_coalesce, rcfg.rx_ring)
                        .map_err(|m| err(format!("flows[{fi}].receiver_tcp.rx_coalesce"), m))?;
                    for (side, slack) in [("snd", f.tcp.timer_slack), ("rcv", rcfg.timer_slack)] {
                        if slack > 0 {
                            let name = format!("{}.{side}", f.name);
                            let rng = Rng::for_entity(cfg.seed, "timer-slack", &name);
                            let ep = if side == "snd" { sender } else { receiver };
                            slack_of.push((ep, TimerSlack::new(slack, rng)));
                        }
                    }
                    let rng = Rng::for_entity(cfg.seed, "receiver", &f.name);
                    let mut rx =
                        TcpReceiver::new(fi as u32, receiver, sender, dst, src, rcfg, rmtu, rng);
                    rx.set_target(f.bytes_written());
                    eps.push(Endpoint::TcpReceiver(Box::new(rx)));
                }
                FlowKind::Udp => {
                    if f.prelude_bytes.is_some() {
                        return Err(err(
                            format!("flows[{fi}].prelude_bytes"),
                            "only TCP flows have an opening write",
                        ));
                    }
                    let rate = f.rate_bps.filter(|&r| r > 0).ok_or_else(|| {
                        err(
                            format!("flows[{fi}].rate_bps"),
                            "UDP flows need rate_bps > 0",
                        )
                    })?;
                    if f.payload_bytes == 0 || f.payload_bytes > 65507 {
                        return Err(err(
                            format!("flows[{fi}].payload_bytes"),
                            "must be 1..65507",
                        ));
                    }
                    let stop = stop.unwrap_or(cfg.duration_ns);
                    eps.push(Endpoint::UdpSource(UdpSource::new(
                        fi as u32,
                        receiver,
                        src,
                        dst,
                        f.start_ns,
                        stop,
                        rate,
                        f.payload_bytes,
                    )));
                    eps.push(Endpoint::UdpSink(UdpSink::default()));
                }
            }
            ep_node.push(src);
            ep_node.push(dst);
            flows.push(FlowInfo {
                name: f.name.clone(),
                group: f.group.clone().unwrap_or_else(|| f.name.clone()),
                kind: f.kind,
                src_name: f.src.clone(),
                dst_name: f.dst.clone(),
                sender,
                receiver,
                bytes_target: f.bytes_written(),
            });
        }
        let fg_eps = eps.len();
        let mut ep_flow: Vec<u32> = (0..fg_eps as u32).map(|i| i / 2).collect();
        let mut ep_bg = vec![u32::MAX; fg_eps];
        let mut next_bg_flow = cfg.flows.len() as u32;
        let mut bg = Vec::with_capacity(cfg.background.len());
        for (bi, b) in cfg.background.iter().enumerate() {
            let st = build_background(
                cfg,
                bi,
                b,
                &mut net,
                &mut eps,
                &mut ep_node,
                &mut next_bg_flow,
            )?;
            while ep_flow.len() < eps.len() {
                // Static endpoints of this source: the UDP pair has one flow id; the arrival
                // process none.
                ep_flow.push(if st.mice.is_some() {
                    u32::MAX
                } else {
                    next_bg_flow - 1
                });
                ep_bg.push(bi as u32);
            }
            bg.push(st);
        }
        let n_eps = eps.len();
        let n_flows = flows.len();
        // Ranks from names (src/event.rs): a flow's two endpoints, then each background
        // source's fixed endpoints (numbered within the source).
        let mut ep_rank: Vec<u64> = (0..fg_eps)
            .map(|i| {
                let side = if i % 2 == 0 { "snd" } else { "rcv" };
                let name = format!("{}.{side}", cfg.flows[i / 2].name);
                crate::event::rank("endpoint", &name)
            })
            .collect();
        for i in fg_eps..n_eps {
            let bi = ep_bg[i] as usize;
            let k = ep_bg[fg_eps..i]
                .iter()
                .filter(|&&b| b as usize == bi)
                .count();
            let name = format!("{}.{k}", cfg.background[bi].name);
            ep_rank.push(crate::event::rank("background", &name));
        }
        let n_ch = net.channels.len();
        // Events name their target in 20 bits of the key (event.rs).
        let max = crate::event::MAX_TARGET_INDEX as usize + 1;
        let max_ch = crate::event::MAX_CHANNEL_INDEX as usize + 1;
        if n_ch > max_ch {
            return Err(err("links", format!("at most {} link directions", max_ch)));
        }
        if n_eps > max {
            return Err(err("flows", format!("at most {} flows", max / 2)));
        }
        let mut ep_slack: Vec<Option<Box<TimerSlack>>> = (0..n_eps).map(|_| None).collect();
        for (ep, sl) in slack_of {
            ep_slack[ep as usize] = Some(Box::new(sl));
        }
        let mut sim = Simulation {
            now: 0,
            duration: cfg.duration_ns,
            interval: cfg.interval_ns,
            net,
            ev: EventQueue::new(),
            eps,
            ep_node,
            ep_sched: vec![None; n_eps],
            ep_slack,
            ep_due: vec![None; n_eps],
            flows,
            out: Vec::with_capacity(256),
            data_delivered: 0,
            series: FlowSeries::default(),
            queues: QueueSeries::default(),
            changes: cfg.record_changes.then(ChangeLog::default),
            last_cwnd: vec![(0, 0); n_flows],
            prev_delivered: vec![0; n_flows],
            prev_link: vec![Default::default(); n_ch],
            last_sample: 0,
            capture_of: vec![u32::MAX; n_ch],
            tap: None,
            fg_eps,
            ep_flow,
            ep_bg,
            ep_rank,
            ep_mouse: vec![(0, 0); n_eps],
            bg,
            next_bg_flow,
            pass_by: [cfg.duration_ns, cfg.interval_ns.min(cfg.duration_ns)],
        };
        for (ci, c) in cfg.capture.iter().enumerate() {
            for name in &c.channels {
                let ch = sim.net.channels.iter().position(|x| &x.name == name).ok_or_else(|| {
                    err(
                        format!("capture[{ci}].channels"),
                        format!("unknown link direction {name:?} (use \"<link>.ab\" or \"<link>.ba\")"),
                    )
                })?;
                sim.capture_of[ch] = ci as u32;
            }
        }
        // Captures record packets in the order they are offered: no passing on with them.
        if passing && cfg.capture.is_empty() {
            // Every host pair that packets travel between: each flow's and each background
            // source's two hosts, both ways (data one way, ACKs the other).
            let mut pairs = Vec::new();
            let ends = cfg.flows.iter().map(|f| (&f.src, &f.dst));
            for (a, b) in ends.chain(cfg.background.iter().map(|b| (&b.src, &b.dst))) {
                let a = host_id(&sim.net, a, String::new())?;
                let b = host_id(&sim.net, b, String::new())?;
                pairs.extend([(a, b), (b, a)]);
            }
            sim.net.plan_passing(&pairs);
        }
        for id in 0..n_eps {
            sim.reschedule(id);
        }
        sim.ev.schedule(
            cfg.interval_ns.min(cfg.duration_ns),
            Class::Sample,
            0,
            Target::Sampler,
        );
        Ok(sim)
    }

    #[inline(always)]
    fn reschedule(&mut self, id: usize) {
        if let Some(t) = self.eps[id].poll_at() {
            if self.ep_slack[id].is_some() {
                self.reschedule_late(id, t);
                return;
            }
            let t = t.max(self.now);
            match self.ep_sched[id] {
                Some(s) if s <= t => {}
                _ => {
                    self.ev.schedule(
                        t,
                        Class::Timer,
                        self.ep_rank[id],
                        Target::Endpoint(id as u32),
                    );
                    self.ep_sched[id] = Some(t);
                }
            }
        }
    }

    /// `reschedule` for an endpoint whose timers fire late (knob `timer_slack`): the deadline
    /// `due` fires at `due + U[0, slack]` (not before now), drawn once per deadline: the deadline
    /// as the endpoint gives it, so packets handled while an expired deadline waits for its late
    /// firing do not draw again. An event already due no later than that stays (the endpoint then
    /// handles whatever is due when it runs, and reschedules).
    #[cold]
    fn reschedule_late(&mut self, id: usize, due: Nanos) {
        let t = due.max(self.now);
        if self.ep_due[id] == Some(due) || matches!(self.ep_sched[id], Some(s) if s <= t) {
            return;
        }
        let Some(sl) = self.ep_slack[id].as_mut() else {
            return;
        };
        let fire = sl.fire_time(due).max(self.now);
        self.ep_due[id] = Some(due);
        if matches!(self.ep_sched[id], Some(s) if s <= fire) {
            return;
        }
        self.ev.schedule(
            fire,
            Class::Timer,
            self.ep_rank[id],
            Target::Endpoint(id as u32),
        );
        self.ep_sched[id] = Some(fire);
    }

    /// Hand packet `h`, addressed to host `at`, to its endpoint (or drop it when it belongs to
    /// an earlier connection of a reused background slot).
    #[inline(always)]
    fn deliver(&mut self, h: PacketId) {
        let p = self.net.pool.get(h);
        let ep = p.ep as usize;
        if ep >= self.fg_eps && p.flow != self.ep_flow[ep] {
            // For an earlier connection of a reused background slot.
            self.net.pool.release(h);
            return;
        }
        if p.payload > 0 && (p.proto == Proto::Udp || p.is_tcp_data()) {
            self.data_delivered += 1;
        }
        self.with_endpoint(ep, Some(h));
    }

    /// Run an endpoint handler with a context for its host, then forward what it sent. With
    /// `pkt`, the endpoint receives that packet, whose pool slot is released afterwards.
    #[inline]
    fn with_endpoint(&mut self, id: usize, pkt: Option<PacketId>) {
        let node = self.ep_node[id];
        let now = self.now;
        let (room, free_ps) = match self.net.nodes[node as usize].egress {
            Some(ch) => {
                let c = &mut self.net.channels[ch as usize];
                (c.room(now), c.next_departure_ps())
            }
            None => (u32::MAX, None),
        };
        debug_assert!(self.out.is_empty());
        {
            let mut cx = Cx::new(now, &mut self.out, room, now).with_free_ps(free_ps);
            match pkt {
                Some(h) => {
                    self.eps[id].on_packet(self.net.pool.get(h), &mut cx);
                    self.net.pool.release(h);
                }
                None => self.eps[id].on_timer(&mut cx),
            }
        }
        // Each packet sent is copied once, from the buffer into its pool slot.
        for i in 0..self.out.len() {
            let p = &self.out[i];
            let (dst, wire_len, cont) = (p.dst, p.wire_len, p.frame_cont);
            let h = self.net.pool.alloc_copy(p);
            self.forward_fields(node, h, dst, wire_len, cont);
        }
        self.out.clear();
        if id >= self.fg_eps {
            self.reschedule(id);
            self.bg_after(id);
            return;
        }
        if let Some(log) = self.changes.as_mut() {
            if let Endpoint::TcpSender(s) = &self.eps[id] {
                let f = s.spec.flow as usize;
                let cur = (s.cwnd(), s.ssthresh());
                if cur != self.last_cwnd[f] {
                    self.last_cwnd[f] = cur;
                    log.flow.push(f as u32);
                    log.time_ns.push(now);
                    log.cwnd_bytes.push(cur.0);
                    log.ssthresh_bytes.push(if cur.1 == u64::MAX {
                        f64::INFINITY
                    } else {
                        cur.1 as f64
                    });
                    log.in_flight_bytes.push(s.in_flight());
                }
            }
        }
        self.reschedule(id);
    }

    /// Attach the receiver of captured packets (only called when captures are configured).
    pub fn set_tap(&mut self, tap: Box<dyn PacketTap + Send>) {
        self.tap = Some(tap);
    }

    /// Forward packet `h`, which arrived at router (or transit host) `node` over channel `ch`,
    /// towards its destination. A channel that may receive packets ahead of their time
    /// (`feeder`, "Passing packets on") receives from its feeder only.
    #[inline(always)]
    fn forward(&mut self, ch: u32, node: u16, h: PacketId) {
        let p = self.net.pool.get(h);
        let (dst, wire_len) = (p.dst, p.wire_len);
        let next = self.net.next_hop(node, dst);
        if next != NO_ROUTE {
            let f = self.net.channels[next as usize].feeder;
            assert!(
                f == NO_ROUTE || f == ch,
                "channel {next} receives packets passed on from {f} and from {ch}"
            );
        }
        self.forward_fields(node, h, dst, wire_len, false);
    }

    /// [`Simulation::forward`] with the packet's destination, length and TSO continuation
    /// (`cont`, only on its sending host) given: a host sending a packet it has in hand does not
    /// read back the pool slot it has just written (on a large-window run that read waited for
    /// the slot's write, a third of `forward`'s samples).
    #[inline(always)]
    fn forward_fields(&mut self, node: u16, h: PacketId, dst: u16, wire_len: u32, cont: bool) {
        let ch = self.net.next_hop(node, dst);
        if ch == NO_ROUTE {
            self.net.pool.release(h);
            return;
        }
        if self.tap.is_some() && self.capture_of[ch as usize] != u32::MAX {
            self.offer_captured(ch, h, wire_len, cont);
            return;
        }
        self.offer(ch, h, dst, wire_len, cont);
    }

    /// Offer packet `h` (addressed to host `dst`) to channel `ch`; its slot is released unless
    /// it was queued or passed on.
    #[inline(always)]
    fn offer(&mut self, ch: u32, h: PacketId, dst: u16, wire_len: u32, cont: bool) {
        let o = self.net.channels[ch as usize].offer(
            ch,
            self.now,
            h,
            wire_len,
            cont,
            &mut self.ev,
            &self.pass_by,
        );
        match o {
            Offer::Queued => {}
            Offer::Passed(at) => self.pass_on(ch, h, dst, wire_len, at),
            Offer::Dropped | Offer::Lost => self.net.pool.release(h),
        }
    }

    /// Packet `h`, admitted to channel `ch`, was passed on ([`Offer::Passed`]): it reaches the
    /// router at the far end at `at`, which forwards it now, with `at` as the time of the offer
    /// to the next channel — what the arrival event at `at` would have done ("Passing packets
    /// on"). That next channel may pass it on again.
    #[inline(always)]
    fn pass_on(&mut self, mut ch: u32, h: PacketId, dst: u16, wire_len: u32, mut at: Nanos) {
        loop {
            // The arrival event this hop does without, counted as run (the result's `events`).
            self.ev.count_unqueued();
            let from = &self.net.channels[ch as usize];
            let next = if from.pass_to != NO_ROUTE {
                // The only next channel of this one's packets (`Network::plan_passing`).
                debug_assert_eq!(from.pass_to, self.net.next_hop(from.to, dst));
                from.pass_to
            } else {
                let next = self.net.next_hop(from.to, dst);
                if next == NO_ROUTE {
                    self.net.pool.release(h);
                    return;
                }
                let f = self.net.channels[next as usize].feeder;
                assert!(
                    f == ch,
                    "channel {ch} passed a packet on to {next}, which it does not feed alone"
                );
                next
            };
            let c = &mut self.net.channels[next as usize];
            match c.offer(next, at, h, wire_len, false, &mut self.ev, &self.pass_by) {
                Offer::Queued => return,
                Offer::Passed(t) => (ch, at) = (next, t),
                Offer::Dropped | Offer::Lost => {
                    self.net.pool.release(h);
                    return;
                }
            }
        }
    }

    /// `offer` plus the capture record; kept out of the common path.
    #[cold]
    fn offer_captured(&mut self, ch: u32, h: PacketId, wire_len: u32, cont: bool) {
        let c = &mut self.net.channels[ch as usize];
        let ts = c.start_time(self.now);
        let o = c.offer(ch, self.now, h, wire_len, cont, &mut self.ev, &NO_PASS);
        if o != Offer::Dropped {
            let cap = self.capture_of[ch as usize] as usize;
            if let Some(tap) = self.tap.as_mut() {
                tap.on_packet(
                    cap,
                    &self.net.channels[ch as usize],
                    ts,
                    self.net.pool.get(h),
                );
            }
        }
        if o != Offer::Queued {
            self.net.pool.release(h);
        }
    }

    /// The sending host of each flow (node id), in flow order.
    pub fn flow_sources(&self) -> Vec<u16> {
        self.flows
            .iter()
            .map(|f| self.ep_node[f.sender as usize])
            .collect()
    }

    /// Close the tap, if any (see [`PacketTap::close`]).
    pub fn close_tap(&mut self) -> Result<(), String> {
        self.tap.as_mut().map_or(Ok(()), |t| t.close())
    }

    /// The node's name (for taps that label packets).
    pub fn node_name(&self, id: u16) -> &str {
        &self.net.nodes[id as usize].name
    }

    /// Run to the configured duration.
    pub fn run(&mut self) {
        self.run_until(self.duration);
        self.now = self.now.max(self.duration);
    }

    /// Process every event up to and including time `until` (at most the duration). Channels
    /// may then hold packets passed on to them for a later time ("Passing packets on"): the
    /// queue samples and the totals at the run's end are exact, a channel's state read at
    /// `until` may be ahead of it.
    pub fn run_until(&mut self, until: Nanos) {
        let until = until.min(self.duration);
        while let Some(e) = self.ev.peek() {
            if e.time() > until {
                break;
            }
            self.now = e.time();
            let target = match e.arrival_channel() {
                Some(ch) => Target::Channel(ch),
                None => e.target(),
            };
            if !matches!(target, Target::Channel(_)) {
                self.ev.remove_next();
            }
            // A channel's arrival event is removed by `take_arrival`, which schedules the next
            // head in its place.
            match target {
                Target::Channel(ch) => {
                    let c = &mut self.net.channels[ch as usize];
                    let (h, far) = c.take_arrival(ch, &mut self.ev);
                    if far {
                        c.prefetch_arrivals(&self.net.pool);
                    }
                    let at = c.to;
                    self.arrive(ch, at, h);
                }
                Target::Host(node) => self.interrupt(node as usize),
                Target::ThreadChannel(ch) => self.thread_arrival(ch),
                Target::Endpoint(id) => {
                    if self.ep_sched[id as usize] == Some(self.now) {
                        self.ep_sched[id as usize] = None;
                        self.ep_due[id as usize] = None;
                        if matches!(self.eps[id as usize], Endpoint::BgArrivals(_)) {
                            self.bg_arrivals(id as usize);
                        } else {
                            self.with_endpoint(id as usize, None);
                        }
                    }
                }
                Target::Sampler => {
                    self.sample();
                    if self.now < self.duration {
                        let next = (self.now + self.interval).min(self.duration);
                        self.ev.schedule(next, Class::Sample, 0, Target::Sampler);
                        self.pass_by[1] = next;
                    }
                }
            }
        }
    }

    /// Channel `ch`'s head packet fell due, or is sent, on a channel served by the emulator
    /// thread (src/emuthread.rs; its events are [`Target::ThreadChannel`], already removed from
    /// the queue). When it falls due the thread decides when it leaves and its event moves
    /// there; then it arrives as on any other channel.
    #[cold]
    #[inline(never)]
    fn thread_arrival(&mut self, ch: u32) {
        let now = self.now;
        let c = &mut self.net.channels[ch as usize];
        let target = Target::ThreadChannel(ch);
        if !c.head_served {
            c.head_served = true;
            let at = self.net.thread.as_mut().map_or(now, |t| t.serve(now));
            self.ev.schedule(at, Class::Arrival, c.rank, target);
            return;
        }
        c.head_served = false;
        let h = c.take_head();
        // The next packet may have fallen due while this one waited for the thread: its event
        // cannot lie in the past.
        if let Some((a, _)) = c.model.next_arrival() {
            self.ev.schedule(a.max(now), Class::Arrival, c.rank, target);
        }
        let at = c.to;
        self.arrive(ch, at, h);
    }

    /// Packet `h` arrived at node `at` over channel `ch`: through the host's receive processing
    /// or its NIC's interrupt coalescing to the endpoint, or forwarded.
    #[inline(always)]
    fn arrive(&mut self, ch: u32, at: u16, h: PacketId) {
        let p = self.net.pool.get(h);
        if at == p.dst {
            if let Some(ig) = self.net.nodes[at as usize].ingress {
                if ig != ch {
                    // Through the host's receive processing first.
                    let wire_len = p.wire_len;
                    self.offer(ig, h, at, wire_len, false);
                    return;
                }
            }
            let node = &mut self.net.nodes[at as usize];
            if let Some(c) = node.rx_irq.as_mut() {
                // The NIC holds it for the next receive interrupt (src/host.rs).
                match c.offer(self.now, h) {
                    Hold::Schedule(t) => {
                        self.ev
                            .schedule(t, Class::Interrupt, node.rank, Target::Host(at as u32))
                    }
                    Hold::Held => {}
                    Hold::Dropped => self.net.pool.release(h),
                }
                return;
            }
            self.deliver(h);
        } else {
            self.forward(ch, at, h);
        }
    }

    /// Host `node`'s receive interrupt: its held packets go to the stack in arrival order.
    #[cold]
    fn interrupt(&mut self, node: usize) {
        let now = self.now;
        let n = match self.net.nodes[node].rx_irq.as_mut() {
            Some(c) => c.fire(now),
            None => return,
        };
        for _ in 0..n {
            let h = match self.net.nodes[node].rx_irq.as_mut().and_then(|c| c.take()) {
                Some(h) => h,
                None => break,
            };
            self.deliver(h);
        }
    }

    fn delivered_bytes(&self, f: &FlowInfo) -> u64 {
        match &self.eps[f.receiver as usize] {
            Endpoint::TcpReceiver(r) => r.bytes_delivered(),
            Endpoint::UdpSink(k) => k.bytes,
            _ => 0,
        }
    }

    fn sender_vars(&self, f: &FlowInfo) -> SenderVars {
        match &self.eps[f.sender as usize] {
            Endpoint::TcpSender(s) => {
                let smss = s.smss.max(1) as f64;
                let ss = s.ssthresh();
                SenderVars {
                    cwnd_bytes: s.cwnd() as f64,
                    cwnd_segments: s.cwnd() as f64 / smss,
                    ssthresh_bytes: if ss == u64::MAX {
                        f64::INFINITY
                    } else {
                        ss as f64
                    },
                    srtt_ns: s.rtt.srtt as f64,
                    rttvar_ns: s.rtt.rttvar as f64,
                    rto_ns: s.rto_now() as f64,
                    snd_una: s.snd_una as f64,
                    snd_nxt: s.snd_nxt as f64,
                    in_flight_bytes: s.in_flight() as f64,
                    rwnd_bytes: s.rwnd as f64,
                    retransmits: s.stats.retransmits as f64,
                    fast_retransmits: s.stats.fast_retransmits as f64,
                    timeouts: s.stats.timeouts as f64,
                    dupacks: s.stats.dupacks as f64,
                    sack_blocks: s.stats.sack_blocks as f64,
                    pacing_rate_bps: s.pacing_rate_now().map_or(f64::NAN, |r| r as f64),
                }
            }
            _ => SenderVars::NAN,
        }
    }

    fn sample(&mut self) {
        let t = self.now;
        let dt = t.saturating_sub(self.last_sample);
        if dt == 0 {
            return;
        }
        for fi in 0..self.flows.len() {
            let f = &self.flows[fi];
            let d = self.delivered_bytes(f);
            let good = (d - self.prev_delivered[fi]) as f64 * 8e9 / dt as f64;
            self.prev_delivered[fi] = d;
            let v = self.sender_vars(f);
            self.series.push(fi as u32, t, good, d, &v);
        }
        for ci in 0..self.net.channels.len() {
            if !self.net.channels[ci].monitor {
                continue;
            }
            // The link model's sample (src/link.rs), the same as the kernel engine's emulator.
            let c = &mut self.net.channels[ci];
            let q = c.model.sample(t, dt, &mut self.prev_link[ci]);
            self.queues.push(ci as u32, c.dir, t, &q);
        }
        self.last_sample = t;
    }

    /// Assemble the raw result.
    pub fn finish(mut self) -> RunResult {
        let background = self.background_totals();
        let mut flows = Vec::with_capacity(self.flows.len());
        for f in &self.flows {
            let mut t = FlowTotals {
                name: f.name.clone(),
                group: f.group.clone(),
                kind: match f.kind {
                    FlowKind::Tcp => "tcp",
                    FlowKind::Udp => "udp",
                },
                src: f.src_name.clone(),
                dst: f.dst_name.clone(),
                bytes_delivered: self.delivered_bytes(f),
                data_packets_delivered: 0,
                bytes_sent: 0,
                segments_sent: 0,
                retransmits: 0,
                fast_retransmits: 0,
                timeouts: 0,
                dupacks: 0,
                sack_blocks: 0,
                dsack_blocks: 0,
                invalid_sack_blocks: 0,
                sent_beyond_rwnd: 0,
                local_cwr: 0,
                undos: 0,
                tlp_probes: 0,
                zero_window_probes: 0,
                syn_retransmits: 0,
                completion_ns: None,
                established: false,
                rx_out_of_order: 0,
                rx_duplicates: 0,
                rx_beyond_window: 0,
                udp_sent: 0,
                udp_received: 0,
            };
            match &self.eps[f.sender as usize] {
                Endpoint::TcpSender(s) => {
                    let st = s.stats;
                    t.bytes_sent = st.bytes_sent;
                    t.segments_sent = st.segments_sent;
                    t.retransmits = st.retransmits;
                    t.fast_retransmits = st.fast_retransmits;
                    t.timeouts = st.timeouts;
                    t.dupacks = st.dupacks;
                    t.sack_blocks = st.sack_blocks;
                    t.dsack_blocks = st.dsack_blocks;
                    t.invalid_sack_blocks = st.invalid_sack_blocks;
                    t.sent_beyond_rwnd = st.sent_beyond_rwnd;
                    t.local_cwr = st.local_cwr;
                    t.undos = st.undos;
                    t.tlp_probes = st.tlp_probes;
                    t.zero_window_probes = st.zero_window_probes;
                    t.syn_retransmits = st.syn_retransmits;
                    t.established = s.established();
                }
                Endpoint::UdpSource(u) => {
                    t.udp_sent = u.sent;
                    t.bytes_sent = u.sent * u.payload as u64;
                    t.segments_sent = u.sent;
                }
                _ => {}
            }
            match &self.eps[f.receiver as usize] {
                Endpoint::TcpReceiver(r) => {
                    t.data_packets_delivered = r.segments_received();
                    if let Some(st) = r.core().map(|x| *x.stats()) {
                        t.rx_out_of_order = st.ooo_segments;
                        t.rx_duplicates = st.dup_segments;
                        t.rx_beyond_window = st.beyond_window_segments;
                    }
                    if let Some(target) = f.bytes_target {
                        t.completion_ns = r.completion_time(target);
                    }
                }
                Endpoint::UdpSink(k) => {
                    t.udp_received = k.received;
                    t.data_packets_delivered = k.received;
                }
                _ => {}
            }
            flows.push(t);
        }
        let links = self
            .net
            .channels
            .iter()
            .map(|c| {
                // Host receive stages are reported as a link named "<host>.rx", direction "rx".
                let name = c
                    .name
                    .rsplit_once('.')
                    .map_or(c.name.clone(), |(l, _)| l.to_string());
                let id = LinkId {
                    name,
                    dir: c.dir,
                    from: self.net.nodes[c.from as usize].name.clone(),
                    to: self.net.nodes[c.to as usize].name.clone(),
                    monitor: c.monitor,
                };
                LinkTotals::new(id, c.rate_bps, c.delay_ns, c.stats())
            })
            .collect();
        let mut queues = self.queues;
        queues.name_links(|c| {
            let n = &self.net.channels[c as usize].name;
            n.rsplit_once('.').map_or(n.clone(), |(l, _)| l.to_string())
        });
        RunResult {
            engine: "sim",
            sim_packets: self.data_delivered,
            events: self.ev.popped(),
            end_ns: self.now,
            duration_ns: self.duration,
            interval_ns: self.interval,
            flows,
            links,
            series: self.series,
            queue_series: queues,
            changes: self.changes,
            background,
            hosts: self
                .net
                .nodes
                .iter()
                .filter_map(|n| n.rx_irq.as_ref().map(|c| c.totals.clone()))
                .collect(),
        }
    }

    /// Connections the background sources have started so far (TCP mice).
    pub fn background_connections(&self) -> u64 {
        self.bg.iter().map(|b| b.totals.flows_started).sum()
    }

    /// Start the background connections that arrive now (endpoint `id` is a mice source's
    /// arrival process).
    fn bg_arrivals(&mut self, id: usize) {
        let now = self.now;
        loop {
            let (bi, size) = match &mut self.eps[id] {
                Endpoint::BgArrivals(a) => match a.take(now) {
                    Some(size) => (a.source as usize, size),
                    None => break,
                },
                _ => return,
            };
            self.start_mouse(bi, size);
        }
        self.reschedule(id);
    }

    /// One background TCP connection of `size` bytes from source `bi`, starting now, in a free
    /// slot of the source's pool (or two new endpoints when none is free).
    fn start_mouse(&mut self, bi: usize, size: u64) {
        let now = self.now;
        let flow = self.next_bg_flow;
        self.next_bg_flow = self.next_bg_flow.wrapping_add(1);
        let max = crate::event::MAX_TARGET_INDEX as usize + 1;
        let st = &mut self.bg[bi];
        let Some(m) = st.mice.as_mut() else { return };
        let s = match m.free.pop() {
            Some(s) => s as usize,
            None => {
                if self.eps.len() + 2 > max {
                    // No endpoint index left: the arrival is counted as given up.
                    st.totals.flows_started += 1;
                    st.totals.flows_failed += 1;
                    st.totals.bytes_offered += size;
                    return;
                }
                let s = self.eps.len();
                for side in ["snd", "rcv"] {
                    // Slots are numbered within their source (`pool_slots` before this one).
                    let name = format!("{}.slot{}.{side}", st.totals.name, st.totals.pool_slots);
                    self.ep_rank.push(crate::event::rank("background", &name));
                    self.eps.push(Endpoint::Vacant);
                    self.ep_node.push(0);
                    self.ep_sched.push(None);
                    self.ep_due.push(None);
                    self.ep_slack.push(None);
                    self.ep_flow.push(u32::MAX);
                    self.ep_bg.push(bi as u32);
                    self.ep_mouse.push((0, 0));
                }
                st.totals.pool_slots += 1;
                s
            }
        };
        let isn = m.isn_rng.next_u64() as u32;
        let spec = &mut m.spec;
        spec.flow = flow;
        spec.me = s as u32;
        spec.peer = s as u32 + 1;
        spec.start = now;
        spec.bytes = Some(size);
        spec.isn = isn;
        // A copy of the fresh controller, in the retired connection's (validated when the
        // simulation was built: same name, parameters and knobs).
        let mut spare = m.spare_cc.take();
        let copied = spare.as_mut().is_some_and(|cc| cc.copy_state_from(&*m.cc0));
        let cc = match spare {
            Some(cc) if copied => cc,
            _ => {
                let init = initial_cc(&m.tcp, m.mtu);
                let Ok(cc) = tcplab_cc::build(&spec.cca_name, &spec.cca_params, init) else {
                    st.totals.flows_started += 1;
                    st.totals.flows_failed += 1;
                    return;
                };
                cc
            }
        };
        let rng = Rng::new(m.rx_rng.next_u64());
        let mut rx = TcpReceiver::new(
            flow,
            s as u32 + 1,
            s as u32,
            m.dst,
            m.src,
            m.rtcp.clone(),
            m.rmtu,
            rng,
        );
        rx.set_target(Some(size));
        if !slot_renewal_enabled() {
            // Tests: every connection built anew, to compare with renewed slots.
            self.eps[s] = Endpoint::Vacant;
            self.eps[s + 1] = Endpoint::Vacant;
            self.ep_slack[s] = None;
            self.ep_slack[s + 1] = None;
        }
        match &mut self.eps[s] {
            Endpoint::TcpSender(snd) => m.spare_cc = Some(snd.renew(spec, cc)),
            e => {
                *e = Endpoint::TcpSender(Box::new(TcpSender::new(spec.clone(), m.tcp.clone(), cc)))
            }
        }
        match &mut self.eps[s + 1] {
            Endpoint::TcpReceiver(r) => r.renew(rx),
            e => *e = Endpoint::TcpReceiver(Box::new(rx)),
        }
        self.ep_node[s] = m.src;
        self.ep_node[s + 1] = m.dst;
        self.ep_flow[s] = flow;
        self.ep_flow[s + 1] = flow;
        for (e, slack) in [(s, m.tcp.timer_slack), (s + 1, m.rtcp.timer_slack)] {
            if slack == 0 {
                self.ep_slack[e] = None;
                continue;
            }
            let t = TimerSlack::new(slack, Rng::new(m.slack_rng.next_u64()));
            match &mut self.ep_slack[e] {
                Some(b) => **b = t,
                none => *none = Some(Box::new(t)),
            }
        }
        self.ep_mouse[s] = (now, size);
        st.totals.flows_started += 1;
        st.totals.bytes_offered += size;
        self.reschedule(s);
        self.reschedule(s + 1);
    }

    /// After a background endpoint ran: retire its connection when the sender is finished
    /// (all data and the FIN acknowledged, SYN retries exhausted, or aborted after
    /// `max_data_retransmissions` timeouts), freeing the slot.
    #[inline]
    fn bg_after(&mut self, id: usize) {
        let s = match &self.eps[id] {
            Endpoint::TcpSender(_) => id,
            Endpoint::TcpReceiver(_) => id - 1,
            _ => return,
        };
        let Endpoint::TcpSender(snd) = &self.eps[s] else {
            return;
        };
        if !snd.is_done() {
            return;
        }
        let bi = self.ep_bg[s] as usize;
        let completed = snd.completed();
        self.harvest(bi, s, completed);
        // The finished endpoints stay for the next connection of the slot (`start_mouse`);
        // packets still in flight for them are discarded on arrival (`deliver`).
        self.ep_flow[s] = u32::MAX;
        self.ep_flow[s + 1] = u32::MAX;
        // Timer events already queued for the old connection find no schedule and are skipped.
        self.ep_sched[s] = None;
        self.ep_sched[s + 1] = None;
        self.ep_due[s] = None;
        self.ep_due[s + 1] = None;
        if let Some(m) = self.bg[bi].mice.as_mut() {
            m.free.push(s as u32);
        }
    }

    /// Add the connection in slot `s` to its source's totals (`done`: it finished; `Some(false)`
    /// it gave up; `None` still open at the end).
    fn harvest(&mut self, bi: usize, s: usize, done: bool) {
        let (start, _) = self.ep_mouse[s];
        let t = &mut self.bg[bi].totals;
        if let Endpoint::TcpSender(snd) = &self.eps[s] {
            let st = snd.stats;
            t.segments_sent += st.segments_sent;
            t.retransmits += st.retransmits;
            t.timeouts += st.timeouts;
            if snd.is_done() {
                if done {
                    t.flows_completed += 1;
                } else {
                    t.flows_failed += 1;
                }
            }
        }
        if let Endpoint::TcpReceiver(r) = &self.eps[s + 1] {
            t.bytes_delivered += r.bytes_delivered();
            if done {
                let end = r.completion_time(0).unwrap_or(self.now);
                t.completion_ns_sum += end.saturating_sub(start);
            }
        }
    }

    fn background_totals(&mut self) -> Vec<BgTotals> {
        // Connections still open: their bytes so far.
        for s in self.fg_eps..self.eps.len() {
            let open = self.ep_flow[s] != u32::MAX;
            if open && matches!(self.eps[s], Endpoint::TcpSender(_)) && self.ep_bg[s] != u32::MAX {
                let bi = self.ep_bg[s] as usize;
                self.harvest(bi, s, false);
            }
        }
        let mut out: Vec<BgTotals> = self.bg.iter().map(|b| b.totals.clone()).collect();
        for s in self.fg_eps..self.eps.len() {
            let bi = self.ep_bg[s] as usize;
            match &self.eps[s] {
                Endpoint::OnOff(u) => {
                    out[bi].udp_sent += u.cbr.sent;
                    out[bi].segments_sent += u.cbr.sent;
                }
                Endpoint::UdpSink(k) => {
                    out[bi].udp_received += k.received;
                    out[bi].bytes_delivered += k.bytes;
                }
                _ => {}
            }
        }
        out
    }
}

/// Build background source `bi`: its static endpoints (the arrival process of TCP mice, or the
/// on-off UDP pair) and its state.
fn build_background(
    cfg: &Config,
    bi: usize,
    b: &BackgroundCfg,
    net: &mut Network,
    eps: &mut Vec<Endpoint>,
    ep_node: &mut Vec<u16>,
    next_flow: &mut u32,
) -> Result<BgState, ConfigError> {
    let f = |k: &str| format!("background[{bi}].{k}");
    let src = host_id(net, &b.src, f("src"))?;
    let dst = host_id(net, &b.dst, f("dst"))?;
    if src == dst {
        return Err(err(f("dst"), "source and destination are the same host"));
    }
    if net.next_hop(src, dst) == NO_ROUTE || net.next_hop(dst, src) == NO_ROUTE {
        return Err(err(
            format!("background[{bi}]"),
            format!("no route between {:?} and {:?}", b.src, b.dst),
        ));
    }
    if b.load_bps == 0 {
        return Err(err(f("load_bps"), "must be > 0"));
    }
    let stop = b.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns);
    let totals = BgTotals {
        name: b.name.clone(),
        kind: match b.kind {
            FlowKind::Tcp => "tcp",
            FlowKind::Udp => "udp",
        },
        src: b.src.clone(),
        dst: b.dst.clone(),
        load_bps: b.load_bps,
        ..BgTotals::default()
    };
    match b.kind {
        FlowKind::Tcp => {
            let sizes = BoundedPareto {
                alpha: b.size_shape.unwrap_or(f64::NAN),
                min: b.size_min.map_or(f64::NAN, |x| x as f64),
                max: b.size_max.map_or(f64::NAN, |x| x as f64),
            };
            if !sizes.valid() {
                return Err(err(
                    f("size_shape"),
                    "TCP background needs size_shape > 0 and 0 < size_min < size_max",
                ));
            }
            let mtu = net.channels[net.next_hop(src, dst) as usize].mtu;
            let rmtu = net.channels[net.next_hop(dst, src) as usize].mtu;
            if mtu < 576 {
                return Err(err(
                    format!("background[{bi}]"),
                    format!("first-hop MTU {mtu} < 576"),
                ));
            }
            let params = cc_params(&b.cca);
            let cc0 = tcplab_cc::build(&b.cca.name, &params, initial_cc(&b.tcp, mtu))
                .map_err(|e| err(f("cca"), e.to_string()))?;
            if b.tcp.tso {
                net.count_frames_at(src);
            }
            let rtcp = b.receiver_tcp.clone().unwrap_or_else(|| b.tcp.clone());
            if let Some(cap) = rtcp.rx_capacity {
                net.add_ingress(dst, cap, rtcp.rx_ring, rmtu);
            }
            net.set_rx_coalesce(src, b.tcp.rx_coalesce, b.tcp.rx_ring)
                .map_err(|m| err(f("tcp.rx_coalesce"), m))?;
            net.set_rx_coalesce(dst, rtcp.rx_coalesce, rtcp.rx_ring)
                .map_err(|m| err(f("receiver_tcp.rx_coalesce"), m))?;
            // Poisson arrivals at rate λ = load / (8 E[S]) (module docs of crate::background).
            let mean_gap_ns = 8e9 * sizes.mean() / b.load_bps as f64;
            let mut arrival_rng = Rng::for_entity(cfg.seed, "bg-arrival", &b.name);
            let first = b
                .start_ns
                .saturating_add(to_ns(exponential(&mut arrival_rng, mean_gap_ns)));
            eps.push(Endpoint::BgArrivals(Box::new(MiceArrivals {
                source: bi as u32,
                next: first,
                stop,
                mean_gap_ns,
                sizes,
                arrival_rng,
                size_rng: Rng::for_entity(cfg.seed, "bg-size", &b.name),
            })));
            ep_node.push(src);
            Ok(BgState {
                totals,
                mice: Some(Box::new(MiceTemplate {
                    src,
                    dst,
                    mtu,
                    rmtu,
                    spec: FlowSpec {
                        flow: 0,
                        me: 0,
                        peer: 0,
                        src,
                        dst,
                        start: 0,
                        stop: None,
                        bytes: None,
                        mtu,
                        isn: 0,
                        cca_name: b.cca.name.clone(),
                        cca_params: params,
                        growth: growth_of(&b.tcp),
                        prelude: None,
                    },
                    cc0,
                    spare_cc: None,
                    tcp: b.tcp.clone(),
                    rtcp,
                    isn_rng: Rng::for_entity(cfg.seed, "bg-isn", &b.name),
                    rx_rng: Rng::for_entity(cfg.seed, "bg-receiver", &b.name),
                    slack_rng: Rng::for_entity(cfg.seed, "bg-timer-slack", &b.name),
                    free: Vec::new(),
                })),
            })
        }
        FlowKind::Udp => {
            let peak = b
                .peak_bps
                .filter(|&r| r > 0)
                .ok_or_else(|| err(f("peak_bps"), "on-off UDP background needs peak_bps > 0"))?;
            if b.load_bps >= peak {
                return Err(err(f("load_bps"), "must be less than peak_bps"));
            }
            let on = b
                .on_mean_ns
                .filter(|&x| x > 0)
                .ok_or_else(|| err(f("on_mean_ns"), "must be > 0"))? as f64;
            if b.payload_bytes == 0 || b.payload_bytes > 65507 {
                return Err(err(f("payload_bytes"), "must be 1..65507"));
            }
            let periods = match (
                b.periods.as_deref().unwrap_or("exponential"),
                b.period_shape,
            ) {
                ("exponential", _) => Periods::Exponential,
                ("pareto", Some(a)) if a > 1.0 && a.is_finite() => Periods::Pareto(a),
                ("pareto", _) => {
                    return Err(err(f("period_shape"), "Pareto periods need a shape > 1"))
                }
                (other, _) => {
                    return Err(err(
                        f("periods"),
                        format!("{other:?}: use 'exponential' or 'pareto'"),
                    ))
                }
            };
            // Mean load = peak · on / (on + off)  ⇒  off = on · (peak / load − 1).
            let off = on * (peak as f64 / b.load_bps as f64 - 1.0);
            let flow = *next_flow;
            *next_flow += 1;
            let me = eps.len() as u32;
            let cbr = UdpSource::new(
                flow,
                me + 1,
                src,
                dst,
                b.start_ns,
                stop,
                peak,
                b.payload_bytes,
            );
            eps.push(Endpoint::OnOff(Box::new(OnOffSource::new(
                cbr,
                periods,
                on,
                off,
                Rng::for_entity(cfg.seed, "bg-onoff", &b.name),
            ))));
            eps.push(Endpoint::UdpSink(UdpSink::default()));
            ep_node.push(src);
            ep_node.push(dst);
            Ok(BgState { totals, mice: None })
        }
    }
}

/// Parse, build, run: the whole trial.
pub fn run_json(config_json: &str) -> Result<RunResult, ConfigError> {
    let cfg = Config::from_json(config_json)?;
    let mut sim = Simulation::new(&cfg)?;
    sim.run();
    Ok(sim.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 100 Mbit/s, 40 ms dumbbell: hosts a, b (left), c, d (right); flow a → c, background
    /// b → d (`bg`, JSON of the background list).
    fn config(bg: &str, flow: bool, duration_s: u64) -> String {
        let link = |name: &str, a: &str, b: &str, rate: u64, delay: u64, q: u32| {
            format!(
                r#"{{"name":"{name}","a":"{a}","b":"{b}","ab":{{"rate_bps":{rate},"delay_ns":{delay},"queue":{{"limit_pkts":{q}}}}},"ba":{{"rate_bps":{rate},"delay_ns":{delay},"queue":{{"limit_pkts":{q}}}}}}}"#
            )
        };
        let links = [
            link("bn", "r1", "r2", 100_000_000, 19_000_000, 340),
            link("a", "a", "r1", 1_000_000_000, 500_000, 1000),
            link("b", "b", "r1", 1_000_000_000, 500_000, 1000),
            link("c", "c", "r2", 1_000_000_000, 500_000, 1000),
            link("d", "d", "r2", 1_000_000_000, 500_000, 1000),
        ]
        .join(",");
        let flows = if flow {
            r#"[{"name":"f","kind":"tcp","src":"a","dst":"c","cca":{"name":"reno"}}]"#
        } else {
            "[]"
        };
        format!(
            r#"{{"seed":7,"duration_ns":{},"nodes":[{{"name":"r1","kind":"router"}},{{"name":"r2","kind":"router"}},{{"name":"a","kind":"host"}},{{"name":"b","kind":"host"}},{{"name":"c","kind":"host"}},{{"name":"d","kind":"host"}}],"links":[{links}],"flows":{flows},"background":{bg}}}"#,
            duration_s * 1_000_000_000
        )
    }

    fn mice(load_bps: u64, stop_s: u64) -> String {
        format!(
            r#"[{{"name":"web","kind":"tcp","src":"b","dst":"d","load_bps":{load_bps},"stop_ns":{},"size_shape":1.2,"size_min":8000,"size_max":1000000,"cca":{{"name":"reno"}}}}]"#,
            stop_s * 1_000_000_000
        )
    }

    #[test]
    fn test_renewed_slots_run_as_endpoints_built_anew() {
        // A pool slot's finished sender and receiver renewed in place for the next connection
        // (controller copied from a fresh one, buffers kept) give the run of endpoints built
        // anew for every connection: every total, sample and counter. Congested (drops, so
        // recovery, SACK and out-of-order state are used and must not leak into the next
        // connection), with and without SACK, timer slack, RACK, undo and F-RTO.
        for (cca, tcp) in [
            ("reno", r#"{"sack":false}"#),
            (
                "cubic",
                r#"{"sack":true,"timer_slack":1000000,"rack":true}"#,
            ),
            ("bbr", r#"{"sack":true}"#),
            ("ctcp", r#"{"sack":true,"undo":true,"frto":true}"#),
        ] {
            let bg = format!(
                r#"[{{"name":"web","kind":"tcp","src":"b","dst":"d","load_bps":60000000,"size_shape":1.2,"size_min":4000,"size_max":3000000,"cca":{{"name":"{cca}"}},"tcp":{tcp}}}]"#
            );
            let cfg = config(&bg, true, 20);
            let renewed = run_json(&cfg).unwrap();
            NO_SLOT_RENEWAL.with(|c| c.set(true));
            let built = run_json(&cfg);
            NO_SLOT_RENEWAL.with(|c| c.set(false));
            let b = &renewed.background[0];
            assert!(b.flows_started > 10 * b.pool_slots, "{cca}: {b:?}");
            assert!(b.retransmits > 100, "{cca}: {b:?}");
            let json = |r: &RunResult| serde_json::to_string(r).unwrap();
            assert!(
                json(&renewed) == json(&built.unwrap()),
                "{cca}: runs differ"
            );
        }
    }

    /// The whole result of `cfg` (serialised) run with and without passing packets on, and the
    /// number of channels that pass on in the first run.
    fn passing_and_not(cfg: &serde_json::Value) -> (String, String, usize) {
        let cfg = Config::from_json(&cfg.to_string()).unwrap();
        let mut with = Simulation::new(&cfg).unwrap();
        let passing = with.net.channels.iter().filter(|c| c.pass_on).count();
        with.run();
        let mut without = Simulation::new_without_passing(&cfg).unwrap();
        assert!(without.net.channels.iter().all(|c| !c.pass_on));
        without.run();
        let json = |r: RunResult| serde_json::to_string(&r).unwrap();
        (json(with.finish()), json(without.finish()), passing)
    }

    fn ab_config(name: &str) -> serde_json::Value {
        let path = format!(
            "{}/../../benches/ab/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Every byte-identity configuration of benches/ab (one to four flows, UDP, background
    /// traffic, random loss), cut to 3 s and sampled every 50 ms: the same result, queue
    /// samples and event count included, whether packets are passed on or not.
    #[test]
    fn test_passing_on_changes_no_result_of_the_ab_configs() {
        let dir = format!("{}/../../benches/ab", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension()? == "json").then(|| p.file_stem()?.to_str().map(String::from))?
            })
            .collect();
        names.sort();
        assert_eq!(names.len(), 25);
        for name in &names {
            let mut cfg = ab_config(name);
            cfg["duration_ns"] = 3_000_000_000u64.into();
            cfg["interval_ns"] = 50_000_000u64.into();
            let (with, without, passing) = passing_and_not(&cfg);
            assert!(passing > 0, "{name}: no channel passes on");
            assert!(with == without, "{name}: results differ");
        }
    }

    /// Passing on into channels that drop, lose, jitter, tick, go down, change by schedule or
    /// are sampled (all links monitored, so a passed packet must wait for the next sample),
    /// with samples every 10 ms: the same result either way.
    #[test]
    fn test_passing_on_changes_no_result_with_link_features() {
        let base = ab_config("c02");
        type Edit = fn(&mut serde_json::Value);
        let edits: [(&str, Edit); 6] = [
            ("monitored", |c| {
                for l in c["links"].as_array_mut().unwrap() {
                    l["monitor"] = true.into();
                }
            }),
            ("drops and loss after the bottleneck", |c| {
                // The receiver's access link (r2 → receiver is its "ba") at half the
                // bottleneck's rate with a short queue, and lossy.
                let ba = &mut c["links"][2]["ba"];
                ba["rate_bps"] = 5_000_000u64.into();
                ba["queue"]["limit_pkts"] = 4u64.into();
                ba["loss"] = serde_json::json!({"model": "bernoulli", "p": 0.02});
            }),
            ("jitter and tick", |c| {
                c["links"][0]["ab"]["jitter"] =
                    serde_json::json!({"model": "uniform", "max_ns": 3_000_000});
                c["links"][2]["ba"]["jitter"] =
                    serde_json::json!({"model": "uniform", "max_ns": 500_000});
                c["links"][0]["ba"]["tick_ns"] = 1_000_000u64.into();
                c["links"][2]["ba"]["tick_ns"] = 1_000_000u64.into();
            }),
            ("outages", |c| {
                c["links"][2]["ba"]["outages"] =
                    serde_json::json!([[1_000_000_000u64, 1_200_000_000u64]]);
                c["links"][0]["ab"]["outages"] =
                    serde_json::json!([[2_000_000_000u64, 2_050_000_000u64]]);
            }),
            ("schedule", |c| {
                c["links"][2]["ba"]["schedule"] = serde_json::json!([
                    {"at_ns": 800_000_000u64, "rate_bps": 8_000_000u64, "delay_ns": 5_000_000u64},
                    {"at_ns": 1_500_000_000u64, "delay_ns": 10_000u64,
                     "loss": {"model": "bernoulli", "p": 0.05}},
                ]);
                c["links"][1]["ab"]["schedule"] = serde_json::json!([
                    {"at_ns": 1_000_000_000u64, "delay_ns": 20_000_000u64},
                    {"at_ns": 2_000_000_000u64, "delay_ns": 10_000u64},
                ]);
            }),
            ("everything monitored and lossy", |c| {
                for l in c["links"].as_array_mut().unwrap() {
                    l["monitor"] = true.into();
                    for d in ["ab", "ba"] {
                        l[d]["loss"] = serde_json::json!({"model": "bernoulli", "p": 0.005});
                        l[d]["jitter"] = serde_json::json!({"model": "uniform", "max_ns": 200_000});
                    }
                }
            }),
        ];
        for (what, edit) in edits {
            let mut cfg = base.clone();
            cfg["duration_ns"] = 3_000_000_000u64.into();
            cfg["interval_ns"] = 10_000_000u64.into();
            edit(&mut cfg);
            let (with, without, passing) = passing_and_not(&cfg);
            // Sender access link, bottleneck, receiver access link (ACKs), reverse bottleneck.
            assert_eq!(passing, 4, "{what}");
            assert!(with == without, "{what}: results differ");
        }
    }

    /// With captures configured nothing is passed on (they record packets in offer order).
    #[test]
    fn test_no_passing_on_with_captures() {
        let mut cfg = ab_config("c01");
        cfg["capture"] = serde_json::json!([{"name": "cap", "channels": ["bottleneck.ab"]}]);
        let cfg = Config::from_json(&cfg.to_string()).unwrap();
        let sim = Simulation::new(&cfg).unwrap();
        assert!(sim.net.channels.iter().all(|c| !c.pass_on));
    }

    #[test]
    fn test_mice_pool_reuses_slots() {
        let r = run_json(&config(&mice(20_000_000, 50), false, 60)).unwrap();
        let b = &r.background[0];
        // λ = 20 Mbit/s / (8 · E[S]); E[S] ≈ 36 kB here, so ≈ 70 arrivals/s, 3500 in 50 s.
        assert!(b.flows_started > 2000, "{b:?}");
        // Every connection finishes in the 10 s after arrivals stop (uncongested path).
        assert_eq!(b.flows_completed, b.flows_started, "{b:?}");
        assert_eq!(b.bytes_delivered, b.bytes_offered, "{b:?}");
        // Few connections are open at once (λ × completion time ≈ 70/s × ~0.2 s): the pool
        // stays small instead of growing with every arrival.
        assert!(b.pool_slots < 200, "{b:?}");
        assert!(
            b.completion_ns_sum / b.flows_completed > 40_000_000,
            "{b:?}"
        );
    }

    #[test]
    fn test_background_leaves_flow_streams_alone() {
        // The foreground flow alone and with a background source whose traffic never starts
        // (start after the end): identical results, so adding a source does not move the
        // flow's random streams or event order.
        let alone = run_json(&config("[]", true, 5)).unwrap();
        let idle = r#"[{"name":"web","kind":"tcp","src":"b","dst":"d","load_bps":1000000,"start_ns":9000000000,"size_shape":1.2,"size_min":8000,"size_max":1000000}]"#;
        let with = run_json(&config(idle, true, 5)).unwrap();
        assert_eq!(
            alone.flows[0].bytes_delivered,
            with.flows[0].bytes_delivered
        );
        assert_eq!(alone.series.cwnd_bytes, with.series.cwnd_bytes);
        // And real background takes capacity from it.
        let busy = run_json(&config(&mice(60_000_000, 5), true, 5)).unwrap();
        assert!(
            busy.flows[0].bytes_delivered < alone.flows[0].bytes_delivered,
            "{} vs {}",
            busy.flows[0].bytes_delivered,
            alone.flows[0].bytes_delivered
        );
    }

    #[test]
    fn test_onoff_background_delivers_its_load() {
        let bg = r#"[{"name":"u","kind":"udp","src":"b","dst":"d","load_bps":10000000,"peak_bps":40000000,"on_mean_ns":50000000,"payload_bytes":1250}]"#;
        let r = run_json(&config(bg, false, 200)).unwrap();
        let b = &r.background[0];
        let rate = b.bytes_delivered as f64 * 8.0 / 200.0;
        // Exponential periods, on 50 ms, off 150 ms: a+b = 26.7/s, p = 0.25; the on fraction's
        // time average over 200 s has sd sqrt(2p(1−p)/((a+b)T)) = 0.0084, 3.4 % of p. 4 sd.
        assert!((rate - 1e7).abs() < 0.135 * 1e7, "{rate} {b:?}");
        // None lost (peak < bottleneck rate): all but those in flight at the end (one-way
        // 20 ms at the 40 Mbit/s peak = 80 datagrams of 1250 B) arrived.
        assert!(b.udp_sent - b.udp_received <= 80, "{b:?}");
    }
}
