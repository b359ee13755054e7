//! One emulated link direction, as a pure model: time is an argument, nothing here reads a clock
//! or touches a socket, so the schedule is unit-tested exactly.
//!
//! The model is the simulator's own link model, shared code (crates/tcplab-sim/src/link.rs,
//! [`Link`]): the same FIFO server, drop-tail rule, loss model, queue samples and schedule of
//! changes, so both engines mean the same thing by a scenario's link. What is the emulator's own
//! lives here: frame tokens in flight, the clamp of out-of-order arrival stamps, and the
//! back-to-back bookkeeping of the achieved-rate self-check.
//!
//! Deviation from the simulator, by necessity: arrival times are real (kernel receive timestamps)
//! and departures happen when the emulator's thread gets to them; the lateness of each departure
//! is measured by the I/O loop (src/serve.rs) and reported, and the kernel engine rejects runs
//! whose lateness or achieved rate miss the configured values.

use crate::config::{ChanCfg, JitterCfg};
use std::collections::VecDeque;
use tcplab_sim::link::{Admit, Jitter};
pub use tcplab_sim::link::{Link, LinkStats as PipeStats, LossModel, QueueSample, SampleMark};
use tcplab_sim::rng::Rng;

/// Serialisation time of `bytes` at `rate_bps` in picoseconds (0 for an unlimited rate, which
/// the simulator's links do not have).
#[inline]
pub fn tx_time_ps(bytes: u32, rate_bps: u64) -> u64 {
    if rate_bps == 0 {
        return 0;
    }
    tcplab_sim::time::tx_time_ps(bytes, rate_bps)
}

/// Outcome of offering a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Will leave at this time (ns).
    Queued(u64),
    /// Drop-tail overflow.
    Dropped,
    /// Destroyed by the loss model (after using the link's capacity).
    Lost,
}

/// A packet in flight towards the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// The caller's handle of the frame (a buffer index).
    pub token: u32,
    /// When the packet is due at the far end, ns.
    pub due: u64,
    /// IP bytes.
    pub len: u32,
    /// The link was busy without a break since the previous departing packet finished
    /// serialisation (it was backlogged), so the ideal gap between the two departures is pure
    /// serialisation time and the actual gap measures the rate the emulator delivered.
    pub back_to_back: bool,
    /// Ideal time since the previous departure, ns (meaningful when `back_to_back`).
    pub gap_ns: u64,
}

pub struct Pipe {
    /// Configured rate and delay (at time zero; a schedule may change them, see [`Pipe::link`]).
    pub rate_bps: u64,
    pub delay_ns: u64,
    link: Link,
    flight: VecDeque<Departure>,
    last_offer_ns: u64,
    /// Due time of the last packet put in flight (None before the first).
    last_due: Option<u64>,
    /// Every packet admitted since that one found the link busy.
    busy_since_last: bool,
}

impl Pipe {
    /// A pipe whose schedule (if any) waits for [`Pipe::start`].
    pub fn new(cfg: &ChanCfg, rng: Rng) -> Pipe {
        Pipe {
            rate_bps: cfg.rate_bps,
            delay_ns: cfg.delay_ns,
            link: Link::new(
                cfg.rate_bps,
                cfg.delay_ns,
                cfg.queue.limit_pkts,
                cfg.queue.limit_bytes,
                LossModel::new(cfg.loss.clone(), rng),
                256,
            )
            .with_schedule(cfg.schedule.clone(), None)
            .with_tick(cfg.tick_ns),
            flight: VecDeque::with_capacity(1024),
            last_offer_ns: 0,
            last_due: None,
            busy_since_last: false,
        }
    }

    /// Add the direction's jitter (tcplab_sim::link, "Jitter") to each packet's due time, drawn
    /// from `rng`; the emulator's own lateness comes on top of it.
    pub fn with_jitter(mut self, cfg: &JitterCfg, rng: Rng) -> Pipe {
        self.link = self.link.with_jitter(Jitter::new(cfg.clone(), rng));
        self
    }

