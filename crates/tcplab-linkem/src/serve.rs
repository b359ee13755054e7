//! The emulator's I/O loop: one thread, one AF_PACKET socket per interface, `ppoll` with a
//! nanosecond timeout until the next departure.
//!
//! Per iteration: wait (until a frame arrives, a packet is due, a sample is due or a control
//! command comes in), read every pending frame and offer it to its link direction's [`Pipe`] at
//! its *kernel receive timestamp* (so the schedule does not depend on when this thread got to the
//! frame), then send every packet whose due time has passed and record how late it left.
//!
//! Self-check (issue: "the emulator checks itself"): for every direction it reports
//! * `lateness`: actual send time − scheduled departure, i.e. the delay added on top of the
//!   configured one (the delivered one-way delay is `delay_ns + lateness`);
//! * `own_lateness`: the lateness of the packets that were not held back by an earlier packet
//!   sent late (their predecessor on the direction left before they were due): the wake-up
//!   lateness of this thread itself. A late wake-up makes every packet due meanwhile late, the
//!   later ones by less; `lateness` counts all of them, this one each wake-up once. It is what
//!   `tcplab compare` gives the simulator's link as jitter (tcplab_sim::link "Jitter", whose
//!   order-keeping rule holds the later packets back in the same way);
//! * `input_lag`: time between the kernel receiving a frame and this thread reading it;
//! * `achieved_rate_bps`: over every busy period of ≥ 20 ms, configured rate × scheduled span /
//!   actual span between its first and last departure ([`RateMeter`]) — the rate the far end
//!   really saw while the link was backlogged;
//! * `socket_drops` (frames the kernel dropped because this thread did not read them in time),
//!   `oversize` (frames larger than the MTU: segmentation offload was left on).
//!
//! The kernel engine (python/tcplab/kernel) turns these into a valid/invalid verdict.
//! No allocation per packet: frames live in a pool of fixed-size slots that only grows.

use crate::config::EmuConfig;
use crate::hist::{Hist, HistSummary, Lateness, RateMeter, ThreadSummary, ThreadTiming};
use crate::pipe::{Offer, Pipe, SampleMark};
use crate::sys::{self, PacketSocket};
use crate::tcpobs::{self, FlowCount, FlowObs};
use serde::Serialize;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_sim::measure::{LinkId, LinkTotals, QueueSeries};
use tcplab_sim::rng::Rng;

const ETH_HDR: u32 = 14;
/// Busy periods shorter than this do not enter the achieved-rate measurement: over shorter spans
/// the wake-up jitter of their first and last departure (tens of µs) would dominate.
const RATE_MIN_SPAN_NS: u64 = 20_000_000;
/// Frames read per interface per loop iteration before the loop looks at departures again.
const RX_BATCH: usize = 64;
/// Departures kept by the `TCPLAB_LINKEM_TRACE` debug trace (see [`serve`]); later ones are
/// counted, not kept, so that the loop never allocates.
const TRACE_MAX: usize = 4_000_000;

/// Frame buffers: fixed-size slots addressed by index; the free list is reused, so after the
/// first RTT the pool stops growing.
struct Pool {
    slot: usize,
    data: Vec<u8>,
    lens: Vec<u32>,
    free: Vec<u32>,
}

impl Pool {
    fn new(slot: usize) -> Pool {
        let mut p = Pool {
            slot,
            data: Vec::new(),
            lens: Vec::new(),
            free: Vec::new(),
        };
        p.grow(1024);
        p
    }

    fn grow(&mut self, n: usize) {
        let old = self.lens.len();
        self.data.resize((old + n) * self.slot, 0);
        self.lens.resize(old + n, 0);
        self.free.extend((old..old + n).rev().map(|i| i as u32));
    }

    fn take(&mut self) -> u32 {
        if self.free.is_empty() {
            let n = self.lens.len();
            self.grow(n);
        }
        self.free.pop().expect("pool grown")
    }

    fn put(&mut self, t: u32) {
        self.free.push(t);
    }

    fn buf_mut(&mut self, t: u32) -> &mut [u8] {
        let s = t as usize * self.slot;
        &mut self.data[s..s + self.slot]
    }

