//! The data-receiving end of a bulk TCP connection (iperf's server): passive open with option
//! negotiation, then a [`RecvCore`] for reassembly, ACK policy, SACK and window, plus the
//! timestamp echo (RFC 7323 §4.3). The model does not send data or its own FIN; a FIN from the
//! peer is acknowledged.

pub mod autotune;
pub mod recv_core;
pub mod stretch;

use super::config::TcpConfig;
use super::rtt::{ts_ticks, RttEstimator};
use super::sender::{syn_window_field, wscale_for};
use super::seq::Seq;
use crate::endpoint::Cx;
use crate::packet::{self, flags, opts, Packet, Proto, TcpHdr};
use crate::rng::Rng;
use crate::time::Nanos;
use autotune::Autotune;
use recv_core::{RecvCore, RecvCoreConfig};
use std::collections::VecDeque;
use stretch::{StretchCfg, XnuStretch};

/// The receiver's timestamp clock (RFC 7323 §5.4): ticks of `cfg.clock_granularity` at the
/// host's phase (knob `clock_phase`).
fn ts_clock(now: Nanos, cfg: &TcpConfig) -> u32 {
    ts_ticks(now + cfg.clock_phase, cfg.clock_granularity)
}

pub struct TcpReceiver {
    flow: u32,
    peer: u32,
    node: u16,
    peer_node: u16,
    cfg: TcpConfig,
    mtu: u32,
    iss: u32,
    rx: Option<RecvCore>,
    ts_on: bool,
    sack_on: bool,
    wscale: u8,
    syn_opts: u8,
    peer_mss: u32,
    ts_recent: u32,
    last_ack_sent: u32,
    /// Bytes after which a sized transfer counts as complete, and when that happened.
    target: Option<u64>,
    completed_at: Option<Nanos>,
    /// Payload bytes of a full segment from the peer.
    seg_mss: u32,
    synack_at: Nanos,
    /// Round-trip time measured from the handshake (SYN-ACK sent → first data segment).
    rtt_est: Option<Nanos>,
    /// When the last data segment arrived, and the silence after which data re-enters
    /// quick-ACK mode (the RTO of the handshake's sample; `u64::MAX` until it is known).
    last_data_at: Nanos,
    idle_quickack_after: Nanos,
    /// Receive-buffer autotuning, once data flows (with `rcvbuf_autotune_max`).
    tune: Option<Autotune>,
    /// Stream for `quirk_invalid_sack_fraction`.
    rng: Rng,
    /// A previous connection's out-of-order buffer, for the next `RecvCore` ([`Self::renew`]).
    spare_buf: VecDeque<(u64, u64)>,
    /// XNU's stretch ACKs (knob `stretch_ack_segments`), once data flows.
    stretch: Option<XnuStretch>,
    /// In-order data segments since the last ACK (XNU `t_unacksegs`), for `stretch`.
    unacked_segs: u32,
}

