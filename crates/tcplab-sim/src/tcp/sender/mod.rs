//! The data-sending end of a bulk TCP connection (iperf's client): active open, segmentation,
//! the send loop, loss detection and recovery, the retransmission and persist timers.
//!
//! Parts, each separate and unit-tested without the event loop (docs/design.md; style.md
//! habit 3):
//! * [`handshake`]: the SYN, its retries and the option negotiation (RFC 9293 §3.5, RFC 7323);
//! * [`ack`]: an incoming ACK turned into an [`ack::AckOutcome`] — cumulative advance, window,
//!   SACK and D-SACK blocks, RTT sample, duplicate ACKs (RFC 5681 §2, RFC 6675 §2, RFC 2883);
//! * [`loss`]: SACK-based loss marking and RACK-TLP (RFC 6675, RFC 8985);
//! * [`undo`]: the detectors of spurious reductions — D-SACK (RFC 3708), Eifel (RFC 3522),
//!   F-RTO (RFC 5682), FreeBSD's bad-retransmit window;
//! * [`episode`]: recovery, loss (after a timeout) and local-congestion (CWR) episodes — when
//!   one begins, ends or is undone, and what that does to the controller and the scoreboard
//!   (RFC 5681 §3, RFC 6675 §5, RFC 6582, RFC 6298 §5.4–5.6, Linux CWR);
//! * [`send`]: one step of the send loop — the pacing and host-queue gates, NextSeg (RFC 6675
//!   §4), room for new data, SWS avoidance (RFC 9293 §3.8.6.2.1), limited transmit (RFC 3042);
//! * [`timers`]: the deadlines, `poll_at`, the retransmission timer on an advancing ACK;
//! * window growth and reduction: the [`CongestionControl`] object (crate `tcplab-cc`);
//! * loss detection and what to resend: [`Scoreboard`] (RFC 6675) — NewReno (RFC 6582), or
//!   Linux's PRR without SACK (knob `recovery_nosack`), when SACK is off or not negotiated; the
//!   window during recovery: [`Recovery`];
//! * RTT and RTO: [`RttEstimator`] (RFC 6298); delivery rate: `RateSampler`.
//!
//! # Orchestration
//!
//! [`TcpSender`] keeps the connection state and the public API, does all I/O through [`Cx`]
//! and calls the parts in this order.
//!
//! An ACK (`on_packet` → `on_ack`):
//! 1. [`ack`]: acceptability, window, SACK and D-SACK blocks, RTT sample, duplicate-ACK count;
//!    or the fast path (`on_in_order_ack`: an ACK that only advances snd_una,
//!    [`ack::AckProcessor::in_order`], while [`episode::Episodes::quiet`]), which runs steps
//!    4–7 without the episode rules, none of which can fire then;
//! 2. the connection's bookkeeping: FIN, peer window (persist timer), `ts_recent`, snd_una,
//!    a D-SACK to [`undo`];
//! 3. [`episode`]'s bad-retransmit undo (before the RTT sample resets the backoff), then the
//!    RTT sample;
//! 4. [`loss`]: SACK or FACK marking, then RACK;
//! 5. [`episode`]: undo (D-SACK, Eifel, F-RTO), leaving recovery, loss and CWR, then entering
//!    recovery or recovery's per-ACK window rule;
//! 6. the congestion controller's `on_ack` (then `on_cwr_complete` on the ACK ending CWR);
//! 7. [`timers`]: the retransmission timer (RFC 6298 §5.2–5.3), the probe timeout (RFC 8985
//!    §7.2);
//! 8. the send loop.
//!
//! The send loop (`try_send`): [`send::gate`] then [`send::next_segment`] until a step sends
//! nothing; the sender sends what a step names (a retransmission, or new data after RFC 5681
//! §4.1's idle restart); then it re-arms the probe timeout if new data left, ends what recovery
//! entry or F-RTO released ([`episode::Episodes::send_opportunity_passed`]) unless pacing or
//! the host queue stopped it first, and sends the FIN once all data is acknowledged.
//!
//! A timer (`on_timer`): the application's stop time, the host-queue wake-up, the
//! retransmission timeout ([`episode::Episodes::on_timeout`], then the send loop), the persist
//! probe, RACK's reordering timer (recovery entry if it finds a loss), the tail-loss probe, and
//! the send loop.
//!
//! Sequence numbers are kept as 64-bit offsets from the first data byte and converted to 32-bit
//! wire numbers (ISN + 1 + offset, wrapping) only when a segment is built, so transfers beyond
//! 4 GiB never compare wrapped numbers.

pub mod ack;
pub mod cwnd_use;
pub mod episode;
pub mod handshake;
pub mod loss;
pub mod pacing;
pub mod send;
pub mod timers;
pub mod tso;
pub mod undo;

pub use handshake::{syn_window_field, wscale_for};

use super::config::{CwndUnitCfg, LossDupackCfg, TcpConfig};
use super::recovery::{Mode, Recovery};
use super::rtt::{ts_ticks, BsdTimer, RttEstimator, RttSample};
use super::scoreboard::{AckResult, Scoreboard};
use crate::endpoint::Cx;
use crate::packet::{self, flags, opts, Packet, Proto, TcpHdr};
use crate::time::Nanos;
use ack::{AckCx, AckProcessor};
use episode::{EpisodeAck, Episodes, Parts, Seq};
use handshake::Handshake;
use loss::{Probe, RackTlp};
use send::{BsdSack, Room, SendState, Step};
use tcplab_cc::{AckEvent, CongestionControl, SentEvent};
use timers::{due, PersistProbe, RtoOnAck, Timers};

/// Whether [`TcpSender::on_in_order_ack`] may be taken (always, except in the tests that
/// compare it with the full ACK path).
#[cfg(not(test))]
#[inline(always)]
fn fast_ack_enabled() -> bool {
    true
}

#[cfg(test)]
thread_local! {
    /// Tests set this to run the full ACK path only.
    pub(crate) static FULL_ACK_PATH_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn fast_ack_enabled() -> bool {
    !FULL_ACK_PATH_ONLY.with(|c| c.get())
}

/// Cumulative sender counters (web100 / TCP_INFO in spirit).
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    /// Retransmitted segments (web100 SegsRetrans).
    pub retransmits: u64,
    /// Not beside `segments_sent`: the compiler merged the two increments of every segment
    /// sent into one SSE add of six instructions (as in `LinkStats`).
    pub bytes_sent: u64,
    /// Fast-retransmit / recovery entries (web100 FastRetran).
    pub fast_retransmits: u64,
    /// Retransmission timeouts (web100 Timeouts).
    pub timeouts: u64,
    /// Duplicate ACKs received (web100 DupAcksIn).
    pub dupacks: u64,
    /// SACK blocks received.
    pub sack_blocks: u64,
    /// D-SACK blocks received (RFC 2883).
    pub dsack_blocks: u64,
    /// Tail loss probes sent (RFC 8985 §7).
    pub tlp_probes: u64,
    /// SACK blocks ignored because they cannot be valid (beyond snd_nxt, inverted, ...).
    pub invalid_sack_blocks: u64,
    /// Segments sent (partly) beyond the receiver's advertised window (only with the quirk).
    pub sent_beyond_rwnd: u64,
    /// Entries into CWR on a full host transmit queue (knob `local_congestion_cwr`).
    pub local_cwr: u64,
    /// Congestion reductions undone as spurious (knob `undo`).
    pub undos: u64,
    pub syn_retransmits: u64,
    pub zero_window_probes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for the flow's start time.
    Idle,
    SynSent,
    Established,
    /// All data acknowledged (and FIN, if sent) — nothing more to do.
    Done,
    /// SYN retries exhausted.
    Failed,
    /// Established, then aborted after `max_data_retransmissions` retransmission timeouts in
    /// a row.
    Aborted,
}

/// Static description of the flow, from the scenario.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub flow: u32,
    pub me: u32,
    pub peer: u32,
    pub src: u16,
    pub dst: u16,
    pub start: Nanos,
    pub stop: Option<Nanos>,
    pub bytes: Option<u64>,
    /// MTU of the sender's first hop (default MSS).
    pub mtu: u32,
    pub isn: u32,
    /// Congestion-control algorithm and parameters; the controller is built when the handshake
    /// has fixed the MSS.
    pub cca_name: String,
    pub cca_params: Vec<(String, tcplab_cc::ParamValue)>,
    pub growth: tcplab_cc::WindowGrowth,
    /// The application's opening exchange before its bulk data, if any.
    pub prelude: Option<Prelude>,
}

/// An application that writes a few bytes first and its bulk data only once they are
/// acknowledged, plus `gap`: iperf3's start. Its client writes a 37-byte cookie
/// (`COOKIE_SIZE`) on each data connection as soon as the connection is up; the server reads
/// it, answers on the control connection (TEST_START, TEST_RUNNING) and the client starts
/// writing when that answer arrives (iperf3's iperf_api.c/iperf_client_api.c protocol, read
/// for the facts). The server's ACK of the cookie leaves together with that answer, so the
/// model starts the bulk when the ACK arrives plus `gap`, the two processes' own time (on this
/// machine's kernel engine 1.1-2.6 ms from the cookie's ACK to the first bulk segment, seen in
/// the sender's capture). What the opening changes: the receiver's autotuning interval starts
/// at the handshake, a round trip before the bulk arrives (Linux `tcp_init_buffer_space`),
/// and the sender's first RTT sample, the one that sets CUBIC's `delay_min`, is the cookie's:
/// a small segment, without a full segment's serialisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prelude {
    /// Bytes of the opening write.
    pub bytes: u32,
    /// From the opening's acknowledgement to the first bulk write.
    pub gap: Nanos,
}

/// Where the application is in its [`Prelude`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AppPhase {
    /// Bulk data (or a sized transfer) is written; the only phase without a prelude.
    Bulk,
    /// The opening write is out, waiting for its acknowledgement.
    Opening,
    /// Acknowledged; the bulk starts at this time.
    Waiting(Nanos),
}

