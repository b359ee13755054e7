//! One link direction as a pure model — the ONE implementation both engines use (issue 13): the
//! simulator's channel (src/net.rs) and the kernel engine's userspace link emulator
//! (crates/tcplab-linkem/src/pipe.rs) wrap a [`Link`] and add only what is their own (the
//! simulator: the in-flight FIFO of packet handles and its events, outages; the emulator: frame
//! tokens, the back-to-back bookkeeping of its self-check). Time is an argument; nothing here reads
//! a clock, so the schedule is unit-tested exactly. No allocation per packet.
//!
//! ## The model
//! * A FIFO server at `rate_bps` counting IP bytes (no Ethernet framing, as Dummynet and `tc` rate
//!   limits count; rate 0 = unlimited, used by the emulator only). A packet admitted at `now`
//!   starts serialisation at `max(now, busy_until)` and finishes `len·8/rate` later (computed in
//!   picoseconds, rounded up to whole ns at arrival, so a link never exceeds its rate:
//!   docs/design.md §2); it reaches the far end `delay_ns` after that.
//! * The queue is *virtual*: the list of packets whose serialisation has not finished, so no
//!   event is needed when a packet leaves it; its length at any time is recovered by dropping
//!   finished entries.
//! * Drop-tail: an arriving packet is dropped if the packets (or bytes) *waiting* — not counting
//!   the one being serialised — would exceed the limit (Linux `pfifo`/`bfifo` semantics,
//!   tc-pfifo(8); Dummynet queue slots).
//! * TSO frames at a sending host ([`Link::count_frames`], [`Link::offer_frame_tagged`]):
//!   Linux queues a TSO frame as
//!   one buffer (`sk_buff`) that the NIC cuts into segments after it has left the qdisc, so the
//!   host's `txqueuelen` counts frames, not segments. A segment marked as the continuation of a
//!   frame is not checked against the limits (its frame was admitted whole with its first
//!   segment) and does not count as waiting; the frame stops waiting when its first segment
//!   starts serialisation. Packet counts of the queue samples stay in segments. Only a link
//!   set to [`Link::count_frames`] (the egress of a host with a TSO sender) keeps this bookkeeping; every
//!   other link runs the plain drop-tail path, without its per-packet cost.
//! * Random loss ([`LossModel`]) applies to packets that won a place in the queue: they are
//!   serialised (they use capacity, like a corrupted frame on the wire) but never arrive.
//! * Queue samples ([`Link::sample`]): queue length in packets and bytes at the sample time,
//!   drops and losses since the previous sample, and utilisation = serialisation time admitted
//!   since the previous sample / interval, at most 1 (docs/design.md §4 `queue_series`).
//!
//! ## Time-varying links (issue 15 §2; docs/scenario-format.md "`[[path.schedule]]`")
//! A link direction may carry a schedule of [`Step`]s: at `at_ns` (relative to the run's time
//! zero) its rate, one-way delay and/or loss model change. **A change applies to every packet
//! offered at or after its time; packets already admitted keep the serialisation finish and
//! arrival times computed when they were admitted.** This is netem's rule: netem computes a
//! packet's departure time (`time_to_send`, delay plus its rate-based serialisation delay) in
//! its enqueue function, so `tc qdisc change` affects only packets enqueued after it
//! (tc-netem(8); Linux net/sched/sch_netem.c, read for behaviour only). Because serialisation is
//! FIFO, a packet admitted after a rate change still starts only when the previous one finishes.
//! A delay *decrease* would let a packet overtake the one before it; a link does not reorder, so
//! a packet never arrives before its predecessor on the same direction (it arrives with it):
//! `arrival = max(finish + delay, previous arrival)`. (netem's tfifo would reorder here; a
//! Mahimahi delay shell has one fixed delay, so it has no such case.) The alternative rule, not
//! taken: Mahimahi's link shell (Netravali et al., USENIX ATC 2015) replays a trace of delivery
//! opportunities, so its rate is a property of time and a packet queued before a change is sent at
//! the new rate; with netem's rule a change is exact per packet and both engines compute it the
//! same way at admission. Changes are not events:
//! they are applied when the first packet at or after their time is offered, which gives the
//! same result as an event at exactly `at_ns` because nothing else depends on them.
//!
//! ## Jitter ([`Jitter`]; docs/scenario-format.md `path.jitter`)
//! A direction may add an extra delay to each packet after its serialisation, drawn from its own
//! random stream (seed and direction name, kind `jitter`): `arrival = max(finish + delay +
//! draw, previous arrival)`, so the queue is unchanged and the order is kept (a link does not
//! reorder, as above). What it stands for is the timing noise of real machines that an ideal
//! link lacks: the scheduling lateness of a software emulator or router (the kernel engine's
//! emulator measures its own per packet, `lateness` in crates/tcplab-linkem/src/serve.rs, tens
//! of µs on a loaded 2-core host) and the processing jitter of hosts. Its best-known effect is
//! on drop-tail fairness: without it, flows of a deterministic simulation keep a fixed phase
//! relative to each other at the bottleneck, so the same flow loses at every overflow (Floyd &
//! Jacobson, "On Traffic Phase Effects in Packet-Switched Gateways", Internetworking: Research
//! and Experience 3(3), 1992, who add a random processing time of up to one bottleneck
//! service time for that reason). Distributions: uniform in [0, max] or an empirical one given
//! by points of its distribution function (a measured histogram). Draws are independent per packet; measured
//! lateness is correlated in time (a late wake-up delays every packet due meanwhile), and the
//! order-keeping `max` adds some of that back: an approximation, stated where it is used.
//!
//! ## Timer ticks ([`Link::with_tick`]; docs/scenario-format.md `path.tick`)
//! A software emulator driven by the kernel clock moves packets only when the clock ticks.
//! Dummynet is one: dummynet(4) (FreeBSD manual, 2002 and later) lists `HZ` as "the timer
//! granularity" and recommends `options HZ=1000`; FreeBSD's default was 100 (a 10 ms tick).
//! The facts used here are from FreeBSD's `sys/netinet/ip_dummynet.c` of the 4.x/5.x era (Rizzo,
//! 1998-2002; read for behaviour, nothing copied): its scheduler runs once per tick and counts
//! time in ticks (`curr_time`); a pipe's queue earns `bandwidth` bits of credit per tick, and
//! each tick every packet whose length the credit covers moves to the delay line; an idle queue
//! that receives a packet is scheduled from the current tick, so the partial tick in which it
//! arrived counts as earned, and credit left over from its last packet (less than one tick's)
//! is kept; a packet's exit time from the delay line is its move tick plus the delay converted
//! to whole ticks, and it leaves in the tick that reaches it (a packet whose credit is already
//! there goes through at once). With a tick of `T` this gives, per packet offered at `now`:
//! * fluid finish `f = s + len·8/rate`, where `s` is the previous packet's fluid finish, moved
//!   forward by the whole ticks in which the queue was idle (`s = f_prev + max(0, ⌊now⌋_T −
//!   ⌈f_prev⌉_T)`, which keeps the leftover credit);
//! * the packet leaves the queue at `d = max(⌈f⌉_T, ⌊now⌋_T)`: it holds its queue slot until
//!   then (drop-tail counts it), and packets that the same tick releases leave together;
//! * it arrives at `max(⌈d + delay⌉_T, now)`, then jitter, if any, on top.
//!
//! The delay is rounded up to the tick, not down as Dummynet's configuration does (`delay` in
//! ms × HZ / 1000): the link's delay stands for the delay the study configured, which is a whole
//! number of ticks when it is a whole number of 10 ms (HZ=100) or ms (HZ=1000), but a scenario
//! computes it from an RTT minus access delays. Tick boundaries are multiples of `T` from the
//! engine's time zero (the simulator's run start; the emulator's own clock): the phase of a real
//! router's clock is arbitrary. Nothing is random. A link without a tick takes none of this path.

