//! The data-sending end of a bulk TCP connection (iperf's client): active open, segmentation,
//! the send loop, loss detection and recovery, the retransmission and persist timers.
//!
//! Parts, each separate (docs/design.md; style.md habit 3):
//! * window growth and reduction: the [`CongestionControl`] object (crate `tcplab-cc`);
//! * loss detection and what to resend: [`Scoreboard`] (RFC 6675) — NewReno (RFC 6582) when SACK
//!   is off or not negotiated;
//! * RTT and RTO: [`RttEstimator`] (RFC 6298); delivery rate: `RateSampler`.
//!
//! Sequence numbers are kept as 64-bit offsets from the first data byte and converted to 32-bit
//! wire numbers (ISN + 1 + offset, wrapping) only when a segment is built, so transfers beyond
//! 4 GiB never compare wrapped numbers.

use super::config::{CwndUnitCfg, TcpConfig};
use super::recovery::{AckInfo, Mode, Recovery};
use super::rtt::{BsdTimer, RttEstimator};
use super::scoreboard::{AckResult, Scoreboard, LOST};
use crate::endpoint::Cx;
use crate::packet::{self, flags, opts, Packet, Proto, TcpHdr};
use crate::time::Nanos;
use tcplab_cc::{AckEvent, CongestionControl, CongestionEvent, RtoEvent, SentEvent};

/// Cumulative sender counters (web100 / TCP_INFO in spirit).
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub bytes_sent: u64,
    /// Retransmitted segments (web100 SegsRetrans).
    pub retransmits: u64,
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
}

/// What the undo of a spurious reduction needs (knob `undo`; Linux `undo_marker`,
/// `prior_cwnd`, `prior_ssthresh`, `retrans_stamp`, `undo_retrans`).
#[derive(Clone, Copy, Debug)]
struct Undo {
    /// snd_una when the episode began; None outside an episode.
    marker: Option<u64>,
    prior_cwnd: u64,
    prior_ssthresh: u64,
    /// Timestamp value of the episode's first retransmission.
    retrans_stamp: Option<u32>,
    /// Retransmissions not yet disowned by a D-SACK; -1 before the first (Linux starts it at
    /// -1 so that an episode with no retransmission cannot look fully D-SACKed).
    retrans: i64,
}

/// FreeBSD "bad retransmit" state (knob `undo_bad_rexmt`): the window before the first timeout
/// of an episode and until when an ACK proves that timeout spurious (`t_badrxtwin`).
#[derive(Clone, Copy, Debug)]
struct BadRexmt {
    until: Nanos,
    prior_cwnd: u64,
    prior_ssthresh: u64,
    prior_recover: Option<u64>,
}

impl Default for Undo {
    fn default() -> Self {
        Undo {
            marker: None,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            retrans_stamp: None,
            retrans: -1,
        }
    }
}

pub struct TcpSender {
    pub spec: FlowSpec,
    cfg: TcpConfig,
    state: State,
    // Negotiated.
    /// Payload bytes per full segment (MSS minus the timestamp option when on).
    pub smss: u32,
    ts_on: bool,
    sack_on: bool,
    /// Shift applied to windows the peer advertises.
    snd_wscale: u8,
    /// Shift we announce.
    rcv_wscale: u8,
    // Sequence state as offsets from the first data byte.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Offset where the application's data ends (closing or sized), if known.
    app_end: Option<u64>,
    fin_sent: bool,
    fin_acked: bool,
    /// Peer's receive window in bytes.
    pub rwnd: u64,
    last_wnd_raw: u16,
    dupacks: u32,
    // Recovery.
    /// Loss-recovery part (RFC 6675, NewReno, PRR, rate-halving).
    rec: Recovery,
    /// Last recovery point ("recover", RFC 6582 §3.2), guarding NewReno re-entry.
    recover: Option<u64>,
    /// RACK-TLP (RFC 8985): send time and RTT of the most recently sent delivered segment,
    /// the reordering timer and the probe timeout.
    rack_xmit: Nanos,
    rack_end: u64,
    rack_rtt: Nanos,
    rack_deadline: Option<Nanos>,
    tlp_deadline: Option<Nanos>,
    tlp_out: bool,
    /// After an RTO, until this offset is acknowledged (Linux "Loss" state; RFC 6582 recover).
    loss_point: Option<u64>,
    /// Local congestion (knob `local_congestion_cwr`): the CWR state lasts until this offset
    /// (Linux `high_seq`) is acknowledged.
    cwr_point: Option<u64>,
    /// Undo (knob `undo`): the state saved when a recovery or loss episode began.
    undo: Undo,
    /// Knob `undo_bad_rexmt`: set by the first timeout of an episode.
    bad_rexmt: Option<BadRexmt>,
    /// The fast retransmit of the recovery just entered has not left yet: it goes out whatever
    /// the window (RFC 5681 §3.2 step 2, RFC 6675 §5 step 4.3).
    fast_rexmit_due: bool,
    /// Knob `frto`: F-RTO (RFC 5682) is deciding whether the last timeout was spurious;
    /// `high_seq` is snd_nxt when the timeout fired or when new data was last released.
    frto: Option<u64>,
    /// F-RTO step 2b: the ACK being processed releases new data instead of retransmissions.
    frto_send_new: bool,
    pub sb: Scoreboard,
    pub rtt: RttEstimator,
    pub cc: Box<dyn CongestionControl>,
    // Timers.
    rto_deadline: Option<Nanos>,
    persist_deadline: Option<Nanos>,
    persist_backoff: u32,
    pace_next: Nanos,
    /// The send loop last stopped because of pacing (so `pace_next` is a wake-up time).
    pace_blocked: bool,
    nic_wake: Option<Nanos>,
    syn_sent_at: Nanos,
    syn_tries: u32,
    ts_recent: u32,
    last_send: Nanos,
    cwnd_limited: bool,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(spec: FlowSpec, cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> Self {
        let rtt = RttEstimator::with_bsd(
            cfg.initial_rto,
            cfg.min_rto,
            cfg.max_rto,
            cfg.clock_granularity,
            cfg.rto_min_on_variance,
            BsdTimer {
                slop: cfg.rto_slop,
                tick: cfg.timer_tick,
                backoff_unclamped: cfg.rto_backoff_unclamped,
                forget_after: cfg.rtt_forget_after_backoffs,
            },
        );
        let dupthresh = cfg.dupthresh;
        TcpSender {
            state: State::Idle,
            smss: 0,
            ts_on: false,
            sack_on: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            snd_una: 0,
            snd_nxt: 0,
            app_end: spec.bytes,
            fin_sent: false,
            fin_acked: false,
            rwnd: 0,
            last_wnd_raw: 0,
            dupacks: 0,
            rec: Recovery::new(Mode::select(cfg.recovery, false), 0, dupthresh),
            recover: None,
            rack_xmit: 0,
            rack_end: 0,
            rack_rtt: 0,
            rack_deadline: None,
            tlp_deadline: None,
            tlp_out: false,
            loss_point: None,
            cwr_point: None,
            undo: Undo::default(),
            bad_rexmt: None,
            fast_rexmit_due: false,
            frto: None,
            frto_send_new: false,
            sb: Scoreboard::new(dupthresh),
            rtt,
            cc,
            rto_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            pace_next: 0,
            pace_blocked: false,
            nic_wake: None,
            syn_sent_at: 0,
            syn_tries: 0,
            ts_recent: 0,
            last_send: 0,
            cwnd_limited: false,
            stats: SenderStats::default(),
            spec,
            cfg,
        }
    }

    /// Our advertised MSS: configured or first-hop MTU − 40 (RFC 9293 §3.7.1).
    fn own_mss(&self) -> u32 {
        if self.cfg.mss > 0 {
            self.cfg.mss
        } else {
            self.spec.mtu - packet::IPV4_HEADER - packet::TCP_HEADER
        }
    }

    #[inline]
    fn wire_seq(&self, off: u64) -> u32 {
        self.spec.isn.wrapping_add(1).wrapping_add(off as u32)
    }

    /// Unwrap a 32-bit sequence number to an offset, choosing the one nearest `near`.
    #[inline]
    fn unwrap_seq(&self, wire: u32, near: u64) -> i64 {
        let d = wire.wrapping_sub(self.wire_seq(near)) as i32 as i64;
        near as i64 + d
    }

    #[inline]
    fn ts_now(&self, now: Nanos) -> u32 {
        // RFC 7323 §5.4: a timestamp clock ticking at the stack's granularity.
        (now / self.cfg.clock_granularity.max(1)) as u32
    }

    /// Whether the sender has finished (all data and FIN acknowledged, or it gave up).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done | State::Failed)
    }

