//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh & Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016) with the details of its Linux implementation
//! (L: net/ipv4/tcp_bbr.c; stacks-and-ccas.md A.12). One file per phase, as s2n-quic does:
//!
//! | file | what |
//! |---|---|
//! | `bw_filter.rs` | BtlBw: windowed max of delivery-rate samples over 10 rounds |
//! | `startup.rs` | STARTUP (gain 2/ln 2) and the full-pipe test (3 rounds with < 25 % growth) |
//! | `drain.rs` | DRAIN (gain ln 2/2) until inflight ≤ BDP |
//! | `probe_bw.rs` | PROBE_BW: pacing-gain cycle [5/4, 3/4, 1, 1, 1, 1, 1, 1], cwnd gain 2 |
//! | `probe_rtt.rs` | RTprop: min RTT over 10 s; PROBE_RTT: 4 packets for max(200 ms, 1 round) |
//! | `recovery.rs` | loss: packet conservation in the first recovery round, restore after |
//! | `ack_aggregation.rs` | `extra_acked`: cwnd allowance for ACK bursts above BtlBw |
//!
//! Per ACK (Linux `bbr_main`): update the model (BtlBw and rounds, gain-cycle phase, full-pipe
//! test, DRAIN exit, RTprop and PROBE_RTT, gains), then
//!
//! * `pacing_rate = pacing_gain · BtlBw · (1 − 1 %)` (the 1 % margin "to reduce queue at the
//!   bottleneck", `bbr_pacing_margin_percent`), only ever raised until the pipe is full;
//!   before the first RTT sample `2.885 · cwnd / (SRTT or 1 ms)`;
//! * `cwnd`: target = `⌈cwnd_gain · BtlBw · RTprop⌉` segments (10 if RTprop is unknown) plus the
//!   quantization budget (3 send quanta, rounded up to even, +2 in the 5/4 phase); cwnd moves
//!   towards it by the data newly delivered (never cut before the pipe is full), at least 4
//!   segments, at most 4 in PROBE_RTT.
//!
//! BtlBw, delivery rates and pacing rates are in bits per second of payload. `ssthresh` is not
//! used by BBR: it stays as initialised until STARTUP ends, when Linux sets it to the BDP.
//!
//! Modelled Linux additions to the paper: the ACK-aggregation allowance `extra_acked`
//! (`ack_aggregation.rs`, Linux ≥ 4.20) and the random first PROBE_BW phase, drawn from the
//! flow's deterministic random stream (`set_random_seed`, docs/design.md §2).
//!
//! Not modelled (Linux features beyond the paper's BBR v1 core): the long-term bandwidth
//! (policer) estimator `lt_bw`, the EDT "packets in network" correction, and `is_ack_delayed`
//! in the RTprop filter. The per-ACK loss deduction (`rs->losses`) is modelled
//! (`recovery.rs`).

mod ack_aggregation;
mod bw_filter;
mod drain;
mod probe_bw;
mod probe_rtt;
mod recovery;
mod startup;
#[cfg(test)]
mod tests;

use crate::growth::WindowState;
use crate::params::{ParamInfo, ParamKind, Params};
use crate::registry::CcError;
use crate::round::RoundTracker;
use crate::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, SentEvent, MS, SEC,
};
use bw_filter::MaxFilter;
pub use probe_bw::PACING_GAIN_CYCLE;

/// BBR's state machine (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up the sending rate quickly to fill the pipe.
    Startup,
    /// Drain the queue created in STARTUP.
    Drain,
    /// Steady state: pace around the estimated bandwidth, cycling the gain.
    ProbeBw,
    /// Cut inflight to 4 packets to measure the propagation RTT again.
    ProbeRtt,
}

impl Mode {
    /// Numeric code for the time series: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT.
    pub fn code(self) -> f64 {
        match self {
            Mode::Startup => 0.0,
            Mode::Drain => 1.0,
            Mode::ProbeBw => 2.0,
            Mode::ProbeRtt => 3.0,
        }
    }
}

