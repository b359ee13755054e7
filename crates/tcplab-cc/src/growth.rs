//! How a window grows per ACK: counted in packets (Linux) or in bytes (BSD, Windows), with or
//! without Appropriate Byte Counting (RFC 3465). Shared by every window-based controller so that
//! an OS personality can pick the arithmetic without each algorithm re-implementing it.
//!
//! # Model
//!
//! A controller keeps its window in a [`WindowState`] (cwnd and ssthresh in bytes plus the
//! counters the growth rules need) and, on every ACK that may grow the window, does
//!
//! ```
//! # use tcplab_cc::{AckEvent, CcInit, WindowGrowth, WindowState};
//! # let init = CcInit { mss: 1000, initial_cwnd: 10_000, initial_ssthresh: u64::MAX,
//! #                     growth: WindowGrowth::default() };
//! # let mut win = WindowState::new(&init);
//! # let ev = AckEvent { bytes_acked: 1000, packets_acked: 1, mss: 1000, ..Default::default() };
//! let credit = win.slow_start(&ev);   // grows cwnd up to ssthresh, returns what is left
//! if credit > 0 {
//!     win.reno_increase(credit);      // or win.additive_increase(per, credit) with its own `per`
//! }
//! ```
//!
//! The *credit* of an ACK is what congestion avoidance counts. Its unit depends on
//! [`CwndUnit`]:
//!
//! | unit | ABC off (`abc_limit == 0`) | ABC on (`abc_limit == L > 0`) |
//! |---|---|---|
//! | `Packets` | 1 per ACK that advances `snd_una` (Linux before byte/packet counting, `snd_cwnd_cnt++` per ACK) | segments cumulatively acked (Linux `acked`); slow start counts at most `L` of them |
//! | `Bytes` | `SMSS` per ACK, whatever it acknowledges (RFC 5681 §3.1 eq. 3 treats each ACK alike); slow start `min(N, SMSS)` | `N` bytes acked (RFC 3465 §2.1); slow start `min(N, L·SMSS)`, `L = 1` in the slow start after an RTO (RFC 3465 §2.3) |
//!
//! Slow start stops exactly at `ssthresh` and returns the unused part of the credit so the
//! same ACK continues in congestion avoidance, as Linux's `tcp_slow_start` returns the packets it
//! did not use (L: net/ipv4/tcp_cong.c).
//!
//! The modern Linux behaviour (slow start adds every acknowledged packet, no cap) is
//! `WindowGrowth { unit: Packets, abc_limit: u32::MAX }`; Linux 2.6.18 – 3.x with the ABC sysctl
//! off (one segment per ACK in slow start, `+1` per `cwnd` ACKs in congestion avoidance) is the
//! default `WindowGrowth { unit: Packets, abc_limit: 0 }`.

use crate::{AckEvent, CcInit, RtoEvent};

/// The window accessors of [`crate::CongestionControl`] (`cwnd`, `ssthresh`, `set_cwnd`,
/// `set_ssthresh`) for a controller whose window is the [`WindowState`] in its field `win`.
macro_rules! delegate_window {
    () => {
        fn cwnd(&self) -> u64 {
            self.win.cwnd()
        }
        fn ssthresh(&self) -> u64 {
            self.win.ssthresh()
        }
        fn set_cwnd(&mut self, cwnd: u64) {
            self.win.set_cwnd(cwnd);
        }
        fn set_ssthresh(&mut self, ssthresh: u64) {
            self.win.set_ssthresh(ssthresh);
        }
    };
}
pub(crate) use delegate_window;

/// Unit in which the congestion window is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CwndUnit {
    /// Whole segments with a fractional-increase counter, as Linux (`snd_cwnd`, `snd_cwnd_cnt`;
    /// L: net/ipv4/tcp_cong.c).
    #[default]
    Packets,
    /// Bytes, with `SMSS*SMSS/cwnd` per ACK in congestion avoidance (RFC 5681 §3.1; BSD, Windows).
    Bytes,
}

/// Window-growth arithmetic chosen by the OS personality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowGrowth {
    pub unit: CwndUnit,
    /// Appropriate Byte Counting limit L in segments (RFC 3465 §2.2); `0` = ABC off: every ACK
    /// counts once, whatever it acknowledges (RFC 5681 without ABC; Linux 2.6.18–3.x default).
    pub abc_limit: u32,
    /// Packets unit with ABC: credit the segments newly *delivered* by an ACK (cumulatively
    /// acknowledged and not SACKed before, plus newly SACKed: Linux `tcp_newly_delivered`,
    /// which `tcp_cong_control` passes to `cong_avoid` since the 4.9 rework) instead of every
    /// segment the cumulative ACK covers. The difference shows at the end of a recovery: Linux
    /// spent the credit of the SACKed segments on ACKs that could not grow the window, so the
    /// ACK that ends recovery does not add their credit again. Growth still needs the ACK to
    /// advance `snd_una` (`tcp_may_raise_cwnd`: FLAG_DATA_ACKED).
    pub count_delivered: bool,
    /// Slow start while `cwnd ≤ ssthresh` instead of `<`, and the ACK that finds `cwnd =
    /// ssthresh` adds its whole slow-start increment (no cap at ssthresh): 4.4BSD
    /// (`tcp_input.c`, the window opening after an ACK of new data: the increase is `maxseg`
    /// unless `cw > snd_ssthresh`) and its descendants FreeBSD 5.x and OpenBSD 3.x; Linux
    /// 2.2–4.2 (`tcp_cong_avoid`, later `tcp_reno_cong_avoid`, `bictcp_cong_avoid`: `if
    /// (snd_cwnd <= snd_ssthresh) tcp_slow_start(tp)`, whose 2.6.x increment had no cap at
    /// ssthresh). Linux 4.3 ("tcp: do not slow start when cwnd equals ssthresh", Y. Cheng,
    /// 2015; `tcp_in_slow_start`: `snd_cwnd < snd_ssthresh`) and RFC 5681 §3.1 take
    /// congestion avoidance at equality. Found by the behaviour scripts `rto-cwnd.pkt` of the
    /// BSD and Linux 2.x personalities.
    pub slow_start_inclusive: bool,
    /// Bytes unit without ABC: congestion avoidance adds the truncated quotient
    /// `SMSS*SMSS/cwnd` on every ACK and drops the remainder, as 4.4BSD's `tcp_input.c` does
    /// (`incr = incr * incr / cw`, unsigned integer division) in FreeBSD 5.x and OpenBSD 3.x.
    /// Off: the remainder is carried to the next ACK (exact; RFC 5681 §3.1).
    pub ca_increment_truncated: bool,
}

impl Default for WindowGrowth {
    fn default() -> Self {
        WindowGrowth {
            unit: CwndUnit::Packets,
            abc_limit: 0,
            count_delivered: false,
            slow_start_inclusive: false,
            ca_increment_truncated: false,
        }
    }
}

/// RFC 3465 §2.3 (stacks-and-ccas.md A.1): in the slow start that follows a retransmission
/// timeout, ABC uses `L = 1`. Applied in the bytes unit only: Linux's packet counting never had it.
const ABC_LIMIT_AFTER_RTO: u64 = 1;

