//! The receive half of a bulk-data TCP connection, as a sans-I/O building block.
//!
//! # Model
//!
//! [`RecvCore`] is fed the data segments of one connection ([`RecvCore::on_segment`]) and the
//! passage of time ([`RecvCore::on_timer`]); it never reads a clock and never sends anything.
//! It tells the caller *when* an ACK is due (`SegOutcome::ack_now`, [`RecvCore::poll_at`],
//! `on_timer` returning `true`) and *what* to put in it ([`RecvCore::ack_fields`]); the caller
//! reports each ACK it actually sent with [`RecvCore::on_ack_sent`].
//!
//! Internally every byte is addressed by its 64-bit *stream offset* (offset 0 is the initial
//! receive sequence number `irs`, the peer's ISN + 1), so transfers beyond 4 GiB need no
//! special care; wire sequence numbers are converted with [`Seq`] (crate::tcp::seq) at the boundary.
//!
//! * **Reassembly.** In-order bytes advance `rcv_nxt` and are delivered at once. Bytes above a
//!   hole are kept as a sorted set of disjoint, non-adjacent byte ranges in a `VecDeque`
//!   (allocated once with room for a full window of alternating holes; it only grows, amortised,
//!   if that is exceeded). Lookup is a binary search (O(log n)); appending above the highest
//!   range and delivering the lowest range are O(1); merging ranges removes each range at most
//!   once, so insertion is amortised O(1) plus the memmove of a middle insert (bounded by the
//!   distance to the nearer end). No per-segment allocation. The receiver never reneges
//!   (RFC 2018 §8 allows it; we never discard queued out-of-order data).
//! * **ACK policy.** ACK at least every `delack_segments` full-sized segments' worth of bytes
//!   (RFC 1122 §4.2.3.2, RFC 5681 §4.2: "at least every second full-sized segment"), otherwise
//!   when the delayed-ACK timer started by the first unacknowledged segment fires. Immediate ACK
//!   for: out-of-order segments, segments filling all or part of a hole, duplicates (RFC 5681
//!   §4.2), unacceptable segments such as zero-window probes or keep-alives (RFC 9293 §3.10.7.4),
//!   a FIN (RFC 9293 §3.10.7.4, "send an acknowledgment for the FIN"), and the first
//!   `quickack_segments` in-order segments at start and after out-of-order or duplicate data
//!   (Linux quick-ACK mode, stacks-and-ccas.md B.1).
//! * **SACK / D-SACK.** Up to `max_sack_blocks` blocks per RFC 2018 §4: the first block contains
//!   the most recently received out-of-order segment, then the most recently reported other
//!   blocks; free slots are then filled with the lowest other held blocks ("as many distinct
//!   SACK blocks as possible", RFC 2018 §4). A duplicate segment is reported in a first D-SACK
//!   block (RFC 2883 §4), followed by the larger block containing it if it lies above the
//!   cumulative ACK.
//! * **Window.** The offered window is the free receive buffer: `rcvbuf` minus unread in-order
//!   bytes (only non-zero with a slow application, `app_read_bps`) minus out-of-order bytes held
//!   (`ooo_uses_buffer`). The right edge never moves left (RFC 1122 §4.2.2.16, RFC 9293
//!   §3.8.6.2.2); when the window is scaled it is rounded *up* to the scale granularity so it
//!   cannot appear to shrink (RFC 7323 §2.4 and Appendix F). The right edge only moves right by at
//!   least min(rcvbuf/2, MSS) at a time (receiver-side SWS avoidance, RFC 1122 §4.2.3.3).
//!   With a slow application a window update is due when reading has opened the window enough
//!   (see [`RecvCoreConfig::wnd_update_segments`]). That is [`RcvWndRule::Free`]; the Linux rules
//!   ([`RcvWndRule::Linux24`], [`RcvWndRule::Linux26`], `RecvCore::linux_window`) choose the
//!   window as Linux's `__tcp_select_window` does instead: whole receive-MSS segments (2.6: only
//!   without scaling; with it rounded up to the granularity), the clamp applied after the
//!   unread and out-of-order bytes are taken off the buffer (so out-of-order data does not
//!   shrink a window that the clamp, not the buffer, limits), no other SWS threshold.
//!
//! # Limits (deliberate simplifications)
//!
//! * Data only: SYN/RST handling, timestamps/PAWS and the TS.Recent echo belong to the caller.
//! * The delayed-ACK timeout is a fixed knob, not Linux's adaptive ATO (40–200 ms, B.1).
//! * The receive buffer is `rcvbuf` unless the caller grows it ([`RecvCore::grow_rcvbuf`]) and
//!   the window is bounded by a clamp that the caller raises ([`RecvCore::raise_clamp`], Linux's
//!   `rcv_ssthresh`, B.1 "Receive window"): the policies that grow them (receive-buffer
//!   autotuning and `rcv_ssthresh` growth, per personality) live in the caller, `TcpReceiver`
//!   (receiver/mod.rs); this part only enforces the bounds it is given.
//! * The full-segment size is estimated as the largest segment seen so far (capped at `mss`),
//!   starting from 536 bytes; Linux's estimate can also decrease again
//!   (L: net/ipv4/tcp_input.c `tcp_measure_rcv_mss`), this one cannot.
//! * Linux caps the quick-ACK count by `rcv_wnd / (2·rcv_mss)`
//!   (L: net/ipv4/tcp_input.c `tcp_incr_quickack`); that sizing is knob `quickack_window_sized`
//!   (the Linux 2.x personalities), otherwise the count is just `quickack_segments`.
//! * The RFC 2018 §4 recency list remembers the last 4 reported blocks; older blocks are only
//!   reported again through the "lowest held blocks" fill-up.
//! * A FIN is accepted when all data before it was accepted, even at a zero window.
//! * Data after a received FIN and data before `irs` are ignored (ACKed as unacceptable).
//! * Application reads are modelled as a constant rate while data is waiting (`app_read_bps`),
//!   or instantaneous (`None`, like iperf's server reading into a large buffer).

use std::collections::VecDeque;
use std::fmt;

use crate::tcp::seq::Seq;

/// Most SACK blocks that fit in the 40 bytes of TCP option space (RFC 2018 §3: 8·n + 2 bytes).
pub const MAX_SACK_BLOCKS: usize = 4;

/// Largest window shift (RFC 7323 §2.3).
pub const MAX_WSCALE: u8 = 14;

/// Default MSS for IPv4 when none was negotiated (RFC 9293 §3.7.1); the initial estimate of the
/// peer's full segment size before any segment was seen.
const DEFAULT_MSS: u32 = 536;

/// How the offered window follows the free receive buffer ([`RecvCoreConfig::wnd_rule`], knob
/// `rcv_wnd_rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RcvWndRule {
    /// The free buffer itself (with scaling rounded down to the granularity); the right edge
    /// moves only when it gains at least min(rcvbuf/2, MSS) (RFC 1122 §4.2.3.3). See
    /// [`RecvCore`]'s module documentation, "Window".
    #[serde(rename = "free")]
    Free,
    /// Linux 2.4 `__tcp_select_window` (net/ipv4/tcp_output.c of the 2.4.22 tree
    /// nslu2/linux-2.4.x, read for the facts, nothing copied): the free space (`tcp_space`: the
    /// buffer less what waits to be read and the out-of-order queue) is 0 when it is below half
    /// the full space and below one receive MSS (`rcv_mss`, the estimate of the peer's segment
    /// size); otherwise, capped at `rcv_ssthresh` (the clamp), the last window (`rcv_wnd`) is
    /// kept while it lies within one MSS below the free space, else the free space rounded
    /// down to whole MSS, window scaling or not (`tcp_select_window` then shifts it).
    #[serde(rename = "linux-2.4")]
    Linux24,
    /// Linux 2.6 to 6.x `__tcp_select_window` (the 2.6.11 tree pwanbul/linux-2.6.11, the 2.6.18
    /// tree bronson/linux-2.6.18.8-ovz-xen, torvalds/linux; read for the facts): as
    /// [`RcvWndRule::Linux24`] without window scaling; with it no rounding to the MSS ("the
    /// scaled window will not line up with the MSS boundary anyway"), the free space rounded
    /// *up* to the scale's granularity instead ("so that it won't get scaled away").
    #[serde(rename = "linux-2.6")]
    Linux26,
}

/// `bytes = elapsed_ns · rate_bps / 8e9`: the denominator of the application read model.
const BIT_NS_PER_BYTE_PER_BPS: u128 = 8 * 1_000_000_000;

/// Parameters of a [`RecvCore`]. `Default` is a Linux-6.x-like receiver with a fixed buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvCoreConfig {
    /// Receive buffer in bytes; the offered window never exceeds it (nor 65535 << `wscale`).
    pub rcvbuf: u64,
    /// The segment size this receiver expects (its advertised MSS, payload bytes). Caps the
    /// full-segment estimate and sets the SWS threshold (RFC 1122 §4.2.3.3, "Eff.snd.MSS").
    pub mss: u32,
    /// Delay ACKs (RFC 1122 §4.2.3.2). `false`: ACK every data segment immediately.
    pub delayed_ack: bool,
    /// ACK at the latest when this many full-sized segments' worth of bytes is unacknowledged
    /// (RFC 5681 §4.2 says at least every 2nd). Must be ≥ 1.
    pub delack_segments: u32,
    /// Delayed-ACK timeout, started by the first unacknowledged in-order segment. RFC 1122
    /// §4.2.3.2 requires < 500 ms; stacks use 40–200 ms (Linux ATO), 100 ms (FreeBSD),
    /// 200 ms (Windows), measured 300 ms (OpenBSD 3.5), stacks-and-ccas.md B.1–B.4.
    pub delack_timeout_ns: u64,
    /// Quick-ACK mode: this many in-order data segments are ACKed immediately at connection
    /// start and again after out-of-order, duplicate or out-of-window data (Linux, up to 16,
    /// B.1). 0 turns it off.
    pub quickack_segments: u32,
    /// Out-of-order data re-enters quick-ACK mode (Linux before 4.18). Linux 4.18 stopped
    /// forcing quick ACKs for out-of-order data when it began compressing SACKs (commit
    /// a3893637e1eb, "tcp: do not force quickack when receiving out-of-order packets"); duplicate
    /// and out-of-window data still do.
    pub quickack_on_ooo: bool,
    /// A segment that grows the window clamp keeps a quick ACK pending (Linux
    /// `tcp_grow_window`, see [`RecvCore::grow_clamp`]).
    pub quickack_on_growth: bool,
    /// Size each entry into quick-ACK mode by the window as Linux's `tcp_incr_quickack` does:
    /// `rcv_wnd / (2·rcv_mss)` ACKs (2 when that is 0), at most `quickack_segments`, never
    /// lowering a running count; the first entry at the first data segment, after the segment
    /// size was measured (`tcp_event_data_recv`: `tcp_measure_rcv_mss`, then
    /// `tcp_incr_quickack` while `ato` is 0). Off: `quickack_segments` every time.
    pub quickack_window_sized: bool,
    /// The memory a full-sized data segment costs the receiving host (Linux `skb->truesize`:
    /// the NIC driver's receive buffer plus `struct sk_buff`), bytes; 0 = not modelled. With it,
    /// window growth follows Linux 2.4/2.6 `tcp_grow_window` check #2 and `__tcp_grow_window`
    /// (see [`RecvCore::grow_increment`]): segments whose skb costs more than 4/3 of their
    /// length grow the clamp only while it is at most half the target window
    /// (`grow_target`), a quarter at twice the overhead, and so on.
    pub skb_truesize: u32,
    /// The window `__tcp_grow_window` halves, bytes: Linux 2.6.15 and later use
    /// `tcp_win_from_space(tcp_rmem[2])` (J. Heffner's patch, netdev, 29 Sep 2005, "rcv_ssthresh
    /// use tcp_rmem[2] as the size target rather than rcvbuf"); 0 = the current buffer
    /// (`tcp_full_space(sk)`, 2.4 and 2.6 before it). Only with `skb_truesize`.
    pub grow_target: u64,
    /// With `sack`, an out-of-order segment grows the window clamp as an in-order one does
    /// (Linux ≥ 3.13 `tcp_data_queue_ofo` → `tcp_grow_window`, SACK flows only since 5.8:
    /// 4e4f1fc2268, 662051215c75). Without SACK the window must stay put so that the duplicate
    /// ACKs count as such (RFC 5681 §2: a changed window makes an ACK no duplicate).
    pub grow_window_on_ooo: bool,
    /// SACK compression (Linux ≥ 4.18, ip-sysctl `tcp_comp_sack_nr`, default 44; 0 = off): while
    /// out-of-order data is queued, after the first three duplicate ACKs for one `rcv_nxt` (sent
    /// at once, the sender's fast-retransmit threshold) further SACK-only ACKs are held, at most
    /// this many, and one ACK carrying the latest blocks leaves when the compression timer fires
    /// (`comp_sack_delay_ns`) or the count is reached (Linux net/ipv4/tcp_input.c
    /// `__tcp_ack_snd_check`, read for the facts).
    pub comp_sack_nr: u32,
    /// The compression timer: ip-sysctl `tcp_comp_sack_delay_ns`, "5 % of SRTT, capped by this
    /// sysctl" (default 1 ms); the caller passes the capped value ([`RecvCore::set_comp_sack_delay`]
    /// updates it once an RTT is known).
    pub comp_sack_delay_ns: u64,
    /// Send SACK blocks (RFC 2018); only when the peer sent SACK-permitted.
    pub sack: bool,
    /// Report duplicates in a first D-SACK block (RFC 2883). Needs `sack`.
    pub dsack: bool,
    /// At most this many SACK blocks per ACK: 3 when timestamps are in use, 4 otherwise
    /// (RFC 2018 §3). 1..=4.
    pub max_sack_blocks: u8,
    /// This receiver's window shift (RFC 7323 §2.2), 0..=14; must be 0 unless both SYNs carried
    /// the window-scale option.
    pub wscale: u8,
    /// Out-of-order bytes held in the reassembly queue reduce the offered window. `true` is
    /// Linux (out-of-order skbs are charged to the socket's receive memory,
    /// L: net/ipv4/tcp_input.c `tcp_data_queue_ofo`); `false` is the BSD layout where the
    /// reassembly queue is outside the socket buffer whose free space (`sbspace`) is the
    /// window (TCP/IP Illustrated Vol. 2, ch. 26–27).
    pub ooo_uses_buffer: bool,
    /// Application read rate in bit/s while data is waiting; `None` = reads everything at
    /// once (the iperf server case). `Some(0)` never reads (a permanently closing window).
    pub app_read_bps: Option<u64>,
    /// With a slow application, send a window update once reading has opened the window by
    /// min(rcvbuf/2, `wnd_update_segments`·mss) bytes (RFC 1122 §4.2.3.3's threshold idea) and
    /// to at least twice the currently advertised window (Linux sends the update when the new
    /// window is "at least twice" the current one, L: net/ipv4/tcp.c `tcp_cleanup_rbuf`). From a
    /// zero window that is "2 MSS or half the buffer, whichever is smaller". Must be ≥ 1.
    pub wnd_update_segments: u32,
    /// How the offered window follows the free buffer (see [`RcvWndRule`]).
    pub wnd_rule: RcvWndRule,
    /// The largest window offered when the window is not scaled, bytes (1..=65535): 65,535,
    /// or Linux 2.6.11 to 2.6.17's 32,767 (`MAX_TCP_WINDOW`, "never offer a window over 32767
    /// without using window scaling", applied in `tcp_select_window` whenever `rcv_wscale` is 0;
    /// from 2.6.18 only with sysctl `tcp_workaround_signed_windows`, default 0). Also bounds
    /// the window of the SYN exchange (`tcp_select_initial_window`).
    pub unscaled_max: u32,
    /// A data segment that starts inside the advertised window but ends beyond its right edge
    /// is accepted whole (Linux), not trimmed at the edge (RFC 9293 §3.10.7.4, 4.4BSD:
    /// FreeBSD 5.2.1 sys/netinet/tcp_input.c drops the excess, `todrop = (th_seq + tlen) −
    /// (rcv_nxt + rcv_wnd)`). Linux 2.4/2.6 net/ipv4/tcp_input.c (the 2.6.11 tree
    /// pwanbul/linux-2.6.11, read for the facts, nothing copied): `tcp_sequence` accepts a
    /// segment whose first byte is not after `rcv_nxt + tcp_receive_window`; `tcp_data_queue`
    /// queues an in-order (or partly duplicate) segment whole while `tcp_receive_window` is
    /// not 0 and an out-of-order one whole if it starts before the window's right edge; the
    /// bytes count against the buffer like any other (here: the out-of-order bytes and the
    /// unread bytes of the window computation, which never go below 0). Linux 6.17
    /// ("tcp: do not accept packets beyond window", E. Dumazet, July 2025) drops such a
    /// segment unless the receive queue is empty; not modelled.
    pub accept_beyond_window: bool,
}