/// Loss-recovery state as the stack reports it (Linux `icsk_ca_state`, reduced to what BBR
/// distinguishes; ordered like Linux's so that `≥ Recovery` means "in loss recovery").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CaState {
    Open,
    Recovery,
    Loss,
}

/// How the first PROBE_BW phase is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleStart {
    /// Deterministic stand-in for Linux's random pick among the 7 phases other than 3/4: a hash
    /// of the time PROBE_BW is entered.
    Auto,
    /// Always this phase (0 or 2..=7).
    Phase(usize),
}

impl CycleStart {
    pub const CHOICES: &'static [&'static str] = &["auto", "0", "2", "3", "4", "5", "6", "7"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(CycleStart::Auto),
            "0" | "2" | "3" | "4" | "5" | "6" | "7" => name.parse().ok().map(CycleStart::Phase),
            _ => None,
        }
    }
}

/// BBR's parameters (defaults: Linux tcp_bbr.c / the ACM Queue paper).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrParams {
    /// STARTUP pacing and cwnd gain, 2/ln 2 ≈ 2.885 (`bbr_high_gain`); DRAIN uses its inverse.
    pub startup_gain: f64,
    /// PROBE_BW cwnd gain (`bbr_cwnd_gain` = 2).
    pub cwnd_gain: f64,
    /// BtlBw filter window in rounds (`bbr_bw_rtts` = 10).
    pub bw_window_rounds: u64,
    /// RTprop filter window (`bbr_min_rtt_win_sec` = 10 s).
    pub min_rtt_window: Nanos,
    /// Time at 4 packets in PROBE_RTT (`bbr_probe_rtt_mode_ms` = 200 ms); 0 disables PROBE_RTT.
    pub probe_rtt_duration: Nanos,
    /// Pacing below the estimate by this fraction (`bbr_pacing_margin_percent` = 1 %).
    pub pacing_margin: f64,
    /// Add Linux's quantization budget to the cwnd target (`bbr_quantization_budget`).
    pub quantization_budget: bool,
    /// First PROBE_BW phase.
    pub cycle_start: CycleStart,
    /// Add the ACK-aggregation allowance `extra_acked` to the cwnd target (Linux ≥ 4.20,
    /// `bbr_extra_acked_gain` = 1; `ack_aggregation.rs`).
    pub ack_aggregation: bool,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            startup_gain: STARTUP_GAIN,
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            min_rtt_window: 10 * SEC,
            probe_rtt_duration: 200 * MS,
            pacing_margin: 0.01,
            quantization_budget: true,
            cycle_start: CycleStart::Auto,
            ack_aggregation: true,
        }
    }
}

/// 2/ln 2 to three decimals, as stacks-and-ccas.md A.12 and Linux (`BBR_UNIT * 2885 / 1000`):
/// "the smallest pacing gain that will allow a smoothly increasing pacing rate that will double
/// each RTT" (the exact value is 2.88539…).
pub const STARTUP_GAIN: f64 = 2.885;

/// Seed of the random stream until the stack provides one (`set_random_seed`).
const DEFAULT_RNG_SEED: u64 = 0x5EED_BB20_0000_0001;

/// Smallest cwnd, segments (`bbr_cwnd_min_target`): two outstanding 2-packet sequences.
pub(crate) const CWND_MIN_SEGMENTS: u64 = 4;
/// cwnd target before any RTT sample, segments (`TCP_INIT_CWND`).
const INIT_CWND_SEGMENTS: u64 = 10;
/// Pacing rate below which Linux uses 1-segment TSO bursts (`bbr_min_tso_rate`), bit/s.
const MIN_TSO_RATE_BPS: f64 = 1_200_000.0;
/// Largest send quantum, bytes (≈ GSO_MAX_SIZE, 64 KB), and segments (`0x7F`).
const MAX_QUANTUM_BYTES: f64 = 65_536.0;
const MAX_QUANTUM_SEGMENTS: u64 = 127;
/// `sk_pacing_shift` = 10: a send quantum holds ~1 ms (1/1024 s) of data at the pacing rate.
const PACING_SHIFT_SECONDS: f64 = 1.0 / 1024.0;