impl WindowGrowth {
    /// True when Appropriate Byte Counting is on (RFC 3465).
    pub fn abc(&self) -> bool {
        self.abc_limit > 0
    }

    /// Acknowledged packets an ACK credits (packets unit with ABC).
    fn packets(&self, ev: &AckEvent) -> u64 {
        u64::from(if self.count_delivered {
            ev.packets_delivered
        } else {
            ev.packets_acked
        })
    }

    /// Slow-start credit of one ACK, before the `ssthresh` cap: segments (packets unit) or bytes
    /// (bytes unit) by which slow start would grow the window. `after_rto` selects RFC 3465's
    /// `L = 1` (bytes unit with ABC only).
    pub fn slow_start_credit(&self, ev: &AckEvent, mss: u64, after_rto: bool) -> u64 {
        if ev.bytes_acked == 0 {
            // Duplicate or SACK-only ACK: nothing new cumulatively acknowledged.
            return 0;
        }
        match (self.unit, self.abc()) {
            // Old Linux without ABC: one segment per ACK, whatever it covers
            // (L: net/ipv4/tcp_cong.c, `tcp_slow_start` of 2.6.x).
            (CwndUnit::Packets, false) => 1,
            // Linux counting of acknowledged packets (`tcp_slow_start(tp, acked)`), capped at L.
            (CwndUnit::Packets, true) => self.packets(ev).min(u64::from(self.abc_limit)),
            // RFC 5681 §3.1: cwnd += min(N, SMSS).
            (CwndUnit::Bytes, false) => ev.bytes_acked.min(mss),
            // RFC 3465 §2.2: cwnd += min(N, L*SMSS); L = 1 after an RTO (§2.3).
            (CwndUnit::Bytes, true) => {
                let l = if after_rto {
                    ABC_LIMIT_AFTER_RTO
                } else {
                    u64::from(self.abc_limit)
                };
                ev.bytes_acked.min(l.saturating_mul(mss))
            }
        }
    }

    /// Congestion-avoidance credit of one ACK: counted ACK units (packets unit) or bytes.
    pub fn avoidance_credit(&self, ev: &AckEvent, mss: u64) -> u64 {
        if ev.bytes_acked == 0 {
            return 0;
        }
        match (self.unit, self.abc()) {
            // One unit per ACK (Linux `snd_cwnd_cnt++` per ACK before packet counting); with
            // delayed ACKs this is what makes old Linux Reno grow ~1 segment per 2 RTTs.
            (CwndUnit::Packets, false) => 1,
            // Linux `tcp_cong_avoid_ai(tp, w, acked)`: every acknowledged packet counts.
            (CwndUnit::Packets, true) => self.packets(ev),
            // RFC 5681 §3.1 eq. 3: each ACK adds SMSS*SMSS/cwnd, i.e. counts as one SMSS.
            (CwndUnit::Bytes, false) => mss,
            // RFC 3465 §2.1: bytes_acked += N.
            (CwndUnit::Bytes, true) => ev.bytes_acked,
        }
    }
}

/// How Linux's congestion-avoidance counter `snd_cwnd_cnt` turns ACKs into segments in the
/// packets unit (`tcp_cong_avoid_ai` and the inline code before it). Shared by the controllers
/// whose Linux 2.x code used the counter (Reno, BIC, CUBIC); facts read in the kernel history
/// (net/ipv4/tcp_input.c, tcp_cong.c, tcp_bic.c, tcp_cubic.c), nothing copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AiRule {
    /// Linux ≥ 4.0: every credit unit counts and +1 segment per `w` of them, a counter left
    /// above a smaller `w` yielding one ("tcp: fix the timid additive increase on stretch
    /// ACKs", 814d488c612, N. Cardwell, net-next 28 Jan 2015, merged for 4.0;
    /// [`WindowState::additive_increase`]). CUBIC adds `cnt ≥ 2` ("tcp: fix stretch ACK bugs
    /// in CUBIC", 9cd981dcf17).
    #[default]
    Linux4,
    /// Linux 2.2 – 3.19: `if (snd_cwnd_cnt >= w) { snd_cwnd++; snd_cwnd_cnt = 0; } else
    /// snd_cwnd_cnt++;` on every ACK that may grow the window: the ACK counts once, whatever it
    /// acknowledges, and the ACK that finds the counter at `w` adds the segment *without being
    /// counted*, so the window grows one segment per `w + 1` ACKs. Reno's `w` is cwnd
    /// (2.4 / 2.6.0–2.6.12 `tcp_cong_avoid` in tcp_input.c; `tcp_reno_cong_avoid` in tcp_cong.c
    /// from 2.6.13), BIC's and CUBIC's their `cnt` (`bictcp_cong_avoid`, inline until 2.6.29);
    /// "tcp: add helper for AI algorithm" (758ce5c8d11, 2.6.30) moved the same lines into
    /// `tcp_cong_avoid_ai`, unchanged until the 4.0 commit above. ABC (`tcp_abc`, 2.6.15–3.8)
    /// changed only slow start and Reno's increase (a byte counter, one segment per window of
    /// bytes: see [`WindowState::reno_increase_rule`]); BIC and CUBIC kept counting ACKs.
    Linux26,
}

impl AiRule {
    pub const CHOICES: &'static [&'static str] = &["linux-4.0", "linux-2.6"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "linux-4.0" => Some(AiRule::Linux4),
            "linux-2.6" => Some(AiRule::Linux26),
            _ => None,
        }
    }

    /// The congestion-avoidance credit of an ACK whose credit under the window's growth rules
    /// is `credit`: under [`AiRule::Linux26`] in the packets unit the ACK counts once
    /// (`snd_cwnd_cnt++`, also with ABC on), otherwise `credit` unchanged.
    pub fn credit(self, unit: CwndUnit, credit: u64) -> u64 {
        if self == AiRule::Linux26 && unit == CwndUnit::Packets {
            credit.min(1)
        } else {
            credit
        }
    }
}

/// Congestion window, slow-start threshold and the growth counters, in one place so every
/// window-based controller shares the same arithmetic.
///
/// All windows are in bytes. In the [`CwndUnit::Packets`] unit `cwnd` and (finite) `ssthresh`
/// are always whole multiples of the MSS: setters round *down* to whole segments, as Linux
/// keeps `snd_cwnd` in packets.
#[derive(Clone, Copy, Debug)]
pub struct WindowState {
    growth: WindowGrowth,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Additive-increase counter. Packets unit: Linux `snd_cwnd_cnt` (credit units accumulated
    /// toward the next +1 segment). Bytes unit with ABC: RFC 3465 `bytes_acked`. Bytes unit
    /// without ABC: remainder of the last `SMSS*credit/per` division.
    ai_count: u64,
    /// Remainder of a divided slow start (HyStart++ CSS, RFC 9406 §4.2), in credit units.
    ss_rem: u64,
    /// In the slow start following an RTO (RFC 3465 §2.3).
    after_rto: bool,
}

/// Smallest `ssthresh` after a decrease: 2 segments (RFC 5681 §3.1 eq. 4; Linux `max(.., 2U)`).
pub const MIN_SSTHRESH_SEGMENTS: u64 = 2;

impl WindowState {
    /// Window from the connection's initial values. A zero MSS is treated as 1 byte so the
    /// arithmetic stays defined (the registry rejects it before this).
    pub fn new(init: &CcInit) -> Self {
        let mss = u64::from(init.mss.max(1));
        let mut w = WindowState {
            growth: init.growth,
            mss,
            cwnd: mss,
            ssthresh: u64::MAX,
            ai_count: 0,
            ss_rem: 0,
            after_rto: false,
        };
        w.set_cwnd(init.initial_cwnd);
        w.set_ssthresh(init.initial_ssthresh);
        w
    }

