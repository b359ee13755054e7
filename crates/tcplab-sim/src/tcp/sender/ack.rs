//! ACK processing of the sending end, sans I/O: turns one incoming header into an
//! [`AckOutcome`] — cumulative advance, the peer's window, SACK and D-SACK blocks, the RTT
//! sample and whether it is a duplicate ACK — without sending anything or deciding on recovery.
//!
//! Owns the acceptability check (RFC 9293 §3.10.7.4), the scaled window (RFC 7323 §2.3), the
//! SACK block checks (RFC 2018 §3–4) and D-SACK detection (RFC 2883 §4), the RTT sample
//! (RFC 6298 §3, RFC 7323 §4, Karn's rule without timestamps), the duplicate-ACK definition
//! (RFC 5681 §2; RFC 6675 §2 with SACK) and the duplicate-ACK count. The [`Scoreboard`] is
//! updated with what is acknowledged; what follows (undo, loss detection, recovery, the
//! congestion controller, timers) is [`super::TcpSender`]'s.
//!
//! Sequence numbers are kept as 64-bit offsets from the first data byte; [`wire_seq`] and
//! [`unwrap_seq`] convert at the boundary.

use super::SenderStats;
use crate::packet::{flags, TcpHdr};
use crate::tcp::rtt::{RttEstimator, RttSample};
use crate::tcp::scoreboard::{AckResult, Scoreboard};
use crate::time::Nanos;

/// 32-bit wire sequence number of the data offset `off` (ISN + 1 + offset, wrapping).
#[inline]
pub fn wire_seq(isn: u32, off: u64) -> u32 {
    isn.wrapping_add(1).wrapping_add(off as u32)
}

/// Unwrap a 32-bit sequence number to an offset, choosing the one nearest `near`.
#[inline]
pub fn unwrap_seq(isn: u32, wire: u32, near: u64) -> i64 {
    let d = wire.wrapping_sub(wire_seq(isn, near)) as i32 as i64;
    near as i64 + d
}

/// The sender's state an ACK is judged against.
#[derive(Clone, Copy, Debug)]
pub struct AckCx {
    pub now: Nanos,
    pub isn: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub fin_sent: bool,
    /// Shift applied to windows the peer advertises.
    pub snd_wscale: u8,
    pub ts_on: bool,
    /// SACK blocks are used (negotiated, and the recovery is not NewReno).
    pub use_sack: bool,
    /// Tick of our timestamp clock (RFC 7323 §5.4).
    pub clock_granularity: Nanos,
    /// The clock's reading at time 0 within a tick (knob `clock_phase`).
    pub clock_phase: Nanos,
    /// Which segments and which clock give the RTT samples (knob `rtt_sampling`).
    pub rtt_sampling: RttSamplingCfg,
    /// With `rtt_sampling = "linux-2.6"`: the congestion controller asks for µs samples from
    /// the send stamps (`CongestionControl::rtt_stamp`, Linux `TCP_CONG_RTT_STAMP`).
    pub ca_rtt_stamp: bool,
}

impl AckCx {
    /// Our timestamp clock: its tick and its phase.
    #[inline]
    fn clock(&self) -> (Nanos, Nanos) {
        (self.clock_granularity, self.clock_phase)
    }
}

/// Where RTT samples come from (knob `rtt_sampling`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RttSamplingCfg {
    /// RFC 7323 §4 with timestamps: the echoed TSval of an ACK that advances the left edge, in
    /// ticks of the timestamp clock; without timestamps the newest never-retransmitted segment
    /// acknowledged (Karn), in ticks of `clock_granularity`. One sample feeds the estimator,
    /// the minimum RTT and the congestion controller.
    #[default]
    #[serde(rename = "timestamps")]
    Timestamps,
    /// Linux ≥ 3.15 ([`linux_rtt_samples`]): the send times of the segments an ACK covers, in
    /// microseconds, preferred to the timestamp echo, which is used only when no segment gives
    /// one; the estimator gets the oldest segment's RTT, the congestion controller and the
    /// minimum RTT the newest's.
    #[serde(rename = "linux")]
    Linux,
    /// Linux 2.6.23–3.11 ([`linux26_ca_rtt`]): the estimator as [`Self::Timestamps`]; the
    /// congestion controller the newest cumulatively acknowledged segment's RTT, in µs or in
    /// whole clock ticks.
    #[serde(rename = "linux-2.6")]
    Linux26,
    /// BSD (4.4BSD-Lite and its descendants: FreeBSD, OpenBSD, XNU; TCP/IP Illustrated Vol. 2
    /// §25.10): with timestamps as [`Self::Timestamps`]; without them one segment at a time is
    /// timed — the first new segment sent while nothing is timed (tcp_output.c: `t_rtttime =
    /// ticks; t_rtseq = startseq` when `snd_nxt` passes `snd_max` and `t_rtttime` is 0) — and
    /// sampled by the first ACK beyond its start (tcp_input.c: `t_rtttime && SEQ_GT(th_ack,
    /// t_rtseq)`, `tcp_xmit_timer`), so one sample per round trip, not one per ACK; a
    /// retransmission ends the timing unsampled (Karn: tcp_timer.c `tcp_timer_rexmt` and the
    /// fast-retransmit and partial-ACK paths clear `t_rtttime`). FreeBSD 5.x, read for the facts.
    /// Approximation: every retransmission ends it, where BSD's SACK retransmissions in a
    /// recovery do not (the fast retransmit that began the recovery has ended it already).
    #[serde(rename = "bsd")]
    Bsd,
}

