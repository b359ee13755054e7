//! XNU's stretch ACKs: a macOS receiver that detects a streaming sender ACKs every
//! `maxseg_unacked` (8) segments instead of every second one (knob `stretch_ack_segments`).
//!
//! Source: Apple's XNU kernel (APSL; read for the facts, nothing copied), as in the darwin-xnu
//! tree of the macOS 10.13–11 era (bsd/netinet/tcp_input.c `tcp_stretch_ack_enable` and the
//! streaming bookkeeping before it, `tcp_reset_stretch_ack`, `tcp_reass`; tcp_cc.c
//! `tcp_cc_delay_ack`, case `tcp_delack_enabled` = 3, the default; tcp_timer.c, TCPT_DELACK;
//! tcp_timer.h `TCPTV_UNACKWIN`, `TCPTV_MAXRCVIDLE`, `TCP_RCV_SS_PKTCOUNT`). Per data segment
//! of an established connection, before the segment is processed:
//!
//! * while waiting after slow start or a loss (`TF_RCVUNACK_WAITSS`) the segment is counted;
//! * the connection is *streaming* when at least `maxseg_unacked` × MSS bytes (payload plus TCP
//!   header, `tlen + off`) arrived in the current window of `tcp_rcvunackwin` (100 ms) and that
//!   window has not ended; not after a silence longer than `tcp_maxrcvidle` (200 ms) past the
//!   window's end; not for a segment with any flag besides ACK (PSH, FIN);
//! * ACKs are stretched for this segment when streaming and not waiting, or when the wait has
//!   seen `tcp_rcvsspktcnt` (512) segments ("No ack stretching during slow-start, until we see
//!   some packets"), which ends the wait;
//! * the byte window then advances: bytes add up while it lasts, else a new one starts with
//!   this segment.
//!
//! The connection starts waiting (`tcp_newtcpcb`); a segment that goes through reassembly (out
//! of order, or filling a hole) waits again from zero (`tcp_reass`), resetting the byte window
//! if ACKs were stretched. When the delayed-ACK timer fires while stretching, the receiver
//! resets the same way; a firing with 2–7 segments unacknowledged counts as a wrong guess, and
//! after more than `TCP_STRETCHACK_DELAY_THRESHOLD` (5) of them stretching is off for
//! `TCP_STRETCHACK_ENABLE_PKTCNT` (2000) segments (`TF_DISABLE_STRETCHACK`).
//!
//! Approximations: XNU's clock (`tcp_now`) ticks in milliseconds, this one is exact; the ACK
//! threshold counts bytes (`RecvCore`'s `unacked_bytes` ≥ n × MSS) where XNU counts segments
//! (`t_unacksegs`), the same for full-sized segments. Not modelled: `tcp_cc_delay_ack` also
//! ACKs at once while the last ACK advertised a zero window (`TF_RXWIN0SENT`), which only a
//! slow application (`app_read_rate`) can cause. The newest XNU
//! (apple-oss-distributions/xnu) decides by the receive window instead; which macOS release
//! changed it is UNVERIFIED.

use crate::time::Nanos;

/// `TCP_STRETCHACK_DELAY_THRESHOLD` (tcp_timer.c): delayed-ACK firings while stretching that
/// are tolerated before stretching is switched off for a while.
const DELAY_THRESHOLD: u32 = 5;
/// `TCP_STRETCHACK_ENABLE_PKTCNT` (tcp_input.c): segments after which a switched-off stretch
/// is allowed again.
const ENABLE_PKTCNT: u32 = 2000;

/// The knobs: `stretch_ack_segments` (`maxseg_unacked`), `stretch_ack_window`
/// (`tcp_rcvunackwin`), `stretch_ack_idle` (`tcp_maxrcvidle`), `stretch_ack_wait`
/// (`tcp_rcvsspktcnt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StretchCfg {
    pub segments: u32,
    pub window: Nanos,
    pub idle: Nanos,
    pub wait_packets: u32,
}

