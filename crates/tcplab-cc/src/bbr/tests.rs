//! Test helpers for the BBR phase files, and whole-algorithm tests on the model bottleneck
//! (`delaykit.rs`) against the behaviour the paper describes: STARTUP → DRAIN → PROBE_BW, the
//! eight-phase gain cycle, PROBE_RTT after 10 s without a new minimum, and a queue that stays
//! near one BDP or less in PROBE_BW while the link stays full.

use super::{Bbr, BbrParams, CycleStart, Mode, PACING_GAIN_CYCLE};
use crate::delaykit::{mean, Bottleneck};
use crate::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, CwndUnit, Nanos, RateSample, RtoEvent,
    SentEvent, WindowGrowth, MS, SEC,
};

pub(crate) const MSS: u32 = 1000;

fn init(iw_segs: u64) -> CcInit {
    CcInit {
        mss: MSS,
        initial_cwnd: iw_segs * u64::from(MSS),
        initial_ssthresh: u64::MAX,
        growth: WindowGrowth {
            unit: CwndUnit::Packets,
            abc_limit: u32::MAX,
        },
    }
}

/// BBR with the default parameters but a fixed first PROBE_BW phase (0).
pub(crate) fn bbr(iw_segs: u64) -> Bbr {
    bbr_with(
        iw_segs,
        BbrParams {
            cycle_start: CycleStart::Phase(0),
            ..BbrParams::default()
        },
    )
}

pub(crate) fn bbr_with(iw_segs: u64, p: BbrParams) -> Bbr {
    Bbr::new(&init(iw_segs), p)
}

/// Synthetic rounds with chosen delivery-rate samples: at the start of a round the window is
/// sent (each packet reported), then up to 20 ACKs spread over the round deliver it, each with
/// the round's RTT sample and a rate sample of `bw`.
pub(crate) struct Synth {
    pub now: Nanos,
    /// New data sent (snd_nxt) and delivered, bytes.
    pub sent: u64,
    pub delivered: u64,
    /// Data in flight reported after each ACK, segments (None: what is left of the window).
    pub in_flight_segs: Option<u64>,
    pub app_limited: bool,
}

impl Synth {
    pub fn new(_rtt: Nanos) -> Self {
        Synth {
            now: 0,
            sent: 0,
            delivered: 0,
            in_flight_segs: None,
            app_limited: false,
        }
    }

    /// Reports `n` new packets sent now.
    pub fn send(&mut self, b: &mut Bbr, n: u64) {
        for _ in 0..n {
            self.sent += u64::from(MSS);
            b.on_packet_sent(&SentEvent {
                now: self.now,
                bytes: MSS,
                in_flight: self.sent - self.delivered,
                is_retransmission: false,
                total_delivered: self.delivered,
            });
        }
    }

    pub fn round(&mut self, b: &mut Bbr, bw_bps: f64, rtt: Nanos) {
        self.round_len(b, bw_bps, rtt, rtt);
    }

    /// A round of length `len` whose ACKs carry RTT samples `rtt`.
    pub fn round_len(&mut self, b: &mut Bbr, bw_bps: f64, len: Nanos, rtt: Nanos) {
        let mss = u64::from(MSS);
        let w = (b.cwnd() / mss).max(1);
        let start = self.now;
        self.send(b, w);
        let n = w.min(20);
        let mut acked = 0;
        for i in 0..n {
            let segs = (w * (i + 1) / n) - acked;
            acked += segs;
            let t = start + len * (i + 1) / n;
            self.now = t;
            self.delivered += segs * mss;
            let left = (self.sent - self.delivered) / mss;
            let in_flight = self.in_flight_segs.unwrap_or(left) * mss;
            b.on_ack(&AckEvent {
                now: t,
                bytes_acked: segs * mss,
                packets_acked: segs as u32,
                prior_in_flight: in_flight + segs * mss,
                in_flight,
                rtt_sample: Some(rtt),
                srtt: rtt,
                min_rtt: rtt,
                rate: Some(RateSample {
                    delivery_rate_bps: bw_bps,
                    delivered: (bw_bps / 8.0 * len as f64 / 1e9) as u64,
                    interval: len,
                    is_app_limited: self.app_limited,
                    prior_in_flight: in_flight + segs * mss,
                    total_delivered: self.delivered,
                }),
                mss: MSS,
                ..Default::default()
            });
        }
        self.now = start + len;
    }
}

/// A BBR flow driven through STARTUP (bandwidth doubling, then flat at 8 Mbit/s with RTT
/// 100 ms: BDP 100 segments) and DRAIN into PROBE_BW starting at `phase`.
pub(crate) fn probe_bw(phase: usize) -> (Bbr, Synth) {
    probe_bw_with(phase, BbrParams::default())
}

