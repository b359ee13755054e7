//! Congestion episodes of the sending end, sans I/O: fast recovery (RFC 5681 §3.2, RFC 6675
//! §5, RFC 6582), the loss state after a retransmission timeout (RFC 6298 §5.4–5.6, RFC 5681
//! §3.1), local congestion (Linux's CWR state), and the undo of an episode found spurious.
//!
//! Owns the episode state: the window rule during recovery ([`Recovery`]), NewReno's recovery
//! point, the loss and CWR points, the undo detectors of [`super::undo`] and whether the fast
//! retransmit of the recovery just entered is still due. Decides, on each ACK and on each
//! timeout, which episode begins, ends or is undone; applies the consequences to the congestion
//! controller and the [`Scoreboard`] it is lent ([`Parts`]); returns what the sender must do
//! with its duplicate-ACK count, its timers and the controller's ACK event
//! ([`EpisodeOutcome`]). Sends nothing: the segments an episode releases go out in the sender's
//! send loop.

use super::undo::{
    BadRexmt, Frto, Frto26, Frto26Ack, Frto26Step, FrtoAck, FrtoResponseCfg, FrtoVariantCfg, Undo,
};
use super::SenderStats;
use crate::tcp::config::TcpConfig;
use crate::tcp::recovery::{AckInfo, Mode, Recovery};
use crate::tcp::rtt::{ts_ticks, RttEstimator};
use crate::tcp::scoreboard::{self, AckResult, Scoreboard, LOST};
use crate::time::Nanos;
use tcplab_cc::{CongestionControl, CongestionEvent, RtoEvent};

/// What an episode acts on, lent by the sender for one call.
pub struct Parts<'a> {
    pub cfg: &'a TcpConfig,
    pub cc: &'a mut dyn CongestionControl,
    pub sb: &'a mut Scoreboard,
    pub rtt: &'a mut RttEstimator,
    pub stats: &'a mut SenderStats,
}

/// The connection's sequence state at the call.
#[derive(Clone, Copy, Debug)]
pub struct Seq {
    pub now: Nanos,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Payload bytes per full segment.
    pub smss: u32,
    /// The peer's advertised receive window, scaled (the BSD stacks' `snd_wnd`).
    pub rwnd: u64,
}

/// What one acceptable ACK tells the episode rules, after the ACK part ([`super::ack`]) and
/// loss marking ([`super::loss`]) have taken it.
#[derive(Clone, Copy, Debug, Default)]
pub struct EpisodeAck {
    /// snd_una moved.
    pub advanced: bool,
    /// A duplicate ACK (RFC 5681 §2, RFC 6675 §2).
    pub is_dup: bool,
    /// The ACK carried SACK blocks.
    pub has_sack: bool,
    /// The connection negotiated SACK.
    pub sack_on: bool,
    /// Timestamps are on and this is the ACK's echo (RFC 7323).
    pub ts_on: bool,
    pub ts_ecr: u32,
    /// Scoreboard changes of this ACK.
    pub res: AckResult,
    /// Bytes this ACK's loss marking newly marked lost.
    pub lost_new: u64,
    /// Duplicate ACKs counted so far, this one included.
    pub dupacks: u32,
    /// New, never-sent data exists and the peer's window allows some (F-RTO step 2b).
    pub can_send_new: bool,
    /// Knob `recovery_entry_ack_grows`, and this ACK acked data in a state that lets Linux 2.x
    /// raise cwnd (neither Recovery nor CWR when it arrived): a recovery this ACK starts is not
    /// entered here but returned in [`EpisodeOutcome::entry_due`], for the sender to grow cwnd
    /// first.
    pub grow_before_entry: bool,
    /// The ACK carried a D-SACK block (RFC 2883; Linux `FLAG_DSACKING_ACK`).
    pub dsack: bool,
}

/// What the sender does after the episode rules took an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EpisodeOutcome {
    /// The duplicate-ACK count from now on (an undo resets it).
    pub dupacks: u32,
    /// Restart the retransmission timer now (NewReno's first partial ACK, RFC 6582 §3.2 step 5).
    pub restart_rto: bool,
    /// The controller hears this ACK as one in recovery: fast recovery, or a CWR episode for a
    /// controller that does not govern its own recovery.
    pub cc_in_recovery: bool,
    /// This ACK completed a CWR episode: the controller's `on_cwr_complete` follows its
    /// `on_ack`.
    pub cwr_done: bool,
    /// [`Mode::PrrReno`] (no SACK, Linux's bookkeeping): the data this ACK delivered as Linux
    /// counts it (bytes, whole segments; see [`Episodes::reno_sacks_on_ack`]); `None` in the
    /// other modes, where the scoreboard's count is Linux's.
    pub reno_delivered: Option<u64>,
    /// With [`EpisodeAck::grow_before_entry`]: fast recovery is due on this ACK and was not
    /// entered; the sender grows cwnd, then enters it with these `lost_new` and `delivered`
    /// ([`Episodes::enter_recovery`]).
    pub entry_due: Option<(u64, u64)>,
}

/// The episode state (see the module documentation).
#[derive(Clone, Debug)]
pub struct Episodes {
    /// Loss-recovery window rule (RFC 6675, NewReno, PRR, rate-halving).
    pub rec: Recovery,
    /// Last recovery point ("recover", RFC 6582 §3.2), guarding NewReno re-entry.
    pub recover: Option<u64>,
    /// After an RTO, until this offset is acknowledged (Linux "Loss" state; RFC 6582 recover).
    pub loss_point: Option<u64>,
    /// Local congestion (knob `local_congestion_cwr`): the CWR state lasts until this offset
    /// (Linux `high_seq`) is acknowledged.
    pub cwr_point: Option<u64>,
    /// Undo (knob `undo`): the state saved when a recovery or loss episode began.
    pub undo: Undo,
    /// Knob `undo_bad_rexmt`: set by the first timeout of an episode.
    pub bad_rexmt: Option<BadRexmt>,
    /// The fast retransmit of the recovery just entered, or the retransmission a NewReno partial
    /// ACK asks for, has not left yet: it goes out whatever the window (RFC 5681 §3.2 step 2,
    /// RFC 6675 §5 step 4.3, RFC 6582 §3.2 step 3).
    pub fast_rexmit_due: bool,
    /// Knob `frto`: F-RTO (RFC 5682) is deciding whether the last timeout was spurious.
    pub frto: Frto,
    /// Knob `frto_variant = "linux-2.6"`: Linux 2.6.24–3.9 F-RTO is running (see [`Frto26`]).
    pub frto26: Frto26,
    /// The CWR episode is F-RTO's rate-halving response (knob `frto_response =
    /// "ratehalving"`): cwnd goes down one segment every second ACK (Linux `tcp_cwnd_down`).
    pub cwr_halving: bool,
    /// `snd_cwnd_cnt` of `tcp_cwnd_down`: ACKs counted toward the next segment less.
    pub cwr_cnt: u32,
    /// Knob `cwnd_moderation`: after a recovery or loss episode that ended without an undo,
    /// Linux 2.4–3.x stays in the Disorder state (`undo_marker` still set, `tcp_try_to_open`)
    /// until snd_una passes the snd_nxt of that moment (`high_seq`); every ACK is then
    /// "dubious" and moderates cwnd ([`Episodes::moderation_cap`]).
    pub disorder_point: Option<u64>,
    /// [`Mode::PrrReno`] (knob `recovery_nosack = "prr-reno"`): bytes, in whole segments, that
    /// the duplicate ACKs say reached the receiver, Linux's `sacked_out` without SACK
    /// (`tcp_add_reno_sack`; see [`Episodes::reno_sacks_on_ack`]); left out of what is in
    /// flight ([`Episodes::in_flight`]). Always 0 in the other modes.
    pub reno_sacked: u64,
    /// Limited transmit (RFC 3042) in the current run of duplicate ACKs: (snd_una of the run,
    /// new bytes sent beyond the window by it). Knob `flightsize_excludes_limited_transmit`
    /// deducts them from the FlightSize of the fast retransmit ([`Episodes::enter_recovery`]).
    pub limited_sent: (u64, u64),
    /// Knob `fast_rexmit_alone`: the recovery just entered (NewReno, no SACK) sends its fast
    /// retransmission and nothing else on the entering ACK (sources at
    /// `crate::tcp::config` `fast_rexmit_alone`); cleared with `fast_rexmit_due` when the send
    /// opportunity has passed.
    pub rexmit_alone: bool,
}

impl Episodes {
    pub fn new(rec: Recovery) -> Self {
        Episodes {
            rec,
            recover: None,
            loss_point: None,
            cwr_point: None,
            undo: Undo::default(),
            bad_rexmt: None,
            fast_rexmit_due: false,
            frto: Frto::default(),
            frto26: Frto26::default(),
            cwr_halving: false,
            cwr_cnt: 0,
            disorder_point: None,
            reno_sacked: 0,
            limited_sent: (0, 0),
            rexmit_alone: false,
        }
    }

    /// Limited transmit sent `len` new bytes beyond the window in the run of duplicate ACKs
    /// at `snd_una` (see [`Episodes::limited_sent`]).
    #[inline]
    pub fn on_limited_transmit(&mut self, snd_una: u64, len: u64) {
        if self.limited_sent.0 == snd_una {
            self.limited_sent.1 += len;
        } else {
            self.limited_sent = (snd_una, len);
        }
    }

    /// What is in flight as the window rule counts it: the pipe (RFC 6675), less what the
    /// duplicate ACKs stand for without SACK in [`Mode::PrrReno`] — Linux's
    /// `tcp_packets_in_flight` = packets_out − (sacked_out + lost_out) + retrans_out, with
    /// `sacked_out` the count of duplicate ACKs.
    #[inline]
    pub fn in_flight(&self, sb: &Scoreboard) -> u64 {
        sb.pipe().saturating_sub(self.reno_sacked)
    }

    /// [`Mode::PrrReno`]: the duplicate-ACK count of one ACK as Linux keeps it without SACK
    /// (net/ipv4/tcp_input.c, read for the facts; nothing copied). Returns the ACK's
    /// DeliveredData (RFC 6937) as Linux counts it (`tcp_newly_delivered`):
    /// * an ACK that advances snd_una by `acked`: "one ACK acked hole, the rest eat duplicate
    ///   ACKs" (`tcp_remove_reno_sacks`): delivered max(acked − count, 1 segment), the count
    ///   less acked − 1 segment; outside recovery the count then starts again from zero
    ///   (`tcp_fastretrans_alert`, Open/Disorder: `tcp_reset_reno_sack` on an advance);
    /// * a duplicate ACK, in every state but Loss (there the send loop's own rule counts
    ///   them, `SendState::pipe`): one segment more, delivered (`tcp_add_reno_sack`), bounded
    ///   to the segments not marked lost (`tcp_limit_reno_sacked`: at most packets_out −
    ///   max(lost_out, 1)), so only what the bound lets in counts as delivered.
    fn reno_sacks_on_ack(&mut self, sb: &Scoreboard, smss: u64, a: &EpisodeAck) -> u64 {
        let mut delivered = 0;
        if a.advanced {
            let acked = a.res.bytes_acked;
            delivered = acked.saturating_sub(self.reno_sacked).max(smss.min(acked));
            self.reno_sacked = if self.rec.active {
                self.reno_sacked.saturating_sub(acked.saturating_sub(smss))
            } else {
                0
            };
        }
        // `tcp_limit_reno_sacked` (also after an advance, `tcp_check_reno_reordering`).
        let not_lost = sb.out_bytes.saturating_sub(sb.lost_bytes.max(smss));
        self.reno_sacked = self.reno_sacked.min(not_lost);
        if a.is_dup && self.loss_point.is_none() {
            let prior = self.reno_sacked;
            self.reno_sacked = (prior + smss).min(not_lost);
            delivered += self.reno_sacked.saturating_sub(prior);
        }
        delivered
    }

    /// Neither in fast recovery nor in the loss state after a timeout (limited transmit's
    /// condition, RFC 3042 §2).
    #[inline]
    pub fn open(&self) -> bool {
        !self.rec.active && self.loss_point.is_none()
    }

    /// No recovery, loss (RTO) episode, local CWR, undo, F-RTO or bad-retransmit check is
    /// pending: no episode rule can fire on an ACK that only advances snd_una (the sender's
    /// ACK fast path).
    #[inline]
    pub fn quiet(&self) -> bool {
        self.open()
            && self.cwr_point.is_none()
            && self.disorder_point.is_none()
            && !self.undo.active()
            && !self.frto.running()
            && !self.frto26.running()
            && self.bad_rexmt.is_none()
            && self.reno_sacked == 0
    }