use crate::config::{JitterCfg, LossCfg};
use crate::rng::Rng;
use crate::time::tx_time_ps;
use serde::Deserialize;

/// Per-packet loss model with its own random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    cfg: LossCfg,
    rng: Rng,
    bad: bool,
    /// Packets seen so far (for `LossCfg::List`).
    count: u64,
    /// Next index into the sorted list of `LossCfg::List`.
    next: usize,
}

impl LossModel {
    pub fn new(cfg: LossCfg, rng: Rng) -> Self {
        LossModel {
            cfg: Self::normalise(cfg),
            rng,
            bad: false,
            count: 0,
            next: 0,
        }
    }

    fn normalise(cfg: LossCfg) -> LossCfg {
        match cfg {
            LossCfg::List { mut packets } => {
                packets.sort_unstable();
                packets.dedup();
                LossCfg::List { packets }
            }
            c => c,
        }
    }

    /// Switch to another model (a scheduled change). The random stream continues (the draws stay
    /// a function of the seed and the link direction's name), the packet count continues (a
    /// `list` index still counts from the first packet of the run), and a Gilbert–Elliott chain
    /// starts in the good state.
    pub fn set_cfg(&mut self, cfg: LossCfg) {
        self.cfg = Self::normalise(cfg);
        self.bad = false;
        self.next = match &self.cfg {
            LossCfg::List { packets } => packets.partition_point(|&p| p < self.count),
            _ => 0,
        };
    }

    /// Decide whether the next packet is lost.
    #[inline]
    pub fn lose(&mut self) -> bool {
        if let LossCfg::None = self.cfg {
            // `count` only matters for `LossCfg::List`; keep it right across a switch to `list`.
            self.count += 1;
            return false;
        }
        self.lose_random_or_listed()
    }

    fn lose_random_or_listed(&mut self) -> bool {
        let index = self.count;
        self.count += 1;
        match self.cfg {
            LossCfg::None => false,
            LossCfg::Bernoulli { p } => self.rng.chance(p),
            LossCfg::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                // State transition first, then loss in the new state.
                if self.bad {
                    if self.rng.chance(p_bg) {
                        self.bad = false;
                    }
                } else if self.rng.chance(p_gb) {
                    self.bad = true;
                }
                self.rng.chance(if self.bad { loss_bad } else { loss_good })
            }
            LossCfg::List { ref packets } => {
                if packets.get(self.next) == Some(&index) {
                    self.next += 1;
                    true
                } else {
                    false
                }
            }
        }
    }
}

/// Extra delay per packet with its own random stream (module docs, "Jitter").
#[derive(Clone, Debug)]
pub struct Jitter {
    cfg: JitterCfg,
    rng: Rng,
}

impl Jitter {
    /// `cfg` must have passed [`JitterCfg::check`].
    pub fn new(cfg: JitterCfg, rng: Rng) -> Jitter {
        debug_assert!(cfg.check().is_ok());
        Jitter { cfg, rng }
    }

    fn is_none(&self) -> bool {
        matches!(self.cfg, JitterCfg::None)
    }

    /// The next packet's extra delay, ns.
    #[inline]
    pub fn draw(&mut self) -> u64 {
        match &self.cfg {
            JitterCfg::None => 0,
            // Modulo bias ≤ (max + 1) / 2^64: nil for the at most 10 s accepted.
            JitterCfg::Uniform { max_ns } => self.rng.next_u64() % (max_ns + 1),
            JitterCfg::Empirical { cdf } => {
                let u = self.rng.next_f64();
                // The segment whose probabilities enclose `u`: the first point above it and the
                // one before (the last point has probability 1 > u, the first 0 ≤ u).
                let hi = cdf.partition_point(|&(_, p)| p <= u).min(cdf.len() - 1);
                let (v0, p0) = cdf[hi - 1];
                let (v1, p1) = cdf[hi];
                let f = if p1 > p0 { (u - p0) / (p1 - p0) } else { 0.0 };
                v0 + ((v1 - v0) as f64 * f) as u64
            }
        }
    }
}

/// One scheduled change of a link direction (docs/design.md §3 `links[].ab.schedule`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// When, ns after the run's time zero.
    pub at_ns: u64,
    #[serde(default)]
    pub rate_bps: Option<u64>,
    #[serde(default)]
    pub delay_ns: Option<u64>,
    #[serde(default)]
    pub loss: Option<LossCfg>,
}

/// Check a schedule: `Err((field, problem))`, the field relative to the direction
/// (`schedule.<i>.<key>`).
pub fn check_schedule(steps: &[Step], rate_may_be_zero: bool) -> Result<(), (String, String)> {
    let mut prev: Option<u64> = None;
    for (i, s) in steps.iter().enumerate() {
        if let Some(p) = prev.filter(|&p| s.at_ns <= p) {
            return Err((
                format!("schedule.{i}.at_ns"),
                format!(
                    "{} is not after the previous step's time {p}; steps must be in increasing time order",
                    s.at_ns
                ),
            ));
        }
        prev = Some(s.at_ns);
        if s.rate_bps == Some(0) && !rate_may_be_zero {
            return Err((format!("schedule.{i}.rate_bps"), "must be > 0".into()));
        }
        if s.rate_bps.is_none() && s.delay_ns.is_none() && s.loss.is_none() {
            return Err((
                format!("schedule.{i}"),
                "changes nothing; give rate_bps, delay_ns and/or loss".into(),
            ));
        }
    }
    Ok(())
}

/// Cumulative counters of a link direction (docs/design.md §4 `links`).
///
/// The counters every admission updates (`packets`, `bytes`, `busy_ps`) are not next to each
/// other: side by side, the compiler merged two of them into one vector add that took six
/// instructions instead of two (an admission happens at every hop of every packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets and IP bytes accepted for serialisation (including randomly lost ones).
    pub packets: u64,
    /// Drop-tail overflows.
    pub drops: u64,
    pub bytes: u64,
    /// Packets destroyed by the loss model (or an outage).
    pub lost: u64,
    /// Serialisation time of accepted packets, picoseconds.
    pub busy_ps: u64,
    /// Largest `waiting + 1` an admitted packet saw.
    pub max_queue_pkts: u32,
}

/// Outcome of offering a packet to a [`Link`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Drop-tail overflow: nothing changed but the drop counter.
    Dropped,
    /// Serialised (capacity used) but destroyed by the loss model or an outage.
    Lost { was_busy: bool },
    /// Will reach the far end at `arrival_ns`. `was_busy` (here and in `Lost`): the link was
    /// still serialising an earlier packet when this one was admitted.
    Queued { arrival_ns: u64, was_busy: bool },
}

/// One queue sample (docs/design.md §4 `queue_series`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueSample {
    pub queue_pkts: u32,
    pub queue_bytes: u64,
    /// Drops and losses since the previous sample.
    pub drops: u64,
    pub lost: u64,
    pub utilization: f64,
}

/// The counters at the previous sample (start: all zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleMark {
    drops: u64,
    lost: u64,
    busy_ps: u64,
}

/// Picoseconds per byte when a whole number (most rates: avoids a 128-bit division per packet);
/// 0 for an unlimited rate.
fn ps_per_byte(rate_bps: u64) -> Option<u64> {
    if rate_bps == 0 {
        return Some(0);
    }
    8_000_000_000_000u64
        .is_multiple_of(rate_bps)
        .then(|| 8_000_000_000_000u64 / rate_bps)
}

