//! The sending end's timers, sans I/O: the retransmission timer (RFC 6298 §5), the persist
//! timer (RFC 9293 §3.8.6.1), RACK's reordering timer (RFC 8985 §6.2), the tail-loss probe
//! timeout (RFC 8985 §7.2), the host-queue wake-up and the pacing release time.
//!
//! Owns the deadlines and the persist backoff and answers when the sender next wants to run
//! ([`Timers::poll_at`], smoltcp's `poll_at`) and which deadlines are due ([`Timers::due`]).
//! What arms them and what happens when they fire is [`super::TcpSender`]'s and its parts'.

use crate::time::Nanos;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timers {
    /// Retransmission timer (also SYN and FIN retransmission).
    pub rto: Option<Nanos>,
    /// Persist timer: probes a zero or sub-MSS window with nothing outstanding.
    pub persist: Option<Nanos>,
    /// Persist backoff exponent.
    pub persist_backoff: u32,
    /// RACK reordering timer.
    pub rack: Option<Nanos>,
    /// Tail-loss probe timeout.
    pub tlp: Option<Nanos>,
    /// The host's transmit queue has room again.
    pub nic_wake: Option<Nanos>,
    /// Earliest departure of the next paced segment.
    pub pace_next: Nanos,
    /// The send loop last stopped because of pacing (so `pace_next` is a wake-up time).
    pub pace_blocked: bool,
}

/// Take `slot` if it is due at `now`: true once per expiry.
#[inline]
pub fn due(slot: &mut Option<Nanos>, now: Nanos) -> bool {
    if slot.is_some_and(|t| now >= t) {
        *slot = None;
        true
    } else {
        false
    }
}

/// What an ACK that advances snd_una does to the retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoOnAck {
    /// Nothing is outstanding any more: stop it (RFC 6298 §5.2).
    Stop,
    /// Restart it from now with the current RTO (RFC 6298 §5.3).
    Restart,
    /// Leave it running (NewReno recovery restarts it on the first partial ACK only, RFC 6582
    /// §3.2 step 5).
    Keep,
}

/// The retransmission timer on an ACK that advances snd_una: `nothing_outstanding` — no data
/// and no FIN unacknowledged; `restart_on_ack` — the recovery mode lets every advancing ACK
/// restart it ([`crate::tcp::recovery::Recovery::restart_rto_on_ack`]).
#[inline]
pub fn rto_on_advance(nothing_outstanding: bool, restart_on_ack: bool) -> RtoOnAck {
    if nothing_outstanding {
        RtoOnAck::Stop
    } else if restart_on_ack {
        RtoOnAck::Restart
    } else {
        RtoOnAck::Keep
    }
}

/// What the sender does when the persist timer fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersistProbe {
    /// Data is outstanding again: the retransmission timer covers it; the backoff is forgotten.
    Outstanding,
    /// A window smaller than a segment is open and data waits: send this many new bytes (the
    /// SWS override, RFC 9293 §3.8.6.2.1; Linux `tcp_write_wakeup` does the same).
    Partial(u32),
    /// The window is closed (or nothing waits): a zero-window probe, a segment with an old
    /// sequence number that elicits an ACK with the current window (RFC 9293 §3.10.7.4; the
    /// form Linux uses), then back off (RFC 9293 §3.8.6.1).
    ZeroWindow,
}

/// The persist timer fired: `outstanding` — data is unacknowledged; `rwnd_room` and `app_room`
/// — bytes the peer's window and the application allow from snd_nxt.
pub fn persist_probe(outstanding: bool, rwnd_room: u64, app_room: u64, smss: u32) -> PersistProbe {
    if outstanding {
        PersistProbe::Outstanding
    } else if rwnd_room > 0 && app_room > 0 {
        PersistProbe::Partial(rwnd_room.min(app_room).min(smss as u64) as u32)
    } else {
        PersistProbe::ZeroWindow
    }
}

