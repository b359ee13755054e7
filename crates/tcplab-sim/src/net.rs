//! Network model: nodes joined by full-duplex point-to-point links; each link direction is a
//! [`Channel`] with a drop-tail output queue, a serialisation rate, a propagation delay and a loss
//! model. Routing is shortest-hop, computed once from the topology (no dumbbell is wired in here).
//!
//! ## The channel model
//! A channel is the shared link model of both engines (src/link.rs, [`Link`]: a FIFO server at
//! `rate_bps` with a drop-tail queue, a propagation delay, a loss model and an optional schedule of
//! changes), plus the packets on the wire. The queue is *virtual* (no event when a packet leaves
//! it); only arrivals at the far end are events, and because a channel is FIFO they occur in
//! order, so the event queue holds just the next arrival of each channel: the first packet
//! not yet arrived in the link's one FIFO of admitted packets (src/link.rs, "One FIFO")
//! (docs/design.md §2). Outages (periods in which everything offered is lost) are the
//! simulator's own.

use crate::config::{err, ChanCfg, Config, ConfigError, JitterCfg, LossCfg, NodeKind};
use crate::event::{Class, EventQueue, Target};
use crate::host::RxCoalesce;
pub use crate::link::Link;
use crate::link::{check_schedule, Admit, Jitter};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{ps_to_ns_ceil, Nanos};
use std::collections::VecDeque;

/// The loss model is the link model's (src/link.rs), re-exported where it always was.
pub use crate::link::LossModel;

/// Cumulative counters of a channel (the link model's).
pub type ChannelStats = crate::link::LinkStats;

/// Handle of a packet in the [`PacketPool`].
pub type PacketId = u32;

/// Storage of the packets on the network. A packet is written once when its endpoint sends it
/// and read once when it reaches its destination endpoint; links, queues and the event loop move
/// only its 4-byte [`PacketId`]. Slots are reused LIFO, so the pool grows only to the largest
/// number of packets in the network at once (no per-packet allocation in the steady state).
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    /// Store `p`; the handle stays valid until [`PacketPool::release`].
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.alloc_copy(&p)
    }

    /// [`PacketPool::alloc`] of a copy of `*p` (copied straight into its slot).
    #[inline]
    pub fn alloc_copy(&mut self, p: &Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = *p;
                // A handler sending a burst (two segments per ACK, or a TSO frame) takes the
                // slots below on the stack, freed longer ago: in a large pool, start loading
                // the next (a hint; the slot writes were 15 % of `with_endpoint`'s samples on
                // a large-window run, half that with it).
                if self.slots.len() as u64 >= 2 * crate::cache::FAR {
                    if let Some(&next) = self.free.last() {
                        self.prefetch(next);
                    }
                }
                id
            }
            None => {
                self.slots.push(*p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    /// Return a slot (its packet was delivered, dropped or lost).
    #[inline]
    pub fn release(&mut self, id: PacketId) {
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    /// Start loading packet `id` into the cache; a hint only (nothing changes). The event loop
    /// calls it for the packet that arrives next on a channel when it takes the current one:
    /// on a large-window path a packet waits a round trip in the pool, leaves the caches, and
    /// its load at the arrival was the costliest single instruction of the run (`perf`).
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::cache::prefetch(&p.dst);
            crate::cache::prefetch(&p.tcp.ts_val);
        }
    }

    /// Packets currently stored.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// What a channel keeps with each packet in its link's FIFO: the packet's handle. (Until
/// 2026-11-27 also the sequence number of its arrival event; the event order now needs none,
/// src/event.rs.)
#[derive(Clone, Copy, Debug, Default)]
pub struct Wire {
    pkt: PacketId,
}

/// One direction of a link: the shared link model ([`Link`]: queue, serialisation, delay, loss,
/// schedule, and — retaining — the packets on the wire in the same FIFO) plus what only the
/// simulator has: the event of the next arrival, and outages.
pub struct Channel {
    pub name: String,
    pub link: usize,
    /// "ab" or "ba".
    pub dir: &'static str,
    pub from: u16,
    pub to: u16,
    /// Configured rate and one-way delay (at time zero; a schedule may change them later, see
    /// [`Link::rate_bps`]).
    pub rate_bps: u64,
    pub delay_ns: Nanos,
    pub mtu: u32,
    pub monitor: bool,
    /// Rank of this link direction's arrival events among simultaneous arrivals (src/event.rs,
    /// from its name).
    pub rank: u64,
    pub model: Link<Wire>,
    outages: Vec<(u64, u64)>,
    /// The head packet's departure was decided by the thread (its event is now that time).
    pub head_served: bool,
    /// [`crate::event::THREAD_CHANNEL_FLAG`] when the emulator thread (src/emuthread.rs) serves
    /// this channel: its head packet leaves when the thread sends it, not when it falls due;
    /// else 0 (see [`Channel::arrival_target`]).
    thread_flag: u32,
    /// Packets that reach the far end (a router) are handed to their next channel when they are
    /// admitted here, without an arrival event, when the timing allows (see
    /// [`Channel::offer`] and src/sim.rs, "Passing packets on"). Set by
    /// [`Network::plan_passing`].
    pub pass_on: bool,
    /// (`pass_on`) Some next channel of this one is monitored: a packet is passed on only if
    /// it reaches it by the next queue sample.
    pub pass_sampled: bool,
    /// The one channel whose packets may be admitted here ahead of their time (a channel with
    /// `pass_on` that feeds this one, and nothing else does), or [`NO_ROUTE`] when none.
    pub feeder: u32,
    /// (`pass_on`) The next channel of every packet of this one when there is only one (its
    /// `feeder` is this channel), else [`NO_ROUTE`]: passing on then looks the route up.
    pub pass_to: u32,
}

/// Outcome of offering a packet to a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Queued,
    Dropped,
    Lost,
    /// Admitted and already taken off the wire (a channel with [`Channel::pass_on`] that had
    /// nothing on the wire): the packet reaches the far end at this time, where the caller
    /// hands it to its next channel at once, instead of at an arrival event then.
    Passed(Nanos),
}

