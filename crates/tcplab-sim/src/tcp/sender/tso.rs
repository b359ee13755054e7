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
//!
//! ## Linux ≥ 4.17 (knob `tso_model = "linux-6"`)
//! Every Linux TCP socket builds GSO buffers whatever the device offers ("tcp: switch to GSO
//! being always on", 0a6b2a1dc2a2, 4.17; the device or software GSO cuts them), and the
//! deferral changed with the buffer size (net/ipv4/tcp_output.c of 6.x: `tcp_write_xmit`,
//! `tcp_cwnd_test`, `tcp_tso_should_defer`, `tcp_tso_autosize`, `tcp_update_pacing_rate`;
//! read for the facts, nothing copied):
//! * a buffer holds at most `max_segs` = `tcp_tso_autosize` segments (about 1 ms of data at the
//!   socket's pacing rate, [`super::pacing::autosize_segments`]) and at most
//!   min(cwnd / 2, cwnd − in flight) (`tcp_cwnd_test`: "at least 2 GSO packets in flight");
//!   an unpaced flow's pacing rate is still computed: mss · max(cwnd, packets out) / SRTT ×
//!   200 % while cwnd < ssthresh / 2, else × 120 % (ip-sysctl `tcp_pacing_ss_ratio`,
//!   `tcp_pacing_ca_ratio`, [`linux_pacing_rate`]);
//! * a buffer is also at most the device's `gso_max_segs` segments (knob `gso_max_segs`,
//!   `sk_gso_max_segs`; `tcp_tso_segs`);
//! * send at once in Recovery or Loss, at the end of the data, when the last buffer left more
//!   than 1 ms ago ("allowing defer only if the last write was recent (1 ms)"), when the
//!   write-queue buffer holding the next segment is one segment long (`tso_segs == 1`: Nagle's
//!   rule alone, which a full segment passes), when `limit` = min(receive window left, cwnd −
//!   in flight) holds a full buffer or a third of min(receive window, cwnd)
//!   (`tcp_tso_win_divisor` 3), when nothing is outstanding, or
//!   when the ACK of the oldest outstanding segment is due in more than min(SRTT / 2, 1 ms)
//!   (its send time + SRTT − now; 295ce1eb "tcp: fix tcp_tso_should_defer() vs large RTT",
//!   6.18 and the 6.17 stable series); otherwise defer until an ACK opens more;
//! * a deferred buffer counts as cwnd-limited when cwnd, not the receive window, held it.
//!
//! * **Write-queue buffers.** The data waits in the write queue in buffers that `tcp_sendmsg`
//!   built when the application wrote it, each `size_goal` bytes: the largest GSO size
//!   (64 KB) bounded by half the largest window the peer offered, in whole segments
//!   (`tcp_xmit_size_goal`, `tcp_bound_to_half_wnd`; since "tcp: refine TSO autosizing",
//!   605ad7f184b6, 3.19, autosizing happens at transmission: "tcp_tso_autosize() will
//!   eventually split this later"). `tcp_write_xmit` handles one buffer at a time: it sends
//!   min(buffer, mss · min(cwnd quota, `max_segs`)) and splits the buffer there
//!   (`tcp_mss_split_point`, `tso_fragment`), so the part left behind is a buffer of its own;
//!   and the deferral lets a buffer go at once when it is not the queue's last and the open
//!   window holds it whole ("Middle in queue won't get any more data, full sendable already?",
//!   `tcp_tso_should_defer`). With 45-segment buffers and `max_segs` = 7 a flow sends 7, 7, 7,
//!   7, 7, 7, 3, and the remainders shift where later buffers split whenever the cwnd quota cut
//!   one short. Modelled: the boundaries of the buffer holding `snd_nxt` (a buffer starts where
//!   the previous one ended, sized with the largest window offered so far; the last ends with
//!   the application's data). Approximation: a buffer's size is fixed when the simulator
//!   reaches it, not when the application wrote it (a bulk sender's writes run a send buffer
//!   ahead, and the window bound only grows early in a connection).
//!
//! Measured on this machine's 6.18 kernel (kernel engine, two unpaced CUBIC flows, 100 Mbit/s
//! × 20 ms, after slow start): new data leaves in runs of 4.1 back-to-back segments on
//! average (64 % of the segments in runs of 4–8), against 2.0 (97 % in pairs) without this
//! model — although the engine turns every offload of its interfaces off (GSO is TCP's own).
//! A paced linux-6 flow keeps its pacing buffers ([`super::pacing`]) and is not deferred here
//! (Linux checks the deferral after the pacing time; a paced flow seldom lacks a full buffer of
//! window, so the rule is left out for it — an approximation).

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