/// As [`probe_bw`] with other parameters.
pub(crate) fn probe_bw_with(phase: usize, p: BbrParams) -> (Bbr, Synth) {
    let mut b = bbr_with(
        10,
        BbrParams {
            cycle_start: CycleStart::Phase(phase),
            ..p
        },
    );
    let mut s = Synth::new(100 * MS);
    for bw in [1e6, 2e6, 4e6, 8e6, 8e6, 8e6] {
        s.round(&mut b, bw, 100 * MS);
    }
    // Third flat round: the pipe is full; inflight at one BDP drains at once.
    s.in_flight_segs = Some(100);
    s.round(&mut b, 8e6, 100 * MS);
    assert_eq!(b.mode(), Mode::ProbeBw);
    // Re-enter at the requested phase at the current time so tests start at a phase boundary.
    b.enter_probe_bw(s.now);
    b.update_gains();
    (b, s)
}

fn state_code(cc: &dyn CongestionControl) -> f64 {
    let mut extra = [("", 0.0); 16];
    let n = cc.debug_vars(&mut extra);
    extra[..n]
        .iter()
        .find(|(k, _)| *k == "state")
        .map(|(_, v)| *v)
        .unwrap()
}

/// One BBR flow on a 20 Mbit/s bottleneck with 40 ms propagation RTT (BDP 100 packets of
/// 1000 bytes), stepped event by event.
fn one_flow(params: BbrParams) -> Bottleneck<Bbr> {
    let mut m = Bottleneck::new(20_000_000, MSS);
    m.add_flow(bbr_with(10, params), 40 * MS, 0);
    m
}

#[test]
fn test_model_state_sequence_startup_drain_probe_bw() {
    let mut m = one_flow(BbrParams {
        cycle_start: CycleStart::Phase(0),
        ..BbrParams::default()
    });
    let mut seq = vec![m.flows[0].cc.mode()];
    let mut drain_entry_bw = 0.0;
    while m.now < 3 * SEC {
        m.step();
        let mode = m.flows[0].cc.mode();
        if *seq.last().unwrap() != mode {
            if mode == Mode::Drain {
                drain_entry_bw = m.flows[0].cc.btlbw();
            }
            seq.push(mode);
        }
    }
    assert_eq!(seq, [Mode::Startup, Mode::Drain, Mode::ProbeBw], "{seq:?}");
    // STARTUP ended with BtlBw at the bottleneck rate.
    assert!(
        (drain_entry_bw - 20e6).abs() / 20e6 < 0.02,
        "{drain_entry_bw}"
    );
    let rtprop = m.flows[0].cc.rtprop().unwrap();
    // 40 ms + one 0.4 ms serialisation.
    assert_eq!(rtprop, 40 * MS + 400_000);
}

#[test]
fn test_model_probe_bw_cycles_through_eight_gains() {
    let mut m = one_flow(BbrParams {
        cycle_start: CycleStart::Phase(0),
        ..BbrParams::default()
    });
    while m.flows[0].cc.mode() != Mode::ProbeBw {
        m.step();
    }
    // Record (time, phase) at every phase change for 3 s.
    let mut phases = vec![(m.now, m.flows[0].cc.cycle_index())];
    let end = m.now + 3 * SEC;
    while m.now < end {
        m.step();
        let i = m.flows[0].cc.cycle_index();
        if phases.last().unwrap().1 != i {
            phases.push((m.now, i));
            // The gain follows the phase on the same ACK.
            assert_eq!(m.flows[0].cc.pacing_gain(), PACING_GAIN_CYCLE[i]);
        }
    }
    // Phases advance one at a time in the cycle order.
    for w in phases.windows(2) {
        assert_eq!(w[1].1, (w[0].1 + 1) % 8, "{phases:?}");
    }
    assert!(
        phases.len() >= 16,
        "two full cycles in 3 s: {}",
        phases.len()
    );
    // Each gain-1 phase lasts one RTprop (the first ACK after it), the whole cycle ≈ 8 RTprop
    // (the 3/4 phase may end early once the queue is drained).
    let rtprop = m.flows[0].cc.rtprop().unwrap();
    for w in phases.windows(2) {
        let d = w[1].0 - w[0].0;
        if PACING_GAIN_CYCLE[w[0].1] == 1.0 {
            assert!(
                d > rtprop && d < rtprop + 2 * MS,
                "phase {} lasted {d}",
                w[0].1
            );
        }
    }
}