/// BBR v1.
#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    /// cwnd and ssthresh storage (unit rounding, ≥ 1 MSS).
    win: WindowState,
    mss: u64,
    /// Sent/acked/delivered byte counts reconstructed from the events (`snd_nxt`, `snd_una`,
    /// `tp->delivered`).
    rounds: RoundTracker,
    /// Linux `next_rtt_delivered`: the delivered count when the current round started; a
    /// round ends when a packet sent after that is delivered (`rs->prior_delivered ≥` it).
    next_rtt_delivered: u64,
    round_start: bool,
    /// State of the flow's deterministic random stream (SplitMix64), seeded through
    /// [`CongestionControl::set_random_seed`]; drives the random first PROBE_BW phase.
    rng: u64,
    /// ACK-aggregation estimator (`ack_aggregation.rs`).
    aggr: ack_aggregation::AckAggregation,
    bw: MaxFilter,
    /// RTprop estimate and when it was taken.
    min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Pacing rate, bit/s.
    pacing_rate: f64,
    has_seen_rtt: bool,
    // STARTUP.
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    // PROBE_BW.
    cycle_idx: usize,
    cycle_stamp: Nanos,
    // PROBE_RTT.
    probe_rtt_done_stamp: Option<Nanos>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// Linux marks samples app-limited while in PROBE_RTT (`tp->app_limited = delivered +
    /// inflight`): samples are treated as app-limited while `total_delivered ≤` this (see
    /// `probe_rtt.rs`); `app_limited_until_delivered` is the mark still to be passed.
    app_limited_snd_end: u64,
    app_limited_until_delivered: Option<u64>,
    // Loss recovery.
    ca_state: CaState,
    prev_ca_state: CaState,
    packet_conservation: bool,
    prior_cwnd: u64,
    loss_until: Option<u64>,
    /// A loss was detected since the last ACK (stands in for Linux `rs->losses > 0`).
    pending_loss: bool,
    // Delivered-data accounting between rate samples.
    last_total_delivered: u64,
    estimated_since_sample: u64,
    last_ack_app_limited: bool,
}

impl Bbr {
    /// A BBR controller; parameters are assumed valid (the registry checks them).
    pub fn new(init: &CcInit, p: BbrParams) -> Self {
        let win = WindowState::new(init);
        let mss = win.mss();
        let mut b = Bbr {
            p,
            bw: MaxFilter::new(p.bw_window_rounds),
            mss,
            rounds: RoundTracker::default(),
            next_rtt_delivered: 0,
            round_start: false,
            rng: DEFAULT_RNG_SEED,
            aggr: ack_aggregation::AckAggregation::default(),
            min_rtt: None,
            min_rtt_stamp: 0,
            mode: Mode::Startup,
            pacing_gain: p.startup_gain,
            cwnd_gain: p.startup_gain,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            app_limited_snd_end: 0,
            app_limited_until_delivered: None,
            ca_state: CaState::Open,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            prior_cwnd: 0,
            loss_until: None,
            pending_loss: false,
            last_total_delivered: 0,
            estimated_since_sample: 0,
            // Linux starts with tp->app_limited = ~0U.
            last_ack_app_limited: true,
            win,
        };
        b.init_pacing_rate(0);
        b
    }

    pub fn params(&self) -> &BbrParams {
        &self.p
    }
    /// Current state.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// BtlBw estimate, bit/s of payload (0 before the first sample).
    pub fn btlbw(&self) -> f64 {
        self.bw.get()
    }
    /// RTprop estimate.
    pub fn rtprop(&self) -> Option<Nanos> {
        self.min_rtt
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// Index in [`PACING_GAIN_CYCLE`] (meaningful in PROBE_BW).
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }
    /// Packet-timed rounds so far.
    pub fn round_count(&self) -> u64 {
        self.rounds.count()
    }
    /// True once STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Pacing rate, bit/s (unrounded).
    pub fn pacing_rate_bps(&self) -> f64 {
        self.pacing_rate
    }

