//! End hosts that are not ideal (issue #15 §3): NIC receive interrupt coalescing and late timers.
//! Both are off unless a scenario sets their knobs (`rx_coalesce`, `timer_slack` in
//! src/tcp/config.rs); no personality switches them on.
//!
//! ## Receive interrupt coalescing ([`RxCoalesce`])
//! The mode modelled is the *interrupt throttle* of Intel's gigabit NICs with a fixed
//! `InterruptThrottleRate` (e1000/e1000e/igb): the driver programs the adapter "to send out a
//! maximum of that many interrupts per second, even if more packets have come in" (Linux commit
//! 835bb129 "e1000: add dynamic itr modes", 2006; Documentation/networking/device_drivers/
//! ethernet/intel/e1000.rst, `InterruptThrottleRate`, valid 100–100000/s; `ethtool -C rx-usecs
//! 125` caps it at 8000/s). Defaults, same sources: a static 8000/s (125 µs) before driver 7.3.x
//! (2006); since then "dynamic conservative" (3), which sets 4000/s (250 µs) for traffic it
//! classes as "bulk" and steps up to 20000/s (50 µs) for low-latency traffic. The adaptive
//! classification is not modelled: a scenario picks the fixed interval. The throttle is a minimum
//! interval between interrupts, not a hold after each packet: a packet that arrives when the last
//! interrupt was at least one interval ago raises an interrupt at once; one that arrives sooner
//! waits in the ring until the interval has passed since the last interrupt, and that interrupt
//! hands the stack everything received meanwhile, in arrival order. The stack processes the batch
//! at once (no processing time, no NAPI budget), so the ACKs it answers with leave back to back.
//!
//! Where it sits: after the host's receive-processing stage if the host has one (`rx_capacity` /
//! `rx_ring`, `Network::add_ingress`), i.e. at the delivery to the stack; packets wait in the
//! receive ring until the interrupt, and while the ring holds `ring` packets further ones are
//! dropped (the descriptors are not returned to the NIC before the driver runs).
//!
//! Event order: an interrupt is its own event class, after the packet arrivals and before the
//! timers of the same nanosecond (src/event.rs), so a packet arriving at the very time of an
//! interrupt is delivered by it.
//!
//! ## Late timers ([`TimerSlack`])
//! A timer of a host with `timer_slack = S` fires at its deadline plus a uniform draw from
//! [0, S] from the endpoint's own stream (seed and endpoint name). This is the "may be up to the
//! specified number of nanoseconds late (but will never expire early)" of Linux's timer slack
//! (prctl(2) PR_SET_TIMERSLACK, default 50 µs) and, for a timer that fires on the next tick of a
//! clock whose phase is unrelated to the deadline, the lateness of a tick-driven timer (uniform
//! in [0, tick): Linux jiffies at HZ, Windows' system timer resolution, timeBeginPeriod docs).
//! The uniform distribution is an assumption.

use crate::net::PacketId;
use crate::rng::Rng;
use crate::time::Nanos;
use serde::Serialize;
use std::collections::VecDeque;

/// What to do with a packet offered to a coalescing NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Held; schedule an interrupt at this time (none is pending yet).
    Schedule(Nanos),
    /// Held; the pending interrupt will deliver it.
    Held,
    /// The ring is full: dropped (the caller releases the packet).
    Dropped,
}

/// Counters of one coalescing host.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HostTotals {
    pub name: String,
    /// Minimum interval between receive interrupts, ns.
    pub rx_coalesce_ns: u64,
    /// Receive interrupts raised.
    pub interrupts: u64,
    /// Packets handed to the stack by them.
    pub packets: u64,
    /// Largest batch one interrupt handed over.
    pub max_batch: u64,
    /// Packets dropped because the receive ring was full.
    pub drops: u64,
}

/// Interrupt throttling of one host's receive path (module docs).
pub struct RxCoalesce {
    interval: Nanos,
    ring: u32,
    last_irq: Option<Nanos>,
    pending: Option<Nanos>,
    /// Packets received and not yet handed to the stack, oldest first. Grows to the largest
    /// batch once, then reuses its storage.
    held: VecDeque<PacketId>,
    pub totals: HostTotals,
}

