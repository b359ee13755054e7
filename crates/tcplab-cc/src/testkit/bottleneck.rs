//! A packet-level bottleneck for the tests of the delay- and rate-based controllers (`vegas`,
//! `fast`, `ctcp`, `bbr`).
//!
//! * [`Bottleneck`]: a small packet-level model of N flows sharing one FIFO bottleneck of rate
//!   `C`. A packet enters the queue when sent, is served at `C`, and its ACK reaches the sender
//!   one propagation RTT after it left the bottleneck, so every RTT sample is
//!   `base + (queue ahead of it)/C + its own serialisation` — the textbook queue model behind
//!   Vegas/FAST's equilibrium `w·(1 − baseRTT/RTT) = queue share` (Jin, Wei & Low 2004 §3;
//!   Brakmo & Peterson 1995). Each ACK carries a delivery-rate sample computed as
//!   draft-cheng-iccrg-delivery-rate-estimation-02 §3 does (the same algorithm as the
//!   simulator's `RateSampler`). No loss: the queue is unbounded and its maximum is reported.
//!
//! Everything is deterministic: events are ordered by (time, insertion sequence).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::{AckEvent, CongestionControl, Nanos, RateSample, SentEvent, SEC};

/// Serialisation time of `bytes` at `rate_bps`, rounded up to whole nanoseconds.
pub(crate) fn tx_time(bytes: u64, rate_bps: u64) -> Nanos {
    (u128::from(bytes) * 8 * u128::from(SEC)).div_ceil(u128::from(rate_bps.max(1))) as Nanos
}

// ---------------------------------------------------------------------------------------------
// Packet-level bottleneck.

/// Delivery state snapshotted into a packet when it is sent (draft-cheng §3.2).
#[derive(Clone, Copy, Debug, Default)]
struct Snap {
    delivered: u64,
    delivered_time: Nanos,
    first_tx: Nanos,
}

#[derive(Clone, Copy, Debug)]
struct Pkt {
    flow: usize,
    len: u32,
    sent: Nanos,
    snap: Snap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The bottleneck finished serialising the head of its queue.
    Depart,
    /// The ACK of a packet reaches its sender (index into `acks`).
    Ack(usize),
    /// Pacing timer of a flow.
    Wake(usize),
    /// A flow starts.
    Start(usize),
}

/// One flow of the model.
pub(crate) struct Flow<C> {
    pub cc: C,
    /// Propagation RTT of this flow (everything but the bottleneck's queueing and serialisation).
    pub base_rtt: Nanos,
    pub started: bool,
    pub in_flight: u64,
    pub delivered: u64,
    pub sent_packets: u64,
    delivered_time: Nanos,
    first_tx: Nanos,
    next_send: Nanos,
    wake_at: Option<Nanos>,
    pub srtt: Nanos,
    pub min_rtt: Nanos,
    pub last_rtt: Nanos,
    pub acks: u64,
}

/// A periodic sample of the model.
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub t: Nanos,
    /// Packets in the bottleneck (waiting or in service).
    pub queue: usize,
    /// Packets waiting behind the one in service (the backlog a newly sent packet sees beyond
    /// the serialisation it always pays; what Vegas/FAST's `diff` estimates).
    pub backlog: usize,
    /// Per flow: data in flight, bytes.
    pub in_flight: Vec<u64>,
}

pub(crate) struct Bottleneck<C> {
    /// Bottleneck rate in payload bits per second.
    pub rate_bps: u64,
    pub mss: u32,
    pub now: Nanos,
    pub flows: Vec<Flow<C>>,
    queue: VecDeque<Pkt>,
    busy: bool,
    /// ACKs in flight back to the senders, by slot.
    acks: Vec<Option<Pkt>>,
    free_slots: Vec<usize>,
    events: BinaryHeap<Reverse<(Nanos, u64, Ev)>>,
    seq: u64,
    pub max_queue: usize,
    pub departed: u64,
    /// Sampling period of [`Self::samples`] (0 = off).
    pub sample_every: Nanos,
    next_sample: Nanos,
    pub samples: Vec<Sample>,
}