/// Which TSO/GSO rules (knob `tso_model`; module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TsoModelCfg {
    /// Linux 2.6: 64 KB frames, deferred for less than two ticks ([`next_frame`]).
    #[serde(rename = "linux-2.6")]
    Linux26,
    /// Linux ≥ 4.17: autosized GSO buffers and the 6.x deferral ([`next_frame_linux6`]).
    #[serde(rename = "linux-6")]
    Linux6,
}

/// What the Linux 6.x deferral looks at (bytes, ns).
#[derive(Clone, Copy, Debug)]
pub struct Linux6Input {
    /// Bytes left in the write-queue buffer that holds the next new segment ([`size_goal`]).
    pub skb_left: u64,
    /// That buffer is the write queue's last (it holds the end of the application's data).
    pub skb_is_tail: bool,
    /// Recovery or Loss (Linux `icsk_ca_state >= TCP_CA_Recovery`).
    pub recovering: bool,
    /// The next new segment ends the application's data.
    pub ends_data: bool,
    pub cwnd: u64,
    pub in_flight: u64,
    pub rwnd: u64,
    pub rwnd_left: u64,
    pub mss: u64,
    /// `tcp_tso_autosize` segments per buffer.
    pub max_segs: u64,
    pub now: Nanos,
    /// When the last buffer left (Linux `tcp_wstamp_ns` of an unpaced flow); None: never.
    pub last_send: Option<Nanos>,
    /// Send time of the oldest outstanding segment (Linux `tcp_rtx_queue_head`), if any.
    pub head_xmit: Option<Nanos>,
    pub srtt: Nanos,
}

/// Linux's pacing rate of a flow that does not pace (used to size its buffers), payload
/// bit/s: mss · max(cwnd, packets out) / SRTT, × 2 while cwnd < ssthresh / 2, else × 1.2
/// (`tcp_update_pacing_rate`; ratios from ip-sysctl `tcp_pacing_ss_ratio` 200,
/// `tcp_pacing_ca_ratio` 120). `cwnd`, `packets_out` and `ssthresh` in bytes; None before
/// the first RTT sample.
pub fn linux_pacing_rate(cwnd: u64, packets_out: u64, ssthresh: u64, srtt: Nanos) -> Option<u64> {
    if srtt == 0 {
        return None;
    }
    let ratio: u128 = if cwnd < ssthresh / 2 { 200 } else { 120 };
    let r = u128::from(cwnd.max(packets_out)) * 8 * 1_000_000_000 * ratio / 100 / u128::from(srtt);
    Some(r.min(u128::from(u64::MAX)) as u64)
}

/// Linux 6.x `tcp_tso_should_defer` and the size of the buffer `tcp_write_xmit` then sends
/// (module doc). Returns the decision and, for a deferral, whether cwnd held it back.
pub fn next_frame_linux6(i: &Linux6Input) -> (Frame, bool) {
    let cong_win = i.cwnd.saturating_sub(i.in_flight);
    let limit = i.rwnd_left.min(cong_win);
    let mss = i.mss.max(1);
    let full = i.max_segs.max(1) * mss;
    // tcp_cwnd_test: at most half the window per buffer (at least one segment).
    let half = (i.cwnd / 2).max(mss);
    let skb = i.skb_left.max(mss);
    let send = (Frame::Send(limit.min(full).min(half).min(skb)), false);
    if i.recovering || i.ends_data {
        return send;
    }
    // A one-segment buffer is tested by Nagle's rule alone (`tso_segs == 1` in
    // `tcp_write_xmit`, `tso_segs` being the buffer's segment count); the model's data
    // segments are full-sized, so it leaves.
    if skb < 2 * mss {
        return send;
    }
    // "Only if the last write was recent (1 ms)": deferral is allowed up to and including
    // 1 ms after the last buffer left (`tcp_clock_cache - tcp_wstamp_ns - 1 ms > 0` sends).
    match i.last_send {
        Some(t) if i.now.saturating_sub(t) <= MSEC => {}
        _ => return send,
    }
    // "Middle in queue won't get any more data, full sendable already?": a buffer that is not
    // the queue's last and fits the open window whole leaves at once.
    let whole = !i.skb_is_tail && limit >= skb;
    if limit >= full || whole || limit >= i.rwnd.min(i.cwnd) / WIN_DIVISOR {
        return send;
    }
    let Some(head) = i.head_xmit else {
        return send;
    };
    // When the oldest outstanding segment's ACK is due, from now; send if later than
    // min(SRTT / 2, 1 ms).
    let ack_in = (head + i.srtt).saturating_sub(i.now);
    if ack_in > (i.srtt / 2).min(MSEC) {
        return send;
    }
    (Frame::Defer, cong_win < i.rwnd_left)
}