/// One admitted packet: serialisation finish (ps), size, arrival at the far end (ns; unused
/// when lost) and the owner's tag (the simulator's packet handle and event sequence number).
#[derive(Clone, Copy, Debug, Default)]
struct Entry<T> {
    finish_ps: u64,
    arrival_ns: u64,
    len: u32,
    lost: bool,
    /// A TSO frame's later segment: not counted against the packet limit (module docs).
    cont: bool,
    tag: T,
}

/// One link direction: drop-tail queue, serialisation, delay, loss and schedule.
///
/// ## One FIFO for the queue and the wire
/// Every admitted packet has one [`Entry`] in one FIFO, in admission order. The first `done`
/// entries have finished serialisation (the virtual queue is the rest); a link that
/// [`Link::retaining`] also keeps them until they have reached the far end (taken with
/// [`Link::take_arrival`]) or are known lost, so its owner needs no second FIFO of packets on
/// the wire: arrivals happen in admission order (`arrival = max(finish + delay, previous
/// arrival)`, see the module docs), so the next one is always the first entry not yet taken
/// and not lost (`next_arr`). An entry leaves the FIFO once it is both finished and taken (or
/// lost). Without `retaining` (the kernel engine's emulator, which keeps its own frames in
/// flight) entries leave as soon as they finish, as a plain virtual queue.
#[derive(Clone, Debug)]
pub struct Link<T: Copy + Default = ()> {
    rate_bps: u64,
    ps_per_byte: Option<u64>,
    /// Without a whole number of ps per byte: the last length serialised and its time, ps
    /// (`(0, 0)` is exact too). Packets of a direction mostly have one length (full segments
    /// one way, ACKs the other), so the division is mostly skipped.
    tx_memo: (u32, u64),
    delay_ns: u64,
    limit_pkts: Option<u32>,
    limit_bytes: Option<u64>,
    loss: LossModel,
    schedule: Vec<Step>,
    next_step: usize,
    /// Time zero of the schedule (None: not started, no step applies yet).
    origin_ns: Option<u64>,
    busy_until_ps: u64,
    /// Admitted packets in order, a ring indexed by admission count ([`Link::slot`]; its length
    /// is a power of two): entries from `min(done, next_arr)` to `end` are kept, `done..end`
    /// is the virtual queue.
    ring: Vec<Entry<T>>,
    /// First entry whose serialisation has not finished.
    done: u64,
    end: u64,
    /// Bytes of the virtual queue.
    backlog_bytes: u64,
    /// Entries of the virtual queue that continue a TSO frame (module docs).
    cont_unfinished: u64,
    /// Count TSO frames once ([`Link::count_frames`]).
    frames: bool,
    /// Keep entries until taken (see the type's docs).
    retain: bool,
    /// The owner checks conditions of its own on every offer (the simulator's outages,
    /// [`Link::with_owner_checks`]): never plain.
    owner_checks: bool,
    /// A retaining link without frame counting, schedule steps to come, byte limit or loss
    /// model: the offer takes the plain path ([`Link::refresh_plain`]).
    plain: bool,
    /// Plain but for counting TSO frames (the egress queue of a host with a TSO sender): the
    /// frame-counting offer skips the same checks ([`Link::refresh_plain`]).
    plain_frames: bool,
    /// The next entry to arrive (first not taken, not lost), or `end` when none (always `end`
    /// unless `retain`).
    next_arr: u64,
    /// Lost entries from `next_arr` to `end` (the arrival cursor skips them; when there are
    /// none, [`Link::take_arrival`] need not look).
    lost_ahead: u64,
    /// Arrival time of the last packet put in flight.
    last_arrival_ns: u64,
    /// Extra delay per packet (module docs, "Jitter").
    jitter: Jitter,
    /// Timer tick, ns (0: none), and the last packet's fluid finish, ps (module docs,
    /// "Timer ticks").
    tick_ns: u64,
    fluid_ps: u64,
    pub stats: LinkStats,
}

impl<T: Copy + Default> Link<T> {
    /// A link direction; `backlog_capacity` pre-sizes the virtual queue. The schedule's time zero
    /// is 0 (the simulator); the emulator moves it with [`Link::set_origin`].
    pub fn new(
        rate_bps: u64,
        delay_ns: u64,
        limit_pkts: Option<u32>,
        limit_bytes: Option<u64>,
        loss: LossModel,
        backlog_capacity: usize,
    ) -> Link<T> {
        Link {
            rate_bps,
            ps_per_byte: ps_per_byte(rate_bps),
            tx_memo: (0, 0),
            delay_ns,
            limit_pkts,
            limit_bytes,
            loss,
            schedule: Vec::new(),
            next_step: 0,
            origin_ns: Some(0),
            busy_until_ps: 0,
            ring: vec![Entry::default(); backlog_capacity.max(2).next_power_of_two()],
            done: 0,
            end: 0,
            backlog_bytes: 0,
            cont_unfinished: 0,
            frames: false,
            retain: false,
            owner_checks: false,
            plain: false,
            plain_frames: false,
            next_arr: 0,
            lost_ahead: 0,
            last_arrival_ns: 0,
            jitter: Jitter::new(JitterCfg::None, Rng::new(0)),
            tick_ns: 0,
            fluid_ps: 0,
            stats: LinkStats::default(),
        }
    }

    /// Release packets only at multiples of `tick_ns` (module docs, "Timer ticks"); 0: never
    /// quantise. Set before the first packet.
    pub fn with_tick(mut self, tick_ns: u64) -> Link<T> {
        self.tick_ns = tick_ns;
        self.refresh_plain();
        self
    }

    /// The tick's part of an offer at `now` of a packet that takes `tx` ps: when it leaves the
    /// queue, ps (module docs, "Timer ticks").
    #[inline(never)]
    fn tick_departure_ps(&mut self, now: u64, tx: u64) -> u64 {
        let t = self.tick_ns * 1000; // ≤ 1 s (MAX_TICK_NS): no overflow
        let floor = now.saturating_mul(1000) / t * t;
        let prev_departure = self.fluid_ps.div_ceil(t) * t;
        self.fluid_ps += floor.saturating_sub(prev_departure) + tx;
        (self.fluid_ps.div_ceil(t) * t).max(floor)
    }

    /// Add `jitter` to each packet's arrival (module docs, "Jitter").
    pub fn with_jitter(mut self, jitter: Jitter) -> Link<T> {
        self.jitter = jitter;
        self.refresh_plain();
        self
    }

    /// Keep each packet until its arrival is taken ([`Link::take_arrival`]): the FIFO then
    /// also holds the packets on the wire (see the type's docs).
    pub fn retaining(mut self) -> Link<T> {
        self.retain = true;
        self.refresh_plain();
        self
    }

    /// The owner has conditions of its own to check on every offer (the simulator's outages):
    /// the link is never [`Link::is_plain`], so that an owner can skip its checks on the plain
    /// path.
    pub fn with_owner_checks(mut self, on: bool) -> Link<T> {
        self.owner_checks = on;
        self.refresh_plain();
        self
    }

    /// The offer takes the plain path ([`Link::refresh_plain`]).
    #[inline(always)]
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// Whether the offer may take the plain path: it skips the checks that cannot fire (the
    /// schedule, the byte limit, the loss model, frame counting, jitter, the owner's checks);
    /// `plain_frames`: the same but for frame counting.
    fn refresh_plain(&mut self) {
        self.plain_frames = self.retain
            && !self.owner_checks
            && self.next_step >= self.schedule.len()
            && self.limit_bytes.is_none()
            && matches!(self.loss.cfg, LossCfg::None)
            && self.jitter.is_none()
            && self.tick_ns == 0;
        self.plain = self.plain_frames && !self.frames;
    }

    /// Count a TSO frame once against the packet limit from now on (the egress queue of a host
    /// with a TSO sender; module docs). Without it [`Link::offer_frame_tagged`] treats every
    /// segment as a packet.
    pub fn count_frames(&mut self) {
        self.frames = true;
        self.refresh_plain();
    }