/// No passing on: [`Channel::offer`]'s `pass_by` for callers that never pass packets on.
pub const NO_PASS: [Nanos; 2] = [0, 0];

impl Channel {
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        link: usize,
        dir: &'static str,
        from: u16,
        to: u16,
        mtu: u32,
        monitor: bool,
        cfg: &ChanCfg,
        rate_cap: Option<u64>,
        ring: Option<u32>,
        rng: Rng,
        jitter_rng: Rng,
    ) -> Channel {
        let rate = rate_cap.map_or(cfg.rate_bps, |c| c.min(cfg.rate_bps));
        let model = Link::<Wire>::new(
            rate,
            cfg.delay_ns,
            ring.or(cfg.queue.limit_pkts),
            if ring.is_some() {
                None
            } else {
                cfg.queue.limit_bytes
            },
            LossModel::new(cfg.loss.clone(), rng),
            256,
        )
        .retaining()
        .with_schedule(cfg.schedule.clone(), Some(0))
        .with_jitter(Jitter::new(cfg.jitter.clone(), jitter_rng))
        .with_tick(cfg.tick_ns)
        .with_owner_checks(!cfg.outages.is_empty());
        Channel {
            name,
            link,
            dir,
            from,
            to,
            rate_bps: rate,
            delay_ns: cfg.delay_ns,
            mtu,
            monitor,
            rank: 0,
            model,
            outages: cfg.outages.clone(),
            head_served: false,
            thread_flag: 0,
            pass_on: false,
            pass_sampled: false,
            feeder: NO_ROUTE,
            pass_to: NO_ROUTE,
        }
    }

    /// Cumulative counters.
    #[inline]
    pub fn stats(&self) -> &ChannelStats {
        &self.model.stats
    }

    /// Packets waiting (not counting the one being serialised) at `now`.
    pub fn queue_pkts(&mut self, now: Nanos) -> u32 {
        self.model.queue_pkts(now)
    }

    /// Bytes waiting (not counting the one being serialised) at `now`.
    pub fn queue_bytes(&mut self, now: Nanos) -> u64 {
        self.model.queue_bytes(now)
    }

    /// How many more packets the queue accepts now (`u32::MAX` when unlimited in packets).
    #[inline]
    pub fn room(&mut self, now: Nanos) -> u32 {
        self.model.room(now)
    }

    /// When a packet offered at `now` would start serialisation.
    #[inline]
    pub fn start_time(&self, now: Nanos) -> Nanos {
        ps_to_ns_ceil(self.model.start_time_ps(now))
    }

    /// When the packet now being serialised finishes (a slot frees up then).
    pub fn next_departure(&self) -> Option<Nanos> {
        self.model.next_finish_ps().map(ps_to_ns_ceil)
    }

    /// [`Channel::next_departure`] in picoseconds (not rounded).
    #[inline]
    pub fn next_departure_ps(&self) -> Option<u64> {
        self.model.next_finish_ps()
    }

    /// Offer packet `pkt` (of `wire_len` bytes) at `now`. Returns whether it was queued, dropped
    /// (queue full) or lost; only a queued packet is kept (the caller releases the others).
    /// When nothing was on the wire, the head arrival event is scheduled — or, on a channel
    /// with [`Channel::pass_on`], the packet is taken off the wire at once and
    /// [`Offer::Passed`] returned when it arrives no later than `pass_by[pass_sampled]` (the
    /// end of the run, or the next queue sample when a next channel is monitored; src/sim.rs,
    /// "Passing packets on"). `frame_cont`: the
    /// packet continues a TSO frame and this is its sending host's queue (counted only on the
    /// egress of a host with a TSO sender, [`Network::count_frames_at`]; [`Link`]'s docs).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn offer(
        &mut self,
        id: u32,
        now: Nanos,
        pkt: PacketId,
        wire_len: u32,
        frame_cont: bool,
        ev: &mut EventQueue,
        pass_by: &[Nanos; 2],
    ) -> Offer {
        // A channel with outages is never plain (`Link::with_owner_checks`): the plain path
        // skips the look.
        let down = !self.model.is_plain()
            && !self.outages.is_empty()
            && self.outages.iter().any(|&(a, b)| now >= a && now < b);
        let idle = !self.model.on_wire();
        let tag = Wire { pkt };
        match self
            .model
            .offer_frame_tagged(now, wire_len, true, down, frame_cont, tag)
        {
            Admit::Dropped => Offer::Dropped,
            Admit::Lost { .. } => Offer::Lost,
            Admit::Queued { arrival_ns, .. } => {
                if idle {
                    if self.pass_on && arrival_ns <= pass_by[self.pass_sampled as usize] {
                        self.model.pass_last();
                        return Offer::Passed(arrival_ns);
                    }
                    ev.schedule(
                        arrival_ns,
                        Class::Arrival,
                        self.rank,
                        self.arrival_target(id),
                    );
                }
                Offer::Queued
            }
        }
    }

    /// Take the head packet, whose arrival is the queue's next event (seen with
    /// [`EventQueue::peek`]): that event is removed and the next head's arrival scheduled.
    /// Also returns [`Channel::is_far`] after the take, computed before the event queue is
    /// written (the cursors are still in registers then; afterwards they were loaded again).
    #[inline]
    pub fn take_arrival(&mut self, id: u32, ev: &mut EventQueue) -> (PacketId, bool) {
        let head = self.model.take_arrival();
        let far = self.is_far();
        match self.model.next_arrival() {
            Some((arrival, _)) => {
                ev.replace_next(arrival, Class::Arrival, self.rank, Target::Channel(id))
            }
            None => ev.remove_next(),
        }
        (head.pkt, far)
    }

    /// The target of this channel's arrival events: [`Target::ThreadChannel`] on a channel
    /// served by the emulator thread, else [`Target::Channel`] (one `or` with the flag kept in
    /// the channel, no branch: this is on every packet's path).
    #[inline(always)]
    fn arrival_target(&self, id: u32) -> Target {
        Target::channel_arrival(id, self.thread_flag)
    }

    /// Take the head packet without touching the event queue (the emulator thread's channels,
    /// whose events the caller schedules; src/sim.rs `thread_arrival`).
    pub fn take_head(&mut self) -> PacketId {
        self.model.take_arrival().pkt
    }

    /// Many packets on the wire ([`crate::cache::FAR`]): their ring entries and pool slots were
    /// written a round trip ago and have left the caches.
    #[inline]
    pub fn is_far(&self) -> bool {
        self.model.on_wire_len() >= crate::cache::FAR
    }

    /// Start loading what the next arrivals read: the packet arriving next and the ring entry
    /// a few arrivals ahead (hints only; out of line so that the arrival path of the short links
    /// keeps its code).
    #[inline(never)]
    pub fn prefetch_arrivals(&self, pool: &PacketPool) {
        let next = self.model.prefetch_ahead(0);
        pool.prefetch(next.pkt);
        self.model.prefetch_ahead(4);
    }
}

