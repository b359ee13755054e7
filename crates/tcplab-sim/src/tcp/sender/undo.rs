//! Undo of spurious congestion reductions, sans I/O: when a recovery or timeout episode proves
//! unnecessary and what to restore.
//!
//! Owns four detectors, each behind a knob:
//! * [`Undo`] (knob `undo`): the window before the episode, and the proofs that it was
//!   spurious — every retransmission D-SACKed (RFC 3708 §3, Linux `undo_retrans`) or an ACK
//!   echoing a timestamp older than the first retransmission (Eifel detection, RFC 3522 §3.2);
//! * [`BadRexmt`] (knob `undo_bad_rexmt`): FreeBSD's "bad retransmit" window after the first
//!   timeout;
//! * [`Frto`] (knob `frto`): F-RTO (RFC 5682) after a timeout;
//! * [`Frto26`] (knobs `frto` and `frto_variant = "linux-2.6"`): Linux 2.6.24–3.9 F-RTO, which
//!   answers a spurious timeout with knob `frto_response`.
//!
//! They say *whether* to undo and *what* to restore; [`super::TcpSender`] applies it to the
//! congestion controller, the recovery state and the scoreboard.

use crate::time::Nanos;

/// What the undo of a spurious reduction needs (knob `undo`; Linux `undo_marker`,
/// `prior_cwnd`, `prior_ssthresh`, `retrans_stamp`, `undo_retrans`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    /// snd_una when the episode began; None outside an episode.
    pub marker: Option<u64>,
    pub prior_cwnd: u64,
    pub prior_ssthresh: u64,
    /// Timestamp value of the episode's first retransmission.
    pub retrans_stamp: Option<u32>,
    /// Retransmissions not yet disowned by a D-SACK; -1 before the first (Linux starts it at
    /// -1 so that an episode with no retransmission cannot look fully D-SACKed).
    pub retrans: i64,
    /// The last episode's `retrans_stamp`, kept after it ends: Linux clears `retrans_stamp`
    /// only when no retransmission is outstanding (see [`Undo::begin`]).
    pub last_stamp: Option<u32>,
}

impl Default for Undo {
    fn default() -> Self {
        Undo {
            marker: None,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            retrans_stamp: None,
            retrans: -1,
            last_stamp: None,
        }
    }
}

impl Undo {
    /// An episode is open.
    pub fn active(&self) -> bool {
        self.marker.is_some()
    }

    /// Forget the episode (it ended without an undo).
    pub fn clear(&mut self) {
        *self = Undo {
            last_stamp: self.last_stamp,
            ..Undo::default()
        };
    }

    /// Knob `undo`: remember the window before a recovery or loss episode reduces it (Linux
    /// `tcp_init_undo`; a timeout inside an episode keeps the first episode's values, as
    /// `tcp_enter_loss` does).
    ///
    /// `retrans_out` counts the retransmissions of earlier episodes still outstanding (Linux
    /// `retrans_out`) and `head_retransmitted` says whether the segment at snd_una was ever
    /// retransmitted. While either holds, Linux keeps the earlier first-retransmission time:
    /// `retrans_stamp` is set only when zero (`tcp_retransmit_skb`) and cleared at recovery
    /// entry only when `tcp_any_retrans_done` is false (`tcp_retrans_stamp_cleanup`, Linux ≥
    /// 6.12, net/ipv4/tcp_input.c). Without that, an ACK echoing an earlier episode's
    /// retransmission looks older than this episode's first one and undoes a real loss
    /// (RFC 3522 §3.2 requires the echo to predate the *first* retransmission of the data).
    /// `tcp_init_undo` also starts `undo_retrans` at `retrans_out` (−1 when none).
    pub fn begin(
        &mut self,
        enabled: bool,
        snd_una: u64,
        cwnd: u64,
        ssthresh: u64,
        retrans_out: u64,
        head_retransmitted: bool,
    ) {
        if !enabled || self.marker.is_some() {
            return;
        }
        let kept = if retrans_out > 0 || head_retransmitted {
            self.last_stamp
        } else {
            None
        };
        *self = Undo {
            marker: Some(snd_una),
            prior_cwnd: cwnd,
            // Linux `tcp_current_ssthresh` in the Open state: max(ssthresh, 3/4 cwnd).
            prior_ssthresh: ssthresh.max(cwnd / 2 + cwnd / 4),
            retrans_stamp: kept,
            retrans: if retrans_out > 0 {
                retrans_out.min(i64::MAX as u64) as i64
            } else {
                -1
            },
            last_stamp: kept,
        };
    }