/// The congestion controller's RTT sample in Linux 2.6.23 to 3.11 (net/ipv4/tcp_input.c
/// `tcp_clean_rtx_queue`, read for the facts in 2.6.29 and 2.6.39; the `rtt_us` argument of
/// `pkts_acked` since "[TCP]: congestion control API pass RTT in microseconds", 30cfd0baf0a,
/// 2.6.23; 3.12 "tcp: prefer packet timing to TS-ECR for RTT" changed the sources): taken only
/// when the ACK cumulatively acknowledges data none of which was ever retransmitted
/// (`FLAG_RETRANS_DATA_ACKED` voids it), from the newest segment it acknowledges (`last_ackt`,
/// `ca_seq_rtt`; SACKed before or not). A controller that sets `TCP_CONG_RTT_STAMP` gets
/// `ktime_us_delta(now, skb->tstamp)` (µs, at least 1 here); all others get
/// `jiffies_to_usecs(now - scb->when)`, whole jiffies (`tick`), and no sample when that is 0
/// (`ca_seq_rtt > 0`). The estimator is fed as before (the timestamp echo,
/// `tcp_ack_update_rtt`).
pub fn linux26_ca_rtt(now: Nanos, res: &AckResult, stamp: bool, tick: Nanos) -> Option<Nanos> {
    if res.acked_retransmitted {
        return None;
    }
    let sent = res.last_cum_ackt?;
    if stamp {
        return Some((now.saturating_sub(sent) / 1_000).max(1) * 1_000);
    }
    let g = tick.max(1);
    let ticks = (now / g).saturating_sub(sent / g);
    (ticks > 0).then_some(ticks * g)
}

/// Linux's RTT samples for one ACK (net/ipv4/tcp_input.c `tcp_clean_rtx_queue`,
/// `tcp_ack_update_rtt`; read for the facts). Since 3.12 a sample is taken from the send time
/// of the segments an ACK covers and the timestamp echo is only the fallback ("tcp: prefer
/// packet timing to TS-ECR for RTT", 5b08e47caf1f; "tcp: measure RTT from new SACK",
/// 59c9af4234b0), and since 3.15 it is kept in microseconds ("tcp: switch rtt estimations to
/// usec resolution"; the send stamps are `tcp_mstamp`, µs; stacks-and-ccas.md B.1 "µs RTT
/// samples"). Returns (the estimator's sample, the congestion controller's):
/// - cumulatively acknowledged segments, none of them ever retransmitted (Karn: one
///   retransmitted segment in the range voids it): the estimator's from the oldest that was
///   not SACKed before (`first_ackt`), the controller's from the newest (`last_ackt`);
/// - newly SACKed never-retransmitted segments: the oldest is the estimator's sample when the
///   cumulative part gave none (`sack_rtt_us`), the newest is the controller's (`last_sackt`,
///   which replaces `last_ackt`);
/// - neither, on an ACK that acknowledges new data with a timestamp echo: the echo, in ticks of
///   the 1 ms timestamp clock, for both.
///
/// Either both samples exist or neither does (a controller's sample implies a segment that also
/// gives the estimator's).
pub fn linux_rtt_samples(
    now: Nanos,
    res: &AckResult,
    last_ackt: Option<Nanos>,
    advanced: bool,
    ts_ecr: Option<u32>,
    (clock_granularity, clock_phase): (Nanos, Nanos),
) -> (Option<RttSample>, Option<Nanos>) {
    let us = |sent: Nanos| RttSample::from_send_stamp_us(sent, now, clock_granularity);
    let mut seq = None;
    let mut ca = None;
    if !res.acked_retransmitted {
        if let (Some(first), Some(last)) = (res.first_ackt, last_ackt) {
            seq = Some(us(first));
            ca = Some(us(last).nanos);
        }
    }
    if let Some(last) = res.last_sackt {
        ca = Some(us(last).nanos);
        if seq.is_none() {
            seq = res.first_sackt.map(us);
        }
    }
    if seq.is_none() && advanced {
        if let Some(ecr) = ts_ecr {
            let m = RttSample::from_timestamps(now + clock_phase, ecr, clock_granularity);
            return (Some(m), Some(m.nanos));
        }
    }
    (seq, ca)
}

/// What one acceptable ACK says.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckOutcome {
    /// The new snd_una (data bytes only).
    pub snd_una: u64,
    /// snd_una moved.
    pub advanced: bool,
    /// The FIN is acknowledged.
    pub fin_acked: bool,
    /// The peer's window in bytes (scaled).
    pub rwnd: u64,
    /// Pipe (RFC 6675) before this ACK.
    pub prior_in_flight: u64,
    /// Scoreboard changes: bytes and packets acknowledged and SACKed, Karn-safe send time.
    pub res: AckResult,
    /// Right edge of a D-SACK block (RFC 2883), as an offset.
    pub dsack_end: Option<i64>,
    /// RTT measurement for the estimator (the caller feeds it).
    pub rtt_sample: Option<RttSample>,
    /// RTT for the congestion controller and the minimum RTT (with `rtt_sampling =
    /// "timestamps"` the estimator's sample).
    pub ca_rtt: Option<Nanos>,
    /// A duplicate ACK.
    pub is_dup: bool,
}

/// The ACK-processing state: the duplicate-ACK count and the last window field seen.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckProcessor {
    /// Consecutive duplicate ACKs (reset by an advancing ACK, a timeout or an undo).
    pub dupacks: u32,
    /// Window field of the last ACK (a changed window makes an ACK not a duplicate without SACK).
    pub last_wnd_raw: u16,
    /// With [`RttSamplingCfg::Bsd`] and no timestamps: the segment being timed, its start
    /// offset and send time (BSD `t_rtseq`, `t_rtttime`).
    timed: Option<(u64, Nanos)>,
}

impl AckProcessor {
    /// [`RttSamplingCfg::Bsd`]: a new segment starting at `off` left at `now`; it is timed if
    /// nothing is.
    #[inline]
    pub fn time_segment(&mut self, off: u64, now: Nanos) {
        if self.timed.is_none() {
            self.timed = Some((off, now));
        }
    }

    /// [`RttSamplingCfg::Bsd`]: a retransmission ends the timing unsampled (Karn).
    #[inline]
    pub fn cancel_timing(&mut self) {
        self.timed = None;
    }