impl RxCoalesce {
    pub fn new(name: &str, interval: Nanos, ring: u32) -> RxCoalesce {
        RxCoalesce {
            interval,
            ring: ring.max(1),
            last_irq: None,
            pending: None,
            held: VecDeque::with_capacity(64),
            totals: HostTotals {
                name: name.to_string(),
                rx_coalesce_ns: interval,
                ..HostTotals::default()
            },
        }
    }

    pub fn interval(&self) -> Nanos {
        self.interval
    }

    /// A packet for the stack arrives at `now`.
    pub fn offer(&mut self, now: Nanos, pkt: PacketId) -> Hold {
        if self.held.len() >= self.ring as usize {
            self.totals.drops += 1;
            return Hold::Dropped;
        }
        self.held.push_back(pkt);
        if self.pending.is_some() {
            return Hold::Held;
        }
        // At once if the last interrupt was at least an interval ago, else when it will be.
        let at = match self.last_irq {
            Some(last) => now.max(last.saturating_add(self.interval)),
            None => now,
        };
        self.pending = Some(at);
        Hold::Schedule(at)
    }

    /// The interrupt scheduled for `now` fires: returns how many packets it hands to the stack;
    /// the caller takes them with [`RxCoalesce::take`].
    pub fn fire(&mut self, now: Nanos) -> usize {
        debug_assert_eq!(self.pending, Some(now));
        self.pending = None;
        self.last_irq = Some(now);
        let n = self.held.len();
        self.totals.interrupts += 1;
        self.totals.packets += n as u64;
        self.totals.max_batch = self.totals.max_batch.max(n as u64);
        n
    }

    /// The oldest packet held.
    pub fn take(&mut self) -> Option<PacketId> {
        self.held.pop_front()
    }

    /// Packets waiting for the next interrupt.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

/// Late firing of one endpoint's timers (module docs).
pub struct TimerSlack {
    slack: Nanos,
    rng: Rng,
}

impl TimerSlack {
    pub fn new(slack: Nanos, rng: Rng) -> TimerSlack {
        TimerSlack { slack, rng }
    }

