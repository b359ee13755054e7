//! Send scheduling, sans I/O: one step of the send loop — the pacing and host-queue gates
//! ([`gate`]), then RFC 6675 §4 NextSeg ([`next_segment`]): a lost segment first (rule 1),
//! else new data (rule 2) within the congestion window or by limited transmit. For new data: how much room
//! the application, the peer's window and the send buffer leave ([`Room`]), the size of the
//! next segment with sender-side silly window avoidance (RFC 9293 §3.8.6.2.1, [`next_new`]),
//! and limited transmit (RFC 3042 §2, [`limited_transmit_allows`]).
//!
//! Reads the [`Scoreboard`] (and moves its lost-segment cursor); sends nothing. The sending,
//! the timers a step arms and the state it changes are [`super::TcpSender`]'s send loop.

use crate::tcp::config::LossDupackCfg;
use crate::tcp::scoreboard::Scoreboard;

/// Room for new data beyond snd_nxt, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// Data the application still has (u64::MAX while it keeps writing).
    pub app: u64,
    /// Left by the peer's advertised window.
    pub rwnd: u64,
    /// Left by the send buffer (unacknowledged data counts against it).
    pub buf: u64,
}

impl Room {
    pub fn new(snd_una: u64, snd_nxt: u64, app_end: Option<u64>, rwnd: u64, sndbuf: u64) -> Room {
        Room {
            app: app_end.map_or(u64::MAX, |e| e.saturating_sub(snd_nxt)),
            rwnd: (snd_una + rwnd).saturating_sub(snd_nxt),
            buf: (snd_una + sndbuf).saturating_sub(snd_nxt),
        }
    }

    /// Some new data could go (before the congestion window and SWS avoidance are applied).
    pub fn any(&self) -> bool {
        self.app > 0 && self.rwnd > 0 && self.buf > 0
    }
}

/// The next new segment, or why none goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewData {
    /// Send this many bytes.
    Segment(u64),
    /// Nothing now.
    Hold {
        /// A zero (or sub-MSS) window with nothing outstanding: the persist timer must probe it
        /// (RFC 9293 §3.8.6.1); it doubles as the SWS override timer.
        persist: bool,
        /// The application has data but no window or buffer lets any go (the rate sampler marks
        /// the flow application-limited).
        app_limited: bool,
    },
}

/// NextSeg() rule 2 (RFC 6675 §4): new data, one full segment at most. Sender SWS avoidance
/// (RFC 9293 §3.8.6.2.1): no small segment unless it ends the data.
pub fn next_new(smss: u32, room: Room, nothing_outstanding: bool) -> NewData {
    let smss = smss as u64;
    let len = smss.min(room.app).min(room.rwnd).min(room.buf);
    if len == 0 || (len < smss && len < room.app) {
        return NewData::Hold {
            persist: room.app > 0 && room.rwnd < smss && nothing_outstanding,
            app_limited: room.app > 0 && len == 0,
        };
    }
    NewData::Segment(len)
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
///
/// `open`: neither in recovery nor in the loss state after a timeout.
#[allow(clippy::too_many_arguments)]
pub fn limited_transmit_allows(
    enabled: bool,
    open: bool,
    dupacks: u32,
    dupthresh: u32,
    flight_size: u64,
    len: u64,
    cwnd: u64,
    smss: u32,
) -> bool {
    enabled
        && open
        && dupacks > 0
        && dupacks < dupthresh
        && flight_size + len <= cwnd + (dupacks.min(2) as u64) * smss as u64
}

/// [`SendState::left_by_dupacks`]: in the loss state after a timeout on a connection without
/// SACK (`nosack_loss`), one segment per duplicate ACK counted with knob `loss_dupack_credit =
/// "per-dupack"` (Linux, sources at [`SendState::pipe`]) and nothing with the others ("none";
/// "rfc3042-flight" and "rfc3042-cwnd" let segments out through their own window,
/// [`loss_limited_transmit_window`]); `reno_sacked` (Linux's PRR without SACK, 0 in other
/// modes) otherwise.
///
/// "none", as OpenBSD 3.5 (read for the facts, nothing copied; tcp_input.c rev. 1.158.2.3, the
/// OPENBSD_3_5 branch as merged into MirOS, github:roytam1/mirbsd-cvs
/// src/sys/netinet/tcp_input.c; tcp_timer.c rev. 1.34): `tcp_timer_rexmt` sets snd_nxt =
/// snd_una, snd_cwnd = t_maxseg, t_dupacks = 0 and snd_last = snd_max; `tcp_input` does nothing
/// on the first and second duplicate ACK (no RFC 3042), and at the third, while th_ack <
/// snd_last, resets t_dupacks and drops the ACK ("False fast retx after timeout") before any
/// change of snd_cwnd: t_dupacks never passes tcprexmtthresh, where each further duplicate ACK
/// would add t_maxseg, and `tcp_output` keeps checking off = snd_nxt − snd_una against
/// min(snd_wnd, snd_cwnd), which only ACKs of new data move.
///
/// "none", as FreeBSD 5.2.1 (the 5.2.1-RELEASE tree, sys/conf/newvers.sh REVISION "5.2.1",
/// BRANCH "RELEASE", as in github:kaizendesu/FreeBSD-5.2 freebsd/sys/netinet; read for the
/// facts, nothing copied): `tcp_timer_rexmt` sets snd_nxt = snd_una, snd_recover = snd_max,
/// snd_cwnd = t_maxseg, t_dupacks = 0 and leaves fast recovery; `tcp_input` counts a duplicate
/// ACK while the retransmission timer runs and th_ack = snd_una; on the first and second it
/// calls `tcp_output` only `if (tcp_do_rfc3042)`, and `tcp_do_rfc3042` is 0 in that release
/// (`static int tcp_do_rfc3042 = 0;`, sysctl net.inet.tcp.rfc3042); on the third,
/// `tcp_do_newreno` (1) with th_ack ≤ snd_recover sets t_dupacks = 0 and breaks out before any
/// change of snd_cwnd or call of `tcp_output` (a pure duplicate ACK sets neither needoutput nor
/// TF_ACKNOW further on). So nothing goes until an ACK of new data.
#[inline]
pub fn left_by_dupacks(
    credit: LossDupackCfg,
    nosack_loss: bool,
    dupacks: u32,
    smss: u32,
    reno_sacked: u64,
) -> u64 {
    match (nosack_loss, credit) {
        (true, LossDupackCfg::PerDupack) => u64::from(dupacks) * u64::from(smss),
        (true, _) => 0,
        (false, _) => reno_sacked,
    }
}

/// Knob `loss_dupack_credit` = "rfc3042-flight" or "rfc3042-cwnd": the window that the send
/// loop checks, instead of the congestion window, for the duplicate ACK numbered `dupacks`
/// (counted since the timeout or the last ACK of new data) in the loss state after a timeout
/// without SACK; None when the ACK lets nothing out. `flight`: the pipe when the ACK arrived;
/// `window`: the window the loop would check otherwise; `limited`: FreeBSD's snd_limited
/// ([`loss_limited_transmit_limited`]); `new_data_waiting`: the send buffer holds data beyond
/// snd_max. In both stacks the count runs 1 … `dupthresh` and starts again: at the threshold,
/// without SACK, NewReno's `SEQ_LEQ(th_ack, snd_recover)` (snd_recover = snd_max at the
/// timeout) sets t_dupacks = 0 and sends nothing.
///
/// "rfc3042-flight", FreeBSD 5.3 (read for the facts, nothing copied; no 5.3-RELEASE tree is in
/// the index: the main line of 2006, github:TrustedBSD/sebsd sys/netinet/tcp_input.c rev.
/// 1.291, and a RELENG_5-era tcp_input.c in the index that still has T/TCP's `tcp_ccgen` beside
/// the 2004 SACK code agree on every line used here): `tcp_timer_rexmt` sets snd_nxt = snd_una,
/// snd_recover = snd_max, snd_cwnd = t_maxseg, t_dupacks = 0 and leaves fast recovery. A pure
/// duplicate ACK (th_ack = snd_una, retransmission timer running, window unchanged) increments
/// t_dupacks; at the first and second, `if (tcp_do_rfc3042)` (`static int tcp_do_rfc3042 =
/// 1;` there; 0 in 5.2.1, see [`left_by_dupacks`]): snd_limited = 0 at the first; snd_cwnd =
/// (snd_nxt − snd_una) + (t_dupacks − snd_limited)·t_maxseg; `tcp_output`; then sent = snd_max −
/// old snd_max, and snd_limited = 2 if sent exceeds t_maxseg, else +1 if sent is positive;
/// snd_cwnd restored. `tcp_output` sends len = min(sb_cc, min(snd_wnd, snd_cwnd)) − off from
/// snd_nxt, off = snd_nxt − snd_una, in t_maxseg pieces: one segment on the first duplicate ACK,
/// two on the second unless the first sent new data (snd_limited counts only data past
/// snd_max) — in the go-back-N these are the next resends from snd_nxt, whether or not the
/// receiver already holds them, so a run of three duplicate ACKs releases three segments.
/// Here off is the pipe (everything outstanding was marked lost at the timeout). (FreeBSD
/// 5.2.1's rule, when its sysctl is turned on, adds t_maxseg or 2·t_maxseg to snd_cwnd
/// instead; not modelled.)
///
/// "rfc3042-cwnd", XNU (apple/darwin-xnu, xnu-7195.121.3, bsd/netinet/tcp_input.c, tcp_timer.c
/// and tcp_var.h, APSL, read for the facts, nothing copied): `tcp_timer` on a retransmission
/// timeout sets snd_nxt = snd_una, snd_recover = snd_max and leaves fast recovery (t_dupacks
/// is reset by the next ACK of new data). A duplicate ACK increments t_dupacks; at
/// t_rexmtthresh (3), without SACK, `SEQ_LEQ(th_ack, snd_recover)` sets t_dupacks = 0 and
/// breaks; below it, `ALLOW_LIMITED_TRANSMIT` (0 < t_dupacks < t_rexmtthresh) with no SACK
/// (or SACKed bytes on the ACK) and `so_snd.sb_cc − (snd_max − snd_una) > 0` adds
/// t_maxseg·t_dupacks to snd_cwnd around a `tcp_output` call: one segment from snd_nxt on each
/// of the first two duplicate ACKs of a run (snd_cwnd + 1 and + 2 segments over a flight that
/// filled snd_cwnd), resends in the go-back-N included; nothing when no new data waits. (XNU's
/// early retransmit lowers t_rexmtthresh only when no new data waits, so it does not change
/// this.)
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn loss_limited_transmit_window(
    rule: LossDupackCfg,
    dupacks: u32,
    dupthresh: u32,
    limited: u32,
    flight: u64,
    window: u64,
    new_data_waiting: bool,
    smss: u32,
) -> Option<u64> {
    if dupacks == 0 || dupthresh == 0 {
        return None;
    }
    // t_dupacks after the reset at the threshold.
    let t_dupacks = (dupacks - 1) % dupthresh + 1;
    if t_dupacks >= dupthresh {
        return None;
    }
    let smss = u64::from(smss);
    match rule {
        LossDupackCfg::Rfc3042Flight => {
            let n = t_dupacks.saturating_sub(limited);
            (n > 0).then(|| flight + u64::from(n) * smss)
        }
        LossDupackCfg::Rfc3042Cwnd => {
            new_data_waiting.then(|| window + u64::from(t_dupacks) * smss)
        }
        LossDupackCfg::PerDupack | LossDupackCfg::None => None,
    }
}

/// FreeBSD's snd_limited after a limited-transmit `tcp_output` that moved snd_max by
/// `sent_new` bytes ([`loss_limited_transmit_window`], "rfc3042-flight"): 2 past one segment,
/// one more when anything went, unchanged when nothing new went.
#[inline]
pub fn loss_limited_transmit_limited(limited: u32, sent_new: u64, smss: u32) -> u32 {
    if sent_new > u64::from(smss) {
        2
    } else if sent_new > 0 {
        limited + 1
    } else {
        limited
    }
}

/// Receive window for new data. Quirk (knob `quirk_ignore_rwnd_in_recovery`; Windows XP, Jansen
/// & McGregor 2005): during loss periods — from the first duplicate ACK until recovery ends —
/// new data goes out beyond the receiver's window; what arrives before the hole is repaired is
/// discarded and sent again later.
#[inline]
pub fn rwnd_for_new_data(rwnd: u64, quirk_ignore_rwnd: bool, loss_period: bool) -> u64 {
    if quirk_ignore_rwnd && loss_period {
        u64::MAX / 4
    } else {
        rwnd
    }
}

/// What the send loop knows before each segment, once the gates ([`gate`]) are open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendState {
    /// The congestion window as the stack uses it now (recovery's window rule included).
    pub window: u64,
    /// Payload bytes per full segment.
    pub smss: u32,
    /// The recovery just entered still owes its fast retransmit, or a NewReno partial ACK its
    /// retransmission of the next hole, which goes out whatever the window (RFC 5681 §3.2 step
    /// 2, RFC 6675 §5 step 4.3, RFC 6582 §3.2 step 3).
    pub fast_rexmit_due: bool,
    /// F-RTO releases new data instead of retransmissions (RFC 5682 §2.1 step 2b).
    pub frto_send_new: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Where the application's data ends, if known.
    pub app_end: Option<u64>,
    /// The peer's window for new data (see [`rwnd_for_new_data`]).
    pub rwnd: u64,
    pub sndbuf: u64,
    /// Knob `limited_transmit`.
    pub limited_transmit: bool,
    /// Neither in recovery nor in the loss state after a timeout.
    pub open: bool,
    /// Duplicate ACKs counted.
    pub dupacks: u32,
    pub dupthresh: u32,
    /// Bytes that the duplicate ACKs received in the loss state after a timeout show have left
    /// the network, when the connection has no SACK (one segment each; 0 otherwise): see
    /// [`SendState::pipe`].
    pub left_by_dupacks: u64,
    /// Knob `short_segment_on_rexmit`, in the loss state after a timeout (go-back-N): lost
    /// segments are resent as BSD cuts them, whatever fraction of a segment the window leaves
    /// ([`next_segment`]).
    pub short_rexmit: bool,
    /// The BSD SACK recoveries' send rules in the current state ([`BsdSack`]; `Off` in every
    /// other mode): one discriminant, so that the other stacks' send steps test one word.
    pub bsd: BsdSack,
}