/// A node: host or router.
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Rank of this host's receive interrupts among simultaneous ones (src/event.rs).
    pub rank: u64,
    /// Channel leaving this node towards each destination node (index = node id), or u32::MAX.
    pub route: Vec<u32>,
    /// The channel a host sends on (hosts have one link in the topologies built so far; with
    /// several, routing picks per destination and this is the first).
    pub egress: Option<u32>,
    /// Receive processing of a host with limited capacity: a zero-delay channel from the host to
    /// itself that packets addressed to the host pass before delivery (see `add_ingress`).
    pub ingress: Option<u32>,
    /// Receive interrupt coalescing of a host (src/host.rs): packets for the host's stack wait
    /// here, after `ingress`, for the next interrupt (see `set_rx_coalesce`).
    pub rx_irq: Option<Box<RxCoalesce>>,
}

/// Nodes, channels and routes, and the packets on the way.
pub struct Network {
    pub nodes: Vec<Node>,
    pub channels: Vec<Channel>,
    pub pool: PacketPool,
    /// Every node's `route`, one after the other (`from * nodes + to`): one lookup per hop.
    routes: Vec<u32>,
    /// The emulator thread serving the channels with a thread flag, if configured.
    pub thread: Option<crate::emuthread::EmuThread>,
}

pub const NO_ROUTE: u32 = u32::MAX;