impl Default for RecvCoreConfig {
    fn default() -> Self {
        RecvCoreConfig {
            // Linux 6.x tcp_rmem default (middle value), B.1; autotuning (receiver/mod.rs) may grow it.
            rcvbuf: 131_072,
            // 1500-byte MTU − 20 IP − 20 TCP − 12 timestamp option.
            mss: 1448,
            delayed_ack: true,
            delack_segments: 2,
            // Linux minimum ATO (B.1: "ATO adaptive from 40 ms").
            delack_timeout_ns: 40_000_000,
            quickack_segments: 16,
            quickack_on_ooo: true,
            quickack_on_growth: true,
            quickack_window_sized: false,
            skb_truesize: 0,
            grow_target: 0,
            grow_window_on_ooo: false,
            comp_sack_nr: 0,
            comp_sack_delay_ns: 1_000_000,
            sack: true,
            dsack: true,
            max_sack_blocks: 3,
            // Smallest shift that lets Linux's maximum tcp_rmem (6291456, B.1) be advertised.
            wscale: RecvCoreConfig::wscale_for(6_291_456),
            ooo_uses_buffer: true,
            app_read_bps: None,
            wnd_update_segments: 2,
            wnd_rule: RcvWndRule::Free,
            unscaled_max: 0xFFFF,
            accept_beyond_window: false,
        }
    }
}

impl RecvCoreConfig {
    /// The smallest window shift with which a window of `bytes` fits in the 16-bit window field,
    /// capped at 14 (RFC 7323 §2.3).
    pub const fn wscale_for(bytes: u64) -> u8 {
        let mut ws = 0u8;
        while ws < MAX_WSCALE && (0xFFFFu64 << ws) < bytes {
            ws += 1;
        }
        ws
    }

    /// Checks the knobs; [`RecvCore::new`] calls this.
    pub fn validate(&self) -> Result<(), RecvCoreConfigError> {
        let err = |m| Err(RecvCoreConfigError(m));
        if self.rcvbuf == 0 {
            return err("rcvbuf must be > 0");
        }
        if self.mss == 0 {
            return err("mss must be > 0");
        }
        if self.delack_segments == 0 {
            return err("delack_segments must be >= 1");
        }
        if self.delayed_ack && self.delack_timeout_ns == 0 {
            return err("delack_timeout_ns must be > 0 when delayed_ack is on");
        }
        if usize::from(self.max_sack_blocks) > MAX_SACK_BLOCKS {
            return err("max_sack_blocks must be <= 4");
        }
        if self.sack && self.max_sack_blocks == 0 {
            return err("max_sack_blocks must be >= 1 when sack is on");
        }
        if self.dsack && !self.sack {
            return err("dsack needs sack");
        }
        if self.wscale > MAX_WSCALE {
            return err("wscale must be <= 14");
        }
        if self.wnd_update_segments == 0 {
            return err("wnd_update_segments must be >= 1");
        }
        if self.unscaled_max == 0 || self.unscaled_max > 0xFFFF {
            return err("unscaled_max must be 1..=65535");
        }
        Ok(())
    }
}

/// An invalid [`RecvCoreConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvCoreConfigError(pub &'static str);

impl fmt::Display for RecvCoreConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid receiver config: {}", self.0)
    }
}

impl std::error::Error for RecvCoreConfigError {}

/// What one received segment did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegOutcome {
    /// Bytes newly delivered in order (the advance of `rcv_nxt`, data only).
    pub delivered: u32,
    /// Bytes of this segment not received before (delivered now or queued out of order).
    pub new_bytes: u32,
    /// Send an ACK now (then call [`RecvCore::on_ack_sent`]).
    pub ack_now: bool,
    /// New data was queued above a hole (not delivered).
    pub out_of_order: bool,
    /// The segment carried nothing new: every byte (or its FIN) had been received before.
    pub duplicate: bool,
    /// Some bytes lay beyond the advertised window (or after the FIN) and were dropped;
    /// a zero-window probe sets this.
    pub beyond_window: bool,
    /// The peer's FIN was consumed now (all data before it has arrived).
    pub fin_received: bool,
}

/// The receiver-controlled fields of an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFields {
    /// Acknowledgment number (`rcv_nxt`, including the FIN once received).
    pub ack: u32,
    /// Window field: the offered window shifted right by `wscale`, at most `u16::MAX`.
    pub window: u32,
    /// SACK blocks `(left, right)` (right edge exclusive, RFC 2018 §3); the first `n_sack`
    /// are valid.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    /// The first block is a D-SACK block (RFC 2883).
    pub dsack: bool,
    /// The right window edge (offset) that `window` advertises, for
    /// [`RecvCore::on_fields_sent`].
    pub edge: u64,
}

impl AckFields {
    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.n_sack)]
    }
}

/// Counters for measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Bytes delivered in order (`rcv_nxt` advance).
    pub bytes_delivered: u64,
    /// Segments whose new data was queued above a hole.
    pub ooo_segments: u64,
    /// Bytes the application has read (equals `bytes_delivered` with instant reads). The
    /// counters incremented on every in-order segment are kept apart: side by side, the
    /// compiler merged their increments into one SSE add of six instructions.
    pub bytes_read: u64,
    /// Segments that carried nothing new.
    pub dup_segments: u64,
    /// Segments carrying data or a FIN passed to `on_segment`.
    pub segments_received: u64,
    /// Segments with bytes beyond the window (includes zero-window probes).
    pub beyond_window_segments: u64,
    /// ACKs sent carrying a D-SACK block.
    pub dsacks_sent: u64,
    /// ACKs sent (`on_ack_sent` calls).
    pub acks_sent: u64,
    /// ACKs sent that advertised a zero window.
    pub zero_window_acks: u64,
    /// ACKs requested (by `on_timer` or `on_segment`) as window updates after application reads.
    pub window_updates: u64,
    /// Largest number of out-of-order bytes held at once.
    pub max_ooo_bytes: u64,
    /// SACK-only ACKs not sent because of SACK compression (`comp_sack_nr`).
    pub sacks_compressed: u64,
}

/// The receive half of a TCP connection (see the module documentation).
#[derive(Clone, Debug)]
pub struct RecvCore {
    cfg: RecvCoreConfig,
    /// Sequence number of stream offset 0 (peer's ISN + 1).
    irs: Seq,
    /// Offset of the next expected data byte.
    rcv_nxt: u64,
    /// The peer's FIN has been consumed (it sits at `rcv_nxt`, ack = rcv_nxt + 1).
    fin_done: bool,
    /// Offset at which the peer's FIN sits, once a FIN was accepted.
    fin_off: Option<u64>,
    /// Out-of-order data above `rcv_nxt`: sorted, disjoint, non-adjacent `[start, end)`.
    ooo: VecDeque<(u64, u64)>,
    /// Sum of the lengths in `ooo`.
    ooo_bytes: u64,
    /// RFC 2018 §4 recency list: one byte offset inside each of the most recently reported
    /// blocks, most recent first. A block is found again by looking this byte up, so merged or
    /// grown blocks follow automatically and delivered ones drop out.
    recent: [u64; MAX_SACK_BLOCKS],
    n_recent: usize,
    /// D-SACK block to report in the next ACK (RFC 2883), offsets.
    dsack: Option<(u64, u64)>,
    /// Right edge (offset in ACK space) of the last window advertised; never decreases.
    adv_edge: u64,
    /// Linux's record of the last window it chose (`tp->rcv_wnd`, before the unscaled cap of
    /// `unscaled_max`) and the right edge it implies (`rcv_wup + rcv_wnd`); only with a Linux
    /// [`RcvWndRule`].
    lin_wnd: u64,
    lin_edge: u64,
    /// Upper bound on the offered window below the buffer (Linux `rcv_ssthresh`); `u64::MAX` =
    /// none. Grown by the caller (see `TcpReceiver`).
    clamp: u64,
    /// In-order bytes delivered since the last ACK.
    unacked_bytes: u64,
    /// The current "ACK every N full-sized segments": `cfg.delack_segments` unless the caller
    /// stretches ACKs ([`RecvCore::set_ack_every`]).
    ack_every: u32,
    delack_deadline: Option<u64>,
    /// In-order segments still to be ACKed immediately (quick-ACK mode).
    quick_left: u32,
    /// The first data segment sized the quick-ACK count (`quickack_window_sized`).
    quick_sized: bool,
    /// SACK compression (`comp_sack_nr`): the `rcv_nxt` whose duplicate ACKs are counted, how
    /// many were sent at once, how many are held, and when the held ones are sent.
    comp_rcv_nxt: u64,
    comp_dupacks: u32,
    comp_held: u32,
    comp_deadline: Option<u64>,
    /// Estimated full segment size of the peer.
    rcv_mss: u32,
    /// Delivered bytes the application has not read yet (slow application only).
    unread: u64,
    /// Time up to which application reads were accounted.
    read_last: u64,
    /// Fractional read progress, in bit·ns units (see `BIT_NS_PER_BYTE_PER_BPS`).
    read_acc: u128,
    /// The application read something since the last ACK was sent.
    read_since_ack: bool,
    stats: ReceiverStats,
}

impl RecvCore {
    /// A receiver expecting its first data byte at sequence number `irs` (the peer's ISN + 1).
    ///
    /// Until the first ACK is sent the peer may use the window of the SYN exchange,
    /// [`RecvCore::syn_window`].
    pub fn new(cfg: RecvCoreConfig, irs: u32) -> Result<RecvCore, RecvCoreConfigError> {
        Self::new_in(cfg, irs, VecDeque::new())
    }

    /// As [`RecvCore::new`], with `buf` (emptied) as the out-of-order list: a pooled background
    /// connection reuses its predecessor's ([`RecvCore::into_buffer`]).
    pub fn new_in(
        cfg: RecvCoreConfig,
        irs: u32,
        mut buf: VecDeque<(u64, u64)>,
    ) -> Result<RecvCore, RecvCoreConfigError> {
        cfg.validate()?;
        // Room for a whole window of alternating segments and holes, so the steady state never
        // reallocates.
        let cap = (cfg.rcvbuf / (2 * u64::from(cfg.mss))).clamp(8, 1 << 16) as usize + 1;
        buf.clear();
        buf.reserve_exact(cap);
        let syn_window = Self::initial_window(&cfg, u64::MAX);
        Ok(RecvCore {
            irs: Seq(irs),
            rcv_nxt: 0,
            fin_done: false,
            fin_off: None,
            ooo: buf,
            ooo_bytes: 0,
            recent: [0; MAX_SACK_BLOCKS],
            n_recent: 0,
            dsack: None,
            adv_edge: syn_window,
            lin_wnd: syn_window,
            lin_edge: syn_window,
            clamp: u64::MAX,
            unacked_bytes: 0,
            ack_every: cfg.delack_segments,
            delack_deadline: None,
            quick_left: cfg.quickack_segments,
            quick_sized: false,
            comp_rcv_nxt: u64::MAX,
            comp_dupacks: 0,
            comp_held: 0,
            comp_deadline: None,
            rcv_mss: cfg.mss.min(DEFAULT_MSS),
            unread: 0,
            read_last: 0,
            read_acc: 0,
            read_since_ack: false,
            stats: ReceiverStats::default(),
            cfg,
        })
    }

    /// The out-of-order list's allocation, for [`RecvCore::new_in`].
    pub fn into_buffer(self) -> VecDeque<(u64, u64)> {
        self.ooo
    }

    /// Processes a data segment `[seq, seq + len)` (with `fin`, a FIN at `seq + len`) arriving
    /// at `now` (ns). A zero-length segment without FIN is only checked for acceptability
    /// (RFC 9293 §3.10.7.4; a keep-alive below `rcv_nxt` gets an ACK).
    ///
    /// When the outcome says `ack_now`, the caller sends an ACK built from
    /// [`RecvCore::ack_fields`] and calls [`RecvCore::on_ack_sent`] (or
    /// [`RecvCore::on_fields_sent`] with those fields); otherwise it (re)schedules
    /// [`RecvCore::on_timer`] at [`RecvCore::poll_at`].
    #[inline]
    pub fn on_segment(&mut self, now: u64, seq: u32, len: u32, fin: bool) -> SegOutcome {
        if let Some(out) = self.on_segment_in_order(now, seq, len, fin) {
            return out;
        }
        self.on_segment_general(now, seq, len, fin)
    }

    /// [`RecvCore::on_segment`] beyond its in-order case, out of line: its many live values
    /// made every call, in-order ones too, save and restore six registers.
    #[inline(never)]
    fn on_segment_general(&mut self, now: u64, seq: u32, len: u32, fin: bool) -> SegOutcome {
        self.app_read_until(now);
        let mut out = SegOutcome::default();
        let ack_off = self.ack_offset();
        let right = self.adv_edge.max(ack_off);
        // Offset of the first sequence number, relative to rcv_nxt with wrap-safe arithmetic;
        // may be negative for a (bogus) segment before irs.
        let seg_start = ack_off as i64 + i64::from(Seq(seq).diff(self.ack_seq()));
        let seg_end = seg_start + i64::from(len);

        if len == 0 && !fin {
            // RFC 9293 §3.10.7.4 acceptability test for a zero-length segment: with a zero
            // window only SEG.SEQ = RCV.NXT is acceptable, otherwise RCV.NXT ≤ SEG.SEQ <
            // RCV.NXT + RCV.WND. "If an incoming segment is not acceptable, an acknowledgment
            // should be sent in reply."
            let acceptable = if right == ack_off {
                seg_start == ack_off as i64
            } else {
                seg_start >= ack_off as i64 && seg_start < right as i64
            };
            out.ack_now = !acceptable;
            return out;
        }
        self.stats.segments_received += 1;
        if len > self.rcv_mss {
            // Full-segment size estimate: the largest segment seen, capped at our MSS (Linux
            // measures rcv_mss from received segment lengths, L: tcp_input.c
            // tcp_measure_rcv_mss).
            self.rcv_mss = len.min(self.cfg.mss);
        }
        self.first_data_quickack();

        let had_ooo = !self.ooo.is_empty();
        let old_nxt = self.rcv_nxt;
        let mut s = seg_start.max(0) as u64;
        let mut e = seg_end.max(0) as u64;
        if let Some(f) = self.fin_off {
            // No data exists after the FIN (RFC 9293 §3.10.7.4, FIN processing).
            if e > f {
                out.beyond_window = true;
                e = f;
                s = s.min(e);
            }
        }
        let mut dup_bytes = 0u64;
        let mut dsack = None;
        if s < self.rcv_nxt {
            // Bytes already delivered: trimmed (RFC 9293 §3.10.7.4) and reported as the
            // duplicate contiguous sequence in a D-SACK block (RFC 2883 §4, examples
            // "reporting a duplicate segment" and "a single duplicate subsegment").
            let hi = e.min(self.rcv_nxt);
            if hi > s {
                dup_bytes += hi - s;
                dsack = Some((s, hi));
            }
            s = self.rcv_nxt;
            e = e.max(s);
        }
        if e > right && !(self.cfg.accept_beyond_window && s < right) {
            // Beyond the advertised right edge: not accepted (RFC 9293 §3.10.7.4 trims
            // segments to the window; a zero-window probe is not acceptable at all). With
            // `accept_beyond_window` (Linux) a segment starting inside the window is kept whole
            // and only one starting at or beyond the edge (a closed window included) is dropped.
            out.beyond_window = true;
            e = right;
            s = s.min(e);
        }

        let mut new_bytes = 0u64;
        if s < e {
            let (added, overlap) = self.insert_range(s, e);
            new_bytes = added;
            dup_bytes += (e - s) - added;
            if dsack.is_none() {
                // Duplicate of already SACKed data: RFC 2883 §4, "reporting a duplicate of an
                // out-of-order segment"; only the first duplicate sequence is reported.
                dsack = overlap;
            }
            if added > 0 && s > self.rcv_nxt {
                out.out_of_order = true;
                self.push_recent(s);
            }
            if let Some(&(a, b)) = self.ooo.front() {
                if a == self.rcv_nxt {
                    self.ooo.pop_front();
                    self.ooo_bytes -= b - a;
                    self.rcv_nxt = b;
                }
            }
            self.stats.max_ooo_bytes = self.stats.max_ooo_bytes.max(self.ooo_bytes);
        }

        let mut dup_fin = false;
        if fin {
            let fin_at = seg_end.max(0) as u64;
            match self.fin_off {
                // The FIN is accepted when every data byte before it was (a FIN needs no buffer
                // space; see Limits) and no queued data lies after it.
                None if !out.beyond_window
                    && fin_at >= self.rcv_nxt
                    && self.ooo.back().is_none_or(|r| r.1 <= fin_at) =>
                {
                    self.fin_off = Some(fin_at);
                }
                Some(f) if f == fin_at && self.fin_done => dup_fin = true,
                _ => {}
            }
        }
        if !self.fin_done && self.fin_off == Some(self.rcv_nxt) {
            self.fin_done = true;
            out.fin_received = true;
        }

        let delivered = self.rcv_nxt - old_nxt;
        out.delivered = u32::try_from(delivered).unwrap_or(u32::MAX);
        out.new_bytes = u32::try_from(new_bytes).unwrap_or(u32::MAX);
        out.duplicate = new_bytes == 0 && !out.fin_received && (dup_bytes > 0 || dup_fin);
        let acceptable = new_bytes > 0 || out.fin_received;

        if self.cfg.dsack {
            if let Some(d) = dsack {
                self.dsack = Some(d);
            }
        }
        if out.out_of_order {
            self.stats.ooo_segments += 1;
        }
        if out.duplicate {
            self.stats.dup_segments += 1;
        }
        if out.beyond_window {
            self.stats.beyond_window_segments += 1;
        }
        if (out.out_of_order && self.cfg.quickack_on_ooo) || out.duplicate || out.beyond_window {
            // Linux re-enters quick-ACK mode after out-of-order data (before 4.18,
            // `quickack_on_ooo`) and for duplicates and out-of-window segments (B.1; L:
            // tcp_input.c tcp_data_queue).
            self.enter_quickack();
        }

        // Immediate ACK: RFC 5681 §4.2 (out-of-order segment, duplicate, hole filled),
        // RFC 9293 §3.10.7.4 (unacceptable segment; FIN), RFC 2883 (report the D-SACK now).
        let mut ack_now = !acceptable
            || out.out_of_order
            || out.beyond_window
            || out.duplicate
            || dsack.is_some()
            || out.fin_received;
        if delivered > 0 {
            self.stats.bytes_delivered += delivered;
            match self.cfg.app_read_bps {
                None => self.stats.bytes_read += delivered,
                Some(_) => self.unread += delivered,
            }
            self.unacked_bytes += delivered;
        }
        if self.window_update_due() {
            // The slow application opened the window enough since the last ACK (see
            // `wnd_update_segments`): this ACK carries the update.
            self.stats.window_updates += 1;
            ack_now = true;
        }
        if out.out_of_order && self.cfg.grow_window_on_ooo && self.cfg.sack {
            // Linux grows the window before it charges the new out-of-order skb to the socket
            // (`tcp_grow_window`, then `skb_set_owner_r`): its bytes do not count yet.
            self.grow_clamp_by(len, new_bytes.min(self.ooo_charged()));
        }
        if delivered > 0 {
            if !out.out_of_order {
                self.grow_clamp(len);
            }
            // "an immediate ACK SHOULD be generated when a segment arrives that fills in all or
            // part of a gap in the sequence space" (RFC 5681 §4.2).
            ack_now = self.ack_after_delivery(now, ack_now || had_ooo);
        }
        if ack_now
            && self.cfg.comp_sack_nr > 0
            && self.cfg.sack
            && out.out_of_order
            && delivered == 0
            && !out.duplicate
            && !out.beyond_window
            && dsack.is_none()
            && !out.fin_received
            && acceptable
            && !self.window_update_due()
        {
            ack_now = self.sack_now_or_hold(now);
        }
        out.ack_now = ack_now;
        out
    }

