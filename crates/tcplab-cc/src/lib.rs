//! Congestion-control algorithms for tcplab, behind one small trait.
//!
//! The stack (in `tcplab-sim`) *measures*: it counts acknowledged bytes and packets, samples RTT and
//! delivery rate, detects loss and runs loss recovery. A [`CongestionControl`] implementation
//! *decides*: it owns the congestion window, the slow-start threshold and (optionally) a pacing
//! rate, and is told about events by name (`on_ack`, `on_congestion_event`, `on_rto`, ...).
//!
//! Division of labour during loss recovery (mirrors Linux's `tcp_congestion_ops` and
//! RFC 5681/6675): when the stack enters recovery it calls [`CongestionControl::on_congestion_event`];
//! the controller sets its `ssthresh` (and whatever internal state, e.g. CUBIC's `W_max`). While in
//! recovery the *recovery part* of the stack (RFC 6675, NewReno, PRR, ...) governs how much may be
//! sent; `on_ack` is still called (with `in_recovery = true`) so delay- and rate-based controllers
//! keep their estimators fed, but window-growth rules must not grow `cwnd` then. When recovery ends
//! the stack calls [`CongestionControl::on_recovery_exit`] and the controller sets `cwnd` (normally
//! to `ssthresh`). A controller that wants to govern the window in recovery itself (BBR) returns
//! `true` from [`CongestionControl::governs_recovery`].
//!
//! All times are integer nanoseconds ([`Nanos`]); windows are in bytes. Controllers never read a
//! clock: time arrives in the event.
//!
//! # Algorithms
//!
//! Build one by name with [`build`] (or list them with [`list`]); parameters are checked against
//! the declarations below (unknown names, unknown parameters and wrong types are errors with the
//! allowed alternatives in the message).
//!
//! | name | what | parameters (default) | sources |
//! |---|---|---|---|
//! | `reno` | slow start, +1 SMSS/RTT, `ssthresh = max(basis/2, 2·SMSS)`, cwnd 1 SMSS after an RTO | `ssthresh_from` (`"auto"`: cwnd in packets, FlightSize in bytes; `"cwnd"`, `"flight_size"`) | RFC 5681 §3.1–3.2, RFC 3465, L: net/ipv4/tcp_cong.c |
//! | `newreno` | `reno`'s window rules under its own name; the partial-ACK recovery is the stack's | `ssthresh_from` (`"auto"`) | RFC 5681, RFC 6582 §3 |
//! | `cubic` | `W(t) = C(t−K)³ + W_max`, Reno-friendly region, fast convergence, β decrease, HyStart / HyStart++ | `hystart` (`"linux"`; `"off"`, `"rfc9406"`), `hystart_detect` (`"both"`; `"ack_train"`, `"delay"`), `hystart_low_window` (16), `hystart_ack_delta_us` (2000), `hystart_ack_delay` (true: Linux ≥ 5.7 ACK-train allowance), `fast_convergence` (true), `tcp_friendliness` (true), `beta` (0.7; 819/1024 with version 2.0), `c` (0.4), `ssthresh_from` (`"auto"`), `version` (`"rfc9438"`; `"2.0"`: Linux v2.0 — β 819/1024, initial ssthresh 100, max increment 16, cnt 50 before the first loss, delayed-ACK compensation, no HyStart), `v2_scaling_bug` (true: 2.6.18's curve term cube_rtt_scale 32), `v2_strict_floor` (true: delay_min in plain jiffies, the 8× max-increment floor of v2.0 to 2.6.18) | RFC 9438, RFC 9406, Ha/Rhee/Xu 2008, L: net/ipv4/tcp_cubic.c v2.3 and v2.0, LKML "tcp: cubic scaling error" (Nov 2006) |
//! | `vegas` | once per RTT `diff = cwnd·(minRTT − baseRTT)/baseRTT`: +1 if `diff < α`, −1 if `diff > β`; leaves slow start when `diff > γ`; Reno with < 3 RTT samples per round; Reno halving on loss | `alpha` (2), `beta` (4), `gamma` (1), `ssthresh_from` (`"auto"`) | Brakmo & Peterson 1995, L: net/ipv4/tcp_vegas.c |
//! | `fast` | once per RTT `w ← min{2w, (1−γ)w + γ(baseRTT/RTT·w + α)}` (≈ α packets queued per flow), increase spread over the RTT; Reno halving on loss (assumed) | `alpha` (200, UNVERIFIED), `gamma` (0.5, UNVERIFIED), `ssthresh_from` (`"auto"`) | Jin, Wei & Low, INFOCOM 2004 |
//! | `ctcp` | `win = cwnd + dwnd`; per RTT `dwnd += (α·win^k − 1)⁺` if `diff < γ`, else `(dwnd − ζ·diff)⁺`; loss `dwnd = (win(1−β) − cwnd/2)⁺`, `cwnd/2`; RTO `dwnd = 0`; γ auto-tuning | `alpha` (0.125), `beta` (0.5), `k` (0.75), `zeta` (1), `gamma` (30), `gamma_tuning` (true), `gamma_low` (5), `gamma_high` (30), `lambda` (0.5), `low_window` (41, UNVERIFIED), `ssthresh_from` (`"auto"`) | draft-sridharan-tcpm-ctcp-02, Tan et al. INFOCOM 2006 |
//! | `bbr` | BBR v1: BtlBw (max delivery rate, 10 rounds), RTprop (min RTT, 10 s); STARTUP 2.885 → DRAIN → PROBE_BW gain cycle [5/4, 3/4, 1×6] → PROBE_RTT (4 packets, 200 ms); pacing `gain·BtlBw·0.99`, cwnd `2·BDP` + allowances; governs recovery (packet conservation) | `startup_gain` (2.885), `cwnd_gain` (2), `bw_window_rounds` (10), `min_rtt_window_ms` (10000), `probe_rtt_ms` (200), `pacing_margin` (0.01), `quantization_budget` (true), `cycle_start` (`"auto"`: random from the flow's seeded stream), `ack_aggregation` (true: `extra_acked` cwnd allowance) | Cardwell et al., ACM Queue 2016, draft-cardwell-iccrg-bbr-congestion-control-02, L: net/ipv4/tcp_bbr.c |
//! | `bic` | BIC: binary search toward `W_max` (`min((W_max−w)/4, 16)`/RTT, 0.2 near it), max probing above, Reno ≤ 14 segments, ≥ 5 %/RTT before the first loss, delayed-ACK compensation (integer EWMA 1/16); `ssthresh = cwnd·819/1024` (½ at ≤ 14), fast convergence `W_max = cwnd·1843/2048` | `variant` (`"linux"`; `"2.6.10"`: β 7/8, max increment 32 and func-of-min-incr 11 (2.6.9/2.6.11 tcp.h), no 5 % floor, W_max kept over a timeout), `fast_convergence` (true), `fast_convergence_bug` (true, 2.6.10 only: `W_max = cwnd·15/4`), `initial_ssthresh` (0 = keep), `ssthresh_from` (`"auto"`) | Xu/Harfoush/Rhee INFOCOM 2004, L: net/ipv4/tcp_bic.c, LKML "BicTCP Implementation Bug" (Feb 2005) |
//! | `hstcp` | HighSpeed TCP: `w += a(w)/w` per ACK, `w ← (1 − b(w))·w`, `a`, `b` from RFC 3649 Appendix B (72 rows, Linux's `md = ⌊256·b⌋`); standard TCP up to 38 segments | `ssthresh_from` (`"auto"`) | RFC 3649 §5, App. B, L: net/ipv4/tcp_highspeed.c |
//! | `htcp` | H-TCP: `cwnd += 2(1−β)·α(Δ)/cwnd`, `α(Δ) = 1 + 10(Δ−1) + ((Δ−1)/2)²` after 1 s since the last event; β = RTTmin/RTTmax ∈ [0.5, 0.8] (RTTmin > 10 ms), 0.5 after a > 20 % throughput change | `rtt_scaling` (true), `bandwidth_switch` (true), `adaptive_backoff` (true), `ssthresh_from` (`"auto"`) | Leith & Shorten PFLDnet 2004, L: net/ipv4/tcp_htcp.c |
//! | `scalable` | Scalable TCP: +1 segment per `min(cwnd, ai_cnt)` ACK units (×1.02/RTT with an ACK per segment, ×1.01 with delayed ACKs), `ssthresh = cwnd − cwnd/8` | `ai_cnt` (50; 100 with packet counting as Linux ≥ 5.7), `legacy_window` (0 = none; Kelly's 16 UNVERIFIED), `ssthresh_from` (`"auto"`) | Kelly CCR 2003, L: net/ipv4/tcp_scalable.c |
//! | `illinois` | TCP-Illinois: once per RTT α ∈ [0.3, 10] and β ∈ [1/8, 1/2] from the average queueing delay vs its maximum; `cwnd += α/cwnd`, loss `cwnd·(1 − β)`; Reno below 15 segments | `win_thresh` (15), `theta` (5), `ssthresh_from` (`"auto"`) | Liu/Başar/Srikant 2008, L: net/ipv4/tcp_illinois.c |
//! | `westwood` | Westwood+: Reno probing; bandwidth from ACKed bytes over ≥ max(RTT, 50 ms), two 7/8 EWMAs; recovery exit `cwnd = ssthresh = max(bw·RTTmin/MSS, 2)`, RTO `ssthresh` likewise | `ssthresh_from` (`"auto"`, for the halving during recovery) | Mascolo et al. MobiCom 2001, Grieco & Mascolo CCR 2004, L: net/ipv4/tcp_westwood.c |
//!
//! # Window arithmetic
//!
//! Every window-based controller grows its window through [`WindowState`] (module [`growth`]),
//! so the OS personality's [`WindowGrowth`] decides the unit (Linux packets with
//! `snd_cwnd_cnt`, or RFC 5681 bytes) and Appropriate Byte Counting (RFC 3465) for all of them.
//! In the packets unit, windows are whole segments (setters round down).
//!
//! # The `app_limited` flag
//!
//! [`AckEvent::app_limited`] `true` means the sender was application- or receive-window-limited
//! and the ACK must not grow the window (see [`growth::may_grow`]).