impl<C: CongestionControl> Bottleneck<C> {
    pub fn new(rate_bps: u64, mss: u32) -> Self {
        Bottleneck {
            rate_bps,
            mss,
            now: 0,
            flows: Vec::new(),
            queue: VecDeque::new(),
            busy: false,
            acks: Vec::new(),
            free_slots: Vec::new(),
            events: BinaryHeap::new(),
            seq: 0,
            max_queue: 0,
            departed: 0,
            sample_every: 0,
            next_sample: 0,
            samples: Vec::new(),
        }
    }

    /// Adds a flow with propagation RTT `base_rtt` starting at `start`.
    pub fn add_flow(&mut self, cc: C, base_rtt: Nanos, start: Nanos) -> usize {
        let i = self.flows.len();
        self.flows.push(Flow {
            cc,
            base_rtt,
            started: false,
            in_flight: 0,
            delivered: 0,
            sent_packets: 0,
            delivered_time: 0,
            first_tx: 0,
            next_send: 0,
            wake_at: None,
            srtt: 0,
            min_rtt: 0,
            last_rtt: 0,
            acks: 0,
        });
        self.schedule(start, Ev::Start(i));
        i
    }

    /// Bandwidth-delay product of flow `i`'s path in packets.
    pub fn bdp_packets(&self, i: usize) -> f64 {
        self.rate_bps as f64 * self.flows[i].base_rtt as f64 / 1e9 / 8.0 / f64::from(self.mss)
    }