    /// SACK compression (`comp_sack_nr`): an ACK whose only reason is new out-of-order data is
    /// sent now (the first three for one `rcv_nxt`, or once `comp_sack_nr` are held) or held
    /// until the compression timer (Linux `__tcp_ack_snd_check`, in this order: the held count,
    /// then the duplicate-ACK count for this `rcv_nxt`).
    fn sack_now_or_hold(&mut self, now: u64) -> bool {
        if self.comp_held >= self.cfg.comp_sack_nr {
            return true;
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.comp_dupacks = 0;
        }
        if self.comp_dupacks < 3 {
            self.comp_dupacks += 1;
            return true;
        }
        self.comp_held += 1;
        self.stats.sacks_compressed += 1;
        if self.comp_deadline.is_none() {
            self.comp_deadline = Some(now + self.cfg.comp_sack_delay_ns);
        }
        false
    }

    /// The SACK compression timer (`comp_sack_delay_ns`): Linux arms it at 5 % of the RTT,
    /// capped by the sysctl; the caller gives the capped value once it knows the RTT.
    pub fn set_comp_sack_delay(&mut self, ns: u64) {
        self.cfg.comp_sack_delay_ns = ns.max(1);
    }

    /// Whether in-order data just delivered is acknowledged at once (`ack_now`: a reason found
    /// already); otherwise the delayed-ACK timer runs.
    #[inline]
    fn ack_after_delivery(&mut self, now: u64, mut ack_now: bool) -> bool {
        if !self.cfg.delayed_ack {
            ack_now = true;
        }
        if self.quick_left > 0 {
            // Quick-ACK mode (Linux, B.1).
            self.quick_left -= 1;
            ack_now = true;
        }
        let full = u64::from(self.ack_every) * u64::from(self.rcv_mss);
        if self.unacked_bytes >= full {
            // ACK at least every 2nd (N-th) full-sized segment: RFC 1122 §4.2.3.2,
            // RFC 5681 §4.2.
            ack_now = true;
        }
        if !ack_now && self.delack_deadline.is_none() {
            // The delayed-ACK timer starts with the first unacknowledged segment
            // (RFC 1122 §4.2.3.2).
            self.delack_deadline = Some(now.saturating_add(self.cfg.delack_timeout_ns));
        }
        ack_now
    }

    /// The common case of [`RecvCore::on_segment`], done with fewer steps and the same result:
    /// a data segment (no FIN) starting exactly at `rcv_nxt`, fitting in the window, with
    /// nothing held out of order, no FIN seen and an instantly reading application. `None`
    /// (nothing changed) in every other case.
    #[inline]
    fn on_segment_in_order(
        &mut self,
        now: u64,
        seq: u32,
        len: u32,
        fin: bool,
    ) -> Option<SegOutcome> {
        if len == 0
            || fin
            || self.fin_off.is_some()
            || !self.ooo.is_empty()
            || self.cfg.app_read_bps.is_some()
            || seq != Seq::from_offset(self.irs, self.rcv_nxt).get()
        {
            return None;
        }
        // No FIN yet: the ACK offset is rcv_nxt (fin_done needs fin_off).
        let end = self.rcv_nxt + u64::from(len);
        if end > self.adv_edge.max(self.rcv_nxt) {
            return None;
        }
        self.stats.segments_received += 1;
        if len > self.rcv_mss {
            self.rcv_mss = len.min(self.cfg.mss);
        }
        self.first_data_quickack();
        self.rcv_nxt = end;
        let delivered = u64::from(len);
        self.stats.bytes_delivered += delivered;
        self.stats.bytes_read += delivered;
        self.unacked_bytes += delivered;
        self.grow_clamp(len);
        // From here as in `on_segment` with delivered > 0, no hole filled, no update due.
        let ack_now = self.ack_after_delivery(now, false);
        Some(SegOutcome {
            delivered: len,
            new_bytes: len,
            ack_now,
            ..SegOutcome::default()
        })
    }

    /// The fields of the ACK to send now: acknowledgment number, window, SACK blocks.
    ///
    /// Reflects the state after the last call that took `now` (`on_segment`, `on_timer`).
    #[inline]
    pub fn ack_fields(&self) -> AckFields {
        let (window, edge) = self.offered_window();
        let mut f = AckFields {
            ack: self.ack_seq().get(),
            window: window as u32,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            n_sack: 0,
            dsack: false,
            edge,
        };
        if self.cfg.sack && (self.dsack.is_some() || !self.ooo.is_empty()) {
            // Every block comes from the D-SACK or the out-of-order ranges.
            self.sack_blocks(&mut f);
        }
        f
    }

    /// The SACK blocks of [`RecvCore::ack_fields`] (with a D-SACK or data held out of order),
    /// out of line: the ACK of in-order data has none and stays small.
    #[inline(never)]
    fn sack_blocks(&self, f: &mut AckFields) {
        let max = usize::from(self.cfg.max_sack_blocks).min(MAX_SACK_BLOCKS);
        // Offset blocks, and the index of the out-of-order range behind each (MAX: D-SACK).
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut used = [usize::MAX; MAX_SACK_BLOCKS];
        let mut n = 0usize;
        if let Some(d) = self.dsack {
            // RFC 2883 §4: the first block reports the duplicate; if it lies in a (possibly
            // larger) block above the cumulative ACK, the second block reports that block.
            blocks[0] = d;
            n = 1;
            f.dsack = true;
            if let Some(i) = self.range_index(d.0).filter(|_| n < max) {
                blocks[n] = self.ooo[i];
                used[n] = i;
                n += 1;
            }
        }
        // RFC 2018 §4: first the block with the most recent segment, then the most recently
        // reported other blocks; blocks no longer above rcv_nxt have been delivered.
        for &rep in &self.recent[..self.n_recent] {
            if n >= max {
                break;
            }
            if let Some(i) = self.range_index(rep) {
                if !used[..n].contains(&i) {
                    blocks[n] = self.ooo[i];
                    used[n] = i;
                    n += 1;
                }
            }
        }
        // RFC 2018 §4: "include as many distinct SACK blocks as possible". When the recency
        // list has run dry (its blocks were delivered) but data is still held, report the
        // lowest held blocks, which the sender needs first.
        for (i, &r) in self.ooo.iter().enumerate() {
            if n >= max {
                break;
            }
            if !used[..n].contains(&i) {
                blocks[n] = r;
                used[n] = i;
                n += 1;
            }
        }
        for (slot, &(a, b)) in f.sack.iter_mut().zip(&blocks[..n]) {
            *slot = (
                Seq::from_offset(self.irs, a).get(),
                Seq::from_offset(self.irs, b).get(),
            );
        }
        f.n_sack = n as u8;
    }

    /// Records that an ACK built from [`RecvCore::ack_fields`] was sent at `now`: the advertised
    /// right edge becomes binding, the delayed-ACK state and any pending D-SACK are cleared.
    pub fn on_ack_sent(&mut self, now: u64) {
        let _ = now; // time of sending is not needed by this model
        let (window, edge) = self.offered_window();
        self.window_sent(window, edge);
    }

    /// [`RecvCore::on_ack_sent`] for the ACK built from `f`, the [`RecvCore::ack_fields`] of
    /// the current state (nothing changed in between): its window is not computed again.
    #[inline]
    pub fn on_fields_sent(&mut self, f: &AckFields) {
        debug_assert_eq!(
            (u64::from(f.window), f.edge),
            self.offered_window(),
            "state changed since ack_fields"
        );
        self.window_sent(u64::from(f.window), f.edge);
    }

    /// What sending an ACK advertising `window` (field) up to `edge` does.
    #[inline]
    fn window_sent(&mut self, window: u64, edge: u64) {
        debug_assert!(edge >= self.adv_edge, "right window edge moved left");
        self.adv_edge = self.adv_edge.max(edge);
        if self.cfg.wnd_rule != RcvWndRule::Free {
            // Linux `tcp_select_window`: rcv_wnd = the chosen window, rcv_wup = rcv_nxt.
            let chosen = self.linux_window().0;
            self.lin_wnd = chosen;
            self.lin_edge = self.ack_offset() + chosen;
        }
        if window == 0 {
            self.stats.zero_window_acks += 1;
        }
        if self.dsack.take().is_some() {
            self.stats.dsacks_sent += 1;
        }
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        // Any ACK carries the latest SACK blocks: nothing held is left to send (Linux
        // `tcp_event_ack_sent` clears the compressed count and cancels its timer).
        self.comp_held = 0;
        self.comp_deadline = None;
        self.read_since_ack = false;
        self.stats.acks_sent += 1;
    }

