//! Every TCP knob that differs between operating systems (issue: "OS personalities are data").
//!
//! One declaration per knob gives the struct field, its default, its documentation and its schema
//! entry (exported to Python through `tcplab._core.tcp_knobs()`), so the knob list lives in one place.
//! Defaults are the IETF recommendations (a "generic RFC stack"); OS personalities override them.

pub use super::receiver::autotune::RcvRttCfg;
pub use super::receiver::recv_core::RcvWndRule;
pub use super::rtt::XmitTimerRule;
pub use super::sender::ack::RttSamplingCfg;
pub use super::sender::cwnd_use::CwndLimitedCfg;
pub use super::sender::pacing::PacingQuantumCfg;
pub use super::sender::tso::TsoModelCfg;
pub use super::sender::undo::{FrtoResponseCfg, FrtoVariantCfg};
use serde::{Deserialize, Serialize};

/// Initial window rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InitialWindow {
    /// A fixed number of segments.
    Segments(u32),
    /// A named rule.
    Rule(IwRule),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IwRule {
    /// IW = min(4·SMSS, max(2·SMSS, 4380 B)) (RFC 3390 §1; RFC 5681 §3.1).
    Rfc3390,
    /// IW = min(10·MSS, max(2·MSS, 14600 B)) (RFC 6928 §2).
    Rfc6928,
}