    /// The experiment's time zero (the `start` command): the schedule counts from here.
    pub fn start(&mut self, t0_ns: u64) {
        self.link.set_origin(t0_ns);
    }

    /// The shared link model (current rate and delay, counters).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Cumulative counters (docs/design.md §4 `links`).
    pub fn stats(&self) -> &PipeStats {
        &self.link.stats
    }

    /// Packets waiting at `now`, not counting the one being serialised.
    pub fn queue_pkts(&mut self, now_ns: u64) -> u32 {
        self.link.queue_pkts(now_ns)
    }

    /// Bytes waiting at `now`, not counting the packet being serialised.
    pub fn queue_bytes(&mut self, now_ns: u64) -> u64 {
        self.link.queue_bytes(now_ns)
    }

    /// Serialisation time spent by `now`, ps.
    pub fn busy_done_ps(&self, now_ns: u64) -> u64 {
        self.link.busy_done_ps(now_ns)
    }

    /// The queue sample at `now` (the simulator's formula, src/link.rs [`Link::sample`]).
    pub fn sample(&mut self, now_ns: u64, dt_ns: u64, mark: &mut SampleMark) -> QueueSample {
        self.link.sample(now_ns, dt_ns, mark)
    }

    /// The counters now, as a sample mark.
    pub fn mark(&self) -> SampleMark {
        self.link.mark()
    }

    /// Offer a packet of `len` IP bytes that arrived at `arrival_ns`; `token` comes back in its
    /// [`Departure`].
    pub fn offer(&mut self, arrival_ns: u64, len: u32, token: u32) -> Offer {
        self.offer_with(arrival_ns, len, token, true)
    }

    /// [`Pipe::offer`], where a packet with `lossy == false` is exempt from the loss model (it
    /// neither can be lost nor takes a place in the `list` model's count): the kernel engine
    /// exempts iperf3's control connections, which the simulator does not have.
    pub fn offer_with(&mut self, arrival_ns: u64, len: u32, token: u32, lossy: bool) -> Offer {
        // Arrival stamps of one interface are in order; guard against a stamp older than the
        // previous one (a clock correction) so the schedule never runs backwards.
        let now = arrival_ns.max(self.last_offer_ns);
        self.last_offer_ns = now;
        // A lost packet was serialised too, so it keeps a busy period going. (Across a scheduled
        // rate change the ideal gaps follow the new rate; the self-check compares spans of due
        // times with spans of send times, so it stays exact.)
        let due = match self.link.offer(now, len, lossy, false) {
            Admit::Dropped => return Offer::Dropped,
            Admit::Lost { was_busy } => {
                self.busy_since_last &= was_busy;
                return Offer::Lost;
            }
            Admit::Queued {
                arrival_ns,
                was_busy,
            } => {
                self.busy_since_last &= was_busy;
                arrival_ns
            }
        };
        let (back_to_back, gap_ns) = match self.last_due {
            Some(prev) if self.busy_since_last => (true, due - prev),
            _ => (false, 0),
        };
        self.last_due = Some(due);
        self.busy_since_last = true;
        self.flight.push_back(Departure {
            token,
            due,
            len,
            back_to_back,
            gap_ns,
        });
        Offer::Queued(due)
    }

    /// When the next packet is due at the far end.
    #[inline]
    pub fn next_due(&self) -> Option<u64> {
        self.flight.front().map(|d| d.due)
    }

    /// The next packet due by `now`, if any.
    #[inline]
    pub fn pop_due(&mut self, now_ns: u64) -> Option<Departure> {
        match self.flight.front() {
            Some(d) if d.due <= now_ns => self.flight.pop_front(),
            _ => None,
        }
    }

    /// Packets still travelling (for shutdown accounting).
    pub fn in_flight(&self) -> usize {
        self.flight.len()
    }