impl Network {
    pub fn build(cfg: &Config) -> Result<Network, ConfigError> {
        let mut nodes: Vec<Node> = Vec::with_capacity(cfg.nodes.len());
        for (i, n) in cfg.nodes.iter().enumerate() {
            if nodes.iter().any(|m| m.name == n.name) {
                return Err(err(
                    format!("nodes[{i}].name"),
                    format!("duplicate node {:?}", n.name),
                ));
            }
            nodes.push(Node {
                name: n.name.clone(),
                kind: n.kind,
                rank: crate::event::rank("host", &n.name),
                route: Vec::new(),
                egress: None,
                ingress: None,
                rx_irq: None,
            });
        }
        if nodes.len() > u16::MAX as usize {
            return Err(err("nodes", "at most 65535 nodes"));
        }
        let find = |name: &str, field: String| -> Result<u16, ConfigError> {
            cfg.nodes
                .iter()
                .position(|n| n.name == name)
                .map(|p| p as u16)
                .ok_or_else(|| err(field, format!("unknown node {name:?}")))
        };
        let mut channels = Vec::with_capacity(cfg.links.len() * 2);
        for (li, l) in cfg.links.iter().enumerate() {
            let a = find(&l.a, format!("links[{li}].a"))?;
            let b = find(&l.b, format!("links[{li}].b"))?;
            for (dir, from, to, c) in [("ab", a, b, &l.ab), ("ba", b, a, &l.ba)] {
                if c.rate_bps == 0 {
                    return Err(err(format!("links[{li}].{dir}.rate_bps"), "must be > 0"));
                }
                check_schedule(&c.schedule, false)
                    .map_err(|(f, m)| err(format!("links[{li}].{dir}.{f}"), m))?;
                let losses = std::iter::once((String::new(), &c.loss)).chain(
                    c.schedule.iter().enumerate().filter_map(|(k, st)| {
                        st.loss.as_ref().map(|l| (format!("schedule[{k}]."), l))
                    }),
                );
                for (at, loss) in losses {
                    loss.check()
                        .map_err(|(f, m)| err(format!("links[{li}].{dir}.{at}{f}"), m))?;
                }
                if c.queue.kind != "droptail" {
                    return Err(err(
                        format!("links[{li}].{dir}.queue.kind"),
                        format!("unknown queue {:?}; allowed: droptail", c.queue.kind),
                    ));
                }
                let node_cfg = &cfg.nodes[from as usize];
                let (cap, ring) = if node_cfg.kind == NodeKind::Host {
                    (node_cfg.nic_rate_bps, node_cfg.nic_ring_pkts)
                } else {
                    (None, None)
                };
                c.check_timing()
                    .map_err(|(f, m)| err(format!("links[{li}].{dir}.{f}"), m))?;
                let rng = Rng::for_entity(cfg.seed, "loss", &format!("{}.{dir}", l.name));
                let jitter_rng = Rng::for_entity(cfg.seed, "jitter", &format!("{}.{dir}", l.name));
                channels.push(Channel::new(
                    format!("{}.{dir}", l.name),
                    li,
                    dir,
                    from,
                    to,
                    l.mtu,
                    l.monitor,
                    c,
                    cap,
                    ring,
                    rng,
                    jitter_rng,
                ));
            }
        }
        let mut thread = None;
        if let Some(t) = &cfg.emulator_thread {
            for (f, d) in [("wakeup", &t.wakeup), ("send_gap", &t.send_gap)] {
                d.check().map_err(|(g, m)| {
                    err(
                        format!("emulator_thread.{f}{}", g.trim_start_matches("jitter")),
                        m,
                    )
                })?;
            }
            for (i, name) in t.channels.iter().enumerate() {
                let field = format!("emulator_thread.channels[{i}]");
                let c = channels
                    .iter_mut()
                    .find(|c: &&mut Channel| &c.name == name)
                    .ok_or_else(|| {
                        err(field.clone(), format!("unknown link direction {name:?}"))
                    })?;
                let li = c.link;
                let own = if c.dir == "ab" {
                    &cfg.links[li].ab
                } else {
                    &cfg.links[li].ba
                };
                if own.jitter != JitterCfg::None || own.tick_ns > 0 {
                    return Err(err(
                        field,
                        format!(
                            "{name:?} has jitter or a tick of its own; a direction served by the \
                             emulator thread takes its timing from the thread"
                        ),
                    ));
                }
                c.thread_flag = crate::event::THREAD_CHANNEL_FLAG;
            }
            thread = Some(crate::emuthread::EmuThread::new(
                t.wakeup.clone(),
                t.send_gap.clone(),
                Rng::for_entity(cfg.seed, "jitter", "emulator-thread.wakeup"),
                Rng::for_entity(cfg.seed, "jitter", "emulator-thread.send_gap"),
            ));
        }
        let mut net = Network {
            nodes,
            channels,
            pool: PacketPool::default(),
            routes: Vec::new(),
            thread,
        };
        for c in &mut net.channels {
            c.rank = crate::event::rank("channel", &c.name);
        }
        net.compute_routes();
        Ok(net)
    }

    /// Shortest-hop routes by breadth-first search from every destination; ties go to the
    /// channel declared first, so routing is deterministic.
    fn compute_routes(&mut self) {
        let n = self.nodes.len();
        for node in &mut self.nodes {
            node.route = vec![NO_ROUTE; n];
        }
        for dst in 0..n {
            let mut dist = vec![usize::MAX; n];
            dist[dst] = 0;
            let mut frontier = VecDeque::from([dst]);
            while let Some(v) = frontier.pop_front() {
                for (ci, c) in self.channels.iter().enumerate() {
                    // Channel u→v lets u reach dst through v.
                    if c.to as usize == v {
                        let u = c.from as usize;
                        if dist[u] == usize::MAX {
                            dist[u] = dist[v] + 1;
                            self.nodes[u].route[dst] = ci as u32;
                            frontier.push_back(u);
                        }
                    }
                }
            }
        }
        self.routes = self
            .nodes
            .iter()
            .flat_map(|n| n.route.iter().copied())
            .collect();
        for (ci, c) in self.channels.iter().enumerate() {
            let node = &mut self.nodes[c.from as usize];
            if node.egress.is_none() {
                node.egress = Some(ci as u32);
            }
        }
    }

