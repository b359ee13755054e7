//! Connection establishment of the sending end (active open, RFC 9293 §3.5), sans I/O.
//!
//! Owns the SYN (its options and window, RFC 7323 §2.2–2.3), the SYN retransmission schedule
//! (exponential backoff from the initial RTO, RFC 6298 §5.7, after `syn_linear_timeouts` linear
//! retries: Linux's `tcp_syn_linear_timeouts`, BSD's `tcp_syn_backoff[]`; BSD adds its RTO slop
//! to each re-armed SYN timer), giving up after `syn_retries` or, with `syn_give_up`, at the
//! connection-establishment timer (BSD `tcp_keepinit`), and the processing of
//! the SYN-ACK: which options are on (timestamps RFC 7323, SACK RFC 2018, window scaling
//! RFC 7323 §2.3), the segment size (RFC 9293 §3.7.1) and the handshake RTT sample (Karn,
//! RFC 6298 §2). It builds headers and returns times; [`super::TcpSender`] puts them on the
//! wire and arms its timers.

use crate::packet::{self, flags, opts, TcpHdr};
use crate::tcp::config::TcpConfig;
use crate::time::Nanos;

/// The SYN side of the three-way handshake.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handshake {
    /// SYNs sent so far (the first one included).
    pub tries: u32,
    /// When the last SYN was sent.
    pub sent_at: Nanos,
    /// When the first SYN was sent (the connection-establishment timer starts then).
    pub first_at: Nanos,
    /// Window-scale shift we announce (0 when the peer does not scale).
    pub rcv_wscale: u8,
    /// Knob `route_rtt_seed` with a cached route RTT (XNU `tcp_getrt_rtt`, see
    /// [`crate::tcp::rtt::RttEstimator::seed_from_route`]): the first SYN's interval and the
    /// `TCP_REXMTVAL` its retransmissions multiply, instead of `initial_rto`.
    pub route_syn: Option<(Nanos, Nanos)>,
}

/// A SYN to send, and when to send it again if no SYN-ACK comes.
#[derive(Clone, Copy, Debug)]
pub struct Syn {
    pub hdr: TcpHdr,
    /// Length on the wire (IP and TCP headers with the SYN options).
    pub wire_len: u32,
    /// This SYN repeats an earlier one.
    pub retransmit: bool,
    /// Retransmission time of this SYN.
    pub retry_at: Nanos,
}

/// What the SYN-ACK settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    pub ts_on: bool,
    pub sack_on: bool,
    /// Shift applied to windows the peer advertises.
    pub snd_wscale: u8,
    /// Shift we announced (0 if the peer turned scaling off).
    pub rcv_wscale: u8,
    /// Payload bytes per full segment (MSS minus the timestamp option when on).
    pub smss: u32,
    /// The peer's window from the SYN-ACK (never scaled, RFC 7323 §2.2) and its raw field.
    pub rwnd: u64,
    pub wnd_raw: u16,
    /// The peer's timestamp, to echo.
    pub ts_recent: u32,
    /// Send time of the SYN for an RTT sample, if it was not retransmitted (Karn; RFC 6298 §2).
    pub rtt_from: Option<Nanos>,
}

/// Our advertised MSS: configured or first-hop MTU − 40 (RFC 9293 §3.7.1).
pub fn own_mss(cfg: &TcpConfig, mtu: u32) -> u32 {
    if cfg.mss > 0 {
        cfg.mss
    } else {
        mtu - packet::IPV4_HEADER - packet::TCP_HEADER
    }
}

/// Whether the SYN we send offers the timestamps option (RFC 7323 §3.2): knob `timestamps`, and
/// `timestamps_offer` for a host that only answers a peer's offer (Windows XP / Server 2003,
/// python/tcplab/stacks/windows-xp.toml).
pub fn offers_timestamps(cfg: &TcpConfig) -> bool {
    cfg.timestamps && cfg.timestamps_offer
}