pub struct TcpSender {
    pub spec: FlowSpec,
    cfg: TcpConfig,
    state: State,
    /// SYN, SYN retries, option negotiation.
    hs: Handshake,
    // Negotiated.
    /// Payload bytes per full segment (MSS minus the timestamp option when on).
    pub smss: u32,
    ts_on: bool,
    sack_on: bool,
    /// Shift applied to windows the peer advertises.
    snd_wscale: u8,
    /// Our receive window (unscaled bytes) in the segments we send once established: `rcvbuf`,
    /// or Windows' default algorithm's rounded window (`TcpConfig::established_rcvbuf`).
    own_rcv_wnd: u64,
    // Sequence state as offsets from the first data byte.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Offset where the application's data ends (closing or sized), if known.
    app_end: Option<u64>,
    /// The application's opening exchange ([`Prelude`]).
    app: AppPhase,
    fin_sent: bool,
    fin_acked: bool,
    /// Peer's receive window in bytes.
    pub rwnd: u64,
    /// ACK processing: duplicate-ACK count, last window field.
    acks: AckProcessor,
    /// Recovery, loss and CWR episodes and their undo.
    ep: Episodes,
    /// RACK-TLP (RFC 8985): send time and RTT of the most recently sent delivered segment and
    /// whether a probe is out (the reordering timer and the probe timeout are in `timers`).
    rack: RackTlp,
    pub sb: Scoreboard,
    pub rtt: RttEstimator,
    pub cc: Box<dyn CongestionControl>,
    /// The controller as built when the handshake fixed the MSS, for that `CcInit`: copied
    /// into `cc` in place, so that the next connection of a renewed sender (a pooled background
    /// slot, [`TcpSender::renew`]) builds nothing.
    cc_fresh: Option<(tcplab_cc::CcInit, Box<dyn CongestionControl>)>,
    timers: Timers,
    /// Pacing slots and their buffers (knob `pacing_quantum`).
    pacer: pacing::Pacer,
    ts_recent: u32,
    last_send: Nanos,
    /// How much of cwnd the sends used: whether an ACK may grow it (knob `cwnd_limited_rule`,
    /// [`cwnd_use`]).
    cwnd_use: cwnd_use::CwndUse,
    /// cwnd when the ACK being processed arrived, before its episode changes (undo, recovery
    /// exit): what Linux 2.x's growth test saw, `tcp_cong_avoid` running before
    /// `tcp_fastretrans_alert` in `tcp_ack` (2.4.27 to 3.x, net/ipv4/tcp_input.c).
    ack_start_cwnd: u64,
    /// The ACK being processed found the sender in fast recovery or CWR (Linux `icsk_ca_state`
    /// when `tcp_ack` began): Linux 2.x's growth test ([`cwnd_use::GrowthInput`]).
    ack_start_recovery_or_cwr: bool,
    /// `rtt_sampling = "bsd"` without timestamps: one segment at a time is timed (set with the
    /// handshake).
    bsd_timing: bool,
    /// Knob `tso`: when the last send decision deferred a frame ([`tso::next_frame`]).
    tso_deferred_at: Option<Nanos>,
    /// Knob `tso_model = "linux-6"`: where the write-queue buffer holding `snd_nxt` ends
    /// ([`tso::size_goal`]; 0 before the first).
    skb_end: u64,
    /// The largest receive window the peer offered (Linux `max_window`).
    max_rwnd: u64,
    /// Retransmission timeouts since snd_una last advanced (knob `max_data_retransmissions`).
    rto_retries: u32,
    /// Knob `loss_dupack_credit` = "rfc3042-flight" or "rfc3042-cwnd" (FreeBSD 5.3, XNU;
    /// sources at [`send::loss_limited_transmit_window`]): for the duplicate ACK being
    /// processed, the window the send loop checks instead of the congestion window, and
    /// snd_nxt when it arrived; None otherwise.
    loss_lt: Option<(u64, u64)>,
    /// FreeBSD's snd_limited for that rule ([`send::loss_limited_transmit_limited`]).
    loss_lt_limited: u32,
    /// Knob `partial_ack_zero_persist`: the sender is stalled on the persist timer with a
    /// window of 0 ([`Sender::bsd_zero_window`]), and FreeBSD's t_rxtshift for its backoff.
    bsd_stall: bool,
    bsd_stall_shift: u32,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(spec: FlowSpec, cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> Self {
        let sb = Scoreboard::new(cfg.dupthresh);
        Self::with_parts(spec, cfg, cc, sb)
    }

    /// Start another connection in this sender's place (a pooled background slot): afterwards
    /// it is as `TcpSender::new(spec.clone(), cfg, cc)` with its own configuration, but keeps
    /// its allocations (scoreboard buffers, the algorithm's name and parameters, the controller
    /// built at the handshake). `cc` is the new connection's controller, fresh; the old one is
    /// returned for the caller's next renewal. Allocates nothing when the algorithm and its
    /// parameters are those of the previous connection.
    pub fn renew(
        &mut self,
        spec: &FlowSpec,
        cc: Box<dyn CongestionControl>,
    ) -> Box<dyn CongestionControl> {
        let sb = self.sb.take_renewed(self.cfg.dupthresh);
        let mut fresh_spec = FlowSpec {
            cca_name: std::mem::take(&mut self.spec.cca_name),
            cca_params: std::mem::take(&mut self.spec.cca_params),
            ..*spec
        };
        let same_cca =
            fresh_spec.cca_name == spec.cca_name && fresh_spec.cca_params == spec.cca_params;
        if !same_cca {
            fresh_spec.cca_name.clone_from(&spec.cca_name);
            fresh_spec.cca_params.clone_from(&spec.cca_params);
        }
        let cc_fresh = if same_cca { self.cc_fresh.take() } else { None };
        let fresh = Self::with_parts(fresh_spec, self.cfg.clone(), cc, sb);
        let old = std::mem::replace(self, fresh);
        self.cc_fresh = cc_fresh;
        old.cc
    }

    fn with_parts(
        spec: FlowSpec,
        cfg: TcpConfig,
        cc: Box<dyn CongestionControl>,
        mut sb: Scoreboard,
    ) -> Self {
        // Delivery-rate samples only for a controller that reads them (rate.rs `off`).
        sb.rate.off = !cc.rate_samples();
        let mut rtt = RttEstimator::with_bsd(
            cfg.initial_rto,
            cfg.rto_min(),
            cfg.max_rto,
            cfg.clock_granularity,
            cfg.rto_min_on_variance,
            BsdTimer {
                slop: cfg.rto_slop,
                tick: cfg.timer_tick,
                backoff_unclamped: cfg.rto_backoff_unclamped,
                forget_after: cfg.rtt_forget_after_backoffs,
                floor_ticks: cfg.rto_floor_ticks,
                fixed_point: cfg.rtt_fixed_point,
                xmit_timer: cfg.rtt_xmit_timer,
                max_multiplier: cfg.rto_backoff_max_multiplier,
                forget_into_rttvar: cfg.rtt_forget_into_rttvar,
                recompute_after_bad_rexmt: cfg.rtt_recompute_after_bad_rexmt,
            },
        );
        let mut hs = Handshake::default();
        if cfg.route_rtt_seed && cfg.route_rtt > 0 {
            // XNU tcp_getrt_rtt from the route's metrics (RTM_RTTUNIT: µs).
            hs.route_syn = rtt.seed_from_route(cfg.route_rtt / 1_000, cfg.route_rttvar / 1_000);
        }
        let dupthresh = cfg.dupthresh;
        TcpSender {
            state: State::Idle,
            hs,
            smss: 0,
            ts_on: false,
            sack_on: false,
            snd_wscale: 0,
            own_rcv_wnd: cfg.rcvbuf,
            snd_una: 0,
            snd_nxt: 0,
            app_end: spec.bytes,
            app: AppPhase::Bulk,
            fin_sent: false,
            fin_acked: false,
            rwnd: 0,
            acks: AckProcessor::default(),
            ep: Episodes::new(Recovery::new(
                Mode::select(cfg.recovery, false, cfg.recovery_nosack),
                0,
                dupthresh,
            )),
            rack: RackTlp::default(),
            sb,
            rtt,
            cc,
            cc_fresh: None,
            timers: Timers::default(),
            pacer: pacing::Pacer::new(cfg.pacing_quantum),
            ts_recent: 0,
            last_send: 0,
            cwnd_use: cwnd_use::CwndUse::new(cfg.cwnd_limited_rule),
            ack_start_cwnd: 0,
            ack_start_recovery_or_cwr: false,
            bsd_timing: false,
            tso_deferred_at: None,
            skb_end: 0,
            max_rwnd: 0,
            rto_retries: 0,
            loss_lt: None,
            loss_lt_limited: 0,
            bsd_stall: false,
            bsd_stall_shift: 0,
            stats: SenderStats::default(),
            spec,
            cfg,
        }
    }

    /// Our advertised MSS: configured or first-hop MTU − 40 (RFC 9293 §3.7.1).
    fn own_mss(&self) -> u32 {
        handshake::own_mss(&self.cfg, self.spec.mtu)
    }

    #[inline]
    fn wire_seq(&self, off: u64) -> u32 {
        ack::wire_seq(self.spec.isn, off)
    }

    #[inline]
    fn ts_now(&self, now: Nanos) -> u32 {
        // RFC 7323 §5.4: a timestamp clock ticking at the stack's granularity, at the host's
        // phase (knob `clock_phase`).
        ts_ticks(now + self.cfg.clock_phase, self.cfg.clock_granularity)
    }

    /// Whether the sender has finished (all data and FIN acknowledged, or it gave up).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done | State::Failed | State::Aborted)
    }

    /// Whether the handshake completed (the connection may since have finished or aborted).
    pub fn established(&self) -> bool {
        matches!(
            self.state,
            State::Established | State::Done | State::Aborted
        )
    }

    /// Whether all data (and the FIN, if sent) was acknowledged.
    pub fn completed(&self) -> bool {
        self.state == State::Done
    }

    pub fn in_recovery(&self) -> bool {
        self.ep.rec.active
    }