#![forbid(unsafe_code)]

pub(crate) mod aimd;
pub mod bbr;
pub mod bic;
pub mod ctcp;
pub mod cubic;
pub mod fast;
pub mod growth;
pub mod hstcp;
pub mod htcp;
pub mod hystart;
pub mod illinois;
pub mod params;
pub mod registry;
pub mod reno;
pub(crate) mod round;
pub mod scalable;
#[cfg(test)]
pub(crate) mod testkit;
pub mod vegas;
pub mod westwood;

pub use bbr::{Bbr, BbrParams};
pub use bic::{Bic, BicParams, BicVariant};
pub use ctcp::{Ctcp, CtcpParams};
pub use cubic::{Cubic, CubicParams, CubicVersion, HystartMode};
pub use fast::{Fast, FastParams};
pub use growth::{AiRule, CwndUnit, SsthreshBasis, WindowGrowth, WindowState};
pub use hstcp::HighSpeed;
pub use htcp::{Htcp, HtcpParams};
pub use hystart::HystartDetect;
pub use illinois::{Illinois, IllinoisParams};
pub use params::{ParamInfo, ParamKind, ParamValue, Params};
pub use registry::{build, find, list, CcError, CcInfo, Constructor};
pub use reno::Reno;
pub use scalable::{Scalable, ScalableParams};
pub use vegas::{Vegas, VegasParams};
pub use westwood::Westwood;