    /// The growth rules this window follows.
    pub fn growth(&self) -> WindowGrowth {
        self.growth
    }
    /// Sender MSS in bytes.
    pub fn mss(&self) -> u64 {
        self.mss
    }
    /// Congestion window in bytes (≥ 1 MSS).
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Congestion window in whole segments (rounded down, ≥ 1).
    pub fn cwnd_segments(&self) -> u64 {
        self.cwnd / self.mss
    }
    /// Slow-start threshold in bytes (`u64::MAX` = infinite).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    /// True while `cwnd < ssthresh` (Linux `tcp_in_slow_start`; RFC 5681 §3.1 leaves the
    /// `cwnd == ssthresh` case to the implementation: congestion avoidance, as Linux ≥ 4.3),
    /// or `cwnd ≤ ssthresh` with [`WindowGrowth::slow_start_inclusive`] (BSD, Linux ≤ 4.2).
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
            || (self.growth.slow_start_inclusive && self.cwnd == self.ssthresh)
    }
    /// True during the slow start that follows an RTO (RFC 3465 §2.3).
    pub fn after_rto(&self) -> bool {
        self.after_rto
    }

    /// Sets `cwnd` (bytes), at least 1 MSS; whole segments (rounded down) in the packets unit.
    pub fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = self.normalise(cwnd).max(self.mss);
        if !self.in_slow_start() {
            self.after_rto = false;
        }
    }

    /// Sets `ssthresh` (bytes; `u64::MAX` = infinite), at least 2 MSS; whole segments (rounded
    /// down) in the packets unit.
    pub fn set_ssthresh(&mut self, ssthresh: u64) {
        self.ssthresh = if ssthresh == u64::MAX {
            u64::MAX
        } else {
            self.normalise(ssthresh)
                .max(MIN_SSTHRESH_SEGMENTS * self.mss)
        };
        if !self.in_slow_start() {
            self.after_rto = false;
        }
    }

    /// Forgets the partial-increase counters (on every window reduction, as Linux clears
    /// `snd_cwnd_cnt` in `tcp_init_cwnd_reduction` and RFC 3465 restarts `bytes_acked`).
    pub fn reset_counters(&mut self) {
        self.ai_count = 0;
        self.ss_rem = 0;
    }

    /// The window collapsed after a retransmission timeout: `cwnd` = 1 segment (the loss window,
    /// RFC 5681 §3.1), counters cleared, and RFC 3465's `L = 1` armed for the next slow start.
    pub fn on_timeout(&mut self) {
        self.reset_counters();
        self.cwnd = self.mss;
        self.after_rto = self.in_slow_start();
    }

    /// Reno's multiplicative decrease (RFC 5681 §3.1 eq. 4; Linux `tcp_reno_ssthresh`):
    /// `ssthresh = max(basis/2, 2·SMSS)` from the `basis` chosen by `from` (whole segments,
    /// rounded down, in the packets unit: Linux's `max(cwnd >> 1, 2)`; the floor and rounding are
    /// [`WindowState::set_ssthresh`]'s), counters cleared.
    pub fn reno_decrease(&mut self, from: SsthreshBasis, in_flight: u64, peer_window: u64) {
        let s = from.bytes(self, in_flight, peer_window) / 2;
        self.set_reduced_ssthresh(from, s);
        self.reset_counters();
    }

    /// Reno's retransmission timeout (RFC 5681 §3.1 eq. 4 and §5.1; Linux `tcp_enter_loss`):
    /// the first timeout of a series halves as [`WindowState::reno_decrease`] does (held on
    /// repeated timeouts, except with [`SsthreshBasis::Bsd`], which recomputes it, and
    /// [`SsthreshBasis::Solaris`], which halves it again), then the window collapses
    /// ([`WindowState::on_timeout`]).
    pub fn reno_timeout(&mut self, from: SsthreshBasis, ev: &RtoEvent) {
        if from == SsthreshBasis::Solaris && ev.backoff_count > 1 {
            let s = self.ssthresh / 2;
            self.set_reduced_ssthresh(from, s);
        } else if from.reduces_on_timeout(ev) {
            let s = from.bytes(self, ev.in_flight, ev.peer_window) / 2;
            self.set_reduced_ssthresh(from, s);
        }
        self.on_timeout();
    }

    /// Sets a decreased `ssthresh` computed from the basis `from`: as
    /// [`WindowState::set_ssthresh`], truncated to whole segments in both units with
    /// [`SsthreshBasis::Bsd`], [`SsthreshBasis::Xnu`] and [`SsthreshBasis::Solaris`]
    /// (`win / 2 / t_maxseg · t_maxseg`
    /// in integer arithmetic).
    pub fn set_reduced_ssthresh(&mut self, from: SsthreshBasis, ssthresh: u64) {
        let s = if from.is_bsd() || from == SsthreshBasis::Solaris {
            ssthresh - ssthresh % self.mss
        } else {
            ssthresh
        };
        self.set_ssthresh(s);
    }

    fn normalise(&self, bytes: u64) -> u64 {
        match self.growth.unit {
            CwndUnit::Packets => bytes - bytes % self.mss,
            CwndUnit::Bytes => bytes,
        }
    }

    /// Bytes still allowed by slow start before `cwnd` reaches `ssthresh`.
    fn slow_start_room(&self) -> u64 {
        self.ssthresh.saturating_sub(self.cwnd)
    }

    /// Slow start for one ACK (RFC 5681 §3.1, RFC 3465 §2.2, Linux `tcp_slow_start`): grows
    /// `cwnd` by the ACK's slow-start credit but not beyond `ssthresh`, and returns the
    /// congestion-avoidance credit left for the same ACK (0 if slow start used it all). When the
    /// window is not in slow start the whole avoidance credit is returned unchanged.
    pub fn slow_start(&mut self, ev: &AckEvent) -> u64 {
        self.slow_start_divided(ev, 1)
    }

    /// The ACK handling every window-growth rule starts with: nothing if the ACK may not grow
    /// the window ([`may_grow`]), else slow start ([`WindowState::slow_start`]); returns the
    /// congestion-avoidance credit left, `None` if none is.
    pub fn grow_slow_start(&mut self, ev: &AckEvent) -> Option<u64> {
        if !may_grow(ev) {
            return None;
        }
        let credit = self.slow_start(ev);
        (credit > 0).then_some(credit)
    }

    /// Reno's window growth for one ACK (RFC 5681 §3.1; Linux `tcp_reno_cong_avoid`): slow
    /// start, then [`WindowState::reno_increase`] with the credit left.
    pub fn reno_on_ack(&mut self, ev: &AckEvent) {
        self.reno_on_ack_rule(AiRule::Linux4, ev);
    }

    /// [`WindowState::reno_on_ack`] with the increase under `rule`
    /// ([`WindowState::reno_increase_rule`]).
    pub fn reno_on_ack_rule(&mut self, rule: AiRule, ev: &AckEvent) {
        if let Some(credit) = self.grow_slow_start(ev) {
            self.reno_increase_rule(rule, credit);
        }
    }

    /// Slow start with the increase divided by `divisor` (HyStart++ Conservative Slow Start,
    /// RFC 9406 §4.2: `cwnd += min(N, L*SMSS) / CSS_GROWTH_DIVISOR`). The remainder of the
    /// division is carried to the next ACK so no growth is lost. `divisor` 0 is taken as 1.
    ///
    /// Inlined test and congestion-avoidance credit (what most ACKs of a long transfer take),
    /// slow start out of line.
    #[inline]
    pub fn slow_start_divided(&mut self, ev: &AckEvent, divisor: u64) -> u64 {
        if !self.in_slow_start() {
            return self.growth.avoidance_credit(ev, self.mss);
        }
        self.slow_start_step(ev, divisor)
    }

    /// [`WindowState::slow_start_divided`] in slow start.
    #[inline(never)]
    fn slow_start_step(&mut self, ev: &AckEvent, divisor: u64) -> u64 {
        let divisor = divisor.max(1);
        let credit = self.growth.slow_start_credit(ev, self.mss, self.after_rto);
        if credit == 0 {
            return 0;
        }
        let total = credit.saturating_add(self.ss_rem);
        let incr = total / divisor; // in credit units: segments or bytes
        self.ss_rem = total % divisor;
        let (incr_bytes, room_units) = match self.growth.unit {
            CwndUnit::Packets => (
                incr.saturating_mul(self.mss),
                self.slow_start_room() / self.mss,
            ),
            CwndUnit::Bytes => (incr, self.slow_start_room()),
        };
        let leftover = if incr > room_units && !self.growth.slow_start_inclusive {
            // Capped at ssthresh: Linux `cwnd = min(cwnd + acked, ssthresh)` and the rest goes
            // to congestion avoidance.
            let room_bytes = match self.growth.unit {
                CwndUnit::Packets => room_units.saturating_mul(self.mss),
                CwndUnit::Bytes => room_units,
            };
            self.cwnd = self.cwnd.saturating_add(room_bytes);
            self.ss_rem = 0;
            (incr - room_units).saturating_mul(divisor)
        } else {
            self.cwnd = self.cwnd.saturating_add(incr_bytes);
            0
        };
        if !self.in_slow_start() {
            self.after_rto = false;
            self.ss_rem = 0;
        }
        leftover
    }

    /// Additive increase: `+1 segment` each time `per` credit units have been counted.
    ///
    /// * Packets unit: Linux `tcp_cong_avoid_ai(tp, w = per, acked = credit)` semantics: credits
    ///   accumulate in `snd_cwnd_cnt`; each full `per` adds one segment (several if the ACK
    ///   carried more), and a counter already ≥ `per` (left from a larger `per`) first yields one
    ///   segment and restarts (L: net/ipv4/tcp_cong.c).
    /// * Bytes unit with ABC: RFC 3465 §2.1 `bytes_acked` counter, `+SMSS` per `per` bytes.
    /// * Bytes unit without ABC: RFC 5681 §3.1 eq. 3 generalised: `cwnd += SMSS*credit/per`
    ///   (credit is SMSS per ACK, so `per = cwnd` gives `SMSS*SMSS/cwnd`), computed exactly:
    ///   the remainder of the integer division is carried to the next ACK, so the sub-byte
    ///   increments §3.1 warns about ("if the above formula yields 0, the result SHOULD be
    ///   rounded up to 1 byte") are not lost — unless [`WindowGrowth::ca_increment_truncated`]
    ///   (the BSD stacks), which drops the remainder on every ACK as 4.4BSD's integer division
    ///   does.
    ///
    /// `per` 0 is taken as 1.
    pub fn additive_increase(&mut self, per: u64, credit: u64) {
        let per = per.max(1);
        match (self.growth.unit, self.growth.abc()) {
            (CwndUnit::Packets, _) => {
                if self.ai_count >= per {
                    self.ai_count = 0;
                    self.grow_segments(1);
                }
                self.ai_count = self.ai_count.saturating_add(credit);
                if self.ai_count >= per {
                    let n = self.ai_count / per;
                    self.ai_count -= n * per;
                    self.grow_segments(n);
                }
            }
            (CwndUnit::Bytes, true) => {
                self.ai_count = self.ai_count.saturating_add(credit);
                if self.ai_count >= per {
                    let n = self.ai_count / per;
                    self.ai_count -= n * per;
                    self.grow_segments(n);
                }
            }
            (CwndUnit::Bytes, false) => {
                // Exact: the remainder of SMSS*credit/per is carried to the next ACK (in
                // 1/per-byte units), so no growth is lost to integer division.
                let num = u128::from(self.mss) * u128::from(credit) + u128::from(self.ai_count);
                let per = u128::from(per);
                // 4.4BSD truncates each ACK's `incr * incr / cw` (knob
                // `ca_increment_truncated`): nothing is carried.
                self.ai_count = if self.growth.ca_increment_truncated {
                    0
                } else {
                    (num % per) as u64 // < per ≤ u64::MAX
                };
                let incr = u64::try_from(num / per).unwrap_or(u64::MAX);
                self.cwnd = self.cwnd.saturating_add(incr);
            }
        }
    }

    /// Additive increase of `+1 segment per per` under `rule` ([`AiRule`]): in the packets unit
    /// [`AiRule::Linux26`] is Linux 2.x's counter exactly — the ACK that finds the counter at
    /// `per` adds a segment and clears it, any other counts once (`credit` > 0 means the ACK
    /// may grow the window; its size is not counted) — else [`WindowState::additive_increase`].
    #[inline]
    pub fn additive_increase_rule(&mut self, rule: AiRule, per: u64, credit: u64) {
        if rule == AiRule::Linux26 && self.growth.unit == CwndUnit::Packets {
            if credit > 0 {
                self.counter_step(per, 1);
            }
        } else {
            self.additive_increase(per, credit);
        }
    }

    /// One step of Linux's inline congestion-avoidance counter in the packets unit: the ACK
    /// that finds `snd_cwnd_cnt ≥ per` adds one segment and clears the counter *without being
    /// counted*; any other ACK adds `count` to it. [`AiRule::Linux26`] counts 1 per ACK; H-TCP
    /// counts the packets an ACK covered since Linux 2.6.17 (`snd_cwnd_cnt += ca->pkts_acked`
    /// in `htcp_cong_avoid`, see htcp.rs). Returns true if the window grew. `per` 0 is taken
    /// as 1.
    #[inline]
    pub fn counter_step(&mut self, per: u64, count: u64) -> bool {
        if self.ai_count >= per.max(1) {
            self.ai_count = 0;
            self.grow_segments(1);
            true
        } else {
            self.ai_count = self.ai_count.saturating_add(count);
            false
        }
    }

    /// Reno's congestion avoidance (RFC 5681 §3.1; Linux `tcp_reno_cong_avoid`): about one
    /// segment per window of credit, i.e. `additive_increase` with `per` = cwnd in segments
    /// (packets unit) or in bytes (bytes unit).
    pub fn reno_increase(&mut self, credit: u64) {
        self.reno_increase_rule(AiRule::Linux4, credit);
    }

    /// [`WindowState::reno_increase`] under `rule`. With ABC on, Linux 2.6.15–3.8's Reno
    /// counted bytes instead (`tcp_reno_cong_avoid`: `if (bytes_acked >= snd_cwnd·mss)
    /// { bytes_acked −= snd_cwnd·mss; snd_cwnd++; }`, one segment per window of bytes), which
    /// is the [`AiRule::Linux4`] arithmetic on the ABC credit; the rule applies without ABC.
    pub fn reno_increase_rule(&mut self, rule: AiRule, credit: u64) {
        let per = match self.growth.unit {
            CwndUnit::Packets => self.cwnd_segments(),
            CwndUnit::Bytes => self.cwnd,
        };
        let rule = if self.growth.abc() {
            AiRule::Linux4
        } else {
            rule
        };
        self.additive_increase_rule(rule, per, credit);
    }

    /// Grows `cwnd` by `bytes`, rounded down to whole segments in the packets unit (used for
    /// fractional growth rules such as RFC 9438's, whose callers keep the remainder).
    pub fn grow_bytes(&mut self, bytes: u64) {
        self.cwnd = self.cwnd.saturating_add(self.normalise(bytes));
    }

    fn grow_segments(&mut self, n: u64) {
        self.cwnd = self.cwnd.saturating_add(n.saturating_mul(self.mss));
    }
}