    /// Whether an ACK outside recovery and loss starts fast recovery, with `dupacks` duplicate
    /// ACKs counted. SACK/FACK modes: RFC 6675 §5 (a) DupAcks ≥ DupThresh or (b)
    /// IsLost(HighACK + 1): the head marked lost, by this ACK or before. On the ACK that ends a
    /// recovery (exit is checked first) a loss found during it starts the next at once, as
    /// Linux's `tcp_fastretrans_alert` does (`tcp_time_to_recover`: `lost_out` > 0,
    /// net/ipv4/tcp_input.c): a controller that governs recovery (BBR) then sees Recovery →
    /// Recovery, with no restore and no new packet conservation between. NewReno: RFC 6582
    /// §3.2 step 1, only if the ACK covers more than `recover`.
    #[inline]
    pub fn recovery_due(
        &self,
        dupacks: u32,
        dupthresh: u32,
        snd_una: u64,
        sb: &Scoreboard,
    ) -> bool {
        if matches!(self.rec.mode, Mode::SackInflate | Mode::FreebsdSack) {
            // OpenBSD and FreeBSD tcp_input.c: `++tp->t_dupacks == tcprexmtthresh`, the
            // duplicate-ACK count only (sources at `Mode::SackInflate`, `Mode::FreebsdSack`).
            dupacks == dupthresh
        } else if self.rec.mode != Mode::NewReno {
            let head_lost = sb.front().is_some_and(|s| s.flags & LOST != 0);
            dupacks >= dupthresh || head_lost
        } else {
            dupacks == dupthresh && self.recover.is_none_or(|r| snd_una > r)
        }
    }

    /// Knob `freebsd_sack_rto_recovery` (sources at its use in [`Episodes::on_ack`]): in the
    /// loss state after a timeout, FreeBSD's SACK recovery starts on the third duplicate ACK
    /// whatever snd_recover (RELENG_5 `tcp_input.c` rev. 1.252.2.2). One test per ACK outside
    /// the fast path.
    #[inline]
    fn rto_sack_recovery_due(&self, p: &Parts, dupacks: u32) -> bool {
        p.cfg.freebsd_sack_rto_recovery
            && self.rec.mode == Mode::FreebsdSack
            && self.loss_point.is_some()
            && !self.rec.active
            && !self.frto26.running()
            && dupacks == p.cfg.dupthresh
            && !p.sb.is_empty()
    }

    /// Enter fast recovery: `lost_new` bytes were just marked lost, `delivered` delivered by
    /// the ACK (RFC 6937 DeliveredData).
    pub fn enter_recovery(&mut self, p: &mut Parts, s: Seq, lost_new: u64, delivered: u64) {
        p.stats.fast_retransmits += 1;
        let flight = p.sb.out_bytes;
        let prior_cwnd = p.cc.cwnd();
        self.begin_undo(p, s);
        // RFC 5681 §3.2 step 2: "if the sender is using limited transmit, the segments sent
        // by it MUST NOT be counted in FlightSize" for ssthresh = max(FlightSize / 2, 2·SMSS);
        // RFC 3042 §2 says the same ("the congestion window MUST NOT be reduced by the
        // segments sent by limited transmit"). Knob `flightsize_excludes_limited_transmit`:
        // the new bytes limited transmit sent in this run of duplicate ACKs (snd_una
        // unchanged since it began) are left out of the FlightSize the controller halves.
        // Off where a stack's own rule counts everything sent (Solaris: tcp_snxt − tcp_suna).
        let limited =
            if p.cfg.flightsize_excludes_limited_transmit && self.limited_sent.0 == s.snd_una {
                self.limited_sent.1
            } else {
                0
            };
        // Knob `newreno_entry_less_limited`: FreeBSD's snd_limited, the segments limited
        // transmit sent in this run (sources at `Recovery::less_limited`).
        let limited_segs = if p.cfg.newreno_entry_less_limited && self.limited_sent.0 == s.snd_una {
            self.limited_sent.1.div_ceil(u64::from(s.smss.max(1)))
        } else {
            0
        };
        self.limited_sent = (0, 0);
        Self::signal_congestion_in(
            p,
            s,
            lost_new.max(u64::from(s.smss)),
            flight.saturating_sub(limited),
        );
        // Knob `fast_rexmit_alone` (4.4BSD fast retransmit; sources at the knob): without
        // SACK, the entering ACK sends the retransmission only.
        self.rexmit_alone = p.cfg.fast_rexmit_alone && self.rec.mode == Mode::NewReno;
        // RFC 6675 §5 (4.3) / RFC 5681 §3.2 step 2: retransmit the first unacknowledged segment,
        // at once: neither rule makes it wait for the window (measured on this machine's kernel,
        // scripts/linux-6/newreno-fast-retransmit.pkt, where limited transmit has left more
        // in flight than the reduced window).
        p.sb.mark_head_lost();
        self.fast_rexmit_due = true;
        let ssthresh = p.cc.ssthresh();
        let set = self.rec.enter(
            s.snd_nxt,
            flight,
            prior_cwnd,
            ssthresh,
            delivered,
            self.in_flight(p.sb),
        );
        if let Some(w) = set {
            if !p.cc.governs_recovery() {
                p.cc.set_cwnd(w);
            }
        }
        if p.cfg.newreno_entry_less_limited {
            self.rec.less_limited(limited_segs);
        }
    }

    /// Knob `undo`: remember the window before a recovery or loss episode reduces it
    /// (see [`Undo::begin`]).
    fn begin_undo(&mut self, p: &Parts, s: Seq) {
        self.disorder_point = None;
        let head_retransmitted =
            !p.sb.is_empty() && p.sb.seg(0).flags & scoreboard::EVER_RETRANS != 0;
        self.undo.begin(
            p.cfg.undo,
            s.snd_una,
            p.cc.cwnd(),
            p.cc.ssthresh(),
            p.sb.retrans_bytes.div_ceil(u64::from(s.smss.max(1))),
            head_retransmitted,
        );
    }

    /// Undo the current episode's reduction (knob `undo`; see [`Undo::spurious`]). The caller
    /// resets the duplicate-ACK count.
    fn undo_now(&mut self, p: &mut Parts, s: Seq) {
        let (cwnd, ssthresh) = self.undo.take(p.cc.cwnd(), p.cc.ssthresh());
        p.stats.undos += 1;
        // Linux clears undo_marker with the undo.
        self.disorder_point = None;
        // The controller restores its own state (`on_undo`: CUBIC's W_max, RFC 9438 §4.9;
        // H-TCP's; BBR keeps its cwnd, Linux `bbr_undo_cwnd`), never below the current values
        // (Linux `tcp_undo_cwnd_reduction`: cwnd = max(cwnd, undo_cwnd()), ssthresh likewise).
        p.cc.on_undo(s.now, cwnd, ssthresh);
        if self.rec.active {
            self.rec.abort();
            self.recover = Some(s.snd_nxt);
        }
        if self.loss_point.take().is_some() {
            p.sb.undo_lost();
        }
    }

    /// An ACK advanced snd_una (before its RTT sample is taken). Knob `undo_bad_rexmt` (see
    /// [`BadRexmt::proves_spurious`]): restore cwnd and ssthresh exactly (`snd_cwnd_prev`,
    /// `snd_ssthresh_prev`) and send on from snd_max instead of going back. Returns whether it
    /// undid the timeout (then the caller resets the duplicate-ACK count).
    pub fn on_advance(&mut self, p: &mut Parts, now: Nanos) -> bool {
        let Some(b) = self.bad_rexmt.take() else {
            return false;
        };
        if !b.proves_spurious(p.rtt.backoff, now) {
            return false;
        }
        p.stats.undos += 1;
        p.cc.on_undo(now, b.prior_cwnd, b.prior_ssthresh);
        if self.loss_point.take().is_some() {
            p.sb.undo_lost();
        }
        // snd_recover_prev
        self.recover = b.prior_recover;
        // Knob `rtt_recompute_after_bad_rexmt` (XNU tcp_bad_rexmt_restore_state:
        // TF_RECOMPUTE_RTT, t_badrexmt_time = tcp_now, t_rxtshift = 0).
        p.rtt
            .on_bad_rexmt_undo(ts_ticks(now + p.cfg.clock_phase, p.cfg.clock_granularity));
        true
    }

    fn exit_recovery(&mut self, p: &mut Parts, s: Seq) {
        // Linux `tcp_fastretrans_alert` leaving Recovery without SACK: `tcp_reset_reno_sack`.
        self.reno_sacked = 0;
        if self.loss_point.is_none() {
            self.undo.clear(); // the episode ended without an undo
            self.enter_disorder(p, s);
        }
        self.recover = Some(self.rec.point);
        let mut below_max = None;
        if let Some(w) = self.rec.freebsd_walk() {
            // Knob `freebsd_sack_walk`: FreeBSD's snd_nxt still below snd_max (pulled back by
            // the persist stall) is pulled up to th_ack (`tcp_input`), and `tcp_output`, out of
            // fast recovery, sends from it in order again (tcp_input.c rev. 1.252.2.2,
            // tcp_output.c rev. 1.100.2.3; read for the facts, nothing copied): not in fast
            // recovery, `tcp_sack_output` is not asked; each pass starts with `tcp_sack_adjust`
            // (over SACKed data only) and sends len = min(sb_cc, sendwin) − off, off = snd_nxt −
            // snd_una, as in the go-back-N after a timeout (knob `go_back_n_off`,
            // `SendState::go_back_n_off`), until snd_nxt reaches snd_max.
            if w < s.snd_nxt {
                let from = w.max(s.snd_una);
                p.sb.pull_back_from(from);
                below_max = Some(from);
            }
        }
        let set = self.rec.exit(p.cc.ssthresh(), p.sb.out_bytes);
        if let Some(from) = below_max {
            if p.sb.lost_bytes > p.sb.retrans_bytes {
                self.rec.freebsd_exit_below_max(from);
            }
        }
        p.cc.on_recovery_exit(s.now);
        if let Some(w) = set {
            if !p.cc.governs_recovery() {
                p.cc.set_cwnd(w);
            }
        }
    }