    /// A retransmission carrying timestamp `ts_val` left. Linux `tcp_retransmit_skb`: the first
    /// retransmission's time stamps the episode; `undo_retrans` counts the retransmissions a
    /// D-SACK may disown.
    pub fn on_retransmit(&mut self, ts_val: u32) {
        if self.marker.is_some() {
            if self.retrans_stamp.is_none() {
                self.retrans_stamp = Some(ts_val);
                self.last_stamp = self.retrans_stamp;
            }
            self.retrans = self.retrans.max(0) + 1;
        }
    }

    /// A D-SACK block ending at offset `right` arrived. RFC 3708 §3 / Linux `tcp_check_dsack`:
    /// a D-SACK at or above the episode's start reports one retransmission that was not needed.
    pub fn on_dsack(&mut self, right: i64) {
        if self.marker.is_some_and(|m| right > m as i64) && self.retrans > 0 {
            self.retrans -= 1;
        }
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
    pub fn spurious(&self, ts_on: bool, ts_ecr: u32, advanced: bool) -> bool {
        let Some(stamp) = self.retrans_stamp else {
            return false; // nothing was retransmitted yet
        };
        let delayed = advanced && ts_on && ts_ecr != 0 && (ts_ecr.wrapping_sub(stamp) as i32) < 0;
        delayed || self.retrans == 0
    }

    /// End the episode by undoing it: the cwnd and ssthresh to restore, never below the current
    /// values (Linux `tcp_undo_cwnd_reduction`: cwnd = max(cwnd, undo_cwnd()), ssthresh
    /// likewise).
    pub fn take(&mut self, cwnd: u64, ssthresh: u64) -> (u64, u64) {
        let u = *self;
        self.clear();
        (u.prior_cwnd.max(cwnd), u.prior_ssthresh.max(ssthresh))
    }
}

/// FreeBSD "bad retransmit" state (knob `undo_bad_rexmt`): the window before the first timeout
/// of an episode and until when an ACK proves that timeout spurious (`t_badrxtwin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadRexmt {
    pub until: Nanos,
    pub prior_cwnd: u64,
    pub prior_ssthresh: u64,
    pub prior_recover: Option<u64>,
}

impl BadRexmt {
    /// A timeout fires with `backoff` earlier timeouts in a row. FreeBSD tcp_timer_rexmt: on the
    /// first timeout (t_rxtshift becomes 1) remember the window and open the bad-retransmit
    /// window, SRTT/2 long (t_srtt >> (TCP_RTT_SHIFT + 1)).
    pub fn on_timeout(
        enabled: bool,
        backoff: u32,
        now: Nanos,
        srtt: Nanos,
        cwnd: u64,
        ssthresh: u64,
        recover: Option<u64>,
    ) -> Option<BadRexmt> {
        (enabled && backoff == 0).then_some(BadRexmt {
            until: now + srtt / 2,
            prior_cwnd: cwnd,
            prior_ssthresh: ssthresh,
            prior_recover: recover,
        })
    }

    /// Knob `undo_bad_rexmt` (FreeBSD tcp_input.c, "bad retransmit" recovery): an ACK that
    /// advances snd_una while only one timeout has fired (t_rxtshift == 1, no RTT sample since)
    /// and before `t_badrxtwin` acknowledges an original transmission, not the retransmission
    /// sent less than SRTT/2 ago: restore cwnd and ssthresh exactly (`snd_cwnd_prev`,
    /// `snd_ssthresh_prev`) and send on from snd_max instead of going back.
    pub fn proves_spurious(&self, backoff: u32, now: Nanos) -> bool {
        backoff == 1 && now < self.until
    }
}

/// F-RTO (knob `frto`, RFC 5682): deciding whether the last timeout was spurious.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frto {
    /// `high_seq`: snd_nxt when the timeout fired or when new data was last released; None
    /// when F-RTO is not running.
    pub high_seq: Option<u64>,
    /// F-RTO step 2b: the ACK being processed releases new data instead of retransmissions.
    pub send_new: bool,
}

