//! Loss recovery: how much the sender may send between detecting a loss and the recovery point
//! being acknowledged. A part of its own (style.md habit 3): the congestion controller sets
//! `ssthresh` when recovery starts; loss *detection* (which segments are lost) is the
//! scoreboard's; this module only decides the window during recovery and when it ends.
//!
//! | mode | window during recovery | source |
//! |---|---|---|
//! | RFC 6675 | cwnd = ssthresh from the start; send while pipe < cwnd | RFC 6675 §5 (4.2) |
//! | NewReno | ssthresh + 3·SMSS, +SMSS per further dupACK, deflated by partial ACKs | RFC 6582 §3.2, RFC 5681 §3.2 |
//! | PRR | PRR-SSRB: sending proportional to delivered data towards ssthresh | RFC 6937 §3 |
//! | PRR without SACK | PRR, each duplicate ACK one delivered segment; a partial ACK marks the next hole lost | Linux ≥ 3.2 `tcp_add_reno_sack`, `tcp_newreno_mark_lost` |
//! | rate-halving | cwnd −1 segment every second ACK down to ssthresh (or ssthresh/2), ≤ in_flight + 1, from the entry ACK on (knobs `rate_halving_*`) | Linux 2.4–3.1 `tcp_cwnd_down` (stacks-and-ccas.md A.1) |
//! | sack-inflate | ssthresh + 3·SMSS, +SMSS per further dupACK, −SMSS per SACK retransmission (one per ACK, whatever the window), partial ACK: −acked +2·SMSS; new data while snd_nxt − snd_una < cwnd | OpenBSD 3.x `tcp_input.c` / `tcp_output.c` ([`Mode::SackInflate`]) |
//! | freebsd-sack | 1·SMSS on entry, +SMSS per further dupACK while pipe < ssthresh (≤ ssthresh); holes resent within cwnd − resent bytes, new data within cwnd − resent − new since entry; partial ACK: resent + new since entry + 1 or 2·SMSS | FreeBSD 5.3 `tcp_sack.c` / `tcp_input.c` / `tcp_output.c` ([`Mode::FreebsdSack`]) |

use crate::tcp::config::{RecoveryCfg, RecoveryNosackCfg};

/// FreeBSD RELENG_5 tcp_input.c rev. 1.252.2.2: `tcp_sack_recovery_initburst` = 3
/// (net.inet.tcp.sack.initburst), the segments the entry of a SACK recovery may send.
const FREEBSD_SACK_INITBURST: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Rfc6675,
    NewReno,
    Prr,
    /// PRR without SACK as Linux ≥ 3.2 runs it (knob `recovery_nosack = "prr-reno"`): the
    /// window rule of [`Mode::Prr`], fed by the episode's count of duplicate ACKs as delivered
    /// segments (`Episodes::reno_sacked`, Linux `tcp_add_reno_sack`); a partial ACK marks the
    /// next hole lost (Linux `tcp_newreno_mark_lost`).
    PrrReno,
    RateHalving,
    /// OpenBSD's SACK recovery (knob `recovery = "sack-inflate"`): the SACK code that came to
    /// OpenBSD from the PSC/Mathis work, as compiled by GENERIC (`option TCP_SACK`, `TCP_FACK`
    /// commented out: sys/conf/GENERIC rev. 1.156, 2010; `tcp_do_sack` = 1 whenever TCP_SACK is
    /// compiled in, tcp_subr.c rev. 1.13, 1999, and the 2004 tree below). Read for the facts,
    /// nothing copied, in OpenBSD sys/netinet/tcp_input.c rev. 1.158.2.3 (the OPENBSD_3_5
    /// branch, 2005-01, as merged with rev. 1.168 of 2004-05 into MirOS,
    /// github:roytam1/mirbsd-cvs src/sys/netinet/tcp_input.c), rev. 1.194 (2005-12) and rev.
    /// 1.27 (1999), which agree on every line below, and tcp_output.c rev. 1.79 (2005, MirOS),
    /// rev. 1.109 (2015) and rev. 1.13 (1998):
    /// * the third duplicate ACK (`++t_dupacks == tcprexmtthresh`): snd_ssthresh = max(2,
    ///   min(snd_wnd, snd_cwnd) / 2 / t_maxseg) segments, snd_last = snd_max, the timer off,
    ///   then `tcp_output`, which sends "the oldest SACK-eligible rtx" (`tcp_sack_output`: the
    ///   first hole with `dups` ≥ tcprexmtthresh and rxmit below its end), and after it
    ///   snd_cwnd = snd_ssthresh + t_maxseg · t_dupacks;
    /// * each further duplicate ACK: snd_cwnd += t_maxseg, `tcp_output`;
    /// * `tcp_output` in recovery (t_dupacks ≥ tcprexmtthresh, `!sendalot`): a SACK-eligible
    ///   hole is resent, min(t_maxseg, hole end − rxmit) bytes, whatever the window (`if
    ///   (sack_rxmit) goto send`), and "since we're replacing a (future) new transmission with
    ///   a retransmission now", snd_cwnd −= t_maxseg while snd_una < snd_last; a SACK
    ///   retransmission leaves `sendalot` clear, so the call ends there: one per call, i.e.
    ///   per ACK. With no eligible hole it sends new data as always: len = min(sb_cc, win) −
    ///   off, win = min(snd_wnd, snd_cwnd), off = snd_nxt − snd_una — the inflated window over
    ///   everything outstanding, SACKed data included (no pipe);
    /// * a partial ACK (`tcp_sack_partialack`, th_ack < snd_last): the timer off, snd_cwnd −=
    ///   the bytes acked and += t_maxseg (or snd_cwnd = t_maxseg when not above the bytes
    ///   acked), then in tcp_input snd_cwnd += t_maxseg and `tcp_output`; t_dupacks is kept,
    ///   the timer is armed again by the ACK's own processing (any ACK short of snd_max);
    /// * the ACK of snd_last: snd_cwnd = snd_ssthresh, or snd_max − th_ack when less, and
    ///   t_dupacks = 0, so the same ACK's window growth follows (t_dupacks < tcprexmtthresh):
    ///   one t_maxseg more, as in slow start (cw ≤ snd_ssthresh).
    ///
    /// Approximations: a hole's `dups` (one per SACK block above it, tcprexmtthresh at once
    /// when a block ends three segments beyond it) is RFC 6675's IsLost here (the scoreboard's
    /// loss marks); FACK (`snd_awnd`, off by default) is not modelled.
    SackInflate,
    /// FreeBSD 5.3's SACK recovery (knob `recovery = "freebsd-sack"`): the SACK code that
    /// first shipped in 5.3 (tcp_sack.c, `net.inet.tcp.sack.enable` = 1). Read for the facts,
    /// nothing copied, in FreeBSD's 2004–2005 tcp_sack.c, tcp_input.c and tcp_output.c as
    /// the index holds them ('$FreeBSD$' unexpanded, undated): the earliest tcp_sack.c (holes
    /// in a linked list, `tcp_sack_option`, no `tcp_sacked_bytes`), a later one (holes in a
    /// TAILQ, `tcp_sacked_bytes`) with the tcp_input.c that calls it, and tcp_output.c of the
    /// era and later (the SACK parts below unchanged), checked against NetBSD's port, whose
    /// tcp_sack.c names FreeBSD's RELENG_5 rev. 1.3.2.2 (2004-12-25) as its origin
    /// (tcp_congctl.c, `tcp_newreno_fast_retransmit_newack`):
    /// * the third duplicate ACK (`++t_dupacks == tcprexmtthresh`, outside recovery):
    ///   snd_ssthresh = max(min(snd_wnd, snd_cwnd) / 2 / t_maxseg, 2) segments (the
    ///   controller's), `ENTER_FASTRECOVERY`, snd_recover = snd_max, the timer off,
    ///   sack_newdata = snd_nxt, snd_cwnd = t_maxseg, `tcp_output`: the first hole, the
    ///   segment at snd_una, goes;
    /// * each further duplicate ACK in recovery: the pipe, snd_nxt − snd_una less the SACKed
    ///   bytes and the hole bytes not yet resent (`tcp_sacked_bytes`), is computed, and only
    ///   if it is below snd_ssthresh does snd_cwnd grow by t_maxseg, capped at snd_ssthresh;
    ///   then `tcp_output`;
    /// * `tcp_output` in recovery: `tcp_sack_output` returns the first hole with bytes not yet
    ///   resent (every hole below the highest SACKed byte; no duplicate-ACK threshold per
    ///   hole) and sack_bytes_rxmt, the bytes resent from the holes up to it; the hole is
    ///   resent within cwin = min(snd_wnd, snd_cwnd) − sack_bytes_rxmt, not beyond
    ///   snd_recover, and the call loops (`sendalot`); with no hole left, new data goes
    ///   within snd_cwnd − (snd_nxt − sack_newdata) − sack_bytes_rxmt (and the peer's
    ///   window), or, if nothing was resent (sack_bytes_rxmt = 0), as outside recovery:
    ///   min(snd_wnd, snd_cwnd) − (snd_nxt − snd_una);
    /// * a partial ACK (th_ack < snd_recover, `tcp_sack_partialack`): the timer off, snd_cwnd
    ///   = sack_bytes_rxmt + (snd_nxt − sack_newdata) + 1 segment, 2 when more than 2
    ///   segments were acked, then `tcp_output`; the ACK's processing arms the timer again
    ///   and grows no window (`!IN_FASTRECOVERY` is required). Knob `sack_partial_ack_cap`:
    ///   the later tcp_sack.c (the one with `tcp_sacked_bytes`) caps this at snd_ssthresh;
    ///   the earliest one and NetBSD's port of RELENG_5's rev. 1.3.2.2 do not;
    /// * the ACK of snd_recover: snd_cwnd = snd_max − th_ack + t_maxseg when snd_max − th_ack
    ///   is below snd_ssthresh, else snd_ssthresh; the same ACK grows no window (the growth
    ///   test runs before `EXIT_FASTRECOVERY`).
    ///
    /// Which revision 5.3 shipped is not settled (tcp_sack.c 1.3 on RELENG_5): the cap is
    /// left out by default, as in the earliest file and in NetBSD's port of the December 2004
    /// RELENG_5 revision. The duplicate-ACK rule above was read only in the later tcp_input.c
    /// (the earliest tcp_sack.c has no `tcp_sacked_bytes`, and no tcp_input.c of its age was
    /// found): an assumption. Approximations: the scoreboard's duplicate ACK (RFC 6675:
    /// it must bring new SACK information) stands for FreeBSD's (no data, same window);
    /// retransmissions are whole records (FreeBSD may cut a short one to fit cwin).
    ///
    /// Knob `freebsd_sack_rules = "inflate"`: RELENG_5 as of November 2004, read for the facts
    /// (nothing copied) in the files the Network Simulation Cradle 0.5.2 ships as its "FreeBSD
    /// 5.3" (freebsd5/netinet, expanded RCS ids: tcp_input.c 1.252.2.2 2004/11/29, tcp_sack.c
    /// 1.3.2.1 2004/11/08, tcp_output.c 1.100.2.3 2004/11/08, tcp_var.h 1.109.2.1; held in
    /// github:sherry1989/inet branch modifyForHttp_withNSC, 3rdparty/nsc-0.5.2), the branch
    /// three weeks after 5.3-RELEASE (2004-11-06, tcp_sack.c 1.3), before the December rev.
    /// 1.3.2.2 that NetBSD ported:
    /// * the third duplicate ACK (outside recovery; with SACK no snd_recover test): snd_ssthresh
    ///   as above, `ENTER_FASTRECOVERY`, snd_recover = snd_max, the timer off, sack_newdata =
    ///   snd_nxt, snd_cwnd = t_maxseg · `tcp_sack_recovery_initburst` (3), `tcp_output` (up to
    ///   three segments: holes first, then new data within snd_cwnd − (snd_nxt − sack_newdata) −
    ///   sack_bytes_rxmt), then snd_cwnd += snd_ssthresh;
    /// * each further duplicate ACK: snd_cwnd += t_maxseg (no pipe test), `tcp_output`;
    /// * `tcp_output` as above (tcp_output.c 1.100.2.3 has the same SACK rules);
    /// * a partial ACK (`tcp_sack_partialack`): the timer off, snd_cwnd = sack_bytes_rxmt +
    ///   (snd_nxt − sack_newdata) + t_maxseg and TF_ACKNOW for one `tcp_output`, snd_cwnd
    ///   restored, then `snd_cwnd -= (th_ack − snd_una − t_maxseg)` (a 32-bit u_long, as
    ///   NewReno's, [`Recovery::newreno_partial_ack_u32`]); the ACK's processing re-arms the
    ///   timer and its window update calls `tcp_output` again with the deflated snd_cwnd;
    /// * the ACK of snd_recover: as above.
    ///
    /// No partial-ACK cap (knob `sack_partial_ack_cap` has no effect here) and no pipe test.
    /// Whether 5.3-RELEASE's own rev. 1.3 had these rules is not read.
    FreebsdSack,
}