    /// The episode rules on one acceptable ACK, in this order:
    /// 1. undo: every retransmission D-SACKed or an old timestamp echoed (knob `undo`), then
    ///    F-RTO's verdict (knob `frto`);
    /// 2. leave the recovery, loss and CWR states whose point the ACK covers;
    /// 3. outside recovery and loss, enter recovery when due ([`Episodes::recovery_due`]);
    ///    in recovery, the window rule's per-ACK step ([`Recovery::on_ack`]).
    #[inline]
    pub fn on_ack(&mut self, p: &mut Parts, s: Seq, a: &EpisodeAck) -> EpisodeOutcome {
        let res = &a.res;
        let mut dupacks = a.dupacks;
        // Linux 2.6 F-RTO keeps the Disorder state, where no undo is tried.
        if self.undo.active()
            && !self.frto26.running()
            && (a.advanced || a.has_sack)
            && self.undo.spurious(a.ts_on, a.ts_ecr, a.advanced)
        {
            self.undo_now(p, s);
            dupacks = 0;
        }
        if self.frto.running() {
            let spurious = self.frto.on_ack(&FrtoAck {
                in_loss: self.loss_point.is_some(),
                advanced_below_loss_point: a.advanced
                    && self.loss_point.is_some_and(|lp| s.snd_una < lp),
                // Without SACK a cumulative ACK that also covers a retransmission cannot show
                // that the originals got through (Linux tcp_clean_rtx_queue, tcp_is_reno: "If
                // any of the cumulatively ACKed segments was retransmitted, non-SACK case
                // cannot confirm that progress was due to original transmission", clearing
                // FLAG_ORIG_SACK_ACKED; 4.18, "tcp: prevent bogus FRTO undos with non-SACK
                // flows"): measured on this machine's kernel by scripts/linux-6/frto-nosack.pkt.
                // RFC 5682 §2.1 step 2a likewise reverts to conventional recovery when the first
                // ACK after the timeout covers `recover` (Windows' F-RTO: assumed the same).
                never_retransmitted_acked: res.rtt_xmit.is_some()
                    && (a.sack_on || !res.acked_retransmitted),
                sacked: res.bytes_sacked > 0,
                dup: a.is_dup,
                snd_nxt: s.snd_nxt,
                can_send_new: a.can_send_new,
            });
            if spurious && self.undo.active() {
                self.undo_now(p, s);
                dupacks = 0;
            }
        }

        let frto_hold = self.frto26.running() && self.frto26_on_ack(p, s, a);

        // Without SACK in Linux's PRR (knob `recovery_nosack`): the duplicate-ACK count and
        // this ACK's delivered data, before the states are left (Linux: `tcp_clean_rtx_queue`
        // before `tcp_fastretrans_alert`).
        let reno = self.rec.mode == Mode::PrrReno;
        let reno_delivered = if reno {
            self.reno_sacks_on_ack(p.sb, u64::from(s.smss), a)
        } else {
            0
        };

        // Leave recovery states whose point is now acknowledged.
        if self.disorder_point.is_some_and(|d| s.snd_una >= d) {
            self.disorder_point = None;
        }
        // Knob `reno_hold_at_recovery_point` (Linux 2.4/2.6 `tcp_fastretrans_alert` step E →
        // `tcp_try_undo_recovery`, read for the facts): without SACK, `snd_una == high_seq`
        // keeps the Recovery or Loss state ("Hold old state until something *above* high_seq
        // is ACKed"), `tcp_moderate_cwnd`, and returns before the state's per-ACK work (no
        // `tcp_cwnd_down`, no retransmission); Recovery first clears the duplicate-ACK count
        // (`tcp_reset_reno_sack`).
        let hold_at =
            |point: u64| p.cfg.reno_hold_at_recovery_point && !a.sack_on && s.snd_una == point;
        let mut held = false;
        // The recovery ended on this ACK and its rule grows no window on it (FreeBSD's SACK
        // recovery, `Recovery::grows_on_exit_ack`).
        let mut exit_without_growth = false;
        if self.rec.active && s.snd_una >= self.rec.point {
            if hold_at(self.rec.point) {
                held = true;
                self.reno_sacked = 0;
            } else {
                exit_without_growth = !self.rec.grows_on_exit_ack();
                self.exit_recovery(p, s);
            }
        }
        if self.loss_point.is_some_and(hold_at) && !self.rec.active {
            held = true;
        }
        if held && p.cfg.cwnd_moderation && !p.cc.governs_recovery() {
            // `tcp_moderate_cwnd`: cwnd = min(cwnd, in flight + tcp_max_burst), the burst
            // `tp->reordering` (3 in 2.4 and early 2.6 as a constant) — `moderation_cap`'s.
            let cap = p.sb.pipe() + u64::from(p.cfg.dupthresh) * u64::from(s.smss);
            if !(self.rec.active && self.rec.cap_window(cap)) && p.cc.cwnd() > cap {
                p.cc.set_cwnd(cap);
            }
        }
        if !held && self.loss_point.is_some_and(|lp| s.snd_una >= lp) {
            self.loss_point = None;
            if !self.rec.active {
                self.undo.clear();
                self.enter_disorder(p, s);
            }
        }
        // A CWR episode (local congestion) holds the window until everything sent before it is
        // acknowledged; Linux does not raise cwnd in CWR (`tcp_may_raise_cwnd`), and on the ACK
        // that completes it calls `tcp_complete_cwr` and returns to Open (2.6 tcp_input.c).
        let in_cwr = self.cwr_point.is_some();
        let cwr_done = self.cwr_point.is_some_and(|c| s.snd_una >= c);
        if cwr_done {
            self.cwr_point = None;
            self.cwr_halving = false;
        } else if in_cwr
            && self.cwr_halving
            && (a.advanced || res.bytes_sacked > 0 || (!a.sack_on && a.is_dup))
        {
            // F-RTO's rate-halving response (Linux 2.6 `tcp_cwnd_down` in the CWR state): one
            // segment less every second ACK that makes progress (or, without SACK, is a
            // duplicate), not below ssthresh, and never more than one segment above what is in
            // flight.
            let decr = self.cwr_cnt + 1;
            self.cwr_cnt = decr & 1;
            let smss = u64::from(s.smss);
            let mut w = p.cc.cwnd();
            if decr >> 1 > 0 && w > p.cc.ssthresh() {
                w -= smss * u64::from(decr >> 1);
            }
            p.cc.set_cwnd(w.min(p.sb.pipe() + smss).max(smss));
        }

        // RFC 6937 DeliveredData: Δsnd.una + ΔSACKed, where ΔSACKed nets out data SACKed
        // earlier and acknowledged cumulatively now (counted when it was SACKed).
        let delivered = if reno {
            reno_delivered
        } else {
            res.bytes_acked + res.bytes_sacked - res.bytes_acked_sacked
        };
        let mut restart_rto = false;
        let mut entry_due = None;
        if self.open() && !self.frto26.running() {
            if self.recovery_due(dupacks, p.cfg.dupthresh, s.snd_una, p.sb) && !p.sb.is_empty() {
                if a.grow_before_entry {
                    // Knob `recovery_entry_ack_grows` (Linux 2.4/2.6 `tcp_ack`: `tcp_cong_avoid`
                    // before `tcp_fastretrans_alert`): the sender grows cwnd, then enters.
                    entry_due = Some((a.lost_new, delivered));
                } else {
                    self.enter_recovery(p, s, a.lost_new, delivered);
                }
            }
        } else if self.rec.active && !held {
            let mut newly_lost = a.lost_new > 0;
            if reno && a.advanced && s.snd_una < self.rec.point {
                // A partial ACK without SACK: Linux `tcp_newreno_mark_lost` (Recovery, snd_una
                // advanced) marks the first unacknowledged segment lost before PRR runs; it
                // goes out at once, whatever the window, as NewReno's below (RFC 6582 §3.2
                // step 3).
                if p.sb.mark_head_lost() > 0 {
                    newly_lost = true;
                    self.fast_rexmit_due = true;
                }
            }
            let act = self.rec.on_ack(&AckInfo {
                advanced: a.advanced,
                newly_lost,
                is_dup: a.is_dup,
                bytes_acked: res.bytes_acked,
                delivered,
                pipe: self.in_flight(p.sb),
                progress: a.advanced || res.bytes_sacked > 0 || a.dsack,
                ssthresh: p.cc.ssthresh(),
                snd_una: s.snd_una,
                snd_nxt: s.snd_nxt,
                rexmit_out: p.sb.retrans_bytes,
            });
            if self.rec.mode == Mode::SackInflate && (a.is_dup || a.advanced) {
                // OpenBSD: each duplicate or partial ACK in recovery calls `tcp_output`, which
                // resends the first SACK-eligible hole whatever the window (sources at
                // `Mode::SackInflate`); the send loop stops after it (`one_rexmit_per_ack`).
                self.fast_rexmit_due = true;
            }
            if act.retransmit_head {
                // RFC 6582 §3.2 step 3 (partial ACK): "retransmit the first unacknowledged
                // segment" — at once, whatever the window, as the fast retransmit: FreeBSD's
                // tcp_newreno_partial_ack opens cwnd to one segment beyond the ACK for that one
                // tcp_output call (read for the facts). Gated by the deflated window, a sender
                // whose flight was far above ssthresh (slow start's overshoot) kept the hole
                // until the retransmission timer fired.
                p.sb.mark_head_lost();
                self.fast_rexmit_due = true;
            }
            restart_rto = act.restart_rto;
        } else if self.rto_sack_recovery_due(p, dupacks) {
            // Knob `freebsd_sack_rto_recovery`: FreeBSD RELENG_5's tcp_input.c rev. 1.252.2.2
            // (the Network Simulation Cradle 0.5.2's FreeBSD 5.3, github:sherry1989/inet branch
            // modifyForHttp_withNSC, 3rdparty/nsc-0.5.2/freebsd5/netinet; read for the facts,
            // nothing copied). `tcp_timer_rexmt` (tcp_timer.c rev. 1.66) frees the SACK holes,
            // sets snd_nxt = snd_una, snd_recover = snd_max, t_dupacks = 0 and leaves fast
            // recovery. At `++t_dupacks == tcprexmtthresh` the SACK branch tests only
            // IN_FASTRECOVERY (no snd_recover test: that one is NewReno's, in the `else if
            // (tcp_do_newreno)` branch), so the third duplicate ACK in the go-back-N starts a
            // SACK recovery as any other: snd_ssthresh from min(snd_wnd, snd_cwnd), snd_recover
            // = snd_max, sack_newdata = snd_nxt, snd_cwnd = 3 segments for one `tcp_output`,
            // then += snd_ssthresh. That `tcp_output` resends from the first hole, which
            // `tcp_sack_doack` rebuilt from the SACK blocks received since the timeout with
            // rxmit = start = th_ack: snd_una's segment goes again even if the go-back-N had
            // resent it (the lost retransmission these duplicate ACKs point at). Here the loss
            // state ends, the first record is made resendable (`mark_head_for_resend`) and the
            // recovery is entered as on any third duplicate ACK. Approximated with knob
            // `freebsd_sack_go_back_n` off: FreeBSD's rebuilt holes also let it resend, within
            // the window, the other un-SACKed segments below the highest SACK that the
            // go-back-N had resent; they stay counted as resent (in flight and in the window's
            // resent bytes).
            //
            // Knob `freebsd_sack_go_back_n` (the same files): `tcp_sack_option` rebuilds the
            // holes from the blocks received since the timeout — the first [th_ack, first
            // block), then one [rcv_lastsack, block start) for each block above rcv_lastsack,
            // rxmit = start in each, blocks splitting them — so every un-SACKed byte below the
            // highest SACK (rcv_lastsack) is a hole not yet resent, and `tcp_sack_output`
            // counts none of the go-back-N's retransmissions in sack_bytes_rxmt: the entry's
            // `tcp_output` and later ones resend them all again within min(snd_wnd, snd_cwnd)
            // − sack_bytes_rxmt (`Scoreboard::freebsd_rebuild_holes`). Above rcv_lastsack
            // there is no hole: what the go-back-N resent there is data below snd_nxt, and its
            // rest goes as new data from snd_nxt (sack_newdata = snd_nxt, where the go-back-N
            // had got to; `tcp_output` "new data" within snd_cwnd − (snd_nxt − sack_newdata) −
            // sack_bytes_rxmt; `send::next_segment_freebsd`). Approximated: when snd_nxt lies
            // below rcv_lastsack, FreeBSD's new data from snd_nxt resends the holes above it a
            // second time after the SACK retransmissions (tcp_sack_adjust skips SACKed data
            // only); here each goes once, its bytes counted in snd_nxt − sack_newdata as
            // FreeBSD counts them.
            self.loss_point = None;
            if p.cfg.freebsd_sack_go_back_n {
                let nxt = p.sb.freebsd_rebuild_holes(s.snd_nxt);
                self.enter_recovery(p, s, a.lost_new, delivered);
                self.rec.freebsd_go_back_n(nxt, p.cfg.freebsd_sack_walk);
            } else {
                p.sb.mark_head_for_resend();
                self.enter_recovery(p, s, a.lost_new, delivered);
            }
        }
        EpisodeOutcome {
            dupacks,
            restart_rto,
            cc_in_recovery: self.rec.active
                || exit_without_growth
                || (in_cwr && !p.cc.governs_recovery())
                || frto_hold,
            cwr_done,
            reno_delivered: reno.then_some(reno_delivered),
            entry_due,
        }
    }