impl TcpReceiver {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        _me: u32,
        peer: u32,
        node: u16,
        peer_node: u16,
        cfg: TcpConfig,
        mtu: u32,
        rng: Rng,
    ) -> Self {
        TcpReceiver {
            flow,
            peer,
            node,
            peer_node,
            cfg,
            mtu,
            iss: 0,
            rx: None,
            ts_on: false,
            sack_on: false,
            wscale: 0,
            syn_opts: 0,
            peer_mss: 536,
            ts_recent: 0,
            last_ack_sent: 0,
            target: None,
            completed_at: None,
            seg_mss: 536,
            synack_at: 0,
            rtt_est: None,
            last_data_at: 0,
            idle_quickack_after: u64::MAX,
            tune: None,
            rng,
            spare_buf: VecDeque::new(),
            stretch: None,
            unacked_segs: 0,
        }
    }

    /// Become `fresh` (another connection in this receiver's place: a pooled background slot),
    /// keeping this one's out-of-order buffer for the new connection's receive half, so that it
    /// allocates nothing.
    pub fn renew(&mut self, fresh: TcpReceiver) {
        let buf = match self.rx.take() {
            Some(core) => core.into_buffer(),
            None => std::mem::take(&mut self.spare_buf),
        };
        *self = fresh;
        self.spare_buf = buf;
    }

    /// Record the completion time once `bytes` have been delivered.
    pub fn set_target(&mut self, bytes: Option<u64>) {
        self.target = bytes;
    }

    pub fn bytes_delivered(&self) -> u64 {
        self.rx.as_ref().map_or(0, |r| r.stats().bytes_delivered)
    }

    pub fn segments_received(&self) -> u64 {
        self.rx.as_ref().map_or(0, |r| r.stats().segments_received)
    }

    pub fn core(&self) -> Option<&RecvCore> {
        self.rx.as_ref()
    }

    pub fn completion_time(&self, _target: u64) -> Option<Nanos> {
        self.completed_at
    }

    fn own_mss(&self) -> u32 {
        if self.cfg.mss > 0 {
            self.cfg.mss
        } else {
            self.mtu - packet::IPV4_HEADER - packet::TCP_HEADER
        }
    }

    fn ts_now(&self, now: Nanos) -> u32 {
        ts_clock(now, &self.cfg)
    }

    #[inline]
    pub fn poll_at(&self) -> Option<Nanos> {
        self.rx.as_ref().and_then(|r| r.poll_at())
    }

    pub fn on_timer(&mut self, cx: &mut Cx) {
        let due = match self.rx.as_mut() {
            Some(r) => {
                if let Some(st) = self.stretch.as_mut() {
                    if r.delack_deadline().is_some_and(|t| cx.now >= t) {
                        // XNU tcp_timer.c, TCPT_DELACK: a firing while stretching resets it.
                        st.on_delack_timer(cx.now, self.unacked_segs);
                        r.set_ack_every(self.cfg.delack_segments);
                    }
                }
                r.on_timer(cx.now)
            }
            None => false,
        };
        if due {
            self.send_ack(cx);
        }
    }

    fn emit(&self, cx: &mut Cx, hdr: TcpHdr, wire_len: u32) {
        cx.send(Packet {
            ep: self.peer,
            flow: self.flow,
            src: self.node,
            dst: self.peer_node,
            proto: Proto::Tcp,
            frame_cont: false,
            wire_len,
            payload: 0,
            udp_seq: 0,
            tcp: hdr,
        });
    }

    fn on_syn(&mut self, p: &Packet, cx: &mut Cx) {
        let h = &p.tcp;
        self.syn_opts = h.opts;
        // A passive open answers the peer's timestamp offer when the option is on (RFC 7323
        // §3.2: a SYN-ACK may carry it only if the SYN did); `timestamps_offer` concerns only
        // the SYN a host sends, so a host that never offers (Windows XP / Server 2003,
        // stacks/windows-xp.toml) still answers here.
        self.ts_on = self.cfg.timestamps && h.opts & opts::TS != 0;
        self.sack_on = self.cfg.sack && h.opts & opts::SACK_PERM != 0;
        let ws_on = self.cfg.window_scaling && h.opts & opts::WSCALE != 0;
        // The shift must cover the largest buffer autotuning may reach (RFC 7323 §2.3).
        let max_buf = self
            .cfg
            .rcvbuf
            .max(self.cfg.rcvbuf_autotune_max.unwrap_or(0));
        self.wscale = if ws_on { wscale_for(max_buf) } else { 0 };
        self.peer_mss = if h.opts & opts::MSS != 0 {
            h.mss as u32
        } else {
            536
        };
        // Our ISN: any value works for a receiver that sends no data; derived from the peer's so
        // it is deterministic without another random stream.
        self.iss = h.seq.wrapping_mul(0x9E37_79B9).wrapping_add(0x1234_5678);
        self.ts_recent = h.ts_val;
        if self.rx.is_none() {
            let mss = self.own_mss().min(self.peer_mss);
            let seg = mss - if self.ts_on { packet::TS_OPTION_LEN } else { 0 };
            let rcfg = RecvCoreConfig {
                // Windows' default algorithm (knob `rcvbuf_round_to_mss`, KB 224829) rounds the
                // window up to whole segments for the established connection; the SYN-ACK
                // still offers `rcvbuf` (below).
                rcvbuf: self.cfg.established_rcvbuf(seg, self.wscale),
                mss: seg,
                delayed_ack: self.cfg.delayed_ack,
                delack_segments: self.cfg.delack_segments.max(1),
                delack_timeout_ns: self.cfg.delack_timeout.max(1),
                quickack_segments: self.cfg.quickack_segments,
                quickack_on_ooo: self.cfg.quickack_on_ooo,
                quickack_on_growth: self.cfg.quickack_on_growth,
                quickack_window_sized: self.cfg.quickack_window_sized,
                skb_truesize: self.cfg.rcv_skb_truesize,
                // Linux ≥ 2.6.15 halves the window of tcp_rmem[2] (`grow_target_rmem_max`):
                // the autotuning maximum, or, with a buffer the application set, that buffer
                // (the host assumed tuned to at least it).
                grow_target: if self.cfg.grow_target_rmem_max {
                    self.cfg
                        .rcvbuf_autotune_max
                        .unwrap_or(0)
                        .max(self.cfg.rcvbuf)
                } else {
                    0
                },
                grow_window_on_ooo: self.cfg.grow_window_on_ooo,
                comp_sack_nr: self.cfg.comp_sack_nr,
                comp_sack_delay_ns: self.cfg.comp_sack_delay.max(1),
                sack: self.sack_on,
                dsack: self.sack_on && self.cfg.dsack,
                // RFC 2018 §3: 3 blocks fit beside the timestamp option, 4 without it.
                max_sack_blocks: if self.ts_on { 3 } else { 4 },
                wscale: self.wscale,
                ooo_uses_buffer: true,
                app_read_bps: self.cfg.app_read_rate,
                wnd_update_segments: 2,
                wnd_rule: self.cfg.rcv_wnd_rule,
                unscaled_max: self.cfg.rcv_wnd_unscaled_max,
                accept_beyond_window: self.cfg.rcv_accept_beyond_window,
            };
            let irs = h.seq.wrapping_add(1);
            self.seg_mss = rcfg.mss;
            match RecvCore::new_in(rcfg, irs, std::mem::take(&mut self.spare_buf)) {
                Ok(mut r) => {
                    // Linux: the offered window starts small (rcv_ssthresh) and grows
                    // (`RecvCore::grow_clamp`): a number of segments, or (≥ 4.19) bytes rounded
                    // down to whole segments.
                    let mss = u64::from(self.seg_mss);
                    let initial = match self.cfg.rwnd_initial_segments {
                        0 => self.cfg.rwnd_initial_bytes / mss * mss,
                        n => u64::from(n) * mss,
                    };
                    if initial > 0 {
                        r.set_initial_clamp(initial);
                    }
                    self.rx = Some(r);
                    if self.cfg.stretch_ack_segments > 0 {
                        // XNU `tcp_newtcpcb`: a connection starts waiting (stretch.rs).
                        self.stretch = Some(XnuStretch::new(StretchCfg {
                            segments: self.cfg.stretch_ack_segments,
                            window: self.cfg.stretch_ack_window,
                            idle: self.cfg.stretch_ack_idle,
                            wait_packets: self.cfg.stretch_ack_wait,
                        }));
                    }
                }
                Err(_) => return,
            }
        }
        let mut o = 0;
        if h.opts & opts::MSS != 0 {
            o |= opts::MSS;
        }
        if ws_on {
            o |= opts::WSCALE;
        }
        if self.sack_on {
            o |= opts::SACK_PERM;
        }
        if self.ts_on {
            o |= opts::TS;
        }
        // The SYN-ACK's window: the buffer before any rounding to segments (KB 224829: the
        // first window is 16K; p0f 3.00b p0f.fp gives XP's SYN+ACK windows as the fixed 16384
        // or 65535, where it writes 'mss*N' for stacks that size them in segments), and at most
        // knob `syn_window` (Windows Vista / 7 / Server 2008: 8,192 B; p0f 3.09b p0f.fp,
        // nmap-os-db; sender/handshake.rs `syn_window_field`).
        let syn_wnd = self
            .rx
            .as_ref()
            .map_or(0, |r| r.syn_window().min(syn_window_field(&self.cfg)));
        let hdr = TcpHdr {
            seq: self.iss,
            ack: h.seq.wrapping_add(1),
            flags: flags::SYN | flags::ACK,
            opts: o,
            wnd: syn_wnd,
            mss: self.own_mss().min(u16::MAX as u32) as u16,
            wscale: self.wscale,
            ts_val: self.ts_now(cx.now),
            ts_ecr: h.ts_val,
            ..TcpHdr::default()
        };
        self.last_ack_sent = h.seq.wrapping_add(1);
        self.synack_at = cx.now;
        self.emit(
            cx,
            hdr,
            packet::IPV4_HEADER + packet::TCP_HEADER + packet::SYN_OPTIONS_LEN,
        );
    }

    fn send_ack(&mut self, cx: &mut Cx) {
        let Some(rx) = self.rx.as_mut() else { return };
        let f = rx.ack_fields();
        let mut hdr = TcpHdr {
            seq: self.iss.wrapping_add(1),
            ack: f.ack,
            flags: flags::ACK,
            opts: if self.ts_on { opts::TS } else { 0 },
            wnd: f.window.min(u16::MAX as u32) as u16,
            ts_val: ts_clock(cx.now, &self.cfg),
            ts_ecr: self.ts_recent,
            n_sack: f.n_sack,
            ..TcpHdr::default()
        };
        if f.n_sack > 0 {
            // Otherwise both are all zeros (`ack_fields` fills only the blocks it reports).
            hdr.sack = f.sack;
        }
        let p = self.cfg.quirk_invalid_sack_fraction;
        if p > 0.0 {
            // Quirk (FreeBSD 5.3 as a receiver, Jansen & McGregor 2005): some SACK blocks carry
            // wrong sequence numbers. The exact corruption is not published; modelled as a block
            // with its edges swapped, which no correct receiver can send (RFC 2018 §3) and which a
            // sender and a trace analysis recognise as invalid.
            for b in hdr.sack.iter_mut().take(f.n_sack as usize) {
                if self.rng.chance(p) {
                    *b = (b.1, b.0);
                }
            }
        }
        rx.on_fields_sent(&f);
        self.unacked_segs = 0;
        self.last_ack_sent = f.ack;
        let wire = packet::IPV4_HEADER
            + packet::TCP_HEADER
            + packet::tcp_options_len(self.ts_on, f.n_sack);
        self.emit(cx, hdr, wire);
    }

    /// Forced inline for the Python module's build, as `TcpSender::on_packet` (see there).
    #[inline(always)]
    pub fn on_packet(&mut self, p: &Packet, cx: &mut Cx) {
        let h = &p.tcp;
        if h.flags & flags::SYN != 0 {
            self.on_syn(p, cx);
            return;
        }
        let Some(rx) = self.rx.as_mut() else { return };
        // RFC 7323 §4.3: remember the timestamp of a segment that starts at or before the last
        // ACK we sent, so the echo reflects the earliest unacknowledged segment.
        if self.ts_on && h.opts & opts::TS != 0 && Seq(h.seq).le(Seq(self.last_ack_sent)) {
            self.ts_recent = h.ts_val;
        }
        let fin = h.flags & flags::FIN != 0;
        let now = cx.now;
        if self.rtt_est.is_none() {
            let rtt = now.saturating_sub(self.synack_at).max(1);
            self.rtt_est = Some(rtt);
            if self.cfg.quickack_segments > 0 {
                // The receiver's RTO after the handshake's sample, computed as the sender's is.
                let c = &self.cfg;
                let mut est = RttEstimator::new(
                    c.initial_rto,
                    c.rto_min(),
                    c.max_rto,
                    c.clock_granularity,
                    c.rto_min_on_variance,
                );
                est.on_sample(rtt);
                self.idle_quickack_after = est.rto();
            }
            if let Some(max) = self.cfg.rcvbuf_autotune_max {
                self.tune = Some(Autotune::new(
                    self.cfg.rcv_rtt,
                    self.cfg.rcvbuf_autotune_boost,
                    max,
                    self.cfg.clock_granularity,
                    rtt,
                    now,
                    rx.advertised_window(),
                    self.seg_mss,
                ));
            }
            // SACK compression timer: 5 % of the RTT, capped by `comp_sack_delay`
            // (ip-sysctl tcp_comp_sack_delay_ns); the handshake RTT stands for Linux's
            // min(rcv_rtt_est, srtt), both taken from the handshake on a passive opener.
            rx.set_comp_sack_delay((rtt / 20).min(self.cfg.comp_sack_delay));
        }
        if self.ts_on && p.payload > 0 && h.opts & opts::TS != 0 {
            if let Some(t) = self.tune.as_mut() {
                let ts_now = ts_clock(now, &self.cfg);
                t.on_ts_echo(ts_now, h.ts_ecr, p.payload, self.seg_mss);
            }
        }
        if p.payload > 0 {
            // Linux `tcp_event_data_recv` ("Too long gap"): data after a silence longer than the
            // receiver's RTO re-enters quick-ACK mode (`idle_quickack_after`, set with the
            // handshake's sample for personalities with quick-ACK mode), so a sender restarting
            // after idle is not held back by delayed ACKs. Measured on this machine's 6.18
            // kernel by scripts/linux-6/quickack-after-idle.pkt.
            if now.saturating_sub(self.last_data_at) > self.idle_quickack_after
                && self.last_data_at > 0
            {
                rx.enter_quickack();
            }
            self.last_data_at = now;
        }
        let had_ooo = match self.stretch.as_mut() {
            Some(st) => stretch_before(st, rx, &self.cfg, now, p, (self.ts_on, self.seg_mss)),
            None => false,
        };
        let mut out = rx.on_segment(now, h.seq, p.payload, fin);
        if let Some(st) = self.stretch.as_mut() {
            stretch_after(
                st,
                rx,
                &self.cfg,
                now,
                &out,
                had_ooo,
                &mut self.unacked_segs,
            );
        }
        if !out.ack_now
            && self.cfg.ack_on_push
            && h.flags & flags::PSH != 0
            && out.delivered > 0
            && !out.out_of_order
        {
            // Knob `ack_on_push` (XNU `tcp_cc_delay_ack`: "If TH_PUSH is set, take this as a
            // clue that we need to ACK with no delay", radar 3649245).
            out.ack_now = true;
        }
        if !out.ack_now
            && self.cfg.ack_pushed_on_read
            && h.flags & flags::PSH != 0
            && p.payload >= self.seg_mss
            && out.delivered > 0
            && !out.out_of_order
            && rx.unread_bytes() == 0
            && rx.ooo_bytes() == 0
        {
            // Knob `ack_pushed_on_read` (Linux 6.x tcp_measure_rcv_mss / tcp_cleanup_rbuf): the
            // application's read empties the queue right away, and the held ACK of a pushed
            // segment leaves with it. Measured on this machine's 6.18 kernel (kernel engine, one
            // CUBIC flow, 74 Mbit/s x 20 ms): runs of 7 segments ending in PSH draw ACKs of
            // 2, 2, 2 and 1 segments (24 % of ACKs cover one segment, 1.77 segments per ACK).
            out.ack_now = true;
        }
        if out.out_of_order {
            // Linux >= 6.16: the out-of-order queue's extent provisions the buffer at once
            // (autotune.rs `on_out_of_order`).
            if let Some(w) = self
                .tune
                .as_ref()
                .and_then(|t| t.on_out_of_order(rx.ooo_extent()))
            {
                rx.grow_rcvbuf(w);
            }
        }
        if out.delivered > 0 && !out.out_of_order {
            if let Some(t) = self.tune.as_mut() {
                // Dynamic right-sizing (autotune.rs): the round-trip estimate, then once per
                // estimated round trip the buffer from what the application took in it.
                t.on_in_order(now, rx.delivered_offset(), rx.advertised_window());
                let delivered = rx.stats().bytes_delivered;
                if let Some(w) = t.on_copied(now, delivered, rx.unread_bytes(), rx.ooo_extent()) {
                    rx.grow_rcvbuf(w);
                }
            }
        }
        if let (Some(t), None) = (self.target, self.completed_at) {
            if rx.stats().bytes_delivered >= t {
                self.completed_at = Some(cx.now);
            }
        }
        if out.ack_now {
            self.send_ack(cx);
        }
    }
}