    /// Earliest time (ns) at which [`RecvCore::on_timer`] has something to do: the delayed-ACK
    /// deadline, or the time the slow application will have read enough for a window update.
    /// May be in the past if a due event was not processed yet.
    pub fn poll_at(&self) -> Option<u64> {
        // The earliest of the three, spelled out: the event loop asks after every segment, and
        // `[..].into_iter().flatten().min()` cost ≈ 2 % of a large-window run's samples.
        #[inline]
        fn min(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }
        }
        let t = min(self.delack_deadline, self.comp_deadline);
        if self.cfg.app_read_bps.is_none() {
            return t; // no slow application: no window update to wait for
        }
        min(t, self.window_update_at())
    }

    /// Advances time to `now`; returns `true` when an ACK must be sent now (delayed-ACK timer
    /// expired, or a window update is due). The caller then sends it and calls `on_ack_sent`.
    pub fn on_timer(&mut self, now: u64) -> bool {
        self.app_read_until(now);
        let mut send = false;
        if let Some(t) = self.delack_deadline {
            if now >= t {
                // Delayed-ACK timer expired (RFC 1122 §4.2.3.2).
                self.delack_deadline = None;
                send = true;
            }
        }
        if self.comp_deadline.is_some_and(|t| now >= t) {
            // SACK compression timer: one ACK with the latest blocks for the held ones.
            self.comp_deadline = None;
            send = true;
        }
        if self.window_update_due() {
            // The application opened the window enough to tell the peer (RFC 1122 §4.2.3.3).
            self.stats.window_updates += 1;
            send = true;
        }
        send
    }

    /// ACK at least every `n` full-sized segments from the next segment on, instead of
    /// `delack_segments` (XNU's stretch ACKs, receiver/stretch.rs, decide per segment).
    #[inline]
    pub fn set_ack_every(&mut self, n: u32) {
        self.ack_every = n.max(1);
    }

    /// Re-enters quick-ACK mode (Linux also does this after an idle period longer than the RTO,
    /// B.1; the caller knows the RTO and decides).
    pub fn enter_quickack(&mut self) {
        // Linux `tcp_incr_quickack`: raises the count, never lowers it.
        self.quick_left = self.quick_left.max(self.quick_count());
    }

    /// The quick-ACK count of an entry into quick-ACK mode: `quickack_segments`, or with
    /// `quickack_window_sized` Linux's `tcp_incr_quickack` sizing (net/ipv4/tcp_input.c 2.4 to
    /// 6.x, read for the facts): the last advertised window over two received segments, 2 when
    /// that is 0, at most `TCP_MAX_QUICKACKS` (16, the knob).
    fn quick_count(&self) -> u32 {
        if !self.cfg.quickack_window_sized {
            return self.cfg.quickack_segments;
        }
        let q = match self.advertised_window() / (2 * u64::from(self.rcv_mss.max(1))) {
            0 => 2,
            q => q,
        };
        q.min(u64::from(self.cfg.quickack_segments)) as u32
    }

    /// With `quickack_window_sized`, the first data segment sets the quick-ACK count (Linux
    /// `tcp_event_data_recv`: the delayed-ACK engine starts at the first data segment, `ato`
    /// 0, with `tcp_incr_quickack` after `tcp_measure_rcv_mss`; the count was 0 before).
    #[inline]
    fn first_data_quickack(&mut self) {
        if self.cfg.quickack_window_sized && !self.quick_sized {
            self.quick_sized = true;
            self.quick_left = self.quick_count();
        }
    }

    /// The window to put in our SYN or SYN-ACK: never scaled (RFC 7323 §2.2), so at most 65535
    /// (or `unscaled_max`: Linux 2.4 to 2.6.17 `tcp_select_initial_window` offers at most
    /// `MAX_TCP_WINDOW`, 32,767, whatever the scale).
    pub fn syn_window(&self) -> u16 {
        Self::initial_window(&self.cfg, self.clamp) as u16
    }

    /// The window of the SYN exchange with clamp `clamp`: the buffer within the clamp, at most
    /// `unscaled_max` (and 65535); with a Linux [`RcvWndRule`] first rounded down to whole
    /// segments of our MSS when larger than one (`tcp_select_initial_window`, 2.4.22, 2.6.11,
    /// 2.6.18: "Quantize space offering to a multiple of mss if possible").
    fn initial_window(cfg: &RecvCoreConfig, clamp: u64) -> u64 {
        let space = cfg.rcvbuf.min(clamp);
        let mss = u64::from(cfg.mss);
        let space = if cfg.wnd_rule != RcvWndRule::Free && space > mss {
            space / mss * mss
        } else {
            space
        };
        space.min(u64::from(cfg.unscaled_max)).min(0xFFFF)
    }

    /// Start with an offered window of at most `bytes` (call before any segment arrives): the
    /// window of the SYN exchange and every later window stay within the clamp until it grows.
    pub fn set_initial_clamp(&mut self, bytes: u64) {
        self.clamp = bytes.max(1);
        self.adv_edge = self
            .adv_edge
            .min(Self::initial_window(&self.cfg, self.clamp));
        // Linux: rcv_wnd (and rcv_ssthresh) start at the window of the SYN exchange.
        self.lin_wnd = self.adv_edge;
        self.lin_edge = self.adv_edge;
    }

    /// The current window clamp.
    pub fn clamp(&self) -> u64 {
        self.clamp
    }

    /// Linux `tcp_grow_window` (net/ipv4/tcp_input.c, 2.4 to 6.x, read for the facts): a
    /// full-sized in-order segment raises the clamp (`rcv_ssthresh`) by two segments while there
    /// is room below the free buffer (`tcp_space`: the buffer less what the application has not
    /// read and the out-of-order queue), at most up to it (6.x `min(room, incr)`; 2.6 could
    /// overshoot by part of one increment), and every such growth sets the low bit of the
    /// quick-ACK count (`quick |= 1`), so the segment is ACKed at once and a quick-ACK phase
    /// does not shrink while the window grows. Measured on this machine's 6.18 kernel
    /// (scripts/linux-6/delack-timer.pkt): 16 quick ACKs plus one per growing segment. No clamp
    /// (`u64::MAX`, BSD and Windows receivers): nothing to grow. With `skb_truesize` (Linux
    /// 2.x) the increment is [`Self::grow_increment`]'s, and a segment that may not grow the
    /// clamp sets no quick ACK.
    #[inline]
    fn grow_clamp(&mut self, len: u32) {
        self.grow_clamp_by(len, 0);
    }

    /// [`Self::grow_clamp`] with `uncharged` bytes of the reassembly queue not yet counted
    /// against the buffer (the segment being queued out of order).
    #[inline]
    fn grow_clamp_by(&mut self, len: u32, uncharged: u64) {
        // The free buffer is at most the buffer: a clamp that reached it (or none, u64::MAX)
        // has no room, the common case, tested first.
        if self.clamp >= self.cfg.rcvbuf || len < self.cfg.mss {
            return;
        }
        let space = self
            .cfg
            .rcvbuf
            .saturating_sub(self.unread + self.ooo_charged() - uncharged);
        let room = space.saturating_sub(self.clamp);
        if room == 0 {
            return;
        }
        let incr = self.grow_increment(len);
        if incr == 0 {
            // No growth, so no growth quick ACK either (`quick |= 1` is inside the growth).
            return;
        }
        self.clamp += room.min(incr);
        if self.cfg.quickack_on_growth {
            self.quick_left |= 1;
        }
    }

    /// How much one segment of `len` bytes may raise the clamp: two segments, or with
    /// `skb_truesize` Linux 2.4/2.6 `tcp_grow_window` check #2 (net/ipv4/tcp_input.c of 2.4.27
    /// and 2.6.11, and of the 2.6.1x-2.6.3x trees with `tcp_rmem[2]` as the target; read for
    /// the facts, nothing copied). With `tcp_win_from_space(s)` = s − s/4 (`tcp_adv_win_scale`
    /// = 2, the 2.4/2.6 default): if the skb's window share `tcp_win_from_space(truesize)` is
    /// at most the segment's length, two advertised MSS; otherwise (`__tcp_grow_window`) with
    /// t = `tcp_win_from_space(truesize)`/2 and w = the target window/2, while the clamp
    /// (`rcv_ssthresh`) ≤ w: two `rcv_mss` if t ≤ len, else halve t and w; 0 when the loop
    /// ends. The model's `rcvbuf` is already a window (3/4 of Linux's `sk_rcvbuf`, the
    /// personalities' `rcvbuf` sources), so `tcp_full_space(sk)` is `rcvbuf` here.
    #[inline]
    fn grow_increment(&self, len: u32) -> u64 {
        let two_mss = 2 * u64::from(self.cfg.mss);
        if self.cfg.skb_truesize == 0 {
            return two_mss;
        }
        let win_from_space = |s: u64| s - (s >> 2);
        let len = u64::from(len);
        let mut t = win_from_space(u64::from(self.cfg.skb_truesize));
        if t <= len {
            return two_mss;
        }
        t /= 2;
        let mut w = match self.cfg.grow_target {
            0 => self.cfg.rcvbuf,
            target => target,
        } / 2;
        while self.clamp <= w {
            if t <= len {
                return 2 * u64::from(self.rcv_mss);
            }
            t >>= 1;
            w >>= 1;
        }
        0
    }

    /// Grow the receive buffer (autotuning); never shrinks it.
    pub fn grow_rcvbuf(&mut self, bytes: u64) {
        self.cfg.rcvbuf = self.cfg.rcvbuf.max(bytes);
    }

    /// The configuration.
    pub fn config(&self) -> &RecvCoreConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// `RCV.NXT` as a wire sequence number (includes the FIN once consumed).
    pub fn rcv_nxt(&self) -> Seq {
        self.ack_seq()
    }

    /// Bytes delivered in order so far (64-bit stream offset of `rcv_nxt`, data only).
    pub fn delivered_offset(&self) -> u64 {
        self.rcv_nxt
    }

    /// Out-of-order bytes currently held.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// Bytes from `rcv_nxt` to the end of the highest out-of-order range (0 when none).
    pub fn ooo_extent(&self) -> u64 {
        self.ooo.back().map_or(0, |r| r.1 - self.rcv_nxt)
    }

    /// Number of disjoint out-of-order ranges currently held.
    pub fn ooo_ranges(&self) -> usize {
        self.ooo.len()
    }

    /// Delivered bytes the (slow) application has not read yet.
    pub fn unread_bytes(&self) -> u64 {
        self.unread
    }

    /// The window (bytes from `rcv_nxt`) the peer may currently use: the last advertised right
    /// edge minus `rcv_nxt`.
    pub fn advertised_window(&self) -> u64 {
        self.adv_edge.saturating_sub(self.ack_offset())
    }

    /// The peer's FIN has been received and all data before it delivered.
    pub fn fin_received(&self) -> bool {
        self.fin_done
    }

    /// Delayed-ACK deadline, if the timer is running.
    pub fn delack_deadline(&self) -> Option<u64> {
        self.delack_deadline
    }

    // ----- internals -------------------------------------------------------------------------

    /// Offset of the acknowledgment number (data offset plus the FIN once consumed).
    fn ack_offset(&self) -> u64 {
        self.rcv_nxt + u64::from(self.fin_done)
    }

    fn ack_seq(&self) -> Seq {
        Seq::from_offset(self.irs, self.ack_offset())
    }

    /// Free receive buffer: RCV.BUFF − RCV.USER (RFC 1122 §4.2.3.3), where the "user" holds the
    /// unread bytes and, with `ooo_uses_buffer`, the reassembly queue.
    fn free_space(&self) -> u64 {
        self.cfg
            .rcvbuf
            .min(self.clamp)
            .saturating_sub(self.unread + self.ooo_charged())
    }

    /// Out-of-order bytes that count against the receive buffer.
    fn ooo_charged(&self) -> u64 {
        if self.cfg.ooo_uses_buffer {
            self.ooo_bytes
        } else {
            0
        }
    }

    /// The window field to advertise now and the right edge (offset) it implies.
    fn offered_window(&self) -> (u64, u64) {
        if self.cfg.wnd_rule != RcvWndRule::Free {
            return self.linux_window().1;
        }
        let ws = u32::from(self.cfg.wscale);
        let ack_off = self.ack_offset();
        // What we already promised; the right edge must not move left (RFC 1122 §4.2.2.16,
        // RFC 9293 §3.8.6.2.2). Rounded up to the scale granularity so scaling cannot make it
        // appear to shrink (RFC 7323 §2.4, Appendix F).
        let cur = self.adv_edge.saturating_sub(ack_off);
        let cur_field = cur.div_ceil(1u64 << ws);
        let cand = self.free_space();
        // RecvCore SWS avoidance (RFC 1122 §4.2.3.3): move the right edge only when it gains at
        // least min(Fr·RCV.BUFF, Eff.snd.MSS), Fr = 1/2.
        let sws = (self.cfg.rcvbuf / 2).min(u64::from(self.cfg.mss)).max(1);
        let field = if cand >= cur + sws {
            (cand >> ws).max(cur_field)
        } else {
            cur_field
        };
        let field = if ws == 0 {
            field.min(u64::from(self.cfg.unscaled_max))
        } else {
            field.min(0xFFFF)
        };
        (field, ack_off + (field << ws))
    }

    /// Linux's window selection ([`RcvWndRule::Linux24`], [`RcvWndRule::Linux26`]): the window
    /// Linux records as chosen (`rcv_wnd`, before the unscaled cap) and the (field, right edge)
    /// of the ACK. `tcp_select_window` (net/ipv4/tcp_output.c 2.4.22, 2.6.11, 2.6.18, read for
    /// the facts): the choice of `__tcp_select_window` (see [`RcvWndRule`]) but never less than
    /// what the last window still leaves (`tcp_receive_window`: `rcv_wup + rcv_wnd − rcv_nxt`,
    /// rounded up to the granularity, as a 2.6.24 tree does with its `ALIGN` macro;
    /// 2.4 to 2.6.18 kept it unaligned and the shift could lose up to 2^wscale − 1 bytes, which
    /// the model does not: its right edge never moves left); then capped at `unscaled_max`
    /// without scaling (`MAX_TCP_WINDOW` in 2.6.11 to 2.6.17) or at 65535 << wscale, and
    /// shifted. `full space` is the buffer (`tcp_full_space`) within `window_clamp`, which
    /// `tcp_select_initial_window` sets to at most 65535 << wscale; `rcv_ssthresh` is the clamp,
    /// never above `window_clamp`.
    #[inline(never)]
    fn linux_window(&self) -> (u64, (u64, u64)) {
        let ws = u32::from(self.cfg.wscale);
        let gran = 1u64 << ws;
        let ack_off = self.ack_offset();
        let max_wnd = 0xFFFFu64 << ws;
        let full = self.cfg.rcvbuf.min(max_wnd);
        let mss = u64::from(self.rcv_mss).min(full).max(1);
        let free = self
            .cfg
            .rcvbuf
            .saturating_sub(self.unread + self.ooo_charged());
        let chosen = if free < full / 2 && free < mss {
            0
        } else {
            let free = free.min(self.clamp).min(max_wnd);
            if ws > 0 && self.cfg.wnd_rule == RcvWndRule::Linux26 {
                free.next_multiple_of(gran)
            } else if self.lin_wnd > free || self.lin_wnd + mss <= free {
                free / mss * mss
            } else {
                self.lin_wnd
            }
        };
        let chosen = chosen.max(self.lin_edge.saturating_sub(ack_off).next_multiple_of(gran));
        let cap = if ws == 0 {
            u64::from(self.cfg.unscaled_max)
        } else {
            max_wnd
        };
        // What the peer was told stays its due (the right edge never moves left).
        let told = self.adv_edge.saturating_sub(ack_off).div_ceil(gran);
        let field = (chosen.min(cap) >> ws).max(told).min(0xFFFF);
        (chosen, (field, ack_off + (field << ws)))
    }

    /// Free space at which a window update is worth sending (see `wnd_update_segments`).
    fn window_update_target(&self) -> u64 {
        let cur = self.advertised_window();
        let th = (self.cfg.rcvbuf / 2)
            .min(u64::from(self.cfg.wnd_update_segments) * u64::from(self.cfg.mss))
            .max(1);
        (cur + th).max(2 * cur)
    }

    fn window_update_due(&self) -> bool {
        self.cfg.app_read_bps.is_some()
            && self.read_since_ack
            && self.free_space() >= self.window_update_target()
    }

    /// When the slow application will have read enough for a window update.
    fn window_update_at(&self) -> Option<u64> {
        let bps = self.cfg.app_read_bps?;
        if self.window_update_due() {
            return Some(self.read_last);
        }
        if self.unread == 0 || bps == 0 {
            return None;
        }
        // free = rcvbuf − ooo − unread ≥ target  ⇔  unread ≤ rcvbuf − ooo − target.
        let max_unread = self
            .cfg
            .rcvbuf
            .checked_sub(self.ooo_charged())?
            .checked_sub(self.window_update_target())?;
        // At least one byte must be read (an update follows a read).
        let x = self.unread.saturating_sub(max_unread).max(1);
        let need = u128::from(x) * BIT_NS_PER_BYTE_PER_BPS - self.read_acc;
        let dt = need.div_ceil(u128::from(bps));
        Some(
            self.read_last
                .saturating_add(u64::try_from(dt).unwrap_or(u64::MAX)),
        )
    }

    /// Accounts application reads up to `now` (constant rate while data waits).
    fn app_read_until(&mut self, now: u64) {
        let Some(bps) = self.cfg.app_read_bps else {
            return;
        };
        if now <= self.read_last {
            return;
        }
        if self.unread == 0 {
            // An idle application accumulates no read credit.
            self.read_last = now;
            self.read_acc = 0;
            return;
        }
        self.read_acc += u128::from(now - self.read_last) * u128::from(bps);
        self.read_last = now;
        let can = self.read_acc / BIT_NS_PER_BYTE_PER_BPS;
        let read = u64::try_from(can).unwrap_or(u64::MAX).min(self.unread);
        if read > 0 {
            self.read_since_ack = true;
        }
        self.unread -= read;
        self.stats.bytes_read += read;
        if self.unread == 0 {
            self.read_acc = 0;
        } else {
            self.read_acc -= u128::from(read) * BIT_NS_PER_BYTE_PER_BPS;
        }
    }

    /// Index of the out-of-order range containing byte `off` (binary search).
    fn range_index(&self, off: u64) -> Option<usize> {
        let i = self.ooo.partition_point(|r| r.1 <= off);
        (i < self.ooo.len() && self.ooo[i].0 <= off).then_some(i)
    }

    /// Adds `[s, e)` (with `s ≥ rcv_nxt`) to the out-of-order set, merging touching and
    /// overlapping ranges. Returns the number of new bytes and the first part of `[s, e)` that
    /// had been received already.
    fn insert_range(&mut self, s: u64, e: u64) -> (u64, Option<(u64, u64)>) {
        let q = &mut self.ooo;
        // Ranges i..j overlap or touch [s, e].
        let i = q.partition_point(|r| r.1 < s);
        let j = q.partition_point(|r| r.0 <= e);
        if i == j {
            q.insert(i, (s, e));
            self.ooo_bytes += e - s;
            return (e - s, None);
        }
        // Ranges are non-adjacent, so a strict overlap, if any, involves range i or i + 1.
        let overlap = (i..j.min(i + 2)).find_map(|k| {
            let (a, b) = q[k];
            let (lo, hi) = (a.max(s), b.min(e));
            (lo < hi).then_some((lo, hi))
        });
        let start = s.min(q[i].0);
        let end = e.max(q[j - 1].1);
        let old: u64 = q.range(i..j).map(|r| r.1 - r.0).sum();
        q[i] = (start, end);
        q.drain(i + 1..j);
        let added = (end - start) - old;
        self.ooo_bytes += added;
        (added, overlap)
    }

    /// RFC 2018 §4 recency list: the block containing `rep` becomes the first, followed by the
    /// previously reported blocks that are still distinct and still held.
    fn push_recent(&mut self, rep: u64) {
        let Some(first) = self.range_index(rep) else {
            return;
        };
        let mut list = [0u64; MAX_SACK_BLOCKS];
        let mut idx = [usize::MAX; MAX_SACK_BLOCKS];
        list[0] = rep;
        idx[0] = first;
        let mut n = 1;
        for k in 0..self.n_recent {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            let old = self.recent[k];
            if let Some(i) = self.range_index(old) {
                if !idx[..n].contains(&i) {
                    list[n] = old;
                    idx[n] = i;
                    n += 1;
                }
            }
        }
        self.recent = list;
        self.n_recent = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// A plain receiver: 1 MB buffer, MSS 1000, delayed ACKs every 2nd segment, no quick-ACK.
    fn cfg(mss: u32) -> RecvCoreConfig {
        RecvCoreConfig {
            rcvbuf: 1 << 20,
            mss,
            delayed_ack: true,
            delack_segments: 2,
            delack_timeout_ns: 40 * MS,
            quickack_segments: 0,
            quickack_on_ooo: true,
            quickack_on_growth: false,
            quickack_window_sized: false,
            skb_truesize: 0,
            grow_target: 0,
            grow_window_on_ooo: false,
            comp_sack_nr: 0,
            comp_sack_delay_ns: MS,
            sack: true,
            dsack: true,
            max_sack_blocks: 4,
            wscale: 0,
            ooo_uses_buffer: true,
            app_read_bps: None,
            wnd_update_segments: 2,
            wnd_rule: RcvWndRule::Free,
            unscaled_max: 0xFFFF,
            accept_beyond_window: false,
        }
    }

    fn rx(c: RecvCoreConfig, irs: u32) -> RecvCore {
        RecvCore::new(c, irs).unwrap()
    }

    /// Delivers `[seq, seq+len)`, sends an ACK if asked, and returns (outcome, fields of the ACK
    /// that would be sent now).
    fn seg(r: &mut RecvCore, now: u64, seq: u32, len: u32) -> (SegOutcome, AckFields) {
        let o = r.on_segment(now, seq, len, false);
        let f = r.ack_fields();
        if o.ack_now {
            r.on_ack_sent(now);
        }
        (o, f)
    }

    fn blocks(f: &AckFields) -> Vec<(u32, u32)> {
        f.sack_blocks().to_vec()
    }

    #[test]
    fn test_inorder_delack_every_second_segment() {
        let mut r = rx(cfg(1000), 1000);
        let o = r.on_segment(0, 1000, 1000, false);
        assert_eq!(o.delivered, 1000);
        assert!(!o.ack_now, "1st full segment is delayed");
        assert_eq!(r.delack_deadline(), Some(40 * MS));
        let o = r.on_segment(MS, 2000, 1000, false);
        assert!(o.ack_now, "2nd full segment is ACKed (RFC 5681 §4.2)");
        assert_eq!(r.ack_fields().ack, 3000);
        r.on_ack_sent(MS);
        assert_eq!(r.delack_deadline(), None);
        assert_eq!(r.poll_at(), None);
        for k in 0..10u32 {
            let o = r.on_segment(2 * MS, 3000 + 1000 * k, 1000, false);
            assert_eq!(o.ack_now, k % 2 == 1, "segment {k}");
            if o.ack_now {
                r.on_ack_sent(2 * MS);
            }
        }
        assert_eq!(r.stats().acks_sent, 6);
        assert_eq!(r.stats().bytes_delivered, 12_000);
        assert_eq!(r.stats().segments_received, 12);
    }

    #[test]
    fn test_inorder_delack_every_third_segment_when_configured() {
        let mut c = cfg(1000);
        c.delack_segments = 3;
        let mut r = rx(c, 0);
        let acks: Vec<bool> = (0..6)
            .map(|k| seg(&mut r, 0, 1000 * k, 1000).0.ack_now)
            .collect();
        assert_eq!(acks, [false, false, true, false, false, true]);
    }

    #[test]
    fn test_no_delayed_ack_acks_every_segment() {
        let mut c = cfg(1000);
        c.delayed_ack = false;
        let mut r = rx(c, 0);
        assert!((0..4).all(|k| seg(&mut r, 0, 1000 * k, 1000).0.ack_now));
    }

    #[test]
    fn test_single_segment_delack_timer_fires() {
        let mut r = rx(cfg(1000), 7);
        let o = r.on_segment(5 * MS, 7, 1000, false);
        assert!(!o.ack_now);
        assert_eq!(r.poll_at(), Some(45 * MS));
        assert!(!r.on_timer(45 * MS - 1));
        // A second small segment does not restart the timer (started by the first one).
        let o = r.on_segment(10 * MS, 1007, 10, false);
        assert!(!o.ack_now);
        assert_eq!(r.poll_at(), Some(45 * MS));
        assert!(r.on_timer(45 * MS));
        assert_eq!(r.ack_fields().ack, 1017);
        r.on_ack_sent(45 * MS);
        assert_eq!(r.poll_at(), None);
        assert!(!r.on_timer(100 * MS));
    }

    #[test]
    fn test_small_segments_learn_rcv_mss() {
        // Segments of 700 bytes with an MSS of 1460: the full-size estimate follows the segments
        // actually received, so the 2nd segment is still ACKed at once.
        let mut r = rx(cfg(1460), 0);
        assert!(!seg(&mut r, 0, 0, 700).0.ack_now);
        assert!(seg(&mut r, 0, 700, 700).0.ack_now);
    }

    #[test]
    fn test_out_of_order_segment_immediate_ack() {
        let mut r = rx(cfg(1000), 0);
        let (o, _) = seg(&mut r, 0, 0, 1000);
        assert!(!o.ack_now);
        let (o, f) = seg(&mut r, 0, 2000, 1000);
        assert!(o.ack_now && o.out_of_order && !o.duplicate);
        assert_eq!(o.delivered, 0);
        assert_eq!(o.new_bytes, 1000);
        assert_eq!(f.ack, 1000);
        assert_eq!(blocks(&f), [(2000, 3000)]);
        assert!(!f.dsack);
        assert_eq!(r.ooo_bytes(), 1000);
        assert_eq!(r.stats().ooo_segments, 1);
    }

    /// A Linux ≥ 4.18 receiver: SACK compression with `nr` held at most, 1 ms timer.
    fn compressing(nr: u32) -> RecvCore {
        rx(
            RecvCoreConfig {
                comp_sack_nr: nr,
                comp_sack_delay_ns: MS,
                ..cfg(1000)
            },
            0,
        )
    }

    #[test]
    fn test_sack_compression_three_at_once_then_held_until_the_timer() {
        let mut r = compressing(44);
        seg(&mut r, 0, 0, 1000);
        // Segment 1000 lost; 2000.. arrive 10 µs apart.
        let mut sent = Vec::new();
        for k in 0..10u32 {
            let t = 10_000 * u64::from(k);
            let (o, _) = seg(&mut r, t, 2000 + 1000 * k, 1000);
            assert!(o.out_of_order);
            sent.push(o.ack_now);
        }
        // The first three duplicate ACKs leave at once (fast retransmit needs them), the rest
        // are held.
        assert_eq!(
            sent,
            [true, true, true, false, false, false, false, false, false, false]
        );
        assert_eq!(r.stats().sacks_compressed, 7);
        // The timer was armed by the first held one (at 30 µs) and fires 1 ms later with one
        // ACK that carries the latest block.
        assert_eq!(r.poll_at(), Some(30_000 + MS));
        assert!(!r.on_timer(30_000 + MS - 1));
        assert!(r.on_timer(30_000 + MS));
        let f = r.ack_fields();
        assert_eq!(blocks(&f)[0], (2000, 12000));
        r.on_ack_sent(30_000 + MS);
        assert_eq!(r.poll_at(), None);
        // A segment that fills the hole is acknowledged at once, and the count starts again
        // for the new rcv_nxt.
        let (o, _) = seg(&mut r, 2 * MS, 1000, 1000);
        assert!(o.ack_now && o.delivered > 0);
        let (o, _) = seg(&mut r, 2 * MS, 13000, 1000);
        assert!(o.ack_now, "first duplicate ACK for the new rcv_nxt");
    }

    #[test]
    fn test_sack_compression_sends_when_the_count_is_reached() {
        let mut r = compressing(2);
        seg(&mut r, 0, 0, 1000);
        let acks: Vec<bool> = (0..8u32)
            .map(|k| seg(&mut r, 0, 2000 + 1000 * k, 1000).0.ack_now)
            .collect();
        // 3 at once, 2 held, the next one sent (held count reached), then 2 held again.
        assert_eq!(acks, [true, true, true, false, false, true, false, false]);
    }

    #[test]
    fn test_sack_compression_off_acks_every_out_of_order_segment() {
        let mut r = compressing(0);
        seg(&mut r, 0, 0, 1000);
        for k in 0..10u32 {
            assert!(seg(&mut r, 0, 2000 + 1000 * k, 1000).0.ack_now);
        }
        assert_eq!(r.stats().sacks_compressed, 0);
    }

    #[test]
    fn test_duplicate_data_is_acked_at_once_while_compressing() {
        let mut r = compressing(44);
        seg(&mut r, 0, 0, 1000);
        for k in 0..6u32 {
            seg(&mut r, 0, 2000 + 1000 * k, 1000);
        }
        // A duplicate of SACKed data carries a D-SACK: never held.
        let (o, f) = seg(&mut r, 0, 3000, 1000);
        assert!(o.ack_now && f.dsack);
    }

    #[test]
    fn test_quickack_after_out_of_order_only_before_linux_4_18() {
        for on in [true, false] {
            let mut r = rx(
                RecvCoreConfig {
                    quickack_segments: 16,
                    quickack_on_ooo: on,
                    ..cfg(1000)
                },
                0,
            );
            // Use up the quick ACKs of the connection start.
            for k in 0..16u32 {
                seg(&mut r, 0, 1000 * k, 1000);
            }
            seg(&mut r, 0, 17_000, 1000); // out of order
            seg(&mut r, 0, 16_000, 1000); // fills the hole: ACKed at once either way
            let (o, _) = seg(&mut r, 0, 18_000, 1000);
            assert_eq!(
                o.ack_now, on,
                "next in-order segment quick-ACKed only with {on}"
            );
        }
    }

    #[test]
    fn test_hole_filled_delivers_all_buffered_bytes() {
        let mut r = rx(cfg(1000), 0);
        seg(&mut r, 0, 0, 1000);
        for k in 2..10 {
            let (o, _) = seg(&mut r, 0, 1000 * k, 1000);
            assert!(o.ack_now && o.out_of_order);
        }
        assert_eq!(r.ooo_ranges(), 1);
        assert_eq!(r.ooo_bytes(), 8000);
        let (o, f) = seg(&mut r, 0, 1000, 1000);
        assert!(o.ack_now, "hole fill is ACKed at once (RFC 5681 §4.2)");
        assert_eq!(o.delivered, 9000);
        assert_eq!(f.ack, 10_000);
        assert_eq!(f.n_sack, 0);
        assert_eq!(r.ooo_bytes(), 0);
        assert_eq!(r.delivered_offset(), 10_000);
    }

    #[test]
    fn test_partial_hole_fill_is_acked_immediately() {
        let mut r = rx(cfg(1000), 0);
        seg(&mut r, 0, 0, 1000);
        seg(&mut r, 0, 3000, 1000);
        // Fills the first half of the hole only.
        let (o, f) = seg(&mut r, 0, 1000, 1000);
        assert!(o.ack_now && !o.out_of_order);
        assert_eq!(o.delivered, 1000);
        assert_eq!(f.ack, 2000);
        assert_eq!(blocks(&f), [(3000, 4000)]);
    }

    /// RFC 2018 §5, Case 1: the first 4 of 8 segments of 500 bytes arrive, no SACK needed.
    #[test]
    fn test_rfc2018_case1_no_loss_no_sack() {
        let mut c = cfg(500);
        c.delayed_ack = false;
        let mut r = rx(c, 5000);
        for (k, ack) in [5500, 6000, 6500, 7000].into_iter().enumerate() {
            let (_, f) = seg(&mut r, 0, 5000 + 500 * k as u32, 500);
            assert_eq!((f.ack, f.n_sack), (ack, 0));
        }
    }

    /// RFC 2018 §5, Case 2: the first segment is dropped, the other 7 arrive.
    #[test]
    fn test_rfc2018_case2_first_segment_lost() {
        let mut r = rx(cfg(500), 5000);
        for k in 1..8u32 {
            let (o, f) = seg(&mut r, 0, 5000 + 500 * k, 500);
            assert!(o.ack_now);
            assert_eq!(f.ack, 5000);
            assert_eq!(blocks(&f), [(5500, 5500 + 500 * k)]);
        }
    }

    /// RFC 2018 §5, Case 3: the 2nd, 4th, 6th and 8th segments are dropped; then the 4th
    /// arrives out of order, then the 2nd. Expected SACK options are the RFC's table.
    #[test]
    fn test_rfc2018_case3_sack_block_order() {
        let mut c = cfg(500);
        c.max_sack_blocks = 3; // the RFC's table has room for 3 blocks
        let mut r = rx(c, 5000);
        let (_, f) = seg(&mut r, 0, 5000, 500);
        assert_eq!((f.ack, f.n_sack), (5500, 0));
        let (_, f) = seg(&mut r, 0, 6000, 500);
        assert_eq!(f.ack, 5500);
        assert_eq!(blocks(&f), [(6000, 6500)]);
        let (_, f) = seg(&mut r, 0, 7000, 500);
        assert_eq!(blocks(&f), [(7000, 7500), (6000, 6500)]);
        let (_, f) = seg(&mut r, 0, 8000, 500);
        assert_eq!(blocks(&f), [(8000, 8500), (7000, 7500), (6000, 6500)]);
        // "Suppose the 4th packet is received out of order."
        let (o, f) = seg(&mut r, 0, 6500, 500);
        assert!(o.ack_now && o.out_of_order);
        assert_eq!(f.ack, 5500);
        assert_eq!(blocks(&f), [(6000, 7500), (8000, 8500)]);
        // "Suppose at this point, the 2nd segment is received."
        let (o, f) = seg(&mut r, 0, 5500, 500);
        assert!(o.ack_now);
        assert_eq!(o.delivered, 2000);
        assert_eq!(f.ack, 7500);
        assert_eq!(blocks(&f), [(8000, 8500)]);
    }

    #[test]
    fn test_sack_blocks_limited_most_recent_first() {
        let mut c = cfg(100);
        c.max_sack_blocks = 3;
        let mut r = rx(c, 0);
        // Holes at 0, 200, 400, ...; blocks arrive in the order 500, 100, 900, 300, 700.
        let order = [500u32, 100, 900, 300, 700];
        let mut f = r.ack_fields();
        for &s in &order {
            f = seg(&mut r, 0, s, 100).1;
        }
        assert_eq!(blocks(&f), [(700, 800), (300, 400), (900, 1000)]);
        // Fill 0..300: delivers 0..400; recent blocks 300 (delivered) drops out, then
        // 900 and 700 (most recent first), then the lowest remaining block fills the free slot.
        let (o, f) = seg(&mut r, 0, 0, 100);
        assert_eq!(o.delivered, 200);
        let (o, f2) = seg(&mut r, 0, 200, 100);
        assert_eq!(o.delivered, 200);
        assert_eq!(f.ack, 200);
        assert_eq!(f2.ack, 400);
        assert_eq!(blocks(&f2), [(700, 800), (900, 1000), (500, 600)]);
    }

    #[test]
    fn test_sack_disabled_sends_no_blocks_but_reassembles() {
        let mut c = cfg(1000);
        c.sack = false;
        c.dsack = false;
        let mut r = rx(c, 0);
        let (o, f) = seg(&mut r, 0, 1000, 1000);
        assert!(o.ack_now);
        assert_eq!(f.n_sack, 0);
        let (o, f) = seg(&mut r, 0, 1000, 1000);
        assert!(o.duplicate && o.ack_now);
        assert_eq!((f.n_sack, f.dsack), (0, false));
        let (o, f) = seg(&mut r, 0, 0, 1000);
        assert_eq!(o.delivered, 2000);
        assert_eq!(f.ack, 2000);
    }

    /// RFC 2883 §4 examples: "Reporting a duplicate segment" and "Reporting an out-of-order
    /// segment and a duplicate segment".
    #[test]
    fn test_rfc2883_duplicate_below_ack_reported_in_dsack() {
        let mut r = rx(cfg(500), 3000);
        seg(&mut r, 0, 3000, 500);
        seg(&mut r, 0, 3500, 500);
        let (o, f) = seg(&mut r, 0, 3000, 500);
        assert!(o.duplicate && o.ack_now);
        assert_eq!(f.ack, 4000);
        assert!(f.dsack);
        assert_eq!(blocks(&f), [(3000, 3500)]);
        assert_eq!(r.stats().dsacks_sent, 1);
        assert_eq!(r.stats().dup_segments, 1);
        // Reported once only.
        let f = r.ack_fields();
        assert!(!f.dsack && f.n_sack == 0);

        let mut r = rx(cfg(500), 3000);
        seg(&mut r, 0, 3000, 500);
        seg(&mut r, 0, 3500, 500);
        let (_, f) = seg(&mut r, 0, 4500, 500);
        assert_eq!((f.ack, blocks(&f)), (4000, vec![(4500, 5000)]));
        let (_, f) = seg(&mut r, 0, 3000, 500);
        assert_eq!(f.ack, 4000);
        assert!(f.dsack);
        assert_eq!(blocks(&f), [(3000, 3500), (4500, 5000)]);
    }

    /// RFC 2883 §4 example "Reporting a duplicate of an out-of-order segment".
    #[test]
    fn test_rfc2883_duplicate_of_sacked_segment() {
        let mut r = rx(cfg(500), 3500);
        seg(&mut r, 0, 3500, 500);
        let (_, f) = seg(&mut r, 0, 4500, 500);
        assert_eq!(blocks(&f), [(4500, 5000)]);
        let (_, f) = seg(&mut r, 0, 5000, 500);
        assert_eq!(blocks(&f), [(4500, 5500)]);
        let (o, f) = seg(&mut r, 0, 5000, 500);
        assert!(o.duplicate && o.ack_now && !o.out_of_order);
        assert_eq!(f.ack, 4000);
        assert!(f.dsack);
        assert_eq!(blocks(&f), [(5000, 5500), (4500, 5500)]);
    }

    /// RFC 2883 §4 examples "Reporting a single duplicate subsegment" and "Two non-contiguous
    /// duplicate subsegments covered by the cumulative acknowledgement".
    #[test]
    fn test_rfc2883_duplicate_subsegments() {
        let mut r = rx(cfg(500), 500);
        seg(&mut r, 0, 500, 500);
        let (_, f) = seg(&mut r, 0, 2000, 500);
        assert_eq!((f.ack, blocks(&f)), (1000, vec![(2000, 2500)]));
        let (_, f) = seg(&mut r, 0, 1000, 500);
        assert_eq!((f.ack, blocks(&f)), (1500, vec![(2000, 2500)]));
        let (o, f) = seg(&mut r, 0, 1000, 1000);
        assert!(!o.duplicate && o.ack_now);
        assert_eq!(o.new_bytes, 500);
        assert_eq!(f.ack, 2500);
        assert!(f.dsack);
        assert_eq!(blocks(&f), [(1000, 1500)]);

        let mut r = rx(cfg(500), 500);
        seg(&mut r, 0, 500, 500);
        let (_, f) = seg(&mut r, 0, 3000, 500);
        assert_eq!((f.ack, blocks(&f)), (1000, vec![(3000, 3500)]));
        let (_, f) = seg(&mut r, 0, 1000, 500);
        assert_eq!((f.ack, blocks(&f)), (1500, vec![(3000, 3500)]));
        let (_, f) = seg(&mut r, 0, 2000, 500);
        assert_eq!(
            (f.ack, blocks(&f)),
            (1500, vec![(2000, 2500), (3000, 3500)])
        );
        let (o, f) = seg(&mut r, 0, 1000, 1500);
        assert_eq!(o.new_bytes, 500);
        assert_eq!(f.ack, 2500);
        assert!(f.dsack);
        assert_eq!(blocks(&f), [(1000, 1500), (3000, 3500)]);
    }

    #[test]
    fn test_dsack_second_block_is_the_containing_block() {
        // RFC 2883 §4: the block containing the duplicate follows the D-SACK block even when it
        // is neither the most recent nor the lowest held block.
        let mut c = cfg(100);
        c.max_sack_blocks = 3;
        let mut r = rx(c, 0);
        for s in [100u32, 300, 500, 700, 900] {
            seg(&mut r, 0, s, 100);
        }
        let (o, f) = seg(&mut r, 0, 500, 100);
        assert!(o.duplicate);
        assert!(f.dsack);
        assert_eq!(blocks(&f), [(500, 600), (500, 600), (900, 1000)]);
        // Afterwards the ordinary recency order applies again.
        assert_eq!(
            blocks(&r.ack_fields()),
            [(900, 1000), (700, 800), (500, 600)]
        );
    }

    #[test]
    fn test_dsack_disabled_reports_no_duplicate_block() {
        let mut c = cfg(500);
        c.dsack = false;
        let mut r = rx(c, 0);
        seg(&mut r, 0, 0, 500);
        let (o, f) = seg(&mut r, 0, 0, 500);
        assert!(o.duplicate && o.ack_now);
        assert!(!f.dsack && f.n_sack == 0);
        assert_eq!(r.stats().dsacks_sent, 0);
    }

    #[test]
    fn test_window_right_edge_never_shrinks_with_ooo_data() {
        let mut c = cfg(1000);
        c.rcvbuf = 10_000;
        c.delayed_ack = false;
        let mut r = rx(c, 0);
        // SYN window: the whole buffer (it fits in 16 bits unscaled).
        assert_eq!(r.syn_window(), 10_000);
        // Segment 0 is lost; 1..9 arrive and are held out of order.
        for k in 1..10u32 {
            let (_, f) = seg(&mut r, 0, 1000 * k, 1000);
            assert_eq!(f.ack, 0);
            assert_eq!(
                f.ack + f.window,
                10_000,
                "right edge kept after segment {k}"
            );
        }
        assert_eq!(r.ooo_bytes(), 9000);
        let (o, f) = seg(&mut r, 0, 0, 1000);
        assert_eq!(o.delivered, 10_000);
        assert_eq!((f.ack, f.window), (10_000, 10_000));
        assert_eq!(r.stats().max_ooo_bytes, 9000);
    }

    #[test]
    fn test_window_scaled_edge_rounded_up_never_shrinks() {
        // Shift 4 (granularity 16), a slow application and odd segment sizes, so the free space
        // is rarely a multiple of 16: the advertised right edge must still never move left, and
        // a sender that respects it is never cut off.
        let mut c = cfg(1000);
        c.rcvbuf = 20_000;
        c.wscale = 4;
        c.delayed_ack = false;
        c.app_read_bps = Some(8_000_000); // 1 byte per µs
        let irs = u32::MAX - 5000;
        let mut r = rx(c, irs);
        let base = Seq(irs);
        let mut edge = u64::from(r.syn_window());
        let mut off = 0u64;
        let mut now = 0u64;
        let mut sent = 0;
        for k in 0..3000u64 {
            now += 300_000; // 300 µs: the application reads 300 bytes per step
            let want = 333 + (k * 37) % 700;
            let len = want.min(edge - off);
            if len == 0 {
                if r.on_timer(now) {
                    let f = r.ack_fields();
                    let e = Seq(f.ack).unwrap(base, off) + (u64::from(f.window) << 4);
                    assert!(e >= edge, "window update moved the edge left");
                    edge = e;
                    r.on_ack_sent(now);
                }
                continue;
            }
            let (o, f) = seg(&mut r, now, Seq::from_offset(base, off).get(), len as u32);
            assert!(
                !o.beyond_window,
                "sender within the advertised edge was cut at {k}"
            );
            assert_eq!(u64::from(o.delivered), len);
            off += len;
            sent += 1;
            let e = Seq(f.ack).unwrap(base, off) + (u64::from(f.window) << 4);
            assert!(e >= edge, "edge {e} < {edge} at {k}");
            assert!(e - off <= 20_000 + 15, "window beyond buffer + rounding");
            edge = e;
        }
        // The application (1 byte/µs for 0.9 s) is the bottleneck and never starves: window
        // updates reopen the window long before the buffer drains.
        let read = r.stats().bytes_read;
        assert!(off - read <= 20_000 + 15, "unread bytes exceed the buffer");
        assert!(
            read >= 899_000,
            "application starved: read {read} of 900000, sent {sent}"
        );
        assert!(r.stats().window_updates > 0);
    }

    #[test]
    fn test_sws_small_window_increase_withheld() {
        // Slow application that never reads: the window closes; after a small read the edge
        // does not move until min(rcvbuf/2, MSS) is free (RFC 1122 §4.2.3.3).
        let mut c = cfg(1000);
        c.rcvbuf = 4000;
        c.delayed_ack = false;
        c.app_read_bps = Some(8_000_000); // 1 byte per µs
        let mut r = rx(c, 0);
        for k in 0..4 {
            seg(&mut r, 0, 1000 * k, 1000);
        }
        assert_eq!(r.ack_fields().window, 0);
        // 0.5 ms later 500 bytes were read: less than the SWS threshold of 1000.
        let (o, f) = seg(&mut r, MS / 2, 4000, 1);
        assert!(o.beyond_window && o.ack_now);
        assert_eq!((f.ack, f.window), (4000, 0));
        // 1.2 ms: 1200 bytes free ≥ 1000, the edge moves.
        let (_, f) = seg(&mut r, 1_200_000, 4000, 1);
        assert_eq!((f.ack, f.window), (4000, 1200));
    }

    /// A receiver choosing its window as Linux does (`rule`), MSS 1448, unscaled 64-KB buffer.
    fn linux_rx(rule: RcvWndRule, unscaled_max: u32) -> RecvCore {
        let mut c = cfg(1448);
        c.rcvbuf = 65_535;
        c.delayed_ack = false;
        c.wnd_rule = rule;
        c.unscaled_max = unscaled_max;
        rx(c, 0)
    }

    #[test]
    fn test_linux_unscaled_window_is_whole_segments() {
        // Linux 2.4/2.6 __tcp_select_window without window scaling: the free space (65,535 B)
        // rounded down to whole receive-MSS segments, 45 · 1448 = 65,160 B; "free" offers it all.
        for (rule, want) in [
            (RcvWndRule::Linux24, 65_160),
            (RcvWndRule::Linux26, 65_160),
            (RcvWndRule::Free, 65_535),
        ] {
            let mut r = linux_rx(rule, 0xFFFF);
            for k in 0..30u32 {
                let (_, f) = seg(&mut r, 0, 1448 * k, 1448);
                assert_eq!(f.window, want, "{rule:?} segment {k}");
                assert_eq!(f.edge, u64::from(1448 * (k + 1)) + u64::from(want));
            }
        }
        // 1460-B segments (no timestamps): 44 · 1460 = 64,240 B.
        let mut c = cfg(1460);
        c.rcvbuf = 65_535;
        c.wnd_rule = RcvWndRule::Linux26;
        let mut r = rx(c, 0);
        let (_, f) = seg(&mut r, 0, 0, 1460);
        assert_eq!(f.window, 64_240);
    }

    #[test]
    fn test_linux_2_6_16_caps_unscaled_window_at_32767() {
        // Linux 2.6.11-2.6.17 tcp_select_window: min(new_win, MAX_TCP_WINDOW) whenever the
        // window is not scaled, after the rounding (so 32,767, not a multiple of the MSS); the
        // SYN-ACK's window too (tcp_select_initial_window).
        let mut r = linux_rx(RcvWndRule::Linux26, 32_767);
        assert_eq!(r.syn_window(), 32_767);
        for k in 0..10u32 {
            let (_, f) = seg(&mut r, 0, 1448 * k, 1448);
            assert_eq!(f.window, 32_767, "segment {k}");
        }
        // Linux still counts the window it chose (65,160 B) as offered: out-of-order data that
        // leaves less free space than the cap does not pull the window below it.
        let (o, f) = seg(&mut r, 0, 1448 * 20, 1448 * 10);
        assert!(o.out_of_order);
        assert_eq!(f.window, 32_767);
    }

    #[test]
    fn test_linux_keeps_the_last_window_within_one_mss_of_the_free_space() {
        // __tcp_select_window: the last window (rcv_wnd) stays while it is no more than the free
        // space and more than the free space less one MSS; otherwise whole MSS again.
        let mut c = cfg(1000);
        c.rcvbuf = 65_535;
        c.delayed_ack = false;
        c.wnd_rule = RcvWndRule::Linux26;
        let mut r = rx(c.clone(), 0);
        // A full segment grows the clamp (rcv_ssthresh) by two segments, to 40,000 B; the
        // 999-B segments after it grow nothing (tcp_grow_window needs a full segment).
        r.set_initial_clamp(38_000);
        let (_, f) = seg(&mut r, 0, 0, 1000);
        assert_eq!(f.window, 40_000);
        r.clamp = 40_900; // rcv_ssthresh grew by less than an MSS: the window stays
        let (_, f) = seg(&mut r, 0, 1000, 999);
        assert_eq!(f.window, 40_000);
        r.clamp = 41_000; // by a whole MSS: rounded again
        let (_, f) = seg(&mut r, 0, 1999, 999);
        assert_eq!(f.window, 41_000);
        // "free" follows the free space (less its SWS threshold) instead.
        c.wnd_rule = RcvWndRule::Free;
        let mut r = rx(c, 0);
        r.set_initial_clamp(38_000);
        seg(&mut r, 0, 0, 1000);
        r.clamp = 40_900;
        let (_, f) = seg(&mut r, 0, 1000, 999);
        assert_eq!(f.window, 40_900);
    }

    #[test]
    fn test_linux_scaled_window_rounding() {
        // With window scaling (shift 7, 128-B units) and a 1,000,000-B buffer: 2.6 rounds the
        // free space up to the granularity (1,000,064 B, field 7813), 2.4 down to whole MSS
        // (690 · 1448 = 999,120 B) and then shifts (field 7805), "free" shifts (field 7812).
        for (rule, want) in [
            (RcvWndRule::Linux26, 7813),
            (RcvWndRule::Linux24, 7805),
            (RcvWndRule::Free, 7812),
        ] {
            let mut c = cfg(1448);
            c.rcvbuf = 1_000_000;
            c.wscale = 7;
            c.delayed_ack = false;
            c.wnd_rule = rule;
            let mut r = rx(c, 0);
            for k in 0..4u32 {
                let (_, f) = seg(&mut r, 0, 1448 * k, 1448);
                assert_eq!(f.window, want, "{rule:?} segment {k}");
            }
        }
    }

    #[test]
    fn test_linux_small_free_space_is_a_zero_window_then_whole_segments() {
        // As test_sws_small_window_increase_withheld with Linux's rule: below half the buffer
        // and below one MSS the window is 0; 1200 B free gives one whole segment (1000 B).
        let mut c = cfg(1000);
        c.rcvbuf = 4000;
        c.delayed_ack = false;
        c.app_read_bps = Some(8_000_000); // 1 byte per µs
        c.wnd_rule = RcvWndRule::Linux26;
        let mut r = rx(c, 0);
        for k in 0..4 {
            seg(&mut r, 0, 1000 * k, 1000);
        }
        assert_eq!(r.ack_fields().window, 0);
        let (_, f) = seg(&mut r, MS / 2, 4000, 1);
        assert_eq!((f.ack, f.window), (4000, 0));
        let (_, f) = seg(&mut r, 1_200_000, 4000, 1);
        assert_eq!((f.ack, f.window), (4000, 1000));
    }

    #[test]
    fn test_slow_app_zero_window_probe_and_window_update() {
        let mut c = cfg(1000);
        c.rcvbuf = 8000;
        c.delayed_ack = false;
        c.app_read_bps = Some(8_000_000); // 1 byte per µs
        let mut r = rx(c, 100);
        for k in 0..8u32 {
            let (o, f) = seg(&mut r, 0, 100 + 1000 * k, 1000);
            assert!(o.ack_now);
            assert_eq!(f.window, 7000 - 1000 * k, "window after segment {k}");
        }
        assert_eq!(r.stats().zero_window_acks, 1);
        assert_eq!(r.unread_bytes(), 8000);
        // A zero-window probe is not accepted, but ACKed at once with the current window.
        let (o, f) = seg(&mut r, 0, 8100, 1);
        assert!(o.beyond_window && o.ack_now && !o.duplicate);
        assert_eq!(o.new_bytes, 0);
        assert_eq!((f.ack, f.window), (8100, 0));
        assert_eq!(r.delivered_offset(), 8000);
        // The update is due when 2 MSS (≤ rcvbuf/2) have been read: 2000 µs.
        assert_eq!(r.poll_at(), Some(2 * MS));
        assert!(!r.on_timer(2 * MS - 1));
        assert!(r.on_timer(2 * MS));
        let f = r.ack_fields();
        assert_eq!((f.ack, f.window), (8100, 2000));
        r.on_ack_sent(2 * MS);
        assert_eq!(r.stats().window_updates, 1);
        // Next update once the window can double: 4000 free, i.e. 2000 more bytes read.
        assert_eq!(r.poll_at(), Some(4 * MS));
        assert!(r.on_timer(4 * MS));
        assert_eq!(r.ack_fields().window, 4000);
        r.on_ack_sent(4 * MS);
        // Then the window must double again: 8000 free (everything read) at 8 ms.
        assert_eq!(r.poll_at(), Some(8 * MS));
        assert!(r.on_timer(8 * MS));
        assert_eq!(r.ack_fields().window, 8000);
        r.on_ack_sent(8 * MS);
        assert_eq!(r.unread_bytes(), 0);
        assert_eq!(r.poll_at(), None);
        assert_eq!(r.stats().bytes_read, 8000);
    }

    #[test]
    fn test_app_never_reads_window_stays_closed() {
        let mut c = cfg(1000);
        c.rcvbuf = 2000;
        c.delayed_ack = false;
        c.app_read_bps = Some(0);
        let mut r = rx(c, 0);
        seg(&mut r, 0, 0, 1000);
        seg(&mut r, 0, 1000, 1000);
        assert_eq!(r.poll_at(), None);
        assert!(!r.on_timer(1_000_000 * MS));
        assert_eq!(r.ack_fields().window, 0);
    }

    #[test]
    fn test_quickack_at_start_and_after_out_of_order() {
        let mut c = cfg(1000);
        c.quickack_segments = 4;
        let mut r = rx(c, 0);
        let mut s = 0u32;
        let mut next = |r: &mut RecvCore, skip: bool| {
            if skip {
                s += 1000;
            }
            let o = seg(r, 0, s, 1000).0;
            s += 1000;
            o.ack_now
        };
        let start: Vec<bool> = (0..7).map(|_| next(&mut r, false)).collect();
        assert_eq!(start, [true, true, true, true, false, true, false]);
        assert!(
            r.on_timer(40 * MS),
            "the pending segment is ACKed by the timer"
        );
        r.on_ack_sent(40 * MS);
        // Out-of-order segment (skips 7000..8000), then the hole is filled.
        assert!(next(&mut r, true));
        let o = seg(&mut r, 0, 7000, 1000).0;
        assert!(o.ack_now);
        assert_eq!(o.delivered, 2000);
        // Quick-ACK mode was re-entered: the fill used one of 4, three more are immediate.
        let after: Vec<bool> = (0..6).map(|_| next(&mut r, false)).collect();
        assert_eq!(after, [true, true, true, false, true, false]);
        // The caller may re-enter it (e.g. after idle > RTO).
        r.on_ack_sent(0);
        r.enter_quickack();
        assert!(next(&mut r, false));
    }

    /// `n` in-order 1000-byte segments at time 0: whether each was ACKed at once; `after` sees
    /// the receiver after each.
    fn in_order_acks(r: &mut RecvCore, n: u32, mut after: impl FnMut(&RecvCore)) -> Vec<bool> {
        (0..n)
            .map(|i| {
                let o = seg(r, 0, i * 1000, 1000).0;
                after(r);
                o.ack_now
            })
            .collect()
    }

    #[test]
    fn test_window_growth_keeps_quick_acks_and_stops_at_the_buffer() {
        // Linux tcp_grow_window: window 4 segments growing by 2 per full segment up to a
        // 9-segment buffer (the last growth is the 1-segment remainder), two quick ACKs. Every
        // growing segment is ACKed at once and leaves the quick count where it was (its low bit
        // set, then spent), so the two quick ACKs follow the growth; then every second segment.
        for growth in [true, false] {
            let mut c = cfg(1000);
            c.rcvbuf = 9000;
            c.quickack_segments = 2;
            c.quickack_on_growth = growth;
            let mut r = rx(c, 0);
            r.set_initial_clamp(4000);
            assert_eq!(r.syn_window(), 4000);
            let mut clamps = Vec::new();
            let acks = in_order_acks(&mut r, 9, |r| clamps.push(r.clamp()));
            assert_eq!(
                clamps,
                [6000, 8000, 9000, 9000, 9000, 9000, 9000, 9000, 9000]
            );
            if growth {
                assert_eq!(
                    acks,
                    [true, true, true, true, true, false, true, false, true]
                );
            } else {
                assert_eq!(
                    acks,
                    [true, true, false, true, false, true, false, true, false]
                );
            }
        }
    }

    /// A receiver of MSS 1000 with a `rcvbuf` buffer, the clamp starting at 4 segments, growth
    /// quick ACKs and no start-up quick ACKs, `truesize` per skb: the clamp and the immediate
    /// ACKs after each of `n` in-order full segments.
    fn grow_with_truesize(
        rcvbuf: u64,
        truesize: u32,
        target: u64,
        n: u32,
    ) -> (Vec<u64>, Vec<bool>) {
        let mut c = cfg(1000);
        c.rcvbuf = rcvbuf;
        c.quickack_on_growth = true;
        c.skb_truesize = truesize;
        c.grow_target = target;
        let mut r = rx(c, 0);
        r.set_initial_clamp(4000);
        let mut clamps = Vec::new();
        let acks = in_order_acks(&mut r, n, |r| clamps.push(r.clamp()));
        (clamps, acks)
    }

    #[test]
    fn test_large_truesize_stops_growth_at_half_the_buffer() {
        // Linux 2.4/2.6 __tcp_grow_window: truesize 2000 B per 1000-B segment, its window share
        // 2000 - 2000/4 = 1500 > 1000 (the slow path), halved 750 <= 1000: grow by two rcv_mss
        // while rcv_ssthresh <= tcp_full_space/2 = 10 000, so the last growth goes from 10 000
        // to 12 000 and then none; a 20 000-B buffer.
        let (clamps, acks) = grow_with_truesize(20_000, 2000, 0, 10);
        assert_eq!(
            clamps,
            [6000, 8000, 10_000, 12_000, 12_000, 12_000, 12_000, 12_000, 12_000, 12_000]
        );
        // Each growth is ACKed at once (quick |= 1); once growth stops, every second segment
        // (the fifth waits: no growth, no quick ACK).
        assert_eq!(
            acks,
            [true, true, true, true, false, true, false, true, false, true]
        );
        // The offered window follows the clamp.
        let mut c = cfg(1000);
        c.rcvbuf = 20_000;
        c.skb_truesize = 2000;
        let mut r = rx(c, 0);
        r.set_initial_clamp(4000);
        in_order_acks(&mut r, 10, |_| ());
        assert_eq!(r.ack_fields().window, 12_000);
        // Knob off (0): growth to the buffer, ACKed at once all the way (8 growing segments).
        let (clamps, acks) = grow_with_truesize(20_000, 0, 0, 10);
        assert_eq!(clamps[7..], [20_000, 20_000, 20_000]);
        assert_eq!(clamps[6], 18_000);
        assert_eq!(
            acks,
            [true, true, true, true, true, true, true, true, false, true]
        );
    }

    #[test]
    fn test_small_truesize_grows_to_the_buffer() {
        // tcp_grow_window check #2: tcp_win_from_space(truesize) <= len is the fast path, two
        // advmss per segment up to the free buffer as without the knob. 1333 - 1333/4 = 1000
        // <= 1000 is still fast; 1334 - 333 = 1001 is not (it then stops at 12 000).
        let (off, _) = grow_with_truesize(20_000, 0, 0, 10);
        let (fast, _) = grow_with_truesize(20_000, 1333, 0, 10);
        assert_eq!(fast, off);
        let (slow, _) = grow_with_truesize(20_000, 1334, 0, 10);
        assert_eq!(slow.last(), Some(&12_000));
    }

    #[test]
    fn test_truesize_halving_and_the_rmem_target() {
        // Twice the overhead halves the limit: truesize 4000 (window share 3000, halved 1500 >
        // 1000, halved again 750) grows only while rcv_ssthresh <= 40 000/4 = 10 000; truesize
        // 8000 (6000 -> 3000 -> 1500 -> 750) only while <= 40 000/8 = 5000: one growth.
        let (c4, _) = grow_with_truesize(40_000, 4000, 0, 8);
        assert_eq!(
            c4,
            [6000, 8000, 10_000, 12_000, 12_000, 12_000, 12_000, 12_000]
        );
        let (c8, a8) = grow_with_truesize(40_000, 8000, 0, 6);
        assert_eq!(c8, [6000; 6]);
        assert_eq!(a8, [true, false, true, false, true, false]);
        // Linux >= 2.6.15 halves the window of tcp_rmem[2] instead of the current buffer
        // (`grow_target`): a target of 48 000 lets truesize 2000 grow a 20 000-B buffer to its
        // end (24 000 / 2 > 20 000, check #1 stops it), one of 8000 stops at 4000 + 2000.
        let (big, _) = grow_with_truesize(20_000, 2000, 48_000, 10);
        assert_eq!(big.last(), Some(&20_000));
        let (small, _) = grow_with_truesize(20_000, 2000, 8000, 4);
        assert_eq!(small, [6000; 4]);
    }

    #[test]
    fn test_quick_ack_count_sized_by_the_window() {
        // Linux tcp_incr_quickack: the first data segment starts quick-ACK mode with
        // rcv_wnd / (2 rcv_mss) ACKs, at most TCP_MAX_QUICKACKS (16, the knob). A 4-segment
        // window gives 2; with the knob off the knob's 16.
        for (sized, quick) in [(true, 2usize), (false, 16)] {
            let mut c = cfg(1000);
            c.rcvbuf = 4000;
            c.quickack_segments = 16;
            c.quickack_window_sized = sized;
            let mut r = rx(c, 0);
            r.set_initial_clamp(4000);
            let acks = in_order_acks(&mut r, 20, |_| ());
            let immediate = acks.iter().take_while(|&&a| a).count();
            assert_eq!(immediate, quick, "sized {sized}: {acks:?}");
            // Then every second segment.
            assert!(!acks[quick] && acks[quick + 1]);
        }
        // A later entry (out-of-order data, idle) sizes by the window then advertised, and
        // never lowers a running count: a 20-segment window gives 10, a 64-segment one 16.
        for (buf, want) in [(20_000u64, 10u32), (64_000, 16)] {
            let mut c = cfg(1000);
            c.rcvbuf = buf;
            c.quickack_segments = 16;
            c.quickack_window_sized = true;
            let mut r = rx(c, 0);
            seg(&mut r, 0, 0, 1000);
            r.quick_left = 0;
            r.enter_quickack();
            assert_eq!(r.quick_left, want, "buffer {buf}");
            r.quick_left = 12;
            r.enter_quickack();
            assert_eq!(r.quick_left, want.max(12));
        }
    }

    #[test]
    fn test_out_of_order_segment_grows_the_window_with_sack_only() {
        // Linux >= 3.13 tcp_data_queue_ofo -> tcp_grow_window (SACK flows only since 5.8): a
        // segment queued beyond a hole raises the clamp by two segments as an in-order one
        // does, with its own bytes not yet charged; without SACK (or before 3.13) it does not.
        for (knob, sack, grown) in [(true, true, 8000), (true, false, 6000), (false, true, 6000)] {
            let mut c = cfg(1000);
            c.rcvbuf = 20_000;
            c.grow_window_on_ooo = knob;
            c.sack = sack;
            c.dsack = sack;
            let mut r = rx(c, 0);
            r.set_initial_clamp(4000);
            seg(&mut r, 0, 0, 1000);
            assert_eq!(r.clamp(), 6000);
            let o = seg(&mut r, 0, 2000, 1000).0;
            assert!(o.out_of_order);
            assert_eq!(r.clamp(), grown, "knob {knob} sack {sack}");
        }
        // The room is the free buffer before the new segment is charged: a 6000 B buffer, the
        // clamp at 5000 after one in-order segment; the out-of-order one finds 1000 B of room
        // (counting itself it would find none).
        let mut c = cfg(1000);
        c.rcvbuf = 6000;
        c.grow_window_on_ooo = true;
        let mut r = rx(c, 0);
        r.set_initial_clamp(3000);
        seg(&mut r, 0, 0, 1000);
        assert_eq!(r.clamp(), 5000);
        assert!(seg(&mut r, 0, 2000, 1000).0.out_of_order);
        assert_eq!(r.clamp(), 6000);
    }

    #[test]
    fn test_window_growth_counts_the_unread_data() {
        // tcp_space: the free buffer, less what the application has not read.
        let mut c = cfg(1000);
        c.rcvbuf = 10_000;
        c.app_read_bps = Some(0);
        let mut r = rx(c, 0);
        r.set_initial_clamp(2000);
        let mut s = 0u32;
        let mut clamps = Vec::new();
        for _ in 0..6 {
            seg(&mut r, 0, s, 1000);
            s += 1000;
            clamps.push(r.clamp());
        }
        // After k segments unread the space is 10 000 - 1000 k: +2000, +2000, then the 1000 of
        // room left at k = 3 (space 7000), then none.
        assert_eq!(clamps, [4000, 6000, 7000, 7000, 7000, 7000]);
    }

    #[test]
    fn test_fin_in_order_acked_immediately() {
        let mut r = rx(cfg(1000), 10);
        seg(&mut r, 0, 10, 1000);
        let o = r.on_segment(0, 1010, 500, true);
        assert!(o.ack_now && o.fin_received);
        assert_eq!(o.delivered, 500);
        assert!(r.fin_received());
        assert_eq!(r.ack_fields().ack, 1511, "ACK covers the FIN");
        r.on_ack_sent(0);
        // A retransmitted FIN is a duplicate and is ACKed again.
        let o = r.on_segment(0, 1510, 0, true);
        assert!(o.duplicate && o.ack_now && !o.fin_received);
        assert_eq!(r.ack_fields().ack, 1511);
        // Data after the FIN is not accepted.
        let o = r.on_segment(0, 1511, 100, false);
        assert!(o.ack_now && o.beyond_window);
        assert_eq!(r.delivered_offset(), 1500);
    }

    #[test]
    fn test_fin_out_of_order_consumed_when_hole_fills() {
        let mut r = rx(cfg(1000), 0);
        let o = r.on_segment(0, 2000, 1000, true);
        assert!(o.out_of_order && o.ack_now && !o.fin_received);
        assert_eq!(r.ack_fields().ack, 0);
        let o = r.on_segment(0, 0, 1000, false);
        assert!(!o.fin_received);
        assert_eq!(r.ack_fields().ack, 1000);
        let o = r.on_segment(0, 1000, 1000, false);
        assert!(o.fin_received && o.ack_now);
        assert_eq!(o.delivered, 2000);
        assert_eq!(r.ack_fields().ack, 3001);
        assert_eq!(r.ack_fields().n_sack, 0);
    }

    #[test]
    fn test_zero_length_segments_acceptability() {
        let mut r = rx(cfg(1000), 0);
        seg(&mut r, 0, 0, 2000);
        r.on_ack_sent(0);
        // Keep-alive: SEG.SEQ = RCV.NXT − 1 is not acceptable → ACK (RFC 9293 §3.10.7.4).
        let o = r.on_segment(0, 1999, 0, false);
        assert!(o.ack_now);
        let o = r.on_segment(0, 2000, 0, false);
        assert!(!o.ack_now);
        assert_eq!(
            r.stats().segments_received,
            1,
            "zero-length segments are not data"
        );
    }

    #[test]
    fn test_segment_straddling_right_edge_is_trimmed() {
        let mut c = cfg(1000);
        c.rcvbuf = 3000;
        let mut r = rx(c, 0);
        let o = r.on_segment(0, 0, 2000, false);
        assert!(!o.beyond_window);
        let o = r.on_segment(0, 2000, 2000, false);
        assert!(o.beyond_window && o.ack_now);
        assert_eq!(o.delivered, 1000);
        assert_eq!(r.delivered_offset(), 3000);
        // Out-of-order beyond the edge: not accepted at all.
        let o = r.on_segment(0, 5000, 100, false);
        assert!(o.beyond_window && !o.out_of_order && o.ack_now);
        assert_eq!(r.ooo_bytes(), 0);
        assert_eq!(r.stats().beyond_window_segments, 2);
    }

    #[test]
    fn test_linux_accepts_in_order_segment_crossing_edge_whole() {
        // Linux `tcp_data_queue` queues an in-order segment whole while the window is open;
        // the excess counts against the buffer (an application that never reads keeps it).
        let mut c = cfg(2000);
        c.rcvbuf = 3000;
        c.app_read_bps = Some(0);
        c.accept_beyond_window = true;
        let mut r = rx(c, 0);
        let o = r.on_segment(0, 0, 2000, false);
        assert!(!o.beyond_window);
        // 2000..4000 crosses the edge at 3000: all of it is taken.
        let o = r.on_segment(0, 2000, 2000, false);
        assert!(!o.beyond_window);
        assert_eq!((o.delivered, o.new_bytes), (2000, 2000));
        assert_eq!(r.delivered_offset(), 4000);
        assert_eq!(r.stats().beyond_window_segments, 0);
        // 4000 bytes wait in a 3000-byte buffer: the window is closed, not negative.
        let f = r.ack_fields();
        assert_eq!((f.ack, f.window), (4000, 0));
        r.on_ack_sent(0);
        assert_eq!(r.advertised_window(), 0);
        // At a closed window an in-order segment is dropped whole (`tcp_receive_window` 0).
        let o = r.on_segment(0, 4000, 100, false);
        assert!(o.beyond_window && o.ack_now);
        assert_eq!((o.delivered, o.new_bytes), (0, 0));
        assert_eq!(r.delivered_offset(), 4000);
    }

    #[test]
    fn test_linux_accepts_out_of_order_segment_crossing_edge_whole() {
        let mut c = cfg(1000);
        c.rcvbuf = 3000;
        c.accept_beyond_window = true;
        let mut r = rx(c, 0);
        seg(&mut r, 0, 0, 1000);
        assert_eq!(r.ack_offset() + r.advertised_window(), 3000);
        // Starts inside the window (2500 < 3000), ends beyond it: queued whole and SACKed.
        let (o, f) = seg(&mut r, 0, 2500, 1000);
        assert!(o.out_of_order && !o.beyond_window && o.ack_now);
        assert_eq!(o.new_bytes, 1000);
        assert_eq!(r.ooo_bytes(), 1000);
        assert_eq!(blocks(&f), [(2500, 3500)]);
        // Starts at the edge: dropped (`tcp_data_queue`: not before rcv_nxt + window).
        let edge = r.ack_offset() + r.advertised_window();
        let o = r.on_segment(0, edge as u32, 100, false);
        assert!(o.beyond_window && o.ack_now);
        r.on_ack_sent(0);
        assert_eq!(r.ooo_bytes(), 1000);
        // Filling the hole delivers everything up to 3500, past the old edge.
        let (o, f) = seg(&mut r, 0, 1000, 1000);
        assert_eq!(o.delivered, 1000);
        let (o, f2) = seg(&mut r, 0, 2000, 500);
        assert_eq!(o.delivered, 1500);
        assert_eq!((f.ack, f2.ack), (2000, 3500));
        assert_eq!(r.ooo_bytes(), 0);
    }

    #[test]
    fn test_trim_default_cuts_out_of_order_segment_at_edge() {
        // The same segment without `accept_beyond_window`: only the bytes below the edge.
        let mut c = cfg(1000);
        c.rcvbuf = 3000;
        let mut r = rx(c, 0);
        seg(&mut r, 0, 0, 1000);
        assert_eq!(r.ack_offset() + r.advertised_window(), 3000);
        let (o, f) = seg(&mut r, 0, 2500, 1000);
        assert!(o.out_of_order && o.beyond_window);
        assert_eq!(o.new_bytes, 500);
        assert_eq!(blocks(&f), [(2500, 3000)]);
    }

    #[test]
    fn test_isn_near_wrap_delivers_and_sacks_across_wrap() {
        let irs = u32::MAX - 2500;
        let mut r = rx(cfg(1000), irs);
        seg(&mut r, 0, irs, 1000);
        // Lost: irs+1000 .. irs+2000. Held: irs+2000.. irs+5000 crosses 2^32.
        let mut f = r.ack_fields();
        for k in 2..5u32 {
            f = seg(&mut r, 0, irs.wrapping_add(1000 * k), 1000).1;
        }
        assert_eq!(f.ack, irs.wrapping_add(1000));
        assert_eq!(
            blocks(&f),
            [(irs.wrapping_add(2000), irs.wrapping_add(5000))]
        );
        let (o, f) = seg(&mut r, 0, irs.wrapping_add(1000), 1000);
        assert_eq!(o.delivered, 4000);
        assert_eq!(f.ack, irs.wrapping_add(5000));
        assert_eq!(f.ack, 2499);
        assert_eq!(r.rcv_nxt(), Seq(2499));
        assert_eq!(r.delivered_offset(), 5000);
    }

    #[test]
    fn test_stream_beyond_4gib_wraps_twice() {
        // 1 GiB buffer, shift 14; 256 MiB segments: 20 segments move 5 GiB.
        let mut c = cfg(1 << 20);
        c.rcvbuf = 1 << 30;
        c.wscale = 14;
        c.delayed_ack = false;
        let irs = 0xFFFF_0000;
        let mut r = rx(c, irs);
        r.on_ack_sent(0);
        assert_eq!(r.ack_fields().window, 0xFFFF);
        let len = 1u32 << 28;
        let mut s = Seq(irs);
        // Send 2, 1, 4, 3, ... so every pair crosses the reassembly path too.
        for k in (0..20u32).step_by(2) {
            let o = r.on_segment(0, (s + len).get(), len, false);
            assert!(o.out_of_order, "pair {k}");
            let o = r.on_segment(0, s.get(), len, false);
            assert_eq!(o.delivered, 2 * len);
            r.on_ack_sent(0);
            s += 2 * len;
        }
        assert_eq!(r.delivered_offset(), 5 << 30);
        assert_eq!(
            r.ack_fields().ack,
            irs.wrapping_add(((5u64 << 30) % (1 << 32)) as u32)
        );
        assert_eq!(r.stats().bytes_delivered, 5 << 30);
    }

    #[test]
    fn test_many_holes_then_fill_stays_consistent() {
        // 40 000 segments, every other one lost, then the holes are filled in order.
        let mut c = cfg(100);
        c.rcvbuf = 10_000_000;
        c.wscale = 8;
        let mut r = rx(c, 12345);
        r.on_ack_sent(0);
        let n = 40_000u32;
        for k in (1..n).step_by(2) {
            r.on_segment(0, 12345 + 100 * k, 100, false);
        }
        assert_eq!(r.ooo_ranges(), (n / 2) as usize);
        let f = r.ack_fields();
        assert_eq!(f.n_sack, 4);
        assert_eq!(f.sack[0], (12345 + 100 * (n - 1), 12345 + 100 * n));
        for k in (0..n).step_by(2) {
            let o = r.on_segment(0, 12345 + 100 * k, 100, false);
            assert_eq!(o.delivered, 200);
        }
        assert_eq!(r.delivered_offset(), 100 * u64::from(n));
        assert_eq!(r.ooo_ranges(), 0);
    }

    #[test]
    fn test_config_validation() {
        let ok = cfg(1000);
        assert!(ok.validate().is_ok());
        assert!(RecvCoreConfig::default().validate().is_ok());
        let bad = [
            RecvCoreConfig {
                rcvbuf: 0,
                ..ok.clone()
            },
            RecvCoreConfig {
                mss: 0,
                ..ok.clone()
            },
            RecvCoreConfig {
                delack_segments: 0,
                ..ok.clone()
            },
            RecvCoreConfig {
                max_sack_blocks: 5,
                ..ok.clone()
            },
            RecvCoreConfig {
                wscale: 15,
                ..ok.clone()
            },
            RecvCoreConfig {
                sack: false,
                ..ok.clone()
            }, // dsack without sack
            RecvCoreConfig {
                wnd_update_segments: 0,
                ..ok.clone()
            },
            RecvCoreConfig {
                delack_timeout_ns: 0,
                ..ok.clone()
            },
            RecvCoreConfig {
                unscaled_max: 0,
                ..ok.clone()
            },
            RecvCoreConfig {
                unscaled_max: 65_536,
                ..ok.clone()
            },
        ];
        for b in bad {
            assert!(RecvCore::new(b.clone(), 0).is_err(), "{b:?}");
        }
        assert_eq!(RecvCoreConfig::wscale_for(65_535), 0);
        assert_eq!(RecvCoreConfig::wscale_for(65_536), 1);
        assert_eq!(RecvCoreConfig::wscale_for(6_291_456), 7);
        assert_eq!(RecvCoreConfig::wscale_for(u64::MAX), 14);
    }

    // ----- property tests --------------------------------------------------------------------

    /// Ground truth of which stream bytes have arrived.
    struct Truth {
        irs: u32,
        max_blocks: usize,
        got: Vec<bool>,
        nxt: u64,
    }

    impl Truth {
        fn new(irs: u32, max_blocks: u8, total: u64) -> Self {
            let max_blocks = usize::from(max_blocks);
            Truth {
                irs,
                max_blocks,
                got: vec![false; total as usize],
                nxt: 0,
            }
        }
        fn all(&self, a: u64, b: u64) -> bool {
            (a..b).all(|x| self.got[x as usize])
        }
        fn has(&self, x: u64) -> bool {
            (x as usize) < self.got.len() && self.got[x as usize]
        }
        /// Marks [a, b); returns the number of new bytes.
        fn mark(&mut self, a: u64, b: u64) -> u64 {
            let mut n = 0;
            for x in a..b {
                if !self.got[x as usize] {
                    self.got[x as usize] = true;
                    n += 1;
                }
            }
            while self.has(self.nxt) {
                self.nxt += 1;
            }
            n
        }
        /// Maximal received runs above nxt.
        fn ranges(&self) -> usize {
            let mut n = 0;
            let mut x = self.nxt;
            while (x as usize) < self.got.len() {
                if self.got[x as usize] && !self.got[x as usize - 1] {
                    n += 1;
                }
                x += 1;
            }
            n
        }
    }

    /// Checks one ACK against the ground truth *after* the segment `[a, b)` was marked.
    /// `before` tells whether a byte had arrived before this segment.
    fn check_ack(
        f: &AckFields,
        t: &Truth,
        fin_done: bool,
        seg: (u64, u64),
        before: &[bool],
        out: &SegOutcome,
    ) -> Result<(), TestCaseError> {
        let base = Seq(t.irs);
        let max_blocks = t.max_blocks;
        prop_assert_eq!(
            f.ack,
            Seq::from_offset(base, t.nxt + u64::from(fin_done)).get()
        );
        prop_assert!(usize::from(f.n_sack) <= max_blocks);
        let bl: Vec<(u64, u64)> = f
            .sack_blocks()
            .iter()
            .map(|&(a, b)| (Seq(a).unwrap(base, t.nxt), Seq(b).unwrap(base, t.nxt)))
            .collect();
        // RFC 2883 §4: a segment with already received bytes is reported in a first D-SACK
        // block, which is the first duplicate contiguous sequence of the segment.
        let first_dup = (seg.0..seg.1).find(|&x| before[x as usize]);
        prop_assert_eq!(f.dsack, first_dup.is_some());
        if let Some(d0) = first_dup {
            let d1 = (d0..seg.1).find(|&x| !before[x as usize]).unwrap_or(seg.1);
            prop_assert_eq!(bl[0], (d0, d1));
        }
        let plain = if f.dsack {
            let (a, b) = bl[0];
            // D-SACK: a duplicate part of this very segment, received before it.
            prop_assert!(
                a < b && seg.0 <= a && b <= seg.1,
                "dsack {:?} seg {:?}",
                (a, b),
                seg
            );
            prop_assert!(
                (a..b).all(|x| before[x as usize]),
                "dsack {:?} not a duplicate",
                (a, b)
            );
            &bl[1..]
        } else {
            &bl[..]
        };
        for (i, &(a, b)) in plain.iter().enumerate() {
            // RFC 2018 §3: a block is received, contiguous data above the cumulative ACK, and
            // isolated (the bytes just outside it have not been received).
            prop_assert!(t.nxt < a && a < b, "block {:?} vs ack {}", (a, b), t.nxt);
            prop_assert!(t.all(a, b), "block {:?} not fully received", (a, b));
            prop_assert!(!t.has(a - 1) && !t.has(b), "block {:?} not maximal", (a, b));
            for &(c, d) in &plain[..i] {
                prop_assert!(b <= c || d <= a, "blocks overlap");
            }
        }
        // As many distinct blocks as fit (RFC 2018 §4).
        let room = max_blocks - usize::from(f.dsack);
        prop_assert_eq!(plain.len(), room.min(t.ranges()));
        if out.out_of_order && !plain.is_empty() {
            // RFC 2018 §4: the first block contains the segment that triggered the ACK.
            prop_assert!(plain[0].0 <= seg.0 && seg.1 <= plain[0].1);
        }
        Ok(())
    }

    /// A stream cut into segments, plus re-segmented retransmissions and exact duplicates,
    /// in random order.
    /// (irs, stream length, FIN sent, max SACK blocks, segments `(start, end, fin)`).
    type Arrivals = (u32, u64, bool, u8, Vec<(u64, u64, bool)>);

    fn arb_arrivals() -> impl Strategy<Value = Arrivals> {
        (
            prop_oneof![any::<u32>(), (u32::MAX - 30_000)..=u32::MAX],
            1u64..12_000,
            1u64..1500,
            any::<bool>(),
            1u8..=4,
        )
            .prop_flat_map(|(irs, total, mss, fin, maxb)| {
                let n = total.div_ceil(mss);
                (
                    Just((irs, total, mss, fin, maxb)),
                    prop::collection::vec((0..total, 1..3 * mss), 0..24),
                    prop::collection::vec(0..n, 0..24),
                )
            })
            .prop_flat_map(|((irs, total, mss, fin, maxb), extra, dups)| {
                let mut segs: Vec<(u64, u64, bool)> = (0..total.div_ceil(mss))
                    .map(|i| {
                        let b = ((i + 1) * mss).min(total);
                        (i * mss, b, fin && b == total)
                    })
                    .collect();
                for (a, l) in extra {
                    segs.push((a, (a + l).min(total), false));
                }
                for d in dups {
                    segs.push(segs[d as usize]);
                }
                (Just((irs, total, fin, maxb)), Just(segs).prop_shuffle())
            })
            .prop_map(|((irs, total, fin, maxb), segs)| (irs, total, fin, maxb, segs))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Linux 2.x `__tcp_grow_window` (`skb_truesize`) only ever limits the growth: the clamp
        /// never passes the one without the knob, never decreases, stays within the buffer, is
        /// the same on the fast path (truesize·3/4 ≤ len), and a segment that grew nothing is
        /// never ACKed at once for it (no growth quick ACK).
        #[test]
        fn prop_truesize_only_limits_growth(
            rcvbuf in 4000u64..200_000,
            truesize in 0u32..40_000,
            target in prop_oneof![Just(0u64), 4000u64..400_000],
        ) {
            let (off, _) = grow_with_truesize(rcvbuf, 0, 0, 60);
            let (on, acks) = grow_with_truesize(rcvbuf, truesize, target, 60);
            let mut prev = 4000;
            for (i, (&a, &b)) in on.iter().zip(&off).enumerate() {
                prop_assert!(a <= b && a >= prev && a <= rcvbuf.max(4000));
                if a == prev && i > 0 {
                    // No growth: ACKed only as every second segment (none pending before).
                    prop_assert_eq!(acks[i], !acks[i - 1]);
                }
                prev = a;
            }
            if truesize - truesize / 4 <= 1000 {
                prop_assert_eq!(on, off);
            }
        }

        /// Any permutation and duplication of a stream's segments delivers every byte exactly
        /// once and in order, with correct SACK and D-SACK blocks.
        #[test]
        fn prop_any_arrival_order_delivers_exactly_once(
            (irs, total, fin, maxb, segs) in arb_arrivals(),
            ooo_uses_buffer in any::<bool>(),
            quick in 0u32..4,
        ) {
            let mut c = cfg(1000);
            c.max_sack_blocks = maxb;
            c.ooo_uses_buffer = ooo_uses_buffer;
            c.quickack_segments = quick;
            c.rcvbuf = 1 << 16; // the whole stream fits in the SYN window
            let mut r = rx(c, irs);
            let mut t = Truth::new(irs, maxb, total);
            let mut delivered = 0u64;
            let mut fin_seen = false;
            let mut now = 0;
            for &(a, b, f) in &segs {
                now += 1000;
                let seq = Seq::from_offset(Seq(irs), a).get();
                let fin_before = r.fin_received();
                let out = r.on_segment(now, seq, (b - a) as u32, f);
                let before = t.got.clone();
                let old_nxt = t.nxt;
                let new = t.mark(a, b);
                fin_seen |= f;
                let fin_now = fin_seen && t.nxt == total;
                prop_assert_eq!(u64::from(out.new_bytes), new);
                prop_assert_eq!(u64::from(out.delivered), t.nxt - old_nxt);
                prop_assert_eq!(out.out_of_order, new > 0 && a > old_nxt);
                prop_assert_eq!(out.fin_received, fin_now && !fin_before);
                prop_assert!(!out.beyond_window);
                if new == 0 && !out.fin_received {
                    prop_assert!(out.duplicate && out.ack_now);
                }
                if out.out_of_order || new < b - a {
                    prop_assert!(out.ack_now);
                }
                delivered += u64::from(out.delivered);
                prop_assert_eq!(r.delivered_offset(), t.nxt);
                let fields = r.ack_fields();
                check_ack(&fields, &t, r.fin_received(), (a, b), &before, &out)?;
                if out.ack_now || now % 3000 == 1000 {
                    r.on_ack_sent(now);
                } else if let Some(p) = r.poll_at() {
                    if r.on_timer(p.max(now)) {
                        r.on_ack_sent(p.max(now));
                    }
                }
            }
            prop_assert_eq!(delivered, total);
            prop_assert_eq!(r.stats().bytes_delivered, total);
            prop_assert_eq!(r.ooo_bytes(), 0);
            prop_assert_eq!(r.ooo_ranges(), 0);
            prop_assert_eq!(r.fin_received(), fin);
        }

        /// A window smaller than the stream: a sender that keeps (re)sending everything up to
        /// a little beyond the advertised edge, dropping some segments, finishes with every byte
        /// delivered once, nothing accepted beyond the advertised edge, and an edge that never
        /// moves left.
        #[test]
        fn prop_small_window_sender_loop(
            irs in prop_oneof![any::<u32>(), (u32::MAX - 30_000)..=u32::MAX],
            total in 1u64..30_000,
            mss in 100u64..1500,
            rcvbuf in 500u64..8000,
            wscale in 0u8..4,
            ooo_uses_buffer in any::<bool>(),
            drops in prop::collection::vec(any::<bool>(), 1..32),
            shuffle_seed in any::<u64>(),
        ) {
            let mut c = cfg(mss as u32);
            c.rcvbuf = rcvbuf;
            c.wscale = wscale;
            c.ooo_uses_buffer = ooo_uses_buffer;
            let mut r = rx(c, irs);
            let base = Seq(irs);
            let mut t = Truth::new(irs, 4, total);
            // The edge the sender knows (SYN window until the first ACK).
            let mut edge = u64::from(r.syn_window());
            let mut now = 0u64;
            let mut rng = shuffle_seed | 1;
            let mut round = 0usize;
            while t.nxt < total {
                round += 1;
                prop_assert!(round < 20_000, "no progress");
                let mut batch: Vec<u64> = Vec::new();
                let mut x = t.nxt;
                while x < total && x < edge + mss {
                    batch.push(x);
                    x += mss;
                }
                // xorshift shuffle of the batch (reordering).
                for i in (1..batch.len()).rev() {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    batch.swap(i, (rng % (i as u64 + 1)) as usize);
                }
                for (i, &a) in batch.iter().enumerate() {
                    if round < 50 && drops[(i + round) % drops.len()] {
                        continue; // lost
                    }
                    let b = (a + mss).min(total);
                    now += 1000;
                    let promised = r.advertised_window() + t.nxt;
                    let out = r.on_segment(now, Seq::from_offset(base, a).get(), (b - a) as u32, false);
                    let old_nxt = t.nxt;
                    let lim = b.min(promised.max(t.nxt));
                    let new = if a < lim { t.mark(a, lim) } else { 0 };
                    prop_assert_eq!(u64::from(out.new_bytes), new);
                    prop_assert_eq!(out.beyond_window, b > promised);
                    prop_assert_eq!(u64::from(out.delivered), t.nxt - old_nxt);
                    if out.ack_now {
                        let f = r.ack_fields();
                        let e = Seq(f.ack).unwrap(base, t.nxt) + (u64::from(f.window) << wscale);
                        prop_assert!(e >= edge, "edge moved left: {} < {}", e, edge);
                        edge = e;
                        r.on_ack_sent(now);
                    }
                }
                // End of round: the delayed ACK (if any) fires.
                now += 50 * MS;
                if r.on_timer(now) || round % 2 == 1 {
                    let f = r.ack_fields();
                    let e = Seq(f.ack).unwrap(base, t.nxt) + (u64::from(f.window) << wscale);
                    prop_assert!(e >= edge, "edge moved left: {} < {}", e, edge);
                    edge = e;
                    r.on_ack_sent(now);
                }
            }
            prop_assert_eq!(r.delivered_offset(), total);
            prop_assert_eq!(r.stats().bytes_delivered, total);
            prop_assert_eq!(r.ooo_bytes(), 0);
        }
    }
}