/// What a multiplicative decrease is computed from.
///
/// RFC 5681 §3.1 eq. 4 (and RFC 9438 §4.6) halve/scale *FlightSize*, the data outstanding when
/// loss is detected; Linux scales `snd_cwnd` instead (`tcp_reno_ssthresh`: `max(cwnd >> 1, 2)`,
/// L: net/ipv4/tcp_cong.c; `cubictcp_recalc_ssthresh`, L: net/ipv4/tcp_cubic.c;
/// stacks-and-ccas.md A.1 "Linux differences").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SsthreshBasis {
    /// Chosen by the unit: `Cwnd` in the packets unit (Linux), `FlightSize` in bytes (RFC).
    #[default]
    Auto,
    /// The congestion window at the event (Linux).
    Cwnd,
    /// Bytes in flight at the event (RFC 5681 §3.1 eq. 4).
    FlightSize,
    /// The 4.4BSD rule: `min(cwnd, peer's advertised window)`, the new `ssthresh` truncated to
    /// whole segments, and recomputed on *every* retransmission timeout — the second timeout of
    /// a series starts from the 1-segment loss window, so `ssthresh` falls to its floor of 2
    /// segments. Sources (read for the facts): 4.4BSD-Lite `tcp_timer.c` (TCPT_REXMT: `win =
    /// min(snd_wnd, snd_cwnd) / 2 / t_maxseg`, at least 2, `ssthresh = win · t_maxseg`, on each
    /// expiry) and `tcp_input.c` (the same on the third duplicate ACK; Stevens & Wright, TCP/IP
    /// Illustrated Vol. 2, §25.11 and §29.4); FreeBSD 5.x and OpenBSD 3.x kept both; XNU up
    /// to xnu-2050 (OS X 10.8) too (`tcp_newreno.c` `newreno_ssthresh_update`, `tcp_cubic.c`
    /// `tcp_cubic_pre_fr`: the same `min(snd_cwnd, snd_wnd)`, times 0.8 for CUBIC, truncated to
    /// segments, on every timeout); later XNU is [`SsthreshBasis::Xnu`].
    Bsd,
    /// The Solaris rule: FlightSize (`tcp_snxt − tcp_suna`) halved and truncated to whole
    /// segments, at least 2; a backed-off timeout halves the current `ssthresh` again instead of
    /// holding it (OpenSolaris/illumos `tcp_timer`: `npkt = ((tcp_timer_backoff ?
    /// tcp_cwnd_ssthresh : tcp_snxt − tcp_suna) >> 1) / tcp_mss`, `tcp_cwnd_ssthresh = MAX(npkt,
    /// 2) · tcp_mss`; the same FlightSize halving on the third duplicate ACK; read for the
    /// facts). The repeated halving is applied by the Reno family's timeout
    /// ([`WindowState::reno_timeout`], the Solaris 10 personality's NewReno); for other
    /// controllers this basis is FlightSize in whole segments, the first timeout only.
    Solaris,
    /// XNU since xnu-2422 (OS X 10.9): the BSD basis (`min(cwnd, peer's window)`, whole
    /// segments) on a fast retransmit and on the **first** timeout of a series only — the
    /// congestion control's `after_timeout` hook, which recomputes `ssthresh`, is called when
    /// `t_rxtshift == 1` ("RFC 5681 says: ... the value of ssthresh is held constant"); before
    /// 2422 it was called on every timeout ([`SsthreshBasis::Bsd`]). XNU's CUBIC also skips the
    /// recomputation on a timeout that interrupts a fast recovery (`tcp_cubic_after_timeout`:
    /// `if (!IN_FASTRECOVERY(tp))`; [`RtoEvent::in_recovery`](crate::RtoEvent)), and takes
    /// `W_lastmax` from the same `min(snd_cwnd, snd_wnd)` (`tcp_cubic_pre_fr`). Sources:
    /// apple-oss-distributions/xnu `bsd/netinet/tcp_timer.c` (TCPT_REXMT), `tcp_newreno.c`,
    /// `tcp_cubic.c`, tags xnu-2050.48.11 (every timeout) and xnu-2422.1.72 to xnu-11417
    /// (first only), read for the facts.
    Xnu,
}