    /// A retransmission timeout with data outstanding (RFC 6298 §5.4–5.6 and RFC 5681 §3.1):
    /// reduce the window, back off the timer; every outstanding segment is presumed lost
    /// (go-back-N from snd_una). The caller resets the duplicate-ACK count, restarts the timer
    /// with the backed-off RTO and runs the send loop, which retransmits the earliest segment.
    pub fn on_timeout(&mut self, p: &mut Parts, s: Seq, sack_on: bool) {
        if p.cfg.frto
            && p.cfg.frto_variant == FrtoVariantCfg::Linux26
            && (sack_on || !Self::retransmitted_beyond_head(p.sb))
        {
            self.enter_frto26(p, s, sack_on);
            return;
        }
        // Before the episode state below is cleared (knob `rto_keeps_recovery_ssthresh`).
        let keeps_ssthresh =
            p.cfg.rto_keeps_recovery_ssthresh && self.reduction_unfinished(s.snd_una);
        if self.cwr_halving {
            // tcp_enter_loss leaves the CWR state of F-RTO's response and aborts F-RTO.
            self.cwr_point = None;
            self.cwr_halving = false;
        }
        self.frto26 = Frto26::default();
        p.stats.timeouts += 1;
        self.fast_rexmit_due = false;
        // Linux `tcp_timeout_mark_lost` without SACK: `tcp_reset_reno_sack`.
        self.reno_sacked = 0;
        self.begin_undo(p, s);
        // FreeBSD tcp_timer_rexmt: on the first timeout (t_rxtshift becomes 1) remember the
        // window and open the bad-retransmit window, SRTT/2 long (t_srtt >> (TCP_RTT_SHIFT + 1)).
        // Approximation: FreeBSD re-enters a fast recovery the timeout interrupted
        // (TF_WASFRECOVERY); here the undo restores the window and recovery point only.
        self.bad_rexmt = BadRexmt::on_timeout(
            p.cfg.undo_bad_rexmt,
            p.rtt.backoff,
            s.now,
            p.rtt.srtt,
            p.cc.cwnd(),
            p.cc.ssthresh(),
            self.recover,
        );
        p.cc.on_rto(&RtoEvent {
            now: s.now,
            in_flight: p.sb.out_bytes,
            backoff_count: p.rtt.backoff + 1,
            mss: s.smss,
            peer_window: s.rwnd,
            in_recovery: self.rec.active,
            keeps_ssthresh,
        });
        let kept = sack_on && p.cfg.rto_keeps_sack && p.sb.on_rto_keep_sacked();
        if !kept {
            // SACK marks are forgotten; what they counted as delivered stays counted
            // (scoreboard COUNTED).
            p.sb.on_rto();
        }
        p.rtt.back_off();
        let was_recovery = self.rec.active;
        if self.rec.active {
            self.rec.abort();
        }
        // F-RTO (RFC 5682; Linux `tcp_enter_loss`: on every timeout except the first one of a
        // fast recovery, whose losses are known).
        self.frto
            .on_timeout(p.cfg.frto, was_recovery, p.rtt.backoff, s.snd_nxt);
        self.loss_point = Some(s.snd_nxt);
        self.recover = Some(s.snd_nxt);
    }

    /// Linux's Recovery or CWR state with snd_una still below the episode's point (`high_seq`):
    /// a reduction under way, whose ssthresh `tcp_enter_loss` keeps (knob
    /// `rto_keeps_recovery_ssthresh`; net/ipv4/tcp_input.c 2.4.27, 2.6.11, 6.x, read for the
    /// facts: it recomputes ssthresh only when `ca_state <= TCP_CA_Disorder`, when snd_una has
    /// reached `high_seq` (2.4/2.6 `snd_una == high_seq`, later `!after(high_seq, snd_una)`),
    /// or in Loss with no retransmission counted yet — the last is the first timeout of a new
    /// series here, which [`RtoEvent::sets_ssthresh`] lets through). The states as
    /// [`Episodes::ca_state`] orders them: Loss first, then Recovery, then CWR.
    pub fn reduction_unfinished(&self, snd_una: u64) -> bool {
        if self.loss_point.is_some() {
            false
        } else if self.rec.active {
            snd_una < self.rec.point
        } else {
            self.cwr_point.is_some_and(|c| snd_una < c)
        }
    }

    /// The controller's reduction for a congestion signal, its ssthresh rule for what is in
    /// flight: a fast retransmit (`lost_bytes` just marked lost), or a signal without a known
    /// loss (a local CWR, a Linux 2.6 F-RTO timeout: 0).
    fn signal_congestion(p: &mut Parts, s: Seq, lost_bytes: u64) {
        let in_flight = p.sb.out_bytes;
        Self::signal_congestion_in(p, s, lost_bytes, in_flight);
    }

    /// [`Episodes::signal_congestion`] with the FlightSize given.
    fn signal_congestion_in(p: &mut Parts, s: Seq, lost_bytes: u64, in_flight: u64) {
        p.cc.on_congestion_event(&CongestionEvent {
            now: s.now,
            in_flight,
            lost_bytes,
            srtt: p.rtt.srtt,
            min_rtt: p.rtt.min_rtt,
            mss: s.smss,
            peer_window: s.rwnd,
        });
    }

    /// Linux `tcp_use_frto` without SACK (2.6.24–3.9): the basic F-RTO only when nothing but
    /// the first segment was retransmitted (the segment after it is checked; with SACK, F-RTO
    /// is always used).
    fn retransmitted_beyond_head(sb: &Scoreboard) -> bool {
        sb.len() > 1 && sb.seg(1).flags & scoreboard::EVER_RETRANS != 0
    }

    /// Knob `frto_variant = "linux-2.6"`: a timeout starts Linux 2.6.24–3.9 F-RTO
    /// (net/ipv4/tcp_input.c `tcp_enter_frto`, read for the facts) instead of the loss state.
    /// ssthresh is reduced as `tcp_enter_loss` would (outside recovery and loss, or again after
    /// progress since the last timeout; computed for a cwnd of 2 segments when F-RTO was
    /// already running), cwnd is only capped at what is in flight plus one segment ("too bad if
    /// TCP was application limited"), the controller is not reset (the state becomes Disorder,
    /// not Loss), and only the first segment is resent (`tcp_retransmit_timer`). A recovery or
    /// loss episode the timeout interrupts ends; with SACK, its recovery point stays the mark
    /// above which SACKs prove nothing (RFC 4138 Appendix B).
    fn enter_frto26(&mut self, p: &mut Parts, s: Seq, sack_on: bool) {
        p.stats.timeouts += 1;
        let running = self.frto26.running();
        // tcp_enter_frto's condition is tcp_enter_loss's (plus "F-RTO running" beside Loss):
        // with knob `rto_keeps_recovery_ssthresh` a Recovery or CWR episode short of its
        // point keeps its ssthresh, one that reached it does not (reduction_unfinished).
        let settled = if p.cfg.rto_keeps_recovery_ssthresh {
            self.loss_point.is_none() && !self.reduction_unfinished(s.snd_una)
        } else {
            self.open()
        };
        let reduce =
            (settled && !running) || ((self.loss_point.is_some() || running) && p.rtt.backoff == 0);
        let smss = u64::from(s.smss);
        self.begin_undo(p, s);
        let cwnd = p.cc.cwnd();
        if reduce {
            if running {
                p.cc.set_cwnd(2 * smss);
            }
            Self::signal_congestion(p, s, 0);
            p.cc.set_cwnd(cwnd);
        }
        if !p.cc.governs_recovery() {
            p.cc.set_cwnd(cwnd.min(p.sb.pipe() + smss).max(smss));
        }
        let earlier = if self.rec.active {
            Some(self.rec.point)
        } else if running {
            Some(self.frto26.high_seq)
        } else {
            self.loss_point
        };
        let highmark = earlier
            .filter(|&h| sack_on && h > s.snd_una)
            .unwrap_or(s.snd_nxt);
        if self.rec.active {
            self.rec.abort();
        }
        if self.cwr_halving {
            self.cwr_point = None;
            self.cwr_halving = false;
        }
        self.loss_point = None;
        self.frto.high_seq = None;
        // The first segment goes out at once, whatever the window.
        p.sb.mark_head_for_resend();
        self.fast_rexmit_due = true;
        p.rtt.back_off();
        self.frto26 = Frto26 {
            stage: 1,
            highmark,
            high_seq: s.snd_nxt,
        };
        self.recover = Some(s.snd_nxt);
    }

    /// Knob `frto_variant = "linux-2.6"`: F-RTO rules one ACK ([`Frto26::on_ack`]) and the
    /// window follows (Linux `tcp_process_frto`, `tcp_enter_frto_loss` and the spurious-RTO
    /// responses, 2.6.24–3.9). Returns whether the controller must not grow cwnd on this ACK.
    fn frto26_on_ack(&mut self, p: &mut Parts, s: Seq, a: &EpisodeAck) -> bool {
        let res = &a.res;
        let smss = u64::from(s.smss);
        let first = self.frto26.stage == 1;
        let step = self.frto26.on_ack(&Frto26Ack {
            sack: a.sack_on,
            data_acked: a.advanced,
            sacked: res.bytes_sacked > 0,
            sacked_above_highmark: res.bytes_sacked > 0 && p.sb.high_sacked > self.frto26.highmark,
            not_dup: !a.is_dup,
            snd_una: s.snd_una,
            can_send_new: a.can_send_new,
        });
        let highmark = self.frto26.highmark;
        match step {
            Frto26Step::None => false,
            Frto26Step::Hold => true,
            Frto26Step::HoldNoNew => {
                // Linux counts the resent first segment twice in flight (its original is not
                // marked lost); the scoreboard counts it once.
                let w = p.cc.cwnd().min(p.sb.pipe() + smss);
                p.cc.set_cwnd(w.max(smss));
                true
            }
            Frto26Step::SendNew => {
                p.cc.set_cwnd(p.sb.pipe() + 2 * smss);
                self.frto.send_new = true; // new data before anything marked lost
                true
            }
            Frto26Step::Loss(allowed) => {
                // `tcp_enter_frto_loss`: the conventional recovery of a timeout: everything not
                // SACKed is lost and resent in order, the Loss state until `highmark`, the
                // controller's state reset as on entering Loss (CUBIC's `bictcp_state`), the
                // ssthresh of the timeout kept; what F-RTO sent after the timeout stays in
                // flight. `tcp_enter_frto_loss` (2.6.24–3.9, read for the facts) never calls
                // the congestion control's `ssthresh()`: the F-RTO entry already did, so the
                // controller hears a kept reduction (H-TCP resets its epoch without a new
                // β/α, as `htcp_state` on entering Loss does).
                let ssthresh = p.cc.ssthresh();
                p.cc.on_rto(&RtoEvent {
                    now: s.now,
                    in_flight: p.sb.out_bytes,
                    backoff_count: p.rtt.backoff.max(1),
                    mss: s.smss,
                    peer_window: s.rwnd,
                    in_recovery: false,
                    keeps_ssthresh: true,
                });
                p.cc.set_ssthresh(ssthresh);
                p.sb.on_frto_loss(highmark, first && !a.advanced);
                if !p.cc.governs_recovery() {
                    p.cc.set_cwnd((p.sb.pipe() + u64::from(allowed) * smss).max(smss));
                }
                self.loss_point = Some(highmark);
                true
            }
            Frto26Step::Spurious => {
                match p.cfg.frto_response {
                    FrtoResponseCfg::RateHalving => {
                        // `tcp_enter_cwr` without a new ssthresh: cwnd <= in flight + 1, the
                        // CWR state until everything sent so far is acknowledged.
                        self.undo.clear();
                        if !p.cc.governs_recovery() {
                            let w = p.cc.cwnd().min(p.sb.pipe() + smss);
                            p.cc.set_cwnd(w.max(smss));
                        }
                        self.cwr_point = Some(s.snd_nxt);
                        self.cwr_halving = true;
                        self.cwr_cnt = 0;
                        true
                    }
                    FrtoResponseCfg::Conservative => {
                        self.undo.clear();
                        if !p.cc.governs_recovery() {
                            let cap = p.sb.pipe() + u64::from(p.cfg.dupthresh) * smss;
                            let w = p.cc.cwnd().min(p.cc.ssthresh()).min(cap);
                            p.cc.set_cwnd(w.max(smss));
                        }
                        false
                    }
                    FrtoResponseCfg::Undo => {
                        if self.undo.active() {
                            self.undo_now(p, s);
                        }
                        false
                    }
                }
            }
        }
    }

    /// Local congestion: the host's transmit queue refused a segment. Linux before TCP small
    /// queues (3.6) got NET_XMIT_DROP from the qdisc in `tcp_transmit_skb` and called
    /// `tcp_enter_cwr` (net/ipv4/tcp_output.c, 2.4 and 2.6): ssthresh from the congestion
    /// control's `ssthresh()`, cwnd = min(cwnd, in flight + 1), CWR state until everything sent
    /// so far is acknowledged (`high_seq`); the segment was not lost and is sent when the queue
    /// has room. Approximation: cwnd goes to min(ssthresh, in flight + 1 segment) at once,
    /// where Linux lowers it by one segment every second ACK (`tcp_cwnd_down`) to the same end.
    pub fn enter_local_cwr(&mut self, p: &mut Parts, s: Seq) {
        if self.rec.active || self.loss_point.is_some() || self.cwr_point.is_some() {
            return; // Linux enters CWR only from the Open and Disorder states
        }
        let in_flight = p.sb.pipe();
        Self::signal_congestion(p, s, 0);
        if !p.cc.governs_recovery() {
            let w =
                p.cc.ssthresh()
                    .min(in_flight + s.smss as u64)
                    .max(s.smss as u64);
            p.cc.set_cwnd(w);
        }
        p.stats.local_cwr += 1;
        self.cwr_point = Some(s.snd_nxt);
    }

