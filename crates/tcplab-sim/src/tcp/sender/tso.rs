//! TCP segmentation offload as Linux 2.6 drives it (knob `tso`): new data leaves in frames of
//! up to 64 KB that the NIC cuts into segments and sends back to back at line rate, and the
//! sender defers a frame while only a small part of the window is open, so that the frames are
//! large ("a kind of TSO Nagle test", `tcp_tso_should_defer`, John Heffner's algorithm).
//!
//! The rules, from Linux 2.6.2x net/ipv4/tcp_output.c (`tcp_tso_should_defer`,
//! `tcp_write_xmit`, `tcp_is_cwnd_limited`; read for the facts, nothing copied):
//! * no deferral outside the Open state (recovery, loss, CWR, and Disorder: duplicate ACKs or
//!   SACKed data outstanding — `Episodes::ca_state`), for the segment
//!   that ends the data (FIN), or when the previous deferral decision lies two or more clock
//!   ticks back (jiffies; the tick is the personality's `clock_granularity`, HZ);
//! * `limit` = min(receive window left, (cwnd − in flight)): send when `limit` ≥ 64 KB (a full
//!   frame, `sk_gso_max_size`) or when `limit` ≥ min(receive window, cwnd) / 3
//!   (`tcp_tso_win_divisor`, default 3); otherwise defer;
//! * a frame sent carries up to min(`limit`, 64 KB), whole segments (`tcp_window_allows`);
//! * a sender that deferred a frame counts as cwnd-limited (window growth allowed) only when
//!   less than cwnd / `tcp_tso_win_divisor` is left (with TSO, `tcp_is_cwnd_limited`), not when
//!   the receive window held the frame back.
//!
//! Modelled: the deferral, the frame-sized bursts it produces, and the sending host's queue
//! holding a frame as one packet (Linux queues the frame as one `sk_buff` in the qdisc, whose
//! `txqueuelen` counts buffers; the NIC cuts it into segments after it has left the qdisc:
//! `Packet::frame_cont`, src/link.rs). Not modelled: GSO in software, and the NIC's own
//! segmentation timing (segments of a frame leave at the NIC's line rate, as any back-to-back
//! segments do here).

use crate::time::Nanos;

/// Largest TSO frame, bytes of payload (Linux `sk_gso_max_size`, 65 536).
pub const MAX_FRAME: u64 = 65_536;
/// Linux `tcp_tso_win_divisor` default.
pub const WIN_DIVISOR: u64 = 3;

/// What the deferral decision looks at, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct DeferInput {
    /// Open state: no recovery, loss, CWR, duplicate ACKs or SACKed data (Linux `TCP_CA_Open`).
    pub open: bool,
    /// The next new segment ends the application's data (it carries the FIN in Linux).
    pub ends_data: bool,
    pub cwnd: u64,
    pub in_flight: u64,
    /// Receive window: the whole advertised window, and what is left of it beyond snd_nxt.
    pub rwnd: u64,
    pub rwnd_left: u64,
    pub now: Nanos,
    /// Time of the previous decision to defer, if the last decision was to defer.
    pub deferred_at: Option<Nanos>,
    /// Clock tick (Linux jiffy).
    pub tick: Nanos,
}

/// Decision for the next frame of new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Send a frame of at most this many payload bytes now.
    Send(u64),
    /// Hold the data until more of the window opens.
    Defer,
}

/// `tcp_tso_should_defer` and the frame size `tcp_write_xmit` then sends.
pub fn next_frame(i: &DeferInput) -> Frame {
    let limit = i.rwnd_left.min(i.cwnd.saturating_sub(i.in_flight));
    let frame = Frame::Send(limit.min(MAX_FRAME));
    if !i.open || i.ends_data {
        return frame;
    }
    if let Some(t) = i.deferred_at {
        // "Defer for less than two clock ticks": jiffies now − jiffies then > 1.
        let tick = i.tick.max(1);
        if i.now / tick > t / tick + 1 {
            return frame;
        }
    }
    if limit >= MAX_FRAME || limit >= i.rwnd.min(i.cwnd) / WIN_DIVISOR {
        return frame;
    }
    Frame::Defer
}

/// Whether a sender that deferred a frame counts as cwnd-limited (window growth allowed):
/// with TSO, Linux 2.6 `tcp_is_cwnd_limited` says yes when less than cwnd / 3 of the window is
/// left unused — not when the receive window held the frame back.
pub fn deferred_cwnd_limited(cwnd: u64, in_flight: u64) -> bool {
    cwnd.saturating_sub(in_flight) * WIN_DIVISOR < cwnd
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn input(cwnd_seg: u64, in_flight_seg: u64) -> DeferInput {
        DeferInput {
            open: true,
            ends_data: false,
            cwnd: cwnd_seg * MSS,
            in_flight: in_flight_seg * MSS,
            rwnd: 1 << 30,
            rwnd_left: 1 << 30,
            now: 10_000_000,
            deferred_at: None,
            tick: 4_000_000,
        }
    }

    #[test]
    fn test_large_window_waits_for_a_full_frame() {
        // 10 000-segment window: a third is far above 64 KB, so only a full frame goes.
        assert_eq!(next_frame(&input(10_000, 9_990)), Frame::Defer);
        assert_eq!(next_frame(&input(10_000, 9_950)), Frame::Send(MAX_FRAME));
    }

    #[test]
    fn test_small_window_sends_a_third_of_it() {
        // 30-segment window: 10 segments open (a third) is enough, 9 is not.
        assert_eq!(next_frame(&input(30, 20)), Frame::Send(10 * MSS));
        assert_eq!(next_frame(&input(30, 21)), Frame::Defer);
    }

    #[test]
    fn test_no_deferral_outside_open_or_at_the_end_of_the_data() {
        let mut i = input(10_000, 9_990);
        i.open = false;
        assert_eq!(next_frame(&i), Frame::Send(10 * MSS));
        let mut i = input(10_000, 9_990);
        i.ends_data = true;
        assert_eq!(next_frame(&i), Frame::Send(10 * MSS));
    }

    #[test]
    fn test_deferral_ends_two_ticks_after_the_last_decision() {
        let mut i = input(10_000, 9_990);
        // Same tick and the next tick: still deferred; two ticks on: sent.
        for (prev, want) in [
            (9_000_000, Frame::Defer),
            (7_000_000, Frame::Defer),
            (3_000_000, Frame::Send(10 * MSS)),
        ] {
            i.deferred_at = Some(prev);
            assert_eq!(next_frame(&i), want, "deferred at {prev}");
        }
    }

    #[test]
    fn test_a_frame_held_by_the_receive_window_is_not_cwnd_limited() {
        assert!(deferred_cwnd_limited(30 * MSS, 21 * MSS));
        assert!(!deferred_cwnd_limited(30 * MSS, 20 * MSS));
        assert!(!deferred_cwnd_limited(10_000 * MSS, 100 * MSS));
    }

    #[test]
    fn test_receive_window_limits_the_frame_and_the_chunk() {
        let mut i = input(10_000, 0);
        i.rwnd = 30 * MSS;
        i.rwnd_left = 9 * MSS;
        // limit = 9 segments < rwnd/3 = 10 segments: defer; with 10 left: send 10.
        assert_eq!(next_frame(&i), Frame::Defer);
        i.rwnd_left = 10 * MSS;
        assert_eq!(next_frame(&i), Frame::Send(10 * MSS));
    }
}