    fn schedule(&mut self, t: Nanos, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    /// Processes the next event; false when nothing is left.
    pub fn step(&mut self) -> bool {
        let Some(Reverse((t, _, ev))) = self.events.pop() else {
            return false;
        };
        if self.sample_every > 0 {
            while self.next_sample <= t {
                self.now = self.next_sample;
                self.take_sample();
                self.next_sample += self.sample_every;
            }
        }
        self.now = t;
        match ev {
            Ev::Start(i) => {
                self.flows[i].started = true;
                self.try_send(i);
            }
            Ev::Wake(i) => {
                if self.flows[i].wake_at == Some(t) {
                    self.flows[i].wake_at = None;
                }
                self.try_send(i);
            }
            Ev::Depart => {
                let p = self.queue.pop_front().expect("departing packet");
                self.departed += 1;
                let slot = match self.free_slots.pop() {
                    Some(s) => {
                        self.acks[s] = Some(p);
                        s
                    }
                    None => {
                        self.acks.push(Some(p));
                        self.acks.len() - 1
                    }
                };
                let base = self.flows[p.flow].base_rtt;
                self.schedule(t + base, Ev::Ack(slot));
                self.busy = false;
                self.start_service();
            }
            Ev::Ack(slot) => {
                let p = self.acks[slot].take().expect("ack slot");
                self.free_slots.push(slot);
                self.on_ack(p);
                self.try_send(p.flow);
            }
        }
        true
    }

    /// Runs until simulated time `until`.
    pub fn run_until(&mut self, until: Nanos) {
        while self
            .events
            .peek()
            .is_some_and(|Reverse((t, _, _))| *t <= until)
        {
            self.step();
        }
        self.now = until;
    }

    /// The samples taken at or after `from`.
    pub fn samples_from(&self, from: Nanos) -> Vec<&Sample> {
        self.samples.iter().filter(|s| s.t >= from).collect()
    }

    /// Mean backlog (packets) of the samples taken at or after `from`.
    pub fn mean_backlog_from(&self, from: Nanos) -> f64 {
        mean(self.samples_from(from).iter().map(|s| s.backlog as f64))
    }

    fn take_sample(&mut self) {
        self.samples.push(Sample {
            t: self.now,
            queue: self.queue.len(),
            backlog: self.queue.len().saturating_sub(1),
            in_flight: self.flows.iter().map(|f| f.in_flight).collect(),
        });
    }

    fn start_service(&mut self) {
        if self.busy {
            return;
        }
        if let Some(p) = self.queue.front() {
            self.busy = true;
            let t = self.now + tx_time(u64::from(p.len), self.rate_bps);
            self.schedule(t, Ev::Depart);
        }
    }

    fn try_send(&mut self, i: usize) {
        let now = self.now;
        let mss = u64::from(self.mss);
        loop {
            let f = &mut self.flows[i];
            if !f.started || f.in_flight + mss > f.cc.cwnd() {
                return;
            }
            let paced = f.cc.pacing_rate();
            if paced.is_some() && f.next_send > now {
                if f.wake_at != Some(f.next_send) {
                    f.wake_at = Some(f.next_send);
                    let t = f.next_send;
                    self.schedule(t, Ev::Wake(i));
                }
                return;
            }
            // draft-cheng §3.2: a transmission from idle restarts the sampling intervals.
            if f.in_flight == 0 {
                f.first_tx = now;
                f.delivered_time = now;
            }
            let p = Pkt {
                flow: i,
                len: self.mss,
                sent: now,
                snap: Snap {
                    delivered: f.delivered,
                    delivered_time: f.delivered_time,
                    first_tx: f.first_tx,
                },
            };
            f.in_flight += mss;
            f.sent_packets += 1;
            let ev = SentEvent {
                now,
                bytes: self.mss,
                in_flight: f.in_flight,
                is_retransmission: false,
                total_delivered: f.delivered,
            };
            f.cc.on_packet_sent(&ev);
            if let Some(r) = f.cc.pacing_rate() {
                if r > 0 {
                    f.next_send = now + tx_time(mss, r);
                }
            }
            self.queue.push_back(p);
            self.max_queue = self.max_queue.max(self.queue.len());
            self.start_service();
        }
    }

    fn on_ack(&mut self, p: Pkt) {
        let now = self.now;
        let mss = u64::from(self.mss);
        let f = &mut self.flows[p.flow];
        let prior_in_flight = f.in_flight;
        f.in_flight -= u64::from(p.len);
        f.delivered += u64::from(p.len);
        f.delivered_time = now;
        f.acks += 1;
        let rtt = now - p.sent;
        f.last_rtt = rtt;
        f.min_rtt = if f.min_rtt == 0 {
            rtt
        } else {
            f.min_rtt.min(rtt)
        };
        // RFC 6298 §2: SRTT ← 7/8 SRTT + 1/8 R.
        f.srtt = if f.srtt == 0 {
            rtt
        } else {
            (7 * f.srtt + rtt) / 8
        };
        // draft-cheng §3.3: interval = max(send_elapsed, ack_elapsed); discard if < min_rtt.
        let send_elapsed = p.sent - p.snap.first_tx;
        let ack_elapsed = now - p.snap.delivered_time;
        f.first_tx = p.sent;
        let interval = send_elapsed.max(ack_elapsed);
        let delivered = f.delivered - p.snap.delivered;
        let rate = (interval > 0 && interval >= f.min_rtt).then(|| RateSample {
            delivery_rate_bps: delivered as f64 * 8e9 / interval as f64,
            delivered,
            interval,
            is_app_limited: false,
            prior_in_flight,
            total_delivered: f.delivered,
        });
        let ev = AckEvent {
            now,
            bytes_acked: u64::from(p.len),
            packets_acked: (u64::from(p.len) / mss) as u32,
            packets_delivered: (u64::from(p.len) / mss) as u32,
            bytes_sacked: 0,
            prior_in_flight,
            in_flight: f.in_flight,
            rtt_sample: Some(rtt),
            srtt: f.srtt,
            min_rtt: f.min_rtt,
            in_recovery: false,
            outside_open: false,
            app_limited: false,
            rate,
            mss: self.mss,
            // Losses reach the controller as congestion events here, not per ACK.
            bytes_lost: 0,
        };
        f.cc.on_ack(&ev);
    }
}

/// The boxed controller's own (a `Box<dyn CongestionControl>` is not `Clone`).
impl crate::CopyState for Box<dyn CongestionControl> {
    fn as_any(&self) -> &dyn std::any::Any {
        (**self).as_any()
    }
    fn copy_state_from(&mut self, src: &dyn CongestionControl) -> bool {
        (**self).copy_state_from(src)
    }
}

/// Lets the model run boxed controllers (e.g. from the registry) next to concrete ones.
impl CongestionControl for Box<dyn CongestionControl> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        (**self).on_ack(ev)
    }
    fn on_congestion_event(&mut self, ev: &crate::CongestionEvent) {
        (**self).on_congestion_event(ev)
    }
    fn on_recovery_exit(&mut self, now: Nanos) {
        (**self).on_recovery_exit(now)
    }
    fn on_rto(&mut self, ev: &crate::RtoEvent) {
        (**self).on_rto(ev)
    }
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        (**self).on_packet_sent(ev)
    }
    fn on_idle_restart(&mut self, now: Nanos, restart_window: u64) {
        (**self).on_idle_restart(now, restart_window)
    }
    fn rtt_stamp(&self) -> bool {
        (**self).rtt_stamp()
    }
    fn on_undo(&mut self, now: Nanos, prior_cwnd: u64, prior_ssthresh: u64) {
        (**self).on_undo(now, prior_cwnd, prior_ssthresh)
    }
    fn cwnd(&self) -> u64 {
        (**self).cwnd()
    }
    fn ssthresh(&self) -> u64 {
        (**self).ssthresh()
    }
    fn set_cwnd(&mut self, cwnd: u64) {
        (**self).set_cwnd(cwnd)
    }
    fn set_ssthresh(&mut self, ssthresh: u64) {
        (**self).set_ssthresh(ssthresh)
    }
    fn pacing_rate(&self) -> Option<u64> {
        (**self).pacing_rate()
    }
    fn min_tso_segs(&self) -> Option<u32> {
        (**self).min_tso_segs()
    }
    fn governs_recovery(&self) -> bool {
        (**self).governs_recovery()
    }
    fn rate_samples(&self) -> bool {
        (**self).rate_samples()
    }
    fn in_slow_start(&self) -> bool {
        (**self).in_slow_start()
    }
    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        (**self).debug_vars(extra)
    }
}