    /// Congestion window in bytes as the stack uses it now (NewReno inflation included).
    pub fn cwnd(&self) -> u64 {
        if self.ep.rec.active && !self.cc.governs_recovery() {
            self.ep.rec.window(self.cc.cwnd())
        } else {
            self.cc.cwnd()
        }
    }

    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// Earliest time this endpoint wants `on_timer` (smoltcp's `poll_at`).
    #[inline]
    pub fn poll_at(&self) -> Option<Nanos> {
        match self.state {
            State::Idle => Some(self.spec.start),
            State::Done | State::Failed | State::Aborted => None,
            _ => {
                let t = self.timers.poll_at();
                let stop = match self.app {
                    AppPhase::Waiting(at) => Some(at),
                    _ if self.state == State::Established && self.app_end.is_none() => {
                        self.spec.stop
                    }
                    _ => None,
                };
                match (t, stop) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    pub fn on_timer(&mut self, cx: &mut Cx) {
        let now = cx.now;
        match self.state {
            State::Idle => {
                if now >= self.spec.start {
                    self.send_syn(cx);
                }
                return;
            }
            State::Done | State::Failed | State::Aborted => return,
            _ => {}
        }
        if let AppPhase::Waiting(at) = self.app {
            if now >= at {
                self.start_bulk(now);
            }
        }
        if let Some(stop) = self.spec.stop {
            if now >= stop && self.app_end.is_none() && self.state == State::Established {
                // iperf -t: the application stops writing; what was not yet sent is discarded.
                self.app_end = Some(self.snd_nxt);
            }
        }
        due(&mut self.timers.nic_wake, now);
        if due(&mut self.timers.rto, now) {
            self.on_rto(cx);
        }
        if due(&mut self.timers.persist, now) {
            self.send_window_probe(cx);
        }
        if due(&mut self.timers.rack, now) {
            let lost = self.rack_detect(now);
            if lost > 0 && self.ep.open() {
                self.enter_recovery(now, lost, 0);
            }
        }
        if due(&mut self.timers.tlp, now) {
            self.send_tail_probe(cx);
        }
        if self.state == State::Established {
            self.try_send(cx);
        }
    }

    // ---- Connection establishment (RFC 9293 §3.5; the handshake part) ----

    fn send_syn(&mut self, cx: &mut Cx) {
        let now = cx.now;
        self.state = State::SynSent;
        let syn = self.hs.syn(
            &self.cfg,
            self.own_mss(),
            self.spec.isn,
            self.ts_now(now),
            now,
        );
        if syn.retransmit {
            self.stats.syn_retransmits += 1;
        }
        self.emit(cx, syn.hdr, 0, syn.wire_len);
        self.timers.rto = Some(syn.retry_at);
    }

    fn on_syn_ack(&mut self, p: &Packet, cx: &mut Cx) {
        let now = cx.now;
        let Some(n) = self
            .hs
            .on_syn_ack(&self.cfg, self.own_mss(), self.spec.isn, &p.tcp)
        else {
            return;
        };
        self.ts_on = n.ts_on;
        self.bsd_timing = self.cfg.rtt_sampling == ack::RttSamplingCfg::Bsd && !n.ts_on;
        self.sack_on = n.sack_on;
        self.snd_wscale = n.snd_wscale;
        self.smss = n.smss;
        self.own_rcv_wnd = self.cfg.established_rcvbuf(n.smss, n.rcv_wscale);
        self.ep.rec = Recovery::new(
            Mode::select(self.cfg.recovery, self.sack_on, self.cfg.recovery_nosack),
            self.smss,
            self.cfg.dupthresh,
        );
        self.ep.rec.ssrb_on_advance = self.cfg.prr_ssrb_on_advance;
        self.ep.rec.rh_entry_cut = self.cfg.rate_halving_entry_cut;
        self.ep.rec.rh_floor_half = self.cfg.rate_halving_floor_half;
        self.ep.rec.rh_progress_only = self.cfg.rate_halving_progress_only;
        self.ep.rec.partial_ack_cap = self.cfg.sack_partial_ack_cap;
        self.ep.rec.u32_deflation = self.cfg.partial_ack_u32_deflation;
        self.ep.rec.exit_no_growth = self.cfg.newreno_exit_no_growth;
        self.ep.rec.exit_bsd_window = self.cfg.newreno_exit_bsd_window;
        self.ep.rec.freebsd_inflate =
            self.cfg.freebsd_sack_rules == crate::tcp::config::FreebsdSackRulesCfg::Inflate;
        self.ep.rec.freebsd_partial_hole = self.cfg.freebsd_sack_partial_hole;
        self.rwnd = n.rwnd;
        self.acks.last_wnd_raw = n.wnd_raw;
        self.ts_recent = n.ts_recent;
        if let Some(sent) = n.rtt_from {
            // The SYN's RTT: Linux times it from the SYN's send stamp in µs like any segment
            // (`tcp_synack_rtt_meas`; [`ack::linux_rtt_samples`]).
            let m = if self.cfg.rtt_sampling == ack::RttSamplingCfg::Linux {
                RttSample::from_send_stamp_us(sent, now, self.cfg.clock_granularity)
            } else {
                self.rtt.sample(sent, now)
            };
            self.rtt.on_measurement(m, m.nanos);
        }
        self.state = State::Established;
        self.timers.rto = None;
        let iw = self.cfg.iw().bytes(self.smss);
        let ssthresh = self.cfg.initial_ssthresh.unwrap_or(u64::MAX);
        let init = tcplab_cc::CcInit {
            mss: self.smss,
            initial_cwnd: iw,
            initial_ssthresh: ssthresh,
            growth: self.spec.growth,
        };
        // Parameters were validated when the simulation was built; keep the old controller if
        // building fails anyway. The controller's own initial ssthresh wins over the
        // connection's (Linux tcp_init_congestion_control runs the module's init after
        // tcp_init_sock set TCP_INFINITE_SSTHRESH: BIC's and CUBIC v2.0's initial_ssthresh).
        match self.fresh_controller(init) {
            Ok(()) => {
                // The controller's random stream (BBR's first PROBE_BW phase): derived from
                // the ISN, itself drawn from the flow's own stream of the trial seed
                // (docs/design.md §2), so it is deterministic and differs between flows.
                let seed = crate::rng::derive_seed(u64::from(self.spec.isn), "cca", "");
                self.cc.set_random_seed(seed);
            }
            Err(_) => {
                self.cc.set_cwnd(iw);
                self.cc.set_ssthresh(ssthresh);
            }
        }
        self.last_send = now;
        if let Some(p) = self.spec.prelude {
            // The application's opening write ([`Prelude`]); the bulk waits for its ACK.
            self.app_end = Some(u64::from(p.bytes));
            self.app = AppPhase::Opening;
        }
        // Third segment of the handshake: a pure ACK (data follows in try_send).
        self.send_ack(cx);
        self.try_send(cx);
    }

    /// After an ACK in [`AppPhase::Opening`]: whether the opening write is acknowledged
    /// ([`Prelude`]); the bulk starts `gap` later.
    #[cold]
    fn prelude_acked(&mut self, now: Nanos) {
        let Some(p) = self.spec.prelude else { return };
        if self.snd_una >= u64::from(p.bytes) {
            if p.gap == 0 {
                self.start_bulk(now);
            } else {
                self.app = AppPhase::Waiting(now + p.gap);
            }
        }
    }

    /// The application writes its bulk data: up to `bytes` after the opening, or until the
    /// flow's stop time (already past: nothing more).
    fn start_bulk(&mut self, now: Nanos) {
        let opening = self.spec.prelude.map_or(0, |p| u64::from(p.bytes));
        self.app = AppPhase::Bulk;
        self.app_end = match (self.spec.bytes, self.spec.stop) {
            (Some(b), _) => Some(opening + b),
            (None, Some(stop)) if now >= stop => Some(self.snd_nxt),
            _ => None,
        };
    }

    /// Make `cc` a freshly built controller of the flow's algorithm for `init`: a copy, in
    /// place, of the one kept in `cc_fresh` (built here the first time, or when `init`
    /// changed).
    fn fresh_controller(&mut self, init: tcplab_cc::CcInit) -> Result<(), tcplab_cc::CcError> {
        let build = |spec: &FlowSpec| tcplab_cc::build(&spec.cca_name, &spec.cca_params, init);
        let fresh = match &mut self.cc_fresh {
            Some((i, cc)) if *i == init => cc,
            slot => &mut slot.insert((init, build(&self.spec)?)).1,
        };
        if !self.cc.copy_state_from(&**fresh) {
            // `cc` is of another algorithm than the flow's (built elsewhere): replace it.
            self.cc = build(&self.spec)?;
        }
        self.sb.rate.off = !self.cc.rate_samples();
        Ok(())
    }

    // ---- Output ----

    /// A segment of this connection to the peer; `frame_cont`: a TSO frame's later segment
    /// ([`Packet::frame_cont`]).
    fn packet(&self, hdr: TcpHdr, payload: u32, wire_len: u32, frame_cont: bool) -> Packet {
        Packet {
            ep: self.spec.peer,
            flow: self.spec.flow,
            src: self.spec.src,
            dst: self.spec.dst,
            proto: Proto::Tcp,
            frame_cont,
            wire_len,
            payload,
            udp_seq: 0,
            tcp: hdr,
        }
    }

    /// Send a segment without data (SYN, pure ACK, FIN, zero-window probe).
    fn emit(&mut self, cx: &mut Cx, hdr: TcpHdr, payload: u32, wire_len: u32) {
        cx.send(self.packet(hdr, payload, wire_len, false));
    }

    fn data_hdr(&self, now: Nanos, off: u64, fl: u8) -> TcpHdr {
        TcpHdr {
            seq: self.wire_seq(off),
            ack: 1, // the peer's ISN is not tracked beyond the handshake; the receiver ignores it
            flags: fl | flags::ACK,
            opts: if self.ts_on { opts::TS } else { 0 },
            wnd: (self.own_rcv_wnd >> self.hs.rcv_wscale).min(u16::MAX as u64) as u16,
            ts_val: self.ts_now(now),
            ts_ecr: self.ts_recent,
            ..TcpHdr::default()
        }
    }

    fn header_len(&self) -> u32 {
        packet::IPV4_HEADER + packet::TCP_HEADER + packet::tcp_options_len(self.ts_on, 0)
    }

    fn send_ack(&mut self, cx: &mut Cx) {
        let hdr = self.data_hdr(cx.now, self.snd_nxt, 0);
        let wire = self.header_len();
        self.emit(cx, hdr, 0, wire);
    }

    /// Send `len` bytes of new data at snd_nxt (recorded on the scoreboard, snd_nxt advanced).
    /// Forced inline, as `send_segment`: left to the compiler, one of the two stayed a call
    /// per segment taking six arguments, whose set-up and register saves cost ≈ 40
    /// instructions per delivered packet on s1 and I5 (cachegrind, fat LTO).
    #[inline(always)]
    fn send_new(&mut self, cx: &mut Cx, len: u32, frame_cont: bool, frame_end: bool) {
        let off = self.snd_nxt;
        self.sb.on_send_new(off, len, cx.now);
        self.snd_nxt += len as u64;
        self.send_segment(cx, off, len, false, frame_cont, frame_end);
    }

    /// Send `len` bytes from offset `off`; `frame_cont`: the segment continues a TSO frame;
    /// `frame_end`: it ends a `tso_model = "linux-6"` GSO buffer. Inlined in its three callers
    /// (see `send_new`).
    #[inline(always)]
    fn send_segment(
        &mut self,
        cx: &mut Cx,
        off: u64,
        len: u32,
        retransmit: bool,
        frame_cont: bool,
        frame_end: bool,
    ) {
        let now = cx.now;
        // PSH (RFC 9293 §3.9.1 "Send Call": the sender pushes at the end of what the application
        // handed over, here the end of its data) and, with Linux 6's GSO buffers, on the last
        // segment of each buffer: measured on this machine's 6.18 kernel (kernel engine, CUBIC,
        // 74 Mbit/s x 20 ms: 16 % of data segments carry PSH, the last of every run of back-to-back
        // segments; tcp_gso_segment keeps a buffer's PSH on its last segment only).
        let push =
            len > 0 && (frame_end || self.app_end.is_some_and(|e| off + u64::from(len) >= e));
        let hdr = self.data_hdr(now, off, if push { flags::PSH } else { 0 });
        let wire = self.header_len() + len;
        cx.send(self.packet(hdr, len, wire, frame_cont));
        if self.bsd_timing && len > 0 {
            // BSD timing without timestamps (ack.rs `RttSamplingCfg::Bsd`): a new segment is
            // timed if nothing is; a retransmission ends the timing (Karn).
            if retransmit {
                self.acks.cancel_timing();
            } else {
                self.acks.time_segment(off, now);
            }
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.ep.rec.on_sent(len);
        if retransmit {
            self.stats.retransmits += 1;
            self.ep.undo.on_retransmit(hdr.ts_val);
            if self.cfg.rto_rearm_on_head_retransmit && off == self.snd_una {
                // Knob `rto_rearm_on_head_retransmit` (its sources in config.rs).
                self.timers.restart_rto(now, self.rtt.rto());
            }
        }
        self.last_send = now;
        self.cc.on_packet_sent(&SentEvent {
            now,
            bytes: len,
            in_flight: self.sb.pipe(),
            is_retransmission: retransmit,
            total_delivered: self.sb.rate.delivered,
        });
        // RFC 6298 §5.1: start the timer when sending data if it is not running.
        let rtt = &self.rtt;
        self.timers.start_rto_if_idle(now, || rtt.rto());
        // Pacing: the next departure is this slot's payload at the pacing rate later (rates,
        // like delivery-rate samples, count payload bytes, as Linux's do); pacing.rs.
        if let Some(rate) = self.pacing_rate() {
            let (min_rtt, mss, cc) = (self.rtt.min_rtt, self.smss, &self.cc);
            let gso_max_segs = self.cfg.gso_max_segs;
            // The buffer size is asked only when a buffer starts (not per segment).
            let quantum = || pacing::tso_segs(rate, min_rtt, mss, cc.min_tso_segs(), gso_max_segs);
            self.timers.pace_next = self.pacer.on_send(
                now,
                self.timers.pace_next,
                off,
                len,
                retransmit,
                rate,
                quantum,
            );
        }
    }

    /// Whether the segment at `off` may leave now: not paced, its slot has come, or it
    /// continues the buffer of this slot (pacing.rs).
    #[inline]
    fn pace_allows(&self, now: Nanos, off: u64, retransmit: bool) -> bool {
        self.pacer
            .may_send(now, self.timers.pace_next, off, retransmit)
            || self.pacing_rate().is_none()
    }

    /// Segments per GSO buffer at pacing rate `rate` (Linux `tcp_tso_segs`, pacing.rs), with
    /// this flow's min RTT, segment size, controller floor and device limit.
    #[inline]
    fn tso_segs_at(&self, rate: u64) -> u32 {
        pacing::tso_segs(
            rate,
            self.rtt.min_rtt,
            self.smss,
            self.cc.min_tso_segs(),
            self.cfg.gso_max_segs,
        )
    }

    /// The pacing rate in bit/s of payload, if the flow is paced: the controller's own (BBR's),
    /// else with knob `pacing`, once an RTT is measured, one window per smoothed RTT.
    fn pacing_rate(&self) -> Option<u64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        if self.cfg.pacing && self.rtt.has_sample() {
            // Spread one window over one smoothed RTT.
            return Some((self.cwnd() * 8 * 1_000_000_000) / self.rtt.srtt.max(1));
        }
        None
    }

    /// What the send loop knows once its gates are open (see [`send::next_segment`]).
    #[inline]
    fn send_state(&self) -> SendState {
        self.send_state_in(self.window_now())
    }

    /// The window the send loop checks: the recovery state's (`Episodes::send_window`), or for
    /// a duplicate ACK of FreeBSD's or XNU's limited transmit in the loss state its own
    /// (`loss_lt`).
    #[inline]
    fn window_now(&self) -> u64 {
        match self.loss_lt {
            Some((window, _)) => window,
            None => self.ep.send_window(self.cwnd(), &self.sb),
        }
    }

    /// [`TcpSender::send_state`] with the window given. Out of line: `try_send` builds it once
    /// per call, and inlined there its fields were spilled twice (README "Performance").
    #[inline(never)]
    fn send_state_in(&self, window: u64) -> SendState {
        SendState {
            window,
            smss: self.smss,
            fast_rexmit_due: self.ep.fast_rexmit_due,
            frto_send_new: self.ep.frto.send_new,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            app_end: self.app_end,
            rwnd: send::rwnd_for_new_data(
                self.rwnd,
                self.cfg.quirk_ignore_rwnd_in_recovery,
                self.ep.rec.active || self.acks.dupacks > 0,
            ),
            sndbuf: self.cfg.sndbuf,
            limited_transmit: self.cfg.limited_transmit,
            open: self.ep.open(),
            dupacks: self.acks.dupacks,
            dupthresh: self.cfg.dupthresh,
            left_by_dupacks: send::left_by_dupacks(
                self.cfg.loss_dupack_credit,
                !self.sack_on && self.ep.loss_point.is_some(),
                self.acks.dupacks,
                self.smss,
                // Linux's PRR without SACK (`Episodes::reno_sacked`; 0 in other modes).
                self.ep.reno_sacked,
            ),
            short_rexmit: self.cfg.short_segment_on_rexmit
                && self.ep.loss_point.is_some()
                && !self.ep.rec.active,
            bsd: self.bsd_sack(),
        }
    }

    /// The BSD SACK recoveries' send rules in this state (`send::BsdSack`; `Off` in the other
    /// modes).
    #[inline]
    fn bsd_sack(&self) -> BsdSack {
        bsd_sack_rules(
            &self.ep.rec,
            self.ep.loss_point.is_some(),
            self.cfg.go_back_n_off && self.sack_on,
        )
    }

    /// The send loop: the gates and the next segment ([`send`]) until a step sends nothing.
    fn try_send(&mut self, cx: &mut Cx) {
        let now = cx.now;
        let mut sent_new = false;
        // Knob `tso`: payload bytes left in the frame being sent (tso.rs).
        let mut frame_left = 0u64;
        // A paced flow's GSO buffer (`tso_model = "linux-6"`): segments left in the buffer of
        // this pacing slot, for its PSH (see `send_segment`).
        let mut paced_left = 0u64;
        self.timers.pace_blocked = false;
        if self.ep.rec.freebsd_any_walk() {
            self.freebsd_walk_prologue();
        }
        // Built once: sending changes only the window, snd_nxt and fast_rexmit_due, refreshed
        // before each step (checked against a fresh state in debug builds; FreeBSD's snd_nxt
        // below snd_max after a step that moved it); the window is asked of the controller
        // there, not here as well.
        let mut st = self.send_state_in(0);
        // Knob `max_burst`: segments this call sent. OpenBSD `tcp_output` (rev. 1.79, 2005, as
        // in MirOS; rev. 1.109, 2015; read for the facts, nothing copied), compiled with
        // TCP_SACK: `int maxburst = TCP_MAXBURST;` and, after each segment, `if (sendalot &&
        // --maxburst) goto again;` — at most TCP_MAXBURST = 4 segments (netinet/tcp.h rev.
        // 1.15, 2004-02-10: "Max # packets after leaving Fast Rxmit") per call, i.e. per ACK
        // or timer; what the window still allows waits for the next one.
        let mut burst = 0u32;
        let stop = loop {
            if self.cfg.max_burst > 0 && burst >= self.cfg.max_burst {
                break Step::CwndLimited;
            }
            let pacing_wait =
                !self.pacer.gate_open(now, self.timers.pace_next) && self.pacing_rate().is_some();
            // A frame being sent was admitted whole to the host's queue (knob `tso`).
            let host_room = cx.nic_has_room() || frame_left >= u64::from(self.smss);
            let step = match send::gate(pacing_wait, host_room) {
                Some(closed) => closed,
                None => {
                    st.window = self.window_now();
                    st.snd_nxt = self.snd_nxt;
                    st.fast_rexmit_due = self.ep.fast_rexmit_due;
                    debug_assert_eq!(st, self.send_state());
                    send::next_segment(&st, &mut self.sb)
                }
            };
            match step {
                Step::Retransmit(i)
                | Step::RetransmitCut { i, .. }
                | Step::FreebsdWalk { i, .. }
                    if !self.pace_allows(now, self.sb.seg(i).start, true) =>
                {
                    self.timers.pace_blocked = true;
                    break Step::PacingWait;
                }
                Step::New(_) if !self.pace_allows(now, self.snd_nxt, false) => {
                    self.timers.pace_blocked = true;
                    break Step::PacingWait;
                }
                Step::Retransmit(i) => {
                    self.ep.fast_rexmit_due = false;
                    // Knob `freebsd_sack_go_back_n`: the go-back-N's rest goes as FreeBSD's new
                    // data from snd_nxt (`send::next_segment_freebsd`); decided before the send.
                    let gbn_new = self.ep.rec.freebsd_gbn()
                        && self.ep.rec.freebsd_walk().is_none()
                        && self.sb.seg(i).start
                            >= self.ep.rec.sack_newdata.max(self.sb.high_sacked);
                    let (start, len) = self.sb.on_retransmit(i, now);
                    if gbn_new {
                        self.sb.freebsd_sent_as_new(i);
                    }
                    self.send_segment(cx, start, len, true, false, false);
                    burst += 1;
                    self.ep.rec.on_retransmit();
                    if self.ep.rexmit_alone {
                        // Knob `fast_rexmit_alone`: 4.4BSD's fast retransmit (snd_cwnd =
                        // t_maxseg around `tcp_output`, then `goto drop`) sends nothing else on
                        // the entering ACK (sources at the knob, `crate::tcp::config`).
                        self.ep.rexmit_alone = false;
                        break Step::CwndLimited;
                    }
                    if st.rexmit_only_when_due() {
                        // Knob `recovery = "sack-inflate"`: OpenBSD's `tcp_output` returns
                        // after a SACK retransmission (`sendalot` clear): nothing more on this
                        // ACK (sources at `crate::tcp::recovery::Mode::SackInflate`).
                        break Step::CwndLimited;
                    }
                }
                Step::FreebsdWalk { i, again } => {
                    st.bsd = self.freebsd_walk_send(cx, i, again);
                    burst += 1;
                }
                Step::RetransmitCut { i, len } => {
                    // Knob `short_segment_on_rexmit` (BSD `tcp_output`, source at
                    // `send::next_segment`): the segment re-cut from snd_nxt; past snd_max it
                    // carries new data as well.
                    self.ep.fast_rexmit_due = false;
                    let room = st.room();
                    let new_room = room.app.min(room.rwnd).min(room.buf);
                    let added = self.sb.recut_lost(i, len, new_room);
                    self.snd_nxt += u64::from(added);
                    let (start, len) = self.sb.on_retransmit(i, now);
                    self.send_segment(cx, start, len, true, false, false);
                    burst += 1;
                    if added > 0 && self.bsd_timing {
                        // BSD times a segment that moves snd_max when nothing is timed, from its
                        // first byte (tcp_output.c: t_rtseq = startseq).
                        self.acks.time_segment(start, now);
                    }
                }
                Step::New(len) => {
                    if st.dupacks > 0 && send::by_limited_transmit(&st, len) {
                        // Limited transmit's bytes of this run of duplicate ACKs (knob
                        // `flightsize_excludes_limited_transmit`, `Episodes::enter_recovery`).
                        self.ep.on_limited_transmit(self.snd_una, len);
                    }
                    // Knob `tso`: a segment after its frame's first takes no room of its own in
                    // the host's queue (Linux queues the frame as one buffer; src/link.rs).
                    let frame_cont = self.cfg.tso && frame_left >= len;
                    if self.cfg.tso && frame_left < len {
                        let pipe = self.sb.pipe();
                        match self.tso_frame(now, pipe, len, st.window) {
                            (tso::Frame::Defer, cwnd_limited) => {
                                break Step::Deferred { cwnd_limited };
                            }
                            (tso::Frame::Send(n), _) => frame_left = n.max(len),
                        }
                    }
                    frame_left = frame_left.saturating_sub(len);
                    let linux6 = self.cfg.tso && self.cfg.tso_model == tso::TsoModelCfg::Linux6;
                    // (The pacing rate is asked only of a linux-6 GSO sender: the others never
                    // mark buffer ends, and this runs for every new segment.)
                    let paced = if linux6 { self.pacing_rate() } else { None };
                    let frame_end = match paced {
                        Some(rate) => {
                            // A paced flow sends one buffer per pacing slot (pacing.rs): Linux's
                            // `tcp_write_xmit` cuts it to min(`tcp_tso_segs`, the congestion
                            // window's quota) segments (`tcp_mss_split_point` also stops it at
                            // the peer's window and the end of the data), and
                            // `tcp_gso_segment` puts the buffer's PSH on its last segment only.
                            // Each segment was marked as a buffer end before 2026-11-29, so a
                            // paced receiver-side PSH rule (`ack_pushed_on_read`) ACKed every
                            // segment, where this machine's 6.18 receiver ACKed every second
                            // behind BBR (identify's kernel captures, README "Validation").
                            if !self.pacer.continues(now, self.snd_nxt, false) {
                                let mss = u64::from(self.smss.max(1));
                                let quantum = self.tso_segs_at(rate);
                                let room = st.room();
                                let quota = st.window.saturating_sub(self.sb.pipe());
                                let bytes = quota.min(room.app).min(room.rwnd).min(room.buf);
                                paced_left = bytes.div_ceil(mss).clamp(1, u64::from(quantum));
                            }
                            paced_left = paced_left.saturating_sub(1);
                            paced_left == 0
                        }
                        _ => linux6 && frame_left == 0,
                    };
                    self.maybe_idle_restart(now);
                    if self.snd_nxt + len > self.snd_una + self.rwnd {
                        self.stats.sent_beyond_rwnd += 1;
                    }
                    self.send_new(cx, len as u32, frame_cont, frame_end);
                    sent_new = true;
                    burst += 1;
                }
                Step::PacingWait => {
                    self.timers.pace_blocked = true;
                    break step;
                }
                Step::HostQueueFull => {
                    self.timers.nic_wake = Some(cx.nic_free_at().max(now + 1));
                    if self.cfg.local_congestion_cwr {
                        // Under the peer's own window (not the quirk's).
                        let unquirked = SendState {
                            rwnd: self.rwnd,
                            ..self.send_state()
                        };
                        if unquirked.would_send(&self.sb) {
                            self.enter_local_cwr(now);
                        }
                    }
                    break step;
                }
                Step::Hold {
                    persist,
                    app_limited,
                } => {
                    if persist {
                        // A zero (or sub-MSS) window with nothing outstanding: the persist timer
                        // probes it (RFC 9293 §3.8.6.1) and doubles as the SWS override timer.
                        self.timers
                            .arm_persist(now, self.rtt.base_rto(), self.cfg.max_rto);
                    }
                    if app_limited {
                        self.sb.rate.mark_app_limited(self.sb.pipe());
                    }
                    break step;
                }
                Step::CwndLimited | Step::Deferred { .. } => break step,
            }
        };
        if sent_new {
            // RFC 8985 §7.2: the PTO is (re)scheduled when new data is sent, not only on ACKs
            // (Linux `tcp_schedule_loss_probe` from `tcp_write_xmit`); measured on this
            // machine's kernel: scripts/linux-6/iw10-tlp.pkt probes 2·SRTT after the IW
            // although no ACK came.
            self.arm_tlp(now);
        }
        if !stop.no_opportunity() {
            self.ep.send_opportunity_passed();
        }
        let cwnd = self.cwnd();
        // In flight as the loop counted it against the window (`SendState::pipe`): Linux's
        // `tcp_write_xmit` ends with `is_cwnd_limited |= tcp_packets_in_flight() >= snd_cwnd`,
        // and without SACK `tcp_packets_in_flight` leaves out the segments the duplicate ACKs
        // stand for (`sacked_out`, `tcp_add_reno_sack`; net/ipv4/tcp_output.c and tcp_input.c,
        // read for the facts). The scoreboard's pipe keeps them, so a recovery held by the
        // receive window (PRR's cwnd = in flight + sndcnt) looked cwnd-limited.
        self.cwnd_use.after_send(
            matches!(
                stop,
                Step::CwndLimited | Step::Deferred { cwnd_limited: true }
            ),
            sent_new,
            st.pipe(&self.sb),
            cwnd,
            self.snd_nxt - self.snd_una,
            self.snd_una,
            self.snd_nxt,
        );
        self.maybe_send_fin(cx);
    }

    /// Knob `tso`: send the next frame of new data (of how many bytes) or defer it, and
    /// whether a deferral counts as cwnd-limited ([`tso::next_frame`] or, with `tso_model =
    /// "linux-6"`, [`tso::next_frame_linux6`]: Linux `tcp_tso_should_defer`).
    fn tso_frame(&mut self, now: Nanos, pipe: u64, len: u64, cwnd: u64) -> (tso::Frame, bool) {
        let ends_data = self.app_end.is_some_and(|e| self.snd_nxt + len >= e);
        let rwnd_left = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
        if self.cfg.tso_model == tso::TsoModelCfg::Linux6 {
            // A paced flow's buffers are its pacing slots (pacing.rs); no deferral for it.
            if self.pacing_rate().is_some() {
                return (tso::Frame::Send(len), false);
            }
            let mss = u64::from(self.smss.max(1));
            let packets_out = self.snd_nxt.saturating_sub(self.snd_una);
            let gso_max_segs = self.cfg.gso_max_segs;
            let max_segs = u64::from(
                tso::linux_pacing_rate(cwnd, packets_out, self.cc.ssthresh(), self.rtt.srtt)
                    .map_or(pacing::MIN_TSO_SEGS.min(gso_max_segs.max(1)), |rate| {
                        self.tso_segs_at(rate)
                    }),
            );
            // The write queue's buffers: each holds `size_goal` bytes from where the previous
            // one ended (module docs of tso.rs, "Write-queue buffers"); the last ends with the
            // application's data.
            self.max_rwnd = self.max_rwnd.max(self.rwnd);
            if self.snd_nxt >= self.skb_end {
                let end = self.snd_nxt + tso::size_goal(self.max_rwnd, mss);
                // New data is being sent, so the application's end lies beyond snd_nxt.
                self.skb_end = self.app_end.map_or(end, |e| end.min(e));
            }
            return tso::next_frame_linux6(&tso::Linux6Input {
                skb_left: self.skb_end - self.snd_nxt,
                skb_is_tail: self.app_end.is_some_and(|e| self.skb_end >= e),
                // Recovery or Loss, as RACK's reordering window reads it (`rack_detect`).
                recovering: self.ep.rec.active || self.ep.loss_point.is_some(),
                ends_data,
                cwnd,
                // Linux's `tcp_packets_in_flight`: without SACK each duplicate ACK counts as a
                // segment that left the network (`tcp_add_reno_sack`), which is how RFC 3042's
                // limited transmit opens room in Linux; with SACK the pipe already excludes them.
                in_flight: if self.sack_on {
                    pipe
                } else if self.ep.rec.mode == Mode::PrrReno && self.ep.loss_point.is_none() {
                    self.ep.in_flight(&self.sb)
                } else {
                    pipe.saturating_sub(u64::from(self.acks.dupacks) * mss)
                },
                rwnd: self.rwnd,
                rwnd_left,
                mss,
                max_segs,
                now,
                last_send: (self.stats.segments_sent > 0).then_some(self.last_send),
                head_xmit: self.sb.front().map(|s| s.xmit),
                srtt: self.rtt.srtt,
            });
        }
        let f = tso::next_frame(&tso::DeferInput {
            open: self.ep.ca_state(self.acks.dupacks, &self.sb) == 0,
            ends_data,
            cwnd,
            in_flight: pipe,
            rwnd: self.rwnd,
            rwnd_left,
            now,
            deferred_at: self.tso_deferred_at,
            tick: self.cfg.clock_granularity,
        });
        self.tso_deferred_at = (f == tso::Frame::Defer).then_some(now);
        (f, tso::deferred_cwnd_limited(cwnd, pipe))
    }

    /// Local congestion (knob `local_congestion_cwr`; see [`Episodes::enter_local_cwr`]).
    fn enter_local_cwr(&mut self, now: Nanos) {
        let (ep, mut parts, seq) = self.episode_parts(now);
        ep.enter_local_cwr(&mut parts, seq);
    }

    fn maybe_idle_restart(&mut self, now: Nanos) {
        // RFC 5681 §4.1: after an idle period longer than the RTO, restart from the restart window.
        if self.sb.is_empty()
            && now.saturating_sub(self.last_send) > self.rtt.rto()
            && self.snd_nxt > 0
        {
            let rw = self.cfg.iw().bytes(self.smss);
            self.cc.on_idle_restart(now, rw);
        }
    }

    fn maybe_send_fin(&mut self, cx: &mut Cx) {
        if self.app != AppPhase::Bulk {
            return;
        }
        if let Some(end) = self.app_end {
            if !self.fin_sent && self.snd_nxt == end && self.snd_una == end {
                // FIN after the data is acknowledged (a simplification: real stacks piggyback it).
                self.fin_sent = true;
                let hdr = self.data_hdr(cx.now, end, flags::FIN);
                let wire = self.header_len();
                self.emit(cx, hdr, 0, wire);
                let rtt = &self.rtt;
                self.timers.start_rto_if_idle(cx.now, || rtt.rto());
            }
        }
    }

    /// Room for new data under the peer's advertised window.
    fn room(&self) -> Room {
        Room::new(
            self.snd_una,
            self.snd_nxt,
            self.app_end,
            self.rwnd,
            self.cfg.sndbuf,
        )
    }

    /// Knob `freebsd_sack_walk`: FreeBSD's snd_nxt below snd_max sends record `i` as new data
    /// and moves on (`send::next_segment_freebsd`); `tcp_sack_adjust` runs again at once if
    /// `tcp_output` loops (`again`). Returns the send state's refreshed rules. Out of line: only
    /// FreeBSD 5.3's recoveries take it, and inlined it cost every sender's send loop ≈ 0.8 %
    /// more instructions (cachegrind, `runjson` s1).
    #[cold]
    #[inline(never)]
    fn freebsd_walk_send(&mut self, cx: &mut Cx, i: usize, again: bool) -> send::BsdSack {
        self.ep.fast_rexmit_due = false;
        let (start, len) = self.sb.freebsd_walk_send(i, cx.now);
        self.freebsd_adjust_walk(start + u64::from(len), again);
        let bsd = self.bsd_sack();
        self.send_segment(cx, start, len, true, false, false);
        bsd
    }

    /// Knob `freebsd_sack_walk`, at the start of the send loop (each `tcp_output`): in recovery
    /// `tcp_sack_adjust` moves FreeBSD's snd_nxt over SACKed records; after a recovery that
    /// ended with it below snd_max (`Recovery::freebsd_open_walk`), it has reached snd_max once
    /// no record is left to send again.
    #[cold]
    #[inline(never)]
    fn freebsd_walk_prologue(&mut self) {
        if let Some(w) = self.ep.rec.freebsd_walk() {
            self.freebsd_adjust_walk(w, true);
        } else if self.sb.lost_bytes <= self.sb.retrans_bytes {
            self.ep.rec.freebsd_open_walk_done();
        }
    }

    /// Knob `freebsd_sack_walk`: FreeBSD's snd_nxt at `nxt` (at least snd_una: `tcp_input` pulls
    /// it up), with `adjust` moved over SACKed records as `tcp_sack_adjust` moves it at the
    /// start of each pass of `tcp_output` (tcp_sack.c rev. 1.3.2.1, tcp_output.c rev. 1.100.2.3,
    /// sources at `send::next_segment_freebsd`); at snd_max it moves with it from now on.
    #[cold]
    fn freebsd_adjust_walk(&mut self, nxt: u64, adjust: bool) {
        let nxt = nxt.max(self.snd_una);
        let at = if nxt >= self.snd_nxt {
            u64::MAX
        } else if !adjust {
            nxt
        } else {
            self.sb
                .first_unsacked_from(nxt)
                .map_or(u64::MAX, |i| self.sb.seg(i).start.max(nxt))
        };
        self.ep.rec.freebsd_walked(at);
    }

    /// Knob `partial_ack_zero_persist`, after an ACK's sending (`sent`: it sent a segment).
    /// FreeBSD 5.x (read for the facts, nothing copied): 5.2.1-RELEASE `tcp_input.c`
    /// (github:kaizendesu/FreeBSD-5.2) and RELENG_5 `tcp_input.c` rev. 1.252.2.2
    /// `tcp_newreno_partial_ack` (and `tcp_sack.c` rev. 1.3.2.1 `tcp_sack_partialack`) send one
    /// segment, then deflate snd_cwnd by th_ack − snd_una − t_maxseg on a 32-bit u_long: a
    /// partial ACK of exactly snd_cwnd + t_maxseg leaves 0. The ACK's second `tcp_output`
    /// (`tcp_output.c` rev. 1.100.2.3) has sendwin = min(snd_wnd, snd_cwnd) = 0; without SACK,
    /// or with SACK when `tcp_sack_output` counts no resent byte (sack_bytes_rxmt = 0; here: no
    /// resent record outstanding), len = min(sb_cc, 0) − off < 0 and "window shrank to 0":
    /// `callout_stop(tt_rexmt)`, t_rxtshift = 0, snd_nxt = snd_una, and `tcp_setpersist` if the
    /// persist timer is not running. While no retransmission timer runs, `tcp_input` sets
    /// t_dupacks = 0 on every duplicate ACK and nothing is sent (no inflation), and an ACK of
    /// new data does not re-arm it (`else if (!callout_active(tp->tt_persist))`). Any segment
    /// `tcp_output` then transmits (not a forced probe) stops the persist timer, sets
    /// t_rxtshift = 0 and arms the retransmission timer: the next partial ACK (the head
    /// retransmission, snd_nxt = th_ack, then snd_cwnd = 0 − (acked − t_maxseg): wraps when
    /// more than a segment is acknowledged) or the ACK that ends the recovery (snd_cwnd =
    /// snd_max − th_ack + t_maxseg or snd_ssthresh, sending from snd_nxt = snd_una) ends the
    /// stall; the data between snd_una and snd_max goes again from snd_una. Approximated: FreeBSD
    /// resends from snd_una as new data (snd_nxt < snd_max), the engine as lost records, whole
    /// records (a record cut by the 1-byte probe goes as its 1-byte-shorter rest where
    /// FreeBSD sends a full segment from snd_una + 1); with SACK FreeBSD's later new data from
    /// the pulled-back snd_nxt (below sack_newdata) is not modelled, the engine resends the
    /// un-SACKed records.
    #[cold]
    fn bsd_zero_window(&mut self, now: Nanos, sent: bool) {
        if self.bsd_stall && sent {
            // tcp_output.c: a transmitted segment stops the persist timer (t_rxtshift = 0).
            self.bsd_stall = false;
            self.timers.persist = None;
        }
        if self.bsd_stall {
            // No segment went: the retransmission timer stays off (tcp_input.c re-arms it on an
            // ACK of new data only `if (!callout_active(tp->tt_persist))`).
            self.timers.rto = None;
        }
        // FreeBSD's snd_nxt: below snd_max in a SACK recovery with knob `freebsd_sack_walk`;
        // off = snd_nxt − snd_una must be above 0 for len < 0.
        let nxt = self
            .ep
            .rec
            .freebsd_walk()
            .map_or(self.snd_nxt, |w| w.min(self.snd_nxt));
        let stalls = self.ep.rec.active
            && self.ep.rec.u32_deflation
            && self.cwnd() == 0
            && !self.sb.is_empty()
            && nxt > self.snd_una
            && (self.ep.rec.mode == Mode::NewReno || self.sb.retrans_bytes == 0);
        if !stalls {
            return;
        }
        if !self.bsd_stall {
            self.bsd_stall = true;
            self.bsd_stall_shift = 0;
            self.bsd_set_persist(now);
        }
        self.timers.rto = None;
        self.rtt.backoff = 0;
        self.acks.dupacks = 0;
        if self.cfg.freebsd_sack_walk && self.ep.rec.mode == Mode::FreebsdSack {
            // Knob `freebsd_sack_walk`: snd_nxt = snd_una, the scoreboard as it is: the hole
            // list resends what it has not resent, then snd_nxt walks from snd_una over
            // everything not SACKed (`send::next_segment_freebsd`; the window of the partial
            // ACK that ends the stall, `Recovery::on_ack`).
            self.ep.rec.freebsd_pull_back(self.snd_una);
        } else {
            self.sb.pull_back_to_una();
        }
    }

    /// FreeBSD `tcp_setpersist` (tcp_output.c rev. 1.100.2.3; read for the facts): t =
    /// ((t_srtt >> 2) + t_rttvar) >> 1 ticks, t_srtt scaled by 32 and t_rttvar by 16
    /// (tcp_var.h rev. 1.109.2.1: TCP_RTT_SHIFT 5, TCP_RTTVAR_SHIFT 4), i.e. 4·SRTT + 8·RTTVAR;
    /// `TCPT_RANGESET(tt, t * tcp_backoff[t_rxtshift], TCPTV_PERSMIN, TCPTV_PERSMAX)` adds
    /// tcp_rexmit_slop (200 ms) and clamps to [5 s, 60 s] (tcp_timer.h: TCPTV_PERSMIN 5·hz,
    /// TCPTV_PERSMAX 60·hz; read in rev. 1.28 of 2006, github:TrustedBSD/sebsd, not the 5.x
    /// file); then t_rxtshift += 1 (at most TCP_MAXRXTSHIFT 12). tcp_backoff[] = {1, 2, 4, 8,
    /// 16, 32, 64, 64, …} (tcp_timer.c rev. 1.66). Ticks are not modelled here.
    #[cold]
    fn bsd_set_persist(&mut self, now: Nanos) {
        let tt = bsd_persist_interval(self.rtt.srtt, self.rtt.rttvar, self.bsd_stall_shift);
        self.timers.persist = Some(now + tt);
        self.bsd_stall_shift = (self.bsd_stall_shift + 1).min(12);
    }

    /// Knob `partial_ack_zero_persist`: the persist timer fired in the stall
    /// ([`Sender::bsd_zero_window`]). FreeBSD `tcp_timer_persist` (tcp_timer.c rev. 1.66):
    /// `tcp_setpersist`, then `tcp_output` with t_force = 1: sendwin = min(snd_wnd, snd_cwnd) =
    /// 0 becomes 1, whatever the peer's window, so one byte goes from snd_nxt = snd_una
    /// (tcp_output.c rev. 1.100.2.3, "If in persist timeout with window of 0, send 1 byte");
    /// in persist state snd_nxt is not advanced and no retransmission timer is armed.
    #[cold]
    fn bsd_persist_probe(&mut self, cx: &mut Cx) {
        self.bsd_set_persist(cx.now);
        // The byte at snd_una, whether or not an earlier probe sent it.
        self.sb.mark_head_for_resend();
        let Some(head) = self.sb.next_lost() else {
            return;
        };
        if self.sb.seg(head).start != self.snd_una {
            return;
        }
        if self.sb.seg(head).len > 1 {
            self.sb.recut_lost(head, 1, 0);
        }
        let (start, len) = self.sb.on_retransmit(head, cx.now);
        self.stats.zero_window_probes += 1;
        self.send_segment(cx, start, len, true, false, false);
        self.timers.rto = None;
    }

    /// The persist timer fired ([`timers::persist_probe`] chooses the probe).
    fn send_window_probe(&mut self, cx: &mut Cx) {
        if self.bsd_stall {
            self.bsd_persist_probe(cx);
            return;
        }
        let room = self.room();
        match timers::persist_probe(!self.sb.is_empty(), room.rwnd, room.app, self.smss) {
            PersistProbe::Outstanding => self.timers.persist_backoff = 0,
            PersistProbe::Partial(len) => self.send_new(cx, len, false, false),
            PersistProbe::ZeroWindow => {
                self.stats.zero_window_probes += 1;
                let hdr = self.data_hdr(cx.now, self.snd_una.wrapping_sub(1), 0);
                let wire = self.header_len();
                self.emit(cx, hdr, 0, wire);
                self.timers
                    .persist_probe_sent(cx.now, self.rtt.base_rto(), self.cfg.max_rto);
            }
        }
    }

    // ---- Input ----

    /// Forced inline into the event loop's `with_endpoint` (through `Endpoint::on_packet`): the
    /// fat-LTO build of the `runjson` example inlines it by itself, but the Python module's
    /// build (the same code in a larger optimisation unit, with PyO3) kept it out of line, which
    /// cost that build ≈ 2 % more instructions per packet than `runjson` on bench s1 (README
    /// "Performance", round 8): `tcplab bench` runs the module's build.
    #[inline(always)]
    pub fn on_packet(&mut self, p: &Packet, cx: &mut Cx) {
        match self.state {
            State::SynSent if p.has_flag(flags::SYN) && p.has_flag(flags::ACK) => {
                self.on_syn_ack(p, cx);
            }
            State::Established => {
                if p.has_flag(flags::SYN) {
                    // Retransmitted SYN-ACK (our ACK was lost): acknowledge again.
                    self.send_ack(cx);
                    return;
                }
                let sent_before = self.stats.segments_sent;
                self.on_ack(p, cx);
                if self.app == AppPhase::Opening {
                    self.prelude_acked(cx.now);
                }
                if self.state == State::Established {
                    self.try_send(cx);
                }
                // FreeBSD's SACK recovery of November 2004: the window this ACK's sending ran
                // with gives way to the one that holds after it (`Recovery::settle`).
                self.ep.rec.settle();
                if self.cfg.partial_ack_zero_persist {
                    self.bsd_zero_window(cx.now, self.stats.segments_sent != sent_before);
                }
                if let Some((_, nxt)) = self.loss_lt.take() {
                    // FreeBSD's snd_limited ("rfc3042-flight"; XNU keeps none).
                    self.loss_lt_limited = send::loss_limited_transmit_limited(
                        self.loss_lt_limited,
                        self.snd_nxt.saturating_sub(nxt),
                        self.smss,
                    );
                }
            }
            _ => {}
        }
    }

    fn on_ack(&mut self, p: &Packet, cx: &mut Cx) {
        let now = cx.now;
        self.ack_start_cwnd = self.cc.cwnd();
        let h = &p.tcp;
        // A NewReno sender ignores SACK information even when SACK was negotiated (RFC 6582
        // recovery works from duplicate ACKs and the cumulative ACK only); blocks are counted.
        let use_sack = self.sack_on && self.ep.rec.mode != Mode::NewReno;
        let acx = AckCx {
            now,
            isn: self.spec.isn,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            fin_sent: self.fin_sent,
            snd_wscale: self.snd_wscale,
            ts_on: self.ts_on,
            use_sack,
            clock_granularity: self.cfg.clock_granularity,
            clock_phase: self.cfg.clock_phase,
            rtt_sampling: self.cfg.rtt_sampling,
            ca_rtt_stamp: self.cfg.rtt_sampling == ack::RttSamplingCfg::Linux26
                && self.cc.rtt_stamp(),
        };
        // Linux's state when the ACK arrives (`icsk_ca_state` before `tcp_ack`): outside Open
        // the controller is told so (`AckEvent::outside_open`), and with knob `cwnd_moderation`
        // the ACK is dubious (Linux `tcp_ack_is_dubious`) and takes the full path.
        let ca_state = self.ep.ca_state(self.acks.dupacks, &self.sb);
        let outside_open = ca_state != 0;
        // 3 Recovery, 2 CWR ([`Episodes::ca_state`]).
        self.ack_start_recovery_or_cwr = matches!(ca_state, 2 | 3);
        // Without SACK in Linux's PRR the duplicate ACKs counted so far are not in flight
        // (`tcp_packets_in_flight`, `Episodes::in_flight`): the controller's prior in-flight
        // leaves them out, so a recovery the receive window limits is not taken for a
        // cwnd-limited one (0 in other modes).
        let prior_reno_sacked = self.ep.reno_sacked;
        let not_open = self.cfg.cwnd_moderation && outside_open;
        // 1. The ACK part (the fast path when it only advances snd_una and no episode is on).
        if let Some(ack) = AckProcessor::in_order(&acx, h, p.payload, &self.sb) {
            if self.ep.quiet() && !not_open && fast_ack_enabled() {
                self.on_in_order_ack(&acx, h, ack, use_sack, outside_open);
                return;
            }
        }
        let Some(mut a) =
            self.acks
                .on_ack(&acx, h, p.payload, &mut self.sb, &self.rtt, &mut self.stats)
        else {
            return;
        };
        if self.bsd_stall && a.is_dup {
            // Knob `partial_ack_zero_persist`: no retransmission timer runs, so FreeBSD's
            // `tcp_input` sets t_dupacks = 0 and sends nothing (sources at `bsd_zero_window`).
            a.is_dup = false;
            self.acks.dupacks = 0;
        }
        // 2. The connection's bookkeeping.
        if a.fin_acked {
            self.fin_acked = true;
        }
        self.take_ack_fields(a.rwnd, h.ts_val, a.snd_una);
        if let Some(right) = a.dsack_end {
            self.ep.undo.on_dsack(right);
        }
        let advanced = a.advanced;
        let res = a.res;
        // 3. Bad-retransmit undo, before the RTT sample resets the backoff; the RTT sample.
        if advanced {
            self.rto_retries = 0;
            let (ep, mut parts, _) = self.episode_parts(now);
            if ep.on_advance(&mut parts, now) {
                self.acks.dupacks = 0;
            }
        }
        if let Some(m) = a.rtt_sample {
            self.rtt.on_measurement(m, self.min_rtt_sample(m, a.ca_rtt));
        }
        // 4. Loss marking.
        let lost_new = self.mark_losses(&res, now, use_sack);
        if advanced {
            self.rack.tlp_out = false;
        }
        // 5. The episode rules: undo, leaving and entering recovery, loss and CWR.
        let ea = EpisodeAck {
            advanced,
            is_dup: a.is_dup,
            has_sack: h.n_sack > 0,
            sack_on: self.sack_on,
            ts_on: self.ts_on,
            ts_ecr: h.ts_ecr,
            res,
            lost_new,
            dupacks: self.acks.dupacks,
            can_send_new: self.app_end.is_none_or(|e| e > self.snd_nxt)
                && self.snd_una + self.rwnd > self.snd_nxt,
            // Knob `recovery_entry_ack_grows`: Linux 2.4/2.6 `tcp_ack` runs `tcp_cong_avoid`
            // (when `(flag & FLAG_DATA_ACKED)` and `tcp_may_raise_cwnd`: `ca_state` neither
            // Recovery nor CWR, and no ECE above ssthresh — this model has no ECN) before
            // `tcp_fastretrans_alert` enters Recovery, which takes ssthresh from the grown
            // `snd_cwnd` (net/ipv4/tcp_input.c of 2.4.27, 2.6.11 and the 2.6.2x–3.x trees, read
            // for the facts). The growth itself stays subject to the stack's cwnd-limited rule.
            grow_before_entry: self.cfg.recovery_entry_ack_grows
                && advanced
                && !self.ack_start_recovery_or_cwr,
            dsack: a.dsack_end.is_some(),
        };
        let (ep, mut parts, seq) = self.episode_parts(now);
        let out = ep.on_ack(&mut parts, seq, &ea);
        self.acks.dupacks = out.dupacks;
        if matches!(
            self.cfg.loss_dupack_credit,
            LossDupackCfg::Rfc3042Flight | LossDupackCfg::Rfc3042Cwnd
        ) && a.is_dup
            && (!self.sack_on || self.freebsd_sack_go_back_n())
            && self.ep.loss_point.is_some()
        {
            // Knob `freebsd_sack_go_back_n`: FreeBSD RELENG_5 applies its RFC 3042 branch with
            // SACK too (tcp_input.c rev. 1.252.2.2: the `else if (tcp_do_rfc3042)` branch for
            // t_dupacks 1 and 2 tests neither sack_enable nor IN_FASTRECOVERY; read for the
            // facts, nothing copied); sources at `send::loss_limited_transmit_window`.
            self.loss_limited_transmit();
        }
        if out.restart_rto {
            self.timers.restart_rto(now, self.rtt.rto());
        }
        // 6. The congestion controller; with knob `recovery_entry_ack_grows`, before a fast
        // recovery this ACK starts (step 5 left it due, `EpisodeOutcome::entry_due`).
        if advanced || res.bytes_sacked > 0 || (self.ep.rec.active && a.is_dup) {
            // Without SACK in Linux's PRR the controller's credit (knob `growth_credit =
            // "delivered"`) is Linux's delivered count, not the scoreboard's: Linux passes
            // `tcp_newly_delivered` to `tcp_cong_control`, and without SACK `tp->delivered`
            // grows by one for each duplicate ACK (`tcp_add_reno_sack`) and by max(acked −
            // sacked_out, 1) for a cumulative ACK (`tcp_remove_reno_sacks`: "One ACK acked
            // hole. The rest eat duplicate ACKs."), net/ipv4/tcp_input.c as in 6.x, read
            // for the facts. The ACK that ends a long recovery covers hundreds of segments the
            // duplicate ACKs already delivered; counted again, Reno's additive increase
            // (`tcp_cong_avoid_ai`, acked/cwnd) grew cwnd by 8 segments on it
            // (tests/test_nosack_loss_state.py's path at 40.25 ms: 581 segments, cwnd 69 → 77).
            let mut res = res;
            if let Some(d) = out.reno_delivered {
                res.packets_delivered =
                    u32::try_from(d.div_ceil(u64::from(self.smss.max(1)))).unwrap_or(u32::MAX);
            }
            let ev = self.ack_event(
                now,
                &res,
                a.prior_in_flight.saturating_sub(prior_reno_sacked),
                a.ca_rtt,
                (out.cc_in_recovery, outside_open),
                lost_new,
            );
            self.cc_on_ack(&ev);
        }
        if let Some((lost, delivered)) = out.entry_due {
            self.enter_recovery(now, lost, delivered);
        }
        if out.cwr_done {
            self.cc.on_cwr_complete(now);
        }
        // 6b. Linux 2.4–3.x cwnd moderation on a dubious ACK ([`Episodes::moderation_cap`]).
        if self.cfg.cwnd_moderation {
            let dubious = not_open || a.is_dup || res.bytes_sacked > 0;
            let (dupacks, smss) = (self.acks.dupacks, self.smss);
            let (ep, parts, _) = self.episode_parts(now);
            if let Some(cap) = ep.moderation_cap(&parts, dupacks, dubious, smss) {
                if parts.cc.cwnd() > cap {
                    parts.cc.set_cwnd(cap);
                }
            }
        }
        // 7. Timers: retransmission (RFC 6298 §5.2–5.3), then the probe timeout.
        if advanced {
            let fin_out = self.fin_sent && !self.fin_acked;
            self.rto_on_advance(now, self.sb.is_empty() && !fin_out);
        }
        self.arm_tlp(now);
        if self.fin_acked {
            self.state = State::Done;
            self.timers.rto = None;
        }
    }

    /// Knob `freebsd_sack_go_back_n` with FreeBSD's SACK recovery (`recovery = "freebsd-sack"`).
    #[inline]
    fn freebsd_sack_go_back_n(&self) -> bool {
        self.cfg.freebsd_sack_go_back_n && self.ep.rec.mode == Mode::FreebsdSack
    }

    /// Knob `loss_dupack_credit` = "rfc3042-flight" or "rfc3042-cwnd" on a duplicate ACK in the
    /// loss state without SACK: FreeBSD 5.3's or XNU's RFC 3042 there (sources at
    /// [`send::loss_limited_transmit_window`]) — the send loop of this ACK checks the window
    /// given there, not the congestion window, which stays as it is.
    #[cold]
    fn loss_limited_transmit(&mut self) {
        let dupacks = self.acks.dupacks;
        if self.cfg.dupthresh > 0 && (dupacks.max(1) - 1).is_multiple_of(self.cfg.dupthresh) {
            // FreeBSD: `if (tp->t_dupacks == 1) tp->snd_limited = 0;`
            self.loss_lt_limited = 0;
        }
        let st = self.send_state_in(self.ep.send_window(self.cwnd(), &self.sb));
        let room = st.room();
        let window = send::loss_limited_transmit_window(
            self.cfg.loss_dupack_credit,
            dupacks,
            self.cfg.dupthresh,
            self.loss_lt_limited,
            // Knob `go_back_n_off` (FreeBSD RELENG_5 tcp_input.c rev. 1.252.2.2, the RFC 3042
            // branch: snd_cwnd = (snd_nxt − snd_una) + (t_dupacks − snd_limited)·t_maxseg,
            // SACKed data below snd_nxt included): the flight is the same off the send loop
            // checks.
            if st.bsd == BsdSack::InflateGoBackN {
                st.go_back_n_off(&mut self.sb)
            } else {
                st.pipe(&self.sb)
            },
            st.window,
            // XNU: `so->so_snd.sb_cc - (tp->snd_max - tp->snd_una) > 0`.
            room.app > 0 && room.buf > 0,
            self.smss,
        );
        self.loss_lt = window.map(|w| (w, self.snd_nxt));
    }

    /// An acceptable ACK's fields for the connection: the peer's window (an open one stops
    /// the persist timer), the timestamp to echo, snd_una.
    #[inline]
    fn take_ack_fields(&mut self, rwnd: u64, ts_val: u32, snd_una: u64) {
        self.rwnd = rwnd;
        // Knob `partial_ack_zero_persist`: the stall's persist timer runs on whatever the
        // peer's window (sources at `bsd_zero_window`).
        if rwnd > 0 && !self.bsd_stall {
            self.timers.window_opened();
        }
        if self.ts_on {
            self.ts_recent = ts_val;
        }
        self.snd_una = snd_una;
    }

    /// The sample that feeds the minimum RTT: with Linux ≥ 3.15 sampling the congestion
    /// controller's (`tcp_update_rtt_min` takes `ca_rtt_us`), otherwise the estimator's (Linux
    /// 2.6 kept no minimum of the controller's samples).
    #[inline]
    fn min_rtt_sample(&self, m: crate::tcp::rtt::RttSample, ca_rtt: Option<Nanos>) -> Nanos {
        if self.cfg.rtt_sampling == ack::RttSamplingCfg::Linux {
            ca_rtt.unwrap_or(m.nanos)
        } else {
            m.nanos
        }
    }

    /// Loss marking on one ACK, after the scoreboard took it; returns the bytes newly marked
    /// lost. From SACK information: RFC 6675 IsLost, or FACK for rate-halving; then RACK
    /// (RFC 8985 §6.2): remember the newest delivered transmission, then time-based loss.
    /// Forced inline: under fat LTO `#[inline]` left it a call per ACK (−7.8 instructions per
    /// delivered packet on s1 inlined).
    #[inline(always)]
    fn mark_losses(&mut self, res: &AckResult, now: Nanos, use_sack: bool) -> u64 {
        if !use_sack {
            return 0;
        }
        let in_recovery = self.ep.rec.active && self.ep.loss_point.is_none();
        let mut lost = loss::mark_lost_by_sack(&mut self.sb, self.ep.rec.mode, in_recovery);
        if self.cfg.rack {
            self.rack.on_delivered(res, now);
            self.rack.note_reordering(res, self.sb.high_sacked);
            lost += self.rack_detect(now);
        }
        lost
    }

    /// The congestion controller's ACK, then the stack's ceiling on the window it grew
    /// ([`cwnd_use::CwndUse::growth_cap`]: BSD's TCP_MAXWIN << snd_scale).
    #[inline]
    fn cc_on_ack(&mut self, ev: &AckEvent) {
        self.cc.on_ack(ev);
        if let Some(cap) = self.cwnd_use.growth_cap(self.snd_wscale) {
            if !ev.in_recovery && self.cc.cwnd() > cap {
                self.cc.set_cwnd(cap);
            }
        }
    }

    /// What the congestion controller hears of one ACK (after loss marking and recovery
    /// entry; the delivery-rate sample ends here).
    #[inline]
    fn ack_event(
        &mut self,
        now: Nanos,
        res: &AckResult,
        prior_in_flight: u64,
        ca_rtt: Option<Nanos>,
        (in_recovery, outside_open): (bool, bool),
        bytes_lost: u64,
    ) -> AckEvent {
        let rate = self.sb.rate.end_ack(self.rtt.min_rtt);
        AckEvent {
            now,
            bytes_acked: res.bytes_acked,
            packets_acked: res.packets_acked,
            packets_delivered: res.packets_delivered,
            bytes_sacked: res.bytes_sacked,
            prior_in_flight,
            in_flight: self.sb.pipe(),
            rtt_sample: ca_rtt,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            in_recovery,
            outside_open,
            app_limited: !self.cwnd_use.cwnd_limited(&cwnd_use::GrowthInput {
                prior_in_flight,
                prior_cwnd: self.ack_start_cwnd,
                cwnd: self.cc.cwnd(),
                ssthresh: self.cc.ssthresh(),
                mss: u64::from(self.smss),
                tso: self.cfg.tso,
                reordering: u64::from(self.cfg.dupthresh),
                found_recovery_or_cwr: self.ack_start_recovery_or_cwr,
            }),
            rate,
            mss: self.smss,
            bytes_lost,
        }
    }

    /// The ACK fast path: an ACK that [`AckProcessor::in_order`] accepted (it only advances
    /// snd_una; nothing is SACKed, lost or retransmitted; no FIN) while [`TcpSender::quiet`].
    /// Does exactly what the full path (`on_ack`) does on such an ACK — the same state changes
    /// and the same calls to the congestion controller in the same order — leaving out the
    /// branches that cannot fire: FIN, D-SACK, bad-retransmit and D-SACK/Eifel/F-RTO undo,
    /// leaving recovery, loss or CWR, recovery's per-ACK rule. Loss marking and RACK still run
    /// (time-based marking may find a loss and enter recovery here, as in the full path).
    /// Checked against the full path by `prop_fast_ack_path_changes_nothing` (whole runs, every
    /// cwnd change) and `prop_in_order_ack_matches_full_path` (the ACK part).
    fn on_in_order_ack(
        &mut self,
        acx: &AckCx,
        h: &TcpHdr,
        ack: u64,
        use_sack: bool,
        outside_open: bool,
    ) {
        let now = acx.now;
        let mut res = AckResult::default();
        let a = self
            .acks
            .on_in_order_ack(acx, h, ack, &mut self.sb, &self.rtt, &mut res);
        self.take_ack_fields(a.rwnd, h.ts_val, ack);
        let prior_in_flight = a.prior_in_flight;
        if let Some(m) = a.rtt_sample {
            self.rtt.on_measurement(m, self.min_rtt_sample(m, a.ca_rtt));
        }
        let lost_new = self.mark_losses(&res, now, use_sack);
        self.rack.tlp_out = false;
        let delivered = res.bytes_acked + res.bytes_sacked - res.bytes_acked_sacked;
        // Recovery entry as in the full path; the duplicate-ACK count is 0 after an advance.
        let due = self
            .ep
            .recovery_due(0, self.cfg.dupthresh, self.snd_una, &self.sb);
        // Knob `recovery_entry_ack_grows` (the full path's `EpisodeAck::grow_before_entry`;
        // this path runs in Open only): the controller first, then the entry.
        let enter = due && !self.sb.is_empty();
        let grow_first = enter && self.cfg.recovery_entry_ack_grows;
        if enter && !grow_first {
            self.enter_recovery(now, lost_new, delivered);
        }
        let ev = self.ack_event(
            now,
            &res,
            prior_in_flight,
            a.ca_rtt,
            (self.ep.rec.active, outside_open),
            lost_new,
        );
        self.cc_on_ack(&ev);
        if grow_first {
            self.enter_recovery(now, lost_new, delivered);
        }
        self.rto_on_advance(now, self.sb.is_empty()); // no FIN is out on this path
        self.arm_tlp(now);
    }

    /// The retransmission timer on an ACK that advanced snd_una (see
    /// [`timers::rto_on_advance`]); `nothing_out`: no data or FIN unacknowledged.
    #[inline]
    fn rto_on_advance(&mut self, now: Nanos, nothing_out: bool) {
        match timers::rto_on_advance(nothing_out, self.ep.rec.restart_rto_on_ack()) {
            RtoOnAck::Stop => self.timers.rto = None,
            RtoOnAck::Restart => self.timers.restart_rto(now, self.rtt.rto()),
            RtoOnAck::Keep => {}
        }
    }

    // ---- Loss detection beyond duplicate ACKs (RACK-TLP, the loss part) ----

    /// Run RACK loss detection now; arms the reordering timer. Returns bytes newly marked lost.
    fn rack_detect(&mut self, now: Nanos) -> u64 {
        let st = loss::ReoState {
            recovering: self.ep.rec.active || self.ep.loss_point.is_some(),
            // SACKed bytes over full segments: the count of SACKed segments in a bulk flow
            dupthresh_sacked: self.sb.sacked_bytes
                >= u64::from(self.cfg.dupthresh) * u64::from(self.smss.max(1)),
        };
        let (lost, timer) = self.rack.detect(&mut self.sb, &self.rtt, st, now);
        if self.rack.xmit != 0 || self.rack.rtt != 0 {
            self.timers.rack = timer;
        }
        lost
    }

    /// Arm the probe timeout (RFC 8985 §7.2; see [`RackTlp::tlp_deadline`]).
    fn arm_tlp(&mut self, now: Nanos) {
        let enabled = self.cfg.rack && self.cfg.tlp && self.sack_on;
        self.timers.tlp = self.rack.tlp_deadline(
            enabled,
            self.ep.rec.active,
            &self.sb,
            &self.rtt,
            self.timers.rto,
            self.timers.tlp,
            now,
        );
    }

    /// The probe (RFC 8985 §7.3): one new segment if the receiver's window allows, else the last
    /// segment again; either way an ACK with SACK information follows if anything arrives.
    fn send_tail_probe(&mut self, cx: &mut Cx) {
        if self.ep.rec.active || self.sb.is_empty() || self.state != State::Established {
            return;
        }
        self.rack.tlp_out = true;
        self.stats.tlp_probes += 1;
        let room = self.room();
        match RackTlp::probe(self.smss, room.app, room.rwnd) {
            Probe::New(len) => self.send_new(cx, len, false, false),
            Probe::Retransmit => {
                if let Some((start, len)) = self.sb.on_probe_retransmit(cx.now) {
                    self.send_segment(cx, start, len, true, false, false);
                }
            }
        }
        // RFC 8985 §7.3: after sending the probe, re-arm the RTO timer (from now), not the PTO.
        // Measured on this machine's kernel: scripts/linux-6/tlp-then-rto.pkt.
        self.timers.restart_rto(cx.now, self.rtt.rto());
    }

    // ---- Episodes: recovery, loss, CWR and undo (the episode part) ----

    /// What the episode part acts on, lent for one call, and the sequence state now.
    #[inline]
    fn episode_parts(&mut self, now: Nanos) -> (&mut Episodes, Parts<'_>, Seq) {
        let seq = Seq {
            now,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            smss: self.smss,
            rwnd: self.rwnd,
        };
        let parts = Parts {
            cfg: &self.cfg,
            cc: &mut *self.cc,
            sb: &mut self.sb,
            rtt: &mut self.rtt,
            stats: &mut self.stats,
        };
        (&mut self.ep, parts, seq)
    }

    /// Enter fast recovery (see [`Episodes::enter_recovery`]).
    fn enter_recovery(&mut self, now: Nanos, lost_new: u64, delivered: u64) {
        let (ep, mut parts, seq) = self.episode_parts(now);
        ep.enter_recovery(&mut parts, seq, lost_new, delivered);
    }

    fn on_rto(&mut self, cx: &mut Cx) {
        let now = cx.now;
        if self.state == State::SynSent {
            if self.hs.gave_up(&self.cfg, now) {
                self.state = State::Failed;
                return;
            }
            self.send_syn(cx);
            return;
        }
        // Windows `TcpMaxDataRetransmissions` (Microsoft KB 170359: the number of times TCP
        // retransmits an individual data segment before aborting the connection, default 5;
        // "it is reset when responses resume"): the expiry after the last allowed
        // retransmission went unanswered aborts instead of retransmitting. Counted here as
        // timeouts in a row without snd_una advancing (the segment at snd_una is the one the
        // timer retransmits); a fast retransmission of it is not counted (APPROXIMATE).
        let max = self.cfg.max_data_retransmissions;
        let outstanding = !self.sb.is_empty() || (self.fin_sent && !self.fin_acked);
        if max > 0 && outstanding {
            if self.rto_retries >= max {
                self.state = State::Aborted;
                return;
            }
            self.rto_retries += 1;
        }
        if self.sb.is_empty() {
            if self.fin_sent && !self.fin_acked {
                let end = self.app_end.unwrap_or(self.snd_nxt);
                let hdr = self.data_hdr(now, end, flags::FIN);
                let wire = self.header_len();
                self.emit(cx, hdr, 0, wire);
                self.rtt.back_off();
                self.timers.restart_rto(now, self.rtt.rto());
            }
            return;
        }
        // RFC 6298 §5.4–5.6 and RFC 5681 §3.1 (the episode part): reduce the window, back off
        // the timer, presume everything outstanding lost; then restart the timer and
        // retransmit the earliest segment.
        let sack_on = self.sack_on;
        let (ep, mut parts, seq) = self.episode_parts(now);
        ep.on_timeout(&mut parts, seq, sack_on);
        self.acks.dupacks = 0;
        self.timers.restart_rto(now, self.rtt.rto());
        self.try_send(cx);
    }

    /// Bytes in flight as RFC 6675's pipe.
    pub fn in_flight(&self) -> u64 {
        self.sb.pipe()
    }

    pub fn rto_now(&self) -> Nanos {
        self.rtt.rto()
    }

    pub fn pacing_rate_now(&self) -> Option<u64> {
        self.pacing_rate()
    }

    /// Window scale we announced and the peer's (for tests).
    pub fn wscales(&self) -> (u8, u8) {
        (self.hs.rcv_wscale, self.snd_wscale)
    }

    pub fn sack_enabled(&self) -> bool {
        self.sack_on
    }

    pub fn cwnd_unit_packets(&self) -> bool {
        self.cfg.cwnd_unit == CwndUnitCfg::Packets
    }

    /// Read-only, for behaviour scripts: Linux's `tcpi_ca_state` (see [`Episodes::ca_state`]).
    pub fn ca_state(&self) -> u8 {
        self.ep.ca_state(self.acks.dupacks, &self.sb)
    }
}

/// FreeBSD `tcp_setpersist`'s interval for SRTT `srtt`, RTTVAR `rttvar` and t_rxtshift
/// `shift` (sources at [`Sender::bsd_set_persist`]): (4·SRTT + 8·RTTVAR)·tcp_backoff[shift] +
/// 200 ms, clamped to [5 s, 60 s].
fn bsd_persist_interval(srtt: Nanos, rttvar: Nanos, shift: u32) -> Nanos {
    const SEC: Nanos = 1_000_000_000;
    let t = 4 * srtt + 8 * rttvar;
    let backoff = 1u64 << shift.min(6);
    (t.saturating_mul(backoff) + SEC / 5).clamp(5 * SEC, 60 * SEC)
}

/// [`Sender::bsd_sack`]: the BSD SACK recoveries' send rules for recovery `rec`, in the loss
/// state after a timeout (`loss`) or not; `go_back_n_off`: knob `go_back_n_off` on a SACK
/// connection.
#[inline]
fn bsd_sack_rules(rec: &Recovery, loss: bool, go_back_n_off: bool) -> BsdSack {
    match rec.mode {
        // OpenBSD: one retransmission per ACK in recovery (sources at
        // `crate::tcp::recovery::Mode::SackInflate`), the go-back-N after a timeout against
        // its off (sources at `SendState::go_back_n_off`), no hole resent outside both.
        Mode::SackInflate if rec.one_rexmit_per_ack() => BsdSack::InflateRecovery,
        Mode::SackInflate if loss => BsdSack::InflateGoBackN,
        Mode::SackInflate => BsdSack::InflateOpen,
        // FreeBSD's SACK recovery (sources at `crate::tcp::recovery::Mode::FreebsdSack`).
        Mode::FreebsdSack => freebsd_sack_rules(rec, loss, go_back_n_off),
        _ => BsdSack::Off,
    }
}

/// [`bsd_sack_rules`] in FreeBSD's SACK mode. Out of line: inlined, its arms (the recovery's
/// state, a partial ACK's first pass, the walk after a recovery) cost every sender's
/// `send_state_in` instructions (cachegrind, `runjson` s1).
#[inline(never)]
fn freebsd_sack_rules(rec: &Recovery, loss: bool, go_back_n_off: bool) -> BsdSack {
    match rec.freebsd_budget() {
        Some((recover, newdata, gbn, walk)) => BsdSack::FreebsdRecovery {
            recover,
            newdata,
            gbn,
            walk,
            first: rec.freebsd_first_pass(),
            part: rec.freebsd_partial_hole,
        },
        // Knob `go_back_n_off`: FreeBSD RELENG_5's go-back-N after a timeout checks
        // min(snd_wnd, snd_cwnd) against off = snd_nxt − snd_una after
        // `tcp_sack_adjust` (tcp_output.c rev. 1.100.2.3 `tcp_output`: outside
        // IN_FASTRECOVERY `tcp_sack_output` is not asked, sack_bytes_rxmt = 0, len =
        // min(sb_cc, sendwin) − off; tcp_sack.c rev. 1.3.2.1 `tcp_sack_adjust` moves
        // snd_nxt over SACKed blocks as OpenBSD's does; read for the facts, nothing
        // copied): OpenBSD's rule, `SendState::go_back_n_off`.
        None if loss && go_back_n_off => BsdSack::InflateGoBackN,
        None if loss => BsdSack::Off,
        // Knob `freebsd_sack_walk`: a recovery ended with FreeBSD's snd_nxt below snd_max,
        // which goes on from there as in the go-back-N (`Episodes::exit_recovery`).
        None if rec.freebsd_open_walk() && go_back_n_off => BsdSack::InflateGoBackN,
        None if rec.freebsd_open_walk() => BsdSack::Off,
        None => BsdSack::FreebsdOpen,
    }
}

#[cfg(test)]
mod tests {
    use super::FULL_ACK_PATH_ONLY;
    use super::{bsd_persist_interval, bsd_sack_rules, BsdSack, Mode, Recovery};
    use serde_json::json;

    /// Knob `partial_ack_zero_persist`: FreeBSD `tcp_setpersist` (tcp_output.c rev. 1.100.2.3,
    /// TCPTV_PERSMIN 5 s, TCPTV_PERSMAX 60 s, tcp_rexmit_slop 200 ms; sources at
    /// `Sender::bsd_set_persist`): ((t_srtt >> 2) + t_rttvar) >> 1 = 4·SRTT + 8·RTTVAR.
    #[test]
    fn test_bsd_persist_interval() {
        const MS: u64 = 1_000_000;
        // SRTT 100 ms, RTTVAR 50 ms: 0.8 s + 0.2 s, then 1.8 s: both below PERSMIN.
        assert_eq!(bsd_persist_interval(100 * MS, 50 * MS, 0), 5000 * MS);
        assert_eq!(bsd_persist_interval(100 * MS, 50 * MS, 1), 5000 * MS);
        // SRTT 1 s, RTTVAR 250 ms: 6 s · 1 + 0.2 s; · 2 + 0.2 s; · 64 (shift 6 and beyond)
        // capped at PERSMAX.
        assert_eq!(bsd_persist_interval(1000 * MS, 250 * MS, 0), 6200 * MS);
        assert_eq!(bsd_persist_interval(1000 * MS, 250 * MS, 1), 12200 * MS);
        assert_eq!(bsd_persist_interval(1000 * MS, 250 * MS, 12), 60000 * MS);
    }

    /// Knob `go_back_n_off` (FreeBSD RELENG_5 tcp_output.c rev. 1.100.2.3, tcp_sack.c rev.
    /// 1.3.2.1 `tcp_sack_adjust`; sources at `bsd_sack_rules`): FreeBSD's SACK mode checks the
    /// window of the go-back-N after a timeout against OpenBSD's off (`BsdSack::InflateGoBackN`,
    /// SACKed data below snd_nxt counted), not the pipe; outside the loss state, or with the
    /// knob off, as before.
    #[test]
    fn test_freebsd_go_back_n_off_checks_off() {
        let rec = Recovery::new(Mode::FreebsdSack, 1460, 3);
        assert_eq!(bsd_sack_rules(&rec, true, true), BsdSack::InflateGoBackN);
        assert_eq!(bsd_sack_rules(&rec, true, false), BsdSack::Off);
        assert_eq!(bsd_sack_rules(&rec, false, true), BsdSack::FreebsdOpen);
        // OpenBSD's rule whatever the knob.
        let rec = Recovery::new(Mode::SackInflate, 1460, 3);
        assert_eq!(bsd_sack_rules(&rec, true, false), BsdSack::InflateGoBackN);
        // Every other mode untouched by the knob.
        let rec = Recovery::new(Mode::Rfc6675, 1460, 3);
        assert_eq!(bsd_sack_rules(&rec, true, true), BsdSack::Off);
    }

    /// Knob `freebsd_sack_walk` (FreeBSD RELENG_5 tcp_input.c rev. 1.252.2.2, tcp_output.c rev.
    /// 1.100.2.3; sources at `Episodes::exit_recovery`): a recovery that ends with FreeBSD's
    /// snd_nxt below snd_max (the persist stall pulled it back) goes on out of recovery as the
    /// go-back-N does, its window against off = snd_nxt − snd_una; once snd_nxt reaches snd_max,
    /// FreeBSD's open state again (no SACK hole resent). A timeout or a new recovery ends it.
    #[test]
    fn test_freebsd_exit_below_snd_max_goes_on_as_the_go_back_n() {
        let mut rec = Recovery::new(Mode::FreebsdSack, 1460, 3);
        rec.enter(20_000, 10_000, 10_000, 5000, 0, 10_000);
        rec.freebsd_pull_back(5000);
        assert!(!rec.freebsd_open_walk());
        rec.exit(5000, 3000);
        rec.freebsd_exit_below_max(17_000);
        assert!(rec.freebsd_open_walk() && rec.freebsd_any_walk());
        assert_eq!(rec.freebsd_walk(), None, "not in recovery");
        assert_eq!(bsd_sack_rules(&rec, false, true), BsdSack::InflateGoBackN);
        assert_eq!(bsd_sack_rules(&rec, false, false), BsdSack::Off);
        rec.freebsd_open_walk_done();
        assert_eq!(bsd_sack_rules(&rec, false, true), BsdSack::FreebsdOpen);
        rec.freebsd_exit_below_max(17_000);
        rec.abort();
        assert!(!rec.freebsd_any_walk(), "a timeout");
        rec.freebsd_exit_below_max(17_000);
        rec.enter(20_000, 10_000, 10_000, 5000, 0, 10_000);
        assert!(!rec.freebsd_any_walk(), "a new recovery");
    }

    /// A dumbbell run (one or two flows, random loss both ways, a short queue) as JSON: the
    /// result with every cwnd change recorded and 10 ms samples.
    #[allow(clippy::too_many_arguments)]
    fn run(
        seed: u64,
        cca: &str,
        tcp: serde_json::Value,
        fwd_loss: f64,
        rev_loss: f64,
        queue: u32,
        flows: usize,
        full_only: bool,
    ) -> String {
        let q = |limit: u32| json!({"kind": "droptail", "limit_pkts": limit});
        let ch = |rate: u64, delay: u64, limit: u32, p: f64| {
            let loss = if p > 0.0 {
                json!({"model": "bernoulli", "p": p})
            } else {
                json!({"model": "none"})
            };
            json!({"rate_bps": rate, "delay_ns": delay, "queue": q(limit), "loss": loss})
        };
        let mut nodes = vec![
            json!({"name": "r1", "kind": "router"}),
            json!({"name": "r2", "kind": "router"}),
        ];
        let mut links = vec![json!({
            "name": "bn", "a": "r1", "b": "r2", "mtu": 1500, "monitor": true,
            "ab": ch(20_000_000, 10_000_000, queue, fwd_loss),
            "ba": ch(20_000_000, 10_000_000, queue, rev_loss),
        })];
        let mut fl = vec![];
        for i in 0..flows {
            for (h, r) in [(format!("s{i}"), "r1"), (format!("d{i}"), "r2")] {
                nodes.push(json!({"name": h, "kind": "host"}));
                let c = ch(1_000_000_000, 100_000, 1000, 0.0);
                links.push(json!({"name": format!("{h}-{r}"), "a": h, "b": r, "mtu": 1500, "ab": c, "ba": c}));
            }
            fl.push(json!({
                "name": format!("f{i}"), "kind": "tcp", "src": format!("s{i}"), "dst": format!("d{i}"),
                "start_ns": i as u64 * 7_000_000, "cca": {"name": cca}, "tcp": tcp,
            }));
        }
        let cfg = json!({
            "seed": seed, "duration_ns": 4_000_000_000u64, "interval_ns": 10_000_000u64,
            "record_changes": true, "nodes": nodes, "links": links, "flows": fl,
        });
        FULL_ACK_PATH_ONLY.with(|c| c.set(full_only));
        let r = crate::run_json(&cfg.to_string()).expect("valid config");
        FULL_ACK_PATH_ONLY.with(|c| c.set(false));
        serde_json::to_string(&r).expect("serialisable")
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whole runs with and without the ACK fast path are identical — every sample, every
        /// cwnd change, every counter — across controllers (BIC for the Open-state test of its
        /// delayed-ACK EWMA, `AckEvent::outside_open`), recovery modes, SACK/timestamps,
        /// RACK, undo, F-RTO, local CWR, growth before a recovery's entry (knob
        /// `recovery_entry_ack_grows`), Linux 2.x's rate-halving rules (knobs
        /// `rate_halving_entry_cut`, `rate_halving_floor_half`, `rate_halving_progress_only`),
        /// OpenBSD's SACK recovery and burst limit (`recovery = "sack-inflate"`, `max_burst`),
        /// FreeBSD's (`recovery = "freebsd-sack"`, knobs `sack_partial_ack_cap`,
        /// `freebsd_sack_rules`), FreeBSD's NewReno partial ACK and exit (knobs
        /// `partial_ack_u32_deflation`, `newreno_exit_no_growth`, `newreno_entry_less_limited`,
        /// `newreno_exit_bsd_window`), FreeBSD's SACK recovery after a timeout
        /// (`freebsd_sack_rto_recovery`, `freebsd_sack_go_back_n`, `freebsd_sack_walk`),
        /// every rule for duplicate ACKs after a timeout without SACK (`loss_dupack_credit`)
        /// and loss in both directions (so the fast path meets
        /// ACKs just before and after recovery, timeouts and undo).
        #[test]
        fn prop_fast_ack_path_changes_nothing(
            seed in 1u64..1_000_000,
            cca in proptest::sample::select(vec!["reno", "newreno", "cubic", "bbr", "htcp", "ctcp", "bic"]),
            recovery in proptest::sample::select(vec!["sack", "newreno", "prr", "ratehalving", "sack-inflate", "freebsd-sack"]),
            max_burst in proptest::sample::select(vec![0u32, 4]),
            partial_cap: bool,
            loss_dupack in proptest::sample::select(
                vec!["per-dupack", "none", "rfc3042-flight", "rfc3042-cwnd"]
            ),
            sack: bool,
            timestamps: bool,
            rack: bool,
            undo: bool,
            frto: bool,
            cwr: bool,
            entry_grows: bool,
            rh in proptest::arbitrary::any::<(bool, bool, bool)>(),
            bsd in proptest::arbitrary::any::<(bool, bool, bool, bool, bool, bool, bool)>(),
            fwd_loss in proptest::sample::select(vec![0.0, 0.002, 0.02]),
            rev_loss in proptest::sample::select(vec![0.0, 0.01]),
            queue in proptest::sample::select(vec![8u32, 40]),
            flows in 1usize..3,
        ) {
            let tcp = json!({
                "sack": sack, "timestamps": timestamps, "recovery": recovery, "rack": rack,
                "undo": undo, "frto": frto, "undo_bad_rexmt": undo,
                "local_congestion_cwr": cwr, "recovery_entry_ack_grows": entry_grows,
                "rate_halving_entry_cut": rh.0, "rate_halving_floor_half": rh.1,
                "rate_halving_progress_only": rh.2, "max_burst": max_burst,
                "sack_partial_ack_cap": partial_cap,
                "loss_dupack_credit": loss_dupack,
                "freebsd_sack_rules": if bsd.0 { "inflate" } else { "pipe" },
                "partial_ack_u32_deflation": bsd.1, "newreno_exit_no_growth": bsd.2,
                "newreno_entry_less_limited": bsd.3, "newreno_exit_bsd_window": bsd.4,
                "freebsd_sack_rto_recovery": bsd.5, "freebsd_sack_go_back_n": bsd.6,
                "go_back_n_off": bsd.6 && bsd.0, "freebsd_sack_walk": bsd.6 && !bsd.3,
                "freebsd_sack_partial_hole": bsd.0 && !bsd.4,
                "partial_ack_zero_persist": bsd.1,
            });
            let fast = run(seed, cca, tcp.clone(), fwd_loss, rev_loss, queue, flows, false);
            let full = run(seed, cca, tcp, fwd_loss, rev_loss, queue, flows, true);
            proptest::prop_assert!(fast == full, "results differ (seed {seed}, {cca})");
        }
    }
}