    fn frame(&self, t: u32) -> &[u8] {
        let s = t as usize * self.slot;
        &self.data[s..s + self.lens[t as usize] as usize]
    }
}

struct Port {
    sock: PacketSocket,
    name: String,
    /// The lane fed by frames arriving on this interface.
    feeds: usize,
    frames: u64,
    kernel_drops: u64,
    oversize: u64,
    bypass: u64,
    outgoing: u64,
}

struct Lane {
    pipe: Pipe,
    link: String,
    dir: &'static str,
    from: String,
    to: String,
    out_port: usize,
    monitor: bool,
    lateness: Lateness,
    input_lag: Hist,
    rate: RateMeter,
    delivered: u64,
    delivered_bytes: u64,
    send_retries: u64,
    send_errors: u64,
    /// Counters at the previous queue sample.
    mark: SampleMark,
    /// Watched connections whose data enters here / whose ACKs leave here.
    watch_data: Vec<usize>,
    watch_ack: Vec<usize>,
    /// Counted flows leaving here.
    counts: Vec<usize>,
}

impl Lane {
    /// Link `link`'s direction `dir` served by `pipe`, leaving through port `out_port`; its
    /// end nodes' names are set by the caller.
    fn new(pipe: Pipe, link: &str, dir: &'static str, out_port: usize, monitor: bool) -> Lane {
        Lane {
            pipe,
            link: link.to_string(),
            dir,
            from: String::new(),
            to: String::new(),
            out_port,
            monitor,
            lateness: Lateness::default(),
            input_lag: Hist::default(),
            rate: RateMeter::new(RATE_MIN_SPAN_NS),
            delivered: 0,
            delivered_bytes: 0,
            send_retries: 0,
            send_errors: 0,
            mark: SampleMark::default(),
            watch_data: Vec::new(),
            watch_ack: Vec::new(),
            counts: Vec::new(),
        }
    }
}

/// Per-direction statistics: the simulator's (docs/design.md §4 `links`), then what the
/// emulator delivered and its self-check.
#[derive(Serialize)]
pub struct LaneReport {
    #[serde(flatten)]
    pub link: LinkTotals,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub check: LaneCheck,
}

#[derive(Serialize)]
pub struct LaneCheck {
    pub lateness: HistSummary,
    pub own_lateness: HistSummary,
    pub input_lag: HistSummary,
    /// Busy periods (≥ 20 ms) measured, their packets, and the time they spanned.
    pub rate_periods: u64,
    pub rate_packets: u64,
    pub rate_span_ns: u64,
    pub achieved_rate_bps: Option<f64>,
    pub socket_drops: u64,
    pub oversize: u64,
    pub send_retries: u64,
    pub send_errors: u64,
    pub bypass: u64,
    pub outgoing_seen: u64,
    pub left_in_flight: u64,
}

