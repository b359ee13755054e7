//! H-TCP (Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
//! 2004; L: net/ipv4/tcp_htcp.c; stacks-and-ccas.md A.5).
//!
//! * **Increase**: `cwnd += α/cwnd` per ACK unit (`aimd::increase_per_window`) with
//!   `α = 2·(1 − β)·α(Δ)`, where `Δ` is the time since the last congestion event (Linux
//!   `last_cong`, set when recovery, loss recovery after an RTO, or CWR starts; at the first ACK
//!   before any) and, with `Δ_L` = 1 s,
//!   `α(Δ) = 1` for `Δ ≤ Δ_L`, else `1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²` (Leith & Shorten §3,
//!   Linux `htcp_alpha_update`). The `2(1 − β)` factor keeps the flow Reno-friendly at `Δ ≤ Δ_L`.
//! * **RTT scaling** (`rtt_scaling`): `α(Δ)` is multiplied by `RTTmin/100 ms`, the ratio
//!   `100 ms/RTTmin` clamped to [0.5, 10] (Linux `scale`, so the factor lies in [0.1, 2]); Linux
//!   keeps the integer result at least 1 (`if (!factor) factor = 1`), modelled as `max(·, 1)`.
//! * **Adaptive backoff** (`adaptive_backoff`): at a congestion event
//!   `β = RTTmin/RTTmax` clamped to [0.5, 0.8] (Linux `BETA_MIN` 64/128, `BETA_MAX` 102/128, in
//!   1/128 steps), used only when `RTTmin > 10 ms` (Linux `htcp_beta_update`) and only from the
//!   second congestion event on (`modeswitch`); otherwise `β = 0.5`. `RTTmax` grows only on
//!   samples taken outside recovery that are at most 20 ms above it (an outlier filter), and
//!   fades to `RTTmin + 0.95·(RTTmax − RTTmin)` at each event (`htcp_param_update`).
//! * **Bandwidth switch** (`bandwidth_switch`): the throughput `B` is sampled when about a
//!   window (`cwnd − α` segments) and at least `RTTmin` have passed since the last sample, over
//!   ACKs outside recovery: the first samples after an event (≤ 3 `RTTmin`) restart the
//!   estimate, later ones are smoothed `B ← (3B + sample)/4`, and `maxB` tracks its maximum.
//!   At a congestion event, if `maxB` moved more than 20 % from its value at the previous event
//!   (`!(4·old ≤ 5·maxB ≤ 6·old)`), `β = 0.5` and the adaptive mode restarts (Linux
//!   `measure_achieved_throughput`, `htcp_beta_update`). Bytes instead of packets.
//! * **Decrease**: `ssthresh = max(basis·β, 2)` (Linux `(cwnd·β) >> 7`); RTO: the same on the
//!   first timeout, `Δ` restarts, cwnd 1 segment. Undo restores `last_cong`, `RTTmax` and the
//!   previous `maxB` (`htcp_cwnd_undo`).
//!
//! Arithmetic: `α(Δ)` and the RTT factor in real numbers (Linux computes them in jiffies and
//! integers; e.g. `α(2 s)` is 11 there instead of 11.25), β in Linux's 1/128 fixed point.
//! `α` is recomputed on every ACK instead of after each increment.
//!
//! # Linux's tcp_htcp.c (`version = "2.6.16"` … `"2.6.28"`)
//!
//! The rules above are the paper's (`version = "paper"`, the default). The Linux versions
//! follow net/ipv4/tcp_htcp.c as the kernels shipped it, read for the facts only (nothing
//! copied): the 2.6.16 file (see "2.6.16" below), the CentOS 5 tree's 2.6.18 file
//! (spacex/kernel-centos5), a 2.6.2x file (SenberHu/Linux-Kernel-2.16, `pkts_acked(sk, n, s32
//! rtt)`), today's torvalds/linux, and the commits of the file's history named below
//! (git.zx2c4.com log, tangled.org diffs). In every Linux version (2.6.16's differences: below):
//! * **Counter**, packets unit (`htcp_cong_avoid`): the ACK that finds
//!   `(snd_cwnd_cnt·α) >> 7 ≥ cwnd` (α in 1/128) adds one segment, clears the counter, is not
//!   counted, and only then recomputes α (`htcp_alpha_update`); any other ACK adds its count.
//!   α therefore changes only at an increment and at a congestion event (`htcp_param_update`,
//!   which runs in the `ssthresh` hook before `htcp_reset` restarts Δ, so the first increment
//!   after an event uses the α of the epoch that ended). Slow start or congestion avoidance,
//!   never both on one ACK.
//! * **Integer arithmetic in jiffies** ([`HtcpParams::hz`], Linux `HZ`): Δ = jiffies since
//!   `last_cong`; `factor = 1 + (10d + (d/2)²/HZ)/HZ` with `d = Δ − HZ` (integer); RTT scaling
//!   `scale = (HZ·8)/(10·minRTT)` clamped to [4, 80], `factor = max(8·factor/scale, 1)`; α =
//!   `2·factor·(128 − β)`. At HZ 250 and 180 ms (45 jiffies) `scale` is 4, so the factor
//!   doubles where the paper's ratio gives ×1.8. β = `(minRTT·128)/maxRTT` in jiffies when
//!   `minRTT > msecs_to_jiffies(10)` (3 at HZ 250); the RTTmax outlier step is
//!   `msecs_to_jiffies(20)`.
//! * **Δ restarts when the connection returns to Open** (2.6.17+, `htcp_state(TCP_CA_Open)`),
//!   not only when recovery starts (`htcp_reset` on CWR, Recovery and Loss): in the model, at
//!   the last ACK that arrived outside Open before one in Open ([`AckEvent::outside_open`]). Until
//!   "tcp_htcp: last_cong bug fix" (8f65b5354b1, D. Leith, Nov 2008, 2.6.28) on *every* return
//!   to Open (Disorder → Open included) and the undo restored the saved `last_cong`, `maxRTT`
//!   and `old_maxB` unconditionally; from it only after CWR, Recovery or Loss, and an undo
//!   restores them once.
//! * **Undo** (`htcp_cwnd_undo`, to 4.12): `cwnd = max(cwnd, ssthresh·128/β)` from the reduced
//!   `ssthresh`, `ssthresh = max(ssthresh, prior)` (tcp_input.c `tcp_undo_cwr`); 4.13's
//!   "tcp: fix cwnd undo in Reno and HTCP congestion controls" (Y. Cheng, Aug 2017) restores
//!   the prior window instead, which is what the paper mode's undo does.
//!
//! By version:
//!
//! | version | counts per ACK | RTT for minRTT/maxRTT | RTTmax grows | α store | Δ restart on Open |
//! |---|---|---|---|---|---|
//! | `2.6.16` | 1 (each ACK once) | `srtt`, in congestion avoidance | Open, after the first loss, `ccount` > 3 | u16 | never (Δ = `ccount`·minRTT) |
//! | `2.6.17` | packets acked if Open, else 1 | as 2.6.16 | as 2.6.16 | u16 | every return |
//! | `2.6.19` | as 2.6.17 | as 2.6.16 | as 2.6.16 | u32 | every return |
//! | `2.6.23` | as 2.6.17 | each ACK's sample (`usecs_to_jiffies`, rounded up) | Open | u32 | every return |
//! | `2.6.28` | as 2.6.17 | as 2.6.23 | Open | u32 | after CWR/Recovery/Loss |
//!
//! Sources by row: "[TCP] H-TCP: Account for delayed-ACKS" (B. Even, committed 2006-03-20,
//! the day 2.6.16 was released, so first in 2.6.17) introduced `snd_cwnd_cnt +=
//! ca->pkts_acked` (the 2.6.18 file: `pkts_acked` set from the `pkts_acked` hook in Open, reset
//! to 1 after each `cong_avoid`), and its companion "[TCP] H-TCP: Better time accounting"
//! (same day, same release) the jiffies rule `htcp_cong_time` = jiffies − `last_cong`.
//!
//! **2.6.16** (`version = "2.6.16"`), from the 2.6.16 file itself: net/ipv4/tcp_htcp.c as
//! stored in GitHub benji-cannot-code/fast-vc-linux-benchmark (a replay of mainline's history
//! from 2.6.12-rc2, "linux-main-100k"), version at that repository's commit d47e3356f1b6,
//! read for the facts only. Its content places it between "[TCP] H-TCP: Fix accounting"
//! (2c74088e410, committed 2006-01-30, in 2.6.16-rc2's shortlog: "the ccount variable is also
//! adjusted a few lines above this one" — this file increments `ccount` in one place only) and
//! the two 2006-03-20 commits (no `pkts_acked` or `last_cong` field yet), with the 2.6.13–2.6.17
//! `cong_avoid(sk, ack, rtt, in_flight, data_acked)`, `#include <linux/config.h>` and the
//! `min_cwnd` hook removed in 2.6.18: the file 2.6.16 shipped. Its rules, where they differ
//! from the later ones above:
//! * `struct htcp` has `u8 ccount` ("Number of RTTs since last congestion event"),
//!   `u8 undo_ccount` and `u32 snd_cwnd_cnt2`, no `last_cong`. In `htcp_cong_avoid`'s
//!   congestion-avoidance branch, after `measure_rtt`: `if (ca->snd_cwnd_cnt2++ >
//!   tp->snd_cwnd) { ca->ccount++; ca->snd_cwnd_cnt2 = 0; htcp_alpha_update(ca); }` — a
//!   "round trip" is cwnd + 2 ACKs that reach congestion avoidance (about two RTTs with an
//!   ACK per two segments), and `ccount` wraps at 256.
//! * `htcp_alpha_update` takes `diff = ca->ccount * minRTT` ("time since last backoff") in
//!   jiffies, not the time since the event; the increment (`(tp->snd_cwnd_cnt++ *
//!   ca->alpha)>>7 >= tp->snd_cwnd`: add a segment and clear the counter, the same rule as
//!   later) does not recompute α. α changes at a round and in `htcp_param_update`.
//! * `htcp_reset` (CWR, Recovery, Loss) saves `undo_ccount` and clears `ccount` and
//!   `snd_cwnd_cnt2`; `htcp_state` has no `TCP_CA_Open` case (nothing restarts on the return
//!   to Open); `htcp_cwnd_undo` restores `ccount`, `maxRTT`, `old_maxB`.
//! * `measure_rtt` (srtt >> 3) grows RTTmax only in Open with `snd_ssthresh < 0xFFFF &&
//!   ca->ccount > 3`, outlier step `HZ/50`; the throughput estimate restarts while
//!   `ca->ccount <= 3`; adaptive backoff needs `minRTT > max(HZ/100, 1)` (2 jiffies at HZ 250,
//!   where later kernels need `msecs_to_jiffies(10)` = 3).
//! * `u16 alpha` (as to 2.6.18) and `u16 packetcount`; the latter is not modelled (the
//!   throughput estimate counts bytes): it wraps only above 65 535 segments per sample.
//!
//! For 2.6.17–2.6.22, `srtt` and the RTTmax gate (`snd_ssthresh < 0xFFFF && htcp_ccount > 3`)
//! are the 2.6.18 file's `measure_rtt`,
//! called from `htcp_cong_avoid` in congestion avoidance; "[TCP]: htcp - use measured rtt"
//! and "[TCP]: H-TCP maxRTT estimation at startup" (S. Hemminger, July/August 2007, 2.6.23)
//! moved it to the `pkts_acked` hook's RTT and dropped the gate. α was a u16 in 1/128 until
//! "[TCP] H-TCP: fix integer overflow" (2a272f98619, G. McCullagh, Oct 2006, 2.6.19: "alpha can
//! exceed 65000, so alpha needs to be a u32"): before it α wraps modulo 65536 (512 segments
//! per RTT at β = 0.5). The throughput estimate stays in bytes per second and nanoseconds
//! (Linux: packets per second, jiffies), `cwnd ≤ ssthresh` still means congestion avoidance at
//! equality (Linux 2.6: slow start), and Linux versions in the bytes unit keep the paper's
//! increase.