/// Mean of `xs` (0 for an empty slice).
pub(crate) fn mean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (s, n) = xs
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// A controller whose window stays where it is set (a cross flow, or a probe of the model);
/// it keeps the delivery-rate samples its ACKs carry.
#[derive(Clone)]
pub(crate) struct FixedWindow {
    pub cwnd: u64,
    pub rates: Vec<f64>,
}

impl FixedWindow {
    pub fn new(cwnd: u64) -> Self {
        FixedWindow {
            cwnd,
            rates: Vec::new(),
        }
    }
}

impl CongestionControl for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        if let Some(r) = ev.rate {
            self.rates.push(r.delivery_rate_bps);
        }
    }
    fn on_congestion_event(&mut self, _: &crate::CongestionEvent) {}
    fn on_rto(&mut self, _: &crate::RtoEvent) {}
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn set_cwnd(&mut self, c: u64) {
        self.cwnd = c;
    }
    fn set_ssthresh(&mut self, _: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MS;

    #[test]
    fn test_model_window_above_bdp_queues_the_excess() {
        // 10 Mbit/s, 1000-byte packets: 1250 pkt/s; base RTT 80 ms: BDP = 100 packets. A fixed
        // window of 130 packets keeps 30 queued and sees RTT = 80 ms + 130 packets / C.
        let mut m = Bottleneck::new(10_000_000, 1000);
        m.add_flow(FixedWindow::new(130_000), 80 * MS, 0);
        m.sample_every = 10 * MS;
        m.run_until(5 * SEC);
        let late: Vec<_> = m.samples.iter().filter(|s| s.t > 2 * SEC).collect();
        let q = mean(late.iter().map(|s| s.queue as f64));
        assert!((q - 30.0).abs() <= 1.0, "queue {q}");
        // A full window of 130 packets at 0.8 ms each: RTT = 130·0.8 ms = 80 ms + 30·0.8 ms.
        let rtt = m.flows[0].last_rtt as f64 / 1e6;
        assert!((rtt - 104.0).abs() < 0.01, "rtt {rtt} ms");
        assert!((m.bdp_packets(0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn test_model_rate_samples_measure_bottleneck_rate() {
        let mut m = Bottleneck::new(10_000_000, 1000);
        m.add_flow(FixedWindow::new(200_000), 50 * MS, 0);
        m.run_until(3 * SEC);
        let last = *m.flows[0].cc.rates.last().unwrap();
        assert!((last - 10e6).abs() / 10e6 < 0.01, "{last}");
    }
}