    /// [`RttSamplingCfg::Bsd`]: the sample an ACK up to `ack` gives, if it passes the start of
    /// the timed segment (ending the timing).
    #[inline]
    fn timed_sample(&mut self, ack: u64, now: Nanos, rtt: &RttEstimator) -> Option<RttSample> {
        let (seq, sent) = self.timed?;
        (ack > seq).then(|| {
            self.timed = None;
            rtt.sample(sent, now)
        })
    }

    /// Process the ACK `h` carrying `payload` bytes. Returns `None` for a segment that is not
    /// an acceptable ACK. Updates `sb` (and its rate sampler) with what is acknowledged and the
    /// SACK/duplicate-ACK counters in `stats`.
    pub fn on_ack(
        &mut self,
        cx: &AckCx,
        h: &TcpHdr,
        payload: u32,
        sb: &mut Scoreboard,
        rtt: &RttEstimator,
        stats: &mut SenderStats,
    ) -> Option<AckOutcome> {
        if h.flags & flags::ACK == 0 {
            return None;
        }
        let now = cx.now;
        let data_end = cx.snd_nxt;
        let fin_off = if cx.fin_sent { 1 } else { 0 };
        let ack = unwrap_seq(cx.isn, h.ack, cx.snd_una);
        if ack < cx.snd_una as i64 || ack > (data_end + fin_off) as i64 {
            return None; // old or acknowledges unsent data (RFC 9293 §3.10.7.4)
        }
        let ack = ack as u64;
        let mut out = AckOutcome {
            fin_acked: cx.fin_sent && ack == data_end + 1,
            snd_una: cx.snd_una,
            ..AckOutcome::default()
        };
        let ack_data = ack.min(data_end);
        let prior_in_flight = sb.pipe();
        out.prior_in_flight = prior_in_flight;
        out.rwnd = (h.wnd as u64) << cx.snd_wscale;
        let wnd_changed = h.wnd != self.last_wnd_raw;
        self.last_wnd_raw = h.wnd;

        sb.rate.begin_ack(prior_in_flight);
        let res = &mut out.res;
        if ack_data > cx.snd_una {
            sb.on_cum_ack(ack_data, now, res);
            out.snd_una = ack_data;
        }
        let last_ackt = res.rtt_xmit;
        // A NewReno sender ignores SACK information even when SACK was negotiated (RFC 6582
        // recovery works from duplicate ACKs and the cumulative ACK only); blocks are counted.
        if cx.use_sack {
            out.dsack_end = process_sack_blocks(cx, out.snd_una, h, sb, res, stats);
        } else {
            stats.sack_blocks += h.n_sack as u64;
        }
        let advanced = out.snd_una > cx.snd_una;
        out.advanced = advanced;

        // RTT sample (RFC 6298 §3 / RFC 7323 §4): from the echoed timestamp of an ACK that
        // advances the left edge, else from the newest never-retransmitted segment acknowledged.
        if cx.rtt_sampling == RttSamplingCfg::Linux {
            let ecr = (cx.ts_on && h.ts_ecr != 0).then_some(h.ts_ecr);
            (out.rtt_sample, out.ca_rtt) =
                linux_rtt_samples(now, res, last_ackt, advanced, ecr, cx.clock());
        } else if advanced && cx.ts_on && h.ts_ecr != 0 {
            // Our timestamp clock now, as `TcpSender` stamps segments (RFC 7323 §5.4).
            out.rtt_sample = Some(RttSample::from_timestamps(
                now + cx.clock_phase,
                h.ts_ecr,
                cx.clock_granularity,
            ));
        } else if !cx.ts_on && cx.rtt_sampling == RttSamplingCfg::Bsd {
            out.rtt_sample = self.timed_sample(out.snd_una, now, rtt);
        } else if !cx.ts_on && (advanced || res.bytes_sacked > 0) {
            if let Some(x) = res.rtt_xmit {
                out.rtt_sample = Some(rtt.sample(x, now));
            }
        }
        match cx.rtt_sampling {
            RttSamplingCfg::Timestamps | RttSamplingCfg::Bsd => {
                out.ca_rtt = out.rtt_sample.map(|m| m.nanos)
            }
            RttSamplingCfg::Linux26 => {
                out.ca_rtt = linux26_ca_rtt(now, res, cx.ca_rtt_stamp, cx.clock_granularity)
            }
            RttSamplingCfg::Linux => {}
        }

        // Duplicate ACK (RFC 5681 §2; with SACK, RFC 6675 §2 asks for new SACK information).
        out.is_dup = !advanced
            && payload == 0
            && h.flags & (flags::SYN | flags::FIN) == 0
            && prior_in_flight > 0
            && if cx.use_sack {
                res.new_sack_info
            } else {
                !wnd_changed
            };
        if advanced {
            self.dupacks = 0;
        } else if out.is_dup {
            self.dupacks += 1;
            stats.dupacks += 1;
        }
        Some(out)
    }
}

/// What an in-order ACK says (see [`AckProcessor::on_in_order_ack`]): the fields of
/// [`AckOutcome`] that can differ from their defaults on that path.
#[derive(Clone, Copy, Debug, Default)]
pub struct InOrderAck {
    /// The peer's window in bytes (scaled).
    pub rwnd: u64,
    /// Pipe (RFC 6675) before this ACK.
    pub prior_in_flight: u64,
    pub rtt_sample: Option<RttSample>,
    pub ca_rtt: Option<Nanos>,
}

impl AckProcessor {
    /// Whether [`AckProcessor::on_in_order_ack`] may replace [`AckProcessor::on_ack`] for `h`:
    /// an ACK without SYN, FIN or SACK blocks, carrying no data, that advances snd_una to
    /// `ack` (returned, as an offset) within the data sent, while no FIN has been sent and the
    /// scoreboard holds nothing SACKed, marked lost or retransmitted. On such an ACK the full
    /// path's D-SACK, invalid-block, FIN and duplicate-ACK branches cannot fire.
    #[inline]
    pub fn in_order(cx: &AckCx, h: &TcpHdr, payload: u32, sb: &Scoreboard) -> Option<u64> {
        if h.flags & (flags::ACK | flags::SYN | flags::FIN) != flags::ACK
            || h.n_sack != 0
            || payload != 0
            || cx.fin_sent
            || sb.sacked_bytes | sb.lost_bytes | sb.retrans_bytes != 0
        {
            return None;
        }
        let ack = unwrap_seq(cx.isn, h.ack, cx.snd_una);
        (ack > cx.snd_una as i64 && ack <= cx.snd_nxt as i64).then_some(ack as u64)
    }