/// The send rules of the BSD SACK recoveries (knob `recovery = "freebsd-sack"` or
/// `"sack-inflate"`) that differ from RFC 6675's NextSeg, by state: at most one applies at a
/// time (open, recovery and the loss state after a timeout exclude each other).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BsdSack {
    /// None of them: every other recovery mode, and `"freebsd-sack"` in the loss state after
    /// a timeout.
    Off,
    /// Knob `recovery = "sack-inflate"` in recovery: a lost segment goes only as the one
    /// retransmission an ACK allows ([`SendState::fast_rexmit_due`]), never by the window
    /// (OpenBSD `tcp_output`, sources at `crate::tcp::recovery::Mode::SackInflate`).
    InflateRecovery,
    /// Knob `recovery = "sack-inflate"` in the loss state after a timeout: the window is checked
    /// against OpenBSD's `off`, not the pipe ([`SendState::go_back_n_off`]).
    InflateGoBackN,
    /// Knob `recovery = "sack-inflate"` outside recovery and the loss state (and
    /// `"freebsd-sack"`, [`BsdSack::FreebsdOpen`]): no SACK hole is resent, lost marks wait for
    /// the recovery that the third duplicate ACK starts, or the timeout. FreeBSD 5.3:
    /// `tcp_output` asks `tcp_sack_output` only `IN_FASTRECOVERY` (sources at
    /// `crate::tcp::recovery::Mode::FreebsdSack`). OpenBSD 3.5: `tcp_output` (rev. 1.67,
    /// 2004-05-07, the tree OpenBSD 3.5 shipped, as imported into MirOS,
    /// github:roytam1/mirbsd-cvs src/sys/netinet/tcp_output.c; read for the facts, nothing
    /// copied) asks `tcp_sack_output` only `if (tp->t_dupacks >= tcprexmtthresh && ...)`, and
    /// `tcp_input` (rev. 1.158.2.3) sets t_dupacks = 0 on an ACK that is not a duplicate (the
    /// 4.4BSD lines) and ends a recovery by the same: before the third duplicate ACK, whatever
    /// the SACK blocks say, only new data goes, by `len = min(sb_cc, win) − off` (sources at
    /// `crate::tcp::recovery::Mode::SackInflate`).
    InflateOpen,
    /// Knob `recovery = "freebsd-sack"` outside recovery and the loss state: no SACK hole is
    /// resent, as [`BsdSack::InflateOpen`], and the window is checked against everything
    /// outstanding, FreeBSD's off = snd_nxt − snd_una, SACKed data included (no pipe outside
    /// recovery; the first two duplicate ACKs release new data by limited transmit only).
    /// `"sack-inflate"` gets the same from its window instead (`Recovery::window_over_flight`,
    /// given in the pipe's terms).
    FreebsdOpen,
    /// Knob `recovery = "freebsd-sack"` in recovery, with snd_recover and sack_newdata: holes
    /// and new data are counted against the window as FreeBSD's `tcp_output` counts them
    /// ([`next_segment_freebsd`]); `gbn`: the recovery started in the go-back-N after a timeout
    /// (knob `freebsd_sack_go_back_n`); `walk`: FreeBSD's snd_nxt below snd_max (knob
    /// `freebsd_sack_walk`); `first`: a partial ACK's first pass, `tcp_sack_partialack`'s
    /// `tcp_output` (its window and snd_una, `crate::tcp::recovery::Recovery::freebsd_first_pass`;
    /// knob `freebsd_sack_rules = "inflate"`); `part`: part of a hole goes when the window holds
    /// less than its record (knob `freebsd_sack_partial_hole`).
    FreebsdRecovery {
        recover: u64,
        newdata: u64,
        gbn: bool,
        walk: Option<u64>,
        first: Option<(u64, u64)>,
        part: bool,
    },
}

/// One step of the send loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Wait for the next pacing slot (no send opportunity).
    PacingWait,
    /// The host's transmit queue is full (no send opportunity).
    HostQueueFull,
    /// Retransmit scoreboard record `i` (NextSeg rule 1).
    Retransmit(usize),
    /// Knob `short_segment_on_rexmit`: re-cut the lost record `i` to `len` bytes
    /// ([`Scoreboard::recut_lost`]) and retransmit it.
    RetransmitCut { i: usize, len: u32 },
    /// Send this many bytes of new data (NextSeg rule 2).
    New(u64),
    /// Knob `freebsd_sack_walk`: send scoreboard record `i` again as FreeBSD's new data from its
    /// snd_nxt below snd_max, whether or not it was resent before ([`next_segment_freebsd`],
    /// `Scoreboard::freebsd_walk_send`); `again`: `tcp_output` loops after it (`sendalot`: the
    /// window held more than the segment), so `tcp_sack_adjust` moves snd_nxt at once.
    FreebsdWalk { i: usize, again: bool },
    /// The congestion window holds the next segment back.
    CwndLimited,
    /// No new data goes now (see [`NewData::Hold`]).
    Hold { persist: bool, app_limited: bool },
    /// Knob `tso`: the sender deferred the next frame of new data (`super::tso::next_frame`;
    /// never returned by [`next_segment`]); `cwnd_limited` as `super::tso::deferred_cwnd_limited`.
    Deferred { cwnd_limited: bool },
}

impl Step {
    /// The loop stopped before a send opportunity: waiting for the pacing slot or for room in
    /// the host queue.
    pub fn no_opportunity(self) -> bool {
        matches!(self, Step::PacingWait | Step::HostQueueFull)
    }
}

impl SendState {
    /// Room for new data.
    #[inline]
    pub fn room(&self) -> Room {
        Room::new(
            self.snd_una,
            self.snd_nxt,
            self.app_end,
            self.rwnd,
            self.sndbuf,
        )
    }

    /// The pipe (RFC 6675) as the window is checked against. Without SACK a duplicate ACK in
    /// the loss state after a timeout tells that one more segment reached the receiver, but
    /// not which, so the scoreboard cannot leave it out; Linux counts each such duplicate ACK
    /// as one segment that left the network (`tcp_process_loss` → `tcp_add_reno_sack`, "a
    /// Reno DUPACK means new data in F-RTO step 2.b above are delivered. Lower inflight to
    /// clock out (re)transmissions"; net/ipv4/tcp_input.c, read for the facts; the count is
    /// reset when snd_una advances, as the sender's duplicate-ACK count is), and RFC 5682
    /// §2.1 step 3a has the sender go on retransmitting after such a duplicate ACK. Linux
    /// bounds that count by the segments not marked lost (`tcp_limit_reno_sacked`: at most
    /// packets_out − max(lost_out, 1)): after a timeout marked everything lost, only what was
    /// sent since — F-RTO's new data — can have made a duplicate ACK count, so the duplicate
    /// ACKs that retransmissions of segments the receiver already holds provoke do not clock
    /// out further retransmissions. Without the rule, the two new segments of F-RTO's step 2b
    /// and their duplicate ACKs filled a window of two and the sender waited for the next
    /// timeout, over and over (measured: a Reno flow without SACK on 20 Mbit/s × 40 ms, 32
    /// timeouts in 10 s and 0.9 Mbit/s, where the kernel had none and 4.9 Mbit/s); without
    /// the bound, each such duplicate ACK released another needless retransmission (10 047
    /// retransmissions in 10 s, the kernel 192).
    #[inline]
    pub fn pipe(&self, sb: &Scoreboard) -> u64 {
        let not_lost = sb
            .out_bytes
            .saturating_sub(sb.lost_bytes.max(u64::from(self.smss)));
        sb.pipe().saturating_sub(self.left_by_dupacks.min(not_lost))
    }