    /// The send loop had a send opportunity (it was not stopped by pacing or the host queue):
    /// what recovery entry or an F-RTO ACK released holds for the sends it allows. The fast
    /// retransmit goes out in the first send opportunity after recovery starts — the next
    /// pacing slot or the first room in the host queue, as RFC 6675 §5 step 4.3 and RFC 5681
    /// §3.2 step 2 retransmit on entry whatever the window — or, once that opportunity has
    /// passed, waits for the window like any other (a stale flag would send it beyond the
    /// window much later); F-RTO's new segments (RFC 5682 §2.1 step 2b: up to two) are not
    /// turned into retransmissions by a pacing gap between them.
    #[inline]
    pub fn send_opportunity_passed(&mut self) {
        self.fast_rexmit_due = false;
        self.rexmit_alone = false;
        self.frto.send_new = false;
    }

    /// Knob `cwnd_moderation`: an episode ended without an undo; Disorder until everything
    /// sent so far is acknowledged (see [`Episodes::disorder_point`]).
    fn enter_disorder(&mut self, p: &Parts, s: Seq) {
        if p.cfg.cwnd_moderation {
            self.disorder_point = Some(s.snd_nxt);
        }
    }

    /// Knob `cwnd_moderation` (Linux 2.4–3.x `tcp_moderate_cwnd`, "preventing bursts due to too
    /// big ACKs in dubious situations"; net/ipv4/tcp_input.c, read for the facts): on a dubious
    /// ACK — a duplicate, one that SACKs new data, or any ACK outside the Open state
    /// (`tcp_ack_is_dubious`, `dubious`) — that leaves the sender in Open or Disorder
    /// (`tcp_try_to_open`), cwnd is cut to what is in flight plus `tcp_max_burst`, which is
    /// `tp->reordering` (the duplicate-ACK threshold) segments. Returns that cap, if it
    /// applies. Linux applies it after the controller's growth on the same ACK
    /// (`tcp_cong_avoid` runs before `tcp_fastretrans_alert`).
    #[inline]
    pub fn moderation_cap(&self, p: &Parts, dupacks: u32, dubious: bool, smss: u32) -> Option<u64> {
        if !(p.cfg.cwnd_moderation && dubious) {
            return None;
        }
        // Open (0) too before Linux 2.6.39, Disorder (1) only after (knob
        // `cwnd_moderation_open`).
        let state = self.ca_state(dupacks, p.sb);
        let applies = state == 1 || (state == 0 && p.cfg.cwnd_moderation_open);
        applies.then(|| p.sb.pipe() + u64::from(p.cfg.dupthresh) * u64::from(smss))
    }

    /// The window the send loop uses: cwnd, except while Linux 2.6 F-RTO waits for the first
    /// ACK after the timeout, when only the resent first segment may go out. Linux holds the
    /// same with cwnd = in flight + 1 because it counts that segment twice in flight (its
    /// original is not marked lost, `tcp_enter_frto`); the scoreboard counts it once. In
    /// [`Mode::SackInflate`] the window covers everything outstanding outside the loss state,
    /// given in the pipe's terms ([`Recovery::window_over_flight`]).
    #[inline]
    pub fn send_window(&self, cwnd: u64, sb: &Scoreboard) -> u64 {
        if self.frto26.stage == 1 {
            cwnd.min(sb.pipe())
        } else if self.rec.mode == Mode::SackInflate && self.loss_point.is_none() {
            // The mode is tested first: the pipe is only computed where it is used.
            self.rec.window_over_flight(cwnd, sb.out_bytes, sb.pipe())
        } else {
            cwnd
        }
    }

    /// The state as Linux's `tcpi_ca_state` names it (include/uapi/linux/tcp.h
    /// `enum tcp_ca_state`): 4 Loss after an RTO until its recovery point is acknowledged,
    /// 3 Recovery, 2 CWR, 1 Disorder (duplicate ACKs counted or SACKed data outstanding, not
    /// yet in recovery; Linux 2.6 `tcp_try_to_open` enters Disorder while `tcp_left_out` —
    /// SACKed plus lost — is non-zero), 0 Open. O(1): the scoreboard keeps the SACKed bytes.
    /// Also the Open test of TSO deferral (`tcp_tso_should_defer`).
    #[inline]
    pub fn ca_state(&self, dupacks: u32, sb: &Scoreboard) -> u8 {
        if self.loss_point.is_some() {
            4
        } else if self.rec.active {
            3
        } else if self.cwr_point.is_some() {
            2
        } else if dupacks > 0
            || self.frto26.running()
            || sb.sacked_bytes > 0
            || self.disorder_point.is_some()
        {
            1
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::recovery::Mode;

    const MSS: u32 = 1000;
    const MS: Nanos = 1_000_000;

    /// A sender's parts with `n` full segments outstanding, a Reno controller whose window is
    /// 10 segments, and an RTT estimate of 100 ms.
    struct Bench {
        cfg: TcpConfig,
        cc: Box<dyn CongestionControl>,
        sb: Scoreboard,
        rtt: RttEstimator,
        stats: SenderStats,
    }

    impl Bench {
        fn new(cfg: TcpConfig, n: u64) -> Self {
            let init = tcplab_cc::CcInit {
                mss: MSS,
                initial_cwnd: 10 * MSS as u64,
                initial_ssthresh: u64::MAX,
                growth: tcplab_cc::WindowGrowth::default(),
            };
            let cc = tcplab_cc::build("reno", &[], init).unwrap();
            let mut sb = Scoreboard::new(cfg.dupthresh);
            for i in 0..n {
                sb.on_send_new(i * MSS as u64, MSS, i);
            }
            let mut rtt = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, MS, false);
            rtt.on_sample(100 * MS);
            Bench {
                cfg,
                cc,
                sb,
                rtt,
                stats: SenderStats::default(),
            }
        }

        fn parts(&mut self) -> Parts<'_> {
            Parts {
                cfg: &self.cfg,
                cc: &mut *self.cc,
                sb: &mut self.sb,
                rtt: &mut self.rtt,
                stats: &mut self.stats,
            }
        }

        /// The scoreboard takes a cumulative ACK up to `ack` and SACK blocks; returns what
        /// the episode rules hear of it (the loss marking of RFC 6675 included).
        fn ack(
            &mut self,
            snd_una: u64,
            ack: u64,
            sacks: &[(u64, u64)],
            dupacks: u32,
        ) -> EpisodeAck {
            let mut res = AckResult::default();
            if ack > snd_una {
                self.sb.on_cum_ack(ack, 0, &mut res);
            }
            for &(l, r) in sacks {
                self.sb.on_sack_block(l, r, 0, &mut res);
            }
            let lost_new = self.sb.mark_lost_by_sack();
            EpisodeAck {
                advanced: ack > snd_una,
                is_dup: ack == snd_una,
                has_sack: !sacks.is_empty(),
                sack_on: true,
                res,
                lost_new,
                dupacks,
                ..EpisodeAck::default()
            }
        }
    }

    fn seq(snd_una: u64, snd_nxt: u64) -> Seq {
        Seq {
            now: 1000 * MS,
            snd_una,
            snd_nxt,
            smss: MSS,
            rwnd: 1 << 30,
        }
    }

    fn episodes(mode: Mode) -> Episodes {
        Episodes::new(Recovery::new(mode, MSS, 3))
    }