/// XNU's streaming detection on a segment before it is processed (stretch.rs), its bytes
/// counted with the TCP header (`tlen + off`); returns whether out-of-order data was held.
/// Out of line, as [`stretch_after`]: the other receivers pay a branch.
#[inline(never)]
fn stretch_before(
    st: &mut XnuStretch,
    rx: &mut RecvCore,
    cfg: &TcpConfig,
    now: Nanos,
    p: &Packet,
    (ts_on, seg_mss): (bool, u32),
) -> bool {
    if p.payload > 0 {
        let hdr = packet::TCP_HEADER + if ts_on { packet::TS_OPTION_LEN } else { 0 };
        let other_flags = p.tcp.flags & !flags::ACK != 0;
        let on = st.on_data(now, u64::from(p.payload + hdr), seg_mss, other_flags);
        rx.set_ack_every(if on {
            cfg.stretch_ack_segments
        } else {
            cfg.delack_segments
        });
    }
    rx.ooo_bytes() > 0
}

/// After the segment: count it as unacknowledged (XNU `t_unacksegs`) and, if it went through
/// reassembly (out of order, or filling a hole: loss or reordering, XNU `tcp_reass`), ACK every
/// second segment again for `stretch_ack_wait` segments.
#[inline(never)]
fn stretch_after(
    st: &mut XnuStretch,
    rx: &mut RecvCore,
    cfg: &TcpConfig,
    now: Nanos,
    out: &recv_core::SegOutcome,
    had_ooo: bool,
    unacked_segs: &mut u32,
) {
    if out.delivered > 0 && !out.out_of_order {
        *unacked_segs = unacked_segs.saturating_add(1);
    }
    if out.out_of_order || (had_ooo && out.delivered > 0) {
        st.on_reassembly(now);
        rx.set_ack_every(cfg.delack_segments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_timestamp_clock_ticks_at_the_hosts_phase() {
        let mut cfg = TcpConfig::default();
        assert_eq!(ts_clock(1_600_000, &cfg), 1);
        // The clock half a tick ahead: it passed 2 ms at simulated 1.5 ms.
        cfg.clock_phase = 500_000;
        assert_eq!(ts_clock(1_499_999, &cfg), 1);
        assert_eq!(ts_clock(1_500_000, &cfg), 2);
    }
}
