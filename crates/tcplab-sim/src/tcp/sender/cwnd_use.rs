//! Whether an ACK may grow cwnd when the sender was not using its whole window (knob
//! `cwnd_limited_rule`): the stack's test of "was the sender limited by cwnd, or by the
//! application or the receive window?". An ACK that fails the test is passed to the congestion
//! controller with [`tcplab_cc::AckEvent::app_limited`] set, and `tcplab_cc::growth::may_grow`
//! refuses to grow the window on it. Each rule is one real stack's mechanism (sources beside each
//! variant, read for the facts only; nothing copied):
//!
//! * `half-used` (default; RFC 7661 spirit): the last send stopped on cwnd, or the flight before
//!   the ACK was at least half of cwnd. A flight held by the receive window lets cwnd grow to
//!   about twice that window.
//! * `linux-2.4` (Linux 2.4 to 2.6.14): grow only if the flight before the ACK filled cwnd.
//! * `linux-2.6.15` (2.6.15 to 2.6.25): that, or with TSO/GSO the room left is under a third of
//!   cwnd (`tcp_is_cwnd_limited`, "the inverse of cwnd check in tcp_tso_should_defer").
//! * `linux-2.6.26` (2.6.26 to 3.15): that (the TSO room also under 64 KB), or the room left is
//!   at most `tcp_max_burst` = `tp->reordering` segments (the duplicate-ACK threshold).
//! * `linux-6` (3.16 onwards as fixed in 2020 and 2022): cwnd-limited at some send of the current
//!   window of data, or in slow start while cwnd is under twice the most packets out in the
//!   window (`tcp_cwnd_validate` and `tcp_is_cwnd_limited`).
//! * `bsd` (4.4BSD lineage: FreeBSD to 8.x, OpenBSD): every ACK of new data outside fast recovery
//!   grows cwnd, up to TCP_MAXWIN << snd_scale.
//!
//! The TSO/GSO clauses apply with knob `tso`, as the model's TSO deferral does (Linux
//! `sk_can_gso`). Approximation: from 2.6.27 a Linux host with a scatter-gather NIC has software
//! GSO on by default ("net: use software GSO for SG+CSUM capable netdevices", e5a4a72d4f8), so a
//! real 2.6.29 or 2.6.39 host had them without hardware TSO.
//!
//! Not modelled here: RFC 2861's decay of an unused window after an RTO (Linux
//! `tcp_cwnd_application_limited`, 2.4 onwards), a separate mechanism.

// TSO/GSO frames up to 64 KB (Linux GSO_MAX_SIZE, include/linux/netdevice.h of 2.6.26) and
// `sysctl_tcp_tso_win_divisor` (default 3): the deferral model's constants.
use super::tso::{MAX_FRAME as GSO_MAX_SIZE, WIN_DIVISOR as TSO_WIN_DIVISOR};