#[test]
fn test_model_probe_bw_fills_link_and_keeps_queue_below_one_bdp() {
    let mut m = one_flow(BbrParams::default());
    m.sample_every = MS;
    m.run_until(10 * SEC);
    let bdp = m.bdp_packets(0);
    let late: Vec<_> = m.samples.iter().filter(|s| s.t >= 3 * SEC).collect();
    let q_mean = mean(late.iter().map(|s| s.backlog as f64));
    let q_max = late.iter().map(|s| s.backlog).max().unwrap() as f64;
    let inflight = mean(late.iter().map(|s| s.in_flight[0] as f64 / f64::from(MSS)));
    // Link busy: packets that left the bottleneck in the last 7 s vs its capacity.
    let m2 = {
        let mut m2 = one_flow(BbrParams::default());
        m2.run_until(3 * SEC);
        m2.departed
    };
    let util = (m.departed - m2) as f64 / (7.0 * 20e6 / 8.0 / f64::from(MSS));
    eprintln!(
        "BBR PROBE_BW: bdp {bdp:.0}, backlog mean {q_mean:.1} max {q_max}, inflight {inflight:.1}, \
         utilisation {util:.4}"
    );
    assert!(q_max <= bdp, "queue {q_max} > BDP {bdp}");
    assert!(q_mean <= 0.25 * bdp, "mean queue {q_mean}");
    assert!(
        (0.95 * bdp..=1.35 * bdp).contains(&inflight),
        "inflight {inflight}"
    );
    assert!(util > 0.97, "utilisation {util}");
}

#[test]
fn test_model_probe_rtt_after_ten_seconds_without_new_min_rtt() {
    // A second, fixed-window flow keeps 30 packets queued from 2 s on, so BBR never sees its
    // minimum RTT again: PROBE_RTT starts 10 s after the last minimum sample, holds ≤ 4
    // packets in flight for ≥ 200 ms and a round, and returns to PROBE_BW.
    struct Fixed(u64);
    impl CongestionControl for Fixed {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn on_ack(&mut self, _: &AckEvent) {}
        fn on_congestion_event(&mut self, _: &CongestionEvent) {}
        fn on_rto(&mut self, _: &RtoEvent) {}
        fn cwnd(&self) -> u64 {
            self.0
        }
        fn ssthresh(&self) -> u64 {
            u64::MAX
        }
        fn set_cwnd(&mut self, c: u64) {
            self.0 = c;
        }
        fn set_ssthresh(&mut self, _: u64) {}
    }
    let mut m: Bottleneck<Box<dyn CongestionControl>> = Bottleneck::new(20_000_000, MSS);
    m.add_flow(Box::new(bbr(10)), 40 * MS, 0);
    // 130 packets on the same path: 100 fill it, 30 queue even when BBR sends nothing.
    m.add_flow(Box::new(Fixed(130 * u64::from(MSS))), 40 * MS, 2 * SEC);
    let mut last_min_sample = 0;
    let mut min_rtt = Nanos::MAX;
    let mut entered = None;
    let mut left = None;
    let mut max_inflight_in_probe = 0;
    while m.now < 20 * SEC && left.is_none() {
        m.step();
        let f = &m.flows[0];
        if f.last_rtt > 0 && f.last_rtt <= min_rtt {
            min_rtt = f.last_rtt;
            last_min_sample = m.now;
        }
        let st = state_code(f.cc.as_ref());
        match (entered, st == Mode::ProbeRtt.code()) {
            (None, true) => entered = Some(m.now),
            (Some(_), true) => max_inflight_in_probe = max_inflight_in_probe.max(f.in_flight),
            (Some(_), false) => left = Some(m.now),
            _ => {}
        }
    }
    let entered = entered.expect("PROBE_RTT entered");
    let left = left.expect("PROBE_RTT left");
    eprintln!(
        "last min-RTT sample {} ms, PROBE_RTT {}..{} ms",
        last_min_sample / MS,
        entered / MS,
        left / MS
    );
    let since = entered - last_min_sample;
    assert!(since > 10 * SEC && since < 10 * SEC + 50 * MS, "{since}");
    assert!(left - entered >= 200 * MS, "{}", left - entered);
    assert!(left - entered < 200 * MS + 3 * 100 * MS);
    // Once inflight has fallen, at most 4 packets (the first ACKs see the old flight drain).
    assert_eq!(state_code(m.flows[0].cc.as_ref()), Mode::ProbeBw.code());
    assert!(max_inflight_in_probe > 0);
}

#[test]
fn test_debug_vars_expose_state_and_model() {
    let (b, _) = probe_bw(0);
    let mut extra = [("", 0.0); 16];
    let n = b.debug_vars(&mut extra);
    let get = |k: &str| extra[..n].iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(get("state"), Mode::ProbeBw.code());
    assert_eq!(get("btlbw_bps"), 8e6);
    assert_eq!(get("rtprop_ms"), 100.0);
    assert_eq!(get("pacing_gain"), 1.25);
    assert_eq!(get("cwnd_gain"), 2.0);
}