/// Simulation time or a duration, in nanoseconds.
pub type Nanos = u64;

/// One millisecond in [`Nanos`].
pub const MS: Nanos = 1_000_000;
/// One second in [`Nanos`].
pub const SEC: Nanos = 1_000_000_000;

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), produced by the stack's
/// rate sampler for the ACK being processed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Delivered bytes over `interval`, as bits per second.
    pub delivery_rate_bps: f64,
    /// Bytes delivered during the sample's interval.
    pub delivered: u64,
    /// Length of the sampling interval.
    pub interval: Nanos,
    /// True if the sender was application- or receive-window-limited when the sampled packet left.
    pub is_app_limited: bool,
    /// Bytes in flight when the sampled packet was sent.
    pub prior_in_flight: u64,
    /// Total bytes the stack had delivered (cumulative, `C.delivered`) when this sample was taken.
    pub total_delivered: u64,
}

/// What the stack tells a controller on each ACK that advances `snd_una` or SACKs new data
/// (and also on duplicate ACKs during recovery, with `bytes_acked = 0`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckEvent {
    /// Time the ACK was processed.
    pub now: Nanos,
    /// Bytes newly acknowledged cumulatively by this ACK (`Δsnd.una`).
    pub bytes_acked: u64,
    /// Full segments newly acknowledged cumulatively by this ACK (Linux's `acked` packet count).
    pub packets_acked: u32,
    /// Segments newly delivered by this ACK: cumulatively acknowledged and not SACKed before,
    /// plus newly SACKed (Linux `tcp_newly_delivered`); what [`WindowGrowth::count_delivered`]
    /// credits.
    pub packets_delivered: u32,
    /// Bytes newly SACKed by this ACK.
    pub bytes_sacked: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight: u64,
    /// Bytes in flight after this ACK was processed.
    pub in_flight: u64,
    /// RTT sample taken from this ACK, if any (Karn's rule already applied).
    pub rtt_sample: Option<Nanos>,
    /// Smoothed RTT after this ACK (0 before the first sample).
    pub srtt: Nanos,
    /// Minimum RTT seen on the connection so far (0 before the first sample).
    pub min_rtt: Nanos,
    /// True while the stack is in fast recovery / loss recovery.
    pub in_recovery: bool,
    /// The ACK arrived outside Linux's Open state (`icsk_ca_state` before the ACK is processed
    /// is Disorder, CWR, Recovery or Loss: duplicate ACKs counted, SACKed or lost data
    /// outstanding, an episode or the Disorder period after one). Linux's BIC and CUBIC (to
    /// 3.19) sample their delayed-ACK ratio only on ACKs that arrive in Open (`bictcp_acked`,
    /// called from `tcp_clean_rtx_queue` before `tcp_fastretrans_alert` changes the state).
    pub outside_open: bool,
    /// True if the application or the receiver's window, not the congestion window, limited
    /// sending, so window growth should not be credited (RFC 7661 spirit; the negation of Linux's
    /// `tcp_is_cwnd_limited`).
    pub app_limited: bool,
    /// Delivery-rate sample for this ACK, if the rate sampler produced one.
    pub rate: Option<RateSample>,
    /// Sender maximum segment size in bytes.
    pub mss: u32,
    /// Bytes newly marked lost while this ACK was processed (by the duplicate-ACK rules or
    /// RACK): Linux's `rs->losses` (`tp->lost` before and after the ACK, net/ipv4/tcp_input.c
    /// `tcp_ack`), in bytes. Only BBR reads it.
    pub bytes_lost: u64,
}