    /// Drop everything still in flight, returning the tokens to the caller.
    pub fn drain_flight(&mut self) -> impl Iterator<Item = Departure> + '_ {
        self.flight.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LossCfg, QueueCfg};

    fn chan(rate: u64, delay: u64, limit: Option<u32>, loss: LossCfg) -> ChanCfg {
        ChanCfg {
            rate_bps: rate,
            delay_ns: delay,
            queue: QueueCfg {
                kind: "droptail".into(),
                limit_pkts: limit,
                limit_bytes: None,
            },
            loss,
            outages: vec![],
            schedule: Vec::new(),
            jitter: Default::default(),
            tick_ns: 0,
        }
    }

    fn pipe(rate: u64, delay: u64, limit: Option<u32>) -> Pipe {
        Pipe::new(
            &chan(rate, delay, limit, LossCfg::None),
            Rng::for_entity(1, "loss", "t"),
        )
    }

    #[test]
    fn test_idle_pipe_arrival_serialises_then_delays() {
        // 1500 B at 12 Mbit/s = 1 ms; delay 10 ms.
        let mut p = pipe(12_000_000, 10_000_000, None);
        assert_eq!(
            p.offer(5_000, 1500, 7),
            Offer::Queued(5_000 + 1_000_000 + 10_000_000)
        );
        assert_eq!(p.pop_due(11_004_999), None);
        let d = p.pop_due(11_005_000).unwrap();
        assert_eq!((d.token, d.len, d.back_to_back), (7, 1500, false));
    }

    #[test]
    fn test_tick_pipe_releases_on_ticks_like_the_simulator() {
        // The emulator's pipe uses the shared model's ticks (tcplab_sim::link, "Timer ticks"):
        // three 1 ms packets offered at 3 ms on a 10 ms tick all leave the queue at 10 ms and
        // are due 20 ms later, together.
        let mut c = chan(12_000_000, 20_000_000, None, LossCfg::None);
        c.tick_ns = 10_000_000;
        let mut p = Pipe::new(&c, Rng::for_entity(1, "loss", "t"));
        for k in 0..3 {
            assert_eq!(p.offer(3_000_000, 1500, k), Offer::Queued(30_000_000));
        }
        assert_eq!(p.pop_due(29_999_999), None);
        assert_eq!(p.pop_due(30_000_000).map(|d| d.token), Some(0));
    }

    #[test]
    fn test_backlogged_arrivals_leave_at_link_rate() {
        let mut p = pipe(12_000_000, 0, None);
        for k in 0..5 {
            assert_eq!(
                p.offer(0, 1500, k),
                Offer::Queued((k as u64 + 1) * 1_000_000)
            );
        }
        let due: Vec<(u64, bool, u64)> = (0..5)
            .map(|_| {
                p.pop_due(u64::MAX)
                    .map(|d| (d.due, d.back_to_back, d.gap_ns))
                    .unwrap()
            })
            .collect();
        assert_eq!(due[0], (1_000_000, false, 0));
        assert!(due[1..].iter().all(|&(_, b, g)| b && g == 1_000_000));
        assert_eq!(p.queue_pkts(0), 4);
        assert_eq!(p.queue_pkts(2_500_000), 2);
        assert_eq!(p.queue_bytes(2_500_000), 3000);
        assert_eq!(p.queue_pkts(5_000_000), 0);
    }

    #[test]
    fn test_full_queue_drops_excluding_packet_in_service() {
        // Limit 2 waiting: the first packet is in service, two wait, the fourth is dropped —
        // the same rule as crates/tcplab-sim/src/net.rs (pfifo semantics).
        let mut p = pipe(12_000_000, 0, Some(2));
        assert!(matches!(p.offer(0, 1500, 0), Offer::Queued(_)));
        assert!(matches!(p.offer(0, 1500, 1), Offer::Queued(_)));
        assert!(matches!(p.offer(0, 1500, 2), Offer::Queued(_)));
        assert_eq!(p.offer(0, 1500, 3), Offer::Dropped);
        assert_eq!(p.stats().drops, 1);
        assert_eq!(p.stats().max_queue_pkts, 2);
        // Once the first finishes a slot frees up.
        assert!(matches!(
            p.offer(1_000_000, 1500, 4),
            Offer::Queued(4_000_000)
        ));
    }

    #[test]
    fn test_byte_limit_counts_waiting_bytes() {
        let mut c = chan(12_000_000, 0, None, LossCfg::None);
        c.queue.limit_bytes = Some(3000);
        let mut p = Pipe::new(&c, Rng::for_entity(1, "loss", "t"));
        for k in 0..3 {
            assert!(matches!(p.offer(0, 1500, k), Offer::Queued(_)));
        }
        assert_eq!(p.offer(0, 100, 3), Offer::Dropped);
    }

    #[test]
    fn test_lost_packet_uses_capacity_but_never_departs() {
        let c = chan(12_000_000, 0, None, LossCfg::Bernoulli { p: 1.0 });
        let mut p = Pipe::new(&c, Rng::for_entity(1, "loss", "t"));
        assert_eq!(p.offer(0, 1500, 0), Offer::Lost);
        assert_eq!(p.next_due(), None);
        assert_eq!(p.stats().busy_ps, 1_000_000_000);
        assert_eq!(p.queue_pkts(0), 0);
        assert_eq!(p.busy_done_ps(500_000), 500_000_000);
    }

    #[test]
    fn test_gap_spans_lost_packet_and_breaks_on_idle() {
        // The second packet (index 1) is lost: it keeps the chain, the link was busy serialising it.
        let c = chan(12_000_000, 0, None, LossCfg::List { packets: vec![1] });
        let mut p = Pipe::new(&c, Rng::for_entity(1, "loss", "t"));
        p.offer(0, 1500, 0);
        assert_eq!(p.offer(0, 1500, 1), Offer::Lost);
        p.offer(0, 1500, 2);
        // Idle link before this one: not back to back.
        p.offer(10_000_000, 1500, 3);
        let d: Vec<Departure> = std::iter::from_fn(|| p.pop_due(u64::MAX)).collect();
        assert_eq!(
            (d[1].token, d[1].back_to_back, d[1].gap_ns),
            (2, true, 2_000_000)
        );
        assert!(!d[2].back_to_back);
    }

    #[test]
    fn test_exempt_packets_are_never_lost_and_not_counted() {
        let c = chan(0, 0, None, LossCfg::List { packets: vec![1] });
        let mut p = Pipe::new(&c, Rng::for_entity(1, "loss", "t"));
        assert!(matches!(p.offer(0, 60, 0), Offer::Queued(_)));
        assert!(matches!(p.offer_with(0, 60, 1, false), Offer::Queued(_)));
        // Index 1 is the second *lossy* packet.
        assert_eq!(p.offer(0, 60, 2), Offer::Lost);
    }

    #[test]
    fn test_busy_done_counts_partial_service() {
        let mut p = pipe(12_000_000, 0, None);
        p.offer(0, 1500, 0);
        p.offer(0, 1500, 1);
        assert_eq!(p.busy_done_ps(1_500_000), 1_500_000_000);
        assert_eq!(p.busy_done_ps(9_000_000), 2_000_000_000);
    }

    #[test]
    fn test_schedule_counts_from_start_and_halves_rate() {
        // 12 Mbit/s, 6 Mbit/s from 5 ms after the experiment's time zero (the `start` command).
        let mut c = chan(12_000_000, 1_000_000, None, LossCfg::None);
        c.schedule = vec![tcplab_sim::link::Step {
            at_ns: 5_000_000,
            rate_bps: Some(6_000_000),
            delay_ns: Some(2_000_000),
            loss: None,
        }];
        let mut p = Pipe::new(&c, Rng::for_entity(1, "loss", "t"));
        // Before `start` no step applies, however late.
        assert_eq!(p.offer(100_000_000, 1500, 0), Offer::Queued(102_000_000));
        p.start(200_000_000);
        assert_eq!(p.offer(204_500_000, 1500, 1), Offer::Queued(206_500_000));
        // At t0 + 5 ms: 2 ms serialisation once the previous packet finishes (205.5 ms), then
        // the new 2 ms delay.
        assert_eq!(p.offer(205_000_000, 1500, 2), Offer::Queued(209_500_000));
        assert_eq!(p.link().rate_bps(), 6_000_000);
        assert_eq!(p.rate_bps, 12_000_000);
    }

    #[test]
    fn test_unlimited_rate_has_no_serialisation() {
        let mut p = pipe(0, 3, None);
        assert_eq!(p.offer(10, 1500, 0), Offer::Queued(13));
        assert_eq!(p.offer(10, 1500, 1), Offer::Queued(13));
    }

    #[test]
    fn test_old_arrival_stamp_does_not_reorder() {
        let mut p = pipe(0, 0, None);
        assert_eq!(p.offer(100, 60, 0), Offer::Queued(100));
        assert_eq!(p.offer(90, 60, 1), Offer::Queued(100));
    }

    // The simulator's loss model (tcplab_sim::net::LossModel), as the emulator uses it; its
    // Bernoulli and Gilbert-Elliott statistics are tested in crates/tcplab-sim/src/net.rs.
    #[test]
    fn test_list_loss_drops_exact_indices() {
        let mut m = LossModel::new(
            LossCfg::List {
                packets: vec![5, 1, 1, 3],
            },
            Rng::for_entity(1, "loss", "l"),
        );
        let lost: Vec<u64> = (0..8).filter(|_| m.lose()).collect();
        assert_eq!(lost.len(), 3);
        let mut m = LossModel::new(
            LossCfg::List {
                packets: vec![5, 1, 3],
            },
            Rng::for_entity(1, "loss", "l"),
        );
        let idx: Vec<u64> = (0..8u64).filter(|_| m.lose()).collect();
        // `filter` sees 0..8 in order, so the kept values are the lost indices.
        assert_eq!(idx, vec![1, 3, 5]);
    }

    proptest::proptest! {
        #[test]
        fn prop_departures_fifo_and_rate_bounded(
            arrivals in proptest::collection::vec((0u64..2_000_000, 40u32..1500), 1..200),
            limit in proptest::option::of(0u32..20),
        ) {
            let mut sorted = arrivals.clone();
            sorted.sort_by_key(|a| a.0);
            let rate = 50_000_000u64;
            let mut p = pipe(rate, 1_000, limit);
            for (i, &(t, len)) in sorted.iter().enumerate() {
                p.offer(t, len, i as u32);
                if let Some(l) = limit {
                    proptest::prop_assert!(p.queue_pkts(t) <= l);
                }
            }
            let mut last_due = 0;
            let mut last_token = None;
            while let Some(d) = p.pop_due(u64::MAX) {
                proptest::prop_assert!(d.due >= last_due);
                let (t, len) = sorted[d.token as usize];
                // Never earlier than arrival + serialisation + delay.
                proptest::prop_assert!(d.due >= t + tx_time_ps(len, rate) / 1000 + 1_000);
                if let Some(prev) = last_token {
                    proptest::prop_assert!(d.token > prev);
                    if d.back_to_back {
                        // Back-to-back packets are spaced by at least their serialisation time.
                        proptest::prop_assert_eq!(d.gap_ns, d.due - last_due);
                        proptest::prop_assert!(d.gap_ns + 1 >= tx_time_ps(len, rate) / 1000);
                    }
                }
                last_due = d.due;
                last_token = Some(d.token);
            }
        }
    }
}