    /// Give the link a schedule (sorted by time; see [`check_schedule`]) whose times count from
    /// `origin_ns` (None: from a later [`Link::set_origin`]).
    pub fn with_schedule(mut self, steps: Vec<Step>, origin_ns: Option<u64>) -> Link<T> {
        self.schedule = steps;
        self.next_step = 0;
        self.origin_ns = origin_ns;
        self.refresh_plain();
        self
    }

    /// Set the schedule's time zero (the emulator's `start` command).
    pub fn set_origin(&mut self, origin_ns: u64) {
        self.origin_ns = Some(origin_ns);
    }

    /// Current rate and one-way delay (they change with the schedule).
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    pub fn delay_ns(&self) -> u64 {
        self.delay_ns
    }

    /// Apply the steps due by `now` (rare: kept out of the per-packet path).
    #[cold]
    #[inline(never)]
    fn apply_schedule(&mut self, now: u64) {
        let Some(origin) = self.origin_ns else {
            return;
        };
        while let Some(s) = self.schedule.get(self.next_step) {
            if now < origin.saturating_add(s.at_ns) {
                break;
            }
            if let Some(r) = s.rate_bps {
                self.rate_bps = r;
                self.ps_per_byte = ps_per_byte(r);
                self.tx_memo = (0, 0);
            }
            if let Some(d) = s.delay_ns {
                self.delay_ns = d;
            }
            if let Some(l) = &s.loss {
                self.loss.set_cfg(l.clone());
            }
            self.next_step += 1;
        }
        self.refresh_plain();
    }

    /// Forget packets whose serialisation finished by `now`.
    #[inline]
    fn drain(&mut self, now: u64) {
        if self.frames {
            self.drain_counting::<true>(now)
        } else {
            self.drain_counting::<false>(now)
        }
    }

    /// [`Link::drain`]; `FRAMES`: keep the count of queued frame continuations.
    #[inline(always)]
    fn drain_counting<const FRAMES: bool>(&mut self, now: u64) {
        let now_ps = now.saturating_mul(1000);
        if self.busy_until_ps <= now_ps {
            // Everything admitted has finished (entries finish in admission order, the last at
            // `busy_until_ps`): an idle link, most offers on a fast access link.
            self.done = self.end;
            self.backlog_bytes = 0;
            if FRAMES {
                self.cont_unfinished = 0;
            }
            return;
        }
        // The last entry finishes after `now`, so the walk stops before `end`.
        debug_assert!(self.done < self.end);
        loop {
            let e = &self.ring[self.slot(self.done)];
            if e.finish_ps > now_ps {
                break;
            }
            self.backlog_bytes -= e.len as u64;
            if FRAMES {
                self.cont_unfinished -= e.cont as u64;
            }
            self.done += 1;
        }
    }

    /// The ring index of admission count `i`. The ring's length is a power of two, and masking
    /// with `length − 1` (rather than a mask kept beside it) lets the compiler see the index in
    /// bounds whenever the ring is not empty: each access's bounds check becomes that test,
    /// which it shares between the accesses of one path.
    #[inline(always)]
    fn slot(&self, i: u64) -> usize {
        (i as usize) & self.ring.len().wrapping_sub(1)
    }

    /// The first entry kept: entries before it are finished and taken or lost.
    #[inline]
    fn first(&self) -> u64 {
        self.done.min(self.next_arr)
    }

    /// Append an entry, growing the ring when full (amortised: the ring only grows to the
    /// most packets a direction ever held at once).
    #[inline]
    fn push(&mut self, e: Entry<T>) {
        if self.end - self.first() >= self.ring.len() as u64 {
            self.grow();
        }
        let i = self.slot(self.end);
        self.ring[i] = e;
        self.end += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = self.ring.len() * 2;
        let mut ring = vec![Entry::default(); cap];
        let mask = cap as u64 - 1;
        for i in self.first()..self.end {
            ring[(i & mask) as usize] = self.ring[self.slot(i)];
        }
        self.ring = ring;
    }

    /// Entries kept (tests).
    #[cfg(test)]
    fn kept(&self) -> u64 {
        self.end - self.first()
    }

    /// Packets not yet fully serialised.
    #[inline]
    fn unfinished(&self) -> u64 {
        self.end - self.done
    }

    /// The packet being serialised.
    #[inline]
    fn serialising(&self) -> Option<&Entry<T>> {
        (self.done < self.end).then(|| &self.ring[self.slot(self.done)])
    }

    /// Packets waiting (not counting the one being serialised) at `now`.
    pub fn queue_pkts(&mut self, now: u64) -> u32 {
        self.drain(now);
        self.unfinished().saturating_sub(1) as u32
    }

    /// Bytes waiting (not counting the one being serialised) at `now`.
    pub fn queue_bytes(&mut self, now: u64) -> u64 {
        self.drain(now);
        match self.serialising() {
            Some(e) => self.backlog_bytes - e.len as u64,
            None => 0,
        }
    }

    /// Unfinished entries that count against the packet limit (TSO frames once).
    #[inline]
    fn counted_unfinished(&self) -> u64 {
        self.unfinished() - self.cont_unfinished
    }

    /// Packets (TSO frames counted once) waiting at the last drain: the counted unfinished
    /// entries except the one being serialised when it counts (a frame whose first segment is
    /// on the wire has left the queue).
    #[inline]
    fn waiting_counted(&self) -> u32 {
        if self.cont_unfinished == 0 {
            // No TSO frame queued (every link but a TSO sender's own): the plain count.
            return self.unfinished().saturating_sub(1) as u32;
        }
        let head = self.serialising().map_or(0, |e| u64::from(!e.cont));
        (self.counted_unfinished() - head) as u32
    }

    /// How many more packets (TSO frames counted once) the queue accepts now (`u32::MAX` when
    /// unlimited in packets).
    pub fn room(&mut self, now: u64) -> u32 {
        match self.limit_pkts {
            // The counted unfinished entries bound the waiting ones from above, so this is exact
            // enough while far from full; only a nearly full queue needs finished entries dropped.
            Some(l) if (self.counted_unfinished() as u32) < l / 2 => {
                l - self.counted_unfinished() as u32
            }
            Some(l) => {
                self.drain(now);
                l.saturating_sub(self.waiting_counted())
            }
            None => u32::MAX,
        }
    }

    /// When a packet offered at `now` would start serialisation, ps.
    #[inline]
    pub fn start_time_ps(&self, now: u64) -> u64 {
        self.busy_until_ps.max(now.saturating_mul(1000))
    }

    /// When the packet now being serialised finishes, ps (a slot frees up then).
    pub fn next_finish_ps(&self) -> Option<u64> {
        self.serialising().map(|e| e.finish_ps)
    }

    /// Serialisation time spent by `now`, ps. The unfinished packets are back to back (each
    /// arrived before its predecessor finished), so the work still to do is `busy_until − now`
    /// (with a tick, the fluid finish: module docs, "Timer ticks").
    pub fn busy_done_ps(&self, now: u64) -> u64 {
        let now_ps = now.saturating_mul(1000);
        let until = if self.tick_ns != 0 {
            self.fluid_ps
        } else {
            self.busy_until_ps
        };
        self.stats
            .busy_ps
            .saturating_sub(until.saturating_sub(now_ps))
    }

    /// Offer a packet of `len` IP bytes at `now`. `lossy == false` exempts it from the loss model
    /// (it neither can be lost nor counts as a `list` index); `down` (an outage) loses it after
    /// the loss model has drawn.
    #[inline]
    pub fn offer(&mut self, now: u64, len: u32, lossy: bool, down: bool) -> Admit {
        self.offer_tagged(now, len, lossy, down, T::default())
    }