use crate::aimd::{self, increase_per_window, scaled_ssthresh};
use crate::growth::{may_grow, CwndUnit, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, MS, SEC};

/// Which H-TCP: the paper's rules in real arithmetic, or Linux's tcp_htcp.c from the release
/// named (see the module doc's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum HtcpVersion {
    #[default]
    Paper,
    Linux2616,
    Linux2617,
    Linux2619,
    Linux2623,
    Linux2628,
}

impl HtcpVersion {
    pub const CHOICES: &'static [&'static str] =
        &["paper", "2.6.16", "2.6.17", "2.6.19", "2.6.23", "2.6.28"];

    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "paper" => HtcpVersion::Paper,
            "2.6.16" => HtcpVersion::Linux2616,
            "2.6.17" => HtcpVersion::Linux2617,
            "2.6.19" => HtcpVersion::Linux2619,
            "2.6.23" => HtcpVersion::Linux2623,
            "2.6.28" => HtcpVersion::Linux2628,
            _ => return None,
        })
    }
    fn linux(self) -> bool {
        self != HtcpVersion::Paper
    }
    /// `snd_cwnd_cnt += ca->pkts_acked` (2.6.17+) rather than one per ACK.
    fn counts_packets(self) -> bool {
        self >= HtcpVersion::Linux2617
    }
    /// α held in a u16 (before 2.6.19).
    fn alpha_u16(self) -> bool {
        self < HtcpVersion::Linux2619
    }
    /// minRTT/maxRTT from `srtt` in congestion avoidance, RTTmax gated (before 2.6.23).
    fn rtt_from_srtt(self) -> bool {
        self < HtcpVersion::Linux2623
    }
    /// Δ restarts on every return to Open (before 2.6.28).
    fn reset_on_every_open(self) -> bool {
        self < HtcpVersion::Linux2628
    }
    /// 2.6.16's round-trip accounting (until "[TCP] H-TCP: Better time accounting", 2.6.17):
    /// Δ = `ccount`·minRTT, `ccount` (a u8) counting rounds of cwnd + 2 ACKs in congestion
    /// avoidance, α recomputed at each such round instead of at each increment, `ccount`
    /// reset only when CWR, Recovery or Loss starts, and the jiffy thresholds `HZ/100`,
    /// `HZ/50` (module doc).
    fn counts_rtts(self) -> bool {
        self == HtcpVersion::Linux2616
    }
}

/// H-TCP's switches (Linux module parameters `use_rtt_scaling`, `use_bandwidth_switch`; the
/// adaptive backoff has no Linux switch), the version and Linux's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtcpParams {
    pub rtt_scaling: bool,
    pub bandwidth_switch: bool,
    pub adaptive_backoff: bool,
    pub ssthresh_from: SsthreshBasis,
    pub version: HtcpVersion,
    /// Linux `HZ`, the jiffy rate of the Linux versions' arithmetic (250: the default of
    /// Linux 2.6.13 and later, the 4-ms clock of this project's 2.6 personalities).
    pub hz: u32,
}

impl Default for HtcpParams {
    fn default() -> Self {
        HtcpParams {
            rtt_scaling: true,
            bandwidth_switch: true,
            adaptive_backoff: true,
            ssthresh_from: SsthreshBasis::Auto,
            version: HtcpVersion::Paper,
            hz: 250,
        }
    }
}

/// `Δ_L` (Leith & Shorten; Linux `HZ`).
const DELTA_L: Nanos = SEC;
/// RTT scaling reference (Linux `(HZ << 3) / (10 * minRTT)`: 100 ms).
const RTT_REF: Nanos = 100 * MS;
/// Adaptive backoff needs `RTTmin > 10 ms` (Linux `msecs_to_jiffies(10)`).
const ADAPTIVE_MIN_RTT: Nanos = 10 * MS;
/// RTTmax outlier filter: samples more than 20 ms above RTTmax are ignored.
const MAX_RTT_STEP: Nanos = 20 * MS;
/// β in 1/128 (Linux `BETA_MIN` 1<<6, `BETA_MAX` 102).
const BETA_SHIFT: u64 = 128;
const BETA_MIN: u64 = 64;
const BETA_MAX: u64 = 102;
/// α passed to the increase in 1/1024 segments.
const ALPHA_DEN: u64 = 1024;
/// Linux α = 1.0 in 1/128 (`ALPHA_BASE`), the value before the first update.
const ALPHA_BASE: u64 = 128;