impl Mode {
    /// The mode for a configuration and whether SACK was negotiated: every SACK-based mode falls
    /// back to the no-SACK rule `nosack` (knob `recovery_nosack`: NewReno, or Linux's PRR
    /// without SACK).
    pub fn select(cfg: RecoveryCfg, sack: bool, nosack: RecoveryNosackCfg) -> Mode {
        match (cfg, sack) {
            (RecoveryCfg::Newreno, _) => Mode::NewReno,
            (_, false) => match nosack {
                RecoveryNosackCfg::Newreno => Mode::NewReno,
                RecoveryNosackCfg::PrrReno => Mode::PrrReno,
            },
            (RecoveryCfg::Sack, true) => Mode::Rfc6675,
            (RecoveryCfg::Prr, true) => Mode::Prr,
            (RecoveryCfg::Ratehalving, true) => Mode::RateHalving,
            (RecoveryCfg::SackInflate, true) => Mode::SackInflate,
            (RecoveryCfg::FreebsdSack, true) => Mode::FreebsdSack,
        }
    }

    /// Whether loss is detected with FACK (Linux 2.4–3.1) rather than RFC 6675 `IsLost`.
    pub fn uses_fack(self) -> bool {
        self == Mode::RateHalving
    }
}

/// What the ACK being processed did, as recovery needs it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo {
    pub advanced: bool,
    /// The ACK marked segments lost that were not lost before.
    pub newly_lost: bool,
    pub is_dup: bool,
    pub bytes_acked: u64,
    /// Bytes newly acknowledged or SACKed (RFC 6937 DeliveredData).
    pub delivered: u64,
    /// Pipe after the ACK was processed.
    pub pipe: u64,
    /// The ACK advanced snd_una, SACKed new data or carried a D-SACK (Linux 2.6.23+
    /// `FLAG_ANY_PROGRESS | FLAG_DSACKING_ACK`; rate-halving with `rh_progress_only`).
    pub progress: bool,
    pub ssthresh: u64,
    pub snd_una: u64,
    /// [`Mode::FreebsdSack`]: snd_nxt, and the bytes resent from holes and not yet SACKed or
    /// acknowledged (FreeBSD's sack_bytes_rxmt), after the ACK was processed.
    pub snd_nxt: u64,
    pub rexmit_out: u64,
}

/// Actions the sender must take after an ACK in recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Actions {
    /// Mark the segment at snd_una lost (NewReno partial ACK).
    pub retransmit_head: bool,
    /// Restart the retransmission timer (NewReno's first partial ACK).
    pub restart_rto: bool,
}

#[derive(Clone, Debug)]
pub struct Recovery {
    pub mode: Mode,
    pub active: bool,
    /// RecoveryPoint (RFC 6675) / recover (RFC 6582): snd_nxt at entry.
    pub point: u64,
    smss: u64,
    dupthresh: u64,
    /// NewReno's and sack-inflate's inflated window, rate-halving's shrinking window or
    /// FreeBSD's snd_cwnd in its SACK recovery.
    cwnd: u64,
    /// [`Mode::FreebsdSack`]: snd_nxt at entry (FreeBSD's sack_newdata).
    pub sack_newdata: u64,
    /// [`Mode::SackInflate`]: the fast retransmit has not left yet; its `t_maxseg` taken back
    /// is overwritten by the entry's snd_cwnd = ssthresh + 3·SMSS (see
    /// [`Recovery::on_retransmit`]).
    entry_rexmit_pending: bool,
    first_partial: bool,
    // PRR state (RFC 6937 §3).
    recover_fs: u64,
    prr_delivered: u64,
    prr_out: u64,
    prr_window: u64,
    // Rate-halving: ACKs since the last decrement.
    rh_acks: u32,
    /// PRR-SSRB's extra segment only on ACKs that advance snd_una and mark nothing newly lost
    /// (knob `prr_ssrb_on_advance`), else on every ACK (RFC 6937 §3.1 as published).
    pub ssrb_on_advance: bool,
    /// Rate-halving (knob `rate_halving_entry_cut`): Linux 2.x's `tcp_cwnd_down` already runs
    /// on the ACK that enters Recovery (see [`Recovery::enter`]).
    pub rh_entry_cut: bool,
    /// Rate-halving (knob `rate_halving_floor_half`): the decrement stops at ssthresh/2
    /// (Linux 2.4 and 2.6 ≤ 2.6.12, `tcp_reno_min_cwnd`), not at ssthresh.
    pub rh_floor_half: bool,
    /// Rate-halving (knob `rate_halving_progress_only`): only ACKs with [`AckInfo::progress`]
    /// step the walk and clamp it (Linux 2.6.23+), not every ACK in recovery.
    pub rh_progress_only: bool,
    /// [`Mode::FreebsdSack`] (knob `sack_partial_ack_cap`): a partial ACK's window is capped at
    /// ssthresh.
    pub partial_ack_cap: bool,
    /// [`Mode::NewReno`] (knob `partial_ack_u32_deflation`): FreeBSD 5.x's window arithmetic,
    /// a 32-bit `u_long` (see [`Recovery::newreno_partial_ack_u32`]).
    pub u32_deflation: bool,
    /// [`Mode::NewReno`] (knob `newreno_exit_no_growth`): the ACK that ends the recovery grows
    /// no window (see [`Recovery::grows_on_exit_ack`]).
    pub exit_no_growth: bool,
    /// [`Mode::NewReno`] (knob `newreno_exit_bsd_window`): the exit's window is FreeBSD's,
    /// snd_max − th_ack + t_maxseg when that flight is below ssthresh, else ssthresh (see
    /// [`Recovery::exit`]).
    pub exit_bsd_window: bool,
    /// [`Mode::FreebsdSack`] (knob `freebsd_sack_rules = "inflate"`): RELENG_5's rules of
    /// November 2004 (see [`Mode::FreebsdSack`]).
    pub freebsd_inflate: bool,
    /// [`Mode::FreebsdSack`] (knob `freebsd_sack_partial_hole`): part of a hole goes when the
    /// window holds less than its record (`crate::tcp::sender::send::next_segment_freebsd`).
    pub freebsd_partial_hole: bool,
    /// [`Mode::FreebsdSack`] with `freebsd_inflate`: the snd_cwnd that holds from the next ACK
    /// on, after a `tcp_output` that ran with a window of its own (the entry's three segments,
    /// a partial ACK's `tcp_sack_partialack`).
    pending_cwnd: Option<u64>,
    /// [`Mode::FreebsdSack`] with `freebsd_inflate`, during a partial ACK's sending:
    /// `tcp_sack_partialack`'s own `tcp_output` (its snd_cwnd, and the snd_una it runs with,
    /// the one before the ACK), which comes before the ACK's second `tcp_output` with the
    /// deflated window (see [`Recovery::freebsd_first_pass`]).
    first_pass: Option<(u64, u64)>,
    /// [`Mode::FreebsdSack`] (knob `freebsd_sack_go_back_n`): this recovery started in the
    /// go-back-N after a timeout; sack_newdata is FreeBSD's snd_nxt there, and the lost records
    /// from it and above the highest SACK go as new data (see [`Recovery::freebsd_go_back_n`]).
    gbn: bool,
    /// [`Mode::FreebsdSack`] with `gbn` (knob `freebsd_sack_walk`): FreeBSD's snd_nxt while it
    /// lies below snd_max, walking on from sack_newdata over everything not SACKed once no hole
    /// is left to resend (see `crate::tcp::sender::send::next_segment_freebsd`); u64::MAX once
    /// it has caught up with snd_max (it then moves with it).
    walk: Option<u64>,
}