    /// When a timer due at `deadline` fires: `deadline + U{0, …, slack}`.
    #[inline]
    pub fn fire_time(&mut self, deadline: Nanos) -> Nanos {
        // Multiply-shift: uniform over slack + 1 values up to a bias below 2^-64·(slack + 1).
        let r = ((self.rng.next_u64() as u128 * (self.slack as u128 + 1)) >> 64) as Nanos;
        deadline.saturating_add(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Nanos = 125_000;

    /// Feed arrivals (time, id) and fire interrupts when due; returns (delivery time, id) in
    /// delivery order, like the event loop does (arrivals before interrupts at equal times).
    fn run(c: &mut RxCoalesce, arrivals: &[(Nanos, PacketId)]) -> Vec<(Nanos, PacketId)> {
        let mut out = Vec::new();
        let mut irq: Option<Nanos> = None;
        let mut i = 0;
        loop {
            let next_arr = arrivals.get(i).map(|a| a.0);
            match (next_arr, irq) {
                (Some(a), Some(t)) if a <= t => {}
                (None, None) => break,
                (_, Some(t)) => {
                    irq = None;
                    let n = c.fire(t);
                    for _ in 0..n {
                        out.push((t, c.take().unwrap()));
                    }
                    continue;
                }
                _ => {}
            }
            let (at, id) = arrivals[i];
            i += 1;
            if let Hold::Schedule(t) = c.offer(at, id) {
                assert!(irq.is_none());
                irq = Some(t);
            }
        }
        out
    }

    #[test]
    fn test_first_packet_interrupts_at_once_then_batches_at_the_interval() {
        let mut c = RxCoalesce::new("h", T, 256);
        // 12 µs apart (1500 B at 1 Gbit/s): the first at once, then batches every 125 µs.
        let arr: Vec<_> = (0..30)
            .map(|i| (1_000 + i * 12_000, i as PacketId))
            .collect();
        let out = run(&mut c, &arr);
        assert_eq!(out.len(), 30);
        assert_eq!(out[0], (1_000, 0));
        let times: Vec<Nanos> = out.iter().map(|o| o.0).collect();
        let mut irqs = times.clone();
        irqs.dedup();
        assert_eq!(irqs, vec![1_000, 126_000, 251_000, 376_000]);
        // Every packet is delivered at or after its arrival and before one interval passed.
        for (k, &(t, id)) in out.iter().enumerate() {
            let a = arr[id as usize].0;
            assert!(
                t >= a && t - a <= T,
                "packet {k}: arrived {a} delivered {t}"
            );
        }
        // Batch sizes: packets that arrived in (previous interrupt, this one].
        assert_eq!(times.iter().filter(|&&t| t == 126_000).count(), 10);
        assert_eq!(c.totals.interrupts, 4);
        assert_eq!(c.totals.max_batch, 10);
        assert_eq!(c.totals.packets, 30);
    }

    #[test]
    fn test_interval_between_interrupts_is_respected() {
        let mut c = RxCoalesce::new("h", T, 256);
        // Irregular arrivals, some in bursts at one instant, some after long gaps.
        let mut arr = Vec::new();
        let mut t = 0;
        for i in 0..200u32 {
            t += [0, 3_000, 40_000, 130_000, 500_000][(i as usize * 7) % 5];
            arr.push((t, i));
        }
        let out = run(&mut c, &arr);
        let mut irqs: Vec<Nanos> = out.iter().map(|o| o.0).collect();
        irqs.dedup();
        for w in irqs.windows(2) {
            assert!(w[1] - w[0] >= T, "{w:?}");
        }
        // No reordering: delivered in arrival order.
        let ids: Vec<PacketId> = out.iter().map(|o| o.1).collect();
        assert_eq!(ids, (0..200).collect::<Vec<_>>());
        // Each interrupt is either at the arrival of its first packet, when the previous one
        // was at least an interval earlier, or exactly an interval after the previous one.
        for (k, &t) in irqs.iter().enumerate() {
            let first = out.iter().find(|o| o.0 == t).unwrap().1;
            let a = arr[first as usize].0;
            if k == 0 {
                assert_eq!(t, a);
            } else if t > a {
                assert_eq!(t, irqs[k - 1] + T, "interrupt {k}");
            } else {
                assert!(t == a && a - irqs[k - 1] >= T, "interrupt {k}");
            }
        }
    }

    #[test]
    fn test_no_arrivals_no_interrupts() {
        let mut c = RxCoalesce::new("h", T, 256);
        assert!(run(&mut c, &[]).is_empty());
        assert_eq!(c.totals.interrupts, 0);
        assert_eq!(c.held(), 0);
    }

    #[test]
    fn test_full_ring_drops() {
        let mut c = RxCoalesce::new("h", T, 4);
        assert_eq!(c.offer(0, 0), Hold::Schedule(0));
        assert_eq!(c.fire(0), 1);
        assert_eq!(c.take(), Some(0));
        // Next interrupt not before 125 µs: four fit in the ring, the fifth is dropped.
        assert_eq!(c.offer(1_000, 1), Hold::Schedule(T));
        for id in 2..5 {
            assert_eq!(c.offer(1_000, id), Hold::Held);
        }
        assert_eq!(c.offer(1_000, 5), Hold::Dropped);
        assert_eq!(c.totals.drops, 1);
        assert_eq!(c.fire(T), 4);
    }

    #[test]
    fn test_deterministic_and_within_slack() {
        let mk = || TimerSlack::new(50_000, Rng::for_entity(3, "timer-slack", "f.rcv"));
        let (mut a, mut b) = (mk(), mk());
        let xs: Vec<Nanos> = (0..10_000).map(|i| a.fire_time(i * 1_000_000)).collect();
        let ys: Vec<Nanos> = (0..10_000).map(|i| b.fire_time(i * 1_000_000)).collect();
        assert_eq!(xs, ys);
        let late: Vec<Nanos> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| x - i as Nanos * 1_000_000)
            .collect();
        assert!(late.iter().all(|&l| l <= 50_000));
        // Uniform: mean 25 µs (sd of the mean 14.4 µs/√10⁴ = 0.14 µs), both ends reached.
        let mean = late.iter().sum::<u64>() as f64 / late.len() as f64;
        assert!((mean - 25_000.0).abs() < 700.0, "{mean}");
        assert!(late.iter().any(|&l| l < 1_000) && late.iter().any(|&l| l > 49_000));
        // Another endpoint's stream differs.
        let mut c = TimerSlack::new(50_000, Rng::for_entity(3, "timer-slack", "f.snd"));
        let zs: Vec<Nanos> = (0..100).map(|i| c.fire_time(i * 1_000_000)).collect();
        assert_ne!(zs[..], xs[..100]);
        // Zero slack is exact.
        let mut z = TimerSlack::new(0, Rng::new(1));
        assert_eq!(z.fire_time(77), 77);
    }

    /// A 1 Gbit/s, 20 ms two-host path with one 3 s Reno flow `f` a → b; `rtcp` is the
    /// receiver's knobs (JSON object body).
    fn two_hosts(rtcp: &str, seed: u64) -> crate::sim::RunResult {
        let json = format!(
            r#"{{"seed": {seed}, "duration_ns": 3000000000,
              "nodes": [{{"name":"a","kind":"host"}},{{"name":"b","kind":"host"}}],
              "links": [{{"name":"l","a":"a","b":"b",
                "ab":{{"rate_bps":1000000000,"delay_ns":10000000,"queue":{{"limit_pkts":2000}}}},
                "ba":{{"rate_bps":1000000000,"delay_ns":10000000,"queue":{{"limit_pkts":2000}}}}}}],
              "flows": [{{"name":"f","kind":"tcp","src":"a","dst":"b","cca":{{"name":"reno"}},
                "tcp":{{"rcvbuf":4000000,"sndbuf":4000000}},
                "receiver_tcp":{{"rcvbuf":4000000 {rtcp}}}}}]}}"#
        );
        crate::sim::run_json(&json).unwrap()
    }