/// The streaming detector of one connection.
#[derive(Clone, Debug)]
pub struct XnuStretch {
    cfg: StretchCfg,
    /// End of the current byte-counting window (`rcv_unackwin`) and its bytes (`rcv_by_unackwin`).
    window_end: Nanos,
    window_bytes: u64,
    /// ACKs are stretched for the latest segment (`TF_STRETCHACK`).
    on: bool,
    /// Waiting after start or a loss (`TF_RCVUNACK_WAITSS`), segments seen meanwhile.
    waiting: bool,
    waited: u32,
    /// Switched off after repeated delayed-ACK firings (`TF_DISABLE_STRETCHACK`), segments since.
    disabled: bool,
    disabled_for: u32,
    /// Delayed-ACK firings with 2..segments unacknowledged (`t_stretchack_delayed`).
    delayed: u32,
    /// Times stretching was reset (reassembly or delayed-ACK timer), for tests and stats.
    pub resets: u64,
}

impl XnuStretch {
    /// A new connection: waiting, no window yet.
    pub fn new(cfg: StretchCfg) -> Self {
        XnuStretch {
            cfg,
            window_end: 0,
            window_bytes: 0,
            on: false,
            waiting: true,
            waited: 0,
            disabled: false,
            disabled_for: 0,
            delayed: 0,
            resets: 0,
        }
    }

    /// A data segment of `bytes` (payload plus TCP header) arrives at `now`; `mss` is the full
    /// payload size; `other_flags`: it carries a flag besides ACK. Returns whether its ACK may
    /// be stretched (then the caller ACKs every `cfg.segments` segments).
    #[inline]
    pub fn on_data(&mut self, now: Nanos, bytes: u64, mss: u32, other_flags: bool) -> bool {
        if self.waiting {
            self.waited = self.waited.saturating_add(1);
        }
        let mut streaming = self.window_bytes >= u64::from(self.cfg.segments) * u64::from(mss)
            && self.window_end >= now;
        if now > self.window_end.saturating_add(self.cfg.idle) || other_flags {
            streaming = false;
        }
        if self.disabled {
            if self.disabled_for >= ENABLE_PKTCNT {
                self.disabled = false;
                self.disabled_for = 0;
            } else {
                self.disabled_for += 1;
            }
        }
        self.on =
            !self.disabled && streaming && (!self.waiting || self.waited >= self.cfg.wait_packets);
        if self.on {
            self.waiting = false;
            self.waited = 0;
        }
        if self.window_end > now {
            self.window_bytes += bytes;
        } else {
            self.window_end = now + self.cfg.window;
            self.window_bytes = bytes;
        }
        self.on
    }

    /// The segment went through reassembly (arrived out of order or filled a hole): wait again.
    pub fn on_reassembly(&mut self, now: Nanos) {
        if self.on {
            self.reset(now);
        }
        self.waiting = true;
        self.waited = 0;
    }

    /// The delayed-ACK timer fired with `unacked` segments unacknowledged.
    pub fn on_delack_timer(&mut self, now: Nanos, unacked: u32) {
        if !self.on {
            return;
        }
        if unacked > 1 && unacked < self.cfg.segments {
            self.delayed += 1;
        }
        if self.delayed > DELAY_THRESHOLD {
            self.disabled = true;
            self.disabled_for = 0;
            self.delayed = 0;
        }
        self.reset(now);
    }

    /// `tcp_reset_stretch_ack`: every second segment again, a new byte window, and a new wait.
    fn reset(&mut self, now: Nanos) {
        self.on = false;
        self.window_bytes = 0;
        self.window_end = now + self.cfg.window;
        self.waiting = true;
        self.waited = 0;
        self.resets += 1;
    }