/// A loss-triggered congestion event (entry into fast recovery / loss recovery).
#[derive(Clone, Copy, Debug, Default)]
pub struct CongestionEvent {
    pub now: Nanos,
    /// Bytes in flight when loss was detected (RFC 5681's FlightSize).
    pub in_flight: u64,
    /// Bytes newly marked lost by this detection.
    pub lost_bytes: u64,
    /// Smoothed RTT at the event.
    pub srtt: Nanos,
    /// Minimum RTT seen on the connection.
    pub min_rtt: Nanos,
    pub mss: u32,
    /// The peer's advertised receive window (scaled), for [`SsthreshBasis::Bsd`].
    pub peer_window: u64,
}

/// A retransmission timeout.
#[derive(Clone, Copy, Debug, Default)]
pub struct RtoEvent {
    pub now: Nanos,
    /// Bytes in flight when the timer fired.
    pub in_flight: u64,
    /// Number of consecutive timeouts for the same data, including this one (1 for the first).
    pub backoff_count: u32,
    pub mss: u32,
    /// The peer's advertised receive window (scaled), for [`SsthreshBasis::Bsd`].
    pub peer_window: u64,
    /// The timeout interrupted a fast recovery (XNU CUBIC keeps the recovery's `ssthresh`
    /// then: [`SsthreshBasis::Xnu`]).
    pub in_recovery: bool,
    /// The stack keeps the `ssthresh` of a reduction still under way and does not ask the
    /// controller for a new one: Linux `tcp_enter_loss` (2.4 to 6.x) calls the congestion
    /// control's `ssthresh()` only in the Open or Disorder state, once snd_una has reached
    /// `high_seq`, or in the Loss state before a retransmission is counted; a timeout that
    /// interrupts a fast recovery (Recovery) or a CWR episode whose recovery point is not yet
    /// acknowledged keeps that episode's `ssthresh` (the sender sets this under its knob
    /// `rto_keeps_recovery_ssthresh`). See [`RtoEvent::sets_ssthresh`].
    pub keeps_ssthresh: bool,
}