/// H-TCP.
#[derive(Clone, Debug)]
pub struct Htcp {
    p: HtcpParams,
    win: WindowState,
    /// Start of the current congestion epoch (Linux `last_cong`).
    last_cong: Option<Nanos>,
    min_rtt: Nanos,
    max_rtt: Nanos,
    /// β in 1/128.
    beta: u64,
    /// Adaptive β allowed (Linux `modeswitch`: from the second event on).
    modeswitch: bool,
    /// Current α = 2(1 − β)·α(Δ), segments per RTT.
    alpha: f64,
    // Throughput estimate (bytes/s).
    count: u64,
    last_time: Option<Nanos>,
    bi: f64,
    min_b: f64,
    max_b: f64,
    old_max_b: f64,
    // Undo.
    undo: Option<(Option<Nanos>, Nanos, f64)>,
    // Linux versions only.
    /// α in 1/128 (Linux `ca->alpha`).
    alpha_fx: u64,
    /// minRTT and maxRTT in jiffies (Linux `ca->minRTT`, `ca->maxRTT`).
    min_j: u64,
    max_j: u64,
    /// Linux `undo_last_cong != 0`: a congestion state was entered and neither undone nor
    /// left for Open since.
    cong_pending: bool,
    /// Time of the last ACK that arrived outside Open, until one arrives in Open.
    outside_open_at: Option<Nanos>,
    /// 2.6.16 (`counts_rtts`): Linux `ca->ccount` (a u8, kept here modulo 256), the round
    /// counter `ca->snd_cwnd_cnt2`, and `ca->undo_ccount`.
    ccount: u64,
    cnt2: u64,
    undo_ccount: u64,
}

impl Htcp {
    pub fn new(init: &CcInit, p: HtcpParams) -> Self {
        Htcp {
            p,
            win: WindowState::new(init),
            last_cong: None,
            min_rtt: 0,
            max_rtt: 0,
            beta: BETA_MIN,
            modeswitch: false,
            alpha: 1.0,
            count: 0,
            last_time: None,
            bi: 0.0,
            min_b: 0.0,
            max_b: 0.0,
            old_max_b: 0.0,
            undo: None,
            alpha_fx: ALPHA_BASE,
            min_j: 0,
            max_j: 0,
            cong_pending: false,
            outside_open_at: None,
            ccount: 0,
            cnt2: 0,
            undo_ccount: 0,
        }
    }