    /// What the window is checked against in [`BsdSack::InflateGoBackN`]: OpenBSD's `off =
    /// snd_nxt − snd_una` during the go-back-N after a timeout, SACKed data below snd_nxt
    /// included, where the pipe leaves it out. OpenBSD 3.5 (read for the facts, nothing copied):
    /// `tcp_timer_rexmt` (tcp_timer.c rev. 1.34, 2003-12-10, the tree OpenBSD 3.5 shipped, as
    /// imported into MirOS, github:roytam1/mirbsd-cvs; 1.37, 2005, the same) frees the SACK
    /// holes (`tcp_timer_freesack`), sets snd_nxt = snd_una, snd_cwnd = t_maxseg, t_dupacks = 0
    /// and snd_last = snd_max; `tcp_output` (rev. 1.67, 2004-05-07) then, while snd_nxt <
    /// snd_max, calls `tcp_sack_adjust`, which moves snd_nxt from the end of a hole to the start
    /// of the next (or to `rcv_lastsack` past the last) of the holes that SACK blocks arriving
    /// since the timeout rebuilt (`tcp_sack_option`, tcp_input.c rev. 1.158.2.3), and sends
    /// `len = min(sb_cc, win) − off` with `off = snd_nxt − snd_una` and `win = min(snd_wnd,
    /// snd_cwnd)`: a skipped SACKed block stays in `off`, so it holds back what follows it until
    /// snd_cwnd covers it. No SACK hole is resent by `tcp_sack_output` meanwhile (it needs
    /// t_dupacks ≥ 3, and `tcp_input` resets t_dupacks at the third duplicate ACK below
    /// snd_last: "False fast retx after timeout"). Here snd_nxt after `tcp_sack_adjust` is the
    /// start of the first lost record not yet resent (the scoreboard forgets SACK marks at the
    /// timeout, knob `rto_keeps_sack` off, and relearns them from later ACKs as OpenBSD rebuilds
    /// its holes), or snd_nxt once none is left. Approximated: OpenBSD's rebuilt hole list
    /// ignores a block below its first hole and one past snd_max; the scoreboard takes every
    /// block.
    #[inline]
    pub fn go_back_n_off(&self, sb: &mut Scoreboard) -> u64 {
        let next = if self.frto_send_new {
            None
        } else {
            sb.next_lost()
        };
        next.map_or(self.snd_nxt, |i| sb.seg(i).start)
            .saturating_sub(self.snd_una)
    }

    /// Limited transmit for a new segment of `len` bytes (RFC 3042 §2; see
    /// [`limited_transmit_allows`]).
    #[inline]
    fn limited_transmit_allows(&self, len: u64) -> bool {
        limited_transmit_allows(
            self.limited_transmit,
            self.open,
            self.dupacks,
            self.dupthresh,
            self.snd_nxt - self.snd_una,
            len,
            self.window,
            self.smss,
        )
    }

    /// [`BsdSack::InflateRecovery`]: a lost segment goes only as the one retransmission an ACK
    /// allows.
    #[inline]
    pub fn rexmit_only_when_due(&self) -> bool {
        matches!(self.bsd, BsdSack::InflateRecovery)
    }

    /// Whether the loop would put a segment on the wire now if the host's queue had room: a
    /// lost segment to resend, or new data, within the window (ignores pacing and F-RTO).
    pub fn would_send(&self, sb: &Scoreboard) -> bool {
        let fits = self.pipe(sb) + self.smss as u64 <= self.window;
        if sb.lost_bytes > sb.retrans_bytes {
            return fits || (self.short_rexmit && self.pipe(sb) < self.window);
        }
        let fits = fits || self.limited_transmit_allows(self.smss as u64);
        fits && self.room().any()
    }
}

/// The gates before each send, in this order: the pacing slot (`pacing_wait`: paced, and the
/// next slot is later than now), then room in the host's transmit queue. A closed gate is the
/// loop's step; None when both are open.
#[inline]
pub fn gate(pacing_wait: bool, host_room: bool) -> Option<Step> {
    if pacing_wait {
        Some(Step::PacingWait)
    } else if !host_room {
        Some(Step::HostQueueFull)
    } else {
        None
    }
}

/// The next segment once the gates are open: NextSeg() rule 1 (RFC 6675 §4): the first lost
/// segment within the window (the due fast retransmit whatever the window; not while F-RTO
/// probes with new data, RFC 5682 §2.1 step 2b); rule 2: new data ([`next_new`]) within the
/// window or by limited transmit.
#[inline]
pub fn next_segment(s: &SendState, sb: &mut Scoreboard) -> Step {
    // The window's measure, and whether SACK holes may be resent: one test of the BSD state
    // on the other stacks' path (`bsd_pipe` out of line, or the match became a jump table).
    let (pipe, resend_holes) = match s.bsd {
        BsdSack::Off => (s.pipe(sb), true),
        _ => match bsd_pipe(s, sb) {
            Ok(pipe) => pipe,
            Err(step) => return step,
        },
    };
    if sb.lost_bytes > sb.retrans_bytes && !s.frto_send_new && resend_holes {
        if let Some(i) = sb.next_lost() {
            let len = sb.seg(i).len as u64;
            if s.short_rexmit && !s.fast_rexmit_due {
                // Knob `short_segment_on_rexmit`: 4.4BSD `tcp_output` (FreeBSD 5.x and OpenBSD
                // 3.x sys/netinet/tcp_output.c, read for the facts; Stevens & Wright, TCP/IP
                // Illustrated Vol. 2, §26.3) sends `len = min(so_snd.sb_cc, win) − off` from
                // snd_nxt, `win = min(snd_wnd, snd_cwnd)`, `off = snd_nxt − snd_una`, cut to
                // `t_maxseg`; a `len` below `t_maxseg` still goes when `SEQ_LT(snd_nxt,
                // snd_max)` ("retransmit case"), i.e. during the go-back-N after a timeout
                // pulled snd_nxt back to snd_una. The byte window grows by t_maxseg²/cwnd per
                // ACK in congestion avoidance, so a fraction of a segment goes as a short
                // segment and every later segment of the go-back-N starts at the odd offset
                // (re-cut from the old ones, crossing into new data at snd_max). Here `off` is
                // the pipe (what was resent since the timeout, everything being lost; SACKed
                // data left out as RFC 6675 does).
                let room = s.window.saturating_sub(pipe).min(u64::from(s.smss));
                if room == 0 {
                    return Step::CwndLimited;
                }
                if room == len {
                    return Step::Retransmit(i);
                }
                return Step::RetransmitCut {
                    i,
                    len: room as u32,
                };
            }
            if (pipe + len > s.window || s.rexmit_only_when_due()) && !s.fast_rexmit_due {
                return Step::CwndLimited;
            }
            return Step::Retransmit(i);
        }
    }
    new_data_step(s, sb, |len| {
        pipe + len <= s.window || s.limited_transmit_allows(len)
    })
}

/// The new-data step of [`next_segment`] and [`next_segment_freebsd`]: the segment
/// [`next_new`] offers if `fits(len)`, else [`Step::CwndLimited`]; or the hold it asks for.
#[inline]
fn new_data_step(s: &SendState, sb: &Scoreboard, fits: impl FnOnce(u64) -> bool) -> Step {
    match next_new(s.smss, s.room(), sb.is_empty()) {
        NewData::Segment(len) if fits(len) => Step::New(len),
        NewData::Segment(_) => Step::CwndLimited,
        NewData::Hold {
            persist,
            app_limited,
        } => Step::Hold {
            persist,
            app_limited,
        },
    }
}

/// [`next_segment`]'s window measure and whether SACK holes may be resent, in the BSD SACK
/// states ([`BsdSack`]); Err with the step itself in FreeBSD's recovery.
#[inline(never)]
fn bsd_pipe(s: &SendState, sb: &mut Scoreboard) -> Result<(u64, bool), Step> {
    Ok(match s.bsd {
        BsdSack::FreebsdRecovery {
            recover,
            newdata,
            gbn,
            walk,
            first,
            part,
        } => {
            let f = Freebsd {
                recover,
                newdata,
                gbn,
                walk,
                part,
            };
            return Err(next_segment_freebsd(s, sb, f, first));
        }
        // OpenBSD's off in the go-back-N after a timeout.
        BsdSack::InflateGoBackN => (s.go_back_n_off(sb), true),
        // FreeBSD's off outside recovery.
        BsdSack::FreebsdOpen => (s.snd_nxt - s.snd_una, false),
        BsdSack::InflateOpen => (s.pipe(sb), false),
        BsdSack::Off | BsdSack::InflateRecovery => (s.pipe(sb), true),
    })
}

/// Whether the new segment of `len` bytes that [`next_segment`] just returned is one that
/// limited transmit released: sent on a duplicate ACK before any recovery, it takes FlightSize
/// (snd_nxt − snd_una) beyond cwnd. Without SACK that is RFC 3042 §2's rule itself (up to two
/// segments beyond cwnd); with SACK, RFC 6675 §5 step (3) lets the first duplicate ACKs send
/// new data "as per Limited Transmit", within the pipe, which the SACKed data have left, so
/// FlightSize still exceeds cwnd. A segment within cwnd over FlightSize (an application- or
/// peer-limited sender) would have gone anyway and is not counted.
#[inline]
pub fn by_limited_transmit(s: &SendState, len: u64) -> bool {
    s.open && s.dupacks > 0 && (s.snd_nxt - s.snd_una) + len > s.window
}