/// Whether the SYN we send carries the window-scale option (RFC 7323 §2.2) when our shift is
/// `rcv_wscale`: knob `window_scaling`, and with `window_scaling_offer_unscaled` off only when
/// the receive buffer needs a shift. Windows XP / Server 2003 (python/tcplab/stacks/windows-xp.toml):
/// p0f 2.0.x p0f.fp gives every XP SYN as 'M*,N,N,S' (no window scale) at windows up to 65,535 B
/// (16384, 17520, 64240, 65535, ...); p0f 3.00b p0f.fp 'Windows:XP' SYNs 'mss,nop,nop,sok' at
/// 16384 and 65535 and 'mss,nop,ws,nop,nop,sok' at 65535 with shifts 0-2 (tuned hosts); the
/// Windows 2000 registry reference (TcpWindowSize, technet cc938219) "automatically uses windows
/// scaling if the value of this entry is greater than 64 KB", and KB 224829 "attempts to use a
/// scale value that accommodates the new window size".
pub fn offers_window_scaling(cfg: &TcpConfig, rcv_wscale: u8) -> bool {
    cfg.window_scaling && (cfg.window_scaling_offer_unscaled || rcv_wscale > 0)
}

/// The window field of a SYN or SYN-ACK this host sends (never scaled, RFC 7323 §2.2): the
/// receive buffer, at most 65,535 B, and with knob `syn_window` at most that. Windows Vista /
/// 7 / Server 2008 (python/tcplab/stacks/windows-7.toml): 8,192 B beside window scale 8 — p0f
/// 3.09b p0f.fp, every 'Windows:7 or 8' SYN ('8192,0', '8192,2', '8192,8') and SYN+ACK
/// ('8192,0', '8192,8'); nmap's nmap-os-db (2015 revision), the SYN-ACKs of 69 of 74 Windows 7,
/// 24 of 28 Vista and 37 of 48 Server 2008 fingerprints to its six probes at W = 0x2000.
pub fn syn_window_field(cfg: &TcpConfig) -> u16 {
    let w = cfg.rcvbuf.min(u64::from(u16::MAX));
    let w = if cfg.syn_window > 0 {
        w.min(cfg.syn_window)
    } else {
        w
    };
    w as u16
}

/// Smallest window-scale shift with `buf >> shift ≤ 65535`, at most 14 (RFC 7323 §2.3).
pub fn wscale_for(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buf >> s) > u16::MAX as u64 {
        s += 1;
    }
    s
}

impl Handshake {
    /// Build the next SYN (the first or a retransmission) sent at `now` with timestamp `ts_val`.
    pub fn syn(&mut self, cfg: &TcpConfig, own_mss: u32, isn: u32, ts_val: u32, now: Nanos) -> Syn {
        let retransmit = self.tries > 0;
        self.tries += 1;
        self.sent_at = now;
        if !retransmit {
            self.first_at = now;
        }
        // Window scale: the smallest shift that lets the receive buffer be advertised (RFC 7323
        // §2.3), offered unless the host sends the option only for a buffer that needs a shift.
        self.rcv_wscale = if cfg.window_scaling {
            wscale_for(cfg.rcvbuf)
        } else {
            0
        };
        let mut o = opts::MSS;
        if offers_window_scaling(cfg, self.rcv_wscale) {
            o |= opts::WSCALE;
        }
        if cfg.sack {
            o |= opts::SACK_PERM;
        }
        if offers_timestamps(cfg) {
            o |= opts::TS;
        }
        let hdr = TcpHdr {
            seq: isn,
            ack: 0,
            flags: flags::SYN,
            opts: o,
            // The window in a SYN is never scaled (RFC 7323 §2.2).
            wnd: syn_window_field(cfg),
            mss: own_mss.min(u16::MAX as u32) as u16,
            wscale: self.rcv_wscale,
            ts_val,
            ..TcpHdr::default()
        };
        let wire_len = packet::IPV4_HEADER + packet::TCP_HEADER + packet::SYN_OPTIONS_LEN;
        // SYN retransmission with exponential backoff from the initial RTO (RFC 6298 §5.7),
        // after `syn_linear_timeouts` retries without backoff: Linux's tcp_syn_linear_timeouts
        // (ip-sysctl.rst's example: SYN timeouts 1, 1, 1, 1, 1, 2, 4 s with the default 4) and
        // BSD's tcp_syn_backoff[] = {1, 1, 1, 1, 1, 2, 4, 8, …} for SYN_SENT in tcp_timer_rexmt
        // (FreeBSD, XNU; the same schedule as 4). A BSD timer re-armed there goes through
        // TCPT_RANGESET, which adds tcp_rexmit_slop (`rto_slop`) before clamping; the first
        // SYN's timer is t_rxtcur = TCPTV_RTOBASE as set at creation, without it. XNU adds it
        // only once established (`rto_slop_established_only`, TCP_ADD_REXMTSLOP).
        let doublings = (self.tries - 1).saturating_sub(cfg.syn_linear_timeouts);
        let slop = if retransmit && !cfg.rto_slop_established_only {
            cfg.rto_slop
        } else {
            0
        };
        // A route with a cached RTT (knob `route_rtt_seed`; XNU tcp_output.c: a SYN sent with
        // t_rxtshift == 0 arms t_rxtcur from tcp_getrt_rtt; tcp_timers re-arms a SYN at
        // TCP_REXMTVAL × tcp_syn_backoff[], clamped to t_rttmin).
        let base = match self.route_syn {
            Some((first, _)) if !retransmit => first,
            Some((_, rexmtval)) => rexmtval.max(cfg.rto_min()),
            None => cfg.initial_rto,
        };
        let rto = base
            .saturating_mul(1 << doublings.min(20))
            .saturating_add(slop)
            .min(cfg.max_rto);
        let mut retry_at = now + rto;
        if cfg.syn_give_up > 0 {
            retry_at = retry_at.min(self.first_at + cfg.syn_give_up);
        }
        Syn {
            hdr,
            wire_len,
            retransmit,
            retry_at,
        }
    }