    /// [`Link::offer`] with the owner's `tag`, returned by [`Link::take_arrival`].
    #[inline]
    pub fn offer_tagged(&mut self, now: u64, len: u32, lossy: bool, down: bool, tag: T) -> Admit {
        self.offer_frame_tagged(now, len, lossy, down, false, tag)
    }

    /// [`Link::offer_tagged`] for a segment of a TSO frame: on a link
    /// [`Link::count_frames`], `cont` marks a segment after the frame's first, admitted with
    /// its frame (module docs); on any other link `cont` is ignored.
    #[inline]
    pub fn offer_frame_tagged(
        &mut self,
        now: u64,
        len: u32,
        lossy: bool,
        down: bool,
        cont: bool,
        tag: T,
    ) -> Admit {
        if self.plain {
            self.admit::<false, true>(now, len, lossy, down, false, tag)
        } else {
            self.admit_other(now, len, lossy, down, cont, tag)
        }
    }

    /// The offer on any link but a plain one, out of line so that the plain path stays small.
    #[inline(never)]
    fn admit_other(
        &mut self,
        now: u64,
        len: u32,
        lossy: bool,
        down: bool,
        cont: bool,
        tag: T,
    ) -> Admit {
        if self.frames {
            if self.plain_frames {
                self.admit::<true, true>(now, len, lossy, down, cont, tag)
            } else {
                self.admit::<true, false>(now, len, lossy, down, cont, tag)
            }
        } else {
            self.admit::<false, false>(now, len, lossy, down, false, tag)
        }
    }

    /// The offer; `FRAMES`: this link counts TSO frames once (`cont` is false otherwise);
    /// `PLAIN`: the link is plain ([`Link::refresh_plain`]), so the schedule, the byte limit
    /// and the loss model (which only counts the packet) need no look.
    #[inline(always)]
    fn admit<const FRAMES: bool, const PLAIN: bool>(
        &mut self,
        now: u64,
        len: u32,
        lossy: bool,
        down: bool,
        cont: bool,
        tag: T,
    ) -> Admit {
        if !PLAIN && self.next_step < self.schedule.len() {
            self.apply_schedule(now);
        }
        self.drain_counting::<FRAMES>(now);
        let waiting = self.unfinished().saturating_sub(1) as u32;
        if !cont {
            if let Some(l) = self.limit_pkts {
                let counted = if FRAMES {
                    self.waiting_counted()
                } else {
                    waiting
                };
                if counted >= l {
                    self.stats.drops += 1;
                    return Admit::Dropped;
                }
            }
            if let Some(lb) = self.limit_bytes.filter(|_| !PLAIN) {
                let head = self.serialising().map_or(0, |e| e.len as u64);
                if self.backlog_bytes - head + len as u64 > lb {
                    self.stats.drops += 1;
                    return Admit::Dropped;
                }
            }
        }
        if FRAMES {
            self.cont_unfinished += cont as u64;
        }
        let was_busy = self.unfinished() > 0;
        let start = self.start_time_ps(now);
        let tx = match self.ps_per_byte {
            Some(k) => len as u64 * k,
            None if len == self.tx_memo.0 => self.tx_memo.1,
            None => {
                let tx = tx_time_ps(len, self.rate_bps);
                self.tx_memo = (len, tx);
                tx
            }
        };
        let finish = if !PLAIN && self.tick_ns != 0 {
            self.tick_departure_ps(now, tx)
        } else {
            start + tx
        };
        self.busy_until_ps = finish;
        self.backlog_bytes += len as u64;
        self.stats.packets += 1;
        self.stats.bytes += len as u64;
        self.stats.busy_ps += tx;
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(waiting + 1);
        let lost = if PLAIN {
            // No loss model: `lose` would only count the packet, and the count only matters
            // to a later switch to a `list` model, which takes a schedule step (a link with
            // steps to come is not plain).
            let _ = lossy;
            down
        } else {
            (lossy && self.loss.lose()) || down
        };
        if lost {
            self.stats.lost += 1;
            if self.next_arr == self.end {
                self.next_arr += 1; // nothing on the wire: past this entry, it never arrives
            } else {
                self.lost_ahead += 1;
            }
            self.push(Entry {
                finish_ps: finish,
                arrival_ns: 0,
                len,
                lost: true,
                cont,
                tag,
            });
            return Admit::Lost { was_busy };
        }
        // FIFO: never before the previous packet (only a delay decrease could do that).
        // Rounded up by hand: `div_ceil` costs a second multiplication for the remainder test
        // (`finish + 999` cannot overflow: 2^64 ps is 213 days).
        #[allow(clippy::manual_div_ceil)]
        let mut arrival_ns = (finish + 999) / 1000 + self.delay_ns;
        if !PLAIN {
            if self.tick_ns != 0 {
                arrival_ns = (arrival_ns.div_ceil(self.tick_ns) * self.tick_ns).max(now);
            }
            arrival_ns += self.jitter.draw();
        }
        let arrival_ns = arrival_ns.max(self.last_arrival_ns);
        self.last_arrival_ns = arrival_ns;
        self.push(Entry {
            finish_ps: finish,
            arrival_ns,
            len,
            lost: false,
            cont,
            tag,
        });
        if !PLAIN && !self.retain {
            self.next_arr = self.end; // nothing is kept for the wire
        }
        Admit::Queued {
            arrival_ns,
            was_busy,
        }
    }

    /// Entries from the next to arrive to the last admitted (retaining links): the packets on
    /// their way, with any lost ones among them.
    #[inline]
    pub fn on_wire_len(&self) -> u64 {
        self.end - self.next_arr
    }

    /// Start loading the entry `k` arrivals after the next and return its tag (a hint for the
    /// owner, which may prefetch what the tag names; retaining links). The index wraps in the
    /// ring, so the entry may be stale or unused: only a hint may depend on it.
    #[inline]
    pub fn prefetch_ahead(&self, k: u64) -> T {
        let e = &self.ring[self.slot(self.next_arr + k)];
        crate::cache::prefetch(e);
        e.tag
    }

    /// Some packet is on its way to the far end (retaining links).
    #[inline]
    pub fn on_wire(&self) -> bool {
        self.next_arr < self.end
    }

    /// Arrival time and tag of the next packet to reach the far end (retaining links).
    #[inline]
    pub fn next_arrival(&self) -> Option<(u64, T)> {
        (self.next_arr < self.end).then(|| {
            let e = &self.ring[self.slot(self.next_arr)];
            (e.arrival_ns, e.tag)
        })
    }

    /// Take the next packet to arrive (its time has come; retaining links): returns its tag.
    #[inline]
    pub fn take_arrival(&mut self) -> T {
        debug_assert!(self.next_arr < self.end, "arrival taken from an empty link");
        let tag = self.ring[self.slot(self.next_arr)].tag;
        self.next_arr += 1;
        if self.lost_ahead > 0 {
            self.skip_lost();
        }
        tag
    }

    /// Take the packet just admitted (queued, not lost) when nothing else was on the wire: its
    /// owner hands it on now instead of at its arrival (retaining links; the simulator's
    /// "Passing packets on", src/sim.rs). The link is left with nothing on the wire, as after
    /// [`Link::take_arrival`] of that packet.
    #[inline]
    pub fn pass_last(&mut self) {
        debug_assert!(self.next_arr + 1 == self.end && self.lost_ahead == 0);
        debug_assert!(!self.ring[self.slot(self.next_arr)].lost);
        self.next_arr = self.end;
    }

    /// Move the arrival cursor past the lost entries at it.
    #[inline(never)]
    fn skip_lost(&mut self) {
        while self.next_arr < self.end && self.ring[self.slot(self.next_arr)].lost {
            self.next_arr += 1;
            self.lost_ahead -= 1;
        }
    }