    #[test]
    fn test_third_dupack_enters_recovery_and_reduces_window() {
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::Rfc6675);
        let s = seq(0, 10_000);
        for (k, right) in [(1, 2000), (2, 3000)] {
            let a = b.ack(0, 0, &[(1000, right)], k);
            let out = ep.on_ack(&mut b.parts(), s, &a);
            assert!(!ep.rec.active, "{k} duplicate ACKs");
            assert_eq!(out.dupacks, k);
        }
        let a = b.ack(0, 0, &[(1000, 4000)], 3);
        let out = ep.on_ack(&mut b.parts(), s, &a);
        assert!(ep.rec.active && ep.fast_rexmit_due);
        assert_eq!(
            ep.rec.point, 10_000,
            "RecoveryPoint = snd_nxt (RFC 6675 §5)"
        );
        assert!(out.cc_in_recovery);
        assert_eq!(b.stats.fast_retransmits, 1);
        // RFC 6675 §5 (4.2): cwnd = ssthresh = FlightSize / 2 (Reno).
        assert_eq!((b.cc.cwnd(), b.cc.ssthresh()), (5000, 5000));
        assert!(
            b.sb.front().is_some_and(|s| s.flags & LOST != 0),
            "head to resend"
        );
        assert!(!ep.quiet() && !ep.open());
    }

    #[test]
    fn test_limited_transmit_bytes_are_left_out_of_the_fast_retransmit_flightsize() {
        // RFC 5681 §3.2 step 2 / RFC 3042 §2: 10 segments out, then limited transmit sends 2
        // more on the first two duplicate ACKs; the third halves FlightSize without them (Reno
        // in the bytes unit: the FlightSize basis): (12 − 2) / 2 = 5 segments; 6 with the knob
        // off, or when the limited transmit belonged to an earlier run (another snd_una).
        let run = |excludes: bool, run_una: u64| {
            let cfg = TcpConfig {
                flightsize_excludes_limited_transmit: excludes,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 12);
            // Reno in the bytes unit ("auto" = FlightSize), its cwnd above what is out.
            let init = tcplab_cc::CcInit {
                mss: MSS,
                initial_cwnd: 20 * MSS as u64,
                initial_ssthresh: u64::MAX,
                growth: tcplab_cc::WindowGrowth {
                    unit: tcplab_cc::CwndUnit::Bytes,
                    ..tcplab_cc::WindowGrowth::default()
                },
            };
            b.cc = tcplab_cc::build("reno", &[], init).unwrap();
            let mut ep = episodes(Mode::Rfc6675);
            ep.on_limited_transmit(run_una, 1000);
            ep.on_limited_transmit(run_una, 1000);
            let s = seq(0, 12_000);
            for (k, right) in [(1, 2000), (2, 3000), (3, 4000)] {
                let a = b.ack(0, 0, &[(1000, right)], k);
                ep.on_ack(&mut b.parts(), s, &a);
            }
            assert!(ep.rec.active);
            assert_eq!(ep.limited_sent, (0, 0), "the run's count is spent");
            b.cc.ssthresh()
        };
        assert_eq!(run(true, 0), 5000);
        assert_eq!(run(false, 0), 6000);
        assert_eq!(run(true, 7000), 6000, "an earlier run's limited transmit");
    }

    #[test]
    fn test_fast_rexmit_alone_only_for_newreno_entry() {
        // Knob `fast_rexmit_alone` (4.4BSD): set on entering NewReno recovery, not for the SACK
        // modes, and cleared when the send opportunity has passed.
        for (mode, knob, want) in [
            (Mode::NewReno, true, true),
            (Mode::NewReno, false, false),
            (Mode::Rfc6675, true, false),
        ] {
            let cfg = TcpConfig {
                fast_rexmit_alone: knob,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(mode);
            ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
            assert_eq!(ep.rexmit_alone, want, "{mode:?} knob {knob}");
            ep.send_opportunity_passed();
            assert!(!ep.rexmit_alone);
        }
    }

    #[test]
    fn test_freebsd_sack_enters_on_third_dupack_only_and_exit_ack_grows_nothing() {
        // FreeBSD 5.3 (Mode::FreebsdSack): `++t_dupacks == tcprexmtthresh` alone starts the
        // recovery (RFC 6675 also enters when the head is lost by SACK); the window is one
        // segment; the ACK of snd_recover sets snd_max − th_ack + 1 segment and the
        // controller does not grow on it (`!IN_FASTRECOVERY` tested before the exit).
        let run = |mode: Mode| {
            let mut b = Bench::new(TcpConfig::default(), 10);
            let mut ep = episodes(mode);
            let s = seq(0, 10_000);
            // One ACK SACKs three segments: the head is lost by SACK, one duplicate ACK.
            let a = b.ack(0, 0, &[(1000, 4000)], 1);
            ep.on_ack(&mut b.parts(), s, &a);
            let early = ep.rec.active;
            for k in 2..=3 {
                let a = b.ack(0, 0, &[(1000, 4000 + 1000 * u64::from(k - 1))], k);
                ep.on_ack(&mut b.parts(), s, &a);
            }
            assert!(ep.rec.active);
            let entry_window = ep.rec.window(b.cc.cwnd());
            // The ACK of snd_recover (10 000), nothing left outstanding: 0 is below ssthresh.
            let a = b.ack(0, 10_000, &[], 0);
            let out = ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
            (early, entry_window, out.cc_in_recovery, b.cc.cwnd())
        };
        assert_eq!(run(Mode::Rfc6675), (true, 5000, false, 5000));
        let (early, window, no_growth, cwnd) = run(Mode::FreebsdSack);
        assert!(!early, "one duplicate ACK, however much it SACKs");
        assert_eq!(window, 1000);
        assert!(no_growth);
        assert_eq!(cwnd, 1000, "snd_max − th_ack + t_maxseg");
    }

    #[test]
    fn test_entry_ack_that_acked_data_leaves_the_entry_to_after_growth() {
        // Linux 2.x (knob `recovery_entry_ack_grows`): an ACK that advances snd_una by one
        // segment and SACKs three beyond a hole (FACK: 4 segments > reordering 3) starts fast
        // recovery. 10 segments out, cwnd 10 segments, rate-halving, Reno halving cwnd as
        // Linux's `tcp_recalc_ssthresh` (max(snd_cwnd >> 1, 2)).
        let bench = || {
            let mut b = Bench::new(TcpConfig::default(), 10);
            let init = tcplab_cc::CcInit {
                mss: MSS,
                initial_cwnd: 10 * MSS as u64,
                initial_ssthresh: u64::MAX,
                growth: tcplab_cc::WindowGrowth::default(),
            };
            let basis = [(
                "ssthresh_from".to_string(),
                tcplab_cc::ParamValue::Str("cwnd".into()),
            )];
            b.cc = tcplab_cc::build("reno", &basis, init).unwrap();
            b
        };
        let entry_ack = |b: &mut Bench, grow_before_entry| EpisodeAck {
            grow_before_entry,
            ..b.ack(0, 1000, &[(2000, 5000)], 0)
        };
        let s = seq(1000, 10_000);
        // Knob off: entered at once, ssthresh half of cwnd 10.
        let mut b = bench();
        let mut ep = episodes(Mode::RateHalving);
        let a = entry_ack(&mut b, false);
        let out = ep.on_ack(&mut b.parts(), s, &a);
        assert!(ep.rec.active && out.entry_due.is_none() && out.cc_in_recovery);
        assert_eq!(b.cc.ssthresh(), 5000);
        let off_cwnd = b.cc.cwnd();
        // Knob on: the episode rules leave the entry due (nothing reduced, nothing to
        // retransmit yet), and the controller hears the ACK outside recovery.
        let mut b = bench();
        let mut ep = episodes(Mode::RateHalving);
        let a = entry_ack(&mut b, true);
        let out = ep.on_ack(&mut b.parts(), s, &a);
        assert!(!ep.rec.active && !ep.fast_rexmit_due && !out.cc_in_recovery);
        assert_eq!(b.stats.fast_retransmits, 0);
        assert_eq!((b.cc.cwnd(), b.cc.ssthresh()), (10_000, u64::MAX));
        // Delivered: 1 segment acknowledged + 3 SACKed (RFC 6937 DeliveredData).
        assert_eq!(out.entry_due, Some((a.lost_new, 4000)));
        // With no growth in between, the deferred entry is the same entry.
        let (lost, delivered) = out.entry_due.unwrap();
        ep.enter_recovery(&mut b.parts(), s, lost, delivered);
        assert!(ep.rec.active && ep.fast_rexmit_due && ep.rec.point == 10_000);
        assert_eq!((b.cc.cwnd(), b.cc.ssthresh()), (off_cwnd, 5000));
        // The reduction starts from the grown window (Linux: tcp_cong_avoid's slow-start
        // increment, then ssthresh from snd_cwnd): cwnd 12 segments before the entry.
        let mut b = bench();
        let mut ep = episodes(Mode::RateHalving);
        let a = entry_ack(&mut b, true);
        let out = ep.on_ack(&mut b.parts(), s, &a);
        b.cc.set_cwnd(12_000);
        let (lost, delivered) = out.entry_due.unwrap();
        ep.enter_recovery(&mut b.parts(), s, lost, delivered);
        assert!(ep.rec.active && ep.fast_rexmit_due);
        assert_eq!(b.cc.ssthresh(), 6000);
        assert_eq!(b.stats.fast_retransmits, 1);
    }

    #[test]
    fn test_newreno_enters_once_per_window_of_data() {
        let b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::NewReno);
        assert!(!ep.recovery_due(2, 3, 0, &b.sb));
        assert!(ep.recovery_due(3, 3, 0, &b.sb));
        assert!(
            !ep.recovery_due(4, 3, 0, &b.sb),
            "only on the third (RFC 6582 §3.2 step 1)"
        );
        ep.recover = Some(5000);
        assert!(!ep.recovery_due(3, 3, 5000, &b.sb), "not above recover");
        assert!(ep.recovery_due(3, 3, 5001, &b.sb));
    }

    #[test]
    fn test_ack_of_recovery_point_ends_recovery() {
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::Rfc6675);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
        // A partial ACK keeps recovery.
        let a = b.ack(0, 4000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(4000, 10_000), &a);
        assert!(ep.rec.active && out.cc_in_recovery);
        // The ACK of the recovery point ends it; the controller hears it outside recovery.
        let a = b.ack(4000, 10_000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
        assert!(!ep.rec.active && !out.cc_in_recovery);
        assert_eq!(ep.recover, Some(10_000));
        assert!(ep.quiet(), "no undo kept without the knob");
        assert_eq!(
            b.cc.cwnd(),
            b.cc.ssthresh(),
            "RFC 6675: cwnd = ssthresh on exit"
        );
    }

    #[test]
    fn test_cwnd_moderation_after_recovery_until_its_data_is_acked() {
        // Knob `cwnd_moderation` (Linux 2.4–3.x): a recovery that ends without an undo leaves
        // the sender in Disorder until what was sent by then (snd_nxt 14 000) is acknowledged;
        // a dubious ACK there caps cwnd at in flight + 3 segments; an ACK in Open is not capped.
        let cfg = TcpConfig {
            cwnd_moderation: true,
            ..TcpConfig::default()
        };
        let mut b = Bench::new(cfg, 10);
        for i in 10..14u64 {
            b.sb.on_send_new(i * u64::from(MSS), MSS, i);
        }
        let mut ep = episodes(Mode::RateHalving);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
        let a = b.ack(0, 10_000, &[], 0);
        ep.on_ack(&mut b.parts(), seq(10_000, 14_000), &a);
        assert!(!ep.rec.active);
        assert_eq!(ep.disorder_point, Some(14_000));
        assert_eq!(ep.ca_state(0, &b.sb), 1, "Disorder");
        assert!(!ep.quiet(), "no fast path in Disorder");
        // In flight: the 4 segments above 10 000.
        assert_eq!(ep.moderation_cap(&b.parts(), 0, true, MSS), Some(7000));
        assert_eq!(ep.moderation_cap(&b.parts(), 0, false, MSS), None);
        let a = b.ack(10_000, 14_000, &[], 0);
        ep.on_ack(&mut b.parts(), seq(14_000, 14_000), &a);
        assert_eq!(ep.disorder_point, None);
        assert_eq!(ep.ca_state(0, &b.sb), 0, "Open");
        assert_eq!(
            ep.moderation_cap(&b.parts(), 1, true, MSS),
            Some(3000),
            "a duplicate ACK"
        );
        assert_eq!(ep.moderation_cap(&b.parts(), 0, false, MSS), None);
        // Without the knob nothing of this happens.
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::RateHalving);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
        let a = b.ack(0, 10_000, &[], 0);
        ep.on_ack(&mut b.parts(), seq(10_000, 14_000), &a);
        assert_eq!(ep.disorder_point, None);
        assert_eq!(ep.moderation_cap(&b.parts(), 1, true, MSS), None);
    }

    #[test]
    fn test_newreno_partial_ack_resends_next_hole_and_restarts_timer_once() {
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::NewReno);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 0, 0);
        let a = b.ack(0, 3000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(3000, 10_000), &a);
        assert!(out.restart_rto, "first partial ACK (RFC 6582 §3.2 step 5)");
        assert!(b
            .sb
            .front()
            .is_some_and(|s| s.start == 3000 && s.flags & LOST != 0));
        // RFC 6582 §3.2 step 3: the next hole goes out at once, whatever the window.
        assert!(ep.fast_rexmit_due);
        ep.fast_rexmit_due = false; // the send loop sent it
        let a = b.ack(3000, 5000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(5000, 10_000), &a);
        assert!(!out.restart_rto, "Impatient variant: only the first");
        assert!(ep.rec.active);
    }

    #[test]
    fn test_prr_reno_counts_duplicate_acks_as_delivered_segments() {
        // Linux's PRR without SACK (knob `recovery_nosack = "prr-reno"`): 10 segments out.
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::PrrReno);
        let s = seq(0, 10_000);
        let dup = |b: &mut Bench, k: u32| EpisodeAck {
            sack_on: false,
            ..b.ack(0, 0, &[], k)
        };
        for k in 1..=2 {
            let a = dup(&mut b, k);
            ep.on_ack(&mut b.parts(), s, &a);
            assert!(!ep.rec.active);
            assert_eq!(
                ep.reno_sacked,
                u64::from(k) * 1000,
                "Disorder: tcp_add_reno_sack"
            );
        }
        let a = dup(&mut b, 3);
        ep.on_ack(&mut b.parts(), s, &a);
        assert!(ep.rec.active && ep.fast_rexmit_due);
        // In flight 10 − 3 (duplicate ACKs) − 1 (the head, lost) = 6 segments > ssthresh 5:
        // PRR's proportional part, ⌈1 · 5 / 10⌉ = 1 segment, the fast retransmit alone.
        assert_eq!(ep.in_flight(&b.sb), 6000);
        assert_eq!(ep.rec.window(0), 7000);
        // Each further duplicate ACK is one more segment, bounded by the segments not marked
        // lost (`tcp_limit_reno_sacked`: 10 − 1).
        for k in 4..=14 {
            let a = dup(&mut b, k);
            ep.on_ack(&mut b.parts(), s, &a);
        }
        assert_eq!(ep.reno_sacked, 9000);
        // A partial ACK of 3 segments: the count loses 3 − 1, bounded by 7 − 1; the next hole
        // is marked lost and goes out at once (RFC 6582 §3.2 step 3).
        let a = EpisodeAck {
            sack_on: false,
            ..b.ack(0, 3000, &[], 0)
        };
        let out = ep.on_ack(&mut b.parts(), seq(3000, 10_000), &a);
        assert_eq!(ep.reno_sacked, 6000);
        // Delivered as Linux counts it (`tcp_remove_reno_sacks`): max(3 − 9, 1) segment; the
        // duplicate ACKs delivered the rest. The controller is credited with this.
        assert_eq!(out.reno_delivered, Some(1000));
        assert!(b
            .sb
            .front()
            .is_some_and(|s| s.start == 3000 && s.flags & LOST != 0));
        assert!(ep.fast_rexmit_due && ep.rec.active && !out.restart_rto);
        assert_eq!(ep.in_flight(&b.sb), 0);
        // The ACK of the recovery point ends recovery and the count (`tcp_reset_reno_sack`).
        let a = EpisodeAck {
            sack_on: false,
            ..b.ack(3000, 10_000, &[], 0)
        };
        let out = ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
        assert!(!ep.rec.active);
        assert_eq!(ep.reno_sacked, 0);
        assert!(ep.quiet());
        // 7 segments acknowledged, 6 of them counted by duplicate ACKs: 1 delivered.
        assert_eq!(out.reno_delivered, Some(1000));
        // Other modes leave the count to the scoreboard.
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::NewReno);
        let a = EpisodeAck {
            sack_on: false,
            ..b.ack(0, 3000, &[], 0)
        };
        assert_eq!(
            ep.on_ack(&mut b.parts(), seq(3000, 10_000), &a)
                .reno_delivered,
            None
        );
    }

    #[test]
    fn test_ack_of_cwr_point_reports_cwr_completion() {
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::Rfc6675);
        ep.enter_local_cwr(&mut b.parts(), seq(0, 10_000));
        assert_eq!(ep.cwr_point, Some(10_000));
        assert_eq!(b.stats.local_cwr, 1);
        // min(ssthresh 5000, in flight + 1 segment).
        assert_eq!(b.cc.cwnd(), 5000);
        ep.enter_local_cwr(&mut b.parts(), seq(0, 10_000));
        assert_eq!(b.stats.local_cwr, 1, "already in CWR");
        let a = b.ack(0, 6000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(6000, 10_000), &a);
        assert!(out.cc_in_recovery && !out.cwr_done, "CWR holds the window");
        let a = b.ack(6000, 10_000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
        assert!(out.cc_in_recovery && out.cwr_done, "completed by this ACK");
        assert_eq!(ep.cwr_point, None);
        let a = b.ack(10_000, 10_000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
        assert!(!out.cc_in_recovery && !out.cwr_done);
    }

    #[test]
    fn test_all_retransmissions_dsacked_undo_recovery() {
        let cfg = TcpConfig {
            undo: true,
            ..TcpConfig::default()
        };
        let mut b = Bench::new(cfg, 10);
        let mut ep = episodes(Mode::Rfc6675);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
        assert_eq!(b.cc.cwnd(), 5000);
        ep.undo.on_retransmit(77); // the fast retransmit
        ep.undo.on_dsack(1000); // ...reported as a duplicate (RFC 3708 §3)
        let a = b.ack(0, 1000, &[], 2);
        let out = ep.on_ack(&mut b.parts(), seq(1000, 10_000), &a);
        assert_eq!(b.stats.undos, 1);
        assert!(!ep.rec.active && !ep.undo.active());
        assert_eq!(out.dupacks, 0);
        assert_eq!(ep.recover, Some(10_000));
        assert_eq!(b.cc.cwnd(), 10_000, "the window before recovery");
    }

    /// Knob `freebsd_sack_go_back_n` (FreeBSD RELENG_5 tcp_input.c rev. 1.252.2.2, tcp_sack.c
    /// rev. 1.3.2.1, tcp_output.c rev. 1.100.2.3; sources at `Episodes::on_ack`): after a
    /// timeout the go-back-N resent 0..6000 of ten segments; the receiver SACKs 1000..2000 and
    /// 3000..4000 (three duplicate ACKs). The recovery the third starts has the holes 0..1000
    /// and 2000..3000 to resend again, nothing counted as resent (4000..6000, resent above the
    /// highest SACK, is sent data), and sack_newdata = 6000, where the go-back-N had got to.
    /// Knob off: only 0..1000 is resendable; 2000..3000, 4000..6000 stay counted as resent and
    /// sack_newdata is snd_max.
    #[test]
    fn test_freebsd_go_back_n_recovery_rebuilds_the_holes() {
        let run = |knob: bool| {
            let cfg = TcpConfig {
                freebsd_sack_rto_recovery: true,
                freebsd_sack_go_back_n: knob,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(Mode::FreebsdSack);
            ep.on_timeout(&mut b.parts(), seq(0, 10_000), true);
            for i in 0..6 {
                b.sb.on_retransmit(i, 0);
            }
            let s = seq(0, 10_000);
            for k in 1..=3u32 {
                let a = b.ack(0, 0, &[(3000, 4000), (1000, 2000)], k);
                ep.on_ack(&mut b.parts(), s, &a);
            }
            assert!(ep.rec.active);
            let mut holes = vec![];
            while let Some(i) = b.sb.next_lost() {
                let seg = b.sb.seg(i);
                if seg.start >= 6000 {
                    break;
                }
                holes.push(seg.start);
                b.sb.on_retransmit(i, 1);
            }
            (holes, ep.rec.freebsd_budget())
        };
        assert_eq!(run(true), (vec![0, 2000], Some((10_000, 6000, true, None))));
        assert_eq!(run(false), (vec![0], Some((10_000, 10_000, false, None))));
    }

    /// Knob `freebsd_sack_rto_recovery` (FreeBSD RELENG_5 tcp_input.c rev. 1.252.2.2): after a
    /// timeout the go-back-N resent 0..4000 and the resend of 0 was lost; 1000..4000 arrive
    /// again and the receiver answers three duplicate ACKs. With the knob the third starts a
    /// SACK recovery at once (no snd_recover test), snd_una's segment to be resent; without,
    /// the loss state holds and nothing below 4000 is resendable until the next timeout.
    #[test]
    fn test_freebsd_sack_third_dupack_after_a_timeout_starts_a_recovery() {
        let run = |knob: bool| {
            let cfg = TcpConfig {
                freebsd_sack_rto_recovery: knob,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(Mode::FreebsdSack);
            ep.on_timeout(&mut b.parts(), seq(0, 10_000), true);
            for i in 0..4 {
                b.sb.on_retransmit(i, 0);
            }
            let s = seq(0, 10_000);
            for k in 1..=3u32 {
                let a = b.ack(0, 0, &[(1000, 1000 + 1000 * u64::from(k))], k);
                ep.on_ack(&mut b.parts(), s, &a);
                if k < 3 {
                    assert!(!ep.rec.active, "{k} duplicate ACKs");
                }
            }
            (
                ep.rec.active,
                ep.loss_point,
                ep.fast_rexmit_due,
                b.sb.next_lost(),
                b.stats.fast_retransmits,
            )
        };
        assert_eq!(run(true), (true, None, true, Some(0), 1));
        assert_eq!(run(false), (false, Some(10_000), false, Some(4), 0));
    }

    #[test]
    fn test_timeout_enters_loss_state_until_its_point_is_acked() {
        let cfg = TcpConfig {
            frto: true,
            ..TcpConfig::default()
        };
        let mut b = Bench::new(cfg, 10);
        let mut ep = episodes(Mode::Rfc6675);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
        ep.on_timeout(&mut b.parts(), seq(0, 10_000), true);
        assert_eq!((b.stats.timeouts, b.rtt.backoff), (1, 1));
        assert!(
            !ep.rec.active && !ep.fast_rexmit_due,
            "the timeout took over"
        );
        assert_eq!((ep.loss_point, ep.recover), (Some(10_000), Some(10_000)));
        assert!(
            !ep.frto.running(),
            "not after the first timeout of a recovery (RFC 5682)"
        );
        assert_eq!(b.sb.lost_bytes, 10_000, "go-back-N from snd_una");
        assert_eq!(b.cc.cwnd(), 1000, "RFC 5681 §3.1: loss window");
        let a = b.ack(0, 4000, &[], 0);
        ep.on_ack(&mut b.parts(), seq(4000, 10_000), &a);
        assert_eq!(ep.loss_point, Some(10_000));
        assert!(
            !ep.open() && !ep.rec.active,
            "no fast recovery in the loss state"
        );
        let a = b.ack(4000, 10_000, &[], 0);
        ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
        assert!(ep.quiet());
        // A second timeout outside recovery starts F-RTO.
        let mut b = Bench::new(b.cfg.clone(), 10);
        ep.on_timeout(&mut b.parts(), seq(0, 10_000), true);
        assert_eq!(ep.frto.high_seq, Some(10_000));
    }

    #[test]
    fn test_reno_holds_loss_and_recovery_at_their_point_without_sack() {
        // Linux 2.x tcp_try_undo_recovery: without SACK, snd_una == high_seq keeps the state
        // (knob `reno_hold_at_recovery_point`); only an ACK above it leaves. With SACK, or
        // with the knob off, the state is left at the point.
        for (hold, sack_on) in [(true, false), (false, false), (true, true)] {
            let cfg = TcpConfig {
                reno_hold_at_recovery_point: hold,
                cwnd_moderation: true,
                ..TcpConfig::default()
            };
            let held = hold && !sack_on;
            // The loss state after a timeout.
            let mut b = Bench::new(cfg.clone(), 10);
            let mut ep = episodes(Mode::RateHalving);
            ep.on_timeout(&mut b.parts(), seq(0, 10_000), sack_on);
            let mut a = b.ack(0, 10_000, &[], 0);
            a.sack_on = sack_on;
            ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
            assert_eq!(
                ep.loss_point.is_some(),
                held,
                "loss, hold {hold} sack {sack_on}"
            );
            assert_eq!(ep.ca_state(0, &b.sb) == 4, held);
            // Recovery, point 10 000; the ACK of everything lands on it.
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(Mode::RateHalving);
            ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 1000, 0);
            let mut a = b.ack(0, 10_000, &[], 0);
            a.sack_on = sack_on;
            ep.on_ack(&mut b.parts(), seq(10_000, 12_000), &a);
            assert_eq!(ep.rec.active, held, "recovery, hold {hold} sack {sack_on}");
            if held {
                // tcp_moderate_cwnd (with `cwnd_moderation`): nothing in flight, so 3
                // segments at most.
                assert!(ep.rec.window(b.cc.cwnd()) <= 3 * u64::from(MSS));
                b.sb.on_send_new(10_000, MSS, 0);
                let mut a = b.ack(10_000, 11_000, &[], 0);
                a.sack_on = sack_on;
                ep.on_ack(&mut b.parts(), seq(11_000, 12_000), &a);
                assert!(!ep.rec.active, "an ACK above the point ends it");
            }
        }
    }

    #[test]
    fn test_frto_without_sack_needs_an_ack_of_originals_alone() {
        // Linux (4.18 on, tcp_clean_rtx_queue): without SACK a cumulative ACK that covers the
        // retransmitted head as well cannot prove the originals arrived, so F-RTO does not
        // undo; with SACK the same ACK does (never-retransmitted data acknowledged).
        for sack_on in [false, true] {
            let cfg = TcpConfig {
                frto: true,
                undo: true,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(Mode::NewReno);
            ep.on_timeout(&mut b.parts(), seq(0, 10_000), sack_on);
            assert!(ep.frto.running());
            let i = b.sb.next_lost().unwrap();
            b.sb.on_retransmit(i, 0);
            let mut a = b.ack(0, 10_000, &[], 0);
            a.sack_on = sack_on;
            assert!(a.res.acked_retransmitted && a.res.rtt_xmit.is_some());
            ep.on_ack(&mut b.parts(), seq(10_000, 10_000), &a);
            let undone = b.stats.undos == 1;
            assert_eq!(undone, sack_on, "sack_on {sack_on}");
            assert_eq!(b.cc.ssthresh() == u64::MAX, sack_on, "sack_on {sack_on}");
        }
    }

    /// Linux 2.6 F-RTO (knob `frto_variant = "linux-2.6"`): a timeout with 10 segments out,
    /// the first resent, its ACK answered with two new segments (offsets 10 000–12 000).
    fn frto26_after_first_ack() -> (Bench, Episodes) {
        let cfg = TcpConfig {
            frto: true,
            frto_variant: FrtoVariantCfg::Linux26,
            undo: true,
            ..TcpConfig::default()
        };
        let mut b = Bench::new(cfg, 10);
        let mut ep = episodes(Mode::Rfc6675);
        ep.on_timeout(&mut b.parts(), seq(0, 10_000), true);
        assert!(ep.frto26.running() && ep.fast_rexmit_due);
        assert_eq!(b.stats.timeouts, 1);
        assert_eq!(ep.loss_point, None, "Disorder, not Loss");
        assert_eq!(ep.ca_state(0, &b.sb), 1);
        assert_eq!(b.cc.cwnd(), 10_000, "cwnd kept (at most in flight + 1)");
        assert_eq!(
            b.cc.ssthresh(),
            5000,
            "ssthresh reduced as tcp_enter_loss would"
        );
        assert_eq!(b.sb.lost_bytes, 1000, "only the first segment is resent");
        let i = b.sb.next_lost().unwrap();
        assert_eq!(i, 0);
        b.sb.on_retransmit(i, 0);
        assert_eq!(
            ep.send_window(b.cc.cwnd(), &b.sb),
            b.sb.pipe(),
            "nothing new yet"
        );
        let mut a = b.ack(0, 1000, &[], 0);
        a.can_send_new = true;
        let out = ep.on_ack(&mut b.parts(), seq(1000, 10_000), &a);
        assert!(out.cc_in_recovery, "no growth on F-RTO's ACKs");
        assert_eq!(b.cc.cwnd(), 9000 + 2000, "in flight + 2 segments");
        assert!(ep.frto.send_new);
        b.sb.on_send_new(10_000, MSS, 0);
        b.sb.on_send_new(11_000, MSS, 0);
        (b, ep)
    }

    #[test]
    fn test_frto26_spurious_timeout_rate_halving() {
        let (mut b, mut ep) = frto26_after_first_ack();
        // Never-retransmitted data acknowledged: the timeout was spurious.
        let a = b.ack(1000, 2000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(2000, 12_000), &a);
        assert!(!ep.frto26.running());
        assert_eq!(b.stats.undos, 0, "tcp_frto_response 0 does not undo");
        assert!(!ep.undo.active());
        assert_eq!((ep.cwr_point, ep.ca_state(0, &b.sb)), (Some(12_000), 2));
        assert!(out.cc_in_recovery);
        assert_eq!(b.cc.cwnd(), 11_000, "in flight (10 segments) + 1");
        assert_eq!(b.cc.ssthresh(), 5000);
        // tcp_cwnd_down: one segment less every second ACK, never above in flight + 1 (this
        // bench sends nothing, so in flight shrinks by a segment per ACK), down to ssthresh.
        let mut cwnds = vec![];
        let mut una = 2000;
        while una < 8000 {
            let a = b.ack(una, una + 1000, &[], 0);
            una += 1000;
            ep.on_ack(&mut b.parts(), seq(una, 12_000), &a);
            cwnds.push(b.cc.cwnd() / 1000);
        }
        assert_eq!(cwnds, [10, 9, 8, 7, 6, 5]);
        let a = b.ack(una, 12_000, &[], 0);
        let out = ep.on_ack(&mut b.parts(), seq(12_000, 12_000), &a);
        assert!(out.cwr_done && !ep.cwr_halving && ep.cwr_point.is_none());
    }

    #[test]
    fn test_frto26_sack_of_new_data_falls_back_to_loss_recovery() {
        let (mut b, mut ep) = frto26_after_first_ack();
        // A duplicate ACK SACKing new data sent after the timeout: the loss was real.
        let a = b.ack(1000, 1000, &[(10_000, 11_000)], 1);
        let out = ep.on_ack(&mut b.parts(), seq(1000, 12_000), &a);
        assert!(!ep.frto26.running() && out.cc_in_recovery);
        assert_eq!(
            ep.loss_point,
            Some(10_000),
            "Loss state up to snd_nxt at the timeout"
        );
        assert_eq!(ep.ca_state(0, &b.sb), 4);
        assert_eq!(
            b.sb.lost_bytes, 9000,
            "everything sent before the timeout not SACKed"
        );
        assert_eq!(b.sb.pipe(), 1000, "the second new segment stays in flight");
        assert_eq!(b.cc.cwnd(), 4000, "in flight + 3 segments");
        assert_eq!(b.cc.ssthresh(), 5000, "the timeout's ssthresh kept");
        assert!(ep.undo.active(), "a later undo may still prove it spurious");
    }

    /// A controller that records whether its last timeout was a kept reduction
    /// ([`RtoEvent::keeps_ssthresh`]): 0 none yet, 1 recomputed, 2 kept.
    #[derive(Clone)]
    struct RtoProbe {
        cwnd: u64,
        ssthresh: u64,
        seen: std::sync::Arc<std::sync::atomic::AtomicU8>,
    }

    impl CongestionControl for RtoProbe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn on_ack(&mut self, _ev: &tcplab_cc::AckEvent) {}
        fn on_congestion_event(&mut self, _ev: &CongestionEvent) {}
        fn on_rto(&mut self, ev: &RtoEvent) {
            let kept = if ev.keeps_ssthresh { 2 } else { 1 };
            self.seen.store(kept, std::sync::atomic::Ordering::Relaxed);
            if ev.sets_ssthresh() {
                self.ssthresh = self.cwnd / 2;
            }
            self.cwnd = u64::from(ev.mss);
        }
        fn cwnd(&self) -> u64 {
            self.cwnd
        }
        fn ssthresh(&self) -> u64 {
            self.ssthresh
        }
        fn set_cwnd(&mut self, cwnd: u64) {
            self.cwnd = cwnd;
        }
        fn set_ssthresh(&mut self, ssthresh: u64) {
            self.ssthresh = ssthresh;
        }
    }

    #[test]
    fn test_frto26_fallback_to_loss_does_not_ask_for_a_new_ssthresh() {
        // Linux `tcp_enter_frto_loss` enters Loss without calling `ssthresh()` (the F-RTO
        // entry did): the controller hears a kept reduction.
        let (mut b, mut ep) = frto26_after_first_ack();
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
        b.cc = Box::new(RtoProbe {
            cwnd: b.cc.cwnd(),
            ssthresh: b.cc.ssthresh(),
            seen: seen.clone(),
        });
        let a = b.ack(1000, 1000, &[(10_000, 11_000)], 1);
        ep.on_ack(&mut b.parts(), seq(1000, 12_000), &a);
        assert_eq!(ep.loss_point, Some(10_000), "fell back to Loss");
        assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), 2);
        assert_eq!(b.cc.ssthresh(), 5000);
    }

    #[test]
    fn test_frto26_without_sack_gate_and_first_duplicate_ack() {
        let cfg = TcpConfig {
            frto: true,
            frto_variant: FrtoVariantCfg::Linux26,
            ..TcpConfig::default()
        };
        // tcp_use_frto without SACK: not when a segment beyond the first was retransmitted.
        let mut b = Bench::new(cfg.clone(), 10);
        b.sb.on_rto();
        for _ in 0..2 {
            let i = b.sb.next_lost().unwrap();
            b.sb.on_retransmit(i, 0);
        }
        let mut ep = episodes(Mode::NewReno);
        ep.on_timeout(&mut b.parts(), seq(0, 10_000), false);
        assert!(
            !ep.frto26.running() && ep.loss_point == Some(10_000),
            "conventional"
        );
        // Otherwise F-RTO; a duplicate ACK before any advance: the Loss state with cwnd = in
        // flight, the first segment's retransmission still counted in flight (not resent).
        let mut b = Bench::new(cfg, 10);
        let mut ep = episodes(Mode::NewReno);
        ep.on_timeout(&mut b.parts(), seq(0, 10_000), false);
        assert!(ep.frto26.running());
        let i = b.sb.next_lost().unwrap();
        b.sb.on_retransmit(i, 0);
        let mut a = b.ack(0, 0, &[], 1);
        a.sack_on = false;
        ep.on_ack(&mut b.parts(), seq(0, 10_000), &a);
        assert_eq!(ep.loss_point, Some(10_000));
        assert_eq!(b.sb.lost_bytes, 10_000);
        assert_eq!(
            b.sb.retrans_bytes, 1000,
            "the first segment's retransmission"
        );
        assert_eq!(b.cc.cwnd(), b.sb.pipe(), "in flight + 0 segments");
        assert_eq!(
            b.sb.next_lost(),
            Some(1),
            "go-back-N continues after the first segment"
        );
    }

    #[test]
    fn test_bad_retransmit_undone_by_early_ack() {
        let cfg = TcpConfig {
            undo_bad_rexmt: true,
            ..TcpConfig::default()
        };
        let mut b = Bench::new(cfg.clone(), 10);
        let mut ep = episodes(Mode::NewReno);
        let s = seq(0, 10_000);
        ep.on_timeout(&mut b.parts(), s, false);
        assert_eq!(b.cc.cwnd(), 1000);
        // Within SRTT/2 (50 ms) of the timeout: the original was acknowledged.
        assert!(ep.on_advance(&mut b.parts(), s.now + 49 * MS));
        assert_eq!((b.cc.cwnd(), b.stats.undos), (10_000, 1));
        assert_eq!((ep.loss_point, ep.recover), (None, None));
        assert_eq!(b.sb.lost_bytes, 0, "nothing resent");
        assert!(!ep.on_advance(&mut b.parts(), s.now + 49 * MS), "once");
        // Too late: the window stays reduced.
        let mut b = Bench::new(cfg, 10);
        let mut ep = episodes(Mode::NewReno);
        ep.on_timeout(&mut b.parts(), s, false);
        assert!(!ep.on_advance(&mut b.parts(), s.now + 50 * MS));
        assert_eq!(b.cc.cwnd(), 1000);
    }

    #[test]
    fn test_send_opportunity_ends_fast_retransmit_and_frto_release() {
        let mut ep = episodes(Mode::Rfc6675);
        ep.fast_rexmit_due = true;
        ep.frto.send_new = true;
        ep.send_opportunity_passed();
        assert!(!ep.fast_rexmit_due && !ep.frto.send_new);
    }

    #[test]
    fn test_ca_state_names() {
        let mut b = Bench::new(TcpConfig::default(), 10);
        let mut ep = episodes(Mode::Rfc6675);
        assert_eq!(ep.ca_state(0, &b.sb), 0);
        assert_eq!(ep.ca_state(1, &b.sb), 1);
        // SACKed data outstanding with no duplicate ACK counted (e.g. the ACK that ended a
        // recovery left SACKed segments above snd_una): still Disorder.
        b.sb.on_sack_block(
            u64::from(MSS),
            2 * u64::from(MSS),
            1,
            &mut AckResult::default(),
        );
        assert_eq!(ep.ca_state(0, &b.sb), 1);
        ep.cwr_point = Some(1);
        assert_eq!(ep.ca_state(0, &b.sb), 2);
        ep.enter_recovery(&mut b.parts(), seq(0, 10_000), 0, 0);
        assert_eq!(ep.ca_state(0, &b.sb), 3);
        ep.on_timeout(&mut b.parts(), seq(0, 10_000), false);
        assert_eq!(ep.ca_state(0, &b.sb), 4);
    }

    /// Knob `rto_keeps_recovery_ssthresh` (Linux `tcp_enter_loss`): which states keep the
    /// ssthresh of the reduction under way — Recovery or CWR short of its point — and which do
    /// not (Open, Disorder, the point reached, Loss).
    #[test]
    fn test_reduction_unfinished_follows_linux_states() {
        let mut ep = episodes(Mode::Rfc6675);
        assert!(!ep.reduction_unfinished(0), "Open");
        ep.disorder_point = Some(5000);
        assert!(!ep.reduction_unfinished(0), "Disorder");
        ep.rec.active = true;
        ep.rec.point = 10_000;
        assert!(ep.reduction_unfinished(9999), "Recovery below high_seq");
        assert!(
            !ep.reduction_unfinished(10_000),
            "Recovery at high_seq (!after)"
        );
        ep.rec.active = false;
        ep.cwr_point = Some(8000);
        assert!(ep.reduction_unfinished(7000), "CWR below high_seq");
        assert!(!ep.reduction_unfinished(8000), "CWR at high_seq");
        ep.loss_point = Some(9000);
        assert!(
            !ep.reduction_unfinished(7000),
            "Loss: the first timeout after progress reduces"
        );
    }

    /// A timeout in a fast recovery short of its point (the bench's Reno counts in packets, its
    /// basis is cwnd): with the Linux rule the recovery's ssthresh stays (5 segments, half the
    /// 10 at entry); without it the timeout halves again the window the RFC 6675 recovery set
    /// (5 segments: 2, whole segments). cwnd is one segment either way.
    #[test]
    fn test_timeout_in_recovery_keeps_ssthresh_with_linux_rule() {
        for keep in [true, false] {
            let cfg = TcpConfig {
                rto_keeps_recovery_ssthresh: keep,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(Mode::Rfc6675);
            let s = seq(0, 10_000);
            for (k, right) in [(1, 2000), (2, 3000), (3, 4000)] {
                let a = b.ack(0, 0, &[(1000, right)], k);
                ep.on_ack(&mut b.parts(), s, &a);
            }
            assert!(ep.rec.active);
            assert_eq!(b.cc.ssthresh(), 5000);
            // A partial ACK: still in recovery, 6 segments outstanding.
            let a = b.ack(0, 4000, &[], 0);
            ep.on_ack(&mut b.parts(), seq(4000, 10_000), &a);
            assert!(ep.rec.active && ep.reduction_unfinished(4000));
            ep.on_timeout(&mut b.parts(), seq(4000, 10_000), false);
            let want = if keep { 5000 } else { 2000 };
            assert_eq!(b.cc.ssthresh(), want, "keep={keep}");
            assert_eq!(b.cc.cwnd(), u64::from(MSS));
            assert_eq!(ep.ca_state(0, &b.sb), 4);
        }
    }

    /// A timeout in a local CWR episode (Linux `tcp_enter_cwr`: ssthresh 5 segments, cwnd cut
    /// to 5): kept under the Linux rule, recomputed from the reduced window without it (2).
    #[test]
    fn test_timeout_in_cwr_keeps_ssthresh_with_linux_rule() {
        for keep in [true, false] {
            let cfg = TcpConfig {
                rto_keeps_recovery_ssthresh: keep,
                ..TcpConfig::default()
            };
            let mut b = Bench::new(cfg, 10);
            let mut ep = episodes(Mode::Rfc6675);
            ep.enter_local_cwr(&mut b.parts(), seq(0, 10_000));
            assert_eq!((b.cc.ssthresh(), b.cc.cwnd()), (5000, 5000));
            let a = b.ack(0, 4000, &[], 0);
            ep.on_ack(&mut b.parts(), seq(4000, 10_000), &a);
            ep.on_timeout(&mut b.parts(), seq(4000, 10_000), false);
            let want = if keep { 5000 } else { 2000 };
            assert_eq!(b.cc.ssthresh(), want, "keep={keep}");
        }
    }
}