    #[test]
    fn test_simulation_batches_at_the_receiving_host_only_when_asked() {
        let off = two_hosts("", 1);
        assert!(off.hosts.is_empty());
        let on = two_hosts(r#", "rx_coalesce": 125000"#, 1);
        assert_eq!(on.hosts.len(), 1);
        let h = &on.hosts[0];
        assert_eq!(h.name, "b");
        // Everything the receiver got went through interrupts at most 8000/s.
        assert_eq!(h.packets, on.flows[0].data_packets_delivered + 2, "{h:?}"); // + the SYN and the handshake ACK
        assert!(h.interrupts as f64 <= 3.0 * 8000.0 + 1.0, "{h:?}");
        // At 1 Gbit/s about ten full-sized segments arrive per 125 µs.
        assert!(h.max_batch >= 10, "{h:?}");
        assert_eq!(h.drops, 0);
        // Same data delivered within 2 % (the path is clean; the batches add ≤ 125 µs).
        let (a, b) = (
            off.flows[0].bytes_delivered as f64,
            on.flows[0].bytes_delivered as f64,
        );
        assert!((a - b).abs() < 0.02 * a, "{a} vs {b}");
        // Deterministic.
        let again = two_hosts(r#", "rx_coalesce": 125000"#, 1);
        assert_eq!(again.flows[0].bytes_delivered, on.flows[0].bytes_delivered);
        assert_eq!(again.events, on.events);
    }

    #[test]
    fn test_zero_knobs_change_nothing() {
        let off = two_hosts("", 4);
        let zero = two_hosts(r#", "rx_coalesce": 0, "timer_slack": 0"#, 4);
        assert_eq!(off.events, zero.events);
        assert_eq!(off.series.cwnd_bytes, zero.series.cwnd_bytes);
    }

    #[test]
    fn test_simulation_timer_slack_is_seeded_and_changes_the_run() {
        let slack = r#", "timer_slack": 50000"#;
        let (a, b) = (two_hosts(slack, 2), two_hosts(slack, 2));
        assert_eq!(a.events, b.events);
        assert_eq!(a.series.cwnd_bytes, b.series.cwnd_bytes);
        assert_eq!(a.flows[0].bytes_delivered, b.flows[0].bytes_delivered);
        // Another seed draws other latenesses; without slack the run is another again.
        let c = two_hosts(slack, 3);
        let exact = two_hosts("", 2);
        assert_ne!(a.events, exact.events);
        // (The seed alone, through the ISN, does not change this clean run.)
        assert_eq!(exact.events, two_hosts("", 3).events);
        assert_ne!(
            (a.events, a.flows[0].bytes_delivered),
            (c.events, c.flows[0].bytes_delivered)
        );
    }
}