impl Recovery {
    pub fn new(mode: Mode, smss: u32, dupthresh: u32) -> Self {
        Recovery {
            mode,
            active: false,
            point: 0,
            smss: smss.max(1) as u64,
            dupthresh: dupthresh as u64,
            cwnd: 0,
            sack_newdata: 0,
            entry_rexmit_pending: false,
            first_partial: false,
            recover_fs: 0,
            prr_delivered: 0,
            prr_out: 0,
            prr_window: 0,
            rh_acks: 0,
            ssrb_on_advance: false,
            rh_entry_cut: false,
            rh_floor_half: false,
            rh_progress_only: false,
            partial_ack_cap: false,
            u32_deflation: false,
            exit_no_growth: false,
            exit_bsd_window: false,
            freebsd_inflate: false,
            freebsd_partial_hole: false,
            pending_cwnd: None,
            first_pass: None,
            gbn: false,
            walk: None,
        }
    }

    /// Knob `partial_ack_u32_deflation`: FreeBSD 5.2.1's `tcp_newreno_partial_ack`
    /// (sys/netinet/tcp_input.c of the 5.2.1-RELEASE tree, github:kaizendesu/FreeBSD-5.2, and
    /// rev. 1.252.2.2 of RELENG_5, 2004-11-29, as NSC 0.5.2 ships it for "FreeBSD 5.3"; read
    /// for the facts, nothing copied): the timer off, snd_nxt = th_ack, snd_cwnd = t_maxseg +
    /// (th_ack − snd_una) and TF_ACKNOW for one `tcp_output` (off = th_ack − snd_una, so exactly
    /// the segment at th_ack goes), snd_cwnd and snd_nxt restored, then `snd_cwnd -= (th_ack −
    /// snd_una − t_maxseg)` with no test: tcp_seq and u_int operands, snd_cwnd a `u_long`, 32
    /// bits on i386. More acknowledged than snd_cwnd + t_maxseg wraps snd_cwnd to nearly 2^32,
    /// so min(snd_wnd, snd_cwnd) is the peer's window until the recovery ends (the full ACK
    /// sets snd_cwnd from snd_ssthresh); exactly that much leaves 0. The same ACK's processing
    /// then calls `tcp_output` again (needoutput, set by the window update of an ACK that
    /// advances snd_wl2), which sends new data within the deflated snd_cwnd counted from the
    /// new snd_una — the send loop here. FreeBSD fixed the wrap later (`if (snd_cwnd > acked)
    /// snd_cwnd -= acked; else snd_cwnd = 0; snd_cwnd += t_maxseg`). With a window of 0
    /// that `tcp_output` stops the retransmission timer and arms the persist timer (at least
    /// 5 s), and duplicate ACKs are ignored while no retransmission timer runs: knob
    /// `partial_ack_zero_persist` (`crate::tcp::sender::Sender::bsd_zero_window`).
    /// i386 is assumed (on amd64 `u_long` has 64 bits and a partial ACK of less than a segment
    /// wraps as well).
    #[inline]
    fn newreno_partial_ack_u32(cwnd: u64, acked: u64, smss: u64) -> u64 {
        u64::from((cwnd as u32).wrapping_sub((acked as u32).wrapping_sub(smss as u32)))
    }

    /// Knob `newreno_entry_less_limited`: [`Mode::NewReno`]'s entry window less the segments
    /// limited transmit sent in the run of duplicate ACKs that started the recovery (FreeBSD
    /// 5.x `tcp_input.c`, read for the facts in 5.2.1-RELEASE and RELENG_5 rev. 1.252.2.2:
    /// snd_cwnd = snd_ssthresh + t_maxseg · (t_dupacks − snd_limited), snd_limited 0 to 2).
    #[inline]
    pub fn less_limited(&mut self, segs: u64) {
        if self.active && self.mode == Mode::NewReno {
            self.cwnd = self.cwnd.saturating_sub(segs.min(2) * self.smss);
        }
    }

    /// After the sending an ACK caused: [`Mode::FreebsdSack`] with `freebsd_inflate`, the
    /// window that `tcp_output` ran with (the entry's three segments) gives way to snd_cwnd as
    /// the ACK's processing leaves it, and a partial ACK's first pass
    /// ([`Recovery::freebsd_first_pass`]) is over.
    #[inline]
    pub fn settle(&mut self) {
        // Read first: the common case (no pending window) stores nothing.
        if let Some(c) = self.pending_cwnd {
            self.cwnd = c;
            self.pending_cwnd = None;
            // (A partial ACK's first pass comes with a pending window, the deflated one.)
            self.first_pass = None;
        }
    }

    /// A window kept, as FreeBSD's snd_cwnd on i386, modulo 2^32.
    #[inline]
    fn wrap32(w: u64) -> u64 {
        u64::from(w as u32)
    }

    /// Enter recovery. `flight` is FlightSize (snd_nxt − snd_una), `cc_cwnd` the window before the
    /// controller's reduction, `ssthresh` after it. Returns the controller window to set, if the
    /// mode sets one at entry.
    pub fn enter(
        &mut self,
        snd_nxt: u64,
        flight: u64,
        cc_cwnd: u64,
        ssthresh: u64,
        delivered: u64,
        pipe: u64,
    ) -> Option<u64> {
        self.active = true;
        self.point = snd_nxt;
        self.first_partial = true;
        self.gbn = false;
        self.walk = None;
        match self.mode {
            // RFC 6675 §5 (4.2): cwnd = ssthresh.
            Mode::Rfc6675 => Some(ssthresh),
            // RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS. Saturating: a controller that
            // keeps no ssthresh (BBR) passes u64::MAX.
            Mode::NewReno => {
                self.cwnd = ssthresh.saturating_add(self.dupthresh * self.smss);
                None
            }
            // OpenBSD (sources at [`Mode::SackInflate`]): snd_cwnd = snd_ssthresh + t_maxseg ·
            // t_dupacks, set after the `tcp_output` that sent the fast retransmit.
            Mode::SackInflate => {
                self.cwnd = ssthresh.saturating_add(self.dupthresh * self.smss);
                self.entry_rexmit_pending = true;
                None
            }
            // FreeBSD (sources at [`Mode::FreebsdSack`]): sack_newdata = snd_nxt, snd_cwnd =
            // t_maxseg before the `tcp_output` that sends the first hole.
            Mode::FreebsdSack => {
                self.sack_newdata = snd_nxt;
                if self.freebsd_inflate {
                    // RELENG_5 tcp_input.c rev. 1.252.2.2: snd_cwnd = t_maxseg ·
                    // tcp_sack_recovery_initburst (3) for the entry's `tcp_output`, then
                    // snd_cwnd += snd_ssthresh.
                    self.cwnd = FREEBSD_SACK_INITBURST * self.smss;
                    self.pending_cwnd = Some(Self::wrap32(self.cwnd.saturating_add(ssthresh)));
                } else {
                    self.cwnd = self.smss;
                }
                None
            }
            // RFC 6937 §3: RecoverFS = snd.nxt − snd.una; counters start at zero, then the ACK
            // that triggered recovery is processed like any other.
            Mode::Prr | Mode::PrrReno => {
                self.recover_fs = flight.max(1);
                self.prr_delivered = 0;
                self.prr_out = 0;
                self.prr_update(delivered, pipe, ssthresh, false);
                None
            }
            // Rate-halving starts from the current window and walks it down.
            Mode::RateHalving => {
                self.cwnd = cc_cwnd;
                self.rh_acks = 0;
                if self.rh_entry_cut {
                    // Linux 2.4 and 2.6.x `tcp_fastretrans_alert` (net/ipv4/tcp_input.c, read
                    // for the facts: the 2.4 `tcp_opt` form, a 2.6.11 tree and the 2.6.12-rc2 to
                    // 2.6.39.3 history): entering Recovery sets `snd_cwnd_cnt = 0`, and the
                    // same call then ends with `tcp_cwnd_down` (after `tcp_update_scoreboard`,
                    // before `tcp_xmit_retransmit_queue`): the counter goes to 1 (no decrement:
                    // the first segment less comes on the next counted ACK) and cwnd =
                    // min(cwnd, tcp_packets_in_flight + 1), in flight = out − SACKed − lost +
                    // retransmitted — `pipe` here, after this ACK's loss marks.
                    self.rh_acks = 1;
                    self.cwnd = self.cwnd.min(pipe + self.smss);
                }
                None
            }
        }
    }