/// Cumulative delivered packets and payload bytes of the counted flows, per interval.
#[derive(Serialize, Default)]
pub struct FlowSeries {
    pub flow: Vec<String>,
    pub time_ns: Vec<u64>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

/// Cumulative observations of the watched connections, per interval.
#[derive(Serialize, Default)]
pub struct WatchSeries {
    pub flow: Vec<String>,
    pub time_ns: Vec<u64>,
    pub data_segments: Vec<u64>,
    pub retransmitted_segments: Vec<u64>,
    pub dupacks: Vec<u64>,
    pub sack_blocks: Vec<u64>,
}

#[derive(Serialize)]
pub struct Report {
    /// CLOCK_MONOTONIC when the emulator started and the experiment's time zero (`start`).
    pub epoch_mono_ns: u64,
    pub t0_mono_ns: Option<u64>,
    pub stopped_by: &'static str,
    pub runtime_ns: u64,
    pub links: Vec<LaneReport>,
    pub queue_series: QueueSeries,
    pub flows: Vec<FlowObs>,
    pub counts: Vec<FlowCount>,
    pub flow_series: FlowSeries,
    pub watch_series: WatchSeries,
    /// The SCHED_FIFO priority the loop ran at, if any.
    pub realtime_priority: Option<i32>,
    /// The thread's wake-up lateness and the gaps between its sends, over all directions
    /// ([`ThreadTiming`]; tcplab_sim::emuthread models the thread with them).
    pub thread: ThreadSummary,
}

/// Offset CLOCK_REALTIME − CLOCK_MONOTONIC, read between two monotonic reads.
fn realtime_offset() -> i128 {
    let m1 = sys::mono_ns();
    let r = sys::realtime_ns();
    let m2 = sys::mono_ns();
    r as i128 - ((m1 as i128 + m2 as i128) / 2)
}

/// Run the emulator until `stop` is set, standard input says `stop` or closes (when
/// `control_stdin`), or `max_runtime_ns` passes. Prints `ready` on standard output once every
/// socket is bound.
pub fn serve(cfg: &EmuConfig, stop: &AtomicBool) -> Result<Report, String> {
    cfg.check()?;
    sys::set_timer_slack_ns(1);
    let max_mtu = cfg.links.iter().map(|l| l.mtu).max().unwrap_or(1500);
    // Room for the Ethernet header, a VLAN tag and slack; a larger frame is reported, not sent.
    let slot = (max_mtu + ETH_HDR + 4 + 46) as usize;
    let mut pool = Pool::new(slot);
    let mut ports: Vec<Port> = Vec::with_capacity(cfg.links.len() * 2);
    let mut lanes: Vec<Lane> = Vec::with_capacity(cfg.links.len() * 2);
    for l in &cfg.links {
        for (ifname, dir, from, to, chan) in [
            (&l.a_if, "ab", &l.a, &l.b, &l.ab),
            (&l.b_if, "ba", &l.b, &l.a, &l.ba),
        ] {
            let sock = PacketSocket::open(ifname, cfg.socket_buffer_bytes)
                .map_err(|e| format!("link {:?}: interface {ifname:?}: {e}", l.name))?;
            let lane = lanes.len();
            ports.push(Port {
                sock,
                name: ifname.clone(),
                feeds: lane,
                frames: 0,
                kernel_drops: 0,
                oversize: 0,
                bypass: 0,
                outgoing: 0,
            });
            // Frames entering at a_if leave through b_if and vice versa.
            let out_port = if dir == "ab" { lane + 1 } else { lane - 1 };
            let rng = Rng::for_entity(cfg.seed, "loss", &format!("{}.{dir}", l.name));
            let jitter_rng = Rng::for_entity(cfg.seed, "jitter", &format!("{}.{dir}", l.name));
            let pipe = Pipe::new(chan, rng).with_jitter(&chan.jitter, jitter_rng);
            let mut lane = Lane::new(pipe, &l.name, dir, out_port, l.monitor);
            lane.from.clone_from(from);
            lane.to.clone_from(to);
            lanes.push(lane);
        }
    }
    let mut obs: Vec<FlowObs> = cfg.watch.iter().map(|w| FlowObs::new(&w.flow)).collect();
    for (i, w) in cfg.watch.iter().enumerate() {
        let data_lane = 2 * w.link + usize::from(w.data_dir == "ba");
        lanes[data_lane].watch_data.push(i);
        lanes[data_lane ^ 1].watch_ack.push(i);
    }
    let mut counts: Vec<FlowCount> = cfg
        .count
        .iter()
        .map(|c| FlowCount {
            flow: c.flow.clone(),
            packets: 0,
            bytes: 0,
        })
        .collect();
    for (i, c) in cfg.count.iter().enumerate() {
        lanes[2 * c.link + usize::from(c.dir == "ba")]
            .counts
            .push(i);
    }
    let realtime = match cfg.realtime_priority {
        Some(p) => match sys::set_realtime(p) {
            Ok(()) => Some(p),
            Err(e) => {
                eprintln!("tcplab-linkem: SCHED_FIFO {p} not available ({e}); normal scheduling");
                None
            }
        },
        None => None,
    };
    let mut flow_series = FlowSeries::default();
    let mut watch_series = WatchSeries::default();
    // Flush anything that arrived between bind and now (nothing should have).
    for p in &ports {
        let b = pool.buf_mut(0);
        while let Ok(Some(_)) = p.sock.recv(b) {}
        let _ = p.sock.take_stats();
    }

    // Debug aid, not used by the engine: with `TCPLAB_LINKEM_TRACE=FILE` every departure's
    // lane, due time and send time (ns from the epoch) are kept in a buffer allocated here and
    // written to FILE as text when the run ends — the data behind the README's measurement of
    // how the lateness of the lanes of one run is correlated ("The real-kernel engine").
    let mut trace: Option<Trace> = std::env::var("TCPLAB_LINKEM_TRACE")
        .ok()
        .filter(|p| !p.is_empty())
        .map(|path| Trace {
            path,
            rows: Vec::with_capacity(TRACE_MAX),
            not_kept: 0,
        });
    let mut thread = ThreadTiming::default();
    let epoch = sys::mono_ns();
    let mut rt_off = realtime_offset();
    let mut fds: Vec<i32> = ports.iter().map(|p| p.sock.fd()).collect();
    let stdin_slot = if cfg.control_stdin {
        fds.push(0);
        Some(fds.len() - 1)
    } else {
        None
    };
    let mut ready = vec![false; fds.len()];
    let mut ctl_buf = [0u8; 256];
    let mut ctl_line: Vec<u8> = Vec::with_capacity(256);
    let mut t0: Option<u64> = None;
    let mut next_sample: Option<u64> = None;
    let mut sample_k: u64 = 0;
    let mut next_housekeeping = 1_000_000_000u64;
    let mut series = QueueSeries::default();
    let deadline = cfg.max_runtime_ns;
    let interval = cfg.interval_ns;
    let spin = cfg.spin_ns;
    let mut stopped_by = "stop";
    let mut timeout: Option<u64> = Some(0);

    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "ready {epoch}");
        let _ = out.flush();
    }

    loop {
        sys::poll(&fds, &mut ready, timeout).map_err(|e| format!("ppoll: {e}"))?;
        let now = sys::mono_ns() - epoch;
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if deadline.is_some_and(|d| now >= d) {
            stopped_by = "max_runtime";
            break;
        }
        // Control commands.
        if let Some(si) = stdin_slot {
            if ready[si] {
                match sys::read_fd(0, &mut ctl_buf).map_err(|e| format!("stdin: {e}"))? {
                    Some(0) => {
                        stopped_by = "eof";
                        break;
                    }
                    Some(n) => ctl_line.extend_from_slice(&ctl_buf[..n]),
                    None => {}
                }
                let mut quit = false;
                while let Some(pos) = ctl_line.iter().position(|&c| c == b'\n') {
                    let line: Vec<u8> = ctl_line.drain(..=pos).collect();
                    let text = String::from_utf8_lossy(&line);
                    let mut words = text.split_whitespace();
                    match (words.next(), words.next()) {
                        (Some("stop"), _) => quit = true,
                        (Some("start"), Some(t)) => {
                            let t0_abs: u64 =
                                t.parse().map_err(|_| format!("bad start time {t:?}"))?;
                            let t0_rel = t0_abs.saturating_sub(epoch);
                            t0 = Some(t0_abs);
                            next_sample = Some(t0_rel + interval);
                            sample_k = 0;
                            for l in &mut lanes {
                                // Time zero of the schedules and of the queue samples' counts.
                                l.pipe.start(t0_rel);
                                l.mark = l.pipe.mark();
                            }
                        }
                        _ => return Err(format!("unknown control command {text:?}")),
                    }
                }
                if quit {
                    stopped_by = "stop";
                    break;
                }
            }
        }
        // Queue samples at t0 + k·interval.
        while let Some(ts) = next_sample {
            if now < ts {
                break;
            }
            sample_k += 1;
            for (li, l) in lanes.iter_mut().enumerate().filter(|(_, l)| l.monitor) {
                // The simulator's sample (crates/tcplab-sim/src/link.rs): drops and losses since
                // the previous sample, utilisation of the interval.
                let q = l.pipe.sample(ts, interval, &mut l.mark);
                series.push(li as u32, l.dir, sample_k * interval, &q);
            }
            for c in &counts {
                flow_series.flow.push(c.flow.clone());
                flow_series.time_ns.push(sample_k * interval);
                flow_series.packets.push(c.packets);
                flow_series.bytes.push(c.bytes);
            }
            for o in &obs {
                watch_series.flow.push(o.flow.clone());
                watch_series.time_ns.push(sample_k * interval);
                watch_series.data_segments.push(o.data_segments);
                watch_series
                    .retransmitted_segments
                    .push(o.retransmitted_segments);
                watch_series.dupacks.push(o.dupacks);
                watch_series.sack_blocks.push(o.sack_blocks);
            }
            next_sample = Some(ts + interval);
        }
        // Arrivals.
        for pi in 0..ports.len() {
            if !ready[pi] {
                continue;
            }
            let li = ports[pi].feeds;
            for _ in 0..RX_BATCH {
                let tok = pool.take();
                let info = match ports[pi].sock.recv(pool.buf_mut(tok)) {
                    Ok(Some(i)) => i,
                    Ok(None) => {
                        pool.put(tok);
                        break;
                    }
                    Err(e) => return Err(format!("recv on {}: {e}", ports[pi].name)),
                };
                let port = &mut ports[pi];
                port.frames += 1;
                if info.outgoing {
                    port.outgoing += 1;
                    pool.put(tok);
                    continue;
                }
                if info.truncated {
                    port.oversize += 1;
                    pool.put(tok);
                    continue;
                }
                pool.lens[tok as usize] = info.len as u32;
                let rx_now = sys::mono_ns() - epoch;
                // Kernel receive stamp → monotonic, relative to the epoch.
                let arrival = info
                    .ts_realtime_ns
                    .map(|r| r as i128 - rt_off - epoch as i128)
                    .filter(|&a| {
                        a >= 0 && a <= rx_now as i128 && rx_now as i128 - a < 1_000_000_000
                    })
                    .map_or(rx_now, |a| a as u64);
                let lane = &mut lanes[li];
                lane.input_lag.add(rx_now - arrival);
                let Some(ip_len) = tcpobs::ipv4_len(pool.frame(tok)) else {
                    // Not IPv4 (the engine sets static neighbours and disables IPv6, so this is
                    // rare): pass it on at once, unimpaired.
                    port.bypass += 1;
                    let _ = ports[lane.out_port].sock.send(pool.frame(tok));
                    pool.put(tok);
                    continue;
                };
                if !lane.watch_data.is_empty() {
                    if let Some(seg) = tcpobs::parse(pool.frame(tok)) {
                        for &wi in &lane.watch_data {
                            let w = &cfg.watch[wi];
                            if seg.saddr == w.src
                                && seg.daddr == w.dst
                                && seg.sport == w.sport
                                && seg.dport == w.dport
                            {
                                obs[wi].on_data(&seg, arrival + epoch);
                            }
                        }
                    }
                }
                let lossy = cfg.loss_only.is_empty()
                    || tcpobs::parse_l4(pool.frame(tok))
                        .is_some_and(|l4| cfg.loss_only.iter().any(|k| k.matches(&l4)));
                match lane.pipe.offer_with(arrival, ip_len, tok, lossy) {
                    Offer::Queued(_) => {}
                    Offer::Dropped | Offer::Lost => pool.put(tok),
                }
            }
        }
        // Departures.
        let mut next_due: Option<u64> = None;
        for (li, lane) in lanes.iter_mut().enumerate() {
            let now_l = sys::mono_ns() - epoch;
            let out_port = lane.out_port;
            while let Some(d) = lane.pipe.pop_due(now_l) {
                match ports[out_port].sock.send(pool.frame(d.token)) {
                    Ok(true) => {}
                    Ok(false) => {
                        // Send buffer momentarily full: count it and drop (never observed with
                        // the 16 MB buffers used).
                        lane.send_retries += 1;
                    }
                    Err(_) => lane.send_errors += 1,
                }
                let sent = sys::mono_ns() - epoch;
                lane.lateness.on_departure(d.due, sent);
                thread.on_departure(d.due, sent);
                if let Some(t) = trace.as_mut() {
                    if t.rows.len() < TRACE_MAX {
                        t.rows.push((li as u16, d.due, sent));
                    } else {
                        t.not_kept += 1;
                    }
                }
                lane.rate.on_departure(d.back_to_back, d.due, sent);
                lane.delivered += 1;
                lane.delivered_bytes += d.len as u64;
                if !lane.watch_ack.is_empty() {
                    if let Some(seg) = tcpobs::parse(pool.frame(d.token)) {
                        for &wi in &lane.watch_ack {
                            let w = &cfg.watch[wi];
                            if seg.saddr == w.dst
                                && seg.daddr == w.src
                                && seg.sport == w.dport
                                && seg.dport == w.sport
                            {
                                obs[wi].on_ack(&seg);
                            }
                        }
                    }
                }
                if !lane.counts.is_empty() {
                    if let Some(l4) = tcpobs::parse_l4(pool.frame(d.token)) {
                        for &ci in &lane.counts {
                            let c = &cfg.count[ci];
                            if l4.proto == c.proto
                                && l4.saddr == c.src
                                && l4.daddr == c.dst
                                && l4.sport == c.sport
                                && l4.dport == c.dport
                            {
                                counts[ci].packets += 1;
                                counts[ci].bytes += l4.payload as u64;
                            }
                        }
                    }
                }
                pool.put(d.token);
            }
            if let Some(due) = lane.pipe.next_due() {
                next_due = Some(next_due.map_or(due, |n: u64| n.min(due)));
            }
        }
        // Housekeeping once a second: re-read the clock offset (NTP may step the wall clock)
        // and collect the kernel's per-socket counters before they wrap.
        if now >= next_housekeeping {
            rt_off = realtime_offset();
            for p in &mut ports {
                if let Ok((_, drops)) = p.sock.take_stats() {
                    p.kernel_drops += drops;
                }
            }
            next_housekeeping = now + 1_000_000_000;
        }
        // Sleep until the next thing to do; spin for the last `spin_ns` of it.
        let mut next = next_housekeeping;
        for t in [next_due, next_sample, deadline].into_iter().flatten() {
            next = next.min(t);
        }
        let now = sys::mono_ns() - epoch;
        timeout = Some(if next <= now + spin {
            0
        } else {
            next - now - spin
        });
    }

    let end = sys::mono_ns() - epoch;
    if let Some(t) = trace.take() {
        write_trace(&t, &lanes).map_err(|e| format!("TCPLAB_LINKEM_TRACE={}: {e}", t.path))?;
    }
    for p in &mut ports {
        if let Ok((_, drops)) = p.sock.take_stats() {
            p.kernel_drops += drops;
        }
    }
    let mut links: Vec<LaneReport> = Vec::with_capacity(lanes.len());
    for lane in &mut lanes {
        lane.rate.finish();
        let left = lane.pipe.in_flight() as u64;
        for d in lane.pipe.drain_flight() {
            pool.put(d.token);
        }
        links.push(lane_report(lane, left));
    }
    for p in &ports {
        let r = &mut links[p.feeds];
        r.check.socket_drops += p.kernel_drops;
        r.check.oversize += p.oversize;
        r.check.bypass += p.bypass;
        r.check.outgoing_seen += p.outgoing;
    }
    series.name_links(|li| lanes[li as usize].link.clone());
    Ok(Report {
        epoch_mono_ns: epoch,
        t0_mono_ns: t0,
        stopped_by,
        runtime_ns: end,
        links,
        queue_series: series,
        flows: obs,
        counts,
        flow_series,
        watch_series,
        realtime_priority: realtime,
        thread: thread.summary(),
    })
}