/// What one ACK in the loss state tells F-RTO.
#[derive(Clone, Copy, Debug)]
pub struct FrtoAck {
    /// Still in the loss state (its recovery point not yet acknowledged, no undo).
    pub in_loss: bool,
    /// The ACK advances snd_una and snd_una is still below the loss state's recovery point.
    pub advanced_below_loss_point: bool,
    /// Data never retransmitted was acknowledged or SACKed.
    pub never_retransmitted_acked: bool,
    pub sacked: bool,
    pub dup: bool,
    pub snd_nxt: u64,
    /// New, never-sent data exists and the peer's window allows some.
    pub can_send_new: bool,
}

impl Frto {
    pub fn running(&self) -> bool {
        self.high_seq.is_some()
    }

    /// A timeout fired. F-RTO (RFC 5682; Linux `tcp_enter_loss`: on every timeout except the
    /// first one of a fast recovery, whose losses are known). `backoff` counts this timeout.
    pub fn on_timeout(&mut self, enabled: bool, was_recovery: bool, backoff: u32, snd_nxt: u64) {
        self.high_seq = (enabled && !(was_recovery && backoff == 1)).then_some(snd_nxt);
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
    ///
    /// Returns true when the timeout proved spurious (the caller undoes it).
    pub fn on_ack(&mut self, a: &FrtoAck) -> bool {
        let Some(high_seq) = self.high_seq else {
            return false;
        };
        // Each ACK decides anew whether new data is released (a release still waiting for a
        // pacing slot ends with the next ACK).
        self.send_new = false;
        if !a.in_loss {
            self.high_seq = None; // the episode ended (or was undone)
            return false;
        }
        if a.never_retransmitted_acked {
            self.high_seq = None;
            return true;
        }
        if a.snd_nxt > high_seq {
            if a.sacked || a.dup {
                self.high_seq = None; // step 3a: the loss was real
            }
        } else if a.advanced_below_loss_point {
            if a.can_send_new {
                self.high_seq = Some(a.snd_nxt);
                self.send_new = true;
            } else {
                self.high_seq = None;
            }
        }
        false
    }
}

/// Which F-RTO (knob `frto_variant`; used with knob `frto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FrtoVariantCfg {
    /// RFC 5682 inside the loss state, as Linux ≥ 3.10 runs it ([`Frto`]).
    #[serde(rename = "rfc5682")]
    Rfc5682,
    /// Linux 2.6.24–3.9 ([`Frto26`]): the timeout does not enter the loss state.
    #[serde(rename = "linux-2.6")]
    Linux26,
}

/// What Linux 2.6.24–3.9 does when its F-RTO finds a timeout spurious (knob `frto_response`,
/// Linux `tcp_frto_response`: 0 rate halving, the default; 1 conservative; 2 undo).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FrtoResponseCfg {
    /// `tcp_ratehalving_spur_to_response`: enter CWR (cwnd ≤ in flight + 1, then one segment
    /// less every second ACK down to ssthresh, `tcp_cwnd_down`; cwnd ≤ ssthresh when CWR ends).
    #[serde(rename = "ratehalving")]
    RateHalving,
    /// `tcp_conservative_spur_to_response`: cwnd = min(cwnd, ssthresh) at once, moderated.
    #[serde(rename = "conservative")]
    Conservative,
    /// `tcp_undo_spur_to_response`: restore the window from before the timeout (knob `undo`).
    #[serde(rename = "undo")]
    Undo,
}