/// Which rule decides that the sender was cwnd-limited (knob `cwnd_limited_rule`; module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CwndLimitedCfg {
    /// The last send stopped on cwnd, or the flight before the ACK was at least cwnd/2 (the
    /// RFC 7661 "pipeACK ≥ ½·cwnd" validity test, applied per ACK). The model's rule before
    /// 2026-11-29, kept for the generic stack and for stacks whose rule is unverified.
    #[serde(rename = "half-used")]
    HalfUsed,
    /// Linux 2.4 and 2.6 to 2.6.14: `tcp_ack` calls `tcp_cong_avoid` only when
    /// `prior_in_flight >= tp->snd_cwnd` (net/ipv4/tcp_input.c of 2.4.27 and 2.6.11; 2.6.13's
    /// tcp_cong.c `tcp_reno_cong_avoid` kept `if (in_flight < tp->snd_cwnd) return;`).
    #[serde(rename = "linux-2.4")]
    Linux24,
    /// Linux 2.6.15 to 2.6.25: `tcp_is_cwnd_limited(sk, in_flight)` (include/net/tcp.h, added by
    /// "[TCP]: fix congestion window update when using TSO deferal", f4805eded7d, S. Hemminger,
    /// Nov 2005, in 2.6.15): limited if in_flight >= cwnd; otherwise only a TSO-capable route
    /// (2.6.18 on: `sk_can_gso`) may count as limited, when `left * tcp_tso_win_divisor < cwnd`
    /// (divisor 3 by default; `left <= tcp_max_burst` = 3 only with the divisor set to 0).
    #[serde(rename = "linux-2.6.15")]
    Linux2615,
    /// Linux 2.6.26 to 3.15: net/ipv4/tcp_cong.c `tcp_is_cwnd_limited` after J. Heffner's
    /// "tcp: Allow send-limited cwnd to grow up to max_burst when gso disabled" (ce447eb9140)
    /// and "tcp: Limit cwnd growth when deferring for GSO" (246eb2af060), both Apr 2008, and
    /// "[TCP]: Increase the max_burst threshold from 3 to tp->reordering" (dd9e0dda66b), all in
    /// 2.6.26: limited if in_flight >= cwnd, or (GSO and left·3 < cwnd and left·mss < 64 KB),
    /// or left <= `tcp_max_burst` = `tp->reordering`.
    #[serde(rename = "linux-2.6.26")]
    Linux2626,
    /// Linux ≥ 3.16 as in 6.x: `tp->is_cwnd_limited` and `tp->max_packets_out` kept per window
    /// of data by `tcp_cwnd_validate` (net/ipv4/tcp_output.c), and `tcp_is_cwnd_limited`
    /// (include/net/tcp.h): limited if `is_cwnd_limited`, or in slow start (cwnd < ssthresh)
    /// while cwnd < 2·`max_packets_out`. History: "tcp: fix cwnd limited checking to improve
    /// congestion control" (E. Dumazet, 2014, 3.16), "tcp: make cwnd-limited checks
    /// measurement-based, and gentler" (ca8a22634381, N. Cardwell), "tcp: fix cwnd-limited bug
    /// for TSO deferral where we send nothing" (N. Cardwell, Dec 2020: the state is updated
    /// after a send loop that sent nothing but was cwnd-limited) and "tcp: fix
    /// tcp_cwnd_validate() to not forget is_cwnd_limited" (N. Cardwell, Sep 2022: the window's
    /// cwnd-limited mark is kept until the window is acknowledged; `is_cwnd_limited` checked
    /// before the slow-start test). The model follows the 2022 form.
    #[serde(rename = "linux-6")]
    Linux6,
    /// 4.4BSD lineage: tcp_input.c opens cwnd on every ACK of new data outside fast recovery,
    /// `snd_cwnd = min(cw + incr, TCP_MAXWIN << snd_scale)`, with no test of how much of cwnd
    /// was used (FreeBSD 5.x `if (... || !IN_FASTRECOVERY(tp))`; OpenBSD `if (tp->t_dupacks <
    /// tcprexmtthresh)`). FreeBSD's modular congestion control (9.0) added CCF_CWND_LIMITED
    /// (`snd_cwnd <= snd_wnd`, cc_ack_received), which is not this rule.
    #[serde(rename = "bsd")]
    Bsd,
}

/// BSD TCP_MAXWIN (netinet/tcp.h): the largest unscaled window.
const TCP_MAXWIN: u64 = 65_535;

/// What the test looks at when an ACK arrives (bytes).
#[derive(Clone, Copy, Debug)]
pub struct GrowthInput {
    /// Bytes in flight before the ACK was processed (Linux `prior_in_flight`).
    pub prior_in_flight: u64,
    /// cwnd when the ACK arrived: the Linux 2.x rules test it (`tcp_cong_avoid` ran before
    /// the ACK's undo or recovery exit in `tcp_ack`).
    pub prior_cwnd: u64,
    /// cwnd now (after the ACK's episode changes): `half-used` and `linux-6` test it (Linux ≥
    /// 4.x grows in `tcp_cong_control`, after `tcp_fastretrans_alert`).
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    /// Knob `tso`: the route can segment (Linux `sk_can_gso`).
    pub tso: bool,
    /// Linux `tp->reordering` in segments (the duplicate-ACK threshold).
    pub reordering: u64,
    /// The ACK found the sender in fast recovery or CWR (Linux `icsk_ca_state` Recovery or
    /// CWR when `tcp_ack` began), whatever the ACK did to that state.
    pub found_recovery_or_cwr: bool,
}