    /// `clean_advance`: the ACK advanced snd_una and marked nothing newly lost.
    fn prr_update(&mut self, delivered: u64, pipe: u64, ssthresh: u64, clean_advance: bool) {
        self.prr_delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out.
            let target = (self.prr_delivered as u128 * ssthresh as u128)
                .div_ceil(self.recover_fs as u128) as u64;
            target.saturating_sub(self.prr_out)
        } else {
            // Slow-start reduction bound (PRR-SSRB). Its extra segment: on every ACK (RFC 6937
            // §3.1), or with `ssrb_on_advance` only on an ACK that advances snd_una without new
            // losses (draft-ietf-tcpm-prr-rfc6937bis; Linux tcp_cwnd_reduction in 6.x, measured
            // on this machine's kernel: scripts/linux-6/prr-ssrb.pkt, recovery-exit.pkt).
            let extra = if !self.ssrb_on_advance || clean_advance {
                self.smss
            } else {
                0
            };
            let limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(delivered)
                + extra;
            ssthresh.saturating_sub(pipe).min(limit)
        };
        // Whole segments, as Linux counts PRR; the fast retransmit always goes out (RFC 6937 §3:
        // "the first retransmission").
        let mut sndcnt = sndcnt.div_ceil(self.smss) * self.smss;
        if self.prr_out == 0 {
            sndcnt = sndcnt.max(self.smss);
        }
        self.prr_window = pipe + sndcnt;
    }

    /// Process an ACK during recovery.
    pub fn on_ack(&mut self, a: &AckInfo) -> Actions {
        let mut act = Actions::default();
        match self.mode {
            Mode::Rfc6675 => {}
            Mode::NewReno => {
                if a.is_dup {
                    // RFC 5681 §3.2 step 4: inflate by one segment per further dupACK.
                    self.cwnd = if self.u32_deflation {
                        // FreeBSD: `snd_cwnd += t_maxseg` on a 32-bit u_long, a wrapped window
                        // wrapping back (sources at `newreno_partial_ack_u32`).
                        u64::from((self.cwnd as u32).wrapping_add(self.smss as u32))
                    } else {
                        self.cwnd.saturating_add(self.smss)
                    };
                } else if a.advanced && a.snd_una < self.point {
                    // RFC 6582 §3.2 step 5: partial ACK — retransmit the next hole, deflate by the
                    // amount acknowledged, add back one SMSS if at least one SMSS was acknowledged,
                    // restart the timer on the first partial ACK only ("Impatient" variant).
                    act.retransmit_head = true;
                    if self.u32_deflation {
                        self.cwnd =
                            Self::newreno_partial_ack_u32(self.cwnd, a.bytes_acked, self.smss);
                    } else {
                        self.cwnd = self.cwnd.saturating_sub(a.bytes_acked);
                        if a.bytes_acked >= self.smss {
                            self.cwnd = self.cwnd.saturating_add(self.smss);
                        }
                        self.cwnd = self.cwnd.max(self.smss);
                    }
                    if self.first_partial {
                        self.first_partial = false;
                        act.restart_rto = true;
                    }
                }
            }
            // PrrReno: a partial ACK's hole was marked lost by the episode before this step
            // (Linux `tcp_newreno_mark_lost` in `tcp_fastretrans_alert`, which runs before
            // `tcp_cong_control`): `a.pipe` and `a.newly_lost` count it. No timer rule: Linux
            // restarts the retransmission timer on every advancing ACK.
            Mode::Prr | Mode::PrrReno => {
                let clean = a.advanced && !a.newly_lost;
                self.prr_update(a.delivered, a.pipe, a.ssthresh, clean)
            }
            // Linux `tcp_cwnd_down`: one segment less every second ACK while above the floor
            // (`tcp_cwnd_min`), and never more than one segment beyond what is in flight.
            // Knob `rate_halving_progress_only`: from 2.6.23 ('[TCP]: Fix ratehalving with
            // bidirectional flows', 1e757f99961, and its follow-ups 2e6052941ae, 49ff4bb4cd4)
            // only an ACK with `FLAG_ANY_PROGRESS | FLAG_DSACKING_ACK` (or, without SACK, a
            // duplicate — this mode runs with SACK only) counts and clamps; before, every ACK
            // that reached the end of `tcp_fastretrans_alert` in Recovery did.
            Mode::RateHalving if !self.rh_progress_only || a.progress => {
                self.rh_acks += 1;
                if self.rh_acks >= 2 {
                    self.rh_acks = 0;
                    // Knob `rate_halving_floor_half`: ssthresh/2 in 2.4.27 and 2.6 ≤ 2.6.12
                    // (`tp->snd_ssthresh/2`, Westwood off) and with `tcp_reno_min_cwnd`;
                    // ssthresh for BIC's `bictcp_min_cwnd` (2.6.13–2.6.17) and for every
                    // controller without `min_cwnd` from 2.6.18 ('[TCP]: Minimum congestion
                    // window consolidation', 72dc5b9225c: CUBIC, BIC).
                    let floor = if self.rh_floor_half {
                        a.ssthresh / self.smss / 2 * self.smss
                    } else {
                        a.ssthresh
                    };
                    if self.cwnd > floor {
                        self.cwnd = self.cwnd.saturating_sub(self.smss).max(self.smss);
                    }
                }
                self.cwnd = self.cwnd.min(a.pipe + self.smss);
            }
            Mode::RateHalving => {}
            // OpenBSD tcp_input.c (sources at [`Mode::SackInflate`]): a further duplicate ACK
            // adds t_maxseg; a partial ACK (`tcp_sack_partialack`) deflates by the bytes acked
            // and adds t_maxseg back, or leaves t_maxseg, and tcp_input adds one more. No
            // retransmission is forced here: what goes is chosen from the SACK holes by the
            // send loop, one per ACK (`Episodes::on_ack`).
            Mode::SackInflate => {
                if a.is_dup {
                    self.cwnd = self.cwnd.saturating_add(self.smss);
                } else if a.advanced && a.snd_una < self.point {
                    self.cwnd = if self.cwnd > a.bytes_acked {
                        self.cwnd - a.bytes_acked + self.smss
                    } else {
                        self.smss
                    };
                    self.cwnd = self.cwnd.saturating_add(self.smss);
                }
            }
            // FreeBSD tcp_input.c / tcp_sack.c (sources at [`Mode::FreebsdSack`]): a further
            // duplicate ACK adds t_maxseg, capped at ssthresh, only while the pipe is below
            // ssthresh; a partial ACK (`tcp_sack_partialack`) sets the window to what was sent
            // since the entry and is still out (resent holes, new data) plus one segment, two
            // when more than two were acked; knob `sack_partial_ack_cap` caps it at ssthresh.
            // No forced retransmission: the send loop picks holes within the window.
            Mode::FreebsdSack if self.freebsd_inflate => {
                // RELENG_5 of November 2004 (sources at [`Mode::FreebsdSack`]), snd_cwnd a
                // 32-bit u_long: a further duplicate ACK adds t_maxseg; a partial ACK
                // (`tcp_sack_partialack`) runs `tcp_output` with snd_cwnd = sack_bytes_rxmt +
                // (snd_nxt − sack_newdata) + t_maxseg, then deflates the old snd_cwnd as
                // NewReno, and the ACK's second `tcp_output` sends within that: two passes, in
                // that order ([`Recovery::freebsd_first_pass`]).
                if let Some(c) = self.pending_cwnd.take() {
                    self.cwnd = c;
                }
                self.first_pass = None;
                if a.is_dup {
                    self.cwnd += self.smss;
                    if self.u32_deflation {
                        self.cwnd = Self::wrap32(self.cwnd);
                    }
                } else if a.advanced && a.snd_una < self.point {
                    // Knob `freebsd_sack_walk`: FreeBSD's snd_nxt is the walk's, below snd_max
                    // (`tcp_sack_partialack` runs before snd_una and snd_nxt are updated).
                    let nxt = self.walk.map_or(a.snd_nxt, |w| w.min(a.snd_nxt));
                    let first = if nxt >= self.sack_newdata {
                        a.rexmit_out + (nxt - self.sack_newdata) + self.smss
                    } else {
                        // Pulled back below sack_newdata by the persist stall: `sack_bytes_rexmt
                        // + (snd_nxt − sack_newdata) + t_maxseg` is u_int arithmetic (tcp_seq,
                        // int, u_int), modulo 2^32 on i386 and amd64 alike: mostly nearly 2^32.
                        Self::wrap32(
                            (a.rexmit_out + self.smss).wrapping_sub(self.sack_newdata - nxt),
                        )
                    };
                    // Knob `partial_ack_u32_deflation` off: FreeBSD's later form, `if (snd_cwnd
                    // > acked) snd_cwnd -= acked; else snd_cwnd = 0; snd_cwnd += t_maxseg`.
                    let after = if self.u32_deflation {
                        Self::newreno_partial_ack_u32(self.cwnd, a.bytes_acked, self.smss)
                    } else {
                        self.cwnd.saturating_sub(a.bytes_acked) + self.smss
                    };
                    // `tcp_sack_partialack` runs before `tcp_input` moves snd_una: its
                    // `tcp_output` counts off from the snd_una before the ACK.
                    self.first_pass = Some((first, a.snd_una.saturating_sub(a.bytes_acked)));
                    self.cwnd = after;
                    self.pending_cwnd = Some(after);
                }
            }
            Mode::FreebsdSack => {
                if a.is_dup {
                    if a.pipe < a.ssthresh {
                        self.cwnd = (self.cwnd + self.smss).min(a.ssthresh);
                    }
                } else if a.advanced && a.snd_una < self.point {
                    let segs = if a.bytes_acked / self.smss > 2 { 2 } else { 1 };
                    self.cwnd = a.rexmit_out
                        + a.snd_nxt.saturating_sub(self.sack_newdata)
                        + segs * self.smss;
                    if self.partial_ack_cap {
                        self.cwnd = self.cwnd.min(a.ssthresh);
                    }
                }
            }
        }
        act
    }

    /// A retransmission left during recovery. [`Mode::SackInflate`]: OpenBSD's `tcp_output`
    /// takes one t_maxseg back for each SACK retransmission while snd_una < snd_last ("we're
    /// replacing a (future) new transmission with a retransmission now"); the fast
    /// retransmit's is overwritten by the entry's window (sources at [`Mode::SackInflate`]).
    pub fn on_retransmit(&mut self) {
        if self.active && self.mode == Mode::SackInflate {
            if self.entry_rexmit_pending {
                self.entry_rexmit_pending = false;
            } else {
                self.cwnd = self.cwnd.saturating_sub(self.smss);
            }
        }
    }

    /// [`Mode::SackInflate`] in recovery: at most one retransmission per ACK, whatever the
    /// window, and nothing else after it in that send (OpenBSD `tcp_output`: a SACK
    /// retransmission leaves `sendalot` clear); new data is counted against the window over
    /// everything outstanding ([`Recovery::window_over_flight`]).
    #[inline]
    pub fn one_rexmit_per_ack(&self) -> bool {
        self.active && self.mode == Mode::SackInflate
    }

    /// [`Mode::SackInflate`]: the window counts everything outstanding (OpenBSD `tcp_output`:
    /// off = snd_nxt − snd_una against min(snd_wnd, snd_cwnd)), SACKed and lost data included —
    /// in recovery and before it (no pipe at all: duplicate ACKs release nothing before the
    /// third, as OpenBSD has no limited transmit). The send loop checks windows against the
    /// pipe, so this returns the window in the pipe's terms: cwnd − (FlightSize − pipe). Other
    /// modes: `window` as is. The caller leaves out the loss state after a timeout, whose
    /// go-back-N the pipe stands for (knob `short_segment_on_rexmit`).
    #[inline]
    pub fn window_over_flight(&self, window: u64, flight: u64, pipe: u64) -> u64 {
        if self.mode == Mode::SackInflate {
            (window + pipe).saturating_sub(flight)
        } else {
            window
        }
    }

    /// Bytes sent during recovery (PRR's prr_out).
    pub fn on_sent(&mut self, len: u32) {
        if self.active {
            self.prr_out += len as u64;
        }
    }

    /// The window the send loop may fill during recovery (`cc_cwnd` is the controller's).
    pub fn window(&self, cc_cwnd: u64) -> u64 {
        match self.mode {
            Mode::Rfc6675 => cc_cwnd,
            Mode::NewReno | Mode::RateHalving | Mode::SackInflate | Mode::FreebsdSack => self.cwnd,
            Mode::Prr | Mode::PrrReno => self.prr_window,
        }
    }

    /// [`Mode::FreebsdSack`] in recovery: the hole retransmissions and new data are counted
    /// against the window as FreeBSD's `tcp_output` counts them (see
    /// `crate::tcp::sender::send::next_segment`): Some((snd_recover, sack_newdata, gbn,
    /// FreeBSD's snd_nxt below snd_max)).
    #[inline]
    pub fn freebsd_budget(&self) -> Option<(u64, u64, bool, Option<u64>)> {
        (self.active && self.mode == Mode::FreebsdSack).then_some((
            self.point,
            self.sack_newdata,
            self.gbn,
            self.walk,
        ))
    }

    /// [`Mode::FreebsdSack`] with `freebsd_inflate`, while a partial ACK's sending runs: the
    /// window and the snd_una of `tcp_sack_partialack`'s `tcp_output`, Some((sack_bytes_rxmt +
    /// (snd_nxt − sack_newdata) + t_maxseg, snd_una before the ACK)); [`Recovery::window`] is
    /// meanwhile the deflated snd_cwnd of the ACK's second `tcp_output`. FreeBSD RELENG_5
    /// (tcp_sack.c rev. 1.3.2.1 `tcp_sack_partialack`, tcp_input.c rev. 1.252.2.2, tcp_output.c
    /// rev. 1.100.2.3, as NSC 0.5.2 ships them; read for the facts, nothing copied):
    /// `tcp_input` calls `tcp_sack_partialack` before it drops the acknowledged bytes and sets
    /// snd_una = th_ack ("Relies on fact that tp->snd_una not updated yet"), after
    /// `tcp_del_sackholes` and the ACK's SACK blocks have updated the hole list; the window
    /// update (needoutput) then calls `tcp_output` again, from the new snd_una. The two passes
    /// differ only where `tcp_output` counts from snd_una: with sack_bytes_rxmt = 0 new data
    /// goes within min(sb_cc, sendwin) − off, off = snd_nxt − snd_una, so the first pass has
    /// th_ack − snd_una bytes less room than the same window would give the second; with
    /// resent bytes outstanding both count sack_bytes_rxmt + (snd_nxt − sack_newdata). Cleared
    /// by [`Recovery::settle`].
    #[inline]
    pub fn freebsd_first_pass(&self) -> Option<(u64, u64)> {
        self.first_pass
    }

    /// Knob `freebsd_sack_walk`: FreeBSD's snd_nxt below snd_max, in recovery.
    #[inline]
    pub fn freebsd_walk(&self) -> Option<u64> {
        if self.active {
            self.walk
        } else {
            None
        }
    }

    /// Knob `freebsd_sack_walk` with `partial_ack_zero_persist`: the persist stall pulled
    /// FreeBSD's snd_nxt back to snd_una (`crate::tcp::sender::Sender::bsd_zero_window`).
    #[cold]
    pub fn freebsd_pull_back(&mut self, una: u64) {
        if self.active && self.mode == Mode::FreebsdSack {
            self.walk = Some(una);
        }
    }

    /// Knob `freebsd_sack_walk`: the recovery ended with FreeBSD's snd_nxt below snd_max and
    /// records from it left to send again (`crate::tcp::sender::episode::Episodes::exit_recovery`,
    /// sources there): out of recovery `tcp_output` sends them from snd_nxt in order, the
    /// window checked against off = snd_nxt − snd_una, until snd_nxt reaches snd_max
    /// ([`Recovery::freebsd_open_walk`]).
    #[cold]
    pub fn freebsd_exit_below_max(&mut self, nxt: u64) {
        if !self.active && self.mode == Mode::FreebsdSack {
            self.walk = Some(nxt);
        }
    }

    /// [`Recovery::freebsd_exit_below_max`]: out of recovery, FreeBSD's snd_nxt still below
    /// snd_max.
    #[inline]
    pub fn freebsd_open_walk(&self) -> bool {
        !self.active && self.walk.is_some()
    }

    /// FreeBSD's snd_nxt kept below snd_max, in recovery ([`Recovery::freebsd_walk`]) or after
    /// it ([`Recovery::freebsd_open_walk`]): one test for the send loop's prologue.
    #[inline]
    pub fn freebsd_any_walk(&self) -> bool {
        self.walk.is_some()
    }

    /// [`Recovery::freebsd_open_walk`] ends: FreeBSD's snd_nxt reached snd_max (nothing left to
    /// send again).
    #[cold]
    pub fn freebsd_open_walk_done(&mut self) {
        if !self.active {
            self.walk = None;
        }
    }

    /// Knob `freebsd_sack_walk`: FreeBSD's snd_nxt moved on to `nxt` (a segment sent from it as
    /// new data, `crate::tcp::sender::send::Step::FreebsdWalk`, or `tcp_sack_adjust`; u64::MAX:
    /// at snd_max).
    #[cold]
    pub fn freebsd_walked(&mut self, nxt: u64) {
        if let Some(w) = self.walk.as_mut() {
            *w = (*w).max(nxt);
        }
    }

    /// Knob `freebsd_sack_go_back_n`, on entering [`Mode::FreebsdSack`] in the go-back-N after a
    /// timeout (sources at `crate::tcp::sender::episode::Episodes::on_ack`): sack_newdata =
    /// FreeBSD's snd_nxt there, `nxt` (where the go-back-N had got to), not snd_max; the lost
    /// records from it and above the highest SACK are its new data from snd_nxt.
    /// With `walk` (knob `freebsd_sack_walk`) FreeBSD's snd_nxt is kept from `nxt` on
    /// ([`Recovery::freebsd_walk`]).
    #[cold]
    pub fn freebsd_go_back_n(&mut self, nxt: u64, walk: bool) {
        if self.active && self.mode == Mode::FreebsdSack {
            self.sack_newdata = nxt;
            self.gbn = true;
            self.walk = walk.then_some(nxt);
        }
    }

    /// [`Recovery::freebsd_go_back_n`]: the recovery sends the go-back-N's rest as new data.
    #[inline]
    pub fn freebsd_gbn(&self) -> bool {
        self.gbn && self.active
    }

    /// Whether the controller grows its window on the ACK that ends the recovery. FreeBSD's
    /// SACK recovery: no, the growth test (`!IN_FASTRECOVERY`) comes before
    /// `EXIT_FASTRECOVERY` in tcp_input.c (sources at [`Mode::FreebsdSack`]). FreeBSD's
    /// NewReno (knob `newreno_exit_no_growth`): no, for the same reason — FreeBSD 5.2.1-RELEASE
    /// sys/netinet/tcp_input.c (github:kaizendesu/FreeBSD-5.2; read for the facts, nothing
    /// copied): the ACK of snd_recover sets snd_cwnd = snd_max − th_ack + t_maxseg when
    /// th_ack + snd_ssthresh > snd_max, else snd_ssthresh, and the growth `if (!tcp_do_newreno
    /// || !IN_FASTRECOVERY(tp))` is skipped because `EXIT_FASTRECOVERY` comes after it; the
    /// next ACK of new data grows the window.
    #[inline]
    pub fn grows_on_exit_ack(&self) -> bool {
        !(self.mode == Mode::FreebsdSack || (self.mode == Mode::NewReno && self.exit_no_growth))
    }

    /// Whether the retransmission timer is restarted by every advancing ACK in recovery
    /// (RFC 6298 §5.3; OpenBSD's SACK recovery too: `tcp_sack_partialack` disarms it and the
    /// ACK's processing arms it again with t_rxtcur), or only by NewReno's first partial ACK
    /// (RFC 6582 §3.2 step 5).
    pub fn restart_rto_on_ack(&self) -> bool {
        !(self.active && self.mode == Mode::NewReno)
    }

    /// Leave recovery. Returns the controller window to set on top of its own exit rule.
    pub fn exit(&mut self, ssthresh: u64, flight: u64) -> Option<u64> {
        self.active = false;
        self.pending_cwnd = None;
        self.first_pass = None;
        self.gbn = false;
        self.walk = None;
        match self.mode {
            // RFC 6675 / RFC 6937: cwnd = ssthresh (the controller's default exit).
            Mode::Rfc6675 | Mode::Prr | Mode::PrrReno => None,
            // Knob `newreno_exit_bsd_window`: FreeBSD 5.2.1-RELEASE sys/netinet/tcp_input.c
            // (github:kaizendesu/FreeBSD-5.2) and RELENG_5's rev. 1.252.2.2 (NSC 0.5.2's
            // FreeBSD 5.3, github:sherry1989/inet), "Out of fast recovery" (read for the facts,
            // nothing copied): `if (SEQ_GT(th_ack + snd_ssthresh, snd_max)) snd_cwnd = snd_max
            // - th_ack + t_maxseg; else snd_cwnd = snd_ssthresh`: one segment with nothing
            // outstanding, and flight + 1 segment (above ssthresh) when the flight is within a
            // segment of ssthresh — where RFC 6582 gives 2 segments and ssthresh.
            Mode::NewReno if self.exit_bsd_window => Some(if flight < ssthresh {
                flight + self.smss
            } else {
                ssthresh
            }),
            // RFC 6582 §3.2 step 6, option (1): min(ssthresh, max(FlightSize, SMSS) + SMSS).
            Mode::NewReno => Some(ssthresh.min(flight.max(self.smss) + self.smss)),
            // Linux `tcp_complete_cwr`: cwnd = min(cwnd, ssthresh).
            Mode::RateHalving => Some(self.cwnd.min(ssthresh)),
            // OpenBSD tcp_input.c "Out of fast recovery": snd_cwnd = snd_ssthresh, or snd_max −
            // th_ack when that is less (sources at [`Mode::SackInflate`]); the controller's
            // growth on the same ACK adds its segment.
            Mode::SackInflate => Some(ssthresh.min(flight)),
            // FreeBSD tcp_input.c "Out of fast recovery": snd_cwnd = snd_max − th_ack +
            // t_maxseg when snd_max − th_ack < snd_ssthresh, else snd_ssthresh (sources at
            // [`Mode::FreebsdSack`]).
            Mode::FreebsdSack => Some(if flight < ssthresh {
                flight + self.smss
            } else {
                ssthresh
            }),
        }
    }

    /// Cut the window the recovery rule keeps to `cap` (Linux `tcp_moderate_cwnd` while the
    /// Recovery state is held, knob `reno_hold_at_recovery_point`). False when the rule keeps
    /// none (RFC 6675: the controller's window is the one to cut).
    pub fn cap_window(&mut self, cap: u64) -> bool {
        match self.mode {
            Mode::Rfc6675 => return false,
            Mode::NewReno | Mode::RateHalving | Mode::SackInflate | Mode::FreebsdSack => {
                self.cwnd = self.cwnd.min(cap)
            }
            Mode::Prr | Mode::PrrReno => self.prr_window = self.prr_window.min(cap),
        }
        true
    }

    /// Abandon recovery (a timeout took over).
    pub fn abort(&mut self) {
        self.active = false;
        self.pending_cwnd = None;
        self.first_pass = None;
        self.walk = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn test_prr_ssrb_extra_segment_only_on_advance_with_6937bis() {
        // Pipe (4) below ssthresh (7), one segment delivered by a SACK: RFC 6937 §3.1 allows
        // max(prr_delivered − prr_out, DeliveredData) + 1 = 2 segments; 6937bis (Linux 6.x)
        // the extra one only when snd_una advanced without new losses.
        let run = |bis: bool, advanced: bool| {
            let mut r = Recovery::new(Mode::Prr, MSS as u32, 3);
            r.ssrb_on_advance = bis;
            r.enter(10 * MSS, 10 * MSS, 10 * MSS, 7 * MSS, 0, 4 * MSS);
            r.on_sent(MSS as u32); // the fast retransmit
            r.on_ack(&AckInfo {
                advanced,
                delivered: MSS,
                pipe: 4 * MSS,
                ssthresh: 7 * MSS,
                ..Default::default()
            });
            (r.window(0) - 4 * MSS) / MSS
        };
        assert_eq!(run(false, false), 2);
        assert_eq!(run(true, false), 1);
        assert_eq!(run(true, true), 2);
    }

    #[test]
    fn test_prr_sends_half_per_delivered_when_halving() {
        // RFC 6937 §3 example: ssthresh = RecoverFS/2, pipe above ssthresh: one segment sent for
        // every two delivered.
        let mut r = Recovery::new(Mode::Prr, MSS as u32, 3);
        let flight = 20 * MSS;
        r.enter(20 * MSS, flight, flight, 10 * MSS, MSS, 19 * MSS);
        // The fast retransmit goes out on the first ACK.
        assert_eq!(r.window(0), 19 * MSS + MSS);
        r.on_sent(MSS as u32);
        let mut sent = 1;
        let mut pipe = 19 * MSS;
        for _ in 0..10 {
            pipe -= MSS; // one more segment delivered
            r.on_ack(&AckInfo {
                delivered: MSS,
                pipe,
                ssthresh: 10 * MSS,
                ..Default::default()
            });
            while pipe + MSS <= r.window(0) {
                r.on_sent(MSS as u32);
                pipe += MSS;
                sent += 1;
            }
        }
        // 11 segments delivered → ⌈11·10/20⌉ = 6 sent.
        assert_eq!(sent, 6);
    }

    #[test]
    fn test_newreno_inflation_and_partial_ack() {
        let mut r = Recovery::new(Mode::NewReno, MSS as u32, 3);
        r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 0);
        assert_eq!(r.window(0), 13 * MSS);
        r.on_ack(&AckInfo {
            is_dup: true,
            ..Default::default()
        });
        assert_eq!(r.window(0), 14 * MSS);
        let a = r.on_ack(&AckInfo {
            advanced: true,
            bytes_acked: 5 * MSS,
            snd_una: 5 * MSS,
            ..Default::default()
        });
        assert!(a.retransmit_head && a.restart_rto);
        assert_eq!(r.window(0), 10 * MSS);
        let a = r.on_ack(&AckInfo {
            advanced: true,
            bytes_acked: MSS,
            snd_una: 6 * MSS,
            ..Default::default()
        });
        assert!(a.retransmit_head && !a.restart_rto);
        assert_eq!(r.exit(10 * MSS, 4 * MSS), Some(5 * MSS));
    }

    /// Knob `partial_ack_u32_deflation` (FreeBSD 5.x `tcp_newreno_partial_ack`, sources at
    /// `Recovery::newreno_partial_ack_u32`): snd_cwnd −= acked − t_maxseg on a 32-bit u_long.
    #[test]
    fn test_newreno_partial_ack_u32_deflation_wraps() {
        let partial = |acked: u64, una: u64| AckInfo {
            advanced: true,
            bytes_acked: acked,
            snd_una: una,
            ..Default::default()
        };
        let dup = AckInfo {
            is_dup: true,
            ..Default::default()
        };
        const M: u64 = 1460;
        // ssthresh 6 segments: 9 on entry; a partial ACK of 11 segments (the duplicate ACKs
        // of 7 of them lost on the way) is more than 9 + 1.
        let run = |u32_mode: bool| {
            let mut r = Recovery::new(Mode::NewReno, M as u32, 3);
            r.u32_deflation = u32_mode;
            r.enter(23 * M, 12 * M, 12 * M, 6 * M, 0, 0);
            assert_eq!(r.window(0), 9 * M);
            let a = r.on_ack(&partial(11 * M, 22 * M));
            assert!(a.retransmit_head);
            r
        };
        let mut r = run(true);
        assert_eq!(
            r.window(0),
            (1u64 << 32) - M,
            "9 − (11 − 1) segments, mod 2^32"
        );
        // A further duplicate ACK adds t_maxseg, wrapping back through 2^32.
        r.on_ack(&dup);
        assert_eq!(r.window(0), 0);
        r.on_ack(&dup);
        assert_eq!(r.window(0), M);
        // RFC 6582 (knob off): never below one SMSS.
        assert_eq!(run(false).window(0), M);

        // Exactly the window plus one segment acknowledged: 0, not one SMSS.
        let mut r = Recovery::new(Mode::NewReno, M as u32, 3);
        r.u32_deflation = true;
        r.enter(23 * M, 12 * M, 12 * M, 6 * M, 0, 0);
        r.on_ack(&partial(10 * M, 21 * M));
        assert_eq!(r.window(0), 0);

        // Less than a segment acknowledged: t_maxseg is added back all the same (RFC 6582 adds
        // it only when at least one SMSS was acknowledged).
        let mut r = Recovery::new(Mode::NewReno, M as u32, 3);
        r.u32_deflation = true;
        r.enter(23 * M, 12 * M, 12 * M, 6 * M, 0, 0);
        r.on_ack(&partial(500, 11 * M + 500));
        assert_eq!(r.window(0), 9 * M - 500 + M);
        // The usual case is RFC 6582's: 9 + 1 − 3 segments.
        r.on_ack(&partial(3 * M, 14 * M + 500));
        assert_eq!(r.window(0), 9 * M - 500 + M - 2 * M);
    }

    /// Knob `newreno_entry_less_limited` (FreeBSD: t_dupacks − snd_limited segments).
    #[test]
    fn test_newreno_entry_less_limited_transmit() {
        let mut r = Recovery::new(Mode::NewReno, MSS as u32, 3);
        r.enter(8 * MSS, 8 * MSS, 6 * MSS, 3 * MSS, 0, 0);
        r.less_limited(2);
        assert_eq!(r.window(0), 4 * MSS, "3 + (3 - 2)");
        let mut r = Recovery::new(Mode::NewReno, MSS as u32, 3);
        r.enter(8 * MSS, 8 * MSS, 6 * MSS, 3 * MSS, 0, 0);
        r.less_limited(5);
        assert_eq!(r.window(0), 4 * MSS, "snd_limited is at most 2");
        let mut r = Recovery::new(Mode::SackInflate, MSS as u32, 3);
        r.enter(8 * MSS, 8 * MSS, 6 * MSS, 3 * MSS, 0, 0);
        r.less_limited(2);
        assert_eq!(r.window(0), 6 * MSS, "NewReno only");
    }

    /// Knob `newreno_exit_no_growth` (FreeBSD 5.x: the growth test precedes
    /// `EXIT_FASTRECOVERY`); RFC 6582 leaves the controller's growth to follow.
    #[test]
    fn test_newreno_exit_no_growth() {
        let mut r = Recovery::new(Mode::NewReno, MSS as u32, 3);
        assert!(r.grows_on_exit_ack());
        r.exit_no_growth = true;
        assert!(!r.grows_on_exit_ack());
        let mut r = Recovery::new(Mode::Rfc6675, MSS as u32, 3);
        r.exit_no_growth = true;
        assert!(r.grows_on_exit_ack(), "a NewReno knob only");
    }

    /// Knob `newreno_exit_bsd_window` (FreeBSD 5.x "Out of fast recovery": snd_max − th_ack +
    /// t_maxseg below ssthresh, else ssthresh); RFC 6582 §3.2 step 6 option (1) otherwise.
    #[test]
    fn test_newreno_exit_bsd_window() {
        let exit = |bsd: bool, flight: u64| {
            let mut r = Recovery::new(Mode::NewReno, MSS as u32, 3);
            r.exit_bsd_window = bsd;
            r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 20 * MSS);
            r.exit(10 * MSS, flight)
        };
        // Nothing outstanding: one segment (RFC 6582: max(0, SMSS) + SMSS = two).
        assert_eq!(exit(true, 0), Some(MSS));
        assert_eq!(exit(false, 0), Some(2 * MSS));
        // Half a segment below ssthresh: flight + 1 segment, above ssthresh (RFC 6582: ssthresh).
        assert_eq!(exit(true, 19 * MSS / 2), Some(21 * MSS / 2));
        assert_eq!(exit(false, 19 * MSS / 2), Some(10 * MSS));
        // Otherwise the same: 4 segments out -> 5; 10 or more -> ssthresh.
        assert_eq!(exit(true, 4 * MSS), Some(5 * MSS));
        assert_eq!(exit(false, 4 * MSS), Some(5 * MSS));
        assert_eq!(exit(true, 10 * MSS), Some(10 * MSS));
        assert_eq!(exit(false, 12 * MSS), Some(10 * MSS));
    }

    #[test]
    fn test_sack_inflate_window_through_a_recovery() {
        // OpenBSD 3.x tcp_input.c / tcp_output.c (Mode::SackInflate): entry ssthresh + 3·SMSS,
        // the fast retransmit takes nothing back, each later retransmission one SMSS, each
        // further duplicate ACK adds one; a partial ACK of 2 segments: −2 +1 +1 segments; the
        // exit: min(ssthresh, snd_max − th_ack).
        let mut r = Recovery::new(Mode::SackInflate, MSS as u32, 3);
        assert_eq!(
            r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 17 * MSS),
            None
        );
        assert_eq!(r.window(0), 13 * MSS);
        assert!(r.one_rexmit_per_ack());
        r.on_retransmit();
        assert_eq!(
            r.window(0),
            13 * MSS,
            "the fast retransmit's decrement is overwritten"
        );
        let dup = AckInfo {
            is_dup: true,
            ..Default::default()
        };
        let a = r.on_ack(&dup);
        assert_eq!(
            a,
            Actions::default(),
            "no forced head retransmission, no timer rule"
        );
        assert_eq!(r.window(0), 14 * MSS);
        r.on_retransmit();
        assert_eq!(r.window(0), 13 * MSS);
        r.on_ack(&AckInfo {
            advanced: true,
            bytes_acked: 2 * MSS,
            snd_una: 2 * MSS,
            ..Default::default()
        });
        assert_eq!(r.window(0), 13 * MSS);
        // A partial ACK of more than the window leaves one segment, plus tcp_input's one.
        r.on_ack(&AckInfo {
            advanced: true,
            bytes_acked: 15 * MSS,
            snd_una: 17 * MSS,
            ..Default::default()
        });
        assert_eq!(r.window(0), 2 * MSS);
        assert!(r.restart_rto_on_ack());
        assert_eq!(r.exit(10 * MSS, 3 * MSS), Some(3 * MSS));
        assert_eq!(
            Recovery::new(Mode::SackInflate, MSS as u32, 3).exit(10 * MSS, 30 * MSS),
            Some(10 * MSS)
        );
        assert!(!r.one_rexmit_per_ack());
    }

    #[test]
    fn test_freebsd_sack_walk_partial_ack_window_from_snd_nxt() {
        // Knob `freebsd_sack_walk` (FreeBSD RELENG_5 tcp_sack.c rev. 1.3.2.1
        // `tcp_sack_partialack`: snd_cwnd = sack_bytes_rxmt + (snd_nxt − sack_newdata) + t_maxseg
        // for one `tcp_output`, u_int arithmetic). After a go-back-N FreeBSD's snd_nxt (8) lies
        // below snd_max (10): 1 + (8 − 6) + 1 segments, where snd_max gave 1 + 4 + 1.
        // 3 segments acknowledged: the deflated window is 5 − (3 − 1), below both.
        let partial = AckInfo {
            advanced: true,
            bytes_acked: 3 * MSS,
            snd_una: 3 * MSS,
            snd_nxt: 10 * MSS,
            rexmit_out: MSS,
            ssthresh: 2 * MSS,
            ..Default::default()
        };
        let run = |walk: Option<u64>| {
            let mut r = Recovery::new(Mode::FreebsdSack, MSS as u32, 3);
            r.freebsd_inflate = true;
            r.u32_deflation = true;
            r.enter(10 * MSS, 10 * MSS, 10 * MSS, 2 * MSS, 0, 8 * MSS);
            r.freebsd_go_back_n(6 * MSS, walk.is_some());
            if let Some(w) = walk {
                r.freebsd_walked(w);
            }
            r.on_ack(&partial);
            r.freebsd_first_pass().unwrap().0
        };
        assert_eq!(run(Some(8 * MSS)), 4 * MSS);
        assert_eq!(run(None), 6 * MSS);
        // The persist stall pulled snd_nxt back to snd_una (2 segments): 1 + (2 − 6) + 1 wraps
        // modulo 2^32 (u_int arithmetic), so the peer's window alone bounds that `tcp_output`.
        let mut r = Recovery::new(Mode::FreebsdSack, MSS as u32, 3);
        r.freebsd_inflate = true;
        r.u32_deflation = true;
        r.enter(10 * MSS, 10 * MSS, 10 * MSS, 2 * MSS, 0, 8 * MSS);
        r.freebsd_go_back_n(6 * MSS, true);
        r.freebsd_pull_back(2 * MSS);
        r.on_ack(&partial);
        assert_eq!(
            r.freebsd_first_pass(),
            Some(((1u64 << 32) - 2 * MSS, 0)),
            "from the snd_una before the ACK"
        );
    }

    #[test]
    fn test_freebsd_sack_inflate_window_through_a_recovery() {
        // Knob freebsd_sack_rules = "inflate" (RELENG_5 of November 2004, sources at
        // Mode::FreebsdSack): 3 segments for the entry's send, then ssthresh + 3; +1 per
        // duplicate ACK whatever the pipe; a partial ACK sends first within resent + new since
        // the entry + 1 segment (from the snd_una before the ACK), then within the deflated
        // window (NewReno's, 32 bits), which holds from then on.
        let mut r = Recovery::new(Mode::FreebsdSack, MSS as u32, 3);
        r.freebsd_inflate = true;
        r.u32_deflation = true;
        r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 17 * MSS);
        assert_eq!(r.window(0), 3 * MSS, "tcp_sack_recovery_initburst");
        let dup = |pipe| AckInfo {
            is_dup: true,
            pipe,
            ssthresh: 10 * MSS,
            ..Default::default()
        };
        r.on_ack(&dup(19 * MSS));
        assert_eq!(r.window(0), (3 + 10 + 1) * MSS, "no pipe test, no cap");
        r.on_ack(&dup(19 * MSS));
        assert_eq!(r.window(0), 15 * MSS);
        let partial = |acked, nxt| AckInfo {
            advanced: true,
            bytes_acked: acked,
            snd_una: 15 * MSS,
            snd_nxt: nxt,
            rexmit_out: 2 * MSS,
            ssthresh: 10 * MSS,
            ..Default::default()
        };
        // 15 − (4 − 1) = 12 segments above 2 + 3 + 1.
        r.on_ack(&partial(4 * MSS, 23 * MSS));
        assert_eq!(r.window(0), 12 * MSS);
        assert_eq!(r.freebsd_first_pass(), Some((6 * MSS, 11 * MSS)));
        // 12 − (14 − 1) wraps: the window is 2^32 − 1 segment from here on.
        r.on_ack(&partial(14 * MSS, 23 * MSS));
        assert_eq!(r.window(0), (1u64 << 32) - MSS);
        assert_eq!(r.freebsd_first_pass(), Some((6 * MSS, MSS)));
        r.settle();
        assert_eq!(r.freebsd_first_pass(), None);
        r.on_ack(&dup(5 * MSS));
        assert_eq!(r.window(0), 0, "+1 segment wraps back through 2^32");
        // Without the 32-bit arithmetic: FreeBSD's later `snd_cwnd = 0` floor, + t_maxseg.
        let mut r = Recovery::new(Mode::FreebsdSack, MSS as u32, 3);
        r.freebsd_inflate = true;
        r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 17 * MSS);
        r.on_ack(&partial(14 * MSS, 20 * MSS));
        r.settle();
        assert_eq!(r.window(0), MSS);
        // Deflated below what was sent since the entry: that window for this ACK only.
        let mut r = Recovery::new(Mode::FreebsdSack, MSS as u32, 3);
        r.freebsd_inflate = true;
        r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 17 * MSS);
        r.on_ack(&partial(9 * MSS, 26 * MSS));
        assert_eq!(
            r.freebsd_first_pass(),
            Some(((2 + 6 + 1) * MSS, 6 * MSS)),
            "tcp_sack_partialack's tcp_output"
        );
        assert_eq!(r.window(0), (13 - 8) * MSS, "the ACK's second tcp_output");
        r.on_ack(&dup(5 * MSS));
        assert_eq!(
            r.window(0),
            (13 - 8 + 1) * MSS,
            "then 13 − (9 − 1), + 1 for the dupack"
        );
        assert_eq!(r.exit(10 * MSS, 3 * MSS), Some(4 * MSS));
        assert!(!r.grows_on_exit_ack());
        assert_eq!(r.pending_cwnd, None);
    }

    #[test]
    fn test_freebsd_sack_window_through_a_recovery() {
        // FreeBSD 5.3 (Mode::FreebsdSack): one segment at entry (RFC 6675: ssthresh); a
        // further duplicate ACK adds one only while the pipe is below ssthresh, never above
        // it; a partial ACK: resent + new since entry + 1 segment (2 when > 2 acked); the exit:
        // snd_max − th_ack + 1 segment below ssthresh, else ssthresh, with no growth after it.
        let mut r = Recovery::new(Mode::FreebsdSack, MSS as u32, 3);
        assert_eq!(
            r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 17 * MSS),
            None
        );
        assert_eq!(r.window(10 * MSS), MSS);
        assert_eq!(r.freebsd_budget(), Some((20 * MSS, 20 * MSS, false, None)));
        let dup = |pipe| AckInfo {
            is_dup: true,
            pipe,
            ssthresh: 10 * MSS,
            ..Default::default()
        };
        r.on_ack(&dup(12 * MSS));
        assert_eq!(r.window(0), MSS, "pipe above ssthresh: no growth");
        r.on_ack(&dup(9 * MSS));
        assert_eq!(r.window(0), 2 * MSS);
        for _ in 0..20 {
            r.on_ack(&dup(5 * MSS));
        }
        assert_eq!(r.window(0), 10 * MSS, "capped at ssthresh");
        let partial = |acked| AckInfo {
            advanced: true,
            bytes_acked: acked,
            snd_una: 5 * MSS,
            snd_nxt: 23 * MSS,
            rexmit_out: 2 * MSS,
            ssthresh: 4 * MSS,
            ..Default::default()
        };
        r.on_ack(&partial(3 * MSS));
        assert_eq!(
            r.window(0),
            (2 + 3 + 2) * MSS,
            "more than 2 acked: 2 segments"
        );
        r.on_ack(&partial(2 * MSS));
        assert_eq!(
            r.window(0),
            (2 + 3 + 1) * MSS,
            "no cap at ssthresh by default"
        );
        r.partial_ack_cap = true;
        r.on_ack(&partial(2 * MSS));
        assert_eq!(r.window(0), 4 * MSS, "knob sack_partial_ack_cap");
        assert!(r.restart_rto_on_ack() && !r.grows_on_exit_ack());
        assert_eq!(r.exit(10 * MSS, 3 * MSS), Some(4 * MSS));
        assert_eq!(r.exit(10 * MSS, 10 * MSS), Some(10 * MSS));
        assert_eq!(r.freebsd_budget(), None);
        assert_eq!(
            Mode::select(RecoveryCfg::FreebsdSack, true, RecoveryNosackCfg::Newreno),
            Mode::FreebsdSack
        );
        assert_eq!(
            Mode::select(RecoveryCfg::FreebsdSack, false, RecoveryNosackCfg::Newreno),
            Mode::NewReno
        );
    }

    #[test]
    fn test_sack_inflate_window_counts_everything_outstanding() {
        // OpenBSD tcp_output: off = snd_nxt − snd_una against the (inflated) window, SACKed data
        // included, in recovery or not; in the pipe's terms: cwnd − (flight − pipe). Other
        // modes: unchanged.
        let r = Recovery::new(Mode::SackInflate, MSS as u32, 3);
        assert_eq!(r.window_over_flight(13 * MSS, 20 * MSS, 15 * MSS), 8 * MSS);
        assert_eq!(r.window_over_flight(3 * MSS, 20 * MSS, 15 * MSS), 0);
        let mut n = Recovery::new(Mode::Rfc6675, MSS as u32, 3);
        n.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 15 * MSS);
        assert_eq!(n.window_over_flight(13 * MSS, 20 * MSS, 15 * MSS), 13 * MSS);
        assert_eq!(
            Mode::select(RecoveryCfg::SackInflate, true, RecoveryNosackCfg::Newreno),
            Mode::SackInflate
        );
        assert_eq!(
            Mode::select(RecoveryCfg::SackInflate, false, RecoveryNosackCfg::Newreno),
            Mode::NewReno
        );
    }

    #[test]
    fn test_newreno_entry_without_ssthresh_saturates() {
        // BBR keeps no ssthresh (u64::MAX): NewReno's ssthresh + 3·SMSS must not overflow.
        let mut r = Recovery::new(Mode::NewReno, MSS as u32, 3);
        r.enter(100 * MSS, 50 * MSS, 50 * MSS, u64::MAX, 0, 50 * MSS);
        assert_eq!(r.window(0), u64::MAX);
        r.on_ack(&AckInfo {
            is_dup: true,
            ..Default::default()
        });
        assert_eq!(r.window(0), u64::MAX);
    }

    #[test]
    fn test_rate_halving_entry_cut_clamps_and_counts_the_entry_ack() {
        // Linux 2.x tcp_fastretrans_alert: snd_cwnd_cnt = 0 at the entry, then tcp_cwnd_down on
        // the same ACK: counter 1, cwnd = min(cwnd, in flight + 1); the next counted ACK takes
        // a segment off. Without the knob the walk starts on the next ACK.
        let ack = |pipe| AckInfo {
            pipe,
            ssthresh: 5 * MSS,
            progress: true,
            ..Default::default()
        };
        let run = |cut: bool| {
            let mut r = Recovery::new(Mode::RateHalving, MSS as u32, 3);
            r.rh_entry_cut = cut;
            r.enter(12 * MSS, 12 * MSS, 10 * MSS, 5 * MSS, MSS, 6 * MSS);
            let entry = r.window(0) / MSS;
            r.on_ack(&ack(9 * MSS));
            (entry, r.window(0) / MSS)
        };
        assert_eq!(run(true), (7, 6));
        assert_eq!(run(false), (10, 10));
    }

    #[test]
    fn test_rate_halving_floor_half_walks_below_ssthresh() {
        // 2.4 / 2.6 <= 2.6.12: the decrement goes on while cwnd > ssthresh/2; 2.6.13+ BIC and
        // CUBIC stop at ssthresh (in flight kept high so the clamp does not bind).
        let run = |half: bool| {
            let mut r = Recovery::new(Mode::RateHalving, MSS as u32, 3);
            r.rh_floor_half = half;
            r.enter(20 * MSS, 20 * MSS, 8 * MSS, 5 * MSS, 0, 30 * MSS);
            for _ in 0..20 {
                r.on_ack(&AckInfo {
                    pipe: 30 * MSS,
                    ssthresh: 5 * MSS,
                    progress: true,
                    ..Default::default()
                });
            }
            r.window(0) / MSS
        };
        assert_eq!(run(false), 5);
        assert_eq!(run(true), 2);
    }

    #[test]
    fn test_rate_halving_progress_only_skips_acks_without_progress() {
        // 2.6.23+: an ACK without FLAG_ANY_PROGRESS | FLAG_DSACKING_ACK neither counts nor
        // clamps; before, every ACK did.
        let run = |only: bool, pipe: u64| {
            let mut r = Recovery::new(Mode::RateHalving, MSS as u32, 3);
            r.rh_progress_only = only;
            r.enter(20 * MSS, 20 * MSS, 10 * MSS, 5 * MSS, 0, 30 * MSS);
            r.on_ack(&AckInfo {
                pipe,
                ssthresh: 5 * MSS,
                ..Default::default()
            });
            let after_first = r.window(0) / MSS;
            r.on_ack(&AckInfo {
                pipe: 30 * MSS,
                ssthresh: 5 * MSS,
                progress: true,
                ..Default::default()
            });
            (after_first, r.window(0) / MSS)
        };
        // Every ACK: the first (no progress) clamps, the second completes the pair (10 -> 9).
        assert_eq!(run(false, 30 * MSS), (10, 9));
        assert_eq!(run(false, 3 * MSS), (4, 4));
        // Progress only: the first neither clamps nor counts; the second is the first counted.
        assert_eq!(run(true, 30 * MSS), (10, 10));
        assert_eq!(run(true, 3 * MSS), (10, 10));
    }

    #[test]
    fn test_rate_halving_one_segment_per_two_acks() {
        let mut r = Recovery::new(Mode::RateHalving, MSS as u32, 3);
        r.enter(20 * MSS, 20 * MSS, 20 * MSS, 10 * MSS, 0, 0);
        for _ in 0..8 {
            r.on_ack(&AckInfo {
                pipe: 30 * MSS,
                ssthresh: 10 * MSS,
                ..Default::default()
            });
        }
        assert_eq!(r.window(0), 16 * MSS);
        // Clamped to in_flight + 1.
        r.on_ack(&AckInfo {
            pipe: 5 * MSS,
            ssthresh: 10 * MSS,
            ..Default::default()
        });
        assert_eq!(r.window(0), 6 * MSS);
        assert_eq!(r.exit(10 * MSS, 5 * MSS), Some(6 * MSS));
    }

    #[test]
    fn test_mode_without_sack_follows_recovery_nosack() {
        let (nr, prr) = (RecoveryNosackCfg::Newreno, RecoveryNosackCfg::PrrReno);
        assert_eq!(Mode::select(RecoveryCfg::Prr, false, nr), Mode::NewReno);
        assert_eq!(Mode::select(RecoveryCfg::Sack, true, nr), Mode::Rfc6675);
        assert_eq!(Mode::select(RecoveryCfg::Prr, false, prr), Mode::PrrReno);
        assert_eq!(Mode::select(RecoveryCfg::Prr, true, prr), Mode::Prr);
        // A NewReno sender stays NewReno.
        assert_eq!(
            Mode::select(RecoveryCfg::Newreno, false, prr),
            Mode::NewReno
        );
    }

    #[test]
    fn test_prr_reno_overshoot_sends_only_the_fast_retransmit_on_entry() {
        // Slow start's overshoot: 272 segments out, ssthresh 136, the third duplicate ACK
        // enters with three duplicate ACKs counted as delivered and the head marked lost:
        // Linux's in-flight is 272 − 3 − 1 = 268 > ssthresh, so PRR's proportional part
        // allows ⌈1 · 136 / 272⌉ = 1 segment (tcp_cwnd_reduction): the retransmission alone.
        let mut r = Recovery::new(Mode::PrrReno, MSS as u32, 3);
        r.enter(272 * MSS, 272 * MSS, 272 * MSS, 136 * MSS, MSS, 268 * MSS);
        assert_eq!(r.window(0), 269 * MSS);
        r.on_sent(MSS as u32);
        // The next duplicate ACK: one more delivered, in-flight 268 (the retransmission
        // counts): ⌈2 · 136 / 272⌉ − 1 = 0.
        r.on_ack(&AckInfo {
            is_dup: true,
            delivered: MSS,
            pipe: 268 * MSS,
            ssthresh: 136 * MSS,
            ..Default::default()
        });
        assert_eq!(r.window(0), 268 * MSS);
        // Receive-window limited below ssthresh: cwnd = in-flight + min(ssthresh − in-flight,
        // prr_delivered − prr_out (+1 on a clean advance)), here ssthresh (Linux reports it).
        r.on_ack(&AckInfo {
            is_dup: true,
            delivered: 200 * MSS,
            pipe: 60 * MSS,
            ssthresh: 136 * MSS,
            ..Default::default()
        });
        assert_eq!(r.window(0), 136 * MSS);
    }
}