    /// ACKs are stretched for the latest segment.
    pub fn is_on(&self) -> bool {
        self.on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const MSS: u32 = 1448;
    const SEG: u64 = 1448 + 32;

    fn cfg() -> StretchCfg {
        StretchCfg {
            segments: 8,
            window: 100 * MS,
            idle: 200 * MS,
            wait_packets: 512,
        }
    }

    /// `n` segments 100 µs apart from `t`; returns (time after, how many were stretched).
    fn feed(s: &mut XnuStretch, t: Nanos, n: u32) -> (Nanos, u32) {
        let mut on = 0;
        let mut t = t;
        for _ in 0..n {
            on += u32::from(s.on_data(t, SEG, MSS, false));
            t += MS / 10;
        }
        (t, on)
    }

    #[test]
    fn test_stretching_starts_after_the_slow_start_wait() {
        let mut s = XnuStretch::new(cfg());
        // Segments 1..511 of the wait: streaming, but still waiting.
        let (t, on) = feed(&mut s, MS, 511);
        assert_eq!(on, 0);
        // The 512th segment ends the wait.
        assert!(s.on_data(t, SEG, MSS, false));
        let (_, on) = feed(&mut s, t + MS / 10, 100);
        assert_eq!(on, 100);
    }

    #[test]
    fn test_a_slow_sender_is_never_streaming() {
        // 7 full segments per 100-ms window are below maxseg_unacked x MSS.
        let mut s = XnuStretch::new(cfg());
        let mut on = 0;
        for k in 0..2000u64 {
            on += u32::from(s.on_data(k * 15 * MS, SEG, MSS, false));
        }
        assert_eq!(on, 0);
        // 9 per window (12 ms apart) are enough for the 9th, which sees 8 x 1480 >= 8 x 1448
        // bytes before it: one segment in 9 once the wait is over.
        let mut s = XnuStretch::new(cfg());
        let mut on = 0;
        for k in 0..(512u32 + 9 * 100) {
            on += u32::from(s.on_data(u64::from(k) * 12 * MS, SEG, MSS, false));
        }
        assert!((99..=101).contains(&on), "{on}");
    }

    #[test]
    fn test_push_and_idle_and_reassembly_stop_stretching() {
        let mut s = XnuStretch::new(cfg());
        let (t, _) = feed(&mut s, MS, 600);
        assert!(s.is_on());
        // A segment with PSH is not stretched, the next one is again (no wait).
        assert!(!s.on_data(t, SEG, MSS, true));
        assert!(s.on_data(t + MS / 10, SEG, MSS, false));
        // After a silence longer than the window plus 200 ms: not streaming, and the byte
        // window starts again, so the next 8 segments are not stretched either.
        let t = t + 400 * MS;
        let (t, on) = feed(&mut s, t, 8);
        assert_eq!(on, 0);
        let (t, on) = feed(&mut s, t, 10);
        assert_eq!(on, 10);
        // Reassembly: back to the 512-segment wait.
        s.on_reassembly(t);
        let (t, on) = feed(&mut s, t, 511);
        assert_eq!(on, 0);
        assert!(s.on_data(t, SEG, MSS, false));
        assert_eq!(s.resets, 1);
    }

    #[test]
    fn test_repeated_delack_firings_switch_stretching_off_for_2000_segments() {
        let mut s = XnuStretch::new(cfg());
        let mut t = MS;
        for round in 0..6 {
            let (t2, _) = feed(&mut s, t, 520);
            assert!(s.is_on(), "round {round}");
            s.on_delack_timer(t2, 3);
            assert!(!s.is_on());
            t = t2 + MS;
        }
        // The sixth firing exceeded the threshold of 5: off for 2000 segments, then on again.
        let (t, on) = feed(&mut s, t, 2000);
        assert_eq!(on, 0);
        let (_, on) = feed(&mut s, t, 10);
        assert_eq!(on, 10);
    }

    #[test]
    fn test_a_delack_firing_with_one_or_eight_unacked_is_no_wrong_guess() {
        let mut s = XnuStretch::new(cfg());
        let mut t = MS;
        for _ in 0..10 {
            let (t2, _) = feed(&mut s, t, 520);
            assert!(s.is_on());
            s.on_delack_timer(t2, 1);
            t = t2 + MS;
        }
        let (_, on) = feed(&mut s, t, 520);
        assert!(on > 0, "never disabled");
        assert_eq!(s.resets, 10);
    }
}