/// The send side's record of how much of cwnd was used (module doc).
#[derive(Clone, Copy, Debug)]
pub struct CwndUse {
    rule: CwndLimitedCfg,
    /// The last send loop stopped because cwnd was full (or a TSO frame was deferred on cwnd).
    last_stop_on_cwnd: bool,
    /// `linux-6`: Linux `tp->is_cwnd_limited` for the current window.
    is_cwnd_limited: bool,
    /// `linux-6`: Linux `tp->max_packets_out` (bytes outstanding, at most, in the window).
    max_out: u64,
    /// `linux-6`: Linux `tp->cwnd_usage_seq` (snd_nxt when the window's record began).
    usage_seq: u64,
}

impl CwndUse {
    pub fn new(rule: CwndLimitedCfg) -> Self {
        CwndUse {
            rule,
            last_stop_on_cwnd: false,
            is_cwnd_limited: false,
            max_out: 0,
            usage_seq: 0,
        }
    }

    /// After one run of the send loop: whether it stopped on cwnd, whether it sent new data,
    /// and the state it left (pipe and outstanding bytes, snd_una, snd_nxt).
    /// `linux-6`: Linux `tcp_write_xmit` ends with `is_cwnd_limited |= packets_in_flight >=
    /// cwnd; if (sent_pkts || is_cwnd_limited) tcp_cwnd_validate(...)`, which starts a new
    /// window's record when snd_una has passed the old one's end, or the send was cwnd-limited,
    /// or (not yet marked limited) more is out than the window's maximum so far.
    #[allow(clippy::too_many_arguments)]
    pub fn after_send(
        &mut self,
        stopped_on_cwnd: bool,
        sent_new: bool,
        in_flight: u64,
        cwnd: u64,
        out: u64,
        snd_una: u64,
        snd_nxt: u64,
    ) {
        self.last_stop_on_cwnd = stopped_on_cwnd;
        if self.rule != CwndLimitedCfg::Linux6 {
            return;
        }
        let limited = stopped_on_cwnd || in_flight >= cwnd;
        if !(sent_new || limited) {
            return;
        }
        if snd_una >= self.usage_seq || limited || (!self.is_cwnd_limited && out > self.max_out) {
            self.is_cwnd_limited = limited;
            self.max_out = out;
            self.usage_seq = snd_nxt;
        }
    }

    /// The most an ACK may grow cwnd to, given the peer's window-scale shift: `bsd` only,
    /// `snd_cwnd = min(cw + incr, TCP_MAXWIN << snd_scale)` (TCP_MAXWIN = 65 535, the largest
    /// unscaled window; tcp_input.c of FreeBSD 5.x and OpenBSD, see [`CwndLimitedCfg::Bsd`]).
    pub fn growth_cap(&self, snd_wscale: u8) -> Option<u64> {
        (self.rule == CwndLimitedCfg::Bsd).then(|| TCP_MAXWIN << snd_wscale)
    }