    pub fn params(&self) -> &HtcpParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// The decrease factor β that the next congestion event would start from (the last one
    /// computed).
    pub fn beta(&self) -> f64 {
        self.beta as f64 / BETA_SHIFT as f64
    }
    /// `2(1 − β)·α(Δ)` as last computed, segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn rtt_min_max(&self) -> (Nanos, Nanos) {
        (self.min_rtt, self.max_rtt)
    }
    /// Smoothed throughput and its maximum since the last event, bytes per second.
    pub fn throughput(&self) -> (f64, f64) {
        (self.bi, self.max_b)
    }

    /// `α(Δ)` of Leith & Shorten with the RTT scaling, for `now`.
    fn alpha_factor(&self, now: Nanos) -> f64 {
        let since = now.saturating_sub(self.last_cong.unwrap_or(now));
        let mut factor = if since > DELTA_L {
            let d = (since - DELTA_L) as f64 / SEC as f64;
            1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
        } else {
            1.0
        };
        if self.p.rtt_scaling && self.min_rtt > 0 {
            let scale = (RTT_REF as f64 / self.min_rtt as f64).clamp(0.5, 10.0);
            factor = (factor / scale).max(1.0);
        }
        factor
    }

    fn update_alpha(&mut self, now: Nanos) {
        let one_minus_beta = (BETA_SHIFT - self.beta) as f64 / BETA_SHIFT as f64;
        self.alpha = 2.0 * one_minus_beta * self.alpha_factor(now);
    }

    /// Linux `measure_rtt`.
    fn measure_rtt(&mut self, sample: Nanos, in_recovery: bool) {
        let s = sample.max(1);
        if self.min_rtt == 0 || s < self.min_rtt {
            self.min_rtt = s;
        }
        if !in_recovery {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < s && s <= self.max_rtt.saturating_add(MAX_RTT_STEP) {
                self.max_rtt = s;
            }
        }
    }

    /// Linux `measure_achieved_throughput` (bandwidth part).
    fn measure_throughput(&mut self, ev: &AckEvent) {
        if ev.in_recovery {
            self.count = 0;
            self.last_time = Some(ev.now);
            return;
        }
        let last = *self.last_time.get_or_insert(ev.now);
        self.count = self.count.saturating_add(ev.bytes_acked);
        let mss = self.win.mss();
        let alpha_segs = (self.alpha as u64).max(1);
        let enough = self
            .win
            .cwnd()
            .saturating_sub(alpha_segs.saturating_mul(mss));
        let elapsed = ev.now.saturating_sub(last);
        if self.count >= enough && self.min_rtt > 0 && elapsed >= self.min_rtt {
            let cur = self.count as f64 * SEC as f64 / elapsed as f64;
            let rounds = if self.p.version.counts_rtts() {
                // 2.6.16: `if (ca->ccount <= 3)`.
                self.ccount
            } else {
                let since = ev.now.saturating_sub(self.last_cong.unwrap_or(ev.now));
                since / self.min_rtt
            };
            if rounds <= 3 {
                // Just after a backoff: restart the estimate.
                self.bi = cur;
                self.min_b = cur;
                self.max_b = cur;
            } else {
                self.bi = (3.0 * self.bi + cur) / 4.0;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.count = 0;
            self.last_time = Some(ev.now);
        }
    }

    /// Linux `htcp_beta_update`, on RTTs `min`/`max` and the adaptive threshold `floor` in one
    /// unit (nanoseconds in the paper mode, jiffies in the Linux versions).
    fn update_beta(&mut self, min: u64, max: u64, floor: u64) {
        if self.p.bandwidth_switch {
            let old = self.old_max_b;
            self.old_max_b = self.max_b;
            let five = 5.0 * self.max_b;
            if !(4.0 * old <= five && five <= 6.0 * old) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.p.adaptive_backoff && self.modeswitch && min > floor && max > 0 {
            let b = aimd::scale(min, BETA_SHIFT, max);
            self.beta = b.clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// `htcp_recalc_ssthresh` then `htcp_reset` (entering recovery).
    fn congestion(&mut self, now: Nanos, in_flight: u64, peer_window: u64) {
        if self.p.version.linux() {
            // The ssthresh hook (htcp_param_update) runs before the state change's
            // htcp_reset, which so saves the updated old_maxB and the faded maxRTT.
            let floor = if self.p.version.counts_rtts() {
                // 2.6.16 htcp_beta_update: `minRTT > max(HZ/100, 1)`.
                (u64::from(self.p.hz) / 100).max(1)
            } else {
                self.msecs_to_jiffies(10)
            };
            self.update_beta(self.min_j, self.max_j, floor);
            self.update_alpha_linux(now);
            self.max_j = fade(self.min_j, self.max_j);
            self.sync_rtt_ns();
            self.reset_epoch(now);
        } else {
            self.undo = Some((self.last_cong, self.max_rtt, self.old_max_b));
            self.update_beta(self.min_rtt, self.max_rtt, ADAPTIVE_MIN_RTT);
            self.update_alpha(now);
            // Slowly fading memory of RTTmax (routing changes).
            self.max_rtt = fade(self.min_rtt, self.max_rtt);
            self.last_cong = Some(now);
        }
        let basis = self
            .p
            .ssthresh_from
            .bytes(&self.win, in_flight, peer_window);
        let s = scaled_ssthresh(&self.win, basis, self.beta, BETA_SHIFT);
        self.win.set_reduced_ssthresh(self.p.ssthresh_from, s);
        self.win.reset_counters();
    }

    /// Linux `htcp_reset` (entering CWR, Recovery or Loss): save what an undo restores and
    /// restart Δ.
    fn reset_epoch(&mut self, now: Nanos) {
        self.undo = Some((self.last_cong, self.max_j, self.old_max_b));
        self.cong_pending = true;
        self.last_cong = Some(now);
        // 2.6.16 htcp_reset: `undo_ccount = ccount; ccount = 0; snd_cwnd_cnt2 = 0`.
        self.undo_ccount = self.ccount;
        self.ccount = 0;
        self.cnt2 = 0;
    }

    // -----------------------------------------------------------------------------------------
    // Linux versions (module doc, "Linux's tcp_htcp.c").

    /// `t` in whole jiffies (Linux `jiffies`, a tick counter).
    fn jiffies(&self, t: Nanos) -> u64 {
        aimd::scale(t, u64::from(self.p.hz), SEC)
    }

    /// Linux `msecs_to_jiffies`: rounded up.
    fn msecs_to_jiffies(&self, ms: u64) -> u64 {
        (ms * u64::from(self.p.hz)).div_ceil(1000)
    }

    /// The jiffy RTTs mirrored in nanoseconds for the throughput estimate and the getters.
    fn sync_rtt_ns(&mut self) {
        let hz = u64::from(self.p.hz.max(1));
        self.min_rtt = aimd::scale(self.min_j, SEC, hz);
        self.max_rtt = aimd::scale(self.max_j, SEC, hz);
    }

    /// Linux `htcp_alpha_update`, in integers and jiffies.
    fn update_alpha_linux(&mut self, now: Nanos) {
        let hz = u64::from(self.p.hz.max(1));
        let diff = if self.p.version.counts_rtts() {
            // 2.6.16: `diff = ca->ccount * minRTT` (round trips since the last backoff,
            // in u32 jiffies).
            (self.ccount * self.min_j) & 0xFFFF_FFFF
        } else {
            let last = self.last_cong.unwrap_or(now);
            self.jiffies(now).saturating_sub(self.jiffies(last))
        };
        let mut factor = 1;
        if diff > hz {
            let d = diff - hz;
            factor = 1 + (10 * d + (d / 2) * (d / 2) / hz) / hz;
        }
        if self.p.rtt_scaling && self.min_j > 0 {
            let scale = ((hz << 3) / (10 * self.min_j)).clamp(4, 80);
            factor = ((factor << 3) / scale).max(1);
        }
        let mut a = 2 * factor * (BETA_SHIFT - self.beta);
        if self.p.version.alpha_u16() {
            a &= 0xFFFF;
        }
        self.alpha_fx = if a == 0 { ALPHA_BASE } else { a };
        self.alpha = self.alpha_fx as f64 / BETA_SHIFT as f64;
    }

    /// Linux `measure_rtt` on a jiffy RTT; RTTmax moves only when `grow_max`.
    fn measure_rtt_linux(&mut self, rtt: u64, grow_max: bool) {
        if self.min_j == 0 || rtt < self.min_j {
            self.min_j = rtt;
        }
        if grow_max {
            if self.max_j < self.min_j {
                self.max_j = self.min_j;
            }
            // The outlier step: 2.6.16 `HZ/50`, later `msecs_to_jiffies(20)` (equal at the
            // usual HZ values).
            let step = if self.p.version.counts_rtts() {
                u64::from(self.p.hz) / 50
            } else {
                self.msecs_to_jiffies(20)
            };
            if self.max_j < rtt && rtt <= self.max_j + step {
                self.max_j = rtt;
            }
        }
        self.sync_rtt_ns();
    }

    /// Linux `htcp_state(TCP_CA_Open)`: the ACK processed at the last time seen outside Open
    /// returned the connection to Open.
    fn track_open(&mut self, ev: &AckEvent) {
        if ev.outside_open {
            self.outside_open_at = Some(ev.now);
            return;
        }
        if let Some(t) = self.outside_open_at.take() {
            if self.p.version.reset_on_every_open() || self.cong_pending {
                self.last_cong = Some(t);
                self.cong_pending = false;
            }
        }
    }

    /// One ACK under Linux's tcp_htcp.c (`pkts_acked` hook, then `htcp_cong_avoid`).
    fn on_ack_linux(&mut self, ev: &AckEvent) {
        // 2.6.16's htcp_state has no TCP_CA_Open case: nothing restarts on the return to Open.
        if !self.p.version.counts_rtts() {
            self.track_open(ev);
        }
        let open = !ev.outside_open;
        if !self.p.version.rtt_from_srtt() {
            if let Some(s) = ev.rtt_sample {
                // usecs_to_jiffies rounds up; a zero RTT is not a sample (`rtt > 0`).
                let j = (u128::from(s) * u128::from(self.p.hz)).div_ceil(u128::from(SEC));
                let j = u64::try_from(j).unwrap_or(u64::MAX);
                if j > 0 {
                    self.measure_rtt_linux(j, open);
                }
            }
        }
        if self.p.bandwidth_switch {
            self.measure_throughput(ev);
        }
        // tcp_ack calls cong_avoid only for ACKs that acknowledge new data (FLAG_DATA_ACKED)
        // and may raise the window (not in CWR, Recovery or Loss; cwnd-limited).
        if !may_grow(ev) || ev.bytes_acked == 0 {
            return;
        }
        if self.win.in_slow_start() {
            self.win.slow_start(ev);
            return;
        }
        if self.p.version.rtt_from_srtt() {
            // 2.6.18 `measure_rtt`: srtt >> 3 (whole jiffies); RTTmax only after the first
            // loss (snd_ssthresh < 0xFFFF) and more than 3 minRTT into the epoch.
            let srtt = self.jiffies(ev.srtt);
            let rounds = if self.p.version.counts_rtts() {
                // 2.6.16: `ca->ccount > 3`.
                self.ccount
            } else {
                let since = self
                    .jiffies(ev.now)
                    .saturating_sub(self.jiffies(self.last_cong.unwrap_or(ev.now)));
                since.checked_div(self.min_j).unwrap_or(0)
            };
            let gate = open && self.win.ssthresh() != u64::MAX && self.min_j > 0 && rounds > 3;
            self.measure_rtt_linux(srtt, gate);
        }
        if self.p.version.counts_rtts() {
            // 2.6.16 htcp_cong_avoid, after measure_rtt: `if (ca->snd_cwnd_cnt2++ >
            // tp->snd_cwnd) { ca->ccount++; ca->snd_cwnd_cnt2 = 0; htcp_alpha_update(ca); }`
            // — one "round trip" per cwnd + 2 ACKs in congestion avoidance; ccount is a u8.
            let old = self.cnt2;
            self.cnt2 = old.saturating_add(1);
            if old > self.win.cwnd_segments() {
                self.ccount = (self.ccount + 1) & 0xFF;
                self.cnt2 = 0;
                self.update_alpha_linux(ev.now);
            }
        }
        let count = if self.p.version.counts_packets() && open {
            u64::from(ev.packets_acked)
        } else {
            1
        };
        // Saturating: a window without a limit yet (ssthresh and so cwnd at u64::MAX after a
        // recovery exit with no congestion event, a state the property tests reach) must not
        // overflow.
        let per =
            (self.win.cwnd_segments().saturating_mul(BETA_SHIFT)).div_ceil(self.alpha_fx.max(1));
        // 2.6.16's increment (`(tp->snd_cwnd_cnt++ * ca->alpha)>>7 >= tp->snd_cwnd`, then
        // `snd_cwnd_cnt = 0`) is the same counter but leaves α alone; 2.6.17+ recompute it.
        if self.win.counter_step(per, count) && !self.p.version.counts_rtts() {
            self.update_alpha_linux(ev.now);
        }
    }
}

/// `min + 0.95·(max − min)`: RTTmax's slowly fading memory at a congestion event (routing
/// changes; Linux `htcp_param_update`).
fn fade(min: u64, max: u64) -> u64 {
    if min > 0 && max > min {
        min + (max - min) * 95 / 100
    } else {
        max
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if self.last_cong.is_none() {
            // Linux htcp_init: last_cong = now at connection start.
            self.last_cong = Some(ev.now);
        }
        if self.p.version.linux() && self.win.growth().unit == CwndUnit::Packets {
            self.on_ack_linux(ev);
            return;
        }
        if let Some(s) = ev.rtt_sample {
            self.measure_rtt(s, ev.in_recovery);
        }
        if self.p.bandwidth_switch {
            self.measure_throughput(ev);
        }
        let Some(credit) = self.win.grow_slow_start(ev) else {
            return;
        };
        self.update_alpha(ev.now);
        let num = (self.alpha * ALPHA_DEN as f64).round() as u64;
        increase_per_window(&mut self.win, credit, num, ALPHA_DEN);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.congestion(ev.now, ev.in_flight, ev.peer_window);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        if self.p.ssthresh_from.reduces_on_timeout(ev) {
            self.congestion(ev.now, ev.in_flight, ev.peer_window);
        } else if self.p.version.linux() {
            // Entering Loss again: htcp_state → htcp_reset.
            self.reset_epoch(ev.now);
        } else {
            // Entering Loss again resets the epoch (htcp_state → htcp_reset).
            self.last_cong = Some(ev.now);
        }
        self.win.on_timeout();
    }

    fn on_undo(&mut self, _now: Nanos, prior_cwnd: u64, prior_ssthresh: u64) {
        let v = self.p.version;
        if !v.linux() {
            if let Some((last_cong, max_rtt, old_max_b)) = self.undo.take() {
                self.last_cong = last_cong;
                self.max_rtt = max_rtt;
                self.old_max_b = old_max_b;
            }
            self.win.set_cwnd(prior_cwnd);
            self.win.set_ssthresh(prior_ssthresh);
            return;
        }
        // htcp_cwnd_undo: before 2.6.28 the saved values are restored whenever there are
        // some, from 2.6.28 once per congestion state.
        if v.reset_on_every_open() || self.cong_pending {
            if let Some((last_cong, max_j, old_max_b)) = self.undo {
                self.last_cong = last_cong;
                self.max_j = max_j;
                self.old_max_b = old_max_b;
                self.sync_rtt_ns();
                // 2.6.16: `ca->ccount = ca->undo_ccount`.
                self.ccount = self.undo_ccount;
            }
            self.cong_pending = false;
        }
        // cwnd = max(cwnd, (ssthresh << 7)/beta) from the reduced ssthresh; tcp_undo_cwr then
        // restores the prior ssthresh when larger.
        let mss = self.win.mss();
        let from_beta = (self.win.ssthresh() / mss).saturating_mul(BETA_SHIFT) / self.beta.max(1);
        let cwnd = self.win.cwnd().max(from_beta.saturating_mul(mss));
        self.win.set_cwnd(cwnd);
        let ssthresh = self.win.ssthresh().max(prior_ssthresh);
        self.win.set_ssthresh(ssthresh);
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let vars = [
            ("alpha", self.alpha),
            ("beta", self.beta()),
            ("rtt_min_ms", self.min_rtt as f64 / 1e6),
            ("rtt_max_ms", self.max_rtt as f64 / 1e6),
            ("bw_bytes_s", self.bi),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "rtt_scaling",
        kind: ParamKind::Bool,
        default: "true",
        doc: "scale α(Δ) by RTTmin/100 ms, ratio clamped to [0.5, 10] (Linux use_rtt_scaling)",
    },
    ParamInfo {
        name: "bandwidth_switch",
        kind: ParamKind::Bool,
        default: "true",
        doc: "β = 0.5 when the throughput changed by more than 20 % between congestion events \
              (Linux use_bandwidth_switch)",
    },
    ParamInfo {
        name: "adaptive_backoff",
        kind: ParamKind::Bool,
        default: "true",
        doc: "β = RTTmin/RTTmax clamped to [0.5, 0.8] when RTTmin > 10 ms; false = always 0.5",
    },
    ParamInfo {
        name: "version",
        kind: ParamKind::Choice(HtcpVersion::CHOICES),
        default: "paper",
        doc: "\"paper\" (Leith & Shorten in real arithmetic) or Linux tcp_htcp.c from the release \
              named, packets unit: counter with the increment ACK uncounted, integer α in \
              jiffies, Δ restarting on the return to Open; \"2.6.16\" counts each ACK once \
              and measures Δ as ccount·minRTT, ccount counting rounds of cwnd + 2 ACKs (a u8, \
              cleared when recovery starts), \"2.6.17\" the packets an ACK in Open covered, \
              \"2.6.19\" α no longer a u16, \"2.6.23\" RTT samples instead of srtt, \"2.6.28\" \
              Δ restarts only after a congestion state",
    },
    ParamInfo {
        name: "hz",
        kind: ParamKind::Int,
        default: "250",
        doc: "Linux versions: the kernel's HZ (jiffies per second) of the integer arithmetic",
    },
    SSTHRESH_FROM,
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let params = HtcpParams {
        rtt_scaling: p.bool("rtt_scaling"),
        bandwidth_switch: p.bool("bandwidth_switch"),
        adaptive_backoff: p.bool("adaptive_backoff"),
        ssthresh_from: p.ssthresh_from(),
        version: HtcpVersion::from_name(p.choice("version")).unwrap_or_default(),
        hz: p.int_in("hz", 1, 10_000)?,
    };
    Ok(Box::new(Htcp::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{ack_one, cc_init, loss_episode};
    use crate::testkit::{AckSpacing, Driver};
    use crate::CwndUnit;

    const MSS: u32 = 10_000;
    const W: u64 = 1000;

    fn htcp(unit: CwndUnit, p: HtcpParams) -> Htcp {
        Htcp::new(&cc_init(MSS, unit, 0, W, 2 * u64::from(MSS)), p)
    }

    fn ack(now: Nanos, rtt: Nanos) -> AckEvent {
        ack_one(now, rtt, MSS)
    }

    fn event(cc: &mut Htcp, now: Nanos) {
        loss_episode(cc, now, MSS);
    }

    /// Leith & Shorten §3 (reference): α(Δ) with Δ_L = 1 s.
    fn alpha_ref(delta_s: f64) -> f64 {
        if delta_s <= 1.0 {
            1.0
        } else {
            1.0 + 10.0 * (delta_s - 1.0) + ((delta_s - 1.0) / 2.0).powi(2)
        }
    }

    /// Increase of 10 ACKs at `delta` after a congestion event, in segments per window (the
    /// per-ACK increase ×cwnd): bytes unit, large window so the 10 ACKs barely move it.
    fn increase_at(p: HtcpParams, rtt: Nanos, delta: Nanos) -> f64 {
        let mut cc = htcp(CwndUnit::Bytes, p);
        cc.on_ack(&ack(0, rtt));
        let t0 = 5 * SEC;
        event(&mut cc, t0);
        cc.set_cwnd(W * u64::from(MSS));
        let before = cc.cwnd();
        for _ in 0..10 {
            cc.on_ack(&ack(t0 + delta, rtt));
        }
        // Each ACK adds α·MSS²/cwnd bytes: (gain/MSS)·(cwnd/MSS)/10 = α.
        let gain = (cc.cwnd() - before) as f64;
        gain / f64::from(MSS) * W as f64 / 10.0
    }

    #[test]
    fn test_avoidance_alpha_follows_delta_since_congestion() {
        // First event: β = 0.5 (no adaptive mode yet), so α = 2(1 − β)·α(Δ) = α(Δ). RTT
        // 100 ms: the scaling factor is exactly 1. α(1 s) = 1, α(2 s) = 11.25, α(5 s) = 45.
        // Tolerance: the window moves by ≤ 10·45·MSS²/cwnd bytes over the 10 ACKs (0.45 %),
        // plus one byte of rounding per ACK.
        let p = HtcpParams::default();
        for (delta_s, want) in [(0.5, 1.0), (1.0, 1.0), (2.0, 11.25), (5.0, 45.0)] {
            assert_eq!(alpha_ref(delta_s), want);
            let delta = (delta_s * SEC as f64) as Nanos;
            let got = increase_at(p, 100 * MS, delta);
            let tol = want * 0.0046 + 10.0 * W as f64 / f64::from(MSS) / 10.0;
            assert!(
                (got - want).abs() <= tol,
                "Δ = {delta_s} s: α {got} vs {want} (tol {tol})"
            );
            eprintln!("htcp α(Δ = {delta_s} s): measured {got:.3}, Leith & Shorten {want}");
        }
    }

    #[test]
    fn test_avoidance_rtt_scaling_multiplies_alpha_by_rtt_over_100ms() {
        // α(5 s) = 45 times RTTmin/100 ms, the ratio 100 ms/RTTmin clamped to [0.5, 10]:
        // 50 ms → ×0.5, 200 ms → ×2, 500 ms → ×2 (clamped), 5 ms → ×0.1. Off: ×1.
        let on = HtcpParams::default();
        let off = HtcpParams {
            rtt_scaling: false,
            ..Default::default()
        };
        for (rtt_ms, p, factor) in [
            (50, on, 0.5),
            (200, on, 2.0),
            (500, on, 2.0),
            (5, on, 0.1),
            (5, off, 1.0),
            (500, off, 1.0),
        ] {
            let want = 45.0 * factor;
            let got = increase_at(p, rtt_ms * MS, 5 * SEC);
            assert!(
                (got - want).abs() <= want * 0.0046 + 1.0,
                "RTT {rtt_ms} ms scaling {}: {got} vs {want}",
                p.rtt_scaling
            );
        }
        // At Δ ≤ 1 s a short RTT would scale α(Δ) = 1 below 1: Linux keeps 1.
        let got = increase_at(on, 20 * MS, SEC / 2);
        assert!((got - 1.0).abs() <= 1.0, "{got}");
    }

    /// RTT samples rising from `min` to `max` in 5 ms steps (RTTmax only follows samples at
    /// most 20 ms above it).
    fn ramp(cc: &mut Htcp, now: Nanos, min: Nanos, max: Nanos) {
        let mut r = min;
        while r < max {
            cc.on_ack(&ack(now, r));
            r += 5 * MS;
        }
        cc.on_ack(&ack(now, max));
    }

    /// Two congestion events with RTT samples between `min` and `max`; returns the ssthresh
    /// fraction after the second.
    fn backoff(p: HtcpParams, min: Nanos, max: Nanos) -> f64 {
        let mut cc = htcp(CwndUnit::Packets, p);
        ramp(&mut cc, 0, min, max);
        event(&mut cc, SEC); // first event: β = 0.5, adaptive mode armed
        assert_eq!(cc.ssthresh(), W * u64::from(MSS) / 2);
        cc.set_cwnd(W * u64::from(MSS));
        ramp(&mut cc, 2 * SEC, min, max);
        let cwnd = cc.cwnd() as f64;
        event(&mut cc, 3 * SEC);
        cc.ssthresh() as f64 / cwnd
    }

    #[test]
    fn test_congestion_event_beta_is_rttmin_over_rttmax() {
        // β = RTTmin/RTTmax (Linux: in 1/128, truncated), clamped to [0.5, 0.8 (102/128)],
        // adaptive only when RTTmin > 10 ms. The bandwidth switch is off here (it is tested
        // below). Tolerance: the 1/128 truncation and one whole segment of the 1000.
        let p = HtcpParams {
            bandwidth_switch: false,
            ..Default::default()
        };
        let cases = [
            (60, 100, 0.6),
            (70, 100, 0.7),
            (20, 100, 0.5),
            (95, 100, 0.8),
            (8, 10, 0.5),
        ];
        for (min, max, want) in cases {
            let got = backoff(p, min * MS, max * MS);
            let want = f64::min(want, 102.0 / 128.0);
            assert!(
                (got - want).abs() <= 1.0 / 128.0 + 1.0 / W as f64,
                "RTT {min}/{max} ms: β {got} vs {want}"
            );
        }
        // Adaptive backoff off: always 0.5.
        let off = HtcpParams {
            adaptive_backoff: false,
            bandwidth_switch: false,
            ..Default::default()
        };
        assert!((backoff(off, 60 * MS, 100 * MS) - 0.5).abs() <= 1.0 / W as f64);
    }

    #[test]
    fn test_congestion_event_rtt_max_ignores_outliers_and_fades() {
        // Samples more than 20 ms above RTTmax do not raise it; the event fades it to
        // min + 0.95·(max − min).
        let mut cc = htcp(CwndUnit::Packets, HtcpParams::default());
        cc.on_ack(&ack(0, 50 * MS));
        cc.on_ack(&ack(1, 65 * MS));
        cc.on_ack(&ack(2, 200 * MS));
        assert_eq!(cc.rtt_min_max(), (50 * MS, 65 * MS));
        event(&mut cc, SEC);
        assert_eq!(cc.rtt_min_max(), (50 * MS, 50 * MS + 15 * MS * 95 / 100));
    }

    /// Runs `rounds` rounds of 100 ms at `w` segments (cwnd pinned), so the throughput is
    /// w·MSS per 100 ms.
    fn run_at(cc: &mut Htcp, d: &mut Driver, w: u64, rounds: u32) {
        for _ in 0..rounds {
            cc.set_cwnd(w * u64::from(MSS));
            d.round(cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread);
        }
    }

    /// A congestion event followed by one ACK in recovery (which restarts the throughput
    /// sample, as Linux does outside the Open state).
    fn event_with_recovery(cc: &mut Htcp, d: &Driver) {
        let in_flight = cc.cwnd();
        cc.on_congestion_event(&CongestionEvent {
            now: d.now,
            in_flight,
            mss: MSS,
            ..Default::default()
        });
        cc.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(d.now, 100 * MS)
        });
        cc.on_recovery_exit(d.now);
    }

    #[test]
    fn test_congestion_event_bandwidth_switch_resets_beta_on_throughput_change() {
        // RTTmin 60 ms / RTTmax 100 ms would give β = 0.6 (0.59375 in 1/128). The first event
        // finds no previous maxB (a "change"): 0.5 and the adaptive mode restarts; the second
        // (same throughput) arms it: 0.5; the third uses RTTmin/RTTmax unless the throughput
        // moved by more than 20 % since the second: then 0.5 again.
        for (w2, want) in [
            (1000, 0.6),
            (1150, 0.6),
            (850, 0.6),
            (1300, 0.5),
            (700, 0.5),
        ] {
            let mut cc = htcp(CwndUnit::Packets, HtcpParams::default());
            let mut d = Driver::new(MSS);
            ramp(&mut cc, 0, 60 * MS, 100 * MS);
            run_at(&mut cc, &mut d, 1000, 10);
            event_with_recovery(&mut cc, &d);
            assert_eq!(cc.beta(), 0.5);
            run_at(&mut cc, &mut d, 1000, 10);
            event_with_recovery(&mut cc, &d);
            assert_eq!(cc.beta(), 0.5);
            run_at(&mut cc, &mut d, w2, 10);
            cc.set_cwnd(W * u64::from(MSS));
            event_with_recovery(&mut cc, &d);
            let got = cc.ssthresh() as f64 / (W * u64::from(MSS)) as f64;
            assert!(
                (got - want).abs() <= 1.0 / 128.0 + 1.0 / W as f64,
                "throughput 1000 → {w2}: β {got} vs {want}"
            );
        }
    }

    #[test]
    fn test_rto_restarts_epoch_and_collapses_window() {
        let mut cc = htcp(CwndUnit::Bytes, HtcpParams::default());
        cc.on_ack(&ack(0, 100 * MS));
        cc.on_rto(&RtoEvent {
            now: 10 * SEC,
            in_flight: W * u64::from(MSS),
            backoff_count: 1,
            mss: MSS,
            peer_window: u64::MAX,
            in_recovery: false,
            keeps_ssthresh: false,
        });
        assert_eq!(cc.cwnd(), u64::from(MSS));
        assert_eq!(cc.ssthresh(), W * u64::from(MSS) / 2);
        // Δ restarts: α(Δ) at 10.5 s is 1 again.
        cc.set_ssthresh(2 * u64::from(MSS));
        cc.set_cwnd(W * u64::from(MSS));
        cc.on_ack(&ack(10 * SEC + SEC / 2, 100 * MS));
        assert_eq!(cc.alpha(), 1.0);
    }

    // --- Linux versions (module doc, "Linux's tcp_htcp.c") ----------------------------------

    fn linux(version: HtcpVersion, w: u64) -> Htcp {
        let p = HtcpParams {
            version,
            ..Default::default()
        };
        // ssthresh 2 segments: congestion avoidance from the start.
        Htcp::new(
            &cc_init(MSS, CwndUnit::Packets, 0, w, 2 * u64::from(MSS)),
            p,
        )
    }

    /// An ACK at `now` covering `packets` segments, in Open or not, with an RTT sample `rtt`
    /// and smoothed RTT `srtt`.
    fn lack(now: Nanos, packets: u32, open: bool, rtt: Nanos, srtt: Nanos) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: u64::from(packets) * u64::from(MSS),
            packets_acked: packets,
            packets_delivered: packets,
            rtt_sample: Some(rtt),
            srtt,
            min_rtt: rtt,
            outside_open: !open,
            mss: MSS,
            ..Default::default()
        }
    }

    /// ACKs `ev` until the window grows one segment; returns how many it took.
    fn acks_to_grow(cc: &mut Htcp, ev: &AckEvent) -> u32 {
        let before = cc.cwnd();
        for n in 1..=100_000 {
            cc.on_ack(ev);
            if cc.cwnd() > before {
                assert_eq!(cc.cwnd(), before + u64::from(MSS), "one segment at a time");
                return n;
            }
        }
        panic!("no growth");
    }

    #[test]
    fn test_linux_counter_counts_each_ack_in_2616_and_open_packets_from_2617() {
        // cwnd 100, α = 1.0 (ALPHA_BASE until the first increment): an increment needs the
        // counter at 100·128/128 = 100, and the ACK that finds it there is not counted.
        // Delayed ACKs (2 segments): 2.6.16 counts each ACK once → the 101st ACK grows;
        // 2.6.17+ adds the 2 packets of an ACK in Open → counter 100 after 50, the 51st grows;
        // outside Open 2.6.17 counts 1 (pkts_acked is only taken in Open) → the 101st.
        let cases = [
            (HtcpVersion::Linux2616, true, 101),
            (HtcpVersion::Linux2616, false, 101),
            (HtcpVersion::Linux2617, true, 51),
            (HtcpVersion::Linux2628, true, 51),
            (HtcpVersion::Linux2617, false, 101),
        ];
        for (v, open, want) in cases {
            let mut cc = linux(v, 100);
            let ev = lack(SEC / 10, 2, open, 100 * MS, 100 * MS);
            assert_eq!(acks_to_grow(&mut cc, &ev), want, "{v:?} open {open}");
        }
        // The paper mode credits the growth rules' units (one per ACK without ABC) and grows
        // α/cwnd per unit: the 100th ACK completes the segment.
        let mut cc = linux(HtcpVersion::Paper, 100);
        let ev = lack(SEC / 10, 2, true, 100 * MS, 100 * MS);
        assert_eq!(acks_to_grow(&mut cc, &ev), 100);
        // ACKs that acknowledge nothing new (SACK only) do not reach the counter.
        let mut cc = linux(HtcpVersion::Linux2616, 100);
        let sack_only = AckEvent {
            bytes_acked: 0,
            packets_acked: 0,
            ..lack(SEC / 10, 2, true, 100 * MS, 100 * MS)
        };
        for _ in 0..500 {
            cc.on_ack(&sack_only);
        }
        assert_eq!(acks_to_grow(&mut cc, &ev), 101);
    }

    #[test]
    fn test_linux_alpha_is_integer_in_jiffies_and_a_u16_before_2619() {
        // RTT 180 ms = 45 jiffies at HZ 250: scale = 2000/450 = 4 (clamped to 4 anyway), so
        // the factor doubles; the paper's ratio 100/180 gives ×1.8. At Δ = 5 s: factor =
        // 1 + (10·1000 + 500²/250)/250 = 45 → 90 (Linux) vs 45·1.8 = 81 (paper). At Δ = 30 s:
        // 1 + (10·7250 + 3625²/250)/250 = 501 → 1002 segments/RTT, α = 2·1002·64 = 128256 in
        // 1/128, which a u16 keeps as 128256 − 65536 = 62720 → 490 (2.6.16–2.6.18).
        let rtt = 180 * MS;
        let t0 = SEC / 2;
        for (v, delta, want) in [
            (HtcpVersion::Linux2623, 5 * SEC, 90.0),
            (HtcpVersion::Linux2617, 5 * SEC, 90.0),
            (HtcpVersion::Linux2619, 30 * SEC, 1002.0),
            (HtcpVersion::Linux2617, 30 * SEC, 490.0),
        ] {
            let mut cc = linux(v, 1000);
            cc.on_ack(&lack(0, 1, true, rtt, rtt));
            event(&mut cc, t0);
            // Δ < 1 s at the event: factor 1 → 2 after scaling, α = 2·2·64/128 = 2.
            assert_eq!(cc.alpha(), 2.0, "{v:?}");
            acks_to_grow(&mut cc, &lack(t0 + delta, 1, true, rtt, rtt));
            assert_eq!(cc.alpha(), want, "{v:?} Δ {delta}");
        }
        let mut cc = htcp(CwndUnit::Packets, HtcpParams::default());
        cc.on_ack(&ack(0, rtt));
        event(&mut cc, t0);
        cc.on_ack(&ack(t0 + 5 * SEC, rtt));
        assert!((cc.alpha() - 81.0).abs() < 1e-9, "{}", cc.alpha());
    }

    /// α after the first increment at `at`, RTT scaling off and β = 0.5: the factor α(Δ).
    fn alpha_after_growth(cc: &mut Htcp, at: Nanos) -> f64 {
        acks_to_grow(cc, &lack(at, 1, true, 100 * MS, 100 * MS));
        cc.alpha()
    }

    fn linux_unscaled(v: HtcpVersion) -> Htcp {
        let mut cc = linux(v, 4);
        cc.p.rtt_scaling = false;
        cc
    }

    #[test]
    fn test_linux_delta_restarts_when_the_connection_returns_to_open() {
        // Loss at 1 s, ACKs outside Open until 1.2 s (the last one returns to Open), then in
        // Open. Linux restarts Δ at the return to Open (htcp_state(TCP_CA_Open)): at 4.2 s
        // Δ = 3 s → factor 1 + (10·500 + 250²/250)/250 = 22; the paper mode counts from the
        // loss: Δ = 3.2 s → 24.25 (Linux's integers would give 24).
        for v in [HtcpVersion::Linux2617, HtcpVersion::Linux2628] {
            let mut cc = linux_unscaled(v);
            cc.on_ack(&lack(0, 1, true, 100 * MS, 100 * MS));
            event(&mut cc, SEC);
            for t in [SEC + SEC / 10, SEC + SEC / 5] {
                cc.on_ack(&AckEvent {
                    in_recovery: true,
                    ..lack(t, 1, false, 100 * MS, 100 * MS)
                });
            }
            cc.set_cwnd(4 * u64::from(MSS));
            assert_eq!(
                alpha_after_growth(&mut cc, 4 * SEC + SEC / 5),
                22.0,
                "{v:?}"
            );
        }
        // A Disorder period without a congestion event (an ACK outside Open at 5 s): until
        // 2.6.28 the return to Open restarts Δ too (at 6.5 s: Δ = 1.5 s → factor
        // 1 + (1250 + 62²/250)/250 = 6); from 2.6.28 only after CWR, Recovery or Loss
        // (Δ = 6.5 s since the connection start → 1 + (13750 + 687²/250)/250 = 63).
        for (v, want) in [
            (HtcpVersion::Linux2623, 6.0),
            (HtcpVersion::Linux2628, 63.0),
        ] {
            let mut cc = linux_unscaled(v);
            cc.on_ack(&lack(0, 1, true, 100 * MS, 100 * MS));
            cc.on_ack(&lack(5 * SEC, 1, false, 100 * MS, 100 * MS));
            assert_eq!(
                alpha_after_growth(&mut cc, 6 * SEC + SEC / 2),
                want,
                "{v:?}"
            );
        }
    }

    #[test]
    fn test_linux_undo_restores_cwnd_from_ssthresh_over_beta() {
        // Loss at cwnd 1000 (β = 0.5): ssthresh 500. An undo with a prior window of 900
        // segments: Linux (htcp_cwnd_undo, to 4.12) takes max(cwnd, 500·128/64) = 1000 and
        // ssthresh max(500, prior 700); the paper mode restores the prior values.
        let w = u64::from(MSS);
        for (v, cwnd) in [(HtcpVersion::Linux2616, 1000), (HtcpVersion::Paper, 900)] {
            let mut cc = linux(v, 1000);
            cc.on_ack(&lack(0, 1, true, 100 * MS, 100 * MS));
            event(&mut cc, SEC);
            assert_eq!(cc.cwnd(), 500 * w);
            cc.on_undo(SEC, 900 * w, 700 * w);
            assert_eq!((cc.cwnd(), cc.ssthresh()), (cwnd * w, 700 * w), "{v:?}");
        }
    }

    #[test]
    fn test_linux_rtt_from_srtt_before_2623_and_samples_after() {
        // An ACK in congestion avoidance with a 50-ms sample and a 100-ms srtt: 2.6.16–2.6.22
        // take srtt (25 jiffies = 100 ms), 2.6.23+ the sample rounded up to jiffies
        // (12.5 → 13 = 52 ms).
        for (v, want) in [
            (HtcpVersion::Linux2616, 100 * MS),
            (HtcpVersion::Linux2619, 100 * MS),
            (HtcpVersion::Linux2623, 52 * MS),
        ] {
            let mut cc = linux(v, 100);
            cc.on_ack(&lack(SEC, 1, true, 50 * MS, 100 * MS));
            assert_eq!(cc.rtt_min_max().0, want, "{v:?}");
        }
    }

    // --- 2.6.16's round-trip accounting (benji-cannot-code/fast-vc-linux-benchmark,
    // net/ipv4/tcp_htcp.c at d47e3356; module doc) -------------------------------------------

    /// 2.6.16 after one congestion event at 1 s from cwnd `2w` (β = 0.5, cwnd `w`), RTT
    /// scaling off, srtt 100 ms (minRTT 25 jiffies at HZ 250).
    fn linux2616_after_event(w: u64) -> Htcp {
        let mut cc = linux(HtcpVersion::Linux2616, 2 * w);
        cc.p.rtt_scaling = false;
        cc.on_ack(&lack(0, 1, true, 100 * MS, 100 * MS));
        event(&mut cc, SEC);
        assert_eq!(
            (cc.cwnd(), cc.ccount, cc.alpha()),
            (w * u64::from(MSS), 0, 1.0)
        );
        cc
    }

    #[test]
    fn test_linux_2616_delta_counts_rounds_of_cwnd_plus_two_acks_not_time() {
        // cwnd 100, α = 1.0: the round counter's test `snd_cwnd_cnt2++ > snd_cwnd` sees the old
        // value, so ccount would step at the 102nd ACK; but the 101st ACK adds a segment
        // (counter 100·128/128 reached, that ACK uncounted), so the 102nd finds 101 > 101
        // false and the 103rd steps ccount. Δ = ccount·25 jiffies stays ≤ HZ (factor 1) up
        // to ccount 10; at 11, d = 275 − 250 = 25 → factor 1 + (250 + 12²/250)/250 = 2.
        // All these ACKs carry the same timestamp (1 ms after the event): 2.6.16's α follows
        // the ACK count; 2.6.17's (jiffies since the event) stays 1.
        let at = SEC + MS;
        let ev = lack(at, 1, true, 100 * MS, 100 * MS);
        let mut cc = linux2616_after_event(100);
        for n in 1..=103 {
            cc.on_ack(&ev);
            assert_eq!(cc.ccount, u64::from(n == 103), "ACK {n}");
        }
        assert_eq!(cc.cwnd(), 101 * u64::from(MSS));
        let mut acks = 103;
        while cc.ccount < 11 {
            assert_eq!(cc.alpha(), 1.0, "ccount {}", cc.ccount);
            cc.on_ack(&ev);
            acks += 1;
            assert!(acks < 5_000, "ccount stuck at {}", cc.ccount);
        }
        assert_eq!(cc.alpha(), 2.0);
        let mut later = linux(HtcpVersion::Linux2617, 200);
        later.p.rtt_scaling = false;
        later.on_ack(&lack(0, 1, true, 100 * MS, 100 * MS));
        event(&mut later, SEC);
        for _ in 0..acks {
            later.on_ack(&ev);
        }
        assert_eq!(later.alpha(), 1.0);
    }

    #[test]
    fn test_linux_2616_alpha_from_ccount_times_minrtt_and_ccount_wraps_as_a_u8() {
        // The ACK that completes a round at ccount 20 → 21: Δ = 21·25 = 525 jiffies, d = 275,
        // factor = 1 + (2750 + 137²/250)/250 = 1 + (2750 + 75)/250 = 12 → α = 2·12·64/128 =
        // 12. At ccount 255 the next round wraps the u8 to 0: factor 1, α = 1.
        let ev = lack(2 * SEC, 1, true, 100 * MS, 100 * MS);
        for (from, to, alpha) in [(20, 21, 12.0), (255, 0, 1.0)] {
            let mut cc = linux2616_after_event(100);
            cc.ccount = from;
            cc.cnt2 = 101; // > cwnd 100: this ACK ends a round
            cc.on_ack(&ev);
            assert_eq!(
                (cc.ccount, cc.cnt2, cc.alpha()),
                (to, 0, alpha),
                "from {from}"
            );
        }
    }

    #[test]
    fn test_linux_2616_increment_leaves_alpha_until_the_next_round() {
        // α = 12 from ccount 21 (as above). The next increment needs 100·128/1536 → 9 ACKs;
        // 2.6.16 keeps α = 12 through it (htcp_alpha_update only at a round); 2.6.17 would
        // recompute it from jiffies (Δ = 1 s + 1 ms → factor 1).
        let mut cc = linux2616_after_event(100);
        cc.ccount = 20;
        cc.cnt2 = 101;
        let ev = lack(SEC + MS, 1, true, 100 * MS, 100 * MS);
        cc.on_ack(&ev);
        assert_eq!(cc.alpha(), 12.0);
        assert_eq!(acks_to_grow(&mut cc, &ev), 9);
        assert_eq!((cc.ccount, cc.alpha()), (21, 12.0));
    }

    #[test]
    fn test_linux_2616_ccount_restarts_at_congestion_not_on_open_and_undo_restores_it() {
        // htcp_state in 2.6.16 has no TCP_CA_Open case: a Disorder period (ACKs outside Open,
        // then one in Open) leaves ccount alone; CWR/Recovery/Loss (htcp_reset) save it in
        // undo_ccount and clear it; htcp_cwnd_undo restores it.
        let mut cc = linux2616_after_event(100);
        cc.ccount = 21;
        cc.on_ack(&lack(2 * SEC, 1, false, 100 * MS, 100 * MS));
        cc.on_ack(&lack(2 * SEC + MS, 1, true, 100 * MS, 100 * MS));
        assert_eq!(cc.ccount, 21);
        event(&mut cc, 3 * SEC);
        assert_eq!((cc.ccount, cc.cnt2), (0, 0));
        cc.on_undo(3 * SEC, cc.cwnd(), cc.ssthresh());
        assert_eq!(cc.ccount, 21);
        // An RTO is a congestion state too (Loss).
        cc.on_rto(&RtoEvent {
            now: 4 * SEC,
            in_flight: cc.cwnd(),
            backoff_count: 1,
            mss: MSS,
            peer_window: u64::MAX,
            in_recovery: false,
            keeps_ssthresh: false,
        });
        assert_eq!(cc.ccount, 0);
    }

    #[test]
    fn test_linux_2616_adaptive_backoff_floor_is_hz_over_100() {
        // minRTT 3 jiffies (12 ms), maxRTT 5: 2.6.16 adapts when minRTT > max(HZ/100, 1) = 2
        // → β = 3·128/5 = 76 (1/128); 2.6.17+ need minRTT > msecs_to_jiffies(10) = 3 → 0.5.
        for (v, beta) in [
            (HtcpVersion::Linux2616, 76.0 / 128.0),
            (HtcpVersion::Linux2617, 0.5),
        ] {
            let mut cc = linux(v, 1000);
            cc.p.bandwidth_switch = false;
            cc.min_j = 3;
            cc.max_j = 5;
            cc.modeswitch = true;
            event(&mut cc, SEC);
            assert_eq!(cc.beta(), beta, "{v:?}");
        }
    }
}