    /// Host `node` has a TSO sender: its egress queues hold a TSO frame whole and count it once
    /// ([`Link::count_frames`]; src/link.rs module docs). Other links keep the plain count.
    pub fn count_frames_at(&mut self, node: u16) {
        for c in self.channels.iter_mut().filter(|c| c.from == node) {
            c.model.count_frames();
        }
    }

    /// Give host `node` a receive-processing stage: packets addressed to it queue in a ring of
    /// `ring` packets and are taken off at `rate_bps`; overflow is dropped before the transport
    /// sees it (an end host slower than its link, e.g. the Windows XP/Vista clients of Iwanaga
    /// et al.; stacks-and-ccas.md B.4). Idempotent: the first call's parameters stay.
    pub fn add_ingress(&mut self, node: u16, rate_bps: u64, ring: u32, mtu: u32) {
        if self.nodes[node as usize].ingress.is_some() || rate_bps == 0 {
            return;
        }
        let cfg = ChanCfg {
            rate_bps,
            delay_ns: 0,
            queue: crate::config::QueueCfg {
                kind: "droptail".into(),
                limit_pkts: Some(ring.max(1)),
                limit_bytes: None,
            },
            loss: LossCfg::None,
            outages: Vec::new(),
            schedule: Vec::new(),
            jitter: JitterCfg::None,
            tick_ns: 0,
        };
        let name = format!("{}.rx", self.nodes[node as usize].name);
        let rank = crate::event::rank("channel", &name);
        let mut ch = Channel::new(
            name,
            usize::MAX,
            "rx",
            node,
            node,
            mtu,
            false,
            &cfg,
            None,
            None,
            Rng::new(0),
            Rng::new(0),
        );
        ch.rank = rank;
        self.channels.push(ch);
        self.nodes[node as usize].ingress = Some(self.channels.len() as u32 - 1);
    }

    /// Give host `node` receive interrupt coalescing with minimum interval `interval` and a
    /// receive ring of `ring` packets (src/host.rs). `interval` 0 leaves the host as it is. The
    /// first setting stays; a different interval later is an error (one NIC, one setting), whose
    /// message the caller prefixes with the field that asked for it.
    pub fn set_rx_coalesce(&mut self, node: u16, interval: u64, ring: u32) -> Result<(), String> {
        if interval == 0 {
            return Ok(());
        }
        let n = &mut self.nodes[node as usize];
        match &n.rx_irq {
            Some(c) if c.interval() != interval => Err(format!(
                "host {:?} already has rx_coalesce = {} ns from another flow; one host has one \
                 NIC setting: give every flow on it the same value",
                n.name,
                c.interval()
            )),
            Some(_) => Ok(()),
            None => {
                n.rx_irq = Some(Box::new(RxCoalesce::new(&n.name, interval, ring)));
                Ok(())
            }
        }
    }

    /// Decide which channels pass their packets on at admission (src/sim.rs, "Passing packets
    /// on"), given every (source host, destination host) pair that packets travel between.
    /// Channel A passes on when its far end is a router, neither it nor any channel after it
    /// is served by the emulator thread, and every channel B that a packet of A takes next is
    /// fed by A alone (B's `feeder` is then A); `pass_sampled` when some such B is monitored.
    pub fn plan_passing(&mut self, pairs: &[(u16, u16)]) {
        let n = self.channels.len();
        let mut next: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut feeders: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(src, dst) in pairs {
            let (mut node, mut prev) = (src, NO_ROUTE);
            // A route is loop-free: at most one visit per channel.
            for _ in 0..n {
                if node == dst {
                    break;
                }
                let ch = self.next_hop(node, dst);
                if ch == NO_ROUTE {
                    break;
                }
                if prev != NO_ROUTE {
                    if !next[prev as usize].contains(&ch) {
                        next[prev as usize].push(ch);
                    }
                    if !feeders[ch as usize].contains(&prev) {
                        feeders[ch as usize].push(prev);
                    }
                }
                prev = ch;
                node = self.channels[ch as usize].to;
            }
        }
        for (a, succ) in next.iter().enumerate() {
            let c = &self.channels[a];
            let ok = !succ.is_empty()
                && self.nodes[c.to as usize].kind == NodeKind::Router
                && c.thread_flag == 0
                && succ.iter().all(|&b| {
                    feeders[b as usize] == [a as u32] && self.channels[b as usize].thread_flag == 0
                });
            if !ok {
                continue;
            }
            let sampled = succ.iter().any(|&b| self.channels[b as usize].monitor);
            for &b in succ {
                self.channels[b as usize].feeder = a as u32;
            }
            let c = &mut self.channels[a];
            c.pass_on = true;
            c.pass_sampled = sampled;
            c.pass_to = if succ.len() == 1 { succ[0] } else { NO_ROUTE };
        }
    }