    pub fn established(&self) -> bool {
        matches!(self.state, State::Established | State::Done)
    }

    pub fn in_recovery(&self) -> bool {
        self.rec.active
    }

    /// Congestion window in bytes as the stack uses it now (NewReno inflation included).
    pub fn cwnd(&self) -> u64 {
        if self.rec.active && !self.cc.governs_recovery() {
            self.rec.window(self.cc.cwnd())
        } else {
            self.cc.cwnd()
        }
    }

    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// Earliest time this endpoint wants `on_timer` (smoltcp's `poll_at`).
    pub fn poll_at(&self) -> Option<Nanos> {
        let mut t = None;
        let mut min = |x: Option<Nanos>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |y: Nanos| y.min(x)));
            }
        };
        match self.state {
            State::Idle => min(Some(self.spec.start)),
            State::Done | State::Failed => return None,
            _ => {
                min(self.rto_deadline);
                min(self.persist_deadline);
                min(self.rack_deadline);
                min(self.tlp_deadline);
                min(self.nic_wake);
                if self.state == State::Established && self.app_end.is_none() {
                    min(self.spec.stop);
                }
                if self.pace_blocked {
                    min(Some(self.pace_next));
                }
            }
        }
        t
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
            State::Done | State::Failed => return,
            _ => {}
        }
        if let Some(stop) = self.spec.stop {
            if now >= stop && self.app_end.is_none() && self.state == State::Established {
                // iperf -t: the application stops writing; what was not yet sent is discarded.
                self.app_end = Some(self.snd_nxt);
            }
        }
        if self.nic_wake.is_some_and(|t| now >= t) {
            self.nic_wake = None;
        }
        if self.rto_deadline.is_some_and(|t| now >= t) {
            self.rto_deadline = None;
            self.on_rto(cx);
        }
        if self.persist_deadline.is_some_and(|t| now >= t) {
            self.persist_deadline = None;
            self.send_window_probe(cx);
        }
        if self.rack_deadline.is_some_and(|t| now >= t) {
            self.rack_deadline = None;
            let lost = self.rack_detect(now);
            if lost > 0 && !self.rec.active && self.loss_point.is_none() {
                self.enter_recovery(now, lost, 0);
            }
        }
        if self.tlp_deadline.is_some_and(|t| now >= t) {
            self.tlp_deadline = None;
            self.send_tail_probe(cx);
        }
        if self.state == State::Established {
            self.try_send(cx);
        }
    }

    // ---- Connection establishment (RFC 9293 §3.5) ----

    fn send_syn(&mut self, cx: &mut Cx) {
        let now = cx.now;
        self.state = State::SynSent;
        if self.syn_tries > 0 {
            self.stats.syn_retransmits += 1;
        }
        self.syn_tries += 1;
        self.syn_sent_at = now;
        // Window scale: the smallest shift that lets the receive buffer be advertised (RFC 7323 §2.3).
        self.rcv_wscale = if self.cfg.window_scaling {
            wscale_for(self.cfg.rcvbuf)
        } else {
            0
        };
        let mut o = opts::MSS;
        if self.cfg.window_scaling {
            o |= opts::WSCALE;
        }
        if self.cfg.sack {
            o |= opts::SACK_PERM;
        }
        if self.cfg.timestamps {
            o |= opts::TS;
        }
        let hdr = TcpHdr {
            seq: self.spec.isn,
            ack: 0,
            flags: flags::SYN,
            opts: o,
            // The window in a SYN is never scaled (RFC 7323 §2.2).
            wnd: self.cfg.rcvbuf.min(u16::MAX as u64) as u16,
            mss: self.own_mss().min(u16::MAX as u32) as u16,
            wscale: self.rcv_wscale,
            ts_val: self.ts_now(now),
            ..TcpHdr::default()
        };
        let wire = packet::IPV4_HEADER + packet::TCP_HEADER + packet::SYN_OPTIONS_LEN;
        self.emit(cx, hdr, 0, wire);
        // SYN retransmission with exponential backoff from the initial RTO (RFC 6298 §5.7),
        // after `syn_linear_timeouts` retries without backoff (Linux; ip-sysctl.rst's example:
        // SYN timeouts 1, 1, 1, 1, 1, 2, 4 s with the default 4).
        let doublings = (self.syn_tries - 1).saturating_sub(self.cfg.syn_linear_timeouts);
        let rto = self.cfg.initial_rto.saturating_mul(1 << doublings.min(20));
        self.rto_deadline = Some(now + rto.min(self.cfg.max_rto));
    }

    fn on_syn_ack(&mut self, p: &Packet, cx: &mut Cx) {
        let now = cx.now;
        let h = &p.tcp;
        if h.ack != self.spec.isn.wrapping_add(1) {
            return;
        }
        let peer_mss = if h.opts & opts::MSS != 0 {
            h.mss as u32
        } else {
            536
        };
        self.ts_on = self.cfg.timestamps && h.opts & opts::TS != 0;
        self.sack_on = self.cfg.sack && h.opts & opts::SACK_PERM != 0;
        let ws_on = self.cfg.window_scaling && h.opts & opts::WSCALE != 0;
        self.snd_wscale = if ws_on { h.wscale.min(14) } else { 0 };
        if !ws_on {
            self.rcv_wscale = 0;
        }
        let mss = self.own_mss().min(peer_mss);
        self.smss = mss - if self.ts_on { packet::TS_OPTION_LEN } else { 0 };
        self.rec = Recovery::new(
            Mode::select(self.cfg.recovery, self.sack_on),
            self.smss,
            self.cfg.dupthresh,
        );
        self.rec.ssrb_on_advance = self.cfg.prr_ssrb_on_advance;
        self.rwnd = h.wnd as u64; // SYN-ACK window is unscaled
        self.last_wnd_raw = h.wnd;
        self.ts_recent = h.ts_val;
        // RTT sample from the handshake unless the SYN was retransmitted (Karn; RFC 6298 §2).
        if self.syn_tries == 1 {
            let r = self.rtt.quantise(self.syn_sent_at, now);
            self.rtt.on_sample(r);
        }
        self.state = State::Established;
        self.rto_deadline = None;
        let iw = self.cfg.initial_window.bytes(self.smss);
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
        match tcplab_cc::build(&self.spec.cca_name, &self.spec.cca_params, init) {
            Ok(cc) => {
                self.cc = cc;
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
        // Third segment of the handshake: a pure ACK (data follows in try_send).
        self.send_ack(cx);
        self.try_send(cx);
    }

    // ---- Output ----

    fn emit(&mut self, cx: &mut Cx, hdr: TcpHdr, payload: u32, wire_len: u32) {
        let pkt = Packet {
            ep: self.spec.peer,
            flow: self.spec.flow,
            src: self.spec.src,
            dst: self.spec.dst,
            proto: Proto::Tcp,
            wire_len,
            payload,
            udp_seq: 0,
            tcp: hdr,
        };
        cx.send(pkt);
    }

    fn data_hdr(&self, now: Nanos, off: u64, fl: u8) -> TcpHdr {
        TcpHdr {
            seq: self.wire_seq(off),
            ack: 1, // the peer's ISN is not tracked beyond the handshake; the receiver ignores it
            flags: fl | flags::ACK,
            opts: if self.ts_on { opts::TS } else { 0 },
            wnd: (self.cfg.rcvbuf >> self.rcv_wscale).min(u16::MAX as u64) as u16,
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

    fn send_segment(&mut self, cx: &mut Cx, off: u64, len: u32, retransmit: bool) {
        let now = cx.now;
        let hdr = self.data_hdr(now, off, if len > 0 { flags::PSH } else { 0 });
        let wire = self.header_len() + len;
        self.emit(cx, hdr, len, wire);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.rec.on_sent(len);
        if retransmit {
            self.stats.retransmits += 1;
            if self.undo.marker.is_some() {
                // Linux `tcp_retransmit_skb`: the first retransmission's time stamps the
                // episode; `undo_retrans` counts the retransmissions a D-SACK may disown.
                if self.undo.retrans_stamp.is_none() {
                    self.undo.retrans_stamp = Some(hdr.ts_val);
                }
                self.undo.retrans = self.undo.retrans.max(0) + 1;
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
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        // Pacing: the next departure is one segment's payload at the pacing rate later (rates,
        // like delivery-rate samples, count payload bytes, as Linux's do).
        if let Some(rate) = self.pacing_rate() {
            if let Some(gap) = (len as u64 * 8 * 1_000_000_000).checked_div(rate) {
                self.pace_next = now + gap;
            }
        }
    }

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

    /// The window the send loop may fill now.
    fn send_window(&self) -> u64 {
        self.cwnd()
    }

    /// Limited transmit (RFC 3042 §2): on each of the first two duplicate ACKs, new data may go
    /// out if the outstanding data (FlightSize, snd_nxt − snd_una) stays within cwnd plus one
    /// segment per duplicate ACK so far — one new segment per duplicate ACK. Where the pipe
    /// already leaves out what the duplicate ACK SACKed (RFC 6675, Linux's in-flight count in
    /// the Disorder state), the pipe rule releases that same segment and this adds nothing;
    /// without SACK (FlightSize unchanged by a duplicate ACK) this is what releases it. FreeBSD
    /// states it the same way in FlightSize (`snd_cwnd = snd_nxt − snd_una + t_dupacks·maxseg`).
    /// (Measured on this machine's kernel, scripts/linux-6/limited-transmit.pkt: one segment
    /// per duplicate ACK; the model used to add this allowance on top of the SACK pipe and sent
    /// two.)
    fn limited_transmit_allows(&self, len: u64) -> bool {
        self.cfg.limited_transmit
            && !self.rec.active
            && self.loss_point.is_none()
            && self.dupacks > 0
            && self.dupacks < self.cfg.dupthresh
            && (self.snd_nxt - self.snd_una) + len
                <= self.cwnd() + (self.dupacks.min(2) as u64) * self.smss as u64
    }

    fn try_send(&mut self, cx: &mut Cx) {
        let now = cx.now;
        let mut stopped_by_cwnd = false;
        let mut sent_new = false;
        self.pace_blocked = false;
        loop {
            if self.pace_next > now && self.pacing_rate().is_some() {
                self.pace_blocked = true;
                break;
            }
            if !cx.nic_has_room() {
                self.nic_wake = Some(cx.nic_free_at.max(now + 1));
                if self.cfg.local_congestion_cwr && self.would_send() {
                    self.enter_local_cwr(now);
                }
                break;
            }
            let pipe = self.sb.pipe();
            let wnd = self.send_window();
            // NextSeg() rule 1 (RFC 6675 §4): retransmit the first lost segment (not while
            // F-RTO probes with new data, RFC 5682 §2.1 step 2b).
            if self.sb.lost_bytes > self.sb.retrans_bytes && !self.frto_send_new {
                if let Some(i) = self.sb.next_lost() {
                    let len = self.sb.seg(i).len;
                    let forced = std::mem::take(&mut self.fast_rexmit_due);
                    if pipe + len as u64 > wnd && !forced {
                        stopped_by_cwnd = true;
                        break;
                    }
                    let (start, len) = self.sb.on_retransmit(i, now);
                    self.send_segment(cx, start, len, true);
                    continue;
                }
            }
            // NextSeg() rule 2: new data.
            let app_room = self
                .app_end
                .map_or(u64::MAX, |e| e.saturating_sub(self.snd_nxt));
            // Quirk (Windows XP, Jansen & McGregor 2005): during loss periods — from the first
            // duplicate ACK until recovery ends — new data goes out beyond the receiver's window;
            // what arrives before the hole is repaired is discarded and sent again later.
            let loss_period = self.rec.active || self.dupacks > 0;
            let rwnd = if self.cfg.quirk_ignore_rwnd_in_recovery && loss_period {
                u64::MAX / 4
            } else {
                self.rwnd
            };
            let rwnd_room = (self.snd_una + rwnd).saturating_sub(self.snd_nxt);
            let buf_room = (self.snd_una + self.cfg.sndbuf).saturating_sub(self.snd_nxt);
            let len = (self.smss as u64)
                .min(app_room)
                .min(rwnd_room)
                .min(buf_room);
            // Sender SWS avoidance (RFC 9293 §3.8.6.2.1): no small segment unless it ends the data.
            if len == 0 || (len < self.smss as u64 && len < app_room) {
                if app_room > 0 && rwnd_room < self.smss as u64 && self.sb.is_empty() {
                    // A zero (or sub-MSS) window with nothing outstanding: the persist timer
                    // probes it (RFC 9293 §3.8.6.1) and doubles as the SWS override timer.
                    if self.persist_deadline.is_none() {
                        self.persist_deadline = Some(now + self.persist_interval());
                    }
                }
                if app_room > 0 && len == 0 {
                    self.sb.rate.mark_app_limited(pipe);
                }
                break;
            }
            if pipe + len > wnd && !self.limited_transmit_allows(len) {
                stopped_by_cwnd = true;
                break;
            }
            self.maybe_idle_restart(now);
            let off = self.snd_nxt;
            if off + len > self.snd_una + self.rwnd {
                self.stats.sent_beyond_rwnd += 1;
            }
            self.sb.on_send_new(off, len as u32, now);
            self.snd_nxt += len;
            self.send_segment(cx, off, len as u32, false);
            sent_new = true;
        }
        if sent_new {
            // RFC 8985 §7.2: the PTO is (re)scheduled when new data is sent, not only on ACKs
            // (Linux `tcp_schedule_loss_probe` from `tcp_write_xmit`); measured on this
            // machine's kernel: scripts/linux-6/iw10-tlp.pkt probes 2·SRTT after the IW
            // although no ACK came.
            self.arm_tlp(now);
        }
        self.frto_send_new = false;
        // The fast retransmit goes out in the send opportunity right after recovery starts or
        // waits for the window like any other (a stale flag would send it beyond the window
        // much later).
        self.fast_rexmit_due = false;
        self.cwnd_limited = stopped_by_cwnd;
        self.maybe_send_fin(cx);
    }

    /// Whether `try_send` would put a segment on the wire now if the host's queue had room:
    /// a lost segment to resend, or new data, within the send window.
    fn would_send(&self) -> bool {
        let fits = self.sb.pipe() + self.smss as u64 <= self.send_window();
        if self.sb.lost_bytes > self.sb.retrans_bytes {
            return fits;
        }
        let fits = fits || self.limited_transmit_allows(self.smss as u64);
        let app_room = self
            .app_end
            .map_or(u64::MAX, |e| e.saturating_sub(self.snd_nxt));
        let rwnd_room = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
        let buf_room = (self.snd_una + self.cfg.sndbuf).saturating_sub(self.snd_nxt);
        fits && app_room > 0 && rwnd_room > 0 && buf_room > 0
    }

    /// Local congestion: the host's transmit queue refused a segment. Linux before TCP small
    /// queues (3.6) got NET_XMIT_DROP from the qdisc in `tcp_transmit_skb` and called
    /// `tcp_enter_cwr` (net/ipv4/tcp_output.c, 2.4 and 2.6): ssthresh from the congestion
    /// control's `ssthresh()`, cwnd = min(cwnd, in flight + 1), CWR state until everything sent
    /// so far is acknowledged (`high_seq`); the segment was not lost and is sent when the queue
    /// has room. Approximation: cwnd goes to min(ssthresh, in flight + 1 segment) at once,
    /// where Linux lowers it by one segment every second ACK (`tcp_cwnd_down`) to the same end.
    fn enter_local_cwr(&mut self, now: Nanos) {
        if self.rec.active || self.loss_point.is_some() || self.cwr_point.is_some() {
            return; // Linux enters CWR only from the Open and Disorder states
        }
        let in_flight = self.sb.pipe();
        self.cc.on_congestion_event(&CongestionEvent {
            now,
            in_flight: self.sb.out_bytes,
            lost_bytes: 0,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            mss: self.smss,
        });
        if !self.cc.governs_recovery() {
            let w = self
                .cc
                .ssthresh()
                .min(in_flight + self.smss as u64)
                .max(self.smss as u64);
            self.cc.set_cwnd(w);
        }
        self.stats.local_cwr += 1;
        self.cwr_point = Some(self.snd_nxt);
    }

    fn maybe_idle_restart(&mut self, now: Nanos) {
        // RFC 5681 §4.1: after an idle period longer than the RTO, restart from the restart window.
        if self.sb.is_empty()
            && now.saturating_sub(self.last_send) > self.rtt.rto()
            && self.snd_nxt > 0
        {
            let rw = self.cfg.initial_window.bytes(self.smss);
            self.cc.on_idle_restart(now, rw);
        }
    }

    fn maybe_send_fin(&mut self, cx: &mut Cx) {
        if let Some(end) = self.app_end {
            if !self.fin_sent && self.snd_nxt == end && self.snd_una == end {
                // FIN after the data is acknowledged (a simplification: real stacks piggyback it).
                self.fin_sent = true;
                let hdr = self.data_hdr(cx.now, end, flags::FIN);
                let wire = self.header_len();
                self.emit(cx, hdr, 0, wire);
                if self.rto_deadline.is_none() {
                    self.rto_deadline = Some(cx.now + self.rtt.rto());
                }
            }
        }
    }

    fn persist_interval(&self) -> Nanos {
        // Persist timer: RTO-based with exponential backoff, bounded by the maximum RTO.
        let base = self.rtt.base_rto();
        base.saturating_mul(1 << self.persist_backoff.min(20))
            .min(self.cfg.max_rto)
    }

    fn send_window_probe(&mut self, cx: &mut Cx) {
        if !self.sb.is_empty() {
            self.persist_backoff = 0;
            return;
        }
        let app_room = self
            .app_end
            .map_or(u64::MAX, |e| e.saturating_sub(self.snd_nxt));
        let rwnd_room = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
        if rwnd_room > 0 && app_room > 0 {
            // A window smaller than one segment: send what fits (the SWS override, RFC 9293
            // §3.8.6.2.1; Linux `tcp_write_wakeup` does the same).
            let len = rwnd_room.min(app_room).min(self.smss as u64) as u32;
            let off = self.snd_nxt;
            self.sb.on_send_new(off, len, cx.now);
            self.snd_nxt += len as u64;
            self.send_segment(cx, off, len, false);
            return;
        }
        // A segment with an old sequence number elicits an ACK with the current window
        // (RFC 9293 §3.10.7.4; the form Linux uses for zero-window probes).
        self.stats.zero_window_probes += 1;
        let hdr = self.data_hdr(cx.now, self.snd_una.wrapping_sub(1), 0);
        let wire = self.header_len();
        self.emit(cx, hdr, 0, wire);
        self.persist_backoff += 1;
        self.persist_deadline = Some(cx.now + self.persist_interval());
    }

    // ---- Input ----

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
                self.on_ack(p, cx);
                if self.state == State::Established {
                    self.try_send(cx);
                }
            }
            _ => {}
        }
    }

    fn on_ack(&mut self, p: &Packet, cx: &mut Cx) {
        let now = cx.now;
        let h = &p.tcp;
        if h.flags & flags::ACK == 0 {
            return;
        }
        let data_end = self.snd_nxt;
        let fin_off = if self.fin_sent { 1 } else { 0 };
        let ack = self.unwrap_seq(h.ack, self.snd_una);
        if ack < self.snd_una as i64 || ack > (data_end + fin_off) as i64 {
            return; // old or acknowledges unsent data (RFC 9293 §3.10.7.4)
        }
        let ack = ack as u64;
        if self.fin_sent && ack == data_end + 1 {
            self.fin_acked = true;
        }
        let ack_data = ack.min(data_end);
        let prior_una = self.snd_una;
        let prior_in_flight = self.sb.pipe();
        let new_wnd = (h.wnd as u64) << self.snd_wscale;
        let wnd_changed = h.wnd != self.last_wnd_raw;
        self.last_wnd_raw = h.wnd;
        self.rwnd = new_wnd;
        if new_wnd > 0 {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
        if self.ts_on {
            self.ts_recent = h.ts_val;
        }

        self.sb.rate.begin_ack(prior_in_flight);
        let mut res = AckResult::default();
        if ack_data > self.snd_una {
            self.sb.on_cum_ack(ack_data, now, &mut res);
            self.snd_una = ack_data;
        }
        // A NewReno sender ignores SACK information even when SACK was negotiated (RFC 6582
        // recovery works from duplicate ACKs and the cumulative ACK only); blocks are counted.
        let use_sack = self.sack_on && self.rec.mode != Mode::NewReno;
        if use_sack {
            self.process_sack_blocks(h, now, &mut res);
        } else {
            self.stats.sack_blocks += h.n_sack as u64;
        }
        let advanced = self.snd_una > prior_una;
        if advanced {
            self.try_undo_bad_rexmt(now);
        }

        // RTT sample (RFC 6298 §3 / RFC 7323 §4): from the echoed timestamp of an ACK that
        // advances the left edge, else from the newest never-retransmitted segment acknowledged.
        let mut sample = None;
        if advanced && self.ts_on && h.ts_ecr != 0 {
            let ticks = self.ts_now(now).wrapping_sub(h.ts_ecr) as u64;
            sample = Some(ticks.max(1) * self.cfg.clock_granularity.max(1));
        } else if !self.ts_on && (advanced || res.bytes_sacked > 0) {
            if let Some(x) = res.rtt_xmit {
                sample = Some(self.rtt.quantise(x, now));
            }
        }
        if let Some(r) = sample {
            self.rtt.on_sample(r);
        }

        // Duplicate ACK (RFC 5681 §2; with SACK, RFC 6675 §2 asks for new SACK information).
        let is_dup = !advanced
            && p.payload == 0
            && h.flags & (flags::SYN | flags::FIN) == 0
            && prior_in_flight > 0
            && if use_sack {
                res.new_sack_info
            } else {
                !wnd_changed
            };
        if advanced {
            self.dupacks = 0;
        } else if is_dup {
            self.dupacks += 1;
            self.stats.dupacks += 1;
        }

        // Loss detection from SACK information: RFC 6675 IsLost, or FACK for rate-halving.
        let lost_new = if use_sack {
            if self.rec.mode.uses_fack() {
                self.sb.mark_lost_fack()
            } else {
                self.sb.mark_lost_by_sack()
            }
        } else {
            0
        };

        // RACK (RFC 8985 §6.2): remember the newest delivered transmission, then time-based loss.
        let mut lost_new = lost_new;
        if self.cfg.rack && use_sack {
            if let Some(x) = res.rtt_xmit {
                if (x, res.rtt_end) > (self.rack_xmit, self.rack_end) {
                    self.rack_xmit = x;
                    self.rack_end = res.rtt_end;
                    self.rack_rtt = now.saturating_sub(x);
                }
            }
            lost_new += self.rack_detect(now);
        }
        if advanced {
            self.tlp_out = false;
        }

        if self.undo.marker.is_some() && (advanced || h.n_sack > 0) {
            self.try_undo(h, advanced, now);
        }
        if self.frto.is_some() {
            self.frto_on_ack(advanced, is_dup, &res, now);
        }

        // Leave recovery states whose point is now acknowledged.
        if self.rec.active && self.snd_una >= self.rec.point {
            self.exit_recovery();
        }
        if self.loss_point.is_some_and(|lp| self.snd_una >= lp) {
            self.loss_point = None;
            if !self.rec.active {
                self.undo = Undo::default();
            }
        }
        if self.cwr_point.is_some_and(|p| self.snd_una >= p) {
            self.cwr_point = None;
        }

        // RFC 6937 DeliveredData: Δsnd.una + ΔSACKed, where ΔSACKed nets out data SACKed
        // earlier and acknowledged cumulatively now (counted when it was SACKed).
        let delivered = res.bytes_acked + res.bytes_sacked - res.bytes_acked_sacked;
        if !self.rec.active && self.loss_point.is_none() {
            let head_lost = self.sb.front().is_some_and(|s| s.flags & LOST != 0);
            let enter = if self.rec.mode != Mode::NewReno {
                // RFC 6675 §5 (a) DupAcks ≥ DupThresh or (b) IsLost(HighACK + 1) (FACK alike).
                self.dupacks >= self.cfg.dupthresh || (head_lost && lost_new > 0)
            } else {
                // RFC 6582 §3.2 step 1: only if the ACK covers more than `recover`.
                self.dupacks == self.cfg.dupthresh && self.recover.is_none_or(|r| self.snd_una > r)
            };
            if enter && !self.sb.is_empty() {
                self.enter_recovery(now, lost_new, delivered);
            }
        } else if self.rec.active {
            let act = self.rec.on_ack(&AckInfo {
                advanced,
                newly_lost: lost_new > 0,
                is_dup,
                bytes_acked: res.bytes_acked,
                delivered,
                pipe: self.sb.pipe(),
                ssthresh: self.cc.ssthresh(),
                snd_una: self.snd_una,
            });
            if act.retransmit_head {
                self.sb.mark_head_lost();
            }
            if act.restart_rto {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        }

        // Inform the congestion controller.
        if advanced || res.bytes_sacked > 0 || (self.rec.active && is_dup) {
            let rate = self.sb.rate.end_ack(self.rtt.min_rtt);
            let in_flight = self.sb.pipe();
            let cwnd = self.cc.cwnd();
            let ev = AckEvent {
                now,
                bytes_acked: res.bytes_acked,
                packets_acked: res.packets_acked,
                packets_delivered: res.packets_delivered,
                bytes_sacked: res.bytes_sacked,
                prior_in_flight,
                in_flight,
                rtt_sample: sample,
                srtt: self.rtt.srtt,
                min_rtt: self.rtt.min_rtt,
                in_recovery: self.rec.active,
                app_limited: !(self.cwnd_limited || prior_in_flight * 2 >= cwnd),
                rate,
                mss: self.smss,
            };
            self.cc.on_ack(&ev);
        }

        // Retransmission timer (RFC 6298 §5.2–5.3).
        if advanced {
            if self.sb.is_empty() && (!self.fin_sent || self.fin_acked) {
                self.rto_deadline = None;
            } else if self.rec.restart_rto_on_ack() {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        }
        self.arm_tlp(now);
        if self.fin_acked {
            self.state = State::Done;
            self.rto_deadline = None;
        }
    }

    /// Run RACK loss detection now; arms the reordering timer. Returns bytes newly marked lost.
    fn rack_detect(&mut self, now: Nanos) -> u64 {
        if self.rack_xmit == 0 && self.rack_rtt == 0 {
            return 0;
        }
        // reo_wnd = min_RTT/4, at most SRTT (RFC 8985 §6.2; the D-SACK-driven adaptation of
        // the multiplier is not modelled).
        let reo = (self.rtt.min_rtt / 4).min(self.rtt.srtt);
        let o = self
            .sb
            .rack_detect(now, (self.rack_xmit, self.rack_end), self.rack_rtt, reo);
        self.rack_deadline = o.timeout;
        o.newly_lost
    }

    /// Arm the probe timeout (RFC 8985 §7.2): 2·SRTT, plus the worst-case delayed-ACK time when
    /// one segment is in flight, never beyond the RTO.
    fn arm_tlp(&mut self, now: Nanos) {
        if !self.cfg.rack
            || !self.cfg.tlp
            || !self.sack_on
            || self.rec.active
            || self.tlp_out
            || self.sb.is_empty()
        {
            self.tlp_deadline = None;
            return;
        }
        if !self.rtt.has_sample() {
            return;
        }
        let mut pto = 2 * self.rtt.srtt;
        if self.sb.len() == 1 {
            pto += 200_000_000;
        }
        // Never later than the retransmission timer would fire (Linux `tcp_rto_delta_us`).
        let rto_left = self
            .rto_deadline
            .map_or(self.rtt.rto(), |d| d.saturating_sub(now));
        let pto = pto.min(self.rtt.rto()).min(rto_left);
        self.tlp_deadline = Some(now + pto.max(1));
    }

    /// The probe (RFC 8985 §7.3): one new segment if the receiver's window allows, else the last
    /// segment again; either way an ACK with SACK information follows if anything arrives.
    fn send_tail_probe(&mut self, cx: &mut Cx) {
        if self.rec.active || self.sb.is_empty() || self.state != State::Established {
            return;
        }
        self.tlp_out = true;
        self.stats.tlp_probes += 1;
        let app_room = self
            .app_end
            .map_or(u64::MAX, |e| e.saturating_sub(self.snd_nxt));
        let rwnd_room = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
        let len = (self.smss as u64).min(app_room).min(rwnd_room);
        if len == self.smss as u64 || (len > 0 && len == app_room) {
            let off = self.snd_nxt;
            self.sb.on_send_new(off, len as u32, cx.now);
            self.snd_nxt += len;
            self.send_segment(cx, off, len as u32, false);
        } else if let Some((start, len)) = self.sb.on_probe_retransmit(cx.now) {
            self.send_segment(cx, start, len, true);
        }
        // RFC 8985 §7.3: after sending the probe, re-arm the RTO timer (from now), not the PTO.
        // Measured on this machine's kernel: scripts/linux-6/tlp-then-rto.pkt.
        self.rto_deadline = Some(cx.now + self.rtt.rto());
    }

    fn process_sack_blocks(&mut self, h: &TcpHdr, now: Nanos, res: &mut AckResult) {
        for k in 0..h.n_sack as usize {
            let (l, r) = h.sack[k];
            self.stats.sack_blocks += 1;
            let left = self.unwrap_seq(l, self.snd_una);
            let right = self.unwrap_seq(r, self.snd_una);
            // D-SACK (RFC 2883 §4): the first block below the cumulative ACK, or inside the second.
            if k == 0
                && (right <= self.snd_una as i64
                    || (h.n_sack > 1 && {
                        let l2 = self.unwrap_seq(h.sack[1].0, self.snd_una);
                        let r2 = self.unwrap_seq(h.sack[1].1, self.snd_una);
                        left >= l2 && right <= r2
                    }))
            {
                self.stats.dsack_blocks += 1;
                // RFC 3708 §3 / Linux `tcp_check_dsack`: a D-SACK at or above the episode's
                // start reports one retransmission that was not needed.
                if self.undo.marker.is_some_and(|m| right > m as i64) && self.undo.retrans > 0 {
                    self.undo.retrans -= 1;
                }
                continue;
            }
            if right <= left || left < self.snd_una as i64 || right > self.snd_nxt as i64 {
                // A block no correct receiver can send (RFC 2018 §3, §4): ignore and count it.
                self.stats.invalid_sack_blocks += 1;
                continue;
            }
            self.sb.on_sack_block(left as u64, right as u64, now, res);
        }
    }

    fn enter_recovery(&mut self, now: Nanos, lost_new: u64, delivered: u64) {
        self.stats.fast_retransmits += 1;
        let flight = self.sb.out_bytes;
        let prior_cwnd = self.cc.cwnd();
        self.begin_undo();
        self.cc.on_congestion_event(&CongestionEvent {
            now,
            in_flight: flight,
            lost_bytes: lost_new.max(self.smss as u64),
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            mss: self.smss,
        });
        // RFC 6675 §5 (4.3) / RFC 5681 §3.2 step 2: retransmit the first unacknowledged segment,
        // at once: neither rule makes it wait for the window (measured on this machine's kernel,
        // scripts/linux-6/newreno-fast-retransmit.pkt, where limited transmit has left more
        // in flight than the reduced window).
        self.sb.mark_head_lost();
        self.fast_rexmit_due = true;
        let ssthresh = self.cc.ssthresh();
        let set = self.rec.enter(
            self.snd_nxt,
            flight,
            prior_cwnd,
            ssthresh,
            delivered,
            self.sb.pipe(),
        );
        if let Some(w) = set {
            if !self.cc.governs_recovery() {
                self.cc.set_cwnd(w);
            }
        }
    }

    /// Knob `undo`: remember the window before a recovery or loss episode reduces it (Linux
    /// `tcp_init_undo`; a timeout inside an episode keeps the first episode's values, as
    /// `tcp_enter_loss` does).
    fn begin_undo(&mut self) {
        if !self.cfg.undo || self.undo.marker.is_some() {
            return;
        }
        let cwnd = self.cc.cwnd();
        self.undo = Undo {
            marker: Some(self.snd_una),
            prior_cwnd: cwnd,
            // Linux `tcp_current_ssthresh` in the Open state: max(ssthresh, 3/4 cwnd).
            prior_ssthresh: self.cc.ssthresh().max(cwnd / 2 + cwnd / 4),
            retrans_stamp: None,
            retrans: -1,
        };
    }

    /// Knob `undo`: was the episode's reduction spurious? Linux `tcp_may_undo`: every
    /// retransmission was D-SACKed (`undo_retrans` back to 0), or the ACK echoes a timestamp
    /// older than the first retransmission, so an original transmission reached the receiver
    /// (`tcp_packet_delayed`, RFC 3522 §3.2). Then restore cwnd and ssthresh through the
    /// controller's undo hook (Linux `tcp_undo_cwnd_reduction` and the per-CCA `undo_cwnd`),
    /// leave recovery or the loss state, and
    /// stop resending what the timeout marked lost (`tcp_try_undo_loss`). Linux checks at the
    /// recovery point, on partial ACKs and on ACKs in the loss state; this checks the D-SACK
    /// count on every ACK of the episode and the timestamp only on ACKs that advance snd_una:
    /// a duplicate ACK echoes the timestamp of the segment before the hole (RFC 7323 §4.3),
    /// older than any retransmission, and proves nothing.
    fn try_undo(&mut self, h: &TcpHdr, advanced: bool, now: Nanos) {
        let Some(stamp) = self.undo.retrans_stamp else {
            return; // nothing was retransmitted yet
        };
        let delayed =
            advanced && self.ts_on && h.ts_ecr != 0 && (h.ts_ecr.wrapping_sub(stamp) as i32) < 0;
        if !(delayed || self.undo.retrans == 0) {
            return;
        }
        self.undo_now(now);
    }

    /// Undo the current episode's reduction (knob `undo`; see [`TcpSender::try_undo`]).
    fn undo_now(&mut self, now: Nanos) {
        let u = self.undo;
        self.undo = Undo::default();
        self.stats.undos += 1;
        // The controller restores its own state (`on_undo`: CUBIC's W_max, RFC 9438 §4.9;
        // H-TCP's; BBR keeps its cwnd, Linux `bbr_undo_cwnd`), never below the current values
        // (Linux `tcp_undo_cwnd_reduction`: cwnd = max(cwnd, undo_cwnd()), ssthresh likewise).
        let cwnd = u.prior_cwnd.max(self.cc.cwnd());
        let ssthresh = u.prior_ssthresh.max(self.cc.ssthresh());
        self.cc.on_undo(now, cwnd, ssthresh);
        if self.rec.active {
            self.rec.abort();
            self.recover = Some(self.snd_nxt);
        }
        if self.loss_point.take().is_some() {
            self.sb.undo_lost();
        }
        self.dupacks = 0;
    }

    /// Knob `undo_bad_rexmt` (FreeBSD tcp_input.c, "bad retransmit" recovery): an ACK that
    /// advances snd_una while only one timeout has fired (t_rxtshift == 1, no RTT sample since)
    /// and before `t_badrxtwin` acknowledges an original transmission, not the retransmission
    /// sent less than SRTT/2 ago: restore cwnd and ssthresh exactly (`snd_cwnd_prev`,
    /// `snd_ssthresh_prev`) and send on from snd_max instead of going back.
    fn try_undo_bad_rexmt(&mut self, now: Nanos) {
        let Some(b) = self.bad_rexmt.take() else {
            return;
        };
        if self.rtt.backoff != 1 || now >= b.until {
            return;
        }
        self.stats.undos += 1;
        self.cc.on_undo(now, b.prior_cwnd, b.prior_ssthresh);
        if self.loss_point.take().is_some() {
            self.sb.undo_lost();
        }
        self.recover = b.prior_recover; // snd_recover_prev
        self.dupacks = 0;
    }

    fn exit_recovery(&mut self) {
        if self.loss_point.is_none() {
            self.undo = Undo::default(); // the episode ended without an undo
        }
        self.recover = Some(self.rec.point);
        let set = self.rec.exit(self.cc.ssthresh(), self.sb.out_bytes);
        self.cc.on_recovery_exit(0);
        if let Some(w) = set {
            if !self.cc.governs_recovery() {
                self.cc.set_cwnd(w);
            }
        }
    }

    fn on_rto(&mut self, cx: &mut Cx) {
        let now = cx.now;
        if self.state == State::SynSent {
            if self.syn_tries > self.cfg.syn_retries {
                self.state = State::Failed;
                return;
            }
            self.send_syn(cx);
            return;
        }
        if self.sb.is_empty() {
            if self.fin_sent && !self.fin_acked {
                let end = self.app_end.unwrap_or(self.snd_nxt);
                let hdr = self.data_hdr(now, end, flags::FIN);
                let wire = self.header_len();
                self.emit(cx, hdr, 0, wire);
                self.rtt.back_off();
                self.rto_deadline = Some(now + self.rtt.rto());
            }
            return;
        }
        // RFC 6298 §5.4–5.6 and RFC 5681 §3.1: retransmit the earliest segment, back off the timer,
        // reduce the window; every outstanding segment is presumed lost (go-back-N from snd_una).
        self.stats.timeouts += 1;
        self.fast_rexmit_due = false;
        self.begin_undo();
        // FreeBSD tcp_timer_rexmt: on the first timeout (t_rxtshift becomes 1) remember the
        // window and open the bad-retransmit window, SRTT/2 long (t_srtt >> (TCP_RTT_SHIFT + 1)).
        // Approximation: FreeBSD re-enters a fast recovery the timeout interrupted
        // (TF_WASFRECOVERY); here the undo restores the window and recovery point only.
        self.bad_rexmt = (self.cfg.undo_bad_rexmt && self.rtt.backoff == 0).then(|| BadRexmt {
            until: now + self.rtt.srtt / 2,
            prior_cwnd: self.cc.cwnd(),
            prior_ssthresh: self.cc.ssthresh(),
            prior_recover: self.recover,
        });
        self.cc.on_rto(&RtoEvent {
            now,
            in_flight: self.sb.out_bytes,
            backoff_count: self.rtt.backoff + 1,
            mss: self.smss,
        });
        let kept = self.sack_on && self.cfg.rto_keeps_sack && self.sb.on_rto_keep_sacked();
        if !kept {
            // SACK marks are forgotten; what they counted as delivered stays counted
            // (scoreboard COUNTED).
            self.sb.on_rto();
        }
        self.rtt.back_off();
        let was_recovery = self.rec.active;
        if self.rec.active {
            self.rec.abort();
        }
        // F-RTO (RFC 5682; Linux `tcp_enter_loss`: on every timeout except the first one of a
        // fast recovery, whose losses are known).
        self.frto =
            (self.cfg.frto && !(was_recovery && self.rtt.backoff == 1)).then_some(self.snd_nxt);
        self.loss_point = Some(self.snd_nxt);
        self.recover = Some(self.snd_nxt);
        self.dupacks = 0;
        self.rto_deadline = Some(now + self.rtt.rto());
        self.try_send(cx);
    }

    /// F-RTO on an ACK after a timeout (knob `frto`; RFC 5682 §3, the SACK-enhanced algorithm,
    /// in the form Linux uses, net/ipv4/tcp_input.c `tcp_process_loss`, read for the facts):
    /// * an ACK that acknowledges or SACKs data never retransmitted shows that the timeout was
    ///   spurious (step 3b): the reduction is undone (needs knob `undo`, which keeps the window
    ///   from before the timeout) and the loss state ends;
    /// * after new data was released, a SACK or duplicate ACK shows the loss was real (step
    ///   3a): F-RTO stops and the timeout's retransmissions go on;
    /// * the first ACK that advances snd_una (step 2b) releases new, never-sent data instead
    ///   of retransmissions, if there is any and the peer's window allows; else F-RTO stops.
    fn frto_on_ack(&mut self, advanced: bool, dup: bool, res: &AckResult, now: Nanos) {
        let Some(high_seq) = self.frto else {
            return;
        };
        if self.loss_point.is_none() {
            self.frto = None; // the episode ended (or was undone)
            return;
        }
        if res.rtt_xmit.is_some() {
            // Never-retransmitted data was (S)ACKed.
            self.frto = None;
            if self.undo.marker.is_some() {
                self.undo_now(now);
            }
            return;
        }
        if self.snd_nxt > high_seq {
            if res.bytes_sacked > 0 || dup {
                self.frto = None; // step 3a: the loss was real
            }
        } else if advanced && self.loss_point.is_some_and(|lp| self.snd_una < lp) {
            let app_room = self.app_end.is_none_or(|e| e > self.snd_nxt);
            let rwnd_room = self.snd_una + self.rwnd > self.snd_nxt;
            if app_room && rwnd_room {
                self.frto = Some(self.snd_nxt);
                self.frto_send_new = true;
            } else {
                self.frto = None;
            }
        }
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
        (self.rcv_wscale, self.snd_wscale)
    }

    pub fn sack_enabled(&self) -> bool {
        self.sack_on
    }

    pub fn cwnd_unit_packets(&self) -> bool {
        self.cfg.cwnd_unit == CwndUnitCfg::Packets
    }

    /// Read-only, for behaviour scripts: the state as Linux's `tcpi_ca_state` names it
    /// (include/uapi/linux/tcp.h `enum tcp_ca_state`): 4 Loss after an RTO until its recovery
    /// point is acknowledged, 3 Recovery, 2 CWR, 1 Disorder (duplicate ACKs or SACKed data
    /// seen, not yet in recovery), 0 Open.
    pub fn ca_state(&self) -> u8 {
        if self.loss_point.is_some() {
            4
        } else if self.rec.active {
            3
        } else if self.cwr_point.is_some() {
            2
        } else if self.dupacks > 0
            || self
                .sb
                .iter()
                .any(|s| s.flags & super::scoreboard::SACKED != 0)
        {
            1
        } else {
            0
        }
    }
}

/// Smallest window-scale shift with `buf >> shift ≤ 65535`, at most 14 (RFC 7323 §2.3).
pub fn wscale_for(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buf >> s) > u16::MAX as u64 {
        s += 1;
    }
    s
}