    /// `⌈gain · bw · RTprop⌉` in bytes, whole segments (Linux `bbr_bdp`); 10 segments without an
    /// RTT sample.
    pub(crate) fn bdp(&self, bw_bps: f64, gain: f64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return INIT_CWND_SEGMENTS * self.mss;
        };
        let bytes = bw_bps / 8.0 * rtt as f64 / SEC as f64 * gain;
        let segs = (bytes / self.mss as f64).ceil();
        if segs.is_finite() && segs > 0.0 {
            (segs.min(1e15) as u64).saturating_mul(self.mss)
        } else {
            0
        }
    }

    /// Linux `bbr_tso_segs_goal`: ~1 ms of data at the pacing rate, 2 segments minimum (1 below
    /// 1.2 Mbit/s), at most 64 KB and 127 segments.
    fn send_quantum_segments(&self) -> u64 {
        let min = u64::from(self.min_tso_segs().unwrap_or(2));
        let bytes = (self.pacing_rate / 8.0 * PACING_SHIFT_SECONDS).min(MAX_QUANTUM_BYTES);
        let segs = (bytes / self.mss as f64).floor() as u64;
        segs.max(min).min(MAX_QUANTUM_SEGMENTS)
    }

    /// Linux `bbr_quantization_budget` applied to `cwnd` bytes.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        if !self.p.quantization_budget {
            return cwnd;
        }
        let mut segs = cwnd.div_ceil(self.mss) + 3 * self.send_quantum_segments();
        // "Reduce delayed ACKs by rounding up cwnd to the next even number."
        segs = (segs + 1) & !1;
        // "Ensure gain cycling gets inflight above BDP even for small BDPs."
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            segs += 2;
        }
        segs.saturating_mul(self.mss)
    }

    /// Linux `bbr_inflight`: BDP at `gain` plus the quantization budget.
    pub(crate) fn inflight_target(&self, bw_bps: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw_bps, gain))
    }

    /// Pacing rate for `bw` and `gain` with the 1 % margin, bit/s.
    fn rate_for(&self, bw_bps: f64, gain: f64) -> f64 {
        bw_bps * gain * (1.0 - self.p.pacing_margin)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: `high_gain · cwnd / RTT` (1 ms before a sample).
    fn init_pacing_rate(&mut self, srtt: Nanos) {
        let rtt = if srtt > 0 {
            self.has_seen_rtt = true;
            srtt
        } else {
            MS
        };
        let bw = self.win.cwnd() as f64 * 8.0 * SEC as f64 / rtt as f64;
        self.pacing_rate = self.rate_for(bw, self.p.startup_gain);
    }

    /// Linux `bbr_set_pacing_rate`: never lowered before the pipe is full.
    fn set_pacing_rate(&mut self, srtt: Nanos) {
        let rate = self.rate_for(self.btlbw(), self.pacing_gain);
        if !self.has_seen_rtt && srtt > 0 {
            self.init_pacing_rate(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (pg, cg) = match self.mode {
            Mode::Startup => (self.p.startup_gain, self.p.startup_gain),
            // Pacing 1/high_gain drains the STARTUP queue in about one round; cwnd kept.
            Mode::Drain => (1.0 / self.p.startup_gain, self.p.startup_gain),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], self.p.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
        self.pacing_gain = pg;
        self.cwnd_gain = cg;
    }

    /// Linux `bbr_reset_mode`: back to STARTUP if the pipe was never found full, else PROBE_BW.
    fn reset_mode(&mut self, now: Nanos) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_update_bw`: round counting and the BtlBw filter.
    fn update_bw(&mut self, ev: &AckEvent, app_limited: bool) {
        self.round_start = false;
        let Some(rs) = ev.rate.filter(|r| r.interval > 0) else {
            return;
        };
        // "See if we've reached the next RTT": the sampled packet was sent after the round
        // started, i.e. the delivered count in its send-time snapshot (`rs->prior_delivered`
        // = total − delivered over the sample) is at least the count at the round's start
        // (L: net/ipv4/tcp_bbr.c `bbr_update_bw`; draft-cardwell-iccrg-bbr-congestion-control
        // "BBRUpdateRound"). A round thus lasts one RTT of the sampled packets, also when
        // losses keep the delivered count below `snd_nxt`.
        let prior_delivered = rs.total_delivered.saturating_sub(rs.delivered);
        if prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.rounds.delivered();
            self.rounds.advance(ev.in_flight); // rtt_cnt++
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.delivery_rate_bps;
        // App-limited samples only count if they raise the estimate.
        if !app_limited || bw >= self.btlbw() {
            self.bw.update(self.rounds.count(), bw);
        }
    }

    /// Starts a new round now (Linux `next_rtt_delivered = tp->delivered`).
    pub(crate) fn start_round(&mut self) {
        self.next_rtt_delivered = self.rounds.delivered();
    }

    /// Next draw of the flow's random stream (SplitMix64, Steele, Lea & Flood 2014).
    pub(crate) fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Data newly delivered by this ACK, bytes (Linux `rs->acked_sacked`): the change of the
    /// stack's delivered count when the ACK has a rate sample, else acked + SACKed bytes (an
    /// estimate corrected at the next sample).
    fn newly_delivered(&mut self, ev: &AckEvent) -> u64 {
        match ev.rate {
            Some(rs) => {
                let delta = rs.total_delivered.saturating_sub(self.last_total_delivered);
                self.last_total_delivered = self.last_total_delivered.max(rs.total_delivered);
                let d = delta.saturating_sub(self.estimated_since_sample);
                self.estimated_since_sample = 0;
                self.rounds.on_delivered(rs.total_delivered);
                d
            }
            None => {
                let d = ev.bytes_acked.saturating_add(ev.bytes_sacked);
                self.estimated_since_sample = self.estimated_since_sample.saturating_add(d);
                d
            }
        }
    }

    /// Linux `bbr_set_cwnd`.
    fn set_cwnd(&mut self, ev: &AckEvent, acked: u64) {
        let mut cwnd = self.win.cwnd();
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(ev, acked);
            cwnd = c;
            if !conserving {
                let bw = self.btlbw();
                // Linux `bbr_set_cwnd`: BDP·cwnd_gain, plus the ACK-aggregation allowance,
                // plus the quantization budget.
                let bdp = self.bdp(bw, self.cwnd_gain);
                let target = self.quantization_budget(bdp.saturating_add(self.aggregation_cwnd()));
                if self.full_bw_reached {
                    // Grow towards the target, or snap down to it.
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || self.rounds.delivered() < INIT_CWND_SEGMENTS * self.mss {
                    // Before the pipe is full, never cut.
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_SEGMENTS * self.mss);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_SEGMENTS * self.mss);
        }
        self.win.set_cwnd(cwnd);
    }

    /// Updates the recovery state from the ACK (the stack's `in_recovery` and the end of an
    /// RTO's loss episode).
    fn track_ca_state(&mut self, ev: &AckEvent) {
        if self.ca_state == CaState::Loss {
            if let Some(m) = self.loss_until {
                if self.rounds.snd_una() >= m && !ev.in_recovery {
                    self.loss_until = None;
                    self.ca_state = CaState::Open;
                }
            }
        } else if ev.in_recovery {
            self.ca_state = CaState::Recovery;
        } else if self.ca_state == CaState::Recovery {
            self.ca_state = CaState::Open;
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.rounds.on_acked(ev.bytes_acked);
        let acked = self.newly_delivered(ev);
        self.track_ca_state(ev);
        self.update_app_limited_mark();
        let app_limited = ev
            .rate
            .is_some_and(|r| r.is_app_limited || r.total_delivered <= self.app_limited_snd_end);
        // bbr_update_model.
        self.update_bw(ev, app_limited);
        self.update_ack_aggregation(ev, acked);
        self.update_cycle_phase(ev);
        self.check_full_bw_reached(ev.rate.is_some() && !app_limited);
        self.check_drain(ev);
        self.update_min_rtt(ev, acked);
        self.update_gains();
        // bbr_main: pacing rate, then cwnd.
        self.set_pacing_rate(ev.srtt);
        self.set_cwnd(ev, acked);
        self.pending_loss = false;
        self.last_ack_app_limited = ev.app_limited;
    }

    fn on_congestion_event(&mut self, _ev: &CongestionEvent) {
        // Linux bbr_ssthresh: remember cwnd for the end of recovery; ssthresh unchanged.
        self.save_cwnd();
        self.ca_state = CaState::Recovery;
        self.pending_loss = true;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        // The restore (cwnd = max(cwnd, prior_cwnd)) happens on the ACK that ends recovery,
        // in recover_or_restore, as in Linux.
        if self.ca_state == CaState::Recovery {
            self.ca_state = CaState::Open;
        }
    }

    fn on_cwr_complete(&mut self, _now: Nanos) {
        // Linux (4.9+) `tcp_end_cwnd_reduction` leaves the window to a `cong_control` module
        // such as BBR: nothing to do.
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        self.on_timeout(ev);
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if !ev.is_retransmission && ev.in_flight <= u64::from(ev.bytes) && self.last_ack_app_limited
        {
            // CA_EVENT_TX_START while app-limited (Linux bbr_cwnd_event).
            self.idle_restart = true;
            match self.mode {
                Mode::ProbeBw => {
                    // Pace at the estimated bandwidth: no need for more speed after idle.
                    let rate = self.rate_for(self.btlbw(), 1.0);
                    if self.full_bw_reached || rate > self.pacing_rate {
                        self.pacing_rate = rate;
                    }
                }
                Mode::ProbeRtt => self.check_probe_rtt_done(ev.now),
                _ => {}
            }
        }
        self.rounds.on_sent(ev);
    }

    /// Linux skips the slow-start-after-idle window restart for controllers that set the
    /// window themselves (`tcp_slow_start_after_idle_check` returns for `cong_control`, L:
    /// net/ipv4/tcp_output.c): the window is left alone.
    fn on_idle_restart(&mut self, _now: Nanos, _restart_window: u64) {}

    fn set_random_seed(&mut self, seed: u64) {
        self.rng = seed;
    }

    fn on_undo(&mut self, _now: Nanos, _prior_cwnd: u64, prior_ssthresh: u64) {
        // Linux bbr_undo_cwnd: a spurious slow-down — reset the full-pipe test; cwnd unchanged.
        // The stack restores a larger prior ssthresh (tcp_undo_cwnd_reduction).
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        if prior_ssthresh > self.win.ssthresh() {
            self.win.set_ssthresh(prior_ssthresh);
        }
    }

    crate::growth::delegate_window!();

    /// Linux `bbr_min_tso_segs`: 1 below `bbr_min_tso_rate` (1.2 Mbit/s), else 2.
    fn min_tso_segs(&self) -> Option<u32> {
        Some(if self.pacing_rate < MIN_TSO_RATE_BPS {
            1
        } else {
            2
        })
    }

    fn rate_samples(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<u64> {
        let r = self.pacing_rate;
        Some(if r.is_finite() && r >= 1.0 {
            r.min(u64::MAX as f64) as u64
        } else {
            1
        })
    }

    fn governs_recovery(&self) -> bool {
        true
    }

    fn in_slow_start(&self) -> bool {
        self.mode == Mode::Startup
    }

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let vars = [
            ("state", self.mode.code()),
            ("btlbw_bps", self.btlbw()),
            ("rtprop_ms", self.min_rtt.map_or(0.0, |r| r as f64 / 1e6)),
            ("pacing_gain", self.pacing_gain),
            ("cwnd_gain", self.cwnd_gain),
            ("cycle_idx", self.cycle_idx as f64),
            ("round", self.rounds.count() as f64),
            ("extra_acked_bytes", self.aggregation_cwnd() as f64),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "startup_gain",
        kind: ParamKind::Float,
        default: "2.885",
        doc: "STARTUP pacing and cwnd gain (2/ln 2); DRAIN paces at its inverse; > 1",
    },
    ParamInfo {
        name: "cwnd_gain",
        kind: ParamKind::Float,
        default: "2",
        doc: "PROBE_BW cwnd gain: cwnd = cwnd_gain·BDP + allowances; ≥ 1",
    },
    ParamInfo {
        name: "bw_window_rounds",
        kind: ParamKind::Int,
        default: "10",
        doc: "BtlBw max-filter window in round trips (1..=64)",
    },
    ParamInfo {
        name: "min_rtt_window_ms",
        kind: ParamKind::Int,
        default: "10000",
        doc: "RTprop min-filter window; PROBE_RTT when it expires, ms (> 0)",
    },
    ParamInfo {
        name: "probe_rtt_ms",
        kind: ParamKind::Int,
        default: "200",
        doc: "time at 4 packets in PROBE_RTT, ms; 0 disables PROBE_RTT",
    },
    ParamInfo {
        name: "pacing_margin",
        kind: ParamKind::Float,
        default: "0.01",
        doc: "pace this fraction below the bandwidth estimate, in [0, 1)",
    },
    ParamInfo {
        name: "quantization_budget",
        kind: ParamKind::Bool,
        default: "true",
        doc: "add Linux's allowance of 3 send quanta (+2 in the 5/4 phase) to the cwnd target",
    },
    ParamInfo {
        name: "cycle_start",
        kind: ParamKind::Choice(CycleStart::CHOICES),
        default: "auto",
        doc: "first PROBE_BW phase: \"auto\" (random among the 7 phases other than 3/4, as \
              Linux, from the flow's seeded stream) or a fixed phase \"0\", \"2\"..\"7\"",
    },
    ParamInfo {
        name: "ack_aggregation",
        kind: ParamKind::Bool,
        default: "true",
        doc: "add the ACK-aggregation allowance extra_acked (max excess delivered over 5-10 \
              rounds, ≤ 100 ms at BtlBw) to the cwnd target, as Linux ≥ 4.20",
    },
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let startup_gain = p.float("startup_gain");
    if !(startup_gain.is_finite() && startup_gain > 1.0 && startup_gain <= 100.0) {
        return Err(p.invalid(
            "startup_gain",
            startup_gain.to_string(),
            "must be in (1, 100]",
        ));
    }
    let cwnd_gain = p.float("cwnd_gain");
    if !(cwnd_gain.is_finite() && (1.0..=100.0).contains(&cwnd_gain)) {
        return Err(p.invalid("cwnd_gain", cwnd_gain.to_string(), "must be in [1, 100]"));
    }
    let rounds = p.int("bw_window_rounds");
    if !(1..=bw_filter::MAX_WINDOW as i64).contains(&rounds) {
        return Err(p.invalid("bw_window_rounds", rounds.to_string(), "must be in 1..=64"));
    }
    let ms = |name: &'static str, min: i64| {
        let v = p.int(name);
        if (min..=86_400_000).contains(&v) {
            Ok(v as u64 * MS)
        } else {
            Err(p.invalid(name, v.to_string(), "out of range"))
        }
    };
    let min_rtt_window = ms("min_rtt_window_ms", 1)?;
    let probe_rtt_duration = ms("probe_rtt_ms", 0)?;
    let pacing_margin = p.float("pacing_margin");
    if !(0.0..1.0).contains(&pacing_margin) {
        return Err(p.invalid(
            "pacing_margin",
            pacing_margin.to_string(),
            "must be in [0, 1)",
        ));
    }
    let params = BbrParams {
        startup_gain,
        cwnd_gain,
        bw_window_rounds: rounds as u64,
        min_rtt_window,
        probe_rtt_duration,
        pacing_margin,
        quantization_budget: p.bool("quantization_budget"),
        cycle_start: CycleStart::from_name(p.choice("cycle_start")).unwrap_or(CycleStart::Auto),
        ack_aggregation: p.bool("ack_aggregation"),
    };
    Ok(Box::new(Bbr::new(init, params)))
}