    /// The channel `from` uses to reach `to`.
    #[inline]
    pub fn next_hop(&self, from: u16, to: u16) -> u32 {
        debug_assert_eq!(
            self.routes[from as usize * self.nodes.len() + to as usize],
            self.nodes[from as usize].route[to as usize]
        );
        self.routes[from as usize * self.nodes.len() + to as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::QueueCfg;

    fn chan(rate: u64, limit: Option<u32>, loss: LossCfg) -> Channel {
        let cfg = ChanCfg {
            rate_bps: rate,
            delay_ns: 1_000_000,
            queue: QueueCfg {
                kind: "droptail".into(),
                limit_pkts: limit,
                limit_bytes: None,
            },
            loss,
            outages: Vec::new(),
            schedule: Vec::new(),
            jitter: JitterCfg::None,
            tick_ns: 0,
        };
        Channel::new(
            "t".into(),
            0,
            "ab",
            0,
            1,
            1500,
            true,
            &cfg,
            None,
            None,
            Rng::new(1),
            Rng::new(2),
        )
    }

    /// A channel that passes on hands over a packet admitted with nothing on the wire when it
    /// arrives by `pass_by` (and schedules no event); one arriving later, or behind another on
    /// the wire, gets its arrival event as before.
    #[test]
    fn test_offer_passes_on_only_an_idle_channels_packet_in_time() {
        let mut ev = EventQueue::new();
        let mut c = chan(12_000_000, None, LossCfg::None); // 1500 B = 1 ms, delay 1 ms
        c.pass_on = true;
        let by = [2_000_000, 0];
        assert_eq!(
            c.offer(0, 0, 0, 1500, false, &mut ev, &by),
            Offer::Passed(2_000_000)
        );
        assert_eq!(ev.len(), 0);
        assert!(!c.model.on_wire());
        // Arrives at 3 ms, after `pass_by`: on the wire, with its event.
        assert_eq!(c.offer(0, 0, 1, 1500, false, &mut ev, &by), Offer::Queued);
        assert_eq!(ev.peek().unwrap().time(), 3_000_000);
        // Behind it on the wire: queued even with room in time.
        let late = [u64::MAX, 0];
        assert_eq!(c.offer(0, 0, 2, 1500, false, &mut ev, &late), Offer::Queued);
        assert_eq!(ev.len(), 1);
        // The sampled limit applies to a channel with `pass_sampled`.
        let mut d = chan(12_000_000, None, LossCfg::None);
        (d.pass_on, d.pass_sampled) = (true, true);
        assert_eq!(
            d.offer(0, 0, 0, 1500, false, &mut ev, &[u64::MAX, 1_999_999]),
            Offer::Queued
        );
    }

    /// Two flows into one bottleneck: the access links that share it do not pass on, the
    /// bottleneck (whose next channels it feeds alone) does, both ways, looking up which of
    /// its two next channels a packet takes; nothing passes on into a host. One flow: every
    /// channel into a router passes on to its only next channel.
    #[test]
    fn test_plan_passing_needs_a_sole_feeder() {
        let link = |name: &str, a: &str, b: &str| {
            format!(
                r#"{{"name":"{name}","a":"{a}","b":"{b}","ab":{{"rate_bps":1000000,"delay_ns":1}},"ba":{{"rate_bps":1000000,"delay_ns":1}}}}"#
            )
        };
        let links = [
            link("bn", "r1", "r2"),
            link("a1", "s1", "r1"),
            link("a2", "s2", "r1"),
            link("b1", "d1", "r2"),
            link("b2", "d2", "r2"),
        ]
        .join(",");
        let nodes = ["r1", "r2", "s1", "s2", "d1", "d2"]
            .iter()
            .map(|n| {
                let kind = if n.starts_with('r') { "router" } else { "host" };
                format!(r#"{{"name":"{n}","kind":"{kind}"}}"#)
            })
            .collect::<Vec<_>>()
            .join(",");
        let cfg = Config::from_json(&format!(
            r#"{{"seed":1,"duration_ns":1,"nodes":[{nodes}],"links":[{links}],"flows":[]}}"#
        ))
        .unwrap();
        let passing = |pairs: &[(u16, u16)]| {
            let mut net = Network::build(&cfg).unwrap();
            net.plan_passing(pairs);
            let on: Vec<String> = net
                .channels
                .iter()
                .filter(|c| c.pass_on)
                .map(|c| match c.pass_to {
                    NO_ROUTE => c.name.clone(),
                    b => format!("{} > {}", c.name, net.channels[b as usize].name),
                })
                .collect();
            let fed: Vec<String> = net
                .channels
                .iter()
                .filter(|c| c.feeder != NO_ROUTE)
                .map(|c| format!("{} > {}", net.channels[c.feeder as usize].name, c.name))
                .collect();
            (on, fed)
        };
        // Nodes: r1 0, r2 1, s1 2, s2 3, d1 4, d2 5.
        let one = [(2, 4), (4, 2)];
        let (on, fed) = passing(&one);
        // One next channel each: named (`pass_to`).
        assert_eq!(
            on,
            [
                "bn.ab > b1.ba",
                "bn.ba > a1.ba",
                "a1.ab > bn.ab",
                "b1.ab > bn.ba"
            ]
        );
        assert_eq!(
            fed,
            [
                "a1.ab > bn.ab",
                "b1.ab > bn.ba",
                "bn.ba > a1.ba",
                "bn.ab > b1.ba"
            ]
        );
        let two = [(2, 4), (4, 2), (3, 5), (5, 3)];
        let (on, fed) = passing(&two);
        assert_eq!(on, ["bn.ab", "bn.ba"]);
        assert_eq!(
            fed,
            [
                "bn.ba > a1.ba",
                "bn.ba > a2.ba",
                "bn.ab > b1.ba",
                "bn.ab > b2.ba"
            ]
        );
        // Traffic between the two right-hand hosts shares their access links with the
        // bottleneck's: it no longer feeds them alone.
        let (on, _) = passing(&[(2, 4), (4, 2), (3, 5), (5, 3), (4, 5), (5, 4)]);
        assert_eq!(on, ["bn.ba"]);
    }

    #[test]
    fn test_serialisation_and_delay() {
        let mut ev = EventQueue::new();
        let mut c = chan(12_000_000, None, LossCfg::None); // 1500 B = 1 ms
        assert_eq!(
            c.offer(0, 0, 0, 1500, false, &mut ev, &NO_PASS),
            Offer::Queued
        );
        assert_eq!(
            c.offer(0, 0, 0, 1500, false, &mut ev, &NO_PASS),
            Offer::Queued
        );
        // Only the head is scheduled: arrives at 1 ms serialisation + 1 ms delay.
        assert_eq!(ev.len(), 1);
        assert_eq!(ev.peek().unwrap().time(), 2_000_000);
        c.take_arrival(0, &mut ev);
        assert_eq!(ev.pop().unwrap().time(), 3_000_000);
    }

    #[test]
    fn test_droptail_counts_waiting_packets_only() {
        let mut ev = EventQueue::new();
        let mut c = chan(12_000_000, Some(2), LossCfg::None);
        // One in service + two waiting fit; the fourth is dropped.
        for _ in 0..3 {
            assert_eq!(
                c.offer(0, 0, 0, 1500, false, &mut ev, &NO_PASS),
                Offer::Queued
            );
        }
        assert_eq!(
            c.offer(0, 0, 0, 1500, false, &mut ev, &NO_PASS),
            Offer::Dropped
        );
        assert_eq!(c.queue_pkts(0), 2);
        // After the first finishes (1 ms) one slot frees.
        assert_eq!(c.queue_pkts(1_000_000), 1);
        assert_eq!(
            c.offer(0, 1_000_000, 0, 1500, false, &mut ev, &NO_PASS),
            Offer::Queued
        );
        assert_eq!(c.stats().drops, 1);
    }

    #[test]
    fn test_rate_never_exceeded_with_odd_rate() {
        // 7 Mbit/s does not divide 12000 bits evenly in ns; the ps accumulator keeps the long-run
        // rate exact and never above the configured rate.
        let mut ev = EventQueue::new();
        let mut c = chan(7_000_000, None, LossCfg::None);
        for _ in 0..10_000 {
            c.offer(0, 0, 0, 1500, false, &mut ev, &NO_PASS);
        }
        let mut last = 0;
        while let Some(e) = ev.peek() {
            last = e.time();
            c.take_arrival(0, &mut ev);
        }
        let serialise_ns = last - 1_000_000;
        let bits = 10_000u64 * 1500 * 8;
        let rate = bits as f64 * 1e9 / serialise_ns as f64;
        assert!(rate <= 7_000_000.0, "rate {rate}");
        assert!(rate > 6_999_990.0, "rate {rate}");
    }

    #[test]
    fn test_bernoulli_loss_rate() {
        let mut ev = EventQueue::new();
        let mut c = chan(1_000_000_000, None, LossCfg::Bernoulli { p: 0.05 });
        let n = 100_000;
        for i in 0..n {
            c.offer(0, i * 20_000, 0, 1500, false, &mut ev, &NO_PASS);
        }
        let p = c.stats().lost as f64 / n as f64;
        // SD of the estimate: sqrt(.05·.95/1e5) ≈ 0.00069; 5 SD.
        assert!((p - 0.05).abs() < 0.0035, "p {p}");
    }

    #[test]
    fn test_gilbert_elliott_mean_loss_and_burstiness() {
        let mut m = LossModel::new(
            LossCfg::GilbertElliott {
                p_gb: 0.01,
                p_bg: 0.2,
                loss_good: 0.0,
                loss_bad: 1.0,
            },
            Rng::new(3),
        );
        let n = 400_000;
        let mut lost = 0u64;
        let mut runs = 0u64;
        let mut prev = false;
        for _ in 0..n {
            let l = m.lose();
            if l {
                lost += 1;
                if !prev {
                    runs += 1;
                }
            }
            prev = l;
        }
        // Stationary P(bad) = p_gb/(p_gb+p_bg) = 0.0476; mean burst length 1/p_bg = 5.
        let p = lost as f64 / n as f64;
        assert!((p - 0.0476).abs() < 0.006, "p {p}");
        let burst = lost as f64 / runs as f64;
        assert!((burst - 5.0).abs() < 0.5, "burst {burst}");
    }

    /// A two-host network whose a→b direction has `schedule` (a JSON array), and `flow`.
    fn run_scheduled(schedule: &str, flow: &str) -> crate::sim::RunResult {
        let json = format!(
            r#"{{"seed": 1, "duration_ns": 10000000000, "interval_ns": 1000000000,
              "nodes": [{{"name":"a","kind":"host"}},{{"name":"b","kind":"host"}}],
              "links": [{{"name":"l","a":"a","b":"b","monitor":true,
                "ab":{{"rate_bps":10000000,"delay_ns":10000000,"queue":{{"limit_pkts":100}},
                       "schedule": {schedule}}},
                "ba":{{"rate_bps":10000000,"delay_ns":10000000,"queue":{{"limit_pkts":100}}}}}}],
              "flows": [{flow}]}}"#
        );
        crate::sim::run_json(&json).unwrap()
    }

    const UDP: &str = r#"{"name":"u","kind":"udp","src":"a","dst":"b","rate_bps":20000000,
        "payload_bytes":1472}"#;