    /// At `now`, when the SYN timer fires: the attempt is over (SYN retries exhausted, or the
    /// connection-establishment timer has run out) and the connection fails instead of
    /// sending another SYN.
    pub fn gave_up(&self, cfg: &TcpConfig, now: Nanos) -> bool {
        self.tries > cfg.syn_retries
            || (cfg.syn_give_up > 0 && now >= self.first_at + cfg.syn_give_up)
    }

    /// Process a SYN-ACK; `None` if it does not acknowledge our SYN.
    pub fn on_syn_ack(
        &mut self,
        cfg: &TcpConfig,
        own_mss: u32,
        isn: u32,
        h: &TcpHdr,
    ) -> Option<Negotiated> {
        if h.ack != isn.wrapping_add(1) {
            return None;
        }
        let peer_mss = if h.opts & opts::MSS != 0 {
            h.mss as u32
        } else {
            536
        };
        // In use only if both the SYN and the SYN-ACK carry the option (RFC 7323 §3.2): a
        // SYN-ACK with one our SYN did not offer does not turn it on.
        let ts_on = offers_timestamps(cfg) && h.opts & opts::TS != 0;
        let sack_on = cfg.sack && h.opts & opts::SACK_PERM != 0;
        // Scaling is in use only if both the SYN and the SYN-ACK carry the option (RFC 7323
        // §2.2, §2.3): a SYN without it (Windows XP at its default window) leaves it off.
        let ws_on = offers_window_scaling(cfg, self.rcv_wscale) && h.opts & opts::WSCALE != 0;
        let snd_wscale = if ws_on { h.wscale.min(14) } else { 0 };
        if !ws_on {
            self.rcv_wscale = 0;
        }
        let mss = own_mss.min(peer_mss);
        Some(Negotiated {
            ts_on,
            sack_on,
            snd_wscale,
            rcv_wscale: self.rcv_wscale,
            smss: mss - if ts_on { packet::TS_OPTION_LEN } else { 0 },
            rwnd: h.wnd as u64, // SYN-ACK window is unscaled
            wnd_raw: h.wnd,
            ts_recent: h.ts_val,
            // RTT sample from the handshake unless the SYN was retransmitted (Karn; RFC 6298 §2).
            rtt_from: (self.tries == 1).then_some(self.sent_at),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn syn_ack(isn: u32, o: u8, mss: u16, wscale: u8) -> TcpHdr {
        TcpHdr {
            ack: isn.wrapping_add(1),
            flags: flags::SYN | flags::ACK,
            opts: o,
            mss,
            wscale,
            wnd: 65535,
            ts_val: 77,
            ..TcpHdr::default()
        }
    }

    /// Send SYNs until the handshake gives up; the gaps between them.
    fn retry_gaps(cfg: &TcpConfig) -> Vec<Nanos> {
        let mut hs = Handshake::default();
        let mut now = 0;
        let mut gaps = Vec::new();
        loop {
            let syn = hs.syn(cfg, 1460, 0, 0, now);
            gaps.push(syn.retry_at - now);
            now = syn.retry_at;
            if hs.gave_up(cfg, now) {
                return gaps;
            }
        }
    }

    #[test]
    fn test_syn_sent_timeout_backs_off_exponentially() {
        let cfg = TcpConfig {
            syn_retries: 4,
            ..TcpConfig::default()
        };
        assert_eq!(retry_gaps(&cfg), vec![S, 2 * S, 4 * S, 8 * S, 16 * S]);
    }

    #[test]
    fn test_syn_sent_timeout_linear_then_exponential() {
        // ip-sysctl.rst's example: 1, 1, 1, 1, 1, 2, 4 s with syn_linear_timeouts = 4.
        let cfg = TcpConfig {
            syn_retries: 6,
            syn_linear_timeouts: 4,
            ..TcpConfig::default()
        };
        assert_eq!(retry_gaps(&cfg), vec![S, S, S, S, S, 2 * S, 4 * S]);
    }

    #[test]
    fn test_syn_sent_bsd_schedule_with_slop_and_keepinit() {
        // FreeBSD 5.x: TCPTV_RTOBASE 3 s, tcp_syn_backoff {1, 1, 1, 1, 1, 2, 4, …}, 200 ms
        // tcp_rexmit_slop on every re-armed timer, TCP_MAXRXTSHIFT 12 retries, keep-init 75 s:
        // SYNs at 0, 3, 6.2, 9.4, 12.6, 15.8, 22.0, 34.2 and 58.4 s; abandoned at 75 s.
        let ms = S / 1000;
        let cfg = TcpConfig {
            initial_rto: 3 * S,
            max_rto: 64 * S,
            rto_slop: 200 * ms,
            syn_linear_timeouts: 4,
            syn_retries: 12,
            syn_give_up: 75 * S,
            ..TcpConfig::default()
        };
        let r = 3200 * ms;
        let gaps = retry_gaps(&cfg);
        assert_eq!(
            gaps,
            vec![
                3 * S,
                r,
                r,
                r,
                r,
                6200 * ms,
                12_200 * ms,
                24_200 * ms,
                16_600 * ms
            ]
        );
        assert_eq!(gaps.iter().sum::<Nanos>(), 75 * S, "given up at keep-init");
        // Without the give-up timer the ninth SYN waits 48.2 s and retries go on.
        let open = TcpConfig {
            syn_give_up: 0,
            ..cfg
        };
        let gaps = retry_gaps(&open);
        assert_eq!(gaps.len(), 13);
        assert_eq!(gaps[8], 48_200 * ms);
        assert_eq!(gaps[9], 64 * S, "slop added before the 64 s clamp");
    }

    #[test]
    fn test_syn_sent_timeout_capped_by_max_rto() {
        let cfg = TcpConfig {
            syn_retries: 5,
            max_rto: 3 * S,
            ..TcpConfig::default()
        };
        assert_eq!(retry_gaps(&cfg), vec![S, 2 * S, 3 * S, 3 * S, 3 * S, 3 * S]);
    }

    #[test]
    fn test_syn_options_follow_config() {
        let cfg = TcpConfig {
            rcvbuf: 1 << 20,
            ..TcpConfig::default()
        };
        let mut hs = Handshake::default();
        let syn = hs.syn(&cfg, 1460, 1000, 5, 0);
        assert!(!syn.retransmit);
        assert_eq!(syn.hdr.seq, 1000);
        assert_eq!(syn.hdr.flags, flags::SYN);
        assert_eq!(syn.hdr.wnd, 65535, "the SYN's window is not scaled");
        assert_eq!(syn.hdr.wscale, 5, "1 MiB >> 5 fits 16 bits, >> 4 does not");
        assert_eq!(syn.hdr.mss, 1460);
        assert_eq!(syn.hdr.ts_val, 5);
        let off = TcpConfig {
            sack: false,
            timestamps: false,
            window_scaling: false,
            ..cfg
        };
        let syn = hs.syn(&off, 1460, 1000, 5, 0);
        assert!(syn.retransmit);
        assert_eq!(syn.hdr.opts, opts::MSS);
        assert_eq!(syn.hdr.wscale, 0);
    }

    #[test]
    fn test_syn_ack_negotiates_options_and_mss() {
        let cfg = TcpConfig {
            rcvbuf: 1 << 20,
            ..TcpConfig::default()
        };
        let mut hs = Handshake::default();
        hs.syn(&cfg, 1460, 9, 0, 123);
        let all = opts::MSS | opts::TS | opts::SACK_PERM | opts::WSCALE;
        let n = hs
            .on_syn_ack(&cfg, 1460, 9, &syn_ack(9, all, 1400, 20))
            .unwrap();
        assert!(n.ts_on && n.sack_on);
        assert_eq!(
            n.snd_wscale, 14,
            "the peer's shift is capped at 14 (RFC 7323 §2.3)"
        );
        assert_eq!(n.rcv_wscale, 5);
        assert_eq!(n.smss, 1400 - packet::TS_OPTION_LEN);
        assert_eq!((n.rwnd, n.wnd_raw, n.ts_recent), (65535, 65535, 77));
        assert_eq!(n.rtt_from, Some(123));

        // No options from the peer: MSS 536, nothing else on, and our shift withdrawn.
        let mut hs = Handshake::default();
        hs.syn(&cfg, 1460, 9, 0, 0);
        let n = hs.on_syn_ack(&cfg, 1460, 9, &syn_ack(9, 0, 0, 0)).unwrap();
        assert!(!n.ts_on && !n.sack_on);
        assert_eq!((n.snd_wscale, n.rcv_wscale, n.smss), (0, 0, 536));
    }

    #[test]
    fn test_answer_only_host_does_not_offer_or_use_timestamps() {
        // Windows XP / Server 2003 (python/tcplab/stacks/windows-xp.toml): timestamps on but
        // not offered. Its SYN has MSS, SACK-permitted and window scale, no timestamp (p0f's
        // XP SYN fingerprints), and a SYN-ACK that carries one anyway does not turn it on: the
        // option is in use only when both the SYN and the SYN-ACK carry it (RFC 7323 §3.2), so
        // the full segment keeps its 12 bytes.
        let cfg = TcpConfig {
            timestamps: true,
            timestamps_offer: false,
            ..TcpConfig::default()
        };
        let mut hs = Handshake::default();
        let syn = hs.syn(&cfg, 1460, 9, 5, 0);
        assert_eq!(syn.hdr.opts, opts::MSS | opts::SACK_PERM | opts::WSCALE);
        let all = opts::MSS | opts::TS | opts::SACK_PERM | opts::WSCALE;
        let n = hs
            .on_syn_ack(&cfg, 1460, 9, &syn_ack(9, all, 1460, 7))
            .unwrap();
        assert!(!n.ts_on, "a SYN-ACK's timestamp we did not offer");
        assert!(n.sack_on);
        assert_eq!(n.smss, 1460);
        // `timestamps_offer` means nothing with the option off.
        let off = TcpConfig {
            timestamps: false,
            timestamps_offer: true,
            ..cfg
        };
        let mut hs = Handshake::default();
        assert_eq!(hs.syn(&off, 1460, 9, 5, 0).hdr.opts & opts::TS, 0);
        assert!(!offers_timestamps(&off));
    }

    #[test]
    fn test_syn_window_caps_the_window_field_of_the_syn() {
        // Windows Vista / 7 / Server 2008 (knob syn_window, stacks/windows-7.toml): the SYN
        // offers 8,192 B (p0f 3.09b p0f.fp 'Windows:7 or 8' SYNs '8192,*'), whatever the
        // buffer above it; a smaller buffer is offered as it is, and 0 means the buffer.
        let win7 = TcpConfig {
            rcvbuf: 65535,
            syn_window: 8192,
            ..TcpConfig::default()
        };
        let mut hs = Handshake::default();
        assert_eq!(hs.syn(&win7, 1460, 9, 0, 0).hdr.wnd, 8192);
        let small = TcpConfig {
            rcvbuf: 4096,
            ..win7.clone()
        };
        assert_eq!(syn_window_field(&small), 4096);
        let plain = TcpConfig {
            syn_window: 0,
            ..win7.clone()
        };
        assert_eq!(syn_window_field(&plain), 65535);
        let big = TcpConfig {
            rcvbuf: 16 << 20,
            ..plain
        };
        assert_eq!(syn_window_field(&big), 65535, "never scaled");
    }

    #[test]
    fn test_window_scale_offered_only_for_a_buffer_that_needs_a_shift() {
        // Windows XP / Server 2003 (stacks/windows-xp.toml, knob window_scaling_offer_unscaled
        // off): at the default 16,384-B window its SYN is MSS, NOP, NOP, SACK permitted (p0f's
        // XP SYN fingerprints), and the connection does not scale even if a SYN-ACK carries the
        // option (RFC 7323 §2.2); a window above 64 KB (TcpWindowSize 262,144 B) is offered with
        // the smallest shift that covers it (KB 224829), and then scales both ways.
        let xp = TcpConfig {
            rcvbuf: 16384,
            window_scaling: true,
            window_scaling_offer_unscaled: false,
            timestamps_offer: false,
            ..TcpConfig::default()
        };
        let mut hs = Handshake::default();
        let syn = hs.syn(&xp, 1460, 9, 0, 0);
        assert_eq!(syn.hdr.opts, opts::MSS | opts::SACK_PERM);
        assert_eq!(syn.hdr.wnd, 16384);
        let n = hs
            .on_syn_ack(&xp, 1460, 9, &syn_ack(9, opts::MSS | opts::WSCALE, 1460, 7))
            .unwrap();
        assert_eq!(
            (n.snd_wscale, n.rcv_wscale),
            (0, 0),
            "never offered: unscaled"
        );
        let big = TcpConfig {
            rcvbuf: 256 << 10,
            ..xp
        };
        let mut hs = Handshake::default();
        let syn = hs.syn(&big, 1460, 9, 0, 0);
        assert_eq!(syn.hdr.opts, opts::MSS | opts::SACK_PERM | opts::WSCALE);
        assert_eq!((syn.hdr.wscale, syn.hdr.wnd), (3, 65535));
        let n = hs
            .on_syn_ack(
                &big,
                1460,
                9,
                &syn_ack(9, opts::MSS | opts::WSCALE, 1460, 7),
            )
            .unwrap();
        assert_eq!((n.snd_wscale, n.rcv_wscale), (7, 3));
        // Every other stack (the default): shift 0 offered too.
        let mut hs = Handshake::default();
        let plain = TcpConfig {
            window_scaling_offer_unscaled: true,
            ..xp
        };
        let syn = hs.syn(&plain, 1460, 9, 0, 0);
        assert_eq!(
            (syn.hdr.opts & opts::WSCALE, syn.hdr.wscale),
            (opts::WSCALE, 0)
        );
    }

    #[test]
    fn test_syn_ack_wrong_ack_or_retransmitted_syn() {
        let cfg = TcpConfig::default();
        let mut hs = Handshake::default();
        hs.syn(&cfg, 1460, u32::MAX, 0, 0);
        // The ISN + 1 wraps to 0.
        assert!(hs
            .on_syn_ack(&cfg, 1460, u32::MAX, &syn_ack(5, 0, 0, 0))
            .is_none());
        assert!(hs
            .on_syn_ack(&cfg, 1460, u32::MAX, &syn_ack(u32::MAX, 0, 0, 0))
            .is_some());
        // Karn: no RTT sample once the SYN was sent twice.
        hs.syn(&cfg, 1460, u32::MAX, 0, S);
        let n = hs.on_syn_ack(&cfg, 1460, u32::MAX, &syn_ack(u32::MAX, 0, 0, 0));
        assert_eq!(n.unwrap().rtt_from, None);
    }

    #[test]
    fn test_wscale_for_smallest_shift() {
        assert_eq!(wscale_for(65535), 0);
        assert_eq!(wscale_for(65536), 1);
        assert_eq!(wscale_for(6 << 20), 7);
        assert_eq!(wscale_for(u64::MAX), 14);
    }
}