impl RtoEvent {
    /// The one gate of a timeout's `ssthresh` (every controller asks it, directly or through
    /// [`SsthreshBasis::reduces_on_timeout`]): whether the stack calls the controller's
    /// `ssthresh` rule (and its loss event, as Linux's `CA_EVENT_LOSS`) on this timeout. The
    /// first timeout of a series does (RFC 5681 §3.1, text after eq. 4: `ssthresh` is held on
    /// repeated timeouts), unless the stack keeps the reduction under way
    /// ([`RtoEvent::keeps_ssthresh`]: Linux `tcp_enter_loss`, net/ipv4/tcp_input.c, read for
    /// the facts in 2.4.27, 2.6.11 and 6.x trees: "Reduce ssthresh if it has not yet been made
    /// inside this window").
    #[inline]
    pub fn sets_ssthresh(&self) -> bool {
        self.backoff_count <= 1 && !self.keeps_ssthresh
    }
}

/// A packet the stack just sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct SentEvent {
    pub now: Nanos,
    pub bytes: u32,
    /// Bytes in flight after this packet.
    pub in_flight: u64,
    pub is_retransmission: bool,
    /// Total bytes delivered so far (for round counting).
    pub total_delivered: u64,
}

/// Copying a controller's whole state onto another controller of the same algorithm, in place:
/// a pool of connections (`tcplab-sim`'s background traffic) starts each new connection's
/// controller as a copy of a freshly built one and so allocates nothing per connection. Every
/// controller gets it from the blanket implementation below (controllers are plain `Clone`
/// data); it is a separate trait only because a trait's default methods cannot require `Clone`.
pub trait CopyState {
    /// `self` as [`Any`](std::any::Any), for the type check of [`copy_state_from`](Self::copy_state_from).
    fn as_any(&self) -> &dyn std::any::Any;
    /// Overwrite `self` with a copy of `src` if both are the same algorithm (type) and return
    /// true; leave `self` unchanged and return false otherwise.
    fn copy_state_from(&mut self, src: &dyn CongestionControl) -> bool;
}

impl<T: CongestionControl + Clone + 'static> CopyState for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn copy_state_from(&mut self, src: &dyn CongestionControl) -> bool {
        match src.as_any().downcast_ref::<T>() {
            Some(s) => {
                self.clone_from(s);
                true
            }
            None => false,
        }
    }
}

/// A congestion-control algorithm. The stack calls these hooks; the controller owns `cwnd`,
/// `ssthresh` and the pacing rate. Every hook but the accessors has a default no-op.
pub trait CongestionControl: Send + CopyState {
    /// Short lowercase name, e.g. `"cubic"`.
    fn name(&self) -> &'static str;

    /// An ACK arrived that acknowledged or SACKed new data (or a duplicate ACK in recovery).
    fn on_ack(&mut self, ev: &AckEvent);

    /// Loss was detected (three duplicate ACKs, SACK-based loss, RACK, ...): set `ssthresh`.
    fn on_congestion_event(&mut self, ev: &CongestionEvent);

    /// Loss recovery finished (the recovery point was cumulatively acknowledged): set `cwnd`.
    /// The default sets `cwnd = ssthresh`, as RFC 5681 §3.2 step 6 and Linux do.
    fn on_recovery_exit(&mut self, now: Nanos) {
        let _ = now;
        let s = self.ssthresh();
        self.set_cwnd(s);
    }

    /// A CWR episode (the window reduction of a local congestion signal, entered through
    /// [`on_congestion_event`](Self::on_congestion_event)) ended: everything sent before it
    /// began is acknowledged. Linux `tcp_complete_cwr` (2.6, net/ipv4/tcp_input.c; read for the
    /// behaviour): `cwnd = min(cwnd, ssthresh)`, then `CA_EVENT_COMPLETE_CWR` and the return to
    /// the Open state, which re-enables delay-based algorithms (Vegas' `tcp_vegas_state`). The
    /// default is the min rule; controllers with their own CWR state override it.
    fn on_cwr_complete(&mut self, now: Nanos) {
        let _ = now;
        let w = self.cwnd().min(self.ssthresh());
        self.set_cwnd(w);
    }

    /// The retransmission timer expired.
    fn on_rto(&mut self, ev: &RtoEvent);