/// [`next_segment`] in FreeBSD 5.3's SACK recovery (knob `recovery = "freebsd-sack"`;
/// FreeBSD tcp_output.c and tcp_sack.c `tcp_sack_output`, read for the facts, sources at
/// `crate::tcp::recovery::Mode::FreebsdSack`). `s.window` is snd_cwnd; sack_bytes_rxmt is the
/// scoreboard's resent bytes still out (records resent, not SACKed or acknowledged). First
/// the first hole not yet resent (every un-SACKed record below the highest SACKed byte is
/// marked lost in this mode, `loss::mark_lost_by_sack`) and below snd_recover, within cwin =
/// min(snd_wnd, snd_cwnd) − sack_bytes_rxmt (the entry's fast retransmit whatever the window,
/// as the entry's snd_cwnd = t_maxseg always lets it go); with none, new data within snd_cwnd −
/// (snd_nxt − sack_newdata) − sack_bytes_rxmt, or, when nothing was resent, within snd_cwnd −
/// (snd_nxt − snd_una) as outside recovery. The peer's window bounds new data through
/// [`Room`].
///
/// `gbn` (knob `freebsd_sack_go_back_n`; a recovery started in the go-back-N after a timeout,
/// `newdata` FreeBSD's snd_nxt there): a lost record at or above both `newdata` and the
/// highest SACK is no hole but the go-back-N's rest, which FreeBSD's `tcp_output` sends as new
/// data from snd_nxt (`tcp_sack_adjust` skipping SACKed data; tcp_output.c rev. 1.100.2.3,
/// read for the facts, nothing copied): once `tcp_sack_output` offers no hole, len = min(sb_cc,
/// min(snd_wnd, snd_cwnd)) − off with off = snd_nxt − snd_una when sack_bytes_rxmt is 0, else
/// within min(snd_wnd, snd_cwnd) − (snd_nxt − sack_newdata) − sack_bytes_rxmt, snd_nxt being
/// the record's start (the send loop then counts it as sent, not resent:
/// `Scoreboard::freebsd_sent_as_new`).
///
/// `walk` (knob `freebsd_sack_walk`; FreeBSD's snd_nxt, from sack_newdata on): the go-back-N's
/// rest is not found as lost records but by FreeBSD's snd_nxt itself. Same sources: once
/// `tcp_sack_output` offers no hole (every hole resent up to its end, or the next one at or
/// beyond snd_recover), `tcp_output` calls `tcp_sack_adjust`, which moves snd_nxt over SACKed
/// data only (from the end of a hole to the start of the next, or to rcv_lastsack past the
/// last), and sends from snd_nxt as new data, with off = snd_nxt − snd_una and len within
/// min(snd_wnd, snd_cwnd) − off when sack_bytes_rxmt is 0, else within min(snd_wnd, snd_cwnd)
/// − (snd_nxt − sack_newdata) − sack_bytes_rxmt; snd_nxt += len. Where the go-back-N had not
/// reached rcv_lastsack, the holes above snd_nxt were resent from the hole list first (their
/// rxmit at their end, counted in sack_bytes_rxmt) and snd_nxt walks over them again: they go
/// twice, the second time counted in snd_nxt − sack_newdata as well. Here the first record
/// from `walk` (at least snd_una, `tcp_input` pulling snd_nxt up to it) that is not SACKed
/// goes as [`Step::FreebsdWalk`], whatever it is — a hole resent before, the go-back-N's
/// rest, data in flight — and `walk` moves to its end; snd_max reached, new data as before.
#[inline(never)]
pub fn next_segment_freebsd(
    s: &SendState,
    sb: &mut Scoreboard,
    f: Freebsd,
    first: Option<(u64, u64)>,
) -> Step {
    if let Some((window, una)) = first {
        if let Some(step) = freebsd_first_pass(s, sb, f, window, una) {
            return step;
        }
    }
    freebsd_pass(s, sb, f, s.window, s.snd_una)
}

/// [`next_segment_freebsd`]'s state of the recovery: snd_recover, sack_newdata, `gbn`, `walk`
/// and `part` as there.
#[derive(Clone, Copy, Debug)]
pub struct Freebsd {
    pub recover: u64,
    pub newdata: u64,
    pub gbn: bool,
    pub walk: Option<u64>,
    pub part: bool,
}

/// A partial ACK's first pass in FreeBSD's SACK recovery of November 2004 (knob
/// `freebsd_sack_rules = "inflate"`; sources at
/// `crate::tcp::recovery::Recovery::freebsd_first_pass`): `tcp_sack_partialack`'s `tcp_output`,
/// with its snd_cwnd `window` and the snd_una before the ACK, `una`, then the ACK's second
/// `tcp_output` with the deflated snd_cwnd (`s.window`) from the new snd_una. The step the first
/// pass allows, or None when it would send nothing: the second pass's turn. A pass that sends
/// nothing at a state sends nothing at any later state of the same ACK (its window is fixed,
/// snd_nxt and the resent bytes only grow, and holes go before new data), so taking the first
/// pass's step while it has one, then the second's, is FreeBSD's order. The peer's window of
/// the first pass is snd_wnd before the ACK's update (`tcp_input` updates it after both
/// `tcp_sack_partialack` and the acknowledged bytes' `sbdrop`): taken as the current window
/// counted from `una` (a window that changed with this ACK is not modelled).
#[cold]
#[inline(never)]
fn freebsd_first_pass(
    s: &SendState,
    sb: &mut Scoreboard,
    f: Freebsd,
    window: u64,
    una: u64,
) -> Option<Step> {
    match freebsd_pass(s, sb, f, window.min(s.rwnd), una) {
        step @ (Step::Retransmit(_) | Step::FreebsdWalk { .. } | Step::New(_)) => Some(step),
        _ => None,
    }
}

/// One pass of FreeBSD's `tcp_output` in its SACK recovery ([`next_segment_freebsd`]) with
/// snd_cwnd `window` and snd_una `una` (the sender's, but for a partial ACK's first pass).
#[inline]
fn freebsd_pass(s: &SendState, sb: &mut Scoreboard, f: Freebsd, window: u64, una: u64) -> Step {
    let Freebsd {
        recover,
        newdata,
        gbn,
        walk,
        part,
    } = f;
    let resent = sb.retrans_bytes;
    if sb.lost_bytes > sb.retrans_bytes {
        if let Some(i) = sb.next_lost() {
            let seg = sb.seg(i);
            let rest = gbn && seg.start >= newdata.max(sb.high_sacked);
            if walk.is_some() && seg.start >= sb.high_sacked {
                // No hole above rcv_lastsack (the go-back-N's rest, the head cut by a persist
                // probe): FreeBSD's snd_nxt reaches it (below).
            } else if rest {
                let used = if resent == 0 {
                    seg.start - una
                } else {
                    resent + (seg.start - newdata)
                };
                if used + u64::from(seg.len) <= window.min(s.rwnd) || s.fast_rexmit_due {
                    return Step::Retransmit(i);
                }
                return Step::CwndLimited;
            } else if seg.start < recover {
                // "Do not retransmit SACK segments beyond snd_recover": a hole above it waits
                // for the next recovery.
                let wnd = window.min(s.rwnd);
                if resent + u64::from(seg.len) <= wnd || s.fast_rexmit_due {
                    return Step::Retransmit(i);
                }
                if part && resent < wnd {
                    return freebsd_part_of_hole(sb, i, wnd - resent);
                }
                return Step::CwndLimited;
            }
        }
    }
    if let Some(w) = walk {
        if let Some(step) = freebsd_walk_step(s, sb, newdata, w.max(s.snd_una), window, una) {
            return step;
        }
    }
    let used = if resent == 0 {
        s.snd_nxt - una
    } else {
        resent + s.snd_nxt.saturating_sub(newdata)
    };
    new_data_step(s, sb, |len| used + len <= window)
}

/// Knob `freebsd_sack_partial_hole`: the hole record `i` (lost, not resent, below snd_recover)
/// is longer than the window left for it, `cwin` > 0 bytes. FreeBSD RELENG_5 `tcp_output`
/// (tcp_output.c rev. 1.100.2.3, as NSC 0.5.2 ships it; read for the facts, nothing copied):
/// in fast recovery with a hole from `tcp_sack_output`, cwin = min(snd_wnd, snd_cwnd) −
/// sack_bytes_rxmt (at least 0), len = min(cwin, p->end − p->rxmit) (min(cwin, snd_recover −
/// p->rxmit) for a hole crossing snd_recover), and any len > 0 sets sack_rxmit and goes (`if
/// (sack_rxmit) goto send`, ahead of the silly-window tests; then at most t_maxseg); p->rxmit
/// += len, so the next pass finds the same hole's rest, and sack_bytes_rxmt counts the bytes
/// sent. Here the record is split (`Scoreboard::recut_lost`: its first `cwin` bytes, the rest
/// still lost and not resent) and its first part retransmitted; the resent bytes and the pipe
/// count that part only, as sack_bytes_rxmt does. Cold: only a window that is not a multiple of
/// the records (a peer's window that binds, the t_maxseg − 1 after a 1-byte probe) gets here.
#[cold]
#[inline(never)]
fn freebsd_part_of_hole(sb: &mut Scoreboard, i: usize, cwin: u64) -> Step {
    let len = cwin.min(u64::from(sb.seg(i).len)) as u32;
    sb.recut_lost(i, len, 0);
    Step::Retransmit(i)
}