    /// The counters now, as the mark of a sample taken now (the emulator's time zero).
    pub fn mark(&self) -> SampleMark {
        SampleMark {
            drops: self.stats.drops,
            lost: self.stats.lost,
            busy_ps: self.stats.busy_ps,
        }
    }

    /// The queue sample at `now`, `dt` after the previous one (`mark`, updated).
    pub fn sample(&mut self, now: u64, dt: u64, mark: &mut SampleMark) -> QueueSample {
        let (queue_pkts, queue_bytes) = (self.queue_pkts(now), self.queue_bytes(now));
        let s = self.stats;
        let out = QueueSample {
            queue_pkts,
            queue_bytes,
            drops: s.drops - mark.drops,
            lost: s.lost - mark.lost,
            utilization: ((s.busy_ps - mark.busy_ps) as f64 / (dt as f64 * 1000.0)).min(1.0),
        };
        *mark = self.mark();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn link(rate: u64, delay: u64, limit: Option<u32>) -> Link {
        Link::new(
            rate,
            delay,
            limit,
            None,
            LossModel::new(LossCfg::None, Rng::new(1)),
            8,
        )
    }

    fn arrival(a: Admit) -> u64 {
        match a {
            Admit::Queued { arrival_ns, .. } => arrival_ns,
            o => panic!("not queued: {o:?}"),
        }
    }

    #[test]
    fn test_tso_frame_counts_once_against_the_packet_limit() {
        // 1500 B at 12 Mbit/s = 1 ms each. Limit 2 waiting packets. Three frames of 4 segments
        // offered at once: the first frame's head is on the wire at once (not waiting), its
        // three later segments do not count, so frames 2 and 3 both fit; a fourth frame head is
        // dropped (2 frames waiting); its continuation segments are not checked again.
        let mut l = link(12_000_000, 0, Some(2));
        l.count_frames();
        let queued = |a: Admit| matches!(a, Admit::Queued { .. });
        for f in 0..3 {
            for k in 0..4 {
                assert!(
                    queued(l.offer_frame_tagged(0, 1500, true, false, k > 0, ())),
                    "{f}/{k}"
                );
            }
        }
        assert_eq!(l.queue_pkts(0), 11, "segments waiting");
        assert_eq!(l.room(0), 0, "two frames wait");
        assert_eq!(
            l.offer_frame_tagged(0, 1500, true, false, false, ()),
            Admit::Dropped
        );
        // After 4 ms the first frame is gone and frame 2's head is on the wire: one frame waits.
        assert_eq!(l.room(4_000_000), 1);
        // A link that does not count frames (a router's) takes the same burst, continuation
        // marks and all, as segments: the limit is full after 3 packets.
        let mut p = link(12_000_000, 0, Some(2));
        let n = (0..12)
            .filter(|k| queued(p.offer_frame_tagged(0, 1500, true, false, k % 4 > 0, ())))
            .count();
        assert_eq!(n, 3);
    }

    #[test]
    fn test_link_serialises_then_delays() {
        // 1500 B at 12 Mbit/s = 1 ms; 10 ms delay.
        let mut l = link(12_000_000, 10_000_000, None);
        assert_eq!(arrival(l.offer(5_000, 1500, true, false)), 11_005_000);
        assert_eq!(arrival(l.offer(5_000, 1500, true, false)), 12_005_000);
        assert_eq!(l.queue_pkts(5_000), 1);
        assert_eq!(l.queue_bytes(5_000), 1500);
        assert_eq!(l.queue_pkts(1_005_000), 0);
    }

    #[test]
    fn test_remembered_tx_time_follows_length_and_rate() {
        // 1.0001 Gbit/s has no whole number of ps per byte (the remembered path); lengths
        // alternate and repeat, and a step changes the rate with the last length unchanged.
        let (r1, r2) = (1_000_100_000, 999_900_000);
        let mut l = link(r1, 0, None).with_schedule(
            vec![Step {
                at_ns: 1_000_000,
                rate_bps: Some(r2),
                delay_ns: None,
                loss: None,
            }],
            Some(0),
        );
        let mut busy = 0u64; // ps
        for (i, len) in [1500, 52, 52, 1500, 1500, 64, 1500, 1500, 52, 52]
            .into_iter()
            .enumerate()
        {
            let now = i as u64 * 300_000; // ns; the step falls between offers 3 and 4, both 1500 B
            let rate = if now >= 1_000_000 { r2 } else { r1 };
            busy = busy.max(now * 1000) + tx_time_ps(len, rate);
            let want = busy.div_ceil(1000);
            assert_eq!(arrival(l.offer(now, len, true, false)), want, "offer {i}");
        }
    }

    #[test]
    fn test_link_rate_step_halves_throughput_after_it() {
        // 12 Mbit/s, then 6 Mbit/s from 100 ms: a backlogged link delivers one 1500 B packet per
        // ms before and one per 2 ms after.
        let mut l = link(12_000_000, 0, None).with_schedule(
            vec![Step {
                at_ns: 100_000_000,
                rate_bps: Some(6_000_000),
                delay_ns: None,
                loss: None,
            }],
            Some(0),
        );
        let mut t = 0;
        let mut before = 0u64;
        let mut after = 0u64;
        let mut last = 0;
        // Offer a packet whenever the previous one finishes (always backlogged, never queued).
        while t < 300_000_000 {
            let a = arrival(l.offer(t, 1500, true, false));
            if a <= 100_000_000 {
                before += 1;
            } else if a > 150_000_000 && a <= 250_000_000 {
                after += 1;
            }
            last = a;
            t = a;
        }
        assert!(last > 0);
        assert_eq!(before, 100);
        assert_eq!(after, 50);
        assert_eq!(l.rate_bps(), 6_000_000);
    }

    #[test]
    fn test_link_step_applies_to_packets_offered_at_or_after_it() {
        // Packets queued before the step keep their old-rate finish times; the first offered at
        // the step's time is serialised at the new rate after them.
        let mut l = link(12_000_000, 0, None).with_schedule(
            vec![Step {
                at_ns: 500_000,
                rate_bps: Some(6_000_000),
                delay_ns: None,
                loss: None,
            }],
            Some(0),
        );
        assert_eq!(arrival(l.offer(0, 1500, true, false)), 1_000_000);
        assert_eq!(arrival(l.offer(0, 1500, true, false)), 2_000_000);
        assert_eq!(arrival(l.offer(499_999, 1500, true, false)), 3_000_000);
        assert_eq!(arrival(l.offer(500_000, 1500, true, false)), 5_000_000);
    }

    #[test]
    fn test_link_delay_decrease_never_reorders() {
        let mut l = link(12_000_000, 10_000_000, None).with_schedule(
            vec![Step {
                at_ns: 1_000_000,
                rate_bps: None,
                delay_ns: Some(1_000_000),
                loss: None,
            }],
            Some(0),
        );
        assert_eq!(arrival(l.offer(0, 1500, true, false)), 11_000_000);
        // After the step the delay is 1 ms but the packet cannot overtake: it arrives with the
        // previous one.
        assert_eq!(arrival(l.offer(1_000_000, 1500, true, false)), 11_000_000);
        // Once the earlier packet is out of the way the new delay shows.
        assert_eq!(arrival(l.offer(20_000_000, 1500, true, false)), 22_000_000);
        assert_eq!(l.delay_ns(), 1_000_000);
    }

    #[test]
    fn test_link_loss_step_starts_losing_at_its_time() {
        let mut l = link(1_000_000_000, 0, None).with_schedule(
            vec![
                Step {
                    at_ns: 1_000,
                    rate_bps: None,
                    delay_ns: None,
                    loss: Some(LossCfg::Bernoulli { p: 1.0 }),
                },
                Step {
                    at_ns: 2_000,
                    rate_bps: None,
                    delay_ns: None,
                    loss: Some(LossCfg::None),
                },
            ],
            Some(0),
        );
        let lost: Vec<bool> = [0, 999, 1_000, 1_999, 2_000, 3_000]
            .iter()
            .map(|&t| matches!(l.offer(t, 100, true, false), Admit::Lost { .. }))
            .collect();
        assert_eq!(lost, vec![false, false, true, true, false, false]);
        assert_eq!(l.stats.lost, 2);
    }

    /// Arrivals of `n` packets of 1500 B offered every 100 µs to a 1 Gbit/s, 1 ms link.
    fn arrivals(l: &mut Link, n: u64) -> Vec<u64> {
        (0..n)
            .map(|k| arrival(l.offer(k * 100_000, 1500, true, false)))
            .collect()
    }

    #[test]
    fn test_jitter_delays_within_its_range_and_keeps_order() {
        let ideal = arrivals(&mut link(1_000_000_000, 1_000_000, None), 2000);
        let j = Jitter::new(
            JitterCfg::Uniform { max_ns: 250_000 },
            Rng::for_entity(1, "jitter", "t"),
        );
        let mut l = link(1_000_000_000, 1_000_000, None).with_jitter(j);
        let got = arrivals(&mut l, 2000);
        // Never early, never more than the largest draw plus the wait behind a late predecessor
        // (packets 100 µs apart, so at most 250 µs in all), never reordered.
        let extra: Vec<u64> = got.iter().zip(&ideal).map(|(g, i)| g - i).collect();
        assert!(extra.iter().all(|&e| e <= 250_000), "{extra:?}");
        assert!(got.windows(2).all(|w| w[0] <= w[1]));
        // Uniform in [0, 250 µs], kept in order: the mean is a little above 125 µs.
        let mean = extra.iter().sum::<u64>() as f64 / extra.len() as f64;
        assert!((125_000.0..140_000.0).contains(&mean), "mean {mean}");
        // The queue is not affected: serialisation is unchanged.
        assert_eq!(l.stats.busy_ps, 2000 * 12_000_000);
        // Seeded: the same stream gives the same arrivals, another stream others.
        let again = Jitter::new(
            JitterCfg::Uniform { max_ns: 250_000 },
            Rng::for_entity(1, "jitter", "t"),
        );
        let other = Jitter::new(
            JitterCfg::Uniform { max_ns: 250_000 },
            Rng::for_entity(2, "jitter", "t"),
        );
        let mk = |j| link(1_000_000_000, 1_000_000, None).with_jitter(j);
        assert_eq!(arrivals(&mut mk(again), 2000), got);
        assert_ne!(arrivals(&mut mk(other), 2000), got);
    }

    #[test]
    fn test_empirical_jitter_follows_its_distribution_function() {
        // Half the mass uniform in [0, 10 µs], half in [10 µs, 1 ms]; a flat step up to 50 ms
        // with 0.001 of the mass (a rare outlier keeps its rare weight).
        let mut j = Jitter::new(
            JitterCfg::Empirical {
                cdf: vec![
                    (0, 0.0),
                    (10_000, 0.5),
                    (1_000_000, 0.999),
                    (49_000_000, 0.999),
                    (50_000_000, 1.0),
                ],
            },
            Rng::new(3),
        );
        let d: Vec<u64> = (0..200_000).map(|_| j.draw()).collect();
        let frac = |lo: u64, hi: u64| {
            d.iter().filter(|&&x| x >= lo && x <= hi).count() as f64 / d.len() as f64
        };
        assert!((0.495..0.505).contains(&frac(0, 10_000)));
        assert!((0.494..0.504).contains(&frac(10_001, 1_000_000)));
        assert_eq!(frac(1_000_001, 48_999_999), 0.0);
        assert!((0.0007..0.0013).contains(&frac(49_000_000, 50_000_000)));
        // A point distribution gives its value.
        let mut c = Jitter::new(
            JitterCfg::Empirical {
                cdf: vec![(7, 0.0), (7, 1.0)],
            },
            Rng::new(3),
        );
        assert_eq!(c.draw(), 7);
    }

    #[test]
    fn test_jitter_check_names_the_field() {
        let e = |cdf: Vec<(u64, f64)>| JitterCfg::Empirical { cdf }.check().unwrap_err().0;
        assert_eq!(e(vec![(5, 0.0)]), "jitter.cdf");
        assert_eq!(e(vec![(0, 0.0), (5, 0.5), (4, 1.0)]), "jitter.cdf[2]");
        assert_eq!(
            e(vec![(0, 0.0), (5, 0.5), (6, 0.4), (7, 1.0)]),
            "jitter.cdf[2]"
        );
        assert_eq!(e(vec![(0, 0.0), (5, 1.5)]), "jitter.cdf[1]");
        assert_eq!(e(vec![(0, 0.1), (5, 1.0)]), "jitter.cdf");
        assert_eq!(e(vec![(0, 0.0), (5, 0.9)]), "jitter.cdf");
        assert_eq!(e(vec![(0, 0.0), (20_000_000_000, 1.0)]), "jitter.cdf[1]");
        let u = JitterCfg::Uniform {
            max_ns: 20_000_000_000,
        };
        assert_eq!(u.check().unwrap_err().0, "jitter.max_ns");
        assert!(JitterCfg::Uniform { max_ns: 0 }.check().is_ok());
    }

    #[test]
    fn test_tick_releases_packets_at_tick_boundaries() {
        // Dummynet at HZ=100: 10 ms ticks. 1500 B at 12 Mbit/s = 1 ms of credit (12 kbit of the
        // 120 kbit a tick earns); 20 ms delay = 2 ticks.
        let mut l = link(12_000_000, 20_000_000, None).with_tick(10_000_000);
        // An idle queue counts from the tick before the arrival: both packets offered at 3 ms
        // move to the delay line at the first tick (10 ms) and leave it two ticks later.
        assert_eq!(arrival(l.offer(3_000_000, 1500, true, false)), 30_000_000);
        assert_eq!(arrival(l.offer(3_000_000, 1500, true, false)), 30_000_000);
        // They hold their queue slots until that tick, not 1 ms each as on an ideal link.
        assert_eq!(l.queue_pkts(9_999_999), 1);
        assert_eq!(l.queue_pkts(10_000_000), 0);
        // At 25 ms the queue is idle with 96 kbit of the first tick's credit left: eight
        // packets go to the delay line at once (tick 2, 20 ms) and out at 40 ms; the ninth
        // waits for the next tick's credit (30 ms, out at 50 ms).
        let a: Vec<u64> = (0..9)
            .map(|_| arrival(l.offer(25_000_000, 1500, true, false)))
            .collect();
        assert_eq!(a[..8], [40_000_000; 8]);
        assert_eq!(a[8], 50_000_000);
    }

    #[test]
    fn test_tick_keeps_the_rate_and_bunches_a_backlog() {
        // 100 packets offered at once, 1 ms each, 10 ms ticks: ten leave per tick, the last at
        // 100 ms — the same rate as without a tick, delivered in bunches.
        let mut l = link(12_000_000, 0, None).with_tick(10_000_000);
        let got: Vec<u64> = (0..100)
            .map(|_| arrival(l.offer(0, 1500, true, false)))
            .collect();
        let want: Vec<u64> = (0..100).map(|k| (k / 10 + 1) * 10_000_000).collect();
        assert_eq!(got, want);
        // A 1 ms tick over 1 ms packets changes nothing.
        let mut fine = link(12_000_000, 0, None).with_tick(1_000_000);
        let mut ideal = link(12_000_000, 0, None);
        for k in 0..50 {
            let t = k * 700_000;
            assert_eq!(
                arrival(fine.offer(t, 1500, true, false)),
                arrival(ideal.offer(t, 1500, true, false)).div_ceil(1_000_000) * 1_000_000
            );
        }
    }

    #[test]
    fn test_tick_with_no_delay_lets_credited_packets_through_at_once() {
        // With credit left and no delay line, Dummynet hands the packet on during the call.
        let mut l = link(12_000_000, 0, None).with_tick(10_000_000);
        assert_eq!(arrival(l.offer(0, 1500, true, false)), 10_000_000);
        assert_eq!(arrival(l.offer(25_000_000, 1500, true, false)), 25_000_000);
    }

    #[test]
    fn test_tick_holds_queue_slots_until_the_tick() {
        // 5 waiting slots; 6 packets offered at 0 fill them. At 5 ms an ideal link has sent
        // five and takes more; a 10 ms tick has sent none and drops.
        let mut ideal = link(12_000_000, 0, Some(5));
        let mut tick = link(12_000_000, 0, Some(5)).with_tick(10_000_000);
        for l in [&mut ideal, &mut tick] {
            let n = (0..8)
                .filter(|_| matches!(l.offer(0, 1500, true, false), Admit::Queued { .. }))
                .count();
            assert_eq!(n, 6);
        }
        assert!(matches!(
            ideal.offer(5_000_000, 1500, true, false),
            Admit::Queued { .. }
        ));
        assert_eq!(tick.offer(5_000_000, 1500, true, false), Admit::Dropped);
        assert_eq!(tick.room(10_000_000), 5);
        // The serialisation time counted is the packets' own, not the ticks'.
        assert_eq!(tick.stats.busy_ps, 6 * 1_000_000_000);
        assert_eq!(tick.busy_done_ps(3_000_000), 3_000_000_000);
        // Without a tick the link stays on the plain path.
        assert!(link(1, 0, None).retaining().with_tick(0).plain);
        assert!(!link(1, 0, None).retaining().with_tick(1).plain);
    }

    #[test]
    fn test_link_schedule_waits_for_origin() {
        let mut l = link(12_000_000, 0, None).with_schedule(
            vec![Step {
                at_ns: 0,
                rate_bps: Some(6_000_000),
                delay_ns: None,
                loss: None,
            }],
            None,
        );
        assert_eq!(arrival(l.offer(0, 1500, true, false)), 1_000_000);
        l.set_origin(10_000_000);
        assert_eq!(arrival(l.offer(9_000_000, 1500, true, false)), 10_000_000);
        assert_eq!(arrival(l.offer(10_000_000, 1500, true, false)), 12_000_000);
    }

    #[test]
    fn test_loss_list_index_continues_across_switch() {
        let mut m = LossModel::new(LossCfg::None, Rng::new(1));
        assert!(!m.lose());
        assert!(!m.lose());
        m.set_cfg(LossCfg::List {
            packets: vec![3, 1, 2],
        });
        // Index 1 is in the past; 2 and 3 are lost.
        let lost: Vec<bool> = (0..3).map(|_| m.lose()).collect();
        assert_eq!(lost, vec![true, true, false]);
    }

    #[test]
    fn test_check_schedule_rejects_unsorted_and_empty_steps() {
        let s = |at, rate| Step {
            at_ns: at,
            rate_bps: rate,
            delay_ns: None,
            loss: None,
        };
        assert!(check_schedule(&[s(1, Some(5)), s(2, Some(6))], false).is_ok());
        let e = check_schedule(&[s(2, Some(5)), s(2, Some(6))], false).unwrap_err();
        assert_eq!(e.0, "schedule.1.at_ns");
        let e = check_schedule(&[s(1, Some(0))], false).unwrap_err();
        assert_eq!(e.0, "schedule.0.rate_bps");
        assert!(check_schedule(&[s(1, Some(0))], true).is_ok());
        let e = check_schedule(&[s(1, None)], true).unwrap_err();
        assert!(e.1.contains("changes nothing"), "{e:?}");
    }

    #[test]
    fn test_sample_reports_interval_deltas() {
        let mut l = link(12_000_000, 0, Some(1));
        let mut mark = SampleMark::default();
        for _ in 0..4 {
            l.offer(0, 1500, true, false);
        }
        // One in service, one waiting, two dropped; 2 ms of work admitted in a 1 ms interval.
        let s = l.sample(0, 1_000_000, &mut mark);
        assert_eq!(
            (s.queue_pkts, s.queue_bytes, s.drops, s.lost),
            (1, 1500, 2, 0)
        );
        assert_eq!(s.utilization, 1.0);
        let s = l.sample(4_000_000, 4_000_000, &mut mark);
        assert_eq!((s.queue_pkts, s.drops, s.utilization), (0, 0, 0.0));
    }

    proptest::proptest! {
        /// A retaining link (one FIFO for the queue and the wire) answers exactly as the plain
        /// virtual queue plus a separate FIFO of packets on the wire did: same admissions,
        /// arrival times, queue lengths and bytes, free room, next finish, and arrivals taken in
        /// the same order with the same tags — with random loss, byte limits and a schedule
        /// whose delay goes down (packets then arrive with their predecessor).
        #[test]
        fn prop_retaining_link_matches_two_fifos(
            ops in proptest::collection::vec((0u64..400_000, 40u32..1500, 0u8..4), 1..300),
            limit in proptest::option::of(1u32..12),
            limit_bytes in proptest::option::of(3000u64..20000),
            p in proptest::sample::select(vec![0.0, 0.1, 0.5]),
            delay_step in proptest::sample::select(vec![0u64, 10_000, 3_000_000]),
        ) {
            let make = || {
                Link::<u32>::new(
                    100_000_000,
                    2_000_000,
                    limit,
                    limit_bytes,
                    LossModel::new(LossCfg::Bernoulli { p }, Rng::new(9)),
                    4,
                )
                .with_schedule(
                    vec![Step { at_ns: 5_000_000, rate_bps: Some(30_000_000), delay_ns: Some(delay_step), loss: None }],
                    Some(0),
                )
            };
            let mut one = make().retaining();
            let mut two = make();
            let mut wire: VecDeque<(u64, u32)> = VecDeque::new();
            let mut now = 0u64;
            for (k, &(gap, len, what)) in ops.iter().enumerate() {
                now += gap;
                // Take every arrival due by now, in order, from both.
                while let Some(&(at, tag)) = wire.front() {
                    if at > now {
                        break;
                    }
                    proptest::prop_assert_eq!(one.next_arrival(), Some((at, tag)));
                    proptest::prop_assert_eq!(one.take_arrival(), tag);
                    wire.pop_front();
                }
                proptest::prop_assert_eq!(one.next_arrival(), wire.front().copied());
                match what {
                    0 => proptest::prop_assert_eq!(one.room(now), two.room(now)),
                    1 => {
                        proptest::prop_assert_eq!(
                            (one.queue_pkts(now), one.queue_bytes(now)),
                            (two.queue_pkts(now), two.queue_bytes(now))
                        );
                        // Nothing on the wire: only the virtual queue is kept.
                        if wire.is_empty() {
                            proptest::prop_assert_eq!(one.kept(), one.unfinished());
                        }
                    }
                    _ => {}
                }
                proptest::prop_assert_eq!(one.next_finish_ps(), two.next_finish_ps());
                let a = one.offer_tagged(now, len, true, what == 3 && k % 5 == 0, k as u32);
                let b = two.offer_tagged(now, len, true, what == 3 && k % 5 == 0, k as u32);
                proptest::prop_assert_eq!(a, b);
                if let Admit::Queued { arrival_ns, .. } = a {
                    wire.push_back((arrival_ns, k as u32));
                }
                proptest::prop_assert_eq!(one.stats, two.stats);
            }
        }
    }
}