impl Timers {
    /// Earliest armed deadline (the pacing time only while the send loop waits for it).
    #[inline]
    pub fn poll_at(&self) -> Option<Nanos> {
        #[inline]
        fn min(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }
        }
        let pace = self.pace_blocked.then_some(self.pace_next);
        let t = min(min(self.rto, self.persist), min(self.rack, self.tlp));
        min(t, min(self.nic_wake, pace))
    }

    /// Persist timer: RTO-based with exponential backoff, bounded by the maximum RTO.
    pub fn persist_interval(&self, base_rto: Nanos, max_rto: Nanos) -> Nanos {
        base_rto
            .saturating_mul(1 << self.persist_backoff.min(20))
            .min(max_rto)
    }

    /// Arm the persist timer unless it runs (RFC 9293 §3.8.6.1; doubles as the SWS override
    /// timer).
    pub fn arm_persist(&mut self, now: Nanos, base_rto: Nanos, max_rto: Nanos) {
        if self.persist.is_none() {
            self.persist = Some(now + self.persist_interval(base_rto, max_rto));
        }
    }

    /// The peer opened its window: stop probing and forget the backoff.
    pub fn window_opened(&mut self) {
        self.persist = None;
        self.persist_backoff = 0;
    }

    /// A zero-window probe went out: back off and re-arm.
    pub fn persist_probe_sent(&mut self, now: Nanos, base_rto: Nanos, max_rto: Nanos) {
        self.persist_backoff += 1;
        self.persist = Some(now + self.persist_interval(base_rto, max_rto));
    }

    /// RFC 6298 §5.1: start the retransmission timer when sending data if it is not running.
    /// `rto` is asked only then (almost every segment finds the timer running).
    #[inline]
    pub fn start_rto_if_idle(&mut self, now: Nanos, rto: impl FnOnce() -> Nanos) {
        if self.rto.is_none() {
            self.rto = Some(now + rto());
        }
    }

    /// RFC 6298 §5.3 (and after a retransmission, §5.5): restart the timer from now.
    pub fn restart_rto(&mut self, now: Nanos, rto: Nanos) {
        self.rto = Some(now + rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_persist_probe_choice() {
        assert_eq!(
            persist_probe(true, 0, 9000, 1448),
            PersistProbe::Outstanding
        );
        assert_eq!(
            persist_probe(false, 0, 9000, 1448),
            PersistProbe::ZeroWindow
        );
        assert_eq!(persist_probe(false, 500, 0, 1448), PersistProbe::ZeroWindow);
        // A sub-MSS window: what fits; never more than a segment or than the application has.
        assert_eq!(
            persist_probe(false, 500, 9000, 1448),
            PersistProbe::Partial(500)
        );
        assert_eq!(
            persist_probe(false, 9000, 9000, 1448),
            PersistProbe::Partial(1448)
        );
        assert_eq!(
            persist_probe(false, 9000, 300, 1448),
            PersistProbe::Partial(300)
        );
    }

    #[test]
    fn test_poll_at_earliest_deadline() {
        let mut t = Timers::default();
        assert_eq!(t.poll_at(), None);
        t.rto = Some(900);
        t.tlp = Some(300);
        t.persist = Some(500);
        assert_eq!(t.poll_at(), Some(300));
        t.nic_wake = Some(100);
        assert_eq!(t.poll_at(), Some(100));
        t.rack = Some(50);
        assert_eq!(t.poll_at(), Some(50));
    }

    #[test]
    fn test_poll_at_pacing_only_when_blocked() {
        let mut t = Timers {
            rto: Some(900),
            pace_next: 10,
            ..Timers::default()
        };
        assert_eq!(t.poll_at(), Some(900));
        t.pace_blocked = true;
        assert_eq!(t.poll_at(), Some(10));
    }

    #[test]
    fn test_due_fires_once() {
        let mut slot = Some(100);
        assert!(!due(&mut slot, 99));
        assert_eq!(slot, Some(100));
        assert!(due(&mut slot, 100));
        assert_eq!(slot, None);
        assert!(!due(&mut slot, 200));
    }

    #[test]
    fn test_persist_backoff_doubles_to_max_rto() {
        let mut t = Timers::default();
        t.arm_persist(0, 200, 1000);
        assert_eq!(t.persist, Some(200));
        t.arm_persist(50, 200, 1000); // already running: unchanged
        assert_eq!(t.persist, Some(200));
        let mut at = Vec::new();
        for now in [200, 600, 1400, 2400] {
            t.persist_probe_sent(now, 200, 1000);
            at.push(t.persist.unwrap() - now);
        }
        assert_eq!(at, vec![400, 800, 1000, 1000]);
        t.window_opened();
        assert_eq!((t.persist, t.persist_backoff), (None, 0));
    }

    #[test]
    fn test_rto_on_advance() {
        assert_eq!(rto_on_advance(true, true), RtoOnAck::Stop);
        assert_eq!(rto_on_advance(true, false), RtoOnAck::Stop);
        assert_eq!(rto_on_advance(false, true), RtoOnAck::Restart);
        assert_eq!(rto_on_advance(false, false), RtoOnAck::Keep);
    }

    #[test]
    fn test_rto_start_and_restart() {
        let mut t = Timers::default();
        t.start_rto_if_idle(10, || 100);
        t.start_rto_if_idle(20, || 100);
        assert_eq!(t.rto, Some(110), "RFC 6298 §5.1: only if not running");
        t.restart_rto(20, 100);
        assert_eq!(t.rto, Some(120));
    }
}