    /// The ACK fast path: exactly what [`AckProcessor::on_ack`] does to `self`, `sb` and
    /// `stats` for an ACK that [`AckProcessor::in_order`] accepted (cumulative advance to
    /// `ack`), in the same order, without building an [`AckOutcome`]. The property test
    /// `prop_in_order_ack_matches_full_path` checks the equivalence. The [`AckResult`] is
    /// written into `res` (the caller's, reset first): returned by value it was copied twice
    /// more on each ACK.
    #[inline]
    pub fn on_in_order_ack(
        &mut self,
        cx: &AckCx,
        h: &TcpHdr,
        ack: u64,
        sb: &mut Scoreboard,
        rtt: &RttEstimator,
        res: &mut AckResult,
    ) -> InOrderAck {
        let now = cx.now;
        let prior_in_flight = sb.pipe();
        self.last_wnd_raw = h.wnd;
        sb.rate.begin_ack(prior_in_flight);
        *res = AckResult::default();
        sb.on_cum_ack(ack, now, res);
        // RTT sample as in `on_ack` (the ACK advances; nothing is SACKed, so `rtt_xmit` is
        // the cumulative walk's newest clean record).
        let (rtt_sample, ca_rtt) = if cx.rtt_sampling == RttSamplingCfg::Linux {
            let ecr = (cx.ts_on && h.ts_ecr != 0).then_some(h.ts_ecr);
            linux_rtt_samples(now, res, res.rtt_xmit, true, ecr, cx.clock())
        } else {
            let m = if cx.ts_on {
                (h.ts_ecr != 0).then(|| {
                    RttSample::from_timestamps(now + cx.clock_phase, h.ts_ecr, cx.clock_granularity)
                })
            } else if cx.rtt_sampling == RttSamplingCfg::Bsd {
                self.timed_sample(ack, now, rtt)
            } else {
                res.rtt_xmit.map(|x| rtt.sample(x, now))
            };
            let ca = if cx.rtt_sampling == RttSamplingCfg::Linux26 {
                linux26_ca_rtt(now, res, cx.ca_rtt_stamp, cx.clock_granularity)
            } else {
                m.map(|m| m.nanos)
            };
            (m, ca)
        };
        self.dupacks = 0;
        InOrderAck {
            rwnd: (h.wnd as u64) << cx.snd_wscale,
            prior_in_flight,
            rtt_sample,
            ca_rtt,
        }
    }
}