/// Linux 2.6.24–3.9 F-RTO (knob `frto_variant = "linux-2.6"`; net/ipv4/tcp_input.c
/// `tcp_use_frto`, `tcp_enter_frto`, `tcp_process_frto`, `tcp_enter_frto_loss`, 2.6.24 and
/// 2.6.39 trees, read for the facts; RFC 4138 and its Appendix B, the SACK-enhanced form that
/// `tcp_frto = 2`, the default since 2.6.24, selects). At the timeout the sender does not enter
/// the loss state: ssthresh is reduced, cwnd only capped at what is in flight plus one, only
/// the first segment is resent, and the state is Disorder (`frto_counter` = 1). The ACKs that
/// follow decide ([`Frto26::on_ack`]). Replaced in Linux 3.10 by the RFC 5682 form inside the
/// loss state ("tcp: refactor F-RTO", Yuchung Cheng, 2013), knob `frto_variant = "rfc5682"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frto26 {
    /// `frto_counter`: 0 not running, 1 waiting for the first ACK that advances snd_una, 2 new
    /// data was released and the next ACK decides.
    pub stage: u8,
    /// `frto_highmark`: the highest sequence sent before the timeout (or the recovery point of
    /// a recovery the timeout interrupted, RFC 4138 Appendix B).
    pub highmark: u64,
    /// snd_nxt at the timeout (Linux `high_seq`; the mark of a later timeout during F-RTO).
    pub high_seq: u64,
}

/// What one ACK during [`Frto26`] carries (Linux's ACK flags).
#[derive(Clone, Copy, Debug)]
pub struct Frto26Ack {
    /// The connection negotiated SACK (the SACK-enhanced tests; `tcp_is_sackfrto`).
    pub sack: bool,
    /// FLAG_DATA_ACKED: snd_una advanced over data.
    pub data_acked: bool,
    /// FLAG_DATA_SACKED: data newly SACKed.
    pub sacked: bool,
    /// Some newly SACKed data lies above `highmark`, i.e. was sent after the timeout (so not
    /// FLAG_ONLY_ORIG_SACKED).
    pub sacked_above_highmark: bool,
    /// FLAG_NOT_DUP without progress: a window update or data, not a duplicate ACK.
    pub not_dup: bool,
    pub snd_una: u64,
    /// `tcp_may_send_now`: new data and the peer's window allow a segment.
    pub can_send_new: bool,
}

/// What [`Frto26::on_ack`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frto26Step {
    /// Not running: the ACK is not F-RTO's.
    None,
    /// Nothing changes; the controller does not grow cwnd on this ACK (`tcp_process_frto`
    /// returned 1).
    Hold,
    /// First ACK without progress, SACK form: cwnd = min(cwnd, in flight), no new data.
    HoldNoNew,
    /// First advancing ACK: cwnd = in flight + 2 segments, two new segments go out.
    SendNew,
    /// The timeout was real (`tcp_enter_frto_loss`): the loss state with cwnd = in flight +
    /// this many segments.
    Loss(u8),
    /// The timeout was spurious: the response of knob `frto_response`.
    Spurious,
}

impl Frto26 {
    pub fn running(&self) -> bool {
        self.stage != 0
    }