/// [`next_segment_freebsd`] with FreeBSD's snd_nxt at `nxt` below snd_max (knob
/// `freebsd_sack_walk`, sources there): `tcp_sack_adjust` skips the SACKed records, and the
/// record there goes as new data from snd_nxt if the window holds it; None at snd_max. `window`
/// and `una` as in [`freebsd_pass`].
#[cold]
fn freebsd_walk_step(
    s: &SendState,
    sb: &mut Scoreboard,
    newdata: u64,
    nxt: u64,
    window: u64,
    una: u64,
) -> Option<Step> {
    if nxt >= s.snd_nxt {
        return None;
    }
    let i = sb.first_unsacked_from(nxt)?;
    let seg = sb.seg(i);
    let resent = sb.retrans_bytes as i64;
    // snd_nxt − sack_newdata is below 0 when the persist stall pulled snd_nxt back (knob
    // `partial_ack_zero_persist`): `long cwin = sendwin − (snd_nxt − sack_newdata) −
    // sack_bytes_rxmt` is 32-bit on i386 (the u_int difference wraps and the result is read as
    // signed), so the window is widened by sack_newdata − snd_nxt. i386 assumed, as for knob
    // `partial_ack_u32_deflation` (on amd64 the same line leaves no room at all).
    let used = if resent == 0 {
        seg.start as i64 - una as i64
    } else {
        resent + (seg.start as i64 - newdata as i64)
    };
    let wnd = window.min(s.rwnd) as i64;
    if wnd == 0 {
        // snd_cwnd 0 (the persist stall): sendwin 0 and sack_bytes_rxmt 0 (no hole resent:
        // the stall's condition, and none goes with a window of 0), so len = 0 − off ≤ 0. The
        // scoreboard's resent bytes may hold the probe's byte, which FreeBSD sends from snd_nxt
        // in persist state, counted nowhere.
        return Some(Step::CwndLimited);
    }
    Some(if used + i64::from(seg.len) <= wnd || s.fast_rexmit_due {
        // `len > t_maxseg` before the cut sets sendalot.
        let again = wnd - used > i64::from(s.smss);
        Step::FreebsdWalk { i, again }
    } else {
        Step::CwndLimited
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::AckResult;

    const MSS: u32 = 1000;

    #[test]
    fn test_room_from_windows() {
        let r = Room::new(1000, 3000, Some(3500), 4000, 10_000);
        assert_eq!(
            r,
            Room {
                app: 500,
                rwnd: 2000,
                buf: 8000
            }
        );
        assert!(r.any());
        let open_ended = Room::new(0, 0, None, 0, 10_000);
        assert_eq!(open_ended.app, u64::MAX);
        assert!(!open_ended.any(), "zero window");
        // Beyond the window already (it shrank): no room, not an underflow.
        assert_eq!(Room::new(0, 5000, None, 4000, 10_000).rwnd, 0);
    }

    #[test]
    fn test_next_new_full_segment() {
        let r = Room::new(0, 0, None, 64_000, 64_000);
        assert_eq!(next_new(MSS, r, true), NewData::Segment(1000));
    }

    #[test]
    fn test_next_new_sws_avoidance_holds_small_segment() {
        // A 600-byte window with more data to send: hold, and probe if nothing is outstanding.
        let r = Room::new(0, 0, None, 600, 64_000);
        let held = NewData::Hold {
            persist: true,
            app_limited: false,
        };
        assert_eq!(next_new(MSS, r, true), held);
        let r = Room::new(0, 400, None, 1000, 64_000);
        let held = NewData::Hold {
            persist: false,
            app_limited: false,
        };
        assert_eq!(
            next_new(MSS, r, false),
            held,
            "data outstanding: its ACK reopens"
        );
    }

    #[test]
    fn test_next_new_last_small_segment_goes() {
        let r = Room::new(0, 0, Some(300), 64_000, 64_000);
        assert_eq!(next_new(MSS, r, true), NewData::Segment(300));
    }

    #[test]
    fn test_next_new_zero_window_or_no_data() {
        let r = Room::new(0, 0, None, 0, 64_000);
        let held = NewData::Hold {
            persist: true,
            app_limited: true,
        };
        assert_eq!(next_new(MSS, r, true), held);
        let r = Room::new(0, 5000, Some(5000), 64_000, 64_000);
        let done = NewData::Hold {
            persist: false,
            app_limited: false,
        };
        assert_eq!(next_new(MSS, r, true), done, "all data sent");
        // The send buffer full: application-limited, no probe (the window is open).
        let r = Room::new(0, 8000, None, 64_000, 8000);
        let held = NewData::Hold {
            persist: false,
            app_limited: true,
        };
        assert_eq!(next_new(MSS, r, false), held);
    }

    #[test]
    fn test_disorder_limited_transmit_one_segment_per_dupack() {
        let cwnd = 4000;
        // Four segments out (FlightSize = cwnd): the first duplicate ACK allows a fifth...
        assert!(limited_transmit_allows(
            true, true, 1, 3, 4000, 1000, cwnd, MSS
        ));
        // ...but not a sixth until the second duplicate ACK.
        assert!(!limited_transmit_allows(
            true, true, 1, 3, 5000, 1000, cwnd, MSS
        ));
        assert!(limited_transmit_allows(
            true, true, 2, 3, 5000, 1000, cwnd, MSS
        ));
        assert!(!limited_transmit_allows(
            true, true, 2, 3, 6000, 1000, cwnd, MSS
        ));
    }

    #[test]
    fn test_limited_transmit_not_without_dupacks_at_dupthresh_or_in_recovery() {
        assert!(!limited_transmit_allows(
            true, true, 0, 3, 4000, 1000, 4000, MSS
        ));
        assert!(!limited_transmit_allows(
            true, true, 3, 3, 4000, 1000, 4000, MSS
        ));
        assert!(!limited_transmit_allows(
            true, false, 1, 3, 4000, 1000, 4000, MSS
        ));
        assert!(!limited_transmit_allows(
            false, true, 1, 3, 4000, 1000, 4000, MSS
        ));
    }

    /// `n` full segments outstanding from offset 0.
    fn outstanding(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(3);
        for i in 0..n {
            sb.on_send_new(i * MSS as u64, MSS, i);
        }
        sb
    }

    /// An open connection with `sb`'s data outstanding, a window of `window` bytes and an
    /// open-ended application with a large peer window.
    fn state(sb: &Scoreboard, window: u64) -> SendState {
        SendState {
            window,
            smss: MSS,
            fast_rexmit_due: false,
            frto_send_new: false,
            snd_una: 0,
            snd_nxt: sb.out_bytes,
            app_end: None,
            rwnd: 1 << 20,
            sndbuf: 1 << 20,
            limited_transmit: true,
            open: true,
            dupacks: 0,
            dupthresh: 3,
            left_by_dupacks: 0,
            short_rexmit: false,
            bsd: BsdSack::Off,
        }
    }

    /// FreeBSD's SACK recovery state with no go-back-N, walk, first pass or partial holes.
    fn freebsd_rec(recover: u64, newdata: u64) -> BsdSack {
        BsdSack::FreebsdRecovery {
            recover,
            newdata,
            gbn: false,
            walk: None,
            first: None,
            part: false,
        }
    }

    /// Ten records out; 0 and 2 lost, 1 and 3 SACKed (pipe 6000).
    fn two_holes() -> Scoreboard {
        let mut sb = outstanding(10);
        let mut res = AckResult::default();
        sb.on_sack_block(1000, 2000, 20, &mut res);
        sb.on_sack_block(3000, 4000, 20, &mut res);
        sb.mark_holes_lost();
        sb
    }

    /// The loop's step: the gates, then the next segment.
    fn next_step(pacing_wait: bool, host_room: bool, s: &SendState, sb: &mut Scoreboard) -> Step {
        gate(pacing_wait, host_room).unwrap_or_else(|| next_segment(s, sb))
    }

    #[test]
    fn test_step_new_data_within_window_then_cwnd_limited() {
        let mut sb = outstanding(3);
        let s = state(&sb, 4000);
        assert_eq!(next_step(false, true, &s, &mut sb), Step::New(1000));
        let mut sb = outstanding(4);
        let s = state(&sb, 4000);
        assert_eq!(next_step(false, true, &s, &mut sb), Step::CwndLimited);
    }

    #[test]
    fn test_paced_sender_with_lost_segment_retransmits_before_new_data() {
        let mut sb = outstanding(5);
        sb.mark_head_lost();
        let s = state(&sb, 10_000);
        assert_eq!(next_step(true, true, &s, &mut sb), Step::PacingWait);
        assert!(Step::PacingWait.no_opportunity());
        // The slot comes: NextSeg rule 1 before rule 2 (RFC 6675 §4).
        assert_eq!(next_step(false, true, &s, &mut sb), Step::Retransmit(0));
        let (start, len) = sb.on_retransmit(0, 100);
        assert_eq!((start, len), (0, MSS));
        let next = state(&sb, 10_000);
        assert_eq!(
            next_step(false, true, &next, &mut sb),
            Step::New(1000),
            "then new data"
        );
    }

    #[test]
    fn test_due_fast_retransmit_goes_beyond_window_not_before_pacing_slot() {
        let mut sb = outstanding(5);
        sb.mark_head_lost();
        // Pipe 4 segments, window 3: a retransmission does not fit...
        let s = state(&sb, 3000);
        assert_eq!(next_step(false, true, &s, &mut sb), Step::CwndLimited);
        // ...except the fast retransmit of the recovery just entered (RFC 5681 §3.2 step 2),
        let due = SendState {
            fast_rexmit_due: true,
            ..s
        };
        assert_eq!(next_step(false, true, &due, &mut sb), Step::Retransmit(0));
        // which still waits for its pacing slot and for room in the host queue.
        assert_eq!(next_step(true, true, &due, &mut sb), Step::PacingWait);
        assert_eq!(next_step(false, false, &due, &mut sb), Step::HostQueueFull);
        assert!(Step::HostQueueFull.no_opportunity() && !Step::CwndLimited.no_opportunity());
    }

    #[test]
    fn test_sack_inflate_go_back_n_counts_skipped_sacked_data_in_the_window() {
        // OpenBSD after a timeout (recovery = "sack-inflate"; sources at
        // SendState::go_back_n_off): 8 segments were out; the timeout resent the first, whose
        // ACK (snd_una 1000) SACKs 2000:4000. cwnd is 2 segments. The second segment goes
        // (off 0); then tcp_sack_adjust moves snd_nxt over the SACKed block to 4000, off =
        // 3000 > 2000: nothing more. RFC 6675's pipe (1000, the SACKed block left out) let
        // segment 4000 go as well.
        let mut sb = outstanding(8);
        sb.on_rto();
        let (_, len) = sb.on_retransmit(0, 1);
        assert_eq!(len, MSS);
        let mut res = AckResult::default();
        sb.on_cum_ack(1000, 2, &mut res);
        sb.on_sack_block(2000, 4000, 2, &mut res);
        let bsd = SendState {
            snd_una: 1000,
            snd_nxt: 8000,
            open: false,
            short_rexmit: true,
            bsd: BsdSack::InflateGoBackN,
            ..state(&sb, 2000)
        };
        assert_eq!(bsd.go_back_n_off(&mut sb), 0);
        assert_eq!(next_segment(&bsd, &mut sb), Step::Retransmit(0));
        sb.on_retransmit(0, 3);
        assert_eq!(bsd.go_back_n_off(&mut sb), 3000, "4000 − snd_una");
        assert_eq!(next_segment(&bsd, &mut sb), Step::CwndLimited);
        let pipe = SendState {
            bsd: BsdSack::Off,
            ..bsd
        };
        assert_eq!(next_segment(&pipe, &mut sb), Step::Retransmit(3));
        // cwnd 4 segments covers off + one segment: segment 4000 goes, as one full segment.
        let wider = SendState {
            window: 4000,
            ..bsd
        };
        assert_eq!(next_segment(&wider, &mut sb), Step::Retransmit(3));
        // Every lost segment resent: off is snd_nxt − snd_una, everything outstanding.
        for i in 3..7 {
            sb.on_retransmit(i, 4);
        }
        assert_eq!(bsd.go_back_n_off(&mut sb), 7000);
    }

    #[test]
    fn test_sack_inflate_retransmits_only_when_due_whatever_the_window() {
        // OpenBSD tcp_output (recovery = "sack-inflate"): a SACK-eligible hole goes as the one
        // retransmission the ACK allows, even into a window the pipe would let it fit into
        // otherwise only once; without the allowance nothing goes, however large the window.
        let mut sb = outstanding(5);
        sb.mark_head_lost();
        let s = SendState {
            bsd: BsdSack::InflateRecovery,
            ..state(&sb, 100_000)
        };
        assert_eq!(next_segment(&s, &mut sb), Step::CwndLimited);
        let due = SendState {
            fast_rexmit_due: true,
            ..s
        };
        assert_eq!(next_segment(&due, &mut sb), Step::Retransmit(0));
        // Knob off: the window lets it go.
        let rfc = SendState {
            bsd: BsdSack::Off,
            ..s
        };
        assert_eq!(next_segment(&rfc, &mut sb), Step::Retransmit(0));
    }

    #[test]
    fn test_freebsd_sack_budget_counts_resent_and_new_data_since_entry() {
        // FreeBSD tcp_output in SACK recovery (recovery = "freebsd-sack"): holes within
        // snd_cwnd − sack_bytes_rxmt, new data within snd_cwnd − (snd_nxt − sack_newdata) −
        // sack_bytes_rxmt. Ten records out, 0 and 2 lost, 1 and 3 SACKed (pipe 6000): RFC 6675
        // with the same window (3000) would send nothing (pipe ≥ window).
        let mut sb = two_holes();
        let s = SendState {
            open: false,
            bsd: freebsd_rec(10_000, 10_000),
            ..state(&sb, 3000)
        };
        assert_eq!(
            next_segment(
                &SendState {
                    bsd: BsdSack::Off,
                    ..s
                },
                &mut sb
            ),
            Step::CwndLimited,
            "RFC 6675's pipe rule"
        );
        assert_eq!(next_segment(&s, &mut sb), Step::Retransmit(0));
        sb.on_retransmit(0, 30);
        assert_eq!(next_segment(&s, &mut sb), Step::Retransmit(2));
        sb.on_retransmit(2, 31);
        // 2000 resent: one new segment fits in 3000.
        assert_eq!(next_segment(&s, &mut sb), Step::New(1000));
        let after = SendState {
            snd_nxt: 11_000,
            ..s
        };
        sb.on_send_new(10_000, MSS, 32);
        assert_eq!(next_segment(&after, &mut sb), Step::CwndLimited);
        // A hole at or beyond snd_recover waits for the next recovery.
        let mut sb2 = outstanding(4);
        let mut res = AckResult::default();
        sb2.on_sack_block(1000, 2000, 20, &mut res);
        sb2.mark_holes_lost();
        let beyond = SendState {
            open: false,
            bsd: freebsd_rec(0, 4000),
            ..state(&sb2, 3000)
        };
        assert_eq!(next_segment(&beyond, &mut sb2), Step::CwndLimited);
    }

    /// Knob `freebsd_sack_partial_hole` (FreeBSD RELENG_5 tcp_output.c rev. 1.100.2.3, sources at
    /// `freebsd_part_of_hole`): ten records out, 0 and 2 lost, 1 and 3 SACKed, snd_cwnd 3000
    /// and the peer's window 1600. Hole 0 goes whole (cwin 1600); then cwin = 1600 − 1000 = 600
    /// is less than hole 2's record: 600 bytes of it go, its last 400 staying a hole; then cwin
    /// is 0 and nothing goes. With the knob off hole 2 waits (fails before the knob: nothing
    /// went).
    #[test]
    fn test_freebsd_sack_partial_hole_sends_the_window_left_of_a_hole() {
        let mut sb = two_holes();
        let s = SendState {
            open: false,
            rwnd: 1600,
            bsd: BsdSack::FreebsdRecovery {
                recover: 10_000,
                newdata: 10_000,
                gbn: false,
                walk: None,
                first: None,
                part: true,
            },
            ..state(&sb, 3000)
        };
        let off = SendState {
            bsd: freebsd_rec(10_000, 10_000),
            ..s
        };
        assert_eq!(next_segment(&s, &mut sb), Step::Retransmit(0));
        assert_eq!(sb.on_retransmit(0, 30), (0, 1000));
        assert_eq!(next_segment(&off, &mut sb), Step::CwndLimited, "knob off");
        let i = match next_segment(&s, &mut sb) {
            Step::Retransmit(i) => i,
            other => panic!("expected part of hole 2000, got {other:?}"),
        };
        assert_eq!(sb.on_retransmit(i, 31), (2000, 600));
        sb.check_invariants();
        assert_eq!(sb.retrans_bytes, 1600);
        assert_eq!(sb.lost_bytes, 2000);
        // cwin 0: the hole's rest, 2600..3000, waits.
        assert_eq!(next_segment(&s, &mut sb), Step::CwndLimited);
        let j = sb.next_lost().expect("the hole's rest");
        assert_eq!((sb.seg(j).start, sb.seg(j).len), (2600, 400));
        // A wider window lets the rest go whole.
        let wide = SendState { rwnd: 2000, ..s };
        assert_eq!(next_segment(&wide, &mut sb), Step::Retransmit(j));
        assert_eq!(sb.on_retransmit(j, 32), (2600, 400));
        sb.check_invariants();
    }

    /// Knob `freebsd_sack_go_back_n` (FreeBSD RELENG_5 tcp_output.c rev. 1.100.2.3, sources at
    /// [`next_segment_freebsd`]): six segments out, the timeout's go-back-N resent the first
    /// two, nothing SACKed. The recovery that the third duplicate ACK starts sends the
    /// go-back-N's rest as new data from snd_nxt = 2000: with sack_bytes_rxmt 0, within
    /// min(snd_wnd, snd_cwnd) − (snd_nxt − snd_una), so one segment with a window of 3000 (2000
    /// are below snd_nxt). As holes (`gbn` false) they went within snd_cwnd − the bytes resent
    /// since the holes were rebuilt: three.
    #[test]
    fn test_freebsd_go_back_n_rest_goes_as_new_data_from_snd_nxt() {
        let run = |gbn: bool| {
            let mut sb = outstanding(6);
            sb.on_rto();
            sb.on_retransmit(0, 10);
            sb.on_retransmit(1, 11);
            let nxt = sb.freebsd_rebuild_holes(6000);
            assert_eq!(nxt, 2000, "FreeBSD's snd_nxt");
            assert_eq!((sb.retrans_bytes, sb.lost_bytes), (0, 4000));
            let newdata = if gbn { nxt } else { 6000 };
            let s = SendState {
                open: false,
                bsd: BsdSack::FreebsdRecovery {
                    recover: 6000,
                    newdata,
                    gbn,
                    walk: None,
                    first: None,
                    part: false,
                },
                ..state(&sb, 3000)
            };
            let mut sent = vec![];
            loop {
                match next_segment(&s, &mut sb) {
                    Step::Retransmit(i) => {
                        let start = sb.seg(i).start;
                        sb.on_retransmit(i, 20);
                        if gbn {
                            sb.freebsd_sent_as_new(i);
                        }
                        sent.push(start);
                    }
                    step => {
                        assert_eq!(step, Step::CwndLimited);
                        break;
                    }
                }
            }
            sb.check_invariants();
            sent
        };
        assert_eq!(run(true), vec![2000]);
        assert_eq!(run(false), vec![2000, 3000, 4000]);
    }

    /// Knob `freebsd_sack_walk` (FreeBSD RELENG_5 tcp_output.c rev. 1.100.2.3, tcp_sack.c rev.
    /// 1.3.2.1, sources at [`next_segment_freebsd`]): eight segments out, 1000..2000,
    /// 4000..5000 and 6000..7000 SACKed after the timeout, the go-back-N resent 0 and 2000 and
    /// had got to snd_nxt = 3000 (sack_newdata) when the recovery started. The hole list resends
    /// 0, 2000, 3000 and 5000 (sack_bytes_rxmt 4000); then snd_nxt walks from 3000 over what is
    /// not SACKed: 3000 again (4000 + 0 + 1000 ≤ 6000), and 5000 would take 4000 + 2000 +
    /// 1000 > 6000. With a wide window the walk sends 3000, 5000 and the go-back-N's rest 7000,
    /// then new data. Without the walk each hole goes once and the rest 7000 waits (4000 +
    /// 4000 + 1000 > 6000).
    #[test]
    fn test_freebsd_sack_walk_resends_the_holes_above_snd_nxt() {
        let run = |walk: bool, window: u64| {
            let mut sb = outstanding(8);
            sb.on_rto();
            let mut res = AckResult::default();
            sb.on_sack_block(1000, 2000, 5, &mut res);
            sb.on_retransmit(0, 10);
            sb.on_retransmit(2, 11);
            sb.on_sack_block(4000, 5000, 12, &mut res);
            sb.on_sack_block(6000, 7000, 13, &mut res);
            let nxt = sb.freebsd_rebuild_holes(8000);
            assert_eq!(nxt, 3000, "FreeBSD's snd_nxt");
            let mut s = SendState {
                open: false,
                bsd: BsdSack::FreebsdRecovery {
                    recover: 8000,
                    newdata: nxt,
                    gbn: true,
                    walk: walk.then_some(nxt),
                    first: None,
                    part: false,
                },
                ..state(&sb, window)
            };
            let mut sent = vec![];
            loop {
                match next_segment(&s, &mut sb) {
                    Step::Retransmit(i) => {
                        let start = sb.seg(i).start;
                        sb.on_retransmit(i, 20);
                        if start >= 7000 {
                            sb.freebsd_sent_as_new(i);
                        }
                        sent.push(start);
                    }
                    Step::FreebsdWalk { i, .. } => {
                        let (start, len) = sb.freebsd_walk_send(i, 20);
                        if let BsdSack::FreebsdRecovery { walk, .. } = &mut s.bsd {
                            *walk = Some(start + u64::from(len));
                        }
                        sent.push(start);
                    }
                    Step::New(len) => {
                        sent.push(s.snd_nxt);
                        assert_eq!(len, 1000);
                        break;
                    }
                    step => {
                        assert_eq!(step, Step::CwndLimited);
                        break;
                    }
                }
                sb.check_invariants();
            }
            sent
        };
        assert_eq!(run(true, 6000), vec![0, 2000, 3000, 5000, 3000]);
        assert_eq!(run(false, 6000), vec![0, 2000, 3000, 5000]);
        assert_eq!(
            run(true, 20_000),
            vec![0, 2000, 3000, 5000, 3000, 5000, 7000, 8000]
        );
        assert_eq!(run(false, 20_000), vec![0, 2000, 3000, 5000, 7000, 8000]);
    }

    /// Knob `freebsd_sack_rules = "inflate"` with `freebsd_sack_walk` (FreeBSD RELENG_5
    /// tcp_sack.c rev. 1.3.2.1 `tcp_sack_partialack`, tcp_input.c rev. 1.252.2.2, tcp_output.c
    /// rev. 1.100.2.3; sources at `crate::tcp::recovery::Recovery::freebsd_first_pass`). Eight
    /// segments out, all lost at the timeout; the recovery started with the go-back-N at 2000
    /// (sack_newdata), snd_cwnd 3 + 2 segments; FreeBSD's snd_nxt has walked to 5000. A partial
    /// ACK of 3000 deflates it to 5 − (3 − 1) = 3; the next, of 5000, with nothing resent
    /// outstanding (sack_bytes_rxmt 0): `tcp_sack_partialack`'s `tcp_output` has snd_cwnd 0 +
    /// (5000 − 2000) + 1000 = 4000 and off = 5000 − 3000 (snd_una not yet moved): 5000 and
    /// 6000 go; the second `tcp_output`, snd_cwnd 3 − (2 − 1) = 2 segments from snd_una 5000,
    /// off 2000: nothing. Counting the first window from the new snd_una sent 7000 and new data
    /// 8000 as well.
    #[test]
    fn test_freebsd_partial_ack_first_pass_counts_from_the_old_snd_una() {
        use crate::tcp::recovery::{AckInfo, Mode, Recovery};
        let mut sb = outstanding(8);
        sb.on_rto();
        let mut res = AckResult::default();
        for i in 0..5 {
            sb.on_retransmit(i, 10);
        }
        sb.on_cum_ack(3000, 20, &mut res);
        sb.on_cum_ack(5000, 30, &mut res);
        assert_eq!(sb.retrans_bytes, 0);
        let mut rec = Recovery::new(Mode::FreebsdSack, MSS, 3);
        rec.freebsd_inflate = true;
        rec.u32_deflation = true;
        rec.enter(8000, 8000, 8000, 2000, 0, 8000);
        rec.freebsd_go_back_n(2000, true);
        rec.settle();
        rec.freebsd_walked(5000);
        let partial = |acked: u64, una: u64| AckInfo {
            advanced: true,
            bytes_acked: acked,
            snd_una: una,
            snd_nxt: 8000,
            rexmit_out: 0,
            ssthresh: 2000,
            ..Default::default()
        };
        rec.on_ack(&partial(3000, 3000));
        rec.settle();
        assert_eq!(rec.window(0), 3000);
        rec.on_ack(&partial(2000, 5000));
        let mut s = SendState {
            open: false,
            snd_una: 5000,
            snd_nxt: 8000,
            window: rec.window(0),
            bsd: super::super::bsd_sack_rules(&rec, false, true),
            ..state(&sb, 0)
        };
        let mut sent = vec![];
        loop {
            match next_segment(&s, &mut sb) {
                Step::FreebsdWalk { i, .. } => {
                    let (start, len) = sb.freebsd_walk_send(i, 40);
                    // At snd_max the walk ends (`Sender::freebsd_adjust_walk`).
                    let nxt = start + u64::from(len);
                    rec.freebsd_walked(if nxt >= s.snd_nxt { u64::MAX } else { nxt });
                    s.bsd = super::super::bsd_sack_rules(&rec, false, true);
                    sent.push(start);
                }
                Step::New(len) => {
                    sent.push(s.snd_nxt);
                    sb.on_send_new(s.snd_nxt, len as u32, 40);
                    s.snd_nxt += len;
                }
                step => {
                    assert_eq!(step, Step::CwndLimited);
                    break;
                }
            }
            sb.check_invariants();
        }
        assert_eq!(sent, vec![5000, 6000]);
        rec.settle();
        assert_eq!(rec.window(0), 2000);
    }

    #[test]
    fn test_freebsd_sack_nothing_resent_counts_flight_and_open_state_resends_no_hole() {
        // sack_bytes_rxmt = 0 (no hole resent): tcp_output's ordinary rule, min(snd_wnd,
        // snd_cwnd) − (snd_nxt − snd_una). Outside recovery FreeBSD resends no SACK hole and
        // counts SACKed data in its window; the first two duplicate ACKs send one new segment
        // each (limited transmit).
        let mut sb = outstanding(4);
        let s = SendState {
            open: false,
            bsd: freebsd_rec(4000, 4000),
            ..state(&sb, 4500)
        };
        assert_eq!(
            next_segment(&s, &mut sb),
            Step::CwndLimited,
            "4000 + 1000 > 4500"
        );
        assert_eq!(
            next_segment(&SendState { window: 5000, ..s }, &mut sb),
            Step::New(1000)
        );
        sb.mark_head_lost();
        let open = SendState {
            bsd: BsdSack::FreebsdOpen,
            ..state(&sb, 100_000)
        };
        assert_eq!(next_segment(&open, &mut sb), Step::New(1000));
        assert_eq!(
            next_segment(
                &SendState {
                    bsd: BsdSack::Off,
                    ..open
                },
                &mut sb
            ),
            Step::Retransmit(0)
        );
        // Records 1 and 2 SACKed, cwnd 4 segments (all out): the pipe (1 segment) would let
        // three new segments go; FreeBSD's off (4) none, one by limited transmit on a
        // duplicate ACK.
        let mut res = AckResult::default();
        sb.on_sack_block(1000, 3000, 20, &mut res);
        let full = SendState {
            bsd: BsdSack::FreebsdOpen,
            ..state(&sb, 4000)
        };
        assert_eq!(next_segment(&full, &mut sb), Step::CwndLimited);
        assert_eq!(
            next_segment(
                &SendState {
                    bsd: BsdSack::Off,
                    ..full
                },
                &mut sb
            ),
            Step::Retransmit(0),
            "RFC 6675: the lost head within the pipe"
        );
        let dup = SendState { dupacks: 1, ..full };
        assert_eq!(next_segment(&dup, &mut sb), Step::New(1000));
    }

    #[test]
    fn test_by_limited_transmit_counts_segments_beyond_cwnd_over_flightsize() {
        // cwnd 4 segments, 4 out: a new segment on a duplicate ACK goes beyond cwnd over
        // FlightSize (by limited transmit, whether the SACKed pipe had room or not); none
        // without a duplicate ACK, in recovery, or within cwnd (a sender below its window).
        let sb = outstanding(4);
        let s = SendState {
            dupacks: 1,
            ..state(&sb, 4000)
        };
        assert!(by_limited_transmit(&s, 1000));
        assert!(!by_limited_transmit(&SendState { dupacks: 0, ..s }, 1000));
        assert!(!by_limited_transmit(&SendState { open: false, ..s }, 1000));
        assert!(!by_limited_transmit(&SendState { window: 5000, ..s }, 1000));
    }

    #[test]
    fn test_sack_inflate_open_state_resends_no_hole() {
        // OpenBSD 3.5 (recovery = "sack-inflate") outside recovery: a hole the SACK blocks
        // made eligible waits for the third duplicate ACK (tcp_output asks tcp_sack_output only
        // with t_dupacks >= tcprexmtthresh); the window, in the pipe's terms (cwnd + pipe −
        // FlightSize), lets new data go as before. 7 out, 3 SACKed above the lost head: pipe 3.
        let mut sb = outstanding(7);
        let mut res = AckResult::default();
        sb.on_sack_block(1000, 4000, 20, &mut res);
        sb.mark_lost_by_sack();
        assert!(sb
            .front()
            .is_some_and(|s| s.flags & crate::tcp::scoreboard::LOST != 0));
        let window = 8000 + 3000 - 7000;
        let rfc = state(&sb, window);
        assert_eq!(next_segment(&rfc, &mut sb), Step::Retransmit(0));
        let bsd = SendState {
            bsd: BsdSack::InflateOpen,
            dupacks: 1,
            limited_transmit: false,
            ..rfc
        };
        assert_eq!(next_segment(&bsd, &mut sb), Step::New(1000));
        let full = SendState {
            window: 3000,
            ..bsd
        };
        assert_eq!(next_segment(&full, &mut sb), Step::CwndLimited);
    }

    #[test]
    fn test_frto_release_sends_new_data_before_lost_segments() {
        let mut sb = outstanding(5);
        sb.on_rto();
        let s = SendState {
            frto_send_new: true,
            ..state(&sb, 3000)
        };
        // RFC 5682 §2.1 step 2b: new data although everything is marked lost (the window is
        // the pipe's: nothing is believed in flight).
        assert_eq!(next_segment(&s, &mut sb), Step::New(1000));
        let s = SendState {
            frto_send_new: false,
            ..s
        };
        assert_eq!(next_segment(&s, &mut sb), Step::Retransmit(0));
    }

    #[test]
    fn test_loss_state_duplicate_acks_without_sack_clock_out_retransmissions() {
        // After a timeout everything outstanding is lost; F-RTO sent two new segments (step
        // 2b), which fill a window of two; their two duplicate ACKs (no SACK) show that both
        // arrived, so the next lost segment goes out (Linux tcp_add_reno_sack in
        // tcp_process_loss; RFC 5682 step 3a), not at the next timeout.
        let mut sb = outstanding(5);
        sb.on_rto();
        sb.on_send_new(5000, MSS, 10);
        sb.on_send_new(6000, MSS, 10);
        let s = SendState {
            snd_nxt: 7000,
            open: false,
            ..state(&sb, 2000)
        };
        assert_eq!(
            next_segment(&s, &mut sb),
            Step::CwndLimited,
            "pipe 2 = window"
        );
        assert!(!s.would_send(&sb));
        let s = SendState {
            dupacks: 2,
            left_by_dupacks: 2 * MSS as u64,
            ..s
        };
        assert_eq!(next_segment(&s, &mut sb), Step::Retransmit(0));
        assert!(s.would_send(&sb));
        // With one duplicate ACK, one segment's room: exactly one retransmission.
        let one = SendState {
            dupacks: 1,
            left_by_dupacks: MSS as u64,
            ..s
        };
        assert_eq!(next_segment(&one, &mut sb), Step::Retransmit(0));
        let (_, len) = sb.on_retransmit(0, 20);
        assert_eq!(len, MSS);
        assert_eq!(next_segment(&one, &mut sb), Step::CwndLimited);
        // Duplicate ACKs beyond the segments not marked lost free nothing more (Linux
        // tcp_limit_reno_sacked): five of them still leave room for two segments only.
        let five = SendState {
            dupacks: 5,
            left_by_dupacks: 5 * MSS as u64,
            window: 3000,
            ..s
        };
        assert_eq!(
            five.pipe(&sb),
            MSS as u64,
            "pipe 3 (two new, one retransmitted) − 2"
        );
        // Nothing sent since the timeout: every segment is marked lost and a duplicate ACK
        // (provoked by a retransmission the receiver already had) frees nothing.
        let mut all_lost = outstanding(5);
        all_lost.on_rto();
        all_lost.on_retransmit(0, 20);
        let s = SendState {
            dupacks: 3,
            left_by_dupacks: 3 * MSS as u64,
            open: false,
            ..state(&all_lost, 1000)
        };
        assert_eq!(s.pipe(&all_lost), MSS as u64);
        assert_eq!(next_segment(&s, &mut all_lost), Step::CwndLimited);
    }

    /// Knob `loss_dupack_credit` ("none": OpenBSD 3.5 and FreeBSD 5.2.1, sources at
    /// [`left_by_dupacks`]): after a timeout without SACK, a new segment sent since (not marked
    /// lost) and a duplicate ACK. "per-dupack" frees that segment's room and the next lost one
    /// is resent; "none" and the RFC 3042 rules (which let segments out through their own
    /// window, [`loss_limited_transmit_window`]) leave the window of two full.
    #[test]
    fn test_loss_dupack_credit_none_frees_nothing() {
        use LossDupackCfg::{None as Nothing, PerDupack, Rfc3042Cwnd, Rfc3042Flight};
        let board = || {
            let mut sb = outstanding(4);
            sb.on_rto();
            sb.on_retransmit(0, 20);
            sb.on_send_new(4000, MSS, 21);
            sb
        };
        let s = |credit: LossDupackCfg| SendState {
            snd_nxt: 5000,
            open: false,
            dupacks: 1,
            left_by_dupacks: left_by_dupacks(credit, true, 1, MSS, 0),
            ..state(&board(), 2000)
        };
        assert_eq!(left_by_dupacks(PerDupack, true, 2, MSS, 7), 2 * MSS as u64);
        for credit in [Nothing, Rfc3042Flight, Rfc3042Cwnd] {
            assert_eq!(left_by_dupacks(credit, true, 2, MSS, 7), 0);
        }
        // Outside the loss state without SACK, the knob does not matter.
        for credit in [PerDupack, Nothing, Rfc3042Flight, Rfc3042Cwnd] {
            assert_eq!(left_by_dupacks(credit, false, 2, MSS, 7), 7);
        }
        let mut sb = board();
        assert_eq!(s(PerDupack).pipe(&sb), MSS as u64, "pipe 2 − 1");
        assert_eq!(next_segment(&s(PerDupack), &mut sb), Step::Retransmit(1));
        for credit in [Nothing, Rfc3042Flight, Rfc3042Cwnd] {
            let mut sb = board();
            assert_eq!(s(credit).pipe(&sb), 2 * MSS as u64);
            assert_eq!(next_segment(&s(credit), &mut sb), Step::CwndLimited);
        }
    }

    /// Knob `loss_dupack_credit`, the RFC 3042 rules (sources at
    /// [`loss_limited_transmit_window`]): the count runs 1, 2, 3 and starts again after the
    /// third, which lets nothing out. "rfc3042-flight" (FreeBSD 5.3): the flight plus one
    /// segment on the first, plus two on the second, or one when the first sent new data
    /// (snd_limited 1), nothing when it sent more than a segment of it (snd_limited 2).
    /// "rfc3042-cwnd" (XNU): the window plus one segment, plus two, and only while new data
    /// waits. The other rules have no such window.
    #[test]
    fn test_loss_limited_transmit_windows() {
        use LossDupackCfg::{None as Nothing, PerDupack, Rfc3042Cwnd, Rfc3042Flight};
        let m = MSS as u64;
        let (flight, window) = (7 * m, 4 * m);
        let w = |rule, dupacks: u32, limited: u32, waiting: bool| {
            loss_limited_transmit_window(rule, dupacks, 3, limited, flight, window, waiting, MSS)
        };
        let run: Vec<Option<u64>> = (1..=7).map(|d| w(Rfc3042Flight, d, 0, true)).collect();
        let f = |n: u64| Some(flight + n * m);
        assert_eq!(run, vec![f(1), f(2), None, f(1), f(2), None, f(1)]);
        assert_eq!(
            w(Rfc3042Flight, 2, 1, true),
            f(1),
            "the first sent new data"
        );
        assert_eq!(
            w(Rfc3042Flight, 5, 1, false),
            f(1),
            "FreeBSD does not ask for new data"
        );
        assert_eq!(w(Rfc3042Flight, 2, 2, true), None);
        let run: Vec<Option<u64>> = (1..=6).map(|d| w(Rfc3042Cwnd, d, 0, true)).collect();
        let c = |n: u64| Some(window + n * m);
        assert_eq!(run, vec![c(1), c(2), None, c(1), c(2), None]);
        assert_eq!(w(Rfc3042Cwnd, 2, 1, true), c(2), "XNU keeps no snd_limited");
        assert_eq!(w(Rfc3042Cwnd, 1, 0, false), None, "no new data waiting");
        for rule in [PerDupack, Nothing] {
            assert_eq!(w(rule, 1, 0, true), None);
        }
        assert_eq!(w(Rfc3042Flight, 0, 0, true), None, "not a duplicate ACK");
        assert_eq!(
            loss_limited_transmit_window(Rfc3042Flight, 4, 0, 0, flight, window, true, MSS),
            None,
            "no threshold"
        );
        // snd_limited counts data past snd_max only: resends leave it alone.
        assert_eq!(loss_limited_transmit_limited(0, 0, MSS), 0);
        assert_eq!(loss_limited_transmit_limited(0, m, MSS), 1);
        assert_eq!(loss_limited_transmit_limited(0, 1, MSS), 1);
        assert_eq!(loss_limited_transmit_limited(0, m + 1, MSS), 2);
        assert_eq!(loss_limited_transmit_limited(1, 0, MSS), 1);
    }

    /// The send loop under the RFC 3042 windows in the go-back-N on the second duplicate ACK of
    /// a run, the first having sent one resend beyond cwnd (one segment): two resends out since
    /// the timeout. FreeBSD's window (the flight plus two segments) lets two more resends from
    /// snd_nxt go, XNU's (cwnd plus two segments) one; the Linux credit none (nothing but
    /// resends was sent since the timeout, so its bound `tcp_limit_reno_sacked` leaves nothing
    /// to free), "none" none.
    #[test]
    fn test_loss_limited_transmit_resends_beyond_cwnd() {
        let board = || {
            let mut sb = outstanding(6);
            sb.on_rto();
            sb.on_retransmit(0, 20);
            sb.on_retransmit(1, 25);
            sb
        };
        let sb = board();
        let flight = sb.pipe();
        assert_eq!(flight, 2 * MSS as u64, "two resends out since the timeout");
        let base = SendState {
            snd_nxt: 6000,
            open: false,
            dupacks: 2,
            short_rexmit: true,
            ..state(&sb, MSS as u64)
        };
        let sent = |st: &SendState| {
            let mut sb = board();
            let mut n = 0;
            while let Step::Retransmit(i) = next_segment(st, &mut sb) {
                sb.on_retransmit(i, 30);
                n += 1;
            }
            n
        };
        let with = |rule| SendState {
            window: loss_limited_transmit_window(rule, 2, 3, 0, flight, base.window, true, MSS)
                .expect("a window"),
            ..base
        };
        assert_eq!(sent(&with(LossDupackCfg::Rfc3042Flight)), 2);
        assert_eq!(sent(&with(LossDupackCfg::Rfc3042Cwnd)), 1);
        let linux = SendState {
            left_by_dupacks: left_by_dupacks(LossDupackCfg::PerDupack, true, 2, MSS, 0),
            ..base
        };
        assert_eq!(sent(&linux), 0, "bounded by the segments not lost");
        assert_eq!(sent(&base), 0);
    }

    /// New segments the loop sends beyond a full window of 4 segments with `dupacks`
    /// duplicate ACKs counted (no SACK: the pipe does not shrink).
    fn sent_beyond_cwnd(dupacks: u32, dupthresh: u32) -> u32 {
        let mut sb = outstanding(4);
        let mut n = 0;
        loop {
            let s = SendState {
                dupacks,
                dupthresh,
                ..state(&sb, 4000)
            };
            match next_segment(&s, &mut sb) {
                Step::New(len) => {
                    sb.on_send_new(sb.out_bytes, len as u32, 0);
                    n += 1;
                }
                Step::CwndLimited => return n,
                other => panic!("unexpected {other:?}"),
            }
            assert!(n < 10, "runaway");
        }
    }

    #[test]
    fn test_limited_transmit_allows_at_most_two_segments_beyond_cwnd() {
        assert_eq!(sent_beyond_cwnd(0, 3), 0, "no duplicate ACK");
        assert_eq!(sent_beyond_cwnd(1, 3), 1);
        assert_eq!(sent_beyond_cwnd(2, 3), 2);
        assert_eq!(
            sent_beyond_cwnd(3, 3),
            0,
            "at DupThresh recovery takes over"
        );
        assert_eq!(sent_beyond_cwnd(5, 6), 2, "at most two (RFC 3042 §2)");
    }

    #[test]
    fn test_step_holds_on_zero_window() {
        let mut sb = Scoreboard::new(3);
        let s = SendState {
            rwnd: 0,
            ..state(&sb, 10_000)
        };
        let held = Step::Hold {
            persist: true,
            app_limited: true,
        };
        assert_eq!(next_segment(&s, &mut sb), held);
    }

    #[test]
    fn test_would_send_for_local_congestion() {
        let mut sb = outstanding(3);
        assert!(state(&sb, 4000).would_send(&sb));
        assert!(!state(&sb, 3000).would_send(&sb), "window full");
        let lt = SendState {
            dupacks: 1,
            ..state(&sb, 3000)
        };
        assert!(lt.would_send(&sb), "limited transmit");
        let no_data = SendState {
            app_end: Some(3000),
            ..state(&sb, 4000)
        };
        assert!(!no_data.would_send(&sb));
        sb.mark_head_lost();
        let full = SendState {
            window: 3000,
            ..no_data
        };
        assert!(
            full.would_send(&sb),
            "a lost segment fits (pipe 2 segments)"
        );
    }

    #[test]
    fn test_bsd_go_back_n_sends_the_window_fraction_as_a_short_segment() {
        // After a timeout everything is lost; the go-back-N has resent three segments and the
        // byte window (congestion avoidance: 3 segments + 486 bytes) leaves 486 bytes.
        let mut sb = outstanding(8);
        sb.on_rto();
        for _ in 0..3 {
            let i = sb.next_lost().unwrap();
            sb.on_retransmit(i, 10);
        }
        let s = SendState {
            open: false,
            snd_nxt: 8000,
            ..state(&sb, 3486)
        };
        // Whole segments only (knob off): the fraction waits.
        assert_eq!(next_segment(&s, &mut sb), Step::CwndLimited);
        assert!(!s.would_send(&sb));
        // 4.4BSD tcp_output: len = win − off < t_maxseg goes while snd_nxt < snd_max.
        let bsd = SendState {
            short_rexmit: true,
            ..s
        };
        assert!(bsd.would_send(&sb));
        assert_eq!(
            next_segment(&bsd, &mut sb),
            Step::RetransmitCut { i: 3, len: 486 }
        );
        assert_eq!(sb.recut_lost(3, 486, 0), 0);
        assert_eq!(sb.on_retransmit(3, 11), (3000, 486));
        // The window is full now; after an ACK of one segment and 438 bytes of growth the
        // next segment is a whole one from the odd offset.
        assert_eq!(next_segment(&bsd, &mut sb), Step::CwndLimited);
        let mut r = crate::tcp::scoreboard::AckResult::default();
        sb.on_cum_ack(1000, 20, &mut r);
        let after = SendState {
            snd_una: 1000,
            window: 3924,
            ..bsd
        };
        assert_eq!(
            next_segment(&after, &mut sb),
            Step::RetransmitCut { i: 3, len: 1000 }
        );
        assert_eq!(sb.recut_lost(3, 1000, 0), 0);
        assert_eq!(sb.on_retransmit(3, 21), (3486, 1000));
        assert_eq!(
            next_segment(&after, &mut sb),
            Step::RetransmitCut { i: 4, len: 438 }
        );
        sb.check_invariants();
    }

    #[test]
    fn test_rwnd_quirk_only_in_loss_periods() {
        assert_eq!(rwnd_for_new_data(5000, true, false), 5000);
        assert_eq!(rwnd_for_new_data(5000, false, true), 5000);
        assert!(rwnd_for_new_data(5000, true, true) > 1 << 60);
    }
}