    /// A packet left the host.
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        let _ = ev;
    }

    /// The connection restarts after an idle period longer than the RTO (RFC 5681 §4.1).
    /// The default restarts from `min(cwnd, restart_window)`.
    fn on_idle_restart(&mut self, now: Nanos, restart_window: u64) {
        let _ = now;
        let w = self.cwnd().min(restart_window);
        self.set_cwnd(w);
    }

    /// A spurious-retransmission undo (Eifel/DSACK) restored the pre-event window. Optional.
    fn on_undo(&mut self, now: Nanos, prior_cwnd: u64, prior_ssthresh: u64) {
        let _ = now;
        self.set_cwnd(prior_cwnd);
        self.set_ssthresh(prior_ssthresh);
    }

    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` means "infinite", RFC 5681 §3.1).
    fn ssthresh(&self) -> u64;
    /// Overwrite the window (used by recovery parts and idle restart).
    fn set_cwnd(&mut self, cwnd: u64);
    /// Overwrite the threshold.
    fn set_ssthresh(&mut self, ssthresh: u64);

    /// Pacing rate in bits per second, or `None` to send as fast as the window allows.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// The fewest segments a paced send quantum may hold, if the controller sets it (Linux
    /// `ca_ops->min_tso_segs`); None = the stack's default (`tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self) -> Option<u32> {
        None
    }

    /// True if this controller sets the window during recovery itself (BBR); then the stack's
    /// recovery part only chooses *what* to send, not *how much*.
    fn governs_recovery(&self) -> bool {
        false
    }

    /// True if this controller reads [`AckEvent::rate`] (BBR's delivery-rate samples). The stack
    /// asks once per connection; for a controller that says false it keeps only the delivered
    /// count (`SentEvent::total_delivered`) and passes `rate: None`, which is all such a
    /// controller could tell apart (`registry::tests::prop_rate_blind_controllers_ignore_rate`
    /// checks every registered one that says false).
    fn rate_samples(&self) -> bool {
        false
    }

    /// True if the controller asks for RTT samples from high-resolution send stamps: Linux
    /// 2.6.22–3.14 flag `TCP_CONG_RTT_STAMP` (include/net/tcp.h; "[TCP]: Congestion control API
    /// update", 164891aadf1, 2.6.22; removed with the µs RTT of 3.15). Such a controller's
    /// `pkts_acked` got `ktime_us_delta(now, skb->tstamp)` of the newest acknowledged segment;
    /// all others got that segment's RTT in whole jiffies (net/ipv4/tcp_input.c
    /// `tcp_clean_rtx_queue`). The stack honours it with `rtt_sampling = "linux-2.6"` only.
    fn rtt_stamp(&self) -> bool {
        false
    }

    /// True while in slow start (`cwnd < ssthresh` for window-based controllers).
    fn in_slow_start(&self) -> bool {
        self.cwnd() < self.ssthresh()
    }

    /// Seeds the controller's random stream (BBR's random first PROBE_BW phase). The stack
    /// calls it once after building the controller with a seed derived from the trial seed and
    /// the flow (docs/design.md §2), so runs stay deterministic. Default: no randomness used.
    fn set_random_seed(&mut self, seed: u64) {
        let _ = seed;
    }

    /// Algorithm-specific variables for the time series (name, value), e.g. CUBIC's `w_max`.
    /// Written into `extra` by the caller; must not allocate.
    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let _ = extra;
        0
    }
}

/// Parameters every controller needs at construction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcInit {
    /// Sender maximum segment size, bytes.
    pub mss: u32,
    /// Initial congestion window, bytes.
    pub initial_cwnd: u64,
    /// Initial slow-start threshold, bytes (`u64::MAX` for "infinite").
    pub initial_ssthresh: u64,
    /// How window growth is counted (packets as in Linux, bytes as in BSD/Windows; ABC).
    pub growth: WindowGrowth,
}

/// Writes `vars` into the caller's `extra` (as many as fit) and returns how many it wrote: the
/// body of every [`CongestionControl::debug_vars`]. Allocates nothing.
pub(crate) fn write_debug_vars(
    extra: &mut [(&'static str, f64)],
    vars: &[(&'static str, f64)],
) -> usize {
    let n = vars.len().min(extra.len());
    extra[..n].copy_from_slice(&vars[..n]);
    n
}