impl SsthreshBasis {
    /// Parameter spellings, for the registry.
    pub const CHOICES: &'static [&'static str] =
        &["auto", "cwnd", "flight_size", "bsd", "solaris", "xnu"];

    /// Parses one of [`Self::CHOICES`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(SsthreshBasis::Auto),
            "cwnd" => Some(SsthreshBasis::Cwnd),
            "flight_size" => Some(SsthreshBasis::FlightSize),
            "bsd" => Some(SsthreshBasis::Bsd),
            "solaris" => Some(SsthreshBasis::Solaris),
            "xnu" => Some(SsthreshBasis::Xnu),
            _ => None,
        }
    }

    /// The basis in bytes: `cwnd`, `in_flight` or (BSD) `min(cwnd, peer_window)`, per the
    /// choice and the window's unit. `peer_window` is the peer's advertised window (scaled).
    pub fn bytes(self, win: &WindowState, in_flight: u64, peer_window: u64) -> u64 {
        self.of_window(win.growth().unit, win.cwnd(), in_flight, peer_window)
    }

    /// [`SsthreshBasis::bytes`] for a window of `cwnd` bytes counted in `unit` (a controller
    /// whose window is more than its [`WindowState`], as Compound's cwnd + dwnd).
    pub fn of_window(self, unit: CwndUnit, cwnd: u64, in_flight: u64, peer_window: u64) -> u64 {
        match (self, unit) {
            (SsthreshBasis::Cwnd, _) | (SsthreshBasis::Auto, CwndUnit::Packets) => cwnd,
            (SsthreshBasis::FlightSize | SsthreshBasis::Solaris, _)
            | (SsthreshBasis::Auto, CwndUnit::Bytes) => in_flight,
            (SsthreshBasis::Bsd | SsthreshBasis::Xnu, _) => cwnd.min(peer_window),
        }
    }

    /// Whether the basis is the BSD stacks' `min(cwnd, peer's window)` ([`SsthreshBasis::Bsd`],
    /// [`SsthreshBasis::Xnu`]).
    pub fn is_bsd(self) -> bool {
        matches!(self, SsthreshBasis::Bsd | SsthreshBasis::Xnu)
    }

    /// Whether a retransmission timeout sets `ssthresh` with this basis: as the stack's gate
    /// [`RtoEvent::sets_ssthresh`] says (the first of a series, RFC 5681 §3.1, text after eq.
    /// 4: held on repeated timeouts; not inside a reduction Linux's `tcp_enter_loss` keeps), or
    /// every one with [`SsthreshBasis::Bsd`] (4.4BSD `tcp_timer.c` TCPT_REXMT recomputes it
    /// on each timeout; no BSD personality keeps a recovery's value).
    pub fn reduces_on_timeout(self, ev: &RtoEvent) -> bool {
        ev.sets_ssthresh() || self == SsthreshBasis::Bsd
    }
}