/// The `TCPLAB_LINKEM_TRACE` debug trace: where it goes, the departures kept (direction,
/// due time, send time) and how many were not kept.
struct Trace {
    path: String,
    rows: Vec<(u16, u64, u64)>,
    not_kept: u64,
}

/// The `TCPLAB_LINKEM_TRACE` file: a header naming the lanes by index, then one line per
/// departure, `lane due_ns sent_ns`, and the count of departures not kept.
fn write_trace(t: &Trace, lanes: &[Lane]) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(&t.path)?);
    for (i, l) in lanes.iter().enumerate() {
        writeln!(w, "# lane {i} {}.{}", l.link, l.dir)?;
    }
    writeln!(w, "# not kept {}", t.not_kept)?;
    for (li, due, sent) in &t.rows {
        writeln!(w, "{li} {due} {sent}")?;
    }
    w.flush()
}

fn lane_report(lane: &Lane, left: u64) -> LaneReport {
    let s = lane.pipe.stats();
    let achieved = match lane.rate.ratio() {
        Some(r) if lane.pipe.rate_bps > 0 => Some(lane.pipe.rate_bps as f64 * r),
        _ => None,
    };
    let id = LinkId {
        name: lane.link.clone(),
        dir: lane.dir,
        from: lane.from.clone(),
        to: lane.to.clone(),
        monitor: lane.monitor,
    };
    LaneReport {
        link: LinkTotals::new(id, lane.pipe.rate_bps, lane.pipe.delay_ns, s),
        delivered: lane.delivered,
        delivered_bytes: lane.delivered_bytes,
        check: LaneCheck {
            lateness: lane.lateness.all.summary(),
            own_lateness: lane.lateness.own.summary(),
            input_lag: lane.input_lag.summary(),
            rate_periods: lane.rate.periods(),
            rate_packets: lane.rate.packets(),
            rate_span_ns: lane.rate.span_ns(),
            achieved_rate_bps: achieved,
            socket_drops: 0,
            oversize: 0,
            send_retries: lane.send_retries,
            send_errors: lane.send_errors,
            bypass: 0,
            outgoing_seen: 0,
            left_in_flight: left,
        },
    }
}