    /// Whether the sender counts as cwnd-limited for this ACK, so that it may grow cwnd.
    pub fn cwnd_limited(&self, g: &GrowthInput) -> bool {
        let mss = g.mss.max(1);
        // Linux counts packets: the flight in segments (a partial segment is a packet) against
        // cwnd in whole segments.
        let flight = g.prior_in_flight.div_ceil(mss);
        let cwnd = g.prior_cwnd / mss;
        let left = cwnd.saturating_sub(flight);
        // Linux 2.4 to 3.x: on a dubious ACK (any ACK outside Open) `tcp_ack` calls
        // `tcp_cong_avoid` only if `tcp_may_raise_cwnd`, which refuses while `ca_state` is
        // Recovery or CWR, and before `tcp_fastretrans_alert` leaves that state: the ACK that
        // ends a recovery (or undoes it) grows nothing (net/ipv4/tcp_input.c of 2.4.27,
        // 2.6.11, 2.6.32 and 3.x, read for the facts; `tcp_complete_cwr` then sets cwnd to
        // min(cwnd, ssthresh)). Linux ≥ 4.x exits first and grows in `tcp_cong_control`.
        let linux2x_may_raise = !g.found_recovery_or_cwr;
        match self.rule {
            CwndLimitedCfg::HalfUsed => self.last_stop_on_cwnd || g.prior_in_flight * 2 >= g.cwnd,
            CwndLimitedCfg::Linux24 => linux2x_may_raise && flight >= cwnd,
            CwndLimitedCfg::Linux2615 => {
                linux2x_may_raise && (flight >= cwnd || (g.tso && left * TSO_WIN_DIVISOR < cwnd))
            }
            CwndLimitedCfg::Linux2626 => {
                linux2x_may_raise
                    && (flight >= cwnd
                        || (g.tso && left * TSO_WIN_DIVISOR < cwnd && left * mss < GSO_MAX_SIZE)
                        || left <= g.reordering)
            }
            CwndLimitedCfg::Linux6 => {
                // `tcp_in_slow_start`: snd_cwnd < snd_ssthresh.
                self.is_cwnd_limited
                    || (g.cwnd < g.ssthresh && g.cwnd / mss < 2 * self.max_out.div_ceil(mss))
            }
            CwndLimitedCfg::Bsd => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn input(flight_seg: u64, cwnd_seg: u64) -> GrowthInput {
        GrowthInput {
            prior_in_flight: flight_seg * MSS,
            prior_cwnd: cwnd_seg * MSS,
            cwnd: cwnd_seg * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            tso: false,
            reordering: 3,
            found_recovery_or_cwr: false,
        }
    }

    #[test]
    fn test_half_used_grows_until_twice_the_flight() {
        let u = CwndUse::new(CwndLimitedCfg::HalfUsed);
        assert!(u.cwnd_limited(&input(20, 40)));
        assert!(!u.cwnd_limited(&input(20, 41)));
        let mut u = u;
        u.after_send(true, false, 20 * MSS, 41 * MSS, 20 * MSS, 0, 20 * MSS);
        assert!(u.cwnd_limited(&input(20, 41)));
    }

    #[test]
    fn test_linux24_grows_only_with_a_full_window() {
        let u = CwndUse::new(CwndLimitedCfg::Linux24);
        assert!(u.cwnd_limited(&input(20, 20)));
        assert!(!u.cwnd_limited(&input(20, 21)));
        // A partial segment counts as a packet.
        let mut g = input(20, 21);
        g.prior_in_flight += 1;
        assert!(u.cwnd_limited(&g));
    }

    #[test]
    fn test_linux2x_tests_cwnd_as_the_ack_found_it() {
        // An RTO undone by this ACK: cwnd 1 with 1 in flight when it arrived (Loss), 2 after
        // the model's undo. Linux ran tcp_cong_avoid before the undo: growth allowed.
        let mut g = input(1, 1);
        g.cwnd = 2 * MSS;
        for rule in [
            CwndLimitedCfg::Linux24,
            CwndLimitedCfg::Linux2615,
            CwndLimitedCfg::Linux2626,
        ] {
            assert!(CwndUse::new(rule).cwnd_limited(&g), "{rule:?}");
        }
        // The old rule tests cwnd after the ACK: with 3 segments then, a flight of 1 is under half.
        g.cwnd = 3 * MSS;
        assert!(!CwndUse::new(CwndLimitedCfg::HalfUsed).cwnd_limited(&g));
    }

    #[test]
    fn test_linux2x_ack_that_ends_recovery_grows_nothing() {
        // The ACK that ends a recovery found the sender in Recovery with a full window: Linux
        // 2.x's tcp_may_raise_cwnd refuses it; Linux 6 and the BSD stacks decide by the window.
        let mut g = input(20, 20);
        g.found_recovery_or_cwr = true;
        for rule in [
            CwndLimitedCfg::Linux24,
            CwndLimitedCfg::Linux2615,
            CwndLimitedCfg::Linux2626,
        ] {
            let u = CwndUse::new(rule);
            assert!(!u.cwnd_limited(&g), "{rule:?}");
            g.found_recovery_or_cwr = false;
            assert!(u.cwnd_limited(&g), "{rule:?}");
            g.found_recovery_or_cwr = true;
        }
        for rule in [CwndLimitedCfg::HalfUsed, CwndLimitedCfg::Bsd] {
            assert!(CwndUse::new(rule).cwnd_limited(&g), "{rule:?}");
        }
        let mut u = CwndUse::new(CwndLimitedCfg::Linux6);
        u.after_send(true, true, 20 * MSS, 20 * MSS, 20 * MSS, 0, 20 * MSS);
        assert!(u.cwnd_limited(&g));
    }

    #[test]
    fn test_linux2615_room_only_counts_with_tso() {
        let u = CwndUse::new(CwndLimitedCfg::Linux2615);
        let mut g = input(20, 24); // 4 left, 4·3 < 24
        assert!(!u.cwnd_limited(&g));
        g.tso = true;
        assert!(u.cwnd_limited(&g));
        g.prior_cwnd = 30 * MSS; // 10 left, 30 = 30: not below
        assert!(!u.cwnd_limited(&g));
    }

    #[test]
    fn test_linux2626_allows_reordering_segments_of_room() {
        let u = CwndUse::new(CwndLimitedCfg::Linux2626);
        assert!(u.cwnd_limited(&input(20, 23)));
        assert!(!u.cwnd_limited(&input(20, 24)));
        let mut g = input(20, 24);
        g.reordering = 5;
        assert!(u.cwnd_limited(&g));
        // With GSO: under a third of cwnd and under 64 KB of room.
        let mut g = input(200, 260); // 60 left: 180 < 260, but 60 000 B < 65 536 B
        g.tso = true;
        assert!(u.cwnd_limited(&g));
        g.prior_in_flight = 180 * MSS; // 80 left: 80 000 B ≥ 64 KB
        assert!(!u.cwnd_limited(&g));
    }

    #[test]
    fn test_linux6_slow_start_allows_twice_the_window_maximum() {
        let mut u = CwndUse::new(CwndLimitedCfg::Linux6);
        // Receive-window-limited: sent 20 segments, stopped by rwnd, 20 out, cwnd 30.
        u.after_send(false, true, 20 * MSS, 30 * MSS, 20 * MSS, 0, 20 * MSS);
        assert!(u.cwnd_limited(&input(20, 39)));
        assert!(!u.cwnd_limited(&input(20, 40)));
        // Congestion avoidance: no growth unless the window was cwnd-limited.
        let mut g = input(20, 30);
        g.ssthresh = 10 * MSS;
        assert!(!u.cwnd_limited(&g));
        u.after_send(true, true, 30 * MSS, 30 * MSS, 30 * MSS, 0, 30 * MSS);
        assert!(u.cwnd_limited(&g));
    }

    #[test]
    fn test_linux6_keeps_the_mark_for_the_window() {
        let mut u = CwndUse::new(CwndLimitedCfg::Linux6);
        let mut ca = input(20, 30);
        ca.ssthresh = 10 * MSS;
        u.after_send(true, true, 30 * MSS, 30 * MSS, 30 * MSS, 0, 30 * MSS);
        // Later in the same window more is out but the send was not cwnd-limited: the 2022
        // rule keeps the mark (the 2014 rule would have dropped it).
        u.after_send(false, true, 29 * MSS, 32 * MSS, 31 * MSS, 5 * MSS, 36 * MSS);
        assert!(u.cwnd_limited(&ca));
        // Once the window (up to snd_nxt 30 segments) is acknowledged, a new record starts.
        u.after_send(
            false,
            true,
            20 * MSS,
            32 * MSS,
            20 * MSS,
            30 * MSS,
            50 * MSS,
        );
        assert!(!u.cwnd_limited(&ca));
        // A loop that sent nothing and was not limited changes nothing (2020 fix's guard).
        u.after_send(false, false, 0, 32 * MSS, 0, 50 * MSS, 50 * MSS);
        assert!(!u.cwnd_limited(&ca));
        u.after_send(
            true,
            false,
            32 * MSS,
            32 * MSS,
            32 * MSS,
            50 * MSS,
            82 * MSS,
        );
        assert!(u.cwnd_limited(&ca));
    }

    #[test]
    fn test_bsd_always_grows_up_to_the_largest_scaled_window() {
        let u = CwndUse::new(CwndLimitedCfg::Bsd);
        assert!(u.cwnd_limited(&input(1, 10_000)));
        assert_eq!(u.growth_cap(0), Some(65_535));
        assert_eq!(u.growth_cap(3), Some(524_280));
        assert_eq!(CwndUse::new(CwndLimitedCfg::Linux24).growth_cap(3), None);
    }
}