impl InitialWindow {
    /// Initial window in bytes for sender maximum segment size `smss`.
    pub fn bytes(self, smss: u32) -> u64 {
        let smss = smss as u64;
        match self {
            InitialWindow::Segments(n) => n.max(1) as u64 * smss,
            InitialWindow::Rule(IwRule::Rfc3390) => (4 * smss).min((2 * smss).max(4380)),
            InitialWindow::Rule(IwRule::Rfc6928) => (10 * smss).min((2 * smss).max(14600)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwndUnitCfg {
    Packets,
    Bytes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrowthCreditCfg {
    /// Every segment the cumulative ACK covers (RFC 3465 byte counting; Linux before 4.9).
    Acked,
    /// Segments newly delivered: not counted again when SACKed earlier (Linux ≥ 4.9).
    Delivered,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryCfg {
    /// SACK-based loss recovery, RFC 6675: cwnd = ssthresh on entry, send while pipe < cwnd
    /// (falls back to knob `recovery_nosack` when SACK is not negotiated).
    Sack,
    /// NewReno fast recovery, RFC 6582.
    Newreno,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) with RFC 6675 loss detection (Linux ≥ 3.2).
    Prr,
    /// Linux 2.4–3.1: FACK loss detection and rate-halving (cwnd −1 every second ACK towards
    /// ssthresh, clamped to in_flight + 1; `tcp_cwnd_down`), stacks-and-ccas.md A.1.
    Ratehalving,
    /// OpenBSD's SACK recovery (the PSC/Mathis SACK code, TCP_SACK without TCP_FACK): Reno's
    /// inflated window (ssthresh + 3·SMSS, +SMSS per further duplicate ACK) over everything
    /// outstanding (snd_nxt − snd_una), one retransmission of a SACK hole per ACK whatever the
    /// window, each taking back one SMSS; partial ACKs deflate (`tcp_sack_partialack`); sources
    /// at [`crate::tcp::recovery::Mode::SackInflate`].
    #[serde(rename = "sack-inflate")]
    SackInflate,
    /// FreeBSD 5.3's SACK recovery (tcp_sack.c, new in 5.3): the third duplicate ACK sets
    /// snd_cwnd to one segment; further duplicate ACKs add one while the pipe is below
    /// ssthresh; every hole below the highest SACK may be resent within snd_cwnd less the
    /// bytes resent, new data within snd_cwnd less everything sent since the entry; partial
    /// ACKs set snd_cwnd to what was sent plus one or two segments (`tcp_sack_partialack`);
    /// sources at [`crate::tcp::recovery::Mode::FreebsdSack`].
    #[serde(rename = "freebsd-sack")]
    FreebsdSack,
}

/// FreeBSD's SACK recovery rules (knob `freebsd_sack_rules`, with `recovery = "freebsd-sack"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreebsdSackRulesCfg {
    /// The 2005 rules (tcp_sack.c with TAILQ holes and `tcp_sacked_bytes`): one segment on
    /// entry, +1 per duplicate ACK only while the pipe is below ssthresh, a partial ACK's
    /// window of what was sent since the entry plus one or two segments.
    #[serde(rename = "pipe")]
    Pipe,
    /// RELENG_5 of November 2004 (tcp_input.c rev. 1.252.2.2, tcp_sack.c rev. 1.3.2.1, as the
    /// Network Simulation Cradle ships them for FreeBSD 5.3): three segments on entry, then
    /// ssthresh + 3 segments; +1 per duplicate ACK; a partial ACK sends within what was sent
    /// since the entry plus one segment, then deflates as NewReno (32-bit `u_long`). Sources
    /// at `crate::tcp::recovery::Mode::FreebsdSack`.
    #[serde(rename = "inflate")]
    Inflate,
}

/// Loss recovery when SACK is not negotiated (knob `recovery_nosack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RecoveryNosackCfg {
    /// NewReno fast recovery, RFC 6582 (every SACK-based mode's fallback).
    #[serde(rename = "newreno")]
    Newreno,
    /// Linux ≥ 3.2: PRR (RFC 6937) with each duplicate ACK counted as one delivered segment
    /// (`tcp_add_reno_sack`, bounded by `tcp_limit_reno_sacked`) and a partial ACK marking the
    /// next hole lost (`tcp_newreno_mark_lost`); net/ipv4/tcp_input.c, read for the facts.
    #[serde(rename = "prr-reno")]
    PrrReno,
}

/// What a duplicate ACK lets out in the loss state after a timeout on a connection without SACK
/// (knob `loss_dupack_credit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossDupackCfg {
    /// Each duplicate ACK counts as one segment that left the network and frees one segment of
    /// the window, bounded by the segments sent since the timeout (Linux `tcp_process_loss` →
    /// `tcp_add_reno_sack`, `tcp_limit_reno_sacked`; source at `sender/send.rs`
    /// `SendState::pipe`).
    #[serde(rename = "per-dupack")]
    PerDupack,
    /// Duplicate ACKs free nothing (OpenBSD 3.5: no RFC 3042, and the third below snd_last
    /// resets the count; FreeBSD 5.2.1: `tcp_do_rfc3042` off by default, and NewReno's
    /// snd_recover test resets the count at the third; sources at `sender/send.rs`
    /// `left_by_dupacks`).
    #[serde(rename = "none")]
    None,
    /// FreeBSD 5.3's RFC 3042 in that state: on the first and second duplicate ACK of each run
    /// of three (the third resets the count), `tcp_output` runs with snd_cwnd = (snd_nxt −
    /// snd_una) + (t_dupacks − snd_limited)·t_maxseg — one segment from snd_nxt on the first,
    /// two on the second unless the first sent new data; the cwnd itself is left alone (sources
    /// at `sender/send.rs` `loss_limited_transmit_window`).
    #[serde(rename = "rfc3042-flight")]
    Rfc3042Flight,
    /// XNU's RFC 3042 in that state: on the first and second duplicate ACK of each run, when
    /// the send buffer holds data beyond snd_max, `tcp_output` runs with snd_cwnd raised by
    /// t_dupacks·t_maxseg — one segment from snd_nxt on each (sources at `sender/send.rs`
    /// `loss_limited_transmit_window`).
    #[serde(rename = "rfc3042-cwnd")]
    Rfc3042Cwnd,
}

/// Schema entry of one knob.
#[derive(Clone, Debug, Serialize)]
pub struct KnobInfo {
    pub name: &'static str,
    /// "duration" (ns), "bytes", "rate" (bit/s), "bool", "int", "float", "choice", "iw".
    pub kind: &'static str,
    pub optional: bool,
    pub choices: &'static [&'static str],
    pub default: serde_json::Value,
    pub doc: &'static str,
    /// The smallest and largest value the field's integer type holds (the knob's integer or
    /// the segments of "iw"); null for other types. The scenario layer checks them, so a value
    /// that parses but does not fit is a scenario error, not a config type error.
    pub min: Option<i64>,
    pub max: Option<u64>,
}

/// The integer range a knob's field type can hold (see [`KnobInfo::max`]).
pub trait KnobRange {
    const RANGE: Option<(i64, u64)> = None;
}
impl KnobRange for u32 {
    const RANGE: Option<(i64, u64)> = Some((0, u32::MAX as u64));
}
impl KnobRange for u64 {
    const RANGE: Option<(i64, u64)> = Some((0, u64::MAX));
}
impl<T: KnobRange> KnobRange for Option<T> {
    const RANGE: Option<(i64, u64)> = T::RANGE;
}
impl KnobRange for InitialWindow {
    const RANGE: Option<(i64, u64)> = u32::RANGE;
}
impl KnobRange for bool {}
impl KnobRange for f64 {}
impl KnobRange for CwndUnitCfg {}
impl KnobRange for GrowthCreditCfg {}
impl KnobRange for RecoveryCfg {}
impl KnobRange for RecoveryNosackCfg {}
impl KnobRange for FreebsdSackRulesCfg {}
impl KnobRange for LossDupackCfg {}
impl KnobRange for RcvRttCfg {}
impl KnobRange for RcvWndRule {}
impl KnobRange for PacingQuantumCfg {}
impl KnobRange for TsoModelCfg {}
impl KnobRange for CwndLimitedCfg {}
impl KnobRange for FrtoVariantCfg {}
impl KnobRange for FrtoResponseCfg {}
impl KnobRange for RttSamplingCfg {}
impl KnobRange for XmitTimerRule {}

macro_rules! or_empty {
    () => {
        &[]
    };
    ($e:expr) => {
        $e
    };
}

macro_rules! knobs {
    ( $( $(#[doc = $doc:literal])+ $name:ident : $ty:ty = $default:expr ;
         kind $kind:literal $(, optional $opt:literal)? $(, choices $choices:expr)? ; )* ) => {
        /// TCP knobs of one end host (see each field). Deserialized with defaults for omitted fields.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct TcpConfig {
            $( $(#[doc = $doc])+ pub $name: $ty, )*
        }

        impl Default for TcpConfig {
            fn default() -> Self {
                TcpConfig { $( $name: $default, )* }
            }
        }

        impl TcpConfig {
            /// Every knob with its kind, default and documentation.
            pub fn schema() -> Vec<KnobInfo> {
                let d = TcpConfig::default();
                vec![ $( KnobInfo {
                    name: stringify!($name),
                    kind: $kind,
                    optional: false $( || $opt )?,
                    choices: or_empty!($($choices)?),
                    default: serde_json::to_value(&d.$name).unwrap_or(serde_json::Value::Null),
                    doc: concat!($( $doc, "\n" ),+),
                    min: <$ty as KnobRange>::RANGE.map(|r| r.0),
                    max: <$ty as KnobRange>::RANGE.map(|r| r.1),
                } ),* ]
            }
        }
    };
}

knobs! {
    /// Maximum segment size advertised in the SYN, bytes; 0 = first-hop MTU − 40 (RFC 9293 §3.7.1).
    /// With timestamps each data segment carries 12 bytes less payload (RFC 7323).
    mss: u32 = 0; kind "bytes";
    /// Initial congestion window: segments, or "rfc3390" (RFC 3390/5681 §3.1) or "rfc6928" (IW10).
    initial_window: InitialWindow = InitialWindow::Rule(IwRule::Rfc3390); kind "iw";
    /// Initial slow-start threshold, bytes; null = arbitrarily high (RFC 5681 §3.1).
    initial_ssthresh: Option<u64> = None; kind "bytes", optional true;
    /// Send socket buffer (SO_SNDBUF, iperf -w): bytes the sender may have unacknowledged.
    sndbuf: u64 = 64 << 20; kind "bytes";
    /// Receive socket buffer (SO_RCVBUF, iperf -w): the largest window the receiver advertises.
    rcvbuf: u64 = 64 << 20; kind "bytes";
    /// Delay ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
    delayed_ack: bool = true; kind "bool";
    /// With delayed ACKs, ACK at least every Nth full-sized segment (RFC 5681 §4.2: 2).
    delack_segments: u32 = 2; kind "int";
    /// Delayed-ACK timer (RFC 5681 §4.2: < 500 ms; 200 ms is the common value).
    delack_timeout: u64 = 200_000_000; kind "duration";
    /// Receiver: XNU's stretch ACKs (macOS, `tcp_delack_enabled` = 3): once the sender is
    /// streaming, ACK every this many segments (`maxseg_unacked`, 8) instead of every
    /// `delack_segments`; 0 = off. The rules are in src/tcp/receiver/stretch.rs.
    stretch_ack_segments: u32 = 0; kind "int";
    /// Receiver, with `stretch_ack_segments`: the window in which that many segments' bytes
    /// must arrive for the sender to count as streaming (XNU `tcp_rcvunackwin`, 100 ms).
    stretch_ack_window: u64 = 100_000_000; kind "duration";
    /// Receiver, with `stretch_ack_segments`: a silence this long after the window ends stops
    /// the streaming detection (XNU `tcp_maxrcvidle`, 200 ms).
    stretch_ack_idle: u64 = 200_000_000; kind "duration";
    /// Receiver, with `stretch_ack_segments`: segments to wait after connection start and after
    /// each reassembly before ACKs are stretched (XNU `tcp_rcvsspktcnt`, 512).
    stretch_ack_wait: u32 = 512; kind "int";
    /// Receiver: an in-order data segment carrying PSH is ACKed at once, not delayed (XNU
    /// `tcp_cc_delay_ack`, every `tcp_delack_enabled` mode, "radar 3649245").
    ack_on_push: bool = false; kind "bool";
    /// Segments ACKed immediately at connection start and after out-of-order data
    /// (Linux quick-ACK mode, up to 16; 0 = off).
    quickack_segments: u32 = 0; kind "int";
    /// Receiver: out-of-order data re-enters quick-ACK mode (Linux before 4.18; 4.18 stopped it,
    /// commit a3893637e1eb, when SACK compression came).
    quickack_on_ooo: bool = true; kind "bool";
    /// Receiver: each segment that grows the offered window (`rwnd_initial_segments` /
    /// `rwnd_initial_bytes` growth) keeps at least one quick ACK pending (Linux
    /// `tcp_grow_window`: `quick |= 1`, every version from 2.4 to 6.x).
    quickack_on_growth: bool = false; kind "bool";
    /// Receiver: size each quick-ACK phase by the window, as Linux's `tcp_incr_quickack`
    /// (`rcv_wnd / (2·rcv_mss)`, 2 when 0, at most `quickack_segments`; the first phase at the
    /// first data segment). Off: `quickack_segments` ACKs every time.
    quickack_window_sized: bool = false; kind "bool";
    /// Receiver: the memory one full-sized data segment costs the host (Linux `skb->truesize`:
    /// the NIC driver's receive buffer plus `struct sk_buff`), bytes; 0 = not modelled. With
    /// it the offered window grows as in Linux 2.4/2.6 `tcp_grow_window`: a segment whose
    /// `truesize`·3/4 exceeds its length grows `rcv_ssthresh` (and sends the growth quick ACK)
    /// only while it is at most half the target window, a quarter at twice that overhead, ...
    /// (`__tcp_grow_window`; src/tcp/receiver/recv_core.rs `grow_increment`). A host property:
    /// it depends on the driver and the MTU.
    rcv_skb_truesize: u32 = 0; kind "bytes";
    /// Receiver, with `rcv_skb_truesize`: the target window `__tcp_grow_window` halves is that
    /// of `tcp_rmem[2]` (Linux ≥ 2.6.15, J. Heffner's 2005 patch), modelled as
    /// `rcvbuf_autotune_max`, or the buffer when the application set it (`window`), instead of
    /// the current buffer (`tcp_full_space`, 2.4 and 2.6 before it).
    grow_target_rmem_max: bool = false; kind "bool";
    /// Receiver with SACK: an out-of-order segment grows the offered window as an in-order one
    /// does (`rwnd_initial_segments` / `rwnd_initial_bytes` growth; Linux `tcp_data_queue_ofo`
    /// calls `tcp_grow_window` since 3.13, 4e4f1fc2268 "tcp: properly increase rcv_ssthresh for
    /// ofo packets", for SACK flows only since 5.8, 662051215c75).
    grow_window_on_ooo: bool = false; kind "bool";
    /// Receiver: a full-sized in-order segment carrying PSH that the delayed-ACK rules hold is
    /// ACKed when the application has read it and nothing else is queued (Linux 6.x:
    /// `tcp_measure_rcv_mss` marks ICSK_ACK_PUSHED, `tcp_cleanup_rbuf` ACKs on the read);
    /// with an application that reads at once, on arrival.
    ack_pushed_on_read: bool = false; kind "bool";
    /// Receiver: SACK compression, at most this many SACK-only ACKs held while out-of-order data
    /// is queued, after three sent at once per `rcv_nxt` (Linux ≥ 4.18 ip-sysctl
    /// `tcp_comp_sack_nr`, default 44); 0 = off.
    comp_sack_nr: u32 = 0; kind "int";
    /// Receiver: cap of the SACK compression timer, which is 5 % of the RTT (ip-sysctl
    /// `tcp_comp_sack_delay_ns`, default 1 ms).
    comp_sack_delay: u64 = 1_000_000; kind "duration";
    /// Lower bound of the RTO (RFC 6298 §2.4: 1 s).
    min_rto: u64 = 1_000_000_000; kind "duration";
    /// The peer is on a directly attached subnet (XNU `TF_LOCAL`: `tcp_rtlookup` sets it when
    /// the route's interface is not point-to-point and its gateway is a link-layer address, or
    /// the interface is loopback, or `in_localaddr(faddr)` — the address is on one of the
    /// host's subnets). A property of the path, not of the stack: the simulator's paths have a
    /// router between the hosts, so off by default; a scenario sets it for a LAN peer. Acts
    /// only through `min_rto_local` and `initial_window_local`.
    peer_local: bool = false; kind "bool";
    /// With `peer_local`: the lower bound of the RTO instead of `min_rto` (XNU `t_rttmin` =
    /// `tcp_TCPTV_MIN`, sysctl net.inet.tcp.rtt_min, 100 ms, for a local peer; `TCPTV_REXMTMIN`
    /// 30 ms otherwise); 0 = `min_rto`.
    min_rto_local: u64 = 0; kind "duration";
    /// With `peer_local`: the initial (and restart) window in segments instead of
    /// `initial_window` (XNU `tcp_cc_cwnd_init_or_reset`: `ss_fltsz_local`, sysctl
    /// net.inet.tcp.local_slowstart_flightsize, 8, for a local peer); 0 = `initial_window`.
    initial_window_local: u32 = 0; kind "int";
    /// The route to the peer carries cached RTT metrics when the connection opens: XNU
    /// `rmx_rtt` (RTM_RTTUNIT, µs), as a previous connection's `tcp_close` or `route change
    /// -rtt` left it; 0 = none. A property of the path (default none); acts only with
    /// `route_rtt_seed`.
    route_rtt: u64 = 0; kind "duration";
    /// With `route_rtt`: the cached RTT variance (XNU `rmx_rttvar`); 0 = none (XNU then takes
    /// the variance as SRTT itself, "+- 1 rtt").
    route_rttvar: u64 = 0; kind "duration";
    /// Start the estimator from the route's cached RTT (`route_rtt`, `route_rttvar`) as XNU's
    /// `tcp_getrt_rtt` does (src/tcp/rtt.rs `RttEstimator::seed_from_route`: `t_srtt`,
    /// `t_rttvar` converted with XNU's integer factors, the first SYN's interval `((t_srtt >>
    /// 2) + t_rttvar) >> 1` ticks, the SYN-ACK's sample smoothed in). Needs `rtt_fixed_point`.
    route_rtt_seed: bool = false; kind "bool";
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    initial_rto: u64 = 1_000_000_000; kind "duration";
    /// Upper bound of the RTO (RFC 6298 §2.5: at least 60 s).
    max_rto: u64 = 60_000_000_000; kind "duration";
    /// Clock granularity G of RTT measurement and timers (RFC 6298 §2; Linux HZ, Windows 10 ms).
    clock_granularity: u64 = 1_000_000; kind "duration";
    /// The host clock's reading at simulated time 0 within one tick of `clock_granularity`:
    /// the timestamp clock (RFC 7323 §5.4) ticks when `now + clock_phase` is a whole number of
    /// ticks. A real host's ticks fall anywhere relative to a connection (Linux's timestamp
    /// clock is CLOCK_MONOTONIC in whole milliseconds, `tcp_clock_ms`), and which side of a
    /// tick an echo falls on decides a 1-ms receiver RTT sample (`tcp_rtt_tsopt_us`), hence
    /// where the receiver's autotuning intervals end; `tcplab compare` gives the simulator
    /// the kernel run's own phase. Default 0: ticks at whole multiples of the granularity.
    clock_phase: u64 = 0; kind "duration";
    /// Where RTT samples come from (src/tcp/sender/ack.rs `RttSamplingCfg`): "timestamps"
    /// (RFC 7323 §4: the echoed timestamp, in ticks of the timestamp clock; without timestamps
    /// the newest never-retransmitted segment acknowledged, in ticks of `clock_granularity`) or
    /// "linux" (Linux ≥ 3.15: the send times of the acknowledged or newly SACKed segments, in
    /// µs, the echo only as a fallback; the estimator gets the oldest segment's RTT, the
    /// congestion controller and the minimum RTT the newest's) or "linux-2.6" (Linux
    /// 2.6.23–3.11: the estimator as "timestamps", the congestion controller the newest
    /// cumulatively acknowledged segment's RTT, in µs for controllers that ask for send stamps
    /// (`TCP_CONG_RTT_STAMP`), else in whole ticks of `clock_granularity` and none when 0) or
    /// "bsd" (with timestamps as "timestamps"; without them one segment timed at a time, one
    /// sample per round trip, 4.4BSD `t_rtttime`/`t_rtseq`).
    rtt_sampling: RttSamplingCfg = RttSamplingCfg::Timestamps; kind "choice", choices &["timestamps", "linux", "linux-2.6", "bsd"];
    /// Apply `min_rto` to the variance term (RTO = SRTT + max(G, 4·RTTVAR, min_rto)), as Linux
    /// does, instead of to the whole RTO (RFC 6298 §2.4).
    rto_min_on_variance: bool = false; kind "bool";
    /// Added to SRTT + 4·RTTVAR before `min_rto` applies: FreeBSD `TCPT_RANGESET` adds
    /// `tcp_rexmit_slop` (200 ms) to every RTO, whose floor `tcp_rexmit_min` is 30 ms.
    rto_slop: u64 = 0; kind "duration";
    /// The RTO is held in whole ticks of this timer, truncated (BSD `t_rxtcur` in ticks:
    /// hz on FreeBSD, 500-ms slow-timer ticks on OpenBSD); 0 = exact.
    timer_tick: u64 = 0; kind "duration";
    /// Back off by multiplying the unclamped RTO by BSD's `tcp_backoff[]` (1, 2, 4 … 64) and
    /// clamp afterwards (BSD `tcp_timer_rexmt`), instead of doubling the clamped RTO (RFC 6298 §5.5).
    rto_backoff_unclamped: bool = false; kind "bool";
    /// With `rto_backoff_unclamped`: the largest `tcp_backoff[]` multiplier (a power of two);
    /// 0 = 64 (4.4BSD, FreeBSD RELENG_4, OpenBSD 3.5). FreeBSD 5.2.1-RELEASE tcp_timer.c: 512
    /// (src/tcp/rtt.rs `BsdTimer::max_multiplier`). Without it, a non-zero value caps RFC
    /// 6298's doubling at that multiple (XNU's table: 64); 0 = no cap there.
    rto_backoff_max_multiplier: u32 = 0; kind "int";
    /// Restart the retransmission timer from now whenever the segment at snd_una is
    /// retransmitted (a fast retransmit, or a lost retransmission sent again), not only on ACKs
    /// of new data (RFC 6298 §5.3). Linux `tcp_xmit_retransmit_queue` re-arms the timer when
    /// it retransmits the queue head; BSD's fast retransmit clears the timer and `tcp_output`
    /// arms it afresh (4.4BSD `tcp_input`, FreeBSD/OpenBSD); Windows starts a timer for each
    /// segment handed to IP. Off: RFC 6298 strictly — the timer keeps running from the last
    /// ACK that advanced snd_una, so on a path whose RTO barely exceeds its RTT a fast
    /// retransmit that is still in flight times out.
    rto_rearm_on_head_retransmit: bool = false; kind "bool";
    /// In the go-back-N after a timeout, resend what the byte window leaves, a fraction of a
    /// segment included, cut from the first unsent lost byte whatever the old segment
    /// boundaries (4.4BSD `tcp_output`: a `len` below `t_maxseg` goes while snd_nxt <
    /// snd_max; FreeBSD 5.x, OpenBSD 3.x; source at `sender/send.rs` `next_segment`). Off:
    /// lost segments are resent whole, each when the window has room for all of it.
    short_segment_on_rexmit: bool = false; kind "bool";
    /// Without SACK, in the loss state after a timeout, what a duplicate ACK lets out
    /// ([`LossDupackCfg`]; sources at `sender/send.rs` `left_by_dupacks` and
    /// `loss_limited_transmit_window`): "per-dupack" (Linux: each counts as one segment that
    /// left the network), "none" (OpenBSD 3.5, FreeBSD 5.2.1: nothing), "rfc3042-flight"
    /// (FreeBSD 5.3: RFC 3042 with the window set to the flight plus the duplicate ACKs) or
    /// "rfc3042-cwnd" (XNU: RFC 3042 over cwnd, when new data waits) on the first and second of
    /// each run of `dupthresh`.
    loss_dupack_credit: LossDupackCfg = LossDupackCfg::PerDupack; kind "choice", choices &["per-dupack", "none", "rfc3042-flight", "rfc3042-cwnd"];
    /// Drop the smoothed RTT on this many consecutive backoffs, so the next sample starts the
    /// estimator again (BSD: `t_rxtshift` > `TCP_MAXRXTSHIFT`/4, i.e. 4); 0 = never.
    rtt_forget_after_backoffs: u32 = 0; kind "int";
    /// With `rtt_fixed_point` and `rtt_forget_after_backoffs`: drop the estimate as FreeBSD
    /// 5.2.1's `tcp_timer_rexmt` does (`t_rttvar += t_srtt >> 5; t_srtt = 0`), so the later
    /// timeouts back off from `max(t_rttmin, t_rttvar >> 2)` ticks (src/tcp/rtt.rs
    /// `BsdTimer::forget_into_rttvar`); off, they keep the old estimate.
    rtt_forget_into_rttvar: bool = false; kind "bool";
    /// The RTO computed from an RTT sample is at least the sample plus this many `timer_tick`s
    /// (BSD `tcp_xmit_timer`: floor `max(t_rttmin, rtt + 2)`, the sample in ticks); not applied
    /// to backed-off values; 0 = off.
    rto_floor_ticks: u32 = 0; kind "int";
    /// FreeBSD's scaled-integer RTT estimator (`tcp_xmit_timer`: SRTT × 32 and RTTVAR × 16 in
    /// `timer_tick`s, the sample taken to origin 0 with `rtt − 1`, a timestamp echo's sample
    /// one tick larger than a timed segment's) instead of RFC 6298's arithmetic in nanoseconds
    /// (src/tcp/rtt.rs `BsdTimer::fixed_point`). Needs `timer_tick`.
    rtt_fixed_point: bool = false; kind "bool";
    /// With `rtt_fixed_point`: what `tcp_xmit_timer` makes of a measurement of k whole ticks
    /// (src/tcp/rtt.rs `XmitTimerRule`): "freebsd" (FreeBSD 5.x: an echo enters as k + 1, a
    /// timed segment as k, smoothed as `rtt − 1`), "openbsd-3.5" (OpenBSD 3.5 tcp_input.c rev.
    /// 1.158.2.3: the same values, then `--rtt`, at least 0: an echo is k, a timed segment
    /// k − 1, a first sample of 0 leaves no estimate) or "xnu" (XNU: k for both, no
    /// adjustment); the floor `rto_floor_ticks` counts from that value.
    rtt_xmit_timer: XmitTimerRule = XmitTimerRule::Freebsd; kind "choice", choices &["freebsd", "openbsd-3.5", "xnu"];
    /// Add `rto_slop` only once the connection is established (XNU `TCP_ADD_REXMTSLOP`:
    /// `t_state >= TCPS_ESTABLISHED`), so the SYN's retransmission timer is re-armed without
    /// it; off, every re-armed timer has it (FreeBSD `TCPT_RANGESET`).
    rto_slop_established_only: bool = false; kind "bool";
    /// With `rtt_fixed_point` and `undo_bad_rexmt`: after a timeout found spurious, drop RTT
    /// samples until one from a segment sent after the undo (a timestamp echo at least the
    /// undo's clock reading, or a timed segment) and restart the estimate from it: SRTT =
    /// max(SRTT saved at the timeout + 2 ticks, sample), RTTVAR = max(RTTVAR saved, sample / 2)
    /// (XNU `TF_RECOMPUTE_RTT`, `tcp_rexmt_save_state`, `tcp_bad_rexmt_restore_state`; src/tcp/
    /// rtt.rs `BsdTimer::recompute_after_bad_rexmt`); off, the next sample is smoothed in.
    rtt_recompute_after_bad_rexmt: bool = false; kind "bool";
    /// Use the timestamps option (RFC 7323 §3): on, the host answers a SYN that offers it (the
    /// receiver's SYN-ACK carries it) and, with `timestamps_offer`, offers it in its own SYN;
    /// off, neither. The option is in use only when both the SYN and the SYN-ACK carry it
    /// (RFC 7323 §3.2).
    timestamps: bool = true; kind "bool";
    /// With `timestamps`: offer the option in the SYN this host sends (active open). Off, the
    /// host only answers a peer that offers it: Windows XP / Server 2003 at their default
    /// `Tcp1323Opts` (p0f's fingerprints: no timestamp in their SYN, one in their SYN-ACK to a
    /// SYN that has it), Windows 8 / Server 2012's `Timestamps = Allowed` (MSFT_NetTCPSetting).
    timestamps_offer: bool = true; kind "bool";
    /// Negotiate SACK (RFC 2018).
    sack: bool = true; kind "bool";
    /// Report duplicate segments with D-SACK (RFC 2883).
    dsack: bool = true; kind "bool";
    /// Negotiate window scaling (RFC 7323 §2).
    window_scaling: bool = true; kind "bool";
    /// With `window_scaling`: the SYN this host sends (active open) carries the option even when
    /// its receive buffer needs no shift (shift 0). Off, the SYN carries it only when the buffer
    /// exceeds 65,535 B, and the connection then never scales (RFC 7323 §2.2: in use only when
    /// both SYNs carry it): Windows XP / Server 2003 at their default settings (p0f's XP SYN
    /// fingerprints carry no window-scale option; the Windows 2000 registry reference,
    /// TcpWindowSize: scaling is used "if the value of this entry is greater than 64 KB";
    /// python/tcplab/stacks/windows-xp.toml). The answer in a SYN-ACK is not affected.
    window_scaling_offer_unscaled: bool = true; kind "bool";
    /// Windows 2000 / XP / Server 2003's default receive-window algorithm (Microsoft KB 224829,
    /// "TCP window size"): `rcvbuf` is the window of the SYN or SYN-ACK (16,384 B); once the
    /// connection is established the window is rounded up to a whole number of full segments
    /// (MSS less the timestamp option when that is in use), at least four, and at most 65,535 B
    /// without scaling. Off, `rcvbuf` is the window from the first segment on. A configured
    /// window (TcpWindowSize: a scenario's `window` or `rcvbuf`) overrides the algorithm
    /// (python/tcplab/stacks/rules.py switches this off).
    rcvbuf_round_to_mss: bool = false; kind "bool";
    /// The window field of the SYN and of the SYN-ACK this host sends (never scaled, RFC 7323
    /// §2.2), bytes: at most this, the receive buffer and 65,535 B; 0 = the receive buffer
    /// (capped at 65,535 B). The windows advertised once the connection is established are not
    /// affected. Windows Vista / 7 / Server 2008 with receive autotuning: 8,192 B with window
    /// scale 8 (p0f 3.09b p0f.fp: every 'Windows:7 or 8' SYN and SYN+ACK at window 8192; nmap
    /// nmap-os-db: the SYN-ACKs of Vista, 7 and Server 2008 fingerprints to nmap's six probes
    /// at W = 0x2000; python/tcplab/stacks/windows-7.toml). A configured window (SO_RCVBUF: a
    /// scenario's `window` or `rcvbuf`) switches it off (python/tcplab/stacks/rules.py).
    syn_window: u64 = 0; kind "bytes";
    /// Appropriate Byte Counting limit L (RFC 3465); 0 = off (count ACKs, not bytes).
    abc: u32 = 0; kind "int";
    /// Unit of the congestion window: "packets" (Linux) or "bytes" (RFC 5681, BSD, Windows).
    cwnd_unit: CwndUnitCfg = CwndUnitCfg::Bytes; kind "choice", choices &["packets", "bytes"];
    /// What an ACK credits to window growth in the packets unit with ABC: "acked" (every
    /// segment the cumulative ACK covers) or "delivered" (segments newly delivered, SACKed data
    /// counted once when SACKed: Linux `tcp_newly_delivered`, since 4.9).
    growth_credit: GrowthCreditCfg = GrowthCreditCfg::Acked; kind "choice", choices &["acked", "delivered"];
    /// When an ACK may grow cwnd although the sender did not use all of it (the receive window
    /// or the application limited it; src/tcp/sender/cwnd_use.rs): "half-used" (the last send
    /// stopped on cwnd or the flight was at least half of it; RFC 7661 spirit), "linux-2.4"
    /// (the flight filled cwnd: Linux 2.4 to 2.6.14), "linux-2.6.15" (or, with `tso`, under a
    /// third of cwnd left: 2.6.15 to 2.6.25), "linux-2.6.26" (or at most `dupthresh` segments
    /// left, the TSO room also under 64 KB: 2.6.26 to 3.15), "linux-6" (cwnd-limited within the
    /// current window of data, or in slow start while cwnd is under twice the most segments out
    /// in it: 3.16 onwards) or "bsd" (every ACK outside fast recovery: 4.4BSD lineage).
    cwnd_limited_rule: CwndLimitedCfg = CwndLimitedCfg::HalfUsed; kind "choice", choices &["half-used", "linux-2.4", "linux-2.6.15", "linux-2.6.26", "linux-6", "bsd"];
    /// Slow start while cwnd ≤ ssthresh, the ACK that finds cwnd = ssthresh adding its whole
    /// slow-start increment (4.4BSD `tcp_input.c`: `if (cw > snd_ssthresh) incr = incr*incr/cw`;
    /// Linux 2.2–4.2 `if (snd_cwnd <= snd_ssthresh) tcp_slow_start`, uncapped until 3.18).
    /// Off: slow start while cwnd < ssthresh, capped at ssthresh (RFC 5681 §3.1; Linux ≥ 4.3).
    slow_start_inclusive: bool = false; kind "bool";
    /// Bytes unit without ABC: each congestion-avoidance ACK adds the truncated `SMSS*SMSS/cwnd`
    /// and drops the remainder (4.4BSD `tcp_input.c`, `incr = incr * incr / cw`, in FreeBSD
    /// 5.x and OpenBSD 3.x). Off: the remainder is carried to the next ACK.
    ca_increment_truncated: bool = false; kind "bool";
    /// Loss recovery: "sack" (RFC 6675), "newreno" (RFC 6582), "prr" (RFC 6937),
    /// "ratehalving" (Linux 2.4–3.1 FACK + rate-halving), "sack-inflate" (OpenBSD: SACK
    /// retransmissions, one per ACK, under Reno's inflated window) or "freebsd-sack" (FreeBSD
    /// 5.3: a one-segment window on entry, grown per duplicate ACK while the pipe is below
    /// ssthresh, counting what was sent since the entry).
    recovery: RecoveryCfg = RecoveryCfg::Sack; kind "choice", choices &["sack", "newreno", "prr", "ratehalving", "sack-inflate", "freebsd-sack"];
    /// `recovery = "freebsd-sack"`: a partial ACK's window (`tcp_sack_partialack`) is capped at
    /// ssthresh, as in FreeBSD's tcp_sack.c revisions that count the pipe with
    /// `tcp_sacked_bytes`; off, as in the earlier revision and NetBSD's port of RELENG_5's
    /// rev. 1.3.2.2 (sources at `crate::tcp::recovery::Mode::FreebsdSack`).
    sack_partial_ack_cap: bool = false; kind "bool";
    /// PRR's slow-start reduction bound adds its extra segment only on ACKs that advance
    /// snd_una without new losses (draft-ietf-tcpm-prr-rfc6937bis, Linux 6.x), not on every
    /// ACK (RFC 6937 §3.1, Linux 3.2 to 5.x).
    prr_ssrb_on_advance: bool = false; kind "bool";
    /// Loss recovery without SACK: "newreno" (RFC 6582) or "prr-reno" (Linux ≥ 3.2: PRR with
    /// duplicate ACKs counted as delivered segments). A `recovery = "newreno"` sender runs
    /// NewReno either way.
    recovery_nosack: RecoveryNosackCfg = RecoveryNosackCfg::Newreno; kind "choice", choices &["newreno", "prr-reno"];
    /// RACK-TLP time-based loss detection (RFC 8985) in addition to the DupThresh rules.
    rack: bool = false; kind "bool";
    /// With `rack`: the tail loss probe (RFC 8985 §7); Linux `tcp_early_retrans` ≥ 3 (default 3).
    tlp: bool = true; kind "bool";
    /// Limited transmit (RFC 3042): a new segment on each of the first two duplicate ACKs.
    limited_transmit: bool = true; kind "bool";
    /// The new data limited transmit sent in the run of duplicate ACKs that ends in a fast
    /// retransmit is left out of the FlightSize the controller's ssthresh rule halves (RFC
    /// 5681 §3.2 step 2: "MUST NOT be counted in FlightSize"; RFC 3042 §2). Only a FlightSize
    /// basis reads it (`ssthresh_from`: "auto" in the bytes unit, "flight_size"). On by
    /// default (the RFC rule, so the `generic` stack follows it; the Windows personalities set
    /// it themselves); off where a stack's own rule counts everything sent (Solaris
    /// `tcp_snxt − tcp_suna`). Linux, the BSDs and XNU start ssthresh from cwnd, not
    /// FlightSize, so it does not reach them. Until 2026-11-29 off by default (a deviation of
    /// `generic` from the RFC, stated in the README).
    flightsize_excludes_limited_transmit: bool = true; kind "bool";
    /// The ACK that starts a fast recovery without SACK (NewReno) sends the fast
    /// retransmission only; new data waits for the next duplicate ACK. 4.4BSD `tcp_input.c`
    /// (Stevens & Wright, TCP/IP Illustrated Vol. 2, §29.4), kept by FreeBSD 5.2.1, OpenBSD
    /// 3.5 and XNU (xnu-2422 to xnu-11417; read for the facts, nothing copied; FreeBSD 5.3
    /// assumed the same, its tree not read for it): the third duplicate ACK sets
    /// snd_nxt = th_ack and snd_cwnd = t_maxseg, calls `tcp_output` (one segment, the
    /// retransmission), then sets snd_cwnd = snd_ssthresh + t_maxseg · t_dupacks and leaves
    /// (`goto drop`) without another `tcp_output`. Off: RFC 5681 §3.2 step 4 ("transmit a
    /// segment, if allowed by the new value of cwnd") on the same ACK.
    fast_rexmit_alone: bool = false; kind "bool";
    /// Keep SACK marks across a retransmission timeout and resend only un-SACKed data, unless
    /// the first unacknowledged segment is SACKed (reneging) — Linux (net/ipv4/tcp_input.c
    /// `tcp_enter_loss`). Off: forget them as RFC 2018 §8 recommends (BSD, Windows).
    rto_keeps_sack: bool = false; kind "bool";
    /// A retransmission timeout that interrupts a fast recovery or a CWR episode whose recovery
    /// point snd_una has not reached keeps that episode's ssthresh: the controller's ssthresh
    /// rule (and its loss-event hook) is not called — Linux `tcp_enter_loss`, 2.4 to 6.x
    /// (net/ipv4/tcp_input.c, read for the facts: only in Open/Disorder, when snd_una has
    /// reached `high_seq`, or in Loss before a retransmission is counted;
    /// tcplab-cc `RtoEvent::sets_ssthresh`). Off: the first timeout of a series recomputes it
    /// whatever the state (RFC 5681 §3.1 eq. 4).
    rto_keeps_recovery_ssthresh: bool = false; kind "bool";
    /// Linux 2.4–3.x cwnd moderation (`tcp_moderate_cwnd`): on a dubious ACK (duplicate,
    /// SACKing new data, or outside Open) that leaves the sender in Open or Disorder, cwnd is
    /// cut to in flight + `dupthresh` segments; after a recovery or loss episode ended without
    /// an undo the sender stays in Disorder until everything then sent is acknowledged.
    cwnd_moderation: bool = false; kind "bool";
    /// With `cwnd_moderation`: a dubious ACK that leaves the sender in Open is moderated too —
    /// Linux 2.4–2.6.38, where `tcp_try_to_open` moderated whatever state it left and
    /// `tcp_undo_cwr` ended with `tcp_moderate_cwnd`, so an undoing ACK was cut to in flight +
    /// 3. Off: only an ACK that leaves the sender in Disorder — Linux 2.6.39 to 3.x ("tcp:
    /// avoid cwnd moderation in undo", first in 2.6.39: `tcp_undo_cwr` without the call and
    /// `tcp_try_to_open` moderating only when `tcp_try_keep_open` left the state other than
    /// Open; net/ipv4/tcp_input.c of both eras, read for the facts).
    cwnd_moderation_open: bool = true; kind "bool";
    /// Without SACK, an ACK that lands exactly on the recovery point (or on the loss state's
    /// point after a timeout) leaves the sender in that state, cwnd moderated (with
    /// `cwnd_moderation`), until an ACK covers more: Linux `tcp_try_undo_recovery` ("Hold old
    /// state until something *above* high_seq is ACKed. For Reno it is MUST to prevent false
    /// fast retransmits (RFC2582)"; 2.4/2.6 net/ipv4/tcp_input.c, read for the facts). Off:
    /// the state is left at the point.
    reno_hold_at_recovery_point: bool = false; kind "bool";
    /// An ACK that advances snd_una and starts fast recovery grows cwnd first, by the
    /// congestion controller's usual rule, and the reduction then starts from the grown
    /// window: Linux 2.4/2.6 `tcp_ack` calls `tcp_cong_avoid` on a dubious ACK that acked data
    /// when `tcp_may_raise_cwnd` allows it (`ca_state` neither Recovery nor CWR, no ECE above
    /// ssthresh) and only then `tcp_fastretrans_alert`, which enters Recovery with ssthresh
    /// computed from `snd_cwnd` (net/ipv4/tcp_input.c of 2.4.27, 2.6.11 and the 2.6.2x/3.x
    /// trees, read for the facts). Off: the entry ACK grows nothing (the reduction first).
    recovery_entry_ack_grows: bool = false; kind "bool";
    /// Rate-halving (`recovery = "ratehalving"`): the ACK that enters fast recovery already
    /// runs Linux's `tcp_cwnd_down`: cwnd = min(cwnd, in flight + 1 segment) on that ACK, and
    /// the ACK counts as the first of the pair that takes a segment off (Linux 2.4.27 and 2.6
    /// `tcp_fastretrans_alert`: `snd_cwnd_cnt = 0`, then `tcp_cwnd_down` before
    /// `tcp_xmit_retransmit_queue`; read for the facts). Off: the walk and its clamp start on
    /// the next ACK.
    rate_halving_entry_cut: bool = false; kind "bool";
    /// Rate-halving: the one-segment-per-two-ACKs decrement goes on down to ssthresh/2 (Linux
    /// 2.4 and 2.6 ≤ 2.6.12 `tcp_cwnd_down`, and `tcp_reno_min_cwnd` later), not ssthresh
    /// (BIC's and CUBIC's `min_cwnd`, 2.6.13+). Off: down to ssthresh.
    rate_halving_floor_half: bool = false; kind "bool";
    /// Rate-halving: only ACKs that advance snd_una, SACK new data or carry a D-SACK count
    /// toward the decrement and clamp cwnd (Linux 2.6.23+ `tcp_cwnd_down`, `FLAG_ANY_PROGRESS
    /// | FLAG_DSACKING_ACK`). Off: every ACK in recovery does (2.4, 2.6 ≤ 2.6.22).
    rate_halving_progress_only: bool = false; kind "bool";
    /// NewReno (`recovery = "newreno"`, or without SACK) and FreeBSD's SACK recovery with
    /// `freebsd_sack_rules = "inflate"` (`tcp_sack_partialack` has the same line): a partial ACK
    /// deflates the window as FreeBSD 5.x's `tcp_newreno_partial_ack` does, `snd_cwnd −= acked − t_maxseg` in 32-bit
    /// unsigned arithmetic with no floor: more acknowledged than the window plus a segment
    /// wraps it to nearly 2^32 (the peer's window limits the sending until the recovery ends),
    /// exactly that much leaves 0, and further duplicate ACKs add t_maxseg modulo 2^32 (sources
    /// at `crate::tcp::recovery::Recovery::newreno_partial_ack_u32`). Off: RFC 6582 §3.2 step
    /// 5 (the bytes acknowledged off, one SMSS back when at least one was acknowledged, never
    /// below one SMSS).
    partial_ack_u32_deflation: bool = false; kind "bool";
    /// NewReno: the ACK that ends the fast recovery grows no window (FreeBSD 5.x `tcp_input.c`:
    /// the growth requires `!IN_FASTRECOVERY` and comes before `EXIT_FASTRECOVERY`; sources at
    /// `crate::tcp::recovery::Recovery::grows_on_exit_ack`). Off: the controller's usual
    /// growth follows the exit's window on that ACK.
    newreno_exit_no_growth: bool = false; kind "bool";
    /// `recovery = "freebsd-sack"`: which FreeBSD SACK recovery ([`FreebsdSackRulesCfg`]):
    /// "pipe" (the 2005 tcp_sack.c and tcp_input.c) or "inflate" (RELENG_5 of November 2004,
    /// the revisions three weeks after 5.3-RELEASE). Sources at
    /// `crate::tcp::recovery::Mode::FreebsdSack`.
    freebsd_sack_rules: FreebsdSackRulesCfg = FreebsdSackRulesCfg::Pipe; kind "choice", choices &["pipe", "inflate"];
    /// NewReno: the window set on entering fast recovery is ssthresh + (dupthresh − n) segments,
    /// n the segments limited transmit sent in the run of duplicate ACKs (at most 2): FreeBSD
    /// 5.x `snd_cwnd = snd_ssthresh + t_maxseg * (t_dupacks - snd_limited)` (sources at
    /// `crate::tcp::recovery::Recovery::less_limited`). Off: ssthresh + dupthresh segments
    /// (RFC 5681 §3.2 step 3).
    newreno_entry_less_limited: bool = false; kind "bool";
    /// NewReno: the window on leaving fast recovery is FreeBSD 5.x's, snd_max − th_ack + 1
    /// segment when that flight is below ssthresh, else ssthresh (one segment with nothing
    /// outstanding; sources at `crate::tcp::recovery::Recovery::exit`). Off: RFC 6582 §3.2
    /// step 6 option (1), min(ssthresh, max(FlightSize, SMSS) + SMSS).
    newreno_exit_bsd_window: bool = false; kind "bool";
    /// `recovery = "freebsd-sack"`: in the loss state after a timeout, the third duplicate ACK
    /// starts a SACK recovery (FreeBSD RELENG_5 `tcp_input.c` rev. 1.252.2.2: the SACK branch
    /// tests IN_FASTRECOVERY only, not snd_recover, which the timeout set to snd_max), the
    /// first unacknowledged segment resent again (FreeBSD's first hole, rebuilt since the
    /// timeout, starts at th_ack); sources at `crate::tcp::sender::episode::Episodes::on_ack`.
    /// Off: the loss state holds until its point is acknowledged (RFC 6675 §5.1, RFC 6582's
    /// `recover`).
    freebsd_sack_rto_recovery: bool = false; kind "bool";
    /// `recovery = "freebsd-sack"` with `freebsd_sack_rto_recovery`: the go-back-N after a
    /// timeout as FreeBSD RELENG_5 runs it with SACK (`tcp_input.c` rev. 1.252.2.2,
    /// `tcp_sack.c` rev. 1.3.2.1, `tcp_output.c` rev. 1.100.2.3): the first and second
    /// duplicate ACK release segments by the flight-based RFC 3042 rule (as
    /// `loss_dupack_credit = "rfc3042-flight"` without SACK); the recovery the third starts
    /// resends every un-SACKed segment below the highest SACK (holes rebuilt since the timeout
    /// with rxmit = start), and sends the go-back-N's rest above it as new data from snd_nxt
    /// (sack_newdata = snd_nxt). Sources at `crate::tcp::sender::episode::Episodes::on_ack`.
    /// Off: only the first unacknowledged segment is made resendable, the rest of the
    /// go-back-N goes as holes, the duplicate ACKs use the pipe.
    freebsd_sack_go_back_n: bool = false; kind "bool";
    /// With `freebsd_sack_go_back_n`: in the recovery that the go-back-N's third duplicate ACK
    /// starts, FreeBSD's snd_nxt (sack_newdata, where the go-back-N had got to) walks on from
    /// there once no hole is left to resend, `tcp_sack_adjust` skipping SACKed data only, so
    /// the holes above it go a second time, as new data, after the SACK hole list resent them
    /// (FreeBSD RELENG_5 `tcp_output.c` rev. 1.100.2.3, `tcp_sack.c` rev. 1.3.2.1; sources at
    /// `crate::tcp::sender::send::next_segment_freebsd`). The same after the persist stall
    /// (`partial_ack_zero_persist`) with SACK: snd_nxt pulled back to snd_una walks from there
    /// once the stall ends, the partial ACK's window in u_int arithmetic; a recovery that ends
    /// with it below snd_max sends from th_ack again. Off: each hole goes once, the go-back-N's
    /// rest above the highest SACK as new data, the stall marks every un-SACKed record lost.
    freebsd_sack_walk: bool = false; kind "bool";
    /// `recovery = "freebsd-sack"` in recovery: when the window left for the next SACK hole,
    /// cwin = min(snd_wnd, snd_cwnd) − sack_bytes_rxmt, is above 0 but below the hole's record,
    /// that many bytes of it go (the record split, its rest still a hole), as FreeBSD RELENG_5's
    /// `tcp_output` (rev. 1.100.2.3) sends len = min(cwin, p->end − p->rxmit) whenever len > 0;
    /// sources at `crate::tcp::sender::send::next_segment_freebsd`. Off: a hole goes whole or
    /// waits.
    freebsd_sack_partial_hole: bool = false; kind "bool";
    /// `recovery = "freebsd-sack"` with SACK, in the loss state after a timeout: the window is
    /// checked against off = snd_nxt − snd_una after `tcp_sack_adjust` (SACKed data below
    /// snd_nxt counted), OpenBSD's rule (`recovery = "sack-inflate"`), not the pipe. FreeBSD
    /// RELENG_5 `tcp_output.c` rev. 1.100.2.3 and `tcp_sack.c` rev. 1.3.2.1 `tcp_sack_adjust`
    /// (sources at `crate::tcp::sender::send::SendState::go_back_n_off`). Off: the pipe.
    go_back_n_off: bool = false; kind "bool";
    /// FreeBSD 5.x: a partial ACK that leaves the recovery's window at exactly 0 (knob
    /// `partial_ack_u32_deflation`) stalls the sender on the persist timer: the retransmission
    /// timer stopped, its backoff reset, snd_nxt pulled back to snd_una (everything not SACKed
    /// resent from there), duplicate ACKs ignored, a 1-byte probe at snd_una when the persist
    /// timer (at least 5 s) fires; the next ACK that lets a segment go ends it. Sources at
    /// `crate::tcp::sender::Sender::bsd_zero_window`. Off: the window stays 0 until the next
    /// ACK, the timer and duplicate ACKs as in any recovery.
    partial_ack_zero_persist: bool = false; kind "bool";
    /// Local congestion: when the host's transmit queue is full and the sender has a segment
    /// to send, enter CWR (reduce ssthresh and cwnd once per window), as Linux before TCP small
    /// queues (2.4–3.5) did on a qdisc drop (`tcp_enter_cwr`). Off: just wait for room.
    local_congestion_cwr: bool = false; kind "bool";
    /// TCP segmentation offload as Linux 2.6 drives it: new data leaves in frames of up to
    /// 64 KB sent back to back, and a frame is deferred while less than min(64 KB, a third of
    /// the window) is open, for less than two clock ticks (`clock_granularity`) — Linux
    /// `tcp_tso_should_defer` (src/tcp/sender/tso.rs); the sending host's queue counts a frame
    /// as one packet, as Linux's qdisc holds it as one buffer. A property of the host's NIC and
    /// driver (ethtool -K tso), so scenarios set it; off: segments leave as the window opens.
    tso: bool = false; kind "bool";
    /// Which Linux rules drive `tso` (src/tcp/sender/tso.rs): "linux-2.6" (64 KB frames,
    /// deferred while less than a third of the window is open, for under two ticks) or
    /// "linux-6" (Linux ≥ 4.17, where every TCP socket uses GSO: buffers of about 1 ms of data
    /// at the socket's pacing rate, `tcp_tso_autosize`, deferred while less than a buffer and a
    /// third of the window is open and an ACK is due within min(SRTT/2, 1 ms)).
    tso_model: TsoModelCfg = TsoModelCfg::Linux26; kind "choice", choices &["linux-2.6", "linux-6"];
    /// Most segments the outgoing device takes in one GSO buffer (Linux `sk_gso_max_segs`, set
    /// from the device's `gso_max_segs` in `sk_setup_caps`; GSO_MAX_SEGS = 65 535 unless
    /// `ip link set DEV gso_max_segs N`). It caps `tcp_tso_segs`, so the buffers of `tso_model =
    /// "linux-6"` and the pacing slots of `pacing_quantum = "linux-tso-autosize"`; with 1 every
    /// buffer is one segment, which `tcp_tso_should_defer` never holds back (its "full-sized
    /// buffer" test is one segment). The behaviour-script engine sets 1: the kernel runner's TUN
    /// device has it (python/tcplab/script/kernel.py).
    gso_max_segs: u32 = 65_535; kind "int";
    /// Undo a congestion reduction shown to be spurious: by the timestamp echoed on an ACK
    /// older than the episode's first retransmission (Eifel detection, RFC 3522) or by D-SACKs
    /// for every retransmission (RFC 3708), restore cwnd and ssthresh and stop resending —
    /// Linux since 2.4 (net/ipv4/tcp_input.c `tcp_try_undo_*`; Sarolahti & Kuznetsov 2002).
    undo: bool = false; kind "bool";
    /// F-RTO (RFC 5682, SACK-enhanced; Linux `tcp_frto`, on by default since 2.6.24): after a
    /// timeout, answer the first advancing ACK with new data, and take an ACK for data never
    /// retransmitted as proof that the timeout was spurious (undone with knob `undo`).
    frto: bool = false; kind "bool";
    /// Which F-RTO runs with knob `frto`: "rfc5682" (Linux ≥ 3.10: inside the loss state,
    /// undone with knob `undo`) or "linux-2.6" (Linux 2.6.24–3.9: the timeout reduces ssthresh
    /// but not cwnd and resends only the first segment; two advancing ACKs prove it spurious,
    /// answered as knob `frto_response` says; a duplicate ACK starts the conventional loss
    /// recovery; src/tcp/sender/undo.rs `Frto26`).
    frto_variant: FrtoVariantCfg = FrtoVariantCfg::Rfc5682; kind "choice", choices &["rfc5682", "linux-2.6"];
    /// The response to a timeout that `frto_variant = "linux-2.6"` found spurious (Linux
    /// `tcp_frto_response`, default 0): "ratehalving" (CWR, cwnd down to ssthresh over about
    /// an RTT), "conservative" (cwnd = ssthresh at once) or "undo" (the window from before).
    frto_response: FrtoResponseCfg = FrtoResponseCfg::RateHalving; kind "choice", choices &["ratehalving", "conservative", "undo"];
    /// FreeBSD "bad retransmit" recovery: an ACK that advances snd_una after the first timeout
    /// of an episode and within SRTT/2 of it cannot be for the retransmission (Allman & Paxson,
    /// SIGCOMM 1999), so the timeout was spurious: restore cwnd and ssthresh as they were
    /// before it and continue from the highest sequence sent (FreeBSD tcp_input.c
    /// `t_badrxtwin`, `snd_cwnd_prev`, `snd_ssthresh_prev`).
    undo_bad_rexmt: bool = false; kind "bool";
    /// Duplicate-ACK threshold for fast retransmit (RFC 5681 §3.2, RFC 6675 DupThresh: 3).
    dupthresh: u32 = 3; kind "int";
    /// Segments one send opportunity (an ACK, a timer: one BSD `tcp_output` call) sends at
    /// most; 0 = no limit. OpenBSD with `option TCP_SACK`: `maxburst = TCP_MAXBURST` (4, "Max #
    /// packets after leaving Fast Rxmit", netinet/tcp.h) and `if (sendalot && --maxburst) goto
    /// again` in `tcp_output` (sources at `TcpSender::try_send`).
    max_burst: u32 = 0; kind "int";
    /// Retransmission timeouts of the data at snd_una in a row (snd_una not advancing) after
    /// which the connection is aborted instead of retransmitting again; 0 = never. Windows
    /// `TcpMaxDataRetransmissions` (default 5, Windows 2000 to 7: Microsoft KB 170359, "the
    /// number of times TCP retransmits an individual data segment (non connect segment) before
    /// aborting the connection ... reset when responses resume"); Linux's `tcp_retries2` is a
    /// time budget and is not modelled.
    max_data_retransmissions: u32 = 0; kind "int";
    /// Initial sequence number; null = drawn from the flow's random stream.
    isn: Option<u32> = None; kind "int", optional true;
    /// SYN retransmissions before giving up (Linux tcp_syn_retries: 6).
    syn_retries: u32 = 6; kind "int";
    /// The first this-many SYN retransmissions wait the initial RTO without backing off, then
    /// backoff doubles (Linux `tcp_syn_linear_timeouts`, default 4 in recent 6.x); 0 = RFC 6298
    /// §5.7 doubling from the first.
    syn_linear_timeouts: u32 = 0; kind "int";
    /// Connection-establishment timer: the attempt is abandoned this long after the first SYN
    /// even if SYN retries remain (BSD `tcp_keepinit`, TCPTV_KEEP_INIT = 75 s: `tcp_timer_keep`
    /// drops a connection not yet established); 0 = none, `syn_retries` alone decides.
    syn_give_up: u64 = 0; kind "duration";
    /// Pace segments at cwnd/SRTT (× 1.0) even if the controller does not ask for pacing.
    pacing: bool = false; kind "bool";
    /// What one pacing slot sends: "segment" (one segment), or "linux-tso-autosize" (Linux
    /// ≥ 4.20: one buffer of about 1 ms of data at the pacing rate, 2 segments at least, the
    /// first 10 segments unpaced; sender/pacing.rs). Acts only on paced flows.
    pacing_quantum: PacingQuantumCfg = PacingQuantumCfg::Segment; kind "choice", choices &["segment", "linux-tso-autosize"];
    /// Rate at which the receiving application reads, bit/s; null = reads at once (iperf).
    app_read_rate: Option<u64> = None; kind "rate", optional true;
    /// Receiver: the advertised window starts at this many segments and grows by two segments
    /// per full-sized segment received, up to the buffer (Linux `rcv_ssthresh`,
    /// `tcp_grow_window`; stacks-and-ccas.md B.1 "initial advertised 4·MSS"); 0 = the whole
    /// buffer is offered at once (BSD, Windows).
    rwnd_initial_segments: u32 = 0; kind "int";
    /// Receiver: as `rwnd_initial_segments`, the initial window given in bytes and rounded down
    /// to whole segments (Linux ≥ 4.19: "around 64KB", 65 535 B, the SYN's unscaled field);
    /// used when `rwnd_initial_segments` is 0; 0 = unused.
    rwnd_initial_bytes: u64 = 0; kind "bytes";
    /// Receiver: how the offered window follows the free receive buffer: "free" (the free
    /// buffer, rounded down to the scale's granularity, its right edge moved by at least
    /// min(rcvbuf/2, MSS) at a time, RFC 1122 §4.2.3.3), "linux-2.4" (whole multiples of the
    /// receive MSS estimate, the last window kept while within one MSS below the free space,
    /// scaled or not: Linux 2.4 `__tcp_select_window`) or "linux-2.6" (as linux-2.4 without
    /// window scaling; with it the free space rounded up to the scale's granularity: Linux 2.6
    /// to 6.x). Sources at src/tcp/receiver/recv_core.rs `RcvWndRule`.
    rcv_wnd_rule: RcvWndRule = RcvWndRule::Free; kind "choice", choices &["free", "linux-2.4", "linux-2.6"];
    /// Receiver: the largest window offered when the window is not scaled, bytes (at most
    /// 65,535). Linux 2.6.11 to 2.6.17 cap it at 32,767 (`MAX_TCP_WINDOW`, "some poor stacks do
    /// signed 16bit maths"); 2.6.18 made that cap sysctl `tcp_workaround_signed_windows`,
    /// default off.
    rcv_wnd_unscaled_max: u32 = 65535; kind "bytes";
    /// Receiver: a data segment that starts inside the advertised window and ends beyond its
    /// right edge is accepted whole (Linux 2.4/2.6 `tcp_sequence` and `tcp_data_queue`: only
    /// its first byte must lie inside the window); false = its excess is trimmed at the edge
    /// (RFC 9293 §3.10.7.4, 4.4BSD). Sources at src/tcp/receiver/recv_core.rs
    /// `RecvCoreConfig::accept_beyond_window`.
    rcv_accept_beyond_window: bool = false; kind "bool";
    /// Receiver: receive-buffer autotuning up to this many bytes (Linux `tcp_moderate_rcvbuf`,
    /// Windows Vista+ auto-tuning): once per round trip the buffer grows to twice the bytes
    /// delivered in the last round trip; null = fixed buffer.
    rcvbuf_autotune_max: Option<u64> = None; kind "bytes", optional true;
    /// Receiver (autotuning): the round-trip time that paces it: "handshake" (the handshake's,
    /// fixed), "linux-2.6" or "linux-6" (Linux `rcv_rtt_est` from timestamp echoes and
    /// per-window samples, as those releases computed it; receiver/autotune.rs).
    rcv_rtt: RcvRttCfg = RcvRttCfg::Handshake; kind "choice", choices &["handshake", "linux-2.6", "linux-6"];
    /// Receiver (autotuning): when the bytes per round trip grew, add twice the window times
    /// the growth and the out-of-order extent (Linux 6.18 `tcp_rcvbuf_grow`, slow start).
    rcvbuf_autotune_boost: bool = false; kind "bool";
    /// Receiving host: bit/s the host can take off the wire and process; packets beyond `rx_ring` waiting are dropped before TCP sees them. Models the
    /// end-host receive limit of the Windows XP/Vista clients (Iwanaga et al.: capped throughput
    /// and duplicate ACKs on a clean path). Applies to the whole receiving host; null = unlimited.
    rx_capacity: Option<u64> = None; kind "rate", optional true;
    /// Receiving host: packets the receive ring holds while waiting for processing (and, with
    /// `rx_coalesce`, while waiting for the next receive interrupt).
    rx_ring: u32 = 256; kind "int";
    /// Host NIC receive interrupt coalescing: minimum interval between receive interrupts
    /// (Intel e1000 `InterruptThrottleRate` with a fixed rate, i.e. `ethtool -C rx-usecs`:
    /// 125 µs = 8000 interrupts/s, e1000's static default before 2006; its adaptive default since
    /// sets 250 µs for bulk traffic, e1000.rst). Packets that arrive
    /// sooner than this after the last interrupt wait for the next one and reach TCP together
    /// (src/host.rs). Applies to the whole host that runs this side of the flow (the receiver's
    /// knob to the receiving host, the sender's to the sending host); 0 = off (every packet at once).
    rx_coalesce: u64 = 0; kind "duration";
    /// Host timers fire late by a uniform draw from [0, this] (Linux timer slack, prctl(2)
    /// PR_SET_TIMERSLACK, 50 µs by default for user threads; or the tick of a tick-driven timer:
    /// 1/HZ, Windows' 15.6 ms default resolution): delayed ACK, RTO, persist, TLP/RACK, pacing,
    /// start and stop of this side of the flow; from the endpoint's own random stream. 0 = exact.
    timer_slack: u64 = 0; kind "duration";
    /// Sender quirk (Windows XP, Jansen & McGregor 2005): during loss periods (from the first
    /// duplicate ACK until recovery ends) new data is sent beyond the receiver's advertised window.
    quirk_ignore_rwnd_in_recovery: bool = false; kind "bool";
    /// Receiver quirk (FreeBSD 5.3 receiving from Windows, Jansen & McGregor 2005): this fraction
    /// of SACK blocks carries wrong sequence numbers (modelled as swapped edges, a block no
    /// sender can match; the real corruption is not published). 0 = off.
    quirk_invalid_sack_fraction: f64 = 0.0; kind "float";
}

impl TcpConfig {
    /// The RTO's lower bound for this connection: `min_rto_local` for a local peer
    /// (`peer_local`), else `min_rto` (XNU `tcp_mss` / `tcp_getrt_rtt`: `t_rttmin = isnetlocal ?
    /// tcp_TCPTV_MIN : TCPTV_REXMTMIN`).
    #[inline]
    pub fn rto_min(&self) -> u64 {
        if self.peer_local && self.min_rto_local > 0 {
            self.min_rto_local
        } else {
            self.min_rto
        }
    }

    /// The initial window for this connection: `initial_window_local` segments for a local
    /// peer (`peer_local`), else `initial_window` (XNU `tcp_cc_cwnd_init_or_reset`).
    #[inline]
    pub fn iw(&self) -> InitialWindow {
        if self.peer_local && self.initial_window_local > 0 {
            InitialWindow::Segments(self.initial_window_local)
        } else {
            self.initial_window
        }
    }

    /// The receive buffer once the connection is established, with full segments of `seg`
    /// payload bytes and our window-scale shift `wscale`: `rcvbuf`, or with
    /// `rcvbuf_round_to_mss` Windows 2000 / XP / Server 2003's default algorithm (Microsoft
    /// KB 224829, "TCP window size": the first request advertises 16K; "when the connection is
    /// established, the receive window size is rounded up to an even increment of the MSS";
    /// "the window size is adjusted to four times the MSS, to a maximum size of 64 K, unless the
    /// window scaling option is used"; 17,520 B for Ethernet, "16K rounded up to twelve
    /// 1460-byte segments", less with timestamps, which leave "less room for data"). "Even
    /// increment" is a whole number of segments, odd ones too: nmap's nmap-os-db (2015) gives
    /// Windows 2000 / XP / 2003 SYN-ACKs of 17,520, 16,800, 16,640, 16,616 and 16,430 B to its
    /// probes with MSS 1460, 1400, 640, 536 and 265 B — 12, 12, 26, 31 and 62 segments.
    pub fn established_rcvbuf(&self, seg: u32, wscale: u8) -> u64 {
        if !self.rcvbuf_round_to_mss || seg == 0 {
            return self.rcvbuf;
        }
        let seg = u64::from(seg);
        let w = self.rcvbuf.div_ceil(seg).max(4) * seg;
        if wscale == 0 {
            w.min(u64::from(u16::MAX))
        } else {
            w
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_established_rcvbuf_windows_default_algorithm() {
        // KB 224829: 16,384 B rounded up to twelve 1460-B segments = 17,520 B; with
        // timestamps (1448-B segments) twelve of those, 17,376 B; at least four segments.
        let xp = TcpConfig {
            rcvbuf: 16384,
            rcvbuf_round_to_mss: true,
            ..TcpConfig::default()
        };
        assert_eq!(xp.established_rcvbuf(1460, 0), 17520);
        assert_eq!(xp.established_rcvbuf(1448, 0), 17376);
        // nmap-os-db: XP / 2000 / 2003 SYN-ACKs of 16,616 B (0x40E8) to probes with MSS 536 or
        // none: 31 segments, an odd number ("even increment" = whole segments).
        assert_eq!(xp.established_rcvbuf(536, 0), 16616, "31 segments of 536 B");
        assert_eq!(xp.established_rcvbuf(8960, 0), 35840, "four jumbo segments");
        assert_eq!(
            xp.established_rcvbuf(16384, 0),
            65535,
            "64 KB without scaling"
        );
        // Off (every other stack, and a configured window): the buffer as given.
        let plain = TcpConfig {
            rcvbuf_round_to_mss: false,
            ..xp
        };
        assert_eq!(plain.established_rcvbuf(1460, 0), 16384);
    }

    #[test]
    fn test_local_peer_values_apply_only_to_a_local_peer() {
        // XNU t_rttmin = TF_LOCAL ? tcp_TCPTV_MIN (100 ms) : TCPTV_REXMTMIN (30 ms), and the
        // initial window ss_fltsz_local (8) for a local peer (macos.toml min_rto_local,
        // initial_window_local); knob peer_local is the path's, off by default.
        let mut c = TcpConfig {
            min_rto: 30_000_000,
            min_rto_local: 100_000_000,
            initial_window_local: 8,
            ..TcpConfig::default()
        };
        assert!(!c.peer_local);
        assert_eq!(c.rto_min(), 30_000_000);
        assert_eq!(c.iw(), InitialWindow::Rule(IwRule::Rfc3390));
        c.peer_local = true;
        assert_eq!(c.rto_min(), 100_000_000);
        assert_eq!(c.iw(), InitialWindow::Segments(8));
        assert_eq!(c.iw().bytes(1460), 8 * 1460);
        // A personality without local values: a local peer changes nothing.
        let d = TcpConfig {
            peer_local: true,
            ..TcpConfig::default()
        };
        assert_eq!((d.rto_min(), d.iw()), (d.min_rto, d.initial_window));
    }

    #[test]
    fn test_iw_rfc3390_table() {
        // RFC 3390 §1: 4 segments for SMSS ≤ 1095, 3 for ≤ 2190, else 2.
        let iw = InitialWindow::Rule(IwRule::Rfc3390);
        assert_eq!(iw.bytes(1000), 4000);
        assert_eq!(iw.bytes(1460), 4380);
        assert_eq!(iw.bytes(2190), 4380);
        assert_eq!(iw.bytes(4000), 8000);
        assert_eq!(InitialWindow::Rule(IwRule::Rfc6928).bytes(1460), 14600);
    }

    #[test]
    fn test_schema_gives_each_integer_knob_its_type_range() {
        let s = TcpConfig::schema();
        let range = |n: &str| {
            let k = s.iter().find(|k| k.name == n).unwrap();
            (k.min, k.max)
        };
        assert_eq!(range("mss"), (Some(0), Some(u64::from(u32::MAX))));
        assert_eq!(range("sndbuf"), (Some(0), Some(u64::MAX)));
        assert_eq!(range("isn"), (Some(0), Some(u64::from(u32::MAX))));
        assert_eq!(
            range("initial_window"),
            (Some(0), Some(u64::from(u32::MAX)))
        );
        assert_eq!(range("delayed_ack"), (None, None));
        assert_eq!(range("quirk_invalid_sack_fraction"), (None, None));
        // The range is what deserialisation accepts.
        let ok = format!(r#"{{"mss": {}}}"#, u32::MAX);
        assert!(serde_json::from_str::<TcpConfig>(&ok).is_ok());
        let over = format!(r#"{{"mss": {}}}"#, u64::from(u32::MAX) + 1);
        assert!(serde_json::from_str::<TcpConfig>(&over).is_err());
    }

    #[test]
    fn test_schema_lists_every_knob_with_default() {
        let s = TcpConfig::schema();
        assert!(s
            .iter()
            .any(|k| k.name == "min_rto" && k.default == 1_000_000_000u64));
        assert!(s
            .iter()
            .any(|k| k.name == "cwnd_unit" && k.choices.contains(&"packets")));
        let parsed: TcpConfig = serde_json::from_str(r#"{"initial_window": "rfc6928"}"#).unwrap();
        assert_eq!(parsed.initial_window, InitialWindow::Rule(IwRule::Rfc6928));
        let parsed: TcpConfig = serde_json::from_str(r#"{"initial_window": 10}"#).unwrap();
        assert_eq!(parsed.initial_window, InitialWindow::Segments(10));
        assert!(serde_json::from_str::<TcpConfig>(r#"{"min_rtoo": 1}"#).is_err());
    }
}