/// Parse a JSON configuration, run until stopped (standard input `stop`/EOF, or
/// `max_runtime_ns`) and return the report as JSON.
pub fn serve_json(config_json: &str) -> Result<String, String> {
    let cfg = EmuConfig::from_json(config_json)?;
    let stop = AtomicBool::new(false);
    let report = serve(&cfg, &stop)?;
    serde_json::to_string(&report).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChanCfg, QueueCfg};

    fn lane(monitor: bool) -> Lane {
        let chan = ChanCfg {
            rate_bps: 10_000_000,
            delay_ns: 5_000_000,
            queue: QueueCfg::default(),
            loss: Default::default(),
            outages: vec![],
            schedule: vec![],
            jitter: Default::default(),
            tick_ns: 0,
        };
        Lane::new(Pipe::new(&chan, Rng::new(1)), "bn", "ab", 1, monitor)
    }

    #[test]
    fn test_reports_carry_the_simulators_fields() {
        // The kernel engine (python/tcplab/kernel/result.py) reads the simulator's `links`
        // fields and `queue_series` columns from the emulator's report.
        let mut l = lane(true);
        for i in 0..3 {
            l.pipe.offer(i * 1_000_000, 1500, i as u32);
        }
        let v = serde_json::to_value(lane_report(&l, 0)).unwrap();
        let id = LinkId {
            name: String::new(),
            dir: "ab",
            from: String::new(),
            to: String::new(),
            monitor: true,
        };
        let stats = tcplab_sim::link::LinkStats::default();
        let sim = serde_json::to_value(LinkTotals::new(id, 0, 0, &stats)).unwrap();
        let own = ["delivered", "delivered_bytes", "check"];
        for k in sim
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .chain(own)
        {
            assert!(v.get(k).is_some(), "links[].{k} missing in {v}");
        }
        assert_eq!(v["name"], "bn");
        assert_eq!(
            (v["packets"].as_u64(), v["bytes"].as_u64()),
            (Some(3), Some(4500))
        );
        assert_eq!(v["busy_ns"], 3 * 1_200_000);

        let lanes = [lane(false), l];
        let mut series = QueueSeries::default();
        let q = tcplab_sim::link::QueueSample {
            queue_pkts: 1,
            queue_bytes: 1500,
            drops: 0,
            lost: 0,
            utilization: 0.5,
        };
        series.push(1, "ab", 7, &q);
        series.name_links(|li| lanes[li as usize].link.clone());
        let s = serde_json::to_value(&series).unwrap();
        let mut keys: Vec<_> = s.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        let want = [
            "dir",
            "drops",
            "link",
            "lost",
            "queue_bytes",
            "queue_pkts",
            "time_ns",
            "utilization",
        ];
        assert_eq!(keys, want);
        assert_eq!((&s["link"][0], &s["time_ns"][0]), (&"bn".into(), &7.into()));
    }
}