    /// Mean goodput of the samples with time in (from, to] seconds.
    fn goodput(r: &crate::sim::RunResult, from: u64, to: u64) -> f64 {
        let s = &r.series;
        let v: Vec<f64> = (0..s.time_ns.len())
            .filter(|&i| s.time_ns[i] > from * 1_000_000_000 && s.time_ns[i] <= to * 1_000_000_000)
            .map(|i| s.goodput_bps[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    }

    #[test]
    fn test_schedule_rate_step_halves_udp_goodput() {
        // A 20 Mbit/s UDP source over a 10 Mbit/s link that becomes 5 Mbit/s at 5 s.
        let r = run_scheduled(r#"[{"at_ns": 5000000000, "rate_bps": 5000000}]"#, UDP);
        let (before, after) = (goodput(&r, 1, 5), goodput(&r, 6, 10));
        // Payload share of a 1500 B packet: 1472/1500.
        assert!(
            (before - 10e6 * 1472.0 / 1500.0).abs() < 0.01 * 10e6,
            "before {before}"
        );
        assert!(
            (after - 5e6 * 1472.0 / 1500.0).abs() < 0.01 * 5e6,
            "after {after}"
        );
        let unchanged = run_scheduled("[]", UDP);
        assert!((goodput(&unchanged, 6, 10) - before).abs() < 0.01 * 10e6);
    }

    #[test]
    fn test_schedule_loss_step_loses_from_its_time() {
        // 10 % Bernoulli loss from 5 s: no loss before, about 10 % of the offered packets after.
        let r = run_scheduled(
            r#"[{"at_ns": 5000000000, "loss": {"model": "bernoulli", "p": 0.1}}]"#,
            UDP,
        );
        let q = &r.queue_series;
        let lost = |from: u64, to: u64| -> u64 {
            (0..q.time_ns.len())
                .filter(|&i| q.dir[i] == "ab")
                .filter(|&i| {
                    q.time_ns[i] > from * 1_000_000_000 && q.time_ns[i] <= to * 1_000_000_000
                })
                .map(|i| q.lost[i])
                .sum()
        };
        assert_eq!(lost(0, 5), 0);
        // 5 s × 833 packets/s admitted ≈ 4167; 10 % ± 5 SD (SD ≈ 19).
        let after = lost(5, 10) as f64;
        assert!((after - 416.7).abs() < 100.0, "lost after the step {after}");
    }

    #[test]
    fn test_schedule_delay_step_shows_in_rtt_samples() {
        // A window-limited TCP flow (no standing queue) whose receiver ACKs every segment (so no
        // delayed-ACK wait enters the samples) sees the base RTT, 20 ms plus the serialisation of
        // a data packet (1.2 ms) and an ACK, then 20 ms more once the a→b delay goes from 10 to
        // 30 ms at 5 s.
        let tcp = r#"{"name":"t","kind":"tcp","src":"a","dst":"b","cca":{"name":"reno"},
            "tcp":{"rcvbuf":20000},"receiver_tcp":{"rcvbuf":20000,"delayed_ack":false}}"#;
        let r = run_scheduled(r#"[{"at_ns": 5000000000, "delay_ns": 30000000}]"#, tcp);
        let srtt = |t: u64| {
            let i = (0..r.series.time_ns.len())
                .find(|&i| r.series.time_ns[i] == t * 1_000_000_000)
                .unwrap();
            r.series.srtt_ns[i]
        };
        let (before, after) = (srtt(4), srtt(9));
        assert!(before > 21e6 && before < 22e6, "srtt before {before}");
        assert!(after > 41e6 && after < 42e6, "srtt after {after}");
        assert!((after - before - 20e6).abs() < 0.3e6, "{before} -> {after}");
    }
}