/// Apply the SACK blocks of `h` to `sb` (snd_una already advanced to `snd_una`); returns the
/// right edge of a D-SACK block if the first block is one.
fn process_sack_blocks(
    cx: &AckCx,
    snd_una: u64,
    h: &TcpHdr,
    sb: &mut Scoreboard,
    res: &mut AckResult,
    stats: &mut SenderStats,
) -> Option<i64> {
    let mut dsack = None;
    for k in 0..h.n_sack as usize {
        let (l, r) = h.sack[k];
        stats.sack_blocks += 1;
        let left = unwrap_seq(cx.isn, l, snd_una);
        let right = unwrap_seq(cx.isn, r, snd_una);
        // D-SACK (RFC 2883 §4): the first block below the cumulative ACK, or inside the second.
        if k == 0
            && (right <= snd_una as i64
                || (h.n_sack > 1 && {
                    let l2 = unwrap_seq(cx.isn, h.sack[1].0, snd_una);
                    let r2 = unwrap_seq(cx.isn, h.sack[1].1, snd_una);
                    left >= l2 && right <= r2
                }))
        {
            stats.dsack_blocks += 1;
            dsack = Some(right);
            continue;
        }
        if right <= left || left < snd_una as i64 || right > cx.snd_nxt as i64 {
            // A block no correct receiver can send (RFC 2018 §3, §4): ignore and count it.
            stats.invalid_sack_blocks += 1;
            continue;
        }
        sb.on_sack_block(left as u64, right as u64, cx.now, res);
    }
    dsack
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;
    const ISN: u32 = u32::MAX - 2500; // wire numbers wrap inside the test data

    fn rtt() -> RttEstimator {
        RttEstimator::new(1_000_000_000, 200_000_000, 60_000_000_000, 1_000_000, false)
    }

    /// A scoreboard with `n` full segments sent at time 0.
    fn sent(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(3);
        for i in 0..n {
            sb.on_send_new(i * MSS as u64, MSS, 0);
        }
        sb
    }

    fn cx(snd_una: u64, snd_nxt: u64, use_sack: bool) -> AckCx {
        AckCx {
            now: 50_000_000,
            isn: ISN,
            snd_una,
            snd_nxt,
            fin_sent: false,
            snd_wscale: 2,
            ts_on: false,
            use_sack,
            clock_granularity: 1_000_000,
            clock_phase: 0,
            rtt_sampling: RttSamplingCfg::Timestamps,
            ca_rtt_stamp: false,
        }
    }

    fn ack(off: u64, sacks: &[(u64, u64)]) -> TcpHdr {
        let mut h = TcpHdr {
            ack: wire_seq(ISN, off),
            flags: flags::ACK,
            wnd: 1000,
            ..TcpHdr::default()
        };
        for (k, &(l, r)) in sacks.iter().enumerate() {
            h.sack[k] = (wire_seq(ISN, l), wire_seq(ISN, r));
        }
        h.n_sack = sacks.len() as u8;
        h
    }

    #[test]
    fn test_wire_seq_roundtrip_across_wrap() {
        for off in [0u64, 2499, 2500, 5000, (1 << 32) + 7] {
            assert_eq!(
                unwrap_seq(ISN, wire_seq(ISN, off), off.saturating_sub(100)),
                off as i64
            );
        }
        assert_eq!(unwrap_seq(ISN, wire_seq(ISN, 10), 20), 10);
    }

    #[test]
    fn test_established_cumulative_ack_advances() {
        let mut sb = sent(4);
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        let o = a
            .on_ack(
                &cx(0, 4000, true),
                &ack(2000, &[]),
                0,
                &mut sb,
                &rtt(),
                &mut st,
            )
            .unwrap();
        assert!(o.advanced && !o.is_dup && !o.fin_acked);
        assert_eq!(o.snd_una, 2000);
        assert_eq!((o.res.bytes_acked, o.res.packets_acked), (2000, 2));
        assert_eq!(o.prior_in_flight, 4000);
        assert_eq!(o.rwnd, 4000, "window field 1000 scaled by 2");
        // Without timestamps, Karn's rule: sample from the newest never-retransmitted segment.
        assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(50_000_000));
        assert_eq!(sb.out_bytes, 2000);
    }

    #[test]
    fn test_bsd_timing_gives_one_sample_per_timed_segment() {
        // Segments 0..4 sent at time 0, the first timed (BSD t_rtseq = 0, t_rtttime = 0).
        let mut sb = sent(4);
        let mut a = AckProcessor::default();
        a.time_segment(0, 0);
        a.time_segment(1000, 0); // already timing: ignored
        let mut st = SenderStats::default();
        let mut c = cx(0, 4000, false);
        c.rtt_sampling = RttSamplingCfg::Bsd;
        let o = a
            .on_ack(&c, &ack(1000, &[]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(50_000_000));
        assert_eq!(o.ca_rtt, Some(50_000_000));
        // The next ACKs give nothing until a new segment is timed (the per-ACK rule would).
        let mut c2 = cx(1000, 4000, false);
        c2.rtt_sampling = RttSamplingCfg::Bsd;
        c2.now = 60_000_000;
        let o = a
            .on_ack(&c2, &ack(2000, &[]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert_eq!(o.rtt_sample, None);
        c2.rtt_sampling = RttSamplingCfg::Timestamps;
        c2.snd_una = 2000;
        let o = a
            .on_ack(&c2, &ack(3000, &[]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(60_000_000));
        // A timed segment that is retransmitted gives no sample (Karn), on the fast path too.
        a.time_segment(3000, 10_000_000);
        a.cancel_timing();
        let mut c3 = cx(3000, 4000, false);
        c3.rtt_sampling = RttSamplingCfg::Bsd;
        let at = AckProcessor::in_order(&c3, &ack(4000, &[]), 0, &sb).unwrap();
        let mut res = AckResult::default();
        let o = a.on_in_order_ack(&c3, &ack(4000, &[]), at, &mut sb, &rtt(), &mut res);
        assert_eq!(o.rtt_sample, None);
    }

    #[test]
    fn test_bsd_timing_on_the_fast_path_samples_once_the_ack_passes_the_start() {
        let mut sb = sent(4);
        let mut a = AckProcessor::default();
        a.time_segment(1000, 20_000_000);
        let mut c = cx(0, 4000, false);
        c.rtt_sampling = RttSamplingCfg::Bsd;
        let mut res = AckResult::default();
        // Up to 1000 (not beyond the timed segment's start): nothing.
        let at = AckProcessor::in_order(&c, &ack(1000, &[]), 0, &sb).unwrap();
        let o = a.on_in_order_ack(&c, &ack(1000, &[]), at, &mut sb, &rtt(), &mut res);
        assert_eq!(o.rtt_sample, None);
        c.snd_una = 1000;
        let at = AckProcessor::in_order(&c, &ack(2000, &[]), 0, &sb).unwrap();
        let o = a.on_in_order_ack(&c, &ack(2000, &[]), at, &mut sb, &rtt(), &mut res);
        assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(30_000_000));
    }

    #[test]
    fn test_established_unacceptable_ack_ignored() {
        let mut sb = sent(2);
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        let c = cx(1000, 2000, true);
        // Below snd_una, beyond snd_nxt, and without the ACK flag.
        assert!(a
            .on_ack(&c, &ack(500, &[]), 0, &mut sb, &rtt(), &mut st)
            .is_none());
        assert!(a
            .on_ack(&c, &ack(2001, &[]), 0, &mut sb, &rtt(), &mut st)
            .is_none());
        let mut h = ack(2000, &[]);
        h.flags = 0;
        assert!(a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).is_none());
        // The FIN occupies one sequence number after the data.
        let fin = AckCx {
            fin_sent: true,
            ..c
        };
        let o = a.on_ack(&fin, &ack(2001, &[]), 0, &mut sb, &rtt(), &mut st);
        let o = o.unwrap();
        assert!(o.fin_acked && o.advanced);
        assert_eq!(o.snd_una, 2000);
    }

    #[test]
    fn test_established_dupacks_counted_with_new_sack_info() {
        let mut sb = sent(6);
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        let c = cx(0, 6000, true);
        for k in 1..=3u64 {
            let h = ack(0, &[(1000, 1000 + k * 1000)]);
            let o = a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).unwrap();
            assert!(o.is_dup, "ACK {k} brings new SACK information");
            assert_eq!(a.dupacks as u64, k);
        }
        // The same block again: no new information, not a duplicate ACK (RFC 6675 §2).
        let h = ack(0, &[(1000, 4000)]);
        let o = a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).unwrap();
        assert!(!o.is_dup);
        assert_eq!((a.dupacks, st.dupacks, st.sack_blocks), (3, 3, 4));
        // An ACK carrying data is never a duplicate ACK.
        let h = ack(0, &[(1000, 5000)]);
        let o = a.on_ack(&c, &h, 100, &mut sb, &rtt(), &mut st).unwrap();
        assert!(!o.is_dup);
        // An advancing ACK resets the count.
        let o = a
            .on_ack(&c, &ack(1000, &[]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert!(o.advanced);
        assert_eq!(a.dupacks, 0);
    }

    #[test]
    fn test_established_dupacks_without_sack_need_same_window() {
        let mut sb = sent(4);
        let mut a = AckProcessor {
            last_wnd_raw: 1000,
            ..AckProcessor::default()
        };
        let mut st = SenderStats::default();
        let c = cx(0, 4000, false);
        let o = a
            .on_ack(&c, &ack(0, &[]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert!(o.is_dup);
        let mut h = ack(0, &[]);
        h.wnd = 900; // a window update is not a duplicate ACK (RFC 5681 §2)
        let o = a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).unwrap();
        assert!(!o.is_dup);
        // SACK blocks are counted but not applied when SACK is not used.
        let h = ack(0, &[(1000, 2000)]);
        let o = a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).unwrap();
        assert_eq!((o.res.bytes_sacked, st.sack_blocks), (0, 1));
        assert_eq!(a.dupacks, 1, "window 900 -> 1000 changed again");
    }

    #[test]
    fn test_established_dsack_detected() {
        let mut sb = sent(6);
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        // Below the cumulative ACK (RFC 2883 §4 case 1).
        let o = a
            .on_ack(
                &cx(0, 6000, true),
                &ack(2000, &[(0, 1000)]),
                0,
                &mut sb,
                &rtt(),
                &mut st,
            )
            .unwrap();
        assert_eq!(o.dsack_end, Some(1000));
        // Inside the second block (case 2); the second block is applied as a SACK.
        let h = ack(2000, &[(3000, 4000), (3000, 5000)]);
        let o = a.on_ack(&cx(2000, 6000, true), &h, 0, &mut sb, &rtt(), &mut st);
        let o = o.unwrap();
        assert_eq!(o.dsack_end, Some(4000));
        assert_eq!(o.res.bytes_sacked, 2000);
        // An ordinary first block is not a D-SACK.
        let h = ack(2000, &[(5000, 6000)]);
        let o = a.on_ack(&cx(2000, 6000, true), &h, 0, &mut sb, &rtt(), &mut st);
        assert_eq!(o.unwrap().dsack_end, None);
        assert_eq!(st.dsack_blocks, 2);
    }

    /// `n` segments of MSS bytes, the i-th sent at `i × 1.3 ms`.
    fn sent_spaced(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(3);
        for i in 0..n {
            sb.on_send_new(i * MSS as u64, MSS, i * 1_300_000);
        }
        sb
    }

    fn linux_cx(snd_una: u64, snd_nxt: u64, now: Nanos) -> AckCx {
        AckCx {
            now,
            ts_on: true,
            rtt_sampling: RttSamplingCfg::Linux,
            ..cx(snd_una, snd_nxt, true)
        }
    }

    #[test]
    fn test_linux_samples_oldest_for_estimator_newest_for_controller() {
        // Three segments sent at 0, 1.3 and 2.6 ms, acknowledged together at 50.0004 ms with an
        // echo of TSval 7 (43 ms ago on the 1 ms clock): Linux ignores the echo and times the
        // oldest segment for the estimator, the newest for the controller, in µs.
        let mut sb = sent_spaced(5);
        let mut h = ack(3000, &[]);
        h.ts_ecr = 7;
        let now = 50_000_400;
        let mut st = SenderStats::default();
        let o = AckProcessor::default()
            .on_ack(&linux_cx(0, 5000, now), &h, 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(50_000_000));
        assert_eq!(o.ca_rtt, Some(47_400_000));
        // RFC 7323 §4 on the same ACK: the echo, in whole ticks, for both.
        let mut sb = sent_spaced(5);
        let c = AckCx {
            rtt_sampling: RttSamplingCfg::Timestamps,
            ..linux_cx(0, 5000, now)
        };
        let o = AckProcessor::default()
            .on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(43_000_000));
        assert_eq!(o.ca_rtt, Some(43_000_000));
    }

    /// `rtt_sampling = "linux-2.6"` at HZ 250 (4 ms ticks), send stamps asked for or not.
    fn linux26_cx(snd_una: u64, snd_nxt: u64, now: Nanos, stamp: bool) -> AckCx {
        AckCx {
            now,
            ts_on: true,
            clock_granularity: 4_000_000,
            clock_phase: 0,
            rtt_sampling: RttSamplingCfg::Linux26,
            ca_rtt_stamp: stamp,
            ..cx(snd_una, snd_nxt, true)
        }
    }

    #[test]
    fn test_linux26_controller_times_newest_segment_estimator_the_echo() {
        // Three segments sent at 0, 1.3 and 2.6 ms, acknowledged together at 50.0004 ms with an
        // echo of TSval 7 (on the 4 ms clock: 12 − 7 = 5 ticks). The estimator takes the echo
        // (tcp_ack_saw_tstamp); the controller the newest segment: whole jiffies (12 − 0 = 12
        // ticks) or, for a controller with TCP_CONG_RTT_STAMP, µs from its send stamp.
        let mut h = ack(3000, &[]);
        h.ts_ecr = 7;
        let now = 50_000_400;
        let mut st = SenderStats::default();
        for (stamp, want) in [(false, 48_000_000), (true, 47_400_000)] {
            let mut sb = sent_spaced(5);
            let o = AckProcessor::default()
                .on_ack(
                    &linux26_cx(0, 5000, now, stamp),
                    &h,
                    0,
                    &mut sb,
                    &rtt(),
                    &mut st,
                )
                .unwrap();
            assert_eq!(o.rtt_sample.map(|m| m.nanos), Some(20_000_000));
            assert_eq!(o.ca_rtt, Some(want), "stamp {stamp}");
        }
    }

    #[test]
    fn test_linux26_no_controller_sample_on_zero_ticks_or_retransmitted_data() {
        // Acknowledged 3 ms after sending, within one 4 ms tick: ca_seq_rtt = 0 gives the
        // controller no sample (Linux passes rtt_us only when ca_seq_rtt > 0); the stamp does.
        let h = ack(1000, &[]);
        let mut st = SenderStats::default();
        for (stamp, want) in [(false, None), (true, Some(3_000_000))] {
            let mut sb = sent_spaced(2);
            let c = AckCx {
                ts_on: false,
                ..linux26_cx(0, 2000, 3_000_000, stamp)
            };
            let o = AckProcessor::default()
                .on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st)
                .unwrap();
            assert_eq!(o.ca_rtt, want, "stamp {stamp}");
        }
        // The retransmitted head voids the controller's sample (FLAG_RETRANS_DATA_ACKED) even
        // when newly SACKed segments could time it; the estimator keeps the echo.
        let mut h = ack(1000, &[(3000, 5000)]);
        h.ts_ecr = 10;
        for stamp in [false, true] {
            let got = samples_after_head_retransmitted(linux26_cx(0, 6000, 60_000_000, stamp), &h);
            assert_eq!(got, (Some(20_000_000), None), "stamp {stamp}");
        }
    }

    #[test]
    fn test_linux26_newest_may_have_been_sacked_before() {
        // Segment 2 (sent 2.6 ms) is SACKed first; the ACK that then covers 0..3 times it (the
        // newest cumulatively acknowledged, SACKed or not), as tcp_clean_rtx_queue did.
        let mut sb = sent_spaced(5);
        let mut st = SenderStats::default();
        let c = linux26_cx(0, 5000, 30_000_000, true);
        AckProcessor::default()
            .on_ack(&c, &ack(0, &[(2000, 3000)]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        let c = AckCx {
            snd_una: 0,
            now: 40_000_000,
            ..c
        };
        let o = AckProcessor::default()
            .on_ack(&c, &ack(3000, &[]), 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert_eq!(o.res.last_cum_ackt, Some(2_600_000));
        assert_eq!(o.ca_rtt, Some(37_400_000));
    }

    /// (estimator's sample, controller's) for ACK `h` at 60 ms on six segments sent 1.3 ms
    /// apart whose head was retransmitted at 40 ms.
    fn samples_after_head_retransmitted(c: AckCx, h: &TcpHdr) -> (Option<Nanos>, Option<Nanos>) {
        let mut sb = sent_spaced(6);
        sb.mark_head_lost();
        let i = sb.next_lost().unwrap();
        sb.on_retransmit(i, 40_000_000);
        let mut st = SenderStats::default();
        let o = AckProcessor::default()
            .on_ack(&c, h, 0, &mut sb, &rtt(), &mut st)
            .unwrap();
        assert!(o.res.acked_retransmitted);
        (o.rtt_sample.map(|m| m.nanos), o.ca_rtt)
    }

    #[test]
    fn test_linux_samples_karn_then_sack_then_echo() {
        // The head was retransmitted: no sample from the cumulative part (Karn). Newly SACKed
        // segments give both samples (segments 3 and 4, sent at 3.9 and 5.2 ms); without one,
        // the echo does; without timestamps nothing is left to time.
        let c = linux_cx(0, 6000, 60_000_000);
        let mut h = ack(1000, &[(3000, 5000)]);
        h.ts_ecr = 20;
        let got = samples_after_head_retransmitted(c, &h);
        assert_eq!(got, (Some(56_100_000), Some(54_800_000)));
        let mut h = ack(1000, &[]);
        h.ts_ecr = 41;
        let got = samples_after_head_retransmitted(c, &h);
        assert_eq!(got, (Some(19_000_000), Some(19_000_000)));
        let c = AckCx { ts_on: false, ..c };
        assert_eq!(samples_after_head_retransmitted(c, &h), (None, None));
    }

    #[test]
    fn test_timestamp_samples_read_the_clock_at_its_phase() {
        // A segment stamped at clock tick 0 (sent in [0, 0.5 ms) with the clock half a tick
        // ahead) is acknowledged at 20.6 ms: the clock then reads 21.1 ticks, so the sample is
        // 21 ticks; with the clock at phase 0 it reads 20.6 and the sample is 20.
        let res = AckResult::default();
        let sample = |phase| {
            linux_rtt_samples(20_600_000, &res, None, true, Some(0), (1_000_000, phase))
                .0
                .map(|m| m.ticks)
        };
        assert_eq!(sample(500_000), Some(21));
        assert_eq!(sample(0), Some(20));
    }

    #[test]
    fn test_linux_samples_truncate_to_microseconds() {
        let res = AckResult {
            first_ackt: Some(1_234),
            rtt_xmit: Some(1_234),
            ..AckResult::default()
        };
        let (m, ca) = linux_rtt_samples(10_000_999, &res, res.rtt_xmit, true, None, (1_000_000, 0));
        // 10 000 µs - 1 µs: the stamps are whole µs (`tcp_mstamp`).
        assert_eq!(m.map(|m| (m.ticks, m.nanos)), Some((9, 9_999_000)));
        assert_eq!(ca, Some(9_999_000));
        // At least 1 µs.
        let (m, _) = linux_rtt_samples(1_500, &res, res.rtt_xmit, true, None, (1_000_000, 0));
        assert_eq!(m.map(|m| m.nanos), Some(1_000));
    }

    #[test]
    fn test_established_invalid_sack_blocks_ignored() {
        let mut sb = sent(4);
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        // Beyond snd_nxt, and inverted (RFC 2018 §3, §4).
        let h = ack(1000, &[(3000, 5000), (3000, 2000)]);
        let o = a.on_ack(&cx(0, 4000, true), &h, 0, &mut sb, &rtt(), &mut st);
        assert_eq!(o.unwrap().res.bytes_sacked, 0);
        assert_eq!(st.invalid_sack_blocks, 2);
    }

    #[test]
    fn test_established_rtt_sample_from_timestamp_only_when_advancing() {
        let mut sb = sent(4);
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        let c = AckCx {
            ts_on: true,
            now: 130_000_000, // our timestamp clock at 130 ticks of 1 ms
            ..cx(0, 4000, true)
        };
        let mut h = ack(1000, &[]);
        h.ts_ecr = 100;
        let o = a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).unwrap();
        assert_eq!(
            o.rtt_sample.map(|m| m.nanos),
            Some(30_000_000),
            "30 ticks of 1 ms"
        );
        // A duplicate ACK echoes an old timestamp: no sample (RFC 7323 §4.3).
        let c = AckCx { snd_una: 1000, ..c };
        let mut h = ack(1000, &[(2000, 3000)]);
        h.ts_ecr = 100;
        let o = a.on_ack(&c, &h, 0, &mut sb, &rtt(), &mut st).unwrap();
        assert_eq!(o.rtt_sample, None);
    }

    /// Scoreboard of `n` segments (sent at 1 ms steps); ops: 0 SACK a block, 1 cumulative ACK
    /// via the full path, 2 mark the head lost, 3 retransmit the first lost record.
    fn board_after(n: u64, ops: &[(u8, u64, u64)]) -> (Scoreboard, AckProcessor, u64) {
        let mut sb = Scoreboard::new(3);
        for i in 0..n {
            sb.on_send_new(i * MSS as u64, MSS, i * 1_000_000);
        }
        let mut a = AckProcessor::default();
        let mut st = SenderStats::default();
        let mut una = 0u64;
        let end = n * MSS as u64;
        for &(op, x, y) in ops {
            let l = (x % n) * MSS as u64;
            let r = (l + y * MSS as u64).min(end);
            match op {
                0 if l >= una && r > l => {
                    let _ = a.on_ack(
                        &cx(una, end, true),
                        &ack(una, &[(l, r)]),
                        0,
                        &mut sb,
                        &rtt(),
                        &mut st,
                    );
                }
                1 if l > una => {
                    let _ = a.on_ack(
                        &cx(una, end, true),
                        &ack(l, &[]),
                        0,
                        &mut sb,
                        &rtt(),
                        &mut st,
                    );
                    una = l;
                }
                2 => {
                    sb.mark_head_lost();
                }
                3 => {
                    if let Some(i) = sb.next_lost() {
                        sb.on_retransmit(i, 40_000_000);
                    }
                }
                _ => {}
            }
        }
        (sb, a, una)
    }

    proptest::proptest! {
        /// The fast path does exactly what the full path does on every ACK it accepts: same
        /// outcome, scoreboard, rate sampler, counters; and it accepts only in-order ACKs on a
        /// clean scoreboard.
        #[test]
        fn prop_in_order_ack_matches_full_path(
            n in 1u64..30,
            ops in proptest::collection::vec((0u8..6, 0u64..40, 1u64..6), 0..8),
            to in 0u64..35,
            wnd in 0u16..3,
            ts in proptest::option::of(1u32..60),
            sacks in 0usize..2,
            mode in 0u8..4,
        ) {
            let (mut sb1, mut a1, una) = board_after(n, &ops);
            let (mut sb2, mut a2, _) = board_after(n, &ops);
            let end = n * MSS as u64;
            let rtt_sampling = match mode {
                0 => RttSamplingCfg::Timestamps,
                1 => RttSamplingCfg::Linux,
                _ => RttSamplingCfg::Linux26,
            };
            let c = AckCx {
                ts_on: ts.is_some(),
                rtt_sampling,
                ca_rtt_stamp: mode == 3,
                ..cx(una, end, true)
            };
            let mut h = ack(to * MSS as u64 / 2, &[(una, end)][..sacks]);
            h.wnd = 999 + wnd;
            h.ts_ecr = ts.unwrap_or(0);
            let accepted = AckProcessor::in_order(&c, &h, 0, &sb1);
            let clean = sb1.sacked_bytes + sb1.lost_bytes + sb1.retrans_bytes == 0;
            let target = h.ack.wrapping_sub(wire_seq(ISN, 0)) as u64;
            proptest::prop_assert_eq!(
                accepted.is_some(),
                clean && sacks == 0 && target > una && target <= end
            );
            let Some(to_off) = accepted else { return Ok(()); };
            let mut st1 = SenderStats::default();
            let st2 = SenderStats::default();
            let full = a1.on_ack(&c, &h, 0, &mut sb1, &rtt(), &mut st1).unwrap();
            let mut fast_res = AckResult::default();
            let fast = a2.on_in_order_ack(&c, &h, to_off, &mut sb2, &rtt(), &mut fast_res);
            proptest::prop_assert!(full.advanced && !full.is_dup && !full.fin_acked);
            proptest::prop_assert_eq!(full.dsack_end, None);
            proptest::prop_assert_eq!(full.snd_una, to_off);
            proptest::prop_assert_eq!(full.rwnd, fast.rwnd);
            proptest::prop_assert_eq!(full.prior_in_flight, fast.prior_in_flight);
            proptest::prop_assert_eq!(full.rtt_sample, fast.rtt_sample);
            proptest::prop_assert_eq!(full.ca_rtt, fast.ca_rtt);
            proptest::prop_assert_eq!(format!("{:?}", full.res), format!("{fast_res:?}"));
            proptest::prop_assert_eq!(format!("{a1:?}"), format!("{a2:?}"));
            proptest::prop_assert_eq!(format!("{st1:?}"), format!("{st2:?}"));
            proptest::prop_assert_eq!(format!("{:?}", sb1.rate), format!("{:?}", sb2.rate));
            proptest::prop_assert_eq!(
                (sb1.pipe(), sb1.out_bytes, sb1.len()),
                (sb2.pipe(), sb2.out_bytes, sb2.len())
            );
            let segs1: Vec<String> = sb1.iter().map(|s| format!("{s:?}")).collect();
            let segs2: Vec<String> = sb2.iter().map(|s| format!("{s:?}")).collect();
            proptest::prop_assert_eq!(segs1, segs2);
        }
    }
}