/// Whether an ACK may grow the window: not during loss recovery (lib.rs contract: "window-growth
/// rules must not grow cwnd then") and not when the sender could not use its window
/// ([`AckEvent::app_limited`]: the application or the receive window, not cwnd, limited sending;
/// RFC 7661 spirit, the negation of Linux `tcp_is_cwnd_limited`).
pub fn may_grow(ev: &AckEvent) -> bool {
    !ev.in_recovery && !ev.app_limited
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn window(unit: CwndUnit, abc_limit: u32, cwnd_seg: u64, ssthresh: u64) -> WindowState {
        WindowState::new(&crate::testkit::cc_init(
            MSS as u32, unit, abc_limit, cwnd_seg, ssthresh,
        ))
    }

    fn ack(segs: u32) -> AckEvent {
        AckEvent {
            bytes_acked: u64::from(segs) * MSS,
            packets_acked: segs,
            packets_delivered: segs,
            mss: MSS as u32,
            ..Default::default()
        }
    }

    /// One round of the textbook model: the whole window is acknowledged by ACKs that each
    /// cover `per_ack` segments, the last one what is left (RFC 5681 §3.1; RFC 3465 §1).
    /// Returns cwnd after the round.
    fn slow_start_round(w: &mut WindowState, per_ack: u32) -> u64 {
        let segs = w.cwnd_segments();
        let mut acked = 0u64;
        while acked < segs {
            let n = (segs - acked).min(u64::from(per_ack)) as u32;
            let left = w.slow_start(&ack(n));
            if left > 0 {
                w.reno_increase(left);
            }
            acked += u64::from(n);
        }
        w.cwnd()
    }

    /// Slow start for six rounds from 7 segments (odd, so the last ACK of a round may cover a
    /// single segment); each round must follow `rule(W) -> W'`.
    fn check_slow_start(unit: CwndUnit, abc: u32, per_ack: u32, rule: fn(u64) -> u64) {
        let mut w = window(unit, abc, 7, u64::MAX);
        for r in 0..6 {
            let before = w.cwnd_segments();
            slow_start_round(&mut w, per_ack);
            assert_eq!(
                w.cwnd(),
                rule(before) * MSS,
                "{unit:?} abc={abc} per_ack={per_ack} round {r}"
            );
        }
    }

    #[test]
    fn test_timeout_gate_truth_table() {
        // RtoEvent::sets_ssthresh: the first timeout of a series only, and not inside a
        // reduction the stack keeps (Linux tcp_enter_loss); the BSD basis recomputes on every
        // timeout (no BSD personality keeps a recovery's value).
        let ev = |backoff_count, keeps_ssthresh| RtoEvent {
            backoff_count,
            keeps_ssthresh,
            ..Default::default()
        };
        for (backoff, keeps, gate, bsd) in [
            (1, false, true, true),
            (2, false, false, true),
            (1, true, false, true),
            (3, true, false, true),
        ] {
            let e = ev(backoff, keeps);
            assert_eq!(e.sets_ssthresh(), gate, "backoff {backoff} keeps {keeps}");
            for basis in [
                SsthreshBasis::Auto,
                SsthreshBasis::Cwnd,
                SsthreshBasis::FlightSize,
                SsthreshBasis::Solaris,
                SsthreshBasis::Xnu,
            ] {
                assert_eq!(basis.reduces_on_timeout(&e), gate, "{basis:?}");
            }
            assert_eq!(SsthreshBasis::Bsd.reduces_on_timeout(&e), bsd);
        }
    }

    #[test]
    fn test_reno_timeout_in_kept_reduction_only_collapses_window() {
        // A timeout inside a recovery the stack keeps: ssthresh stays (5 segments) although
        // cwnd (8) would give 4; the window still collapses to one segment.
        let mut w = window(CwndUnit::Packets, 0, 8, 5 * MSS);
        let ev = RtoEvent {
            backoff_count: 1,
            in_flight: 8 * MSS,
            mss: MSS as u32,
            keeps_ssthresh: true,
            ..Default::default()
        };
        w.reno_timeout(SsthreshBasis::Auto, &ev);
        assert_eq!((w.cwnd(), w.ssthresh()), (MSS, 5 * MSS));
        let mut w = window(CwndUnit::Packets, 0, 8, 5 * MSS);
        w.reno_timeout(
            SsthreshBasis::Auto,
            &RtoEvent {
                keeps_ssthresh: false,
                ..ev
            },
        );
        assert_eq!((w.cwnd(), w.ssthresh()), (MSS, 4 * MSS));
    }

    #[test]
    fn test_delivered_credit_does_not_count_sacked_segments_again() {
        // The ACK that ends a recovery covers 20 segments, 18 of them SACKed earlier: it
        // delivers 2. Linux (count_delivered) credits 2, RFC 3465 counting credits 20.
        let ev = AckEvent {
            bytes_acked: 20 * MSS,
            packets_acked: 20,
            packets_delivered: 2,
            mss: MSS as u32,
            ..Default::default()
        };
        let mut g = WindowGrowth {
            unit: CwndUnit::Packets,
            abc_limit: u32::MAX,
            count_delivered: false,
            slow_start_inclusive: false,
            ca_increment_truncated: false,
        };
        assert_eq!(g.avoidance_credit(&ev, MSS), 20);
        assert_eq!(g.slow_start_credit(&ev, MSS, false), 20);
        g.count_delivered = true;
        assert_eq!(g.avoidance_credit(&ev, MSS), 2);
        assert_eq!(g.slow_start_credit(&ev, MSS, false), 2);
        // A SACK-only ACK delivers data but grows nothing (tcp_may_raise_cwnd: FLAG_DATA_ACKED).
        let sack_only = AckEvent {
            packets_delivered: 3,
            bytes_sacked: 3 * MSS,
            mss: MSS as u32,
            ..Default::default()
        };
        assert_eq!(g.avoidance_credit(&sack_only, MSS), 0);
        // Without ABC (one unit per ACK) the setting changes nothing.
        g.abc_limit = 0;
        assert_eq!(g.avoidance_credit(&ev, MSS), 1);
    }

    #[test]
    fn test_slow_start_ack_per_segment_doubles_per_rtt() {
        // RFC 5681 §3.1: one ACK per segment, +1 SMSS per ACK: W' = 2W, in both units, with
        // and without ABC.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for abc in [0, 1, 2, u32::MAX] {
                check_slow_start(unit, abc, 1, |w| 2 * w);
            }
        }
    }

    #[test]
    fn test_slow_start_delayed_ack_without_abc_grows_one_and_a_half() {
        // RFC 3465 §1: an ACK every second segment and one increment per ACK: ⌈W/2⌉ ACKs, so
        // W' = W + ⌈W/2⌉ (≈ ×1.5 per RTT), in both units.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            check_slow_start(unit, 0, 2, |w| w + w.div_ceil(2));
        }
    }

    #[test]
    fn test_slow_start_delayed_ack_with_abc_doubles() {
        // RFC 3465 §2.2 with L = 2: an ACK for two segments adds 2 SMSS: W' = 2W again.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            check_slow_start(unit, 2, 2, |w| 2 * w);
            check_slow_start(unit, u32::MAX, 2, |w| 2 * w);
            // L = 1 caps each ACK at one SMSS: back to W + ⌈W/2⌉.
            check_slow_start(unit, 1, 2, |w| w + w.div_ceil(2));
        }
    }

    #[test]
    fn test_slow_start_ack_stops_at_ssthresh_and_carries_leftover() {
        // Linux tcp_slow_start: cwnd = min(cwnd + acked, ssthresh), the rest goes to CA.
        let mut w = window(CwndUnit::Packets, u32::MAX, 9, 10 * MSS);
        let left = w.slow_start(&ack(3));
        assert_eq!(w.cwnd(), 10 * MSS);
        assert_eq!(left, 2);
        assert!(!w.in_slow_start());
        // Bytes: 9.5 segments, ssthresh 10, ACK of 2 segments with ABC L=2: 500 B used.
        let mut w = window(CwndUnit::Bytes, 2, 9, 10 * MSS);
        w.set_cwnd(9500);
        let left = w.slow_start(&ack(2));
        assert_eq!(w.cwnd(), 10_000);
        assert_eq!(left, 1500);
    }

    fn inclusive(unit: CwndUnit, abc_limit: u32, cwnd_seg: u64, ssthresh: u64) -> WindowState {
        let mut init = crate::testkit::cc_init(MSS as u32, unit, abc_limit, cwnd_seg, ssthresh);
        init.growth.slow_start_inclusive = true;
        WindowState::new(&init)
    }

    #[test]
    fn test_inclusive_slow_start_grows_past_ssthresh_on_the_ack_at_equality() {
        // 4.4BSD / Linux 2.6: at cwnd = ssthresh the ACK still slow-starts, uncapped: one whole
        // segment (Linux packet counting without ABC) or maxseg (BSD bytes), then avoidance.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut w = inclusive(unit, 0, 10, 10 * MSS);
            assert!(w.in_slow_start(), "{unit:?}");
            assert_eq!(w.slow_start(&ack(1)), 0, "{unit:?}");
            assert_eq!(w.cwnd(), 11 * MSS, "{unit:?}");
            assert!(!w.in_slow_start(), "{unit:?}");
            // The next ACK is congestion avoidance: its credit comes back unused.
            assert!(w.slow_start(&ack(1)) > 0, "{unit:?}");
            assert_eq!(w.cwnd(), 11 * MSS, "{unit:?}");
        }
        // The RFC 5681 / Linux >= 4.3 rule at the same point: avoidance at once.
        let mut w = window(CwndUnit::Packets, 0, 10, 10 * MSS);
        assert!(!w.in_slow_start());
        assert!(w.slow_start(&ack(1)) > 0);
        assert_eq!(w.cwnd(), 10 * MSS);
    }

    #[test]
    fn test_inclusive_slow_start_is_not_capped_below_ssthresh() {
        // Linux 2.6 with ABC L=2 at cwnd 9, ssthresh 10: +2 segments (no min with ssthresh).
        let mut w = inclusive(CwndUnit::Packets, 2, 9, 10 * MSS);
        assert_eq!(w.slow_start(&ack(2)), 0);
        assert_eq!(w.cwnd(), 11 * MSS);
        // Below ssthresh both rules grow alike.
        let mut a = inclusive(CwndUnit::Bytes, 0, 4, 10 * MSS);
        let mut b = window(CwndUnit::Bytes, 0, 4, 10 * MSS);
        for _ in 0..5 {
            a.slow_start(&ack(1));
            b.slow_start(&ack(1));
        }
        assert_eq!(a.cwnd(), b.cwnd());
        assert_eq!(a.cwnd(), 9 * MSS);
    }

    #[test]
    fn test_slow_start_after_rto_uses_abc_limit_one_in_bytes() {
        // RFC 3465 §2.3: L = 1 SMSS in the slow start after an RTO.
        let mut w = window(CwndUnit::Bytes, 2, 10, 20 * MSS);
        w.on_timeout();
        assert_eq!(w.cwnd(), MSS);
        assert!(w.after_rto());
        w.slow_start(&ack(2));
        assert_eq!(w.cwnd(), 2 * MSS);
        // Leaving slow start ends the RTO restriction.
        w.set_cwnd(20 * MSS);
        assert!(!w.after_rto());
    }

    /// Congestion avoidance for `rounds` RTTs with an ACK per `per_ack` segments; returns the
    /// average growth per RTT in segments.
    fn ca_growth_per_rtt(unit: CwndUnit, abc: u32, per_ack: u32, start_seg: u64) -> f64 {
        let mut w = window(unit, abc, start_seg, 2 * MSS);
        let start = w.cwnd() as f64;
        let rounds = 40;
        for _ in 0..rounds {
            slow_start_round(&mut w, per_ack);
        }
        (w.cwnd() as f64 - start) / MSS as f64 / f64::from(rounds)
    }

    #[test]
    fn test_avoidance_ack_per_segment_adds_one_segment_per_rtt() {
        // RFC 5681 §3.1 / Linux tcp_cong_avoid_ai: +1 SMSS per RTT with an ACK per segment.
        for abc in [0, 2] {
            let g = ca_growth_per_rtt(CwndUnit::Packets, abc, 1, 20);
            assert!((g - 1.0).abs() < 0.03, "packets abc={abc}: {g}");
            // Bytes: SMSS²/cwnd per ACK grows slightly less than 1 SMSS per RTT because cwnd
            // grows within the RTT and each increment is rounded down: within 3 %.
            let g = ca_growth_per_rtt(CwndUnit::Bytes, abc, 1, 20);
            assert!((g - 1.0).abs() < 0.03, "bytes abc={abc}: {g}");
        }
    }

    #[test]
    fn test_avoidance_delayed_ack_packets_no_abc_adds_half_segment_per_rtt() {
        // Per-ACK counting with one ACK per two segments: cwnd/2 ACKs per RTT, +1 segment per
        // cwnd ACKs: ~0.5 segment per RTT (RFC 3465 §1; Linux without ABC).
        let g = ca_growth_per_rtt(CwndUnit::Packets, 0, 2, 20);
        assert!((g - 0.5).abs() < 0.03, "{g}");
        let g = ca_growth_per_rtt(CwndUnit::Bytes, 0, 2, 20);
        assert!((g - 0.5).abs() < 0.03, "{g}");
        // With ABC the bytes are counted: back to one segment per RTT.
        let g = ca_growth_per_rtt(CwndUnit::Packets, 2, 2, 20);
        assert!((g - 1.0).abs() < 0.03, "{g}");
        let g = ca_growth_per_rtt(CwndUnit::Bytes, 2, 2, 20);
        assert!((g - 1.0).abs() < 0.03, "{g}");
    }

    #[test]
    fn test_additive_increase_packets_counter_semantics() {
        // +1 segment after exactly `per` credit units; surplus carried.
        let mut w = window(CwndUnit::Packets, u32::MAX, 10, 2 * MSS);
        for _ in 0..9 {
            w.additive_increase(10, 1);
        }
        assert_eq!(w.cwnd_segments(), 10);
        w.additive_increase(10, 1);
        assert_eq!(w.cwnd_segments(), 11);
        // A big ACK crossing two thresholds adds two segments.
        w.additive_increase(5, 12);
        assert_eq!(w.cwnd_segments(), 13);
        assert_eq!(w.ai_count, 2);
        // A counter left above a new, smaller `per` yields one segment and restarts.
        w.additive_increase(10, 9); // count 11 ≥ 10 → +1, count 1
        assert_eq!(w.cwnd_segments(), 14);
        w.additive_increase(1, 0); // count 1 ≥ 1 → +1, count 0
        assert_eq!(w.cwnd_segments(), 15);
    }

    #[test]
    fn test_additive_increase_bytes_keeps_sub_byte_increments() {
        // RFC 5681 §3.1 eq. 3 at cwnd = 2 MB, SMSS = 1000: 0.5 byte per ACK. Two ACKs add one
        // byte (nothing lost to rounding, nothing invented), 2000 ACKs add ~1000 bytes.
        let mut w = window(CwndUnit::Bytes, 0, 10, 2 * MSS);
        w.set_cwnd(2_000_000);
        w.additive_increase(w.cwnd(), MSS);
        assert_eq!(w.cwnd(), 2_000_000);
        w.additive_increase(w.cwnd(), MSS);
        assert_eq!(w.cwnd(), 2_000_001);
        for _ in 0..1998 {
            w.additive_increase(w.cwnd(), MSS);
        }
        assert!((2_000_999..=2_001_000).contains(&w.cwnd()), "{}", w.cwnd());
    }

    #[test]
    fn test_bsd_truncates_each_avoidance_increment() {
        // 4.4BSD `incr = incr * incr / cw` in unsigned integers (FreeBSD 5.x, OpenBSD 3.x):
        // with SMSS 1448 at cwnd 14 480 (10 segments) each ACK adds 144 bytes, where the exact
        // rule carries 0.8 byte per ACK and adds a 145th byte on every fifth ACK or so.
        let mut init = crate::testkit::cc_init(1448, CwndUnit::Bytes, 0, 10, 2);
        init.growth.ca_increment_truncated = true;
        let mut bsd = WindowState::new(&init);
        init.growth.ca_increment_truncated = false;
        let mut exact = WindowState::new(&init);
        for w in [&mut bsd, &mut exact] {
            w.set_cwnd(14_480);
        }
        bsd.additive_increase(bsd.cwnd(), 1448);
        exact.additive_increase(exact.cwnd(), 1448);
        assert_eq!(bsd.cwnd(), 14_480 + 144);
        assert_eq!(exact.cwnd(), 14_480 + 144);
        for _ in 0..4 {
            bsd.additive_increase(bsd.cwnd(), 1448);
            exact.additive_increase(exact.cwnd(), 1448);
        }
        // Five ACKs: the truncated rule has lost the carried fractions (> 2 bytes).
        assert!(
            exact.cwnd() >= bsd.cwnd() + 2,
            "{} {}",
            exact.cwnd(),
            bsd.cwnd()
        );
        // At cwnd > SMSS² the truncated increment is 0: BSD's window stops growing there.
        bsd.set_cwnd(1448 * 1448 + 1);
        let before = bsd.cwnd();
        bsd.additive_increase(bsd.cwnd(), 1448);
        assert_eq!(bsd.cwnd(), before);
    }

    #[test]
    fn test_packets_unit_rounds_windows_to_segments() {
        let mut w = window(CwndUnit::Packets, 0, 10, u64::MAX);
        w.set_cwnd(4_500);
        assert_eq!(w.cwnd(), 4_000);
        w.set_cwnd(10);
        assert_eq!(w.cwnd(), MSS);
        w.set_ssthresh(100);
        assert_eq!(w.ssthresh(), 2 * MSS);
        w.set_ssthresh(u64::MAX);
        assert_eq!(w.ssthresh(), u64::MAX);
    }

    #[test]
    fn test_divided_slow_start_grows_a_quarter() {
        // RFC 9406 §4.2 CSS: a quarter of the slow-start increase, remainder carried.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut w = window(unit, u32::MAX, 40, u64::MAX);
            for _ in 0..40 {
                w.slow_start_divided(&ack(1), 4);
            }
            assert_eq!(w.cwnd_segments(), 50, "{unit:?}");
        }
    }

    #[test]
    fn test_may_grow_respects_recovery_and_limits() {
        let ev = ack(1);
        assert!(may_grow(&ev));
        assert!(!may_grow(&AckEvent {
            in_recovery: true,
            ..ev
        }));
        assert!(!may_grow(&AckEvent {
            app_limited: true,
            ..ev
        }));
    }
}
