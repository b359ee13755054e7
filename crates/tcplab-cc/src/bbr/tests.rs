//! Test helpers for the BBR phase files, and whole-algorithm tests on the model bottleneck
//! (`testkit/bottleneck.rs`) against the behaviour the paper describes: STARTUP → DRAIN → PROBE_BW, the
//! eight-phase gain cycle, PROBE_RTT after 10 s without a new minimum, and a queue that stays
//! near one BDP or less in PROBE_BW while the link stays full.

use super::{Bbr, BbrParams, CycleStart, Mode, PACING_GAIN_CYCLE};
use crate::testkit::bottleneck::{mean, Bottleneck, FixedWindow};
use crate::testkit::cc_init;
use crate::{AckEvent, CcInit, CongestionControl, CwndUnit, Nanos, RateSample, SentEvent, MS, SEC};

pub(crate) const MSS: u32 = 1000;

fn init(iw_segs: u64) -> CcInit {
    cc_init(MSS, CwndUnit::Packets, u32::MAX, iw_segs, u64::MAX)
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
        // Every packet of the round was sent at its start, when `delivered` was this much
        // (the rate sample's `prior_delivered`).
        let prior_delivered = self.delivered;
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
                packets_delivered: segs as u32,
                prior_in_flight: in_flight + segs * mss,
                in_flight,
                rtt_sample: Some(rtt),
                srtt: rtt,
                min_rtt: rtt,
                rate: Some(RateSample {
                    delivery_rate_bps: bw_bps,
                    delivered: self.delivered - prior_delivered,
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
fn test_model_startup_flight_doubles_per_round() {
    // STARTUP: cwnd grows by the data delivered (×2 per round, `bbr_set_cwnd` before the pipe
    // is full) and the pacing rate is 2/ln 2 ≈ 2.89 × the delivery rate of the last round, which
    // allows more than ×2 — so the window, not pacing, sets the flight: it doubles per round
    // (Cardwell et al. 2016: "STARTUP … doubles the sending rate each round"). On a 1 Gbit/s,
    // 100 ms path (BDP 12 500 packets) STARTUP lasts ~10 rounds; the flight at each round start
    // must be 2× the previous within 10 % (one round of ACKs is never exactly one RTT).
    let mut m = Bottleneck::new(1_000_000_000, MSS);
    m.add_flow(bbr(10), 100 * MS, 0);
    let mut flights = Vec::new();
    let mut round = m.flows[0].cc.round_count();
    while m.flows[0].cc.mode() == Mode::Startup && m.now < 5 * SEC {
        m.step();
        let r = m.flows[0].cc.round_count();
        if r != round {
            round = r;
            flights.push(m.flows[0].in_flight / u64::from(MSS));
        }
    }
    // Rounds well inside STARTUP: from the 3rd (IW effects over) to 4 before the exit (the
    // full-pipe test needs 3 rounds without growth).
    let ratios: Vec<f64> = flights
        .windows(2)
        .skip(2)
        .take(flights.len().saturating_sub(7))
        .map(|w| w[1] as f64 / w[0] as f64)
        .collect();
    eprintln!("startup flights per round {flights:?}, ratios {ratios:?}");
    assert!(ratios.len() >= 4, "{flights:?}");
    for r in &ratios {
        assert!((r - 2.0).abs() <= 0.2, "{ratios:?}");
    }
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
    let late = m.samples_from(3 * SEC);
    let q_mean = m.mean_backlog_from(3 * SEC);
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
    let mut m: Bottleneck<Box<dyn CongestionControl>> = Bottleneck::new(20_000_000, MSS);
    m.add_flow(Box::new(bbr(10)), 40 * MS, 0);
    // 130 packets on the same path: 100 fill it, 30 queue even when BBR sends nothing.
    m.add_flow(
        Box::new(FixedWindow::new(130 * u64::from(MSS))),
        40 * MS,
        2 * SEC,
    );
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

/// An ACK delivering `segs` segments now whose rate sample was taken from a packet sent when
/// the delivered count was `prior_delivered` (bandwidth `bw_bps`, 100 ms interval), with 100
/// segments left in flight.
fn ack_sampled(b: &mut Bbr, s: &mut Synth, segs: u64, prior_delivered: u64, bw_bps: f64) {
    let mss = u64::from(MSS);
    s.delivered += segs * mss;
    b.on_ack(&AckEvent {
        now: s.now,
        bytes_acked: segs * mss,
        packets_acked: segs as u32,
        packets_delivered: segs as u32,
        prior_in_flight: 100 * mss + segs * mss,
        in_flight: 100 * mss,
        rtt_sample: Some(100 * MS),
        srtt: 100 * MS,
        min_rtt: 100 * MS,
        rate: Some(RateSample {
            delivery_rate_bps: bw_bps,
            delivered: s.delivered - prior_delivered,
            interval: 100 * MS,
            is_app_limited: false,
            prior_in_flight: 100 * mss,
            total_delivered: s.delivered,
        }),
        mss: MSS,
        ..Default::default()
    });
}

#[test]
fn test_round_ends_when_a_packet_sent_after_its_start_is_delivered_despite_holes() {
    // Linux bbr_update_bw: a round ends on the first ACK whose sampled packet was sent after
    // the round started (rs->prior_delivered ≥ next_rtt_delivered), whether or not older
    // data is still missing.
    let (mut b, mut s) = probe_bw(2);
    let d0 = s.delivered;
    s.send(&mut b, 100);
    s.now += 100 * MS;
    // The first ACK for this flight starts a round (its packet left after the last start).
    let r0 = b.round_count();
    ack_sampled(&mut b, &mut s, 1, d0, 8e6);
    assert_eq!(b.round_count(), r0 + 1);
    // 89 more of the flight arrive, 10 are lost: still the same round.
    for _ in 0..89 {
        s.now += MS;
        ack_sampled(&mut b, &mut s, 1, d0, 8e6);
    }
    assert_eq!(b.round_count(), r0 + 1);
    // New data sent after the round started is delivered while the 10 holes remain: the
    // delivered count is below snd_nxt at the round's start, but the round is over.
    let d1 = s.delivered;
    s.send(&mut b, 10);
    s.now += 100 * MS;
    ack_sampled(&mut b, &mut s, 1, d1, 8e6);
    assert!(s.delivered < s.sent - 10_000);
    assert_eq!(b.round_count(), r0 + 2);
}

#[test]
fn test_auto_cycle_start_is_random_per_seed_and_deterministic() {
    // Linux bbr_reset_probe_bw_mode: a random phase other than 3/4 each time PROBE_BW is
    // entered; here from the flow's seeded stream: the same seed gives the same phases, other
    // seeds other phases.
    let phases = |seed: u64| {
        let mut b = bbr_with(10, BbrParams::default());
        b.set_random_seed(seed);
        (0..64)
            .map(|t| {
                b.enter_probe_bw(t);
                b.cycle_index()
            })
            .collect::<Vec<_>>()
    };
    let a = phases(1);
    assert_eq!(a, phases(1));
    assert_ne!(a, phases(2));
    assert!(!a.contains(&1), "never the 3/4 phase: {a:?}");
    for p in [0, 2, 3, 4, 5, 6, 7] {
        assert!(a.contains(&p), "phase {p} never chosen: {a:?}");
    }
    // Two flows entering at the same time with different seeds need not start in lockstep.
    let firsts: Vec<_> = (0..16u64).map(|seed| phases(seed)[0]).collect();
    assert!(firsts.iter().any(|&p| p != firsts[0]), "{firsts:?}");
}

#[test]
fn test_extra_acked_adds_ack_bursts_to_the_cwnd_target() {
    // Linux bbr_update_ack_aggregation / bbr_ack_aggregation_cwnd: data delivered in bursts
    // beyond BtlBw·elapsed is added to the cwnd target; smooth ACKs at BtlBw add ~nothing.
    let run = |aggregation: bool, burst: u64| {
        let (mut b, mut s) = probe_bw_with(
            2,
            BbrParams {
                ack_aggregation: aggregation,
                ..BbrParams::default()
            },
        );
        // A pause ends the ACK epoch of the setup rounds (which deliver 2 BDP per RTprop).
        s.now += 500 * MS;
        // 8 Mbit/s = 1 segment per ms: `burst` segments every `burst` ms, for 2 s (40 rounds:
        // the setup's maxima leave the 5–10-round window).
        let mut prior = s.delivered;
        for i in 0..(2000 / burst) {
            s.send(&mut b, burst);
            s.now += burst * MS;
            ack_sampled(&mut b, &mut s, burst, prior, 8e6);
            // A round per 100 ms: the packet sampled next was sent after this ACK.
            if (i * burst).is_multiple_of(100) {
                prior = s.delivered;
            }
        }
        b
    };
    let extra = |b: &Bbr| b.aggregation_cwnd() / u64::from(MSS);
    let smooth = run(true, 1);
    assert!(extra(&smooth) <= 1, "smooth: {}", extra(&smooth));
    let bursty = run(true, 20);
    assert!(
        (19..=21).contains(&extra(&bursty)),
        "bursts of 20: {}",
        extra(&bursty)
    );
    let off = run(false, 20);
    assert_eq!(off.aggregation_cwnd(), 0);
    // The cwnd target (2 BDP + budget) grows by the allowance.
    assert_eq!(
        bursty.cwnd() - off.cwnd(),
        20 * u64::from(MSS),
        "{} vs {}",
        bursty.cwnd(),
        off.cwnd()
    );
    // At most 100 ms of data at BtlBw (100 segments) and never more than cwnd.
    let huge = run(true, 400);
    assert_eq!(extra(&huge), 100);
}