const MSEC: Nanos = 1_000_000;

/// Payload bytes of a write-queue buffer built by `tcp_sendmsg` (Linux ≥ 3.x
/// `tcp_xmit_size_goal`): the largest GSO size, 64 KB, bounded by half the largest window the
/// peer offered (`tcp_bound_to_half_wnd`), in whole segments.
pub fn size_goal(max_rwnd: u64, mss: u64) -> u64 {
    // Halved only above Linux's TCP_MSS_DEFAULT (536); no window seen yet: no bound.
    let cutoff = match max_rwnd {
        0 => MAX_FRAME,
        w if w > 536 => w / 2,
        w => w,
    };
    let mss = mss.max(1);
    (MAX_FRAME.min(cutoff) / mss).max(1) * mss
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
        // "Defer for less than two clock ticks": jiffies now − jiffies then > 1, i.e. now at
        // or past the start of the second tick after then's (one division, not two).
        let tick = i.tick.max(1);
        let ends = (t / tick).checked_add(2).and_then(|j| j.checked_mul(tick));
        if ends.is_some_and(|e| i.now >= e) {
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
    fn test_deferral_end_is_the_jiffies_comparison() {
        // now ≥ (⌊t/tick⌋ + 2)·tick is ⌊now/tick⌋ > ⌊t/tick⌋ + 1, also at the ends of the range.
        let mut i = input(10_000, 9_990);
        for tick in [1, 3, 4_000_000, 10_000_000] {
            for t in [0, 1, tick - 1, tick, 5 * tick + 7, u64::MAX - 1, u64::MAX] {
                for dt in [0, 1, tick, 2 * tick - 1, 2 * tick, 3 * tick + 1, u64::MAX] {
                    let now = t.saturating_add(dt);
                    (i.now, i.deferred_at, i.tick) = (now, Some(t), tick);
                    let past = (t / tick).checked_add(1).is_some_and(|j| now / tick > j);
                    let want = if past {
                        Frame::Send(10 * MSS)
                    } else {
                        Frame::Defer
                    };
                    assert_eq!(next_frame(&i), want, "tick {tick} then {t} now {now}");
                }
            }
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

    #[test]
    fn test_write_queue_buffers_are_64_kb_or_half_the_largest_window() {
        assert_eq!(size_goal(1 << 20, MSS), 45 * MSS); // 65 536 / 1 448 = 45.3
        assert_eq!(size_goal(40 * MSS, MSS), 20 * MSS); // half a 40-segment window
        assert_eq!(size_goal(0, MSS), 45 * MSS); // no window seen yet: the GSO size
        assert_eq!(size_goal(1_000, MSS), MSS); // never below one segment
    }

    #[test]
    fn test_a_buffer_remainder_leaves_whole_when_the_window_holds_it() {
        // 200-segment window, 196 in flight: 4 segments open, below a full 7-segment buffer
        // (5-segment) GSO buffer and a third of the window, the oldest ACK due soon: a long
        // write-queue buffer waits...
        let mut i = v6(200, 196);
        i.skb_left = 45 * MSS;
        assert_eq!(next_frame_linux6(&i), (Frame::Defer, true));
        // ...the 3-segment remainder of a split buffer leaves at once ("middle in queue")...
        i.skb_left = 3 * MSS;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
        // ...unless it is the write queue's last buffer.
        i.skb_is_tail = true;
        assert_eq!(next_frame_linux6(&i), (Frame::Defer, true));
        // A frame never runs past its buffer: 10 segments open, 5 per GSO buffer, 3 left.
        let mut j = v6(200, 190);
        j.skb_left = 3 * MSS;
        assert_eq!(next_frame_linux6(&j).0, Frame::Send(3 * MSS));
    }

    fn v6(cwnd_seg: u64, in_flight_seg: u64) -> Linux6Input {
        Linux6Input {
            skb_left: u64::MAX,
            skb_is_tail: false,
            recovering: false,
            ends_data: false,
            cwnd: cwnd_seg * MSS,
            in_flight: in_flight_seg * MSS,
            rwnd: 1 << 30,
            rwnd_left: 1 << 30,
            mss: MSS,
            max_segs: 5,
            now: 100_000_000,
            last_send: Some(99_800_000),
            head_xmit: Some(80_300_000),
            srtt: 20_000_000,
        }
    }

    #[test]
    fn test_linux6_defers_until_a_full_autosized_buffer_is_open() {
        // 200-segment window, 5-segment buffers: 4 open -> wait; 5 open -> one buffer of 5.
        assert_eq!(next_frame_linux6(&v6(200, 196)), (Frame::Defer, true));
        assert_eq!(next_frame_linux6(&v6(200, 195)).0, Frame::Send(5 * MSS));
        // 40 open: still one buffer of 5 (the loop sends the next one after it).
        assert_eq!(next_frame_linux6(&v6(200, 160)).0, Frame::Send(5 * MSS));
    }

    #[test]
    fn test_linux6_small_window_sends_a_third_and_at_most_half() {
        // 9-segment window: 3 open is a third -> send 3; a buffer never exceeds cwnd / 2.
        assert_eq!(next_frame_linux6(&v6(9, 6)).0, Frame::Send(3 * MSS));
        assert_eq!(next_frame_linux6(&v6(9, 7)), (Frame::Defer, true));
        let mut i = v6(6, 0);
        i.max_segs = 10;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
    }

    #[test]
    fn test_linux6_sends_when_the_last_write_is_old_or_the_ack_is_far() {
        let mut i = v6(200, 197);
        i.last_send = Some(i.now - 1_000_001);
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
        let mut i = v6(200, 197);
        i.last_send = None;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
        // Head sent 18.9 ms ago with SRTT 20 ms: its ACK is due in 1.1 ms > 1 ms -> send.
        let mut i = v6(200, 197);
        i.head_xmit = Some(i.now - 18_900_000);
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
        // ... sent 19.1 ms ago: due in 0.9 ms -> defer.
        i.head_xmit = Some(i.now - 19_100_000);
        assert_eq!(next_frame_linux6(&i).0, Frame::Defer);
        // Nothing outstanding: send.
        i.head_xmit = None;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
    }

    #[test]
    fn test_linux6_no_deferral_in_recovery_or_at_the_end() {
        let mut i = v6(200, 197);
        i.recovering = true;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
        let mut i = v6(200, 197);
        i.ends_data = true;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
    }

    #[test]
    fn test_linux6_one_open_segment_waits_unless_its_buffer_is_one_segment() {
        // 1 segment open of a long write-queue buffer: deferred like any part of a buffer...
        assert_eq!(next_frame_linux6(&v6(200, 199)), (Frame::Defer, true));
        // ...but a one-segment buffer is tested by Nagle's rule alone and leaves.
        let mut i = v6(200, 199);
        i.skb_left = MSS;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(MSS));
        // One segment per GSO buffer (a device with gso_max_segs 1): a full buffer is open.
        let mut i = v6(200, 199);
        i.max_segs = 1;
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(MSS));
    }

    #[test]
    fn test_linux6_defers_up_to_and_including_1_ms_after_the_last_send() {
        let mut i = v6(200, 197);
        i.last_send = Some(i.now - 1_000_000);
        assert_eq!(next_frame_linux6(&i).0, Frame::Defer);
        i.last_send = Some(i.now - 1_000_001);
        assert_eq!(next_frame_linux6(&i).0, Frame::Send(3 * MSS));
    }

    #[test]
    fn test_linux6_receive_window_hold_is_not_cwnd_limited() {
        let mut i = v6(200, 100);
        i.rwnd = 120 * MSS;
        i.rwnd_left = 2 * MSS;
        assert_eq!(next_frame_linux6(&i), (Frame::Defer, false));
    }

    #[test]
    fn test_linux_pacing_rate_ratios() {
        // 100 segments of 1448 B per 20 ms = 57.92 Mbit/s; x2 in early slow start, x1.2 after.
        let cwnd = 100 * MSS;
        assert_eq!(
            linux_pacing_rate(cwnd, 0, u64::MAX, 20_000_000),
            Some(115_840_000)
        );
        assert_eq!(
            linux_pacing_rate(cwnd, 0, cwnd, 20_000_000),
            Some(69_504_000)
        );
        // packets out above cwnd count (after a reduction).
        assert_eq!(
            linux_pacing_rate(cwnd, 2 * cwnd, cwnd, 20_000_000),
            Some(139_008_000)
        );
        assert_eq!(linux_pacing_rate(cwnd, 0, cwnd, 0), None);
    }
}