    /// F-RTO rules one ACK (Linux `tcp_process_frto`, RFC 4138 §2.1 and Appendix B):
    /// * an ACK that reaches `highmark` ends F-RTO in the loss state (allowing 2 segments after
    ///   the first ACK, else 3);
    /// * without SACK, a duplicate ACK means loss (0 segments at the first ACK, else 3); with
    ///   SACK, the first ACK waits until snd_una advances, and at the second a duplicate ACK
    ///   or a SACK of data sent after the timeout means loss;
    /// * the first advancing ACK releases two new segments (loss if there are none to send);
    /// * the second advancing ACK (or, with SACK, one that SACKs only original data) proves
    ///   the timeout spurious;
    /// * an ACK that is neither a duplicate nor progress (a window update) is ignored.
    pub fn on_ack(&mut self, a: &Frto26Ack) -> Frto26Step {
        if self.stage == 0 {
            return Frto26Step::None;
        }
        let first = self.stage == 1;
        let step = if a.snd_una >= self.highmark {
            Frto26Step::Loss(if first { 2 } else { 3 })
        } else if !a.sack {
            if !a.data_acked && a.not_dup {
                return Frto26Step::Hold;
            } else if !a.data_acked {
                Frto26Step::Loss(if first { 0 } else { 3 })
            } else if first {
                Frto26Step::SendNew
            } else {
                Frto26Step::Spurious
            }
        } else if first && !a.data_acked {
            return Frto26Step::HoldNoNew;
        } else if !first && !a.data_acked && !a.sacked {
            if a.not_dup {
                return Frto26Step::Hold;
            }
            Frto26Step::Loss(3)
        } else if !first && a.sacked && a.sacked_above_highmark {
            Frto26Step::Loss(3)
        } else if first {
            Frto26Step::SendNew
        } else {
            Frto26Step::Spurious
        };
        match step {
            Frto26Step::SendNew if a.can_send_new => self.stage = 2,
            Frto26Step::SendNew => {
                self.stage = 0;
                return Frto26Step::Loss(2);
            }
            _ => self.stage = 0,
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode() -> Undo {
        let mut u = Undo::default();
        u.begin(true, 5000, 40_000, 30_000, 0, false);
        u
    }

    #[test]
    fn test_open_begin_saves_window() {
        let u = episode();
        assert_eq!(u.marker, Some(5000));
        assert_eq!(u.prior_cwnd, 40_000);
        assert_eq!(u.prior_ssthresh, 30_000, "max(ssthresh, 3/4 cwnd)");
        let mut low = Undo::default();
        low.begin(true, 0, 40_000, 10_000, 0, false);
        assert_eq!(low.prior_ssthresh, 30_000);
        // Off, or already in an episode: nothing changes.
        let mut off = Undo::default();
        off.begin(false, 0, 1, 1, 0, false);
        assert!(!off.active());
        let mut again = episode();
        again.begin(true, 9000, 1, 1, 0, false);
        assert_eq!(again, episode());
    }

    #[test]
    fn test_recovery_all_retransmissions_dsacked_is_spurious() {
        let mut u = episode();
        assert!(!u.spurious(false, 0, true), "nothing retransmitted yet");
        u.on_retransmit(100);
        u.on_retransmit(101);
        assert_eq!((u.retrans_stamp, u.retrans), (Some(100), 2));
        u.on_dsack(6000);
        assert!(!u.spurious(false, 0, false));
        u.on_dsack(4000); // below the episode's start: not one of ours
        assert!(!u.spurious(false, 0, false));
        u.on_dsack(7000);
        assert!(u.spurious(false, 0, false));
        u.on_dsack(8000); // never below zero
        assert_eq!(u.retrans, 0);
    }

    #[test]
    fn test_recovery_without_retransmission_never_dsack_spurious() {
        let mut u = episode();
        u.on_dsack(6000);
        assert_eq!(u.retrans, -1);
        assert!(!u.spurious(false, 0, false));
    }

    #[test]
    fn test_recovery_old_timestamp_echo_is_spurious_only_when_advancing() {
        let mut u = episode();
        u.on_retransmit(1000);
        // Echo of a transmission before the first retransmission (Eifel, RFC 3522 §3.2).
        assert!(u.spurious(true, 999, true));
        assert!(
            !u.spurious(true, 999, false),
            "a duplicate ACK proves nothing"
        );
        assert!(!u.spurious(true, 1000, true));
        assert!(!u.spurious(false, 999, true), "timestamps off");
        assert!(!u.spurious(true, 0, true), "no echo");
        // Across the 32-bit wrap.
        let mut w = episode();
        w.on_retransmit(5);
        assert!(w.spurious(true, u32::MAX - 5, true));
    }

    #[test]
    fn test_recovery_take_restores_at_least_current() {
        let mut u = episode();
        assert_eq!(u.take(10_000, 35_000), (40_000, 35_000));
        assert!(!u.active());
        assert_eq!(u.retrans, -1);
        let mut u = episode();
        assert_eq!(u.take(50_000, 5_000), (50_000, 30_000));
    }

    #[test]
    fn test_next_episode_keeps_first_stamp_while_retransmissions_outstanding() {
        // Episode 1 retransmits at ts 100 and ends; its retransmission at ts 150 is still
        // outstanding when episode 2 begins. An ACK advancing snd_una with an echo of 150
        // (the hole that retransmission filled) predates episode 2's own first retransmission
        // (200) but not the first retransmission since none was outstanding (100): no undo
        // (Linux `tcp_retrans_stamp_cleanup`).
        let mut u = Undo::default();
        u.begin(true, 1000, 40_000, 30_000, 0, false);
        u.on_retransmit(100);
        u.on_retransmit(150);
        u.clear();
        u.begin(true, 5000, 40_000, 30_000, 1, false);
        assert_eq!((u.retrans_stamp, u.retrans), (Some(100), 1));
        u.on_retransmit(200);
        assert_eq!(u.retrans, 2);
        assert!(!u.spurious(true, 150, true));
        assert!(u.spurious(true, 99, true));
        // Nothing outstanding any more: the next episode starts its own clock.
        u.clear();
        u.begin(true, 9000, 40_000, 30_000, 0, false);
        assert_eq!((u.retrans_stamp, u.retrans), (None, -1));
        u.on_retransmit(300);
        assert!(u.spurious(true, 250, true));
        // The head segment was retransmitted before (retrans_out 0 but EVER_RETRANS): kept.
        u.clear();
        u.begin(true, 9500, 40_000, 30_000, 0, true);
        assert_eq!((u.retrans_stamp, u.retrans), (Some(300), -1));
    }

    #[test]
    fn test_retransmit_outside_episode_not_counted() {
        let mut u = Undo::default();
        u.on_retransmit(7);
        assert_eq!(u, Undo::default());
    }

    #[test]
    fn test_loss_bad_rexmt_window() {
        assert_eq!(BadRexmt::on_timeout(false, 0, 0, 100, 1, 1, None), None);
        assert_eq!(
            BadRexmt::on_timeout(true, 1, 0, 100, 1, 1, None),
            None,
            "second timeout"
        );
        let b = BadRexmt::on_timeout(true, 0, 1000, 100, 20_000, 9_000, Some(7)).unwrap();
        assert_eq!(
            (b.until, b.prior_cwnd, b.prior_ssthresh),
            (1050, 20_000, 9_000)
        );
        assert_eq!(b.prior_recover, Some(7));
        assert!(b.proves_spurious(1, 1049));
        assert!(!b.proves_spurious(1, 1050), "the window closed");
        assert!(!b.proves_spurious(2, 1000), "a second timeout fired");
        assert!(
            !b.proves_spurious(0, 1000),
            "an RTT sample reset the backoff"
        );
    }

    fn frto_ack() -> FrtoAck {
        FrtoAck {
            in_loss: true,
            advanced_below_loss_point: false,
            never_retransmitted_acked: false,
            sacked: false,
            dup: false,
            snd_nxt: 10_000,
            can_send_new: true,
        }
    }

    #[test]
    fn test_loss_frto_starts_except_first_timeout_of_recovery() {
        let mut f = Frto::default();
        f.on_timeout(true, false, 1, 10_000);
        assert_eq!(f.high_seq, Some(10_000));
        f.on_timeout(true, true, 1, 10_000);
        assert!(!f.running());
        f.on_timeout(true, true, 2, 10_000);
        assert!(f.running());
        f.on_timeout(false, false, 1, 10_000);
        assert!(!f.running());
    }

    #[test]
    fn test_loss_frto_spurious_when_original_acked() {
        let mut f = Frto::default();
        f.on_timeout(true, false, 1, 10_000);
        let a = FrtoAck {
            never_retransmitted_acked: true,
            ..frto_ack()
        };
        assert!(f.on_ack(&a));
        assert!(!f.running());
        assert!(!f.on_ack(&a), "F-RTO no longer runs");
    }

    #[test]
    fn test_loss_frto_step_2b_then_3a() {
        let mut f = Frto::default();
        f.on_timeout(true, false, 1, 10_000);
        // Step 2b: the first advancing ACK releases new data.
        let a = FrtoAck {
            advanced_below_loss_point: true,
            ..frto_ack()
        };
        assert!(!f.on_ack(&a));
        assert!(f.send_new);
        assert_eq!(f.high_seq, Some(10_000));
        // New data went out (snd_nxt 12000); a duplicate ACK then shows the loss was real.
        let a = FrtoAck {
            snd_nxt: 12_000,
            ..frto_ack()
        };
        assert!(!f.on_ack(&a));
        assert!(f.running(), "neither SACK nor duplicate: wait");
        assert!(
            !f.send_new,
            "a release still waiting for a pacing slot ends with the next ACK"
        );
        let a = FrtoAck { dup: true, ..a };
        assert!(!f.on_ack(&a));
        assert!(!f.running());
    }

    #[test]
    fn test_loss_frto_stops_without_new_data_or_loss_state() {
        let mut f = Frto::default();
        f.on_timeout(true, false, 1, 10_000);
        let a = FrtoAck {
            advanced_below_loss_point: true,
            can_send_new: false,
            ..frto_ack()
        };
        assert!(!f.on_ack(&a));
        assert!(!f.running() && !f.send_new);
        f.on_timeout(true, false, 1, 10_000);
        let a = FrtoAck {
            in_loss: false,
            never_retransmitted_acked: true,
            ..frto_ack()
        };
        assert!(!f.on_ack(&a), "the episode ended first");
        assert!(!f.running());
    }

    fn ack26(sack: bool) -> Frto26Ack {
        Frto26Ack {
            sack,
            data_acked: true,
            sacked: false,
            sacked_above_highmark: false,
            not_dup: true,
            snd_una: 2000,
            can_send_new: true,
        }
    }

    fn running26() -> Frto26 {
        Frto26 {
            stage: 1,
            highmark: 10_000,
            high_seq: 10_000,
        }
    }

    #[test]
    fn test_frto26_spurious_after_two_advancing_acks() {
        for sack in [false, true] {
            let mut f = running26();
            assert_eq!(f.on_ack(&ack26(sack)), Frto26Step::SendNew);
            assert_eq!(f.stage, 2);
            let second = Frto26Ack {
                snd_una: 3000,
                ..ack26(sack)
            };
            assert_eq!(f.on_ack(&second), Frto26Step::Spurious);
            assert!(!f.running());
            assert_eq!(f.on_ack(&second), Frto26Step::None);
        }
    }

    #[test]
    fn test_frto26_duplicate_ack_means_loss() {
        let dup = Frto26Ack {
            data_acked: false,
            not_dup: false,
            snd_una: 1000,
            ..ack26(false)
        };
        // Without SACK: at the first ACK, loss with no extra segment; at the second, 3.
        let mut f = running26();
        assert_eq!(f.on_ack(&dup), Frto26Step::Loss(0));
        let mut f = running26();
        f.on_ack(&ack26(false));
        assert_eq!(f.on_ack(&dup), Frto26Step::Loss(3));
        // With SACK the first ACK waits for snd_una to advance; the second decides.
        let mut f = running26();
        let sack_dup = Frto26Ack {
            sacked: true,
            ..dup
        };
        assert_eq!(
            f.on_ack(&Frto26Ack {
                sack: true,
                ..sack_dup
            }),
            Frto26Step::HoldNoNew
        );
        assert_eq!(f.stage, 1);
        f.on_ack(&ack26(true));
        assert_eq!(
            f.on_ack(&Frto26Ack { sack: true, ..dup }),
            Frto26Step::Loss(3)
        );
    }

    #[test]
    fn test_frto26_sack_of_new_data_means_loss_of_originals_not() {
        let sack_only = |above| Frto26Ack {
            data_acked: false,
            sacked: true,
            sacked_above_highmark: above,
            not_dup: false,
            ..ack26(true)
        };
        let mut f = running26();
        f.on_ack(&ack26(true));
        assert_eq!(f.on_ack(&sack_only(true)), Frto26Step::Loss(3));
        let mut f = running26();
        f.on_ack(&ack26(true));
        assert_eq!(f.on_ack(&sack_only(false)), Frto26Step::Spurious);
    }

    #[test]
    fn test_frto26_window_update_ignored_highmark_and_no_new_data_mean_loss() {
        let winupd = Frto26Ack {
            data_acked: false,
            ..ack26(false)
        };
        let mut f = running26();
        f.on_ack(&ack26(false));
        assert_eq!(f.on_ack(&winupd), Frto26Step::Hold);
        assert_eq!(f.stage, 2);
        let all = Frto26Ack {
            snd_una: 10_000,
            ..ack26(true)
        };
        assert_eq!(running26().on_ack(&all), Frto26Step::Loss(2));
        let mut f = running26();
        f.on_ack(&ack26(true));
        assert_eq!(f.on_ack(&all), Frto26Step::Loss(3));
        let mut f = running26();
        let nothing = Frto26Ack {
            can_send_new: false,
            ..ack26(true)
        };
        assert_eq!(f.on_ack(&nothing), Frto26Step::Loss(2));
        assert!(!f.running());
    }
}
