//! CUBIC (RFC 9438; Ha, Rhee & Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", SIGOPS
//! OSR 2008; L: net/ipv4/tcp_cubic.c v2.3) with HyStart (Linux) or HyStart++ (RFC 9406).
//!
//! The window function is the same in both units (RFC 9438 §4.2 eq. 1–2):
//!
//! ```text
//! W_cubic(t) = C·(t − K)³ + W_max          K = ∛((W_max − cwnd_epoch) / C)
//! ```
//!
//! with `t` the time since the epoch (the first congestion-avoidance ACK after a reduction),
//! `cwnd_epoch` the window then, windows in segments and `t`, `K` in seconds. If `W_max` is
//! unknown or not above the window (first congestion avoidance after slow start, or after an
//! RTO), `K = 0` and the curve starts at the current window (RFC 9438 §4.8, §4.10; Linux:
//! `bic_K = 0`, `bic_origin_point = cwnd`).
//!
//! How the window follows the curve depends on the unit:
//!
//! * **Packets** — Linux v2.3 (L: net/ipv4/tcp_cubic.c `bictcp_update`): integer segments; per
//!   ACK a target `W_cubic(t + delay_min)` (integer, the cube term rounded toward the origin) gives
//!   `cnt = cwnd / (target − cwnd)` ACK units per +1 segment (`100·cwnd` if the target is not
//!   above cwnd); `cnt ≤ 20` while `W_max` is unknown (≥ 5 %/RTT); the Reno estimate `tcp_cwnd`
//!   grows 1 segment per `cwnd·β_scale/8` counted units (`β_scale = ⌊8(1024+β')/3/(1024−β')⌋ = 15`
//!   for β' = 717: ≈ 0.53 segment per RTT = 3(1−β)/(1+β)) and, when ahead, caps
//!   `cnt ≤ cwnd/(tcp_cwnd − cwnd)`; finally `cnt ≥ 2` (at most ×1.5 per RTT); then
//!   [`WindowState::additive_increase`]`(cnt, credit)` (Linux `tcp_cong_avoid_ai`).
//!   β' = round(β·1024) (717 for 0.7); reductions use Linux's integer arithmetic.
//! * **Bytes** — RFC 9438 §4.2–4.5: `target = clamp(W_cubic(t + RTT), cwnd, 1.5·cwnd)`,
//!   `cwnd += (target − cwnd)/cwnd` per segment acked (fractional, carried below 1 byte);
//!   Reno-friendly estimate `W_est += α·segments_acked/cwnd` with `α = 3(1−β)/(1+β)` until
//!   `W_est ≥ cwnd_prior`, then `α = 1` (§4.3); when `W_cubic(t) < W_est`, `cwnd = W_est`.
//!   RTT is the smoothed RTT of the ACK (min RTT, then CUBIC's own `delay_min`, if 0).
//!
//! Common to both: multiplicative decrease `ssthresh = max(β·basis, 2)` (basis: cwnd in packets,
//! FlightSize in bytes, see [`SsthreshBasis`]; RFC 9438 §4.6, Linux `cubictcp_recalc_ssthresh`);
//! fast convergence `W_max = cwnd·(1+β)/2` when `cwnd < W_max`, else `W_max = cwnd` (§4.7); the
//! epoch restarts at the next congestion-avoidance ACK after every reduction. RTO (§4.8, Linux
//! `cubictcp_state(TCP_CA_Loss)`): ssthresh as above on the first timeout (held on repeated
//! ones, RFC 5681 §3.1), cwnd = 1 segment, and all CUBIC state forgotten (`W_max`, `delay_min`,
//! HyStart). Idle: when sending restarts with nothing in flight, the epoch start moves forward by
//! the idle time, never past now (Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`).
//!
//! RTT samples feed `delay_min` and HyStart on every ACK, also in recovery, except in the first
//! second of an epoch (Linux `cubictcp_acked`: "Discard delay samples right after fast
//! recovery").
//!
//! Jiffy clock (packets unit and the v2 path in packets, [`CubicParams::jiffy_clock`]): Linux
//! keeps CUBIC's time in jiffies (1/HZ). Every tcp_cubic.c from 2.6.16 to today's does, in
//! `bictcp_update`: (1) the ACK is counted (`ack_cnt`) but `cnt` is kept unchanged when cwnd is
//! the same as at the last recompute and at most HZ/32 jiffies have passed since it (7 jiffies,
//! 28 ms, at HZ 250: `(s32)(jiffies − last_time) <= HZ/32`); (3) `epoch_start` is a jiffy count
//! and `t = ((jiffies − epoch_start) + usecs_to_jiffies(delay_min)) << 10 / HZ` (2.6.x: delay_min
//! already in jiffies), so the curve's time steps by whole jiffies, then 1/1024 s. (2) Since
//! "tcp: fix timing issue in CUBIC slope calculation" (d6b1a8a92a14, N. Cardwell, Jan 2015,
//! merged for 4.0 with the stretch-ACK series, [`AiRule::Linux4`]) the curve is evaluated at
//! most once per jiffy: a second recompute in the same jiffy while the epoch runs keeps the
//! last `cnt` and only applies the Reno-friendly cap and `cnt ≥ 2`; 2.6.x had no such test.
//! A later bound, "tcp_cubic: fix to run bictcp_update() at least once per RTT" (M. Zhang,
//! L. Xu, netdev patch series v1–v4, Aug 2024: hold at most min(HZ/32,
//! usecs_to_jiffies(delay_min))), was reviewed, and E. Dumazet's alternative "tcp_cubic: switch
//! ca->last_time to usec resolution" (26 Aug 2024) drew N. Cardwell's "it's safest to just leave
//! last_time in jiffies" (netdev, 28 Aug 2024); neither is in mainline: a 6.17-rc3 tree
//! (GitHub Kingxukai/linux, tcp_cubic.c at 9b44fff) still holds up to HZ/32 in jiffies with the
//! once-per-jiffy test, so that is modelled for 6.x (6.18's file itself not read).
//! Assumption: the jiffy clock's phase is that of the simulation clock — jiffy n covers
//! `[n·J, (n+1)·J)` from time 0, the flow's start in the usual scenarios; a real flow starts at
//! a random phase.
//!
//! Simplifications (documented assumptions): without `jiffy_clock` (bytes unit, RFC
//! personalities) time is exact nanoseconds and the target is recomputed on every ACK; the
//! effective C is the parameter (Linux's `bic_scale` 41 gives 410/1024 ≈ 0.4004); the cube root
//! is computed with basic IEEE operations only, so results are identical on every platform.
//!
//! # Linux 2.6.16–3.19 growth counter (`delayed_ack_comp`, `ai_rule = "linux-2.6"`)
//!
//! Until Linux 4.0 (N. Cardwell's stretch-ACK series, net-next 28 Jan 2015: "tcp: fix the timid
//! additive increase on stretch ACKs" 814d488c612, "tcp: fix stretch ACK bugs in CUBIC"
//! 9cd981dcf17) every Linux CUBIC counted ACKs, not packets, and compensated for delayed ACKs:
//! `bictcp_acked` kept `delayed_ack`, an EWMA of packets per ACK in the Open state (×16, gain
//! 1/16, initially 2, reset with the CUBIC state; ≤ 32 per ACK from 2.6.39, b9f47a3aaea), and
//! `bictcp_update` ended with `cnt = cnt·16/delayed_ack`, then `cnt ≥ 1` ("cannot be zero").
//! The increase added a segment once `snd_cwnd_cnt ≥ cnt` and cleared the counter, otherwise
//! counted the ACK: one segment per `cnt + 1` ACKs ([`AiRule::Linux26`]). With an ACK per two
//! segments the compensation halves `cnt`, so the window follows the curve instead of lagging
//! it by about an RTT of growth; the fastest growth is one segment per two ACKs (×1.5 per RTT
//! with an ACK per segment, ×1.25 with delayed ACKs), the same limit as 4.0's `cnt ≥ 2`. The
//! integer EWMA cannot fall below 31/16 from its start at 32/16 with an ACK per segment
//! (31 − ⌊31/16⌋ + 1 = 31), so such a receiver halves `cnt` too. Sources: the 2.6.16, 2.6.25,
//! 2.6.29 and 2.6.39 trees and their git history, read for the facts. v2.0/v2.1 always
//! compensate; the current version does with [`CubicParams::delayed_ack_comp`].
//!
//! Undo in the same kernels (to 3.2; [`UndoRule::WMax`]): `bictcp_undo_cwnd` returned
//! max(cwnd, `last_max_cwnd`) — the fast-convergence-scaled `W_max`, 0 after an RTO — and
//! restored no CUBIC state ("tcp: fix undo after RTO for CUBIC", 5a45f0086a2, Linux 3.3).
//!
//! # Version 2.0 (`version = "2.0"`)
//!
//! CUBIC v2.0 as Linux shipped it from 2.6.16 until v2.1 (L: net/ipv4/tcp_cubic.c
//! `MODULE_VERSION("2.0")`; stacks-and-ccas.md A.2), selected by [`CubicParams::version`]. Same
//! `W_max`/`K`/origin logic and fast convergence, but:
//! * β = 819/1024 (used when `beta` is left at the RFC default 0.7), `initial_ssthresh` = 100
//!   segments at connection start, no HyStart (added in 2.6.29; the hystart parameters are
//!   ignored), no idle shift of the epoch.
//! * `cnt` per ACK: `cnt = cwnd/(target − cwnd)` (`100·cwnd` if not above) from the curve
//!   `target = origin ± C_g·|t + delay_min − K|³`; then the max-increment floor
//!   `cnt ≥ cwnd·0.1 s/(max_increment·delay_min)` (max_increment 16: at most 16 segments per
//!   100 ms of RTT) when `delay_min` is known; **`cnt = 50` before the first loss** (and after
//!   an RTO), i.e. +2 % per RTT; the Reno estimate (`tcp_cwnd`, +1 per `cwnd·beta_scale/8` ACK
//!   units, beta_scale = 23 for β' 819) caps `cnt ≤ cwnd/(tcp_cwnd − cwnd)` when ahead; then
//!   BIC's delayed-ACK compensation `cnt = cnt·16/delayed_ack` (integer EWMA of packets per ACK,
//!   gain 1/16, Open state only, initially 2; see `bic.rs`) and `cnt ≥ 1` — no `cnt ≥ 2` cap.
//! * Two scaling errors, both fixed by "tcp: cubic scaling error" (S. Hemminger / Sangtae Ha,
//!   LKML Nov 2006, 2.6.19 and 2.6.18.2, reported by Doug Leith: "A math error related to
//!   scaling causes Cubic to grow too slowly"), modelled as two settings because the sources
//!   date them differently:
//!   - [`CubicParams::v2_strict_floor`] (default on): `delay_min` was stored in plain jiffies
//!     (`tcp_time_stamp − rcv_tsecr`, and added to `t` as such) while the max-increment floor
//!     `cnt ≥ cwnd·HZ·8/(10·max_increment·delay_min)` expects jiffies·8 (srtt's unit), so the
//!     floor was 8× stricter: ≈ 2 segments per 100 ms of RTT instead of 16. In the first v2.0
//!     text and in 2.6.18.1 alike, so in 2.6.16.
//!   - [`CubicParams::v2_scaling_bug`] (default on): the growth term used `cube_rtt_scale =
//!     (bic_scale << 3)/10 = 32` instead of `bic_scale·10 = 410`, so the curve's `C_g =
//!     C·32/410 ≈ 0.031` while `K` still used `C ≈ 0.4` (the curve jumps close to `W_max` at
//!     the epoch start and then barely moves). In 2.6.18.1; the first v2.0 text computed the
//!     same term per ACK as 410 (no error), so whether 2.6.16 had it is UNVERIFIED (below).
//!
//!   Both off: the fixed v2.0 of 2.6.19–2.6.21 (`C_g = C`, floor 16 per 100 ms).
//!
//! Sources for 2.6.16 (read for the facts, nothing copied; searched 2026-11-29): (1) the first
//! v2.0 text, as "[TCP] BIC: CUBIC window growth (2.0)" (df3271f3361, committed 2006-01-03)
//! added it — a stored blob of net/ipv4/tcp_cubic.c (find_string id 1639749557; the index does
//! not name its repository) with `#include <linux/config.h>`, `cong_avoid(sk, ack, seq_rtt,
//! in_flight, data_acked)`, the table-and-bisection `cubic_root`, `bictcp_K()` and no
//! precomputed constants: it sets `cnt = 50` while `loss_cwnd == 0` ("slow start and low
//! utilization", after the max-increment floor, before the Reno estimate and the delayed-ACK
//! division), computes the curve's scale per ACK as `(bic_scale << 3)·HZ/srtt` with `srtt =
//! (HZ << 3)/10`, i.e. bic_scale·10 = 410 (no curve error: K and the curve both use
//! C ≈ 0.4; its `bictcp_K` also works out to 2^40/410 per segment, the later `cube_factor`),
//! and stores `delay_min` in plain jiffies against the floor's ×8 (the strict floor); (2) the
//! 2.6.18.1 file as the -stable patch "tcp: cubic scaling error" shows it (C. Wright, -stable
//! review 58/61, LKML 31 Oct 2006; GitHub ammarfaizi2/lore-inbox): `cube_rtt_scale =
//! (bic_scale << 3) / 10` computed once in `cubictcp_register` beside `beta_scale` and
//! `cube_factor` (= 2^40/(bic_scale·10), unchanged by the fix), `delay_min` in plain jiffies,
//! `t` adding it unshifted; the patch changes exactly those three lines; (3) later v2.0
//! files, with the fix and without linux/config.h, so 2.6.19–2.6.21 (GitHub
//! benji-cannot-code/fast-vc-linux-benchmark at 0eac7796 and 16c3ba21): still `cnt = 50`
//! before the first loss, `delay_min` stored ×8. So `cnt = 50` is in v2.0 from its first text
//! to its last, the strict floor is in every text up to the fix, and the curve error came
//! with the precomputation of the constants: "[TCP] cubic: precompute constants"
//! (89b3d9aaf46), the commit that introduced `cube_rtt_scale`, is dated the same day as v2.0
//! (stacks/linux-2.6.16.toml) and would put the error in 2.6.16 (the default here). Its diff,
//! and any 2.6.16 or 2.6.17 text, were not found (searched again 2026-11-29: find_files for
//! the path — 338 repositories, the listing truncated at 100, no 2.6.1x tree named before
//! 2.6.18; find_repos for 2.6.16/2.6.17/2.6.18 trees — only 2.6.18 and 2.6.11 ones;
//! find_string for `(bic_scale << 3)`, `cube_rtt_scale = `, `static u32 cube_rtt_scale;`,
//! `static u64 cube_factor;`, `cubic: precompute constants` (only 2024 netdev `Fixes:` tags
//! naming it), the code and pages corpora). The Kumazoe scenarios declare the curve error as
//! an assumption (`[assume.cubic_curve_error]`, both ends).
//!
//! # Version 2.1 (`version = "2.1"`)
//!
//! CUBIC v2.1 as in Linux 2.6.24's net/ipv4/tcp_cubic.c (`MODULE_VERSION("2.1")`, read for the
//! facts only): the v2.0 rules above with three differences. The scaling errors are gone
//! (`cube_rtt_scale = bic_scale·10`, `delay_min` stored as jiffies·8 as the floor expects;
//! [`CubicParams::v2_scaling_bug`] and [`CubicParams::v2_strict_floor`] are ignored); the max-increment floor applies only when the
//! target is above the origin (`t ≥ K`, the source's "use concave growth when the target is
//! above the origin"), so the approach to `W_max` follows the curve; `initial_ssthresh` defaults
//! to 0 (changed for 2.6.22, see [`CubicParams::initial_ssthresh`]). Everything else — β
//! 819/1024, `cnt = 50` while no loss has been seen (`loss_cwnd == 0`), the Reno estimate, the
//! delayed-ACK compensation, `cnt ≥ 1`, no HyStart — is v2.0's. v2.1 was the version up to at
//! least 2.6.24 and in 2.6.25: v2.2 ("[TCP]: TCP cubic v2.2", 6b3d626321c, March 2008: no
//! max-increment cap, no `cnt = 50` before the first loss, β 717/1024) entered 2.6.26, v2.3 with
//! HyStart (ae27e98a515) 2.6.29 (git history of tcp_cubic.c in a 2.6.39 tree).
//!
//! Both units use this `cnt` form (`aimd::increase_per_cnt`): integer as Linux in
//! packets, the same rules on the fractional window in bytes.

use crate::aimd::increase_per_cnt;
use crate::growth::{may_grow, AiRule, CwndUnit, SsthreshBasis, WindowState};
use crate::hystart::{HyStartAction, HyStartLinux, HyStartPlusPlus, HystartClock, HystartDetect};
use crate::params::{ParamInfo, ParamKind, Params, AI_RULE, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, SentEvent, MS, SEC,
};

/// Which slow-start exit heuristic CUBIC uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HystartMode {
    /// Standard slow start up to ssthresh or loss.
    Off,
    /// Linux HyStart: ACK train and delay increase (L: net/ipv4/tcp_cubic.c since 2.6.29).
    #[default]
    Linux,
    /// HyStart++ (RFC 9406): delay increase, then Conservative Slow Start.
    Rfc9406,
}

impl HystartMode {
    pub const CHOICES: &'static [&'static str] = &["off", "linux", "rfc9406"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "off" => Some(HystartMode::Off),
            "linux" => Some(HystartMode::Linux),
            "rfc9406" => Some(HystartMode::Rfc9406),
            _ => None,
        }
    }
}

/// Which CUBIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CubicVersion {
    /// RFC 9438 / Linux v2.3 (current).
    #[default]
    Rfc9438,
    /// Linux CUBIC v2.0 (2.6.16 until v2.1; see the module doc).
    V2_0,
    /// Linux CUBIC v2.1 (2.6.22 to at least 2.6.24; module doc "Version 2.1").
    V2_1,
}

impl CubicVersion {
    pub const CHOICES: &'static [&'static str] = &["rfc9438", "2.0", "2.1"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc9438" => Some(CubicVersion::Rfc9438),
            "2.0" => Some(CubicVersion::V2_0),
            "2.1" => Some(CubicVersion::V2_1),
            _ => None,
        }
    }

    /// The v2.x `bictcp_update` family (v2.0 and v2.1): β 819/1024, `cnt = 50` before the
    /// first loss, delayed-ACK compensation, no HyStart, no idle shift.
    pub fn is_v2(self) -> bool {
        matches!(self, CubicVersion::V2_0 | CubicVersion::V2_1)
    }
}

/// What an undo of a spurious reduction restores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UndoRule {
    /// RFC 9438 §4.9 (Linux ≥ 3.3 restores the window at the loss): the prior `W_max`, window
    /// and ssthresh.
    #[default]
    Prior,
    /// Linux 2.6.16–3.2 `bictcp_undo_cwnd`: cwnd = max(cwnd, `last_max_cwnd`), with `W_max`
    /// as the reduction left it (after fast convergence `cwnd·(1+β)/2`, not the window at the
    /// loss; 0 after an RTO, whose `bictcp_reset` cleared it, so an RTO's window is not
    /// restored at all); ssthresh from the stack, the epoch untouched. Fixed by "tcp: fix undo
    /// after RTO for CUBIC" (5a45f0086a2, N. Cardwell, Jan 2012, Linux 3.3), whose message
    /// names both effects.
    WMax,
}

impl UndoRule {
    pub const CHOICES: &'static [&'static str] = &["prior", "w_max"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "prior" => Some(UndoRule::Prior),
            "w_max" => Some(UndoRule::WMax),
            _ => None,
        }
    }
}

/// CUBIC's parameters. Defaults: RFC 9438 §5 / Linux v2.3 (stacks-and-ccas.md A.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    pub hystart: HystartMode,
    /// Linux HyStart detectors (module parameter `hystart_detect`).
    pub hystart_detect: HystartDetect,
    /// Linux HyStart acts from this window, segments (`hystart_low_window`, 16).
    pub hystart_low_window: u32,
    /// Linux HyStart ACK-train spacing (`hystart_ack_delta_us`, 2 ms).
    pub hystart_ack_delta: Nanos,
    /// Linux ≥ 5.7: the ACK train must also outlast half the TSO/GRO allowance
    /// `min(1 ms, 4·64 KiB/pacing rate)` ([`crate::hystart::linux_ack_delay`]); false for the
    /// 2.6.29–5.6 rule (train longer than `delay_min/2`).
    pub hystart_ack_delay: bool,
    /// The clock and rules of Linux HyStart's release ([`HystartClock`]): jiffies in
    /// 2.6.29–2.6.38, ms in 2.6.39, µs (current rules) by default.
    pub hystart_clock: HystartClock,
    /// Ask the stack for µs RTT samples (`TCP_CONG_RTT_STAMP`): Linux 2.6.39 sets it when HyStart
    /// is on and HZ < 1000 ("tcp_cubic: enable high resolution ack time if needed",
    /// 3b585b34493); before, CUBIC got whole jiffies ([`CongestionControl::rtt_stamp`]).
    pub rtt_stamp: bool,
    /// Linux's jiffy clock for the window update (module doc "Jiffy clock"): one jiffy (1/HZ),
    /// 0 = exact time. Packets unit only (the current version and v2.x); the bytes unit is
    /// RFC 9438 and ignores it. Set from `jiffy_clock` with the one jiffy length
    /// `hystart_jiffy_us`.
    pub jiffy_clock: Nanos,
    /// Cap `cnt` at 20 (≥ 5 % per RTT) while no loss has set `W_max`: "tcp_cubic: fix low
    /// utilization of CUBIC with HyStart" (b5ccd073374, 2.6.39: "Suppose that HyStart exits at
    /// 0.5BDP ... CUBIC's initial cwnd growth may be too conservative"); false for v2.2/v2.3 in
    /// 2.6.26–2.6.38, which grew from a HyStart exit along the flat curve around `K = 0`.
    pub unknown_wmax_cap: bool,
    /// Packets unit, current version only (v2.0/v2.1 always have it): Linux's delayed-ACK
    /// compensation `cnt = cnt·16/delayed_ack`, `delayed_ack` an EWMA (gain 1/16, ×16,
    /// initially 2 packets per ACK) of packets acknowledged per ACK in the Open state, in every
    /// CUBIC from 2.6.16 (the first tcp_cubic.c) until "tcp: fix stretch ACK bugs in CUBIC"
    /// (9cd981dcf17, merged for 4.0) removed it; since 2.6.39 the EWMA is limited to 32
    /// packets per ACK ("tcp_cubic: limit delayed_ack ratio to prevent divide error",
    /// b9f47a3aaea). 2.6.29–2.6.38 kept it in 16 bits without a limit (it wraps only after an
    /// ACK of ~65,000 packets, then divides by zero); the model applies the limit throughout.
    pub delayed_ack_comp: bool,
    /// Packets unit: the growth-counter floor and increment rule ([`AiRule`]).
    pub ai_rule: AiRule,
    /// What an undo restores ([`UndoRule`]).
    pub undo_rule: UndoRule,
    /// Fast convergence (RFC 9438 §4.7; Linux `fast_convergence` = 1).
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3; Linux `tcp_friendliness` = 1).
    pub tcp_friendliness: bool,
    /// Multiplicative decrease factor β (0.7; Linux 717/1024).
    pub beta: f64,
    /// Cubic scaling constant C in segments/s³ (0.4).
    pub c: f64,
    /// Basis of the multiplicative decrease.
    pub ssthresh_from: SsthreshBasis,
    /// Current CUBIC or Linux v2.0.
    pub version: CubicVersion,
    /// Version 2.0 only: the curve's growth term `cube_rtt_scale` 32 instead of 410, the
    /// 2.6.18 scaling error (module doc, "Version 2.0"); ignored by v2.1.
    pub v2_scaling_bug: bool,
    /// Version 2.0 only: `delay_min` kept in plain jiffies while the max-increment floor
    /// expects jiffies·8, so the floor is 8× strict (module doc, "Version 2.0"); ignored by
    /// v2.1.
    pub v2_strict_floor: bool,
    /// The module's `initial_ssthresh` in segments (0 = keep the connection's); `None` = the
    /// version's: 100 for v2.0, 0 for current CUBIC. Linux's tcp_cubic.c shipped 100 until a
    /// netdev patch of May 2007 ("Set initial_ssthresh default to zero in Cubic and BIC",
    /// S. Hemminger, merged for 2.6.22) made it 0; GÉANT's TCP tuning wiki (17 May 2007)
    /// documents the 100.
    pub initial_ssthresh: Option<u32>,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            hystart: HystartMode::Linux,
            hystart_detect: HystartDetect::Both,
            hystart_low_window: crate::hystart::HYSTART_LOW_WINDOW,
            hystart_ack_delta: crate::hystart::HYSTART_ACK_DELTA,
            hystart_ack_delay: true,
            hystart_clock: HystartClock::Us,
            rtt_stamp: false,
            jiffy_clock: 0,
            unknown_wmax_cap: true,
            delayed_ack_comp: false,
            ai_rule: AiRule::Linux4,
            undo_rule: UndoRule::Prior,
            fast_convergence: true,
            tcp_friendliness: true,
            beta: 0.7,
            c: 0.4,
            ssthresh_from: SsthreshBasis::Auto,
            version: CubicVersion::Rfc9438,
            v2_scaling_bug: true,
            v2_strict_floor: true,
            initial_ssthresh: None,
        }
    }
}

/// Linux's `BICTCP_BETA_SCALE`.
const BETA_SCALE: u64 = 1024;
/// Linux caps `cnt` at 20 while `W_max` is unknown ("increase cwnd 5% per RTT").
const CNT_MAX_UNKNOWN_WMAX: u64 = 20;
/// Linux keeps `cnt ≥ 2`: at most one segment per two acknowledged, ×1.5 per RTT.
const CNT_MIN: u64 = 2;
/// Linux `BICTCP_HZ`: the curve's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// Linux discards RTT samples in the first second of an epoch (`HZ`).
const DISCARD_AFTER_EPOCH: Nanos = SEC;
/// RFC 9438 §4.2: the target is at most 1.5·cwnd.
const MAX_TARGET_RATIO: f64 = 1.5;
/// v2.0: β = 819/1024 (replaces the RFC default 0.7), `initial_ssthresh` 100 segments,
/// `max_increment` 16 segments per 100 ms of RTT, `cnt = 50` before the first loss.
const V2_BETA: f64 = 819.0 / 1024.0;
const V2_INITIAL_SSTHRESH: u64 = 100;
const V2_MAX_INCREMENT: f64 = 16.0;
const V2_CNT_NO_LOSS: f64 = 50.0;
/// v2.0's scaling errors: the 2.6.18 growth term, 32/410 of C (`v2_scaling_bug`), and the
/// max-increment floor 8× stricter (`v2_strict_floor`).
const V2_BUG_GROWTH_SCALE: f64 = 32.0 / 410.0;
const V2_BUG_DELAY_FACTOR: f64 = 8.0;
/// BIC's delayed-ACK EWMA (v2.0): packets per ACK ×16, initially 2.
const V2_ACK_RATIO_SHIFT: u32 = 4;
const V2_DELAYED_ACK_INIT: u32 = 2 << V2_ACK_RATIO_SHIFT;
/// Linux ≥ 2.6.39 `ACK_RATIO_LIMIT`: the EWMA stays ≤ 32 packets per ACK (×16).
const ACK_RATIO_LIMIT: u32 = 32 << V2_ACK_RATIO_SHIFT;

/// Cube root of a non-negative finite `x` with Newton's iteration on basic IEEE-754 operations
/// (exactly rounded, so the result is the same on every platform, unlike a libm `cbrt`).
/// Returns 0 for `x ≤ 0`, NaN or subnormal `x`, and `x` for infinity.
pub(crate) fn cbrt(x: f64) -> f64 {
    if x.is_nan() || x < f64::MIN_POSITIVE {
        return 0.0;
    }
    if x.is_infinite() {
        return x;
    }
    // Initial guess from the exponent: divide the biased exponent (and mantissa bits) by three
    // and re-bias (the classic bit-level estimate, within ~5 %).
    let bits = x.to_bits();
    let hi = (bits >> 32) as u32;
    let guess_hi = hi / 3 + 715_094_163;
    let mut y = f64::from_bits(u64::from(guess_hi) << 32);
    for _ in 0..6 {
        y = (2.0 * y + x / (y * y)) / 3.0;
    }
    y
}

/// 2^52: from here on every f64 is an integer.
const INTEGRAL: f64 = 4_503_599_627_370_496.0;

/// `(x.floor(), x.floor() as u64)` for `0 < x < 2^52` (None otherwise): `x + 2^52` lies in
/// [2^52, 2^53), where the spacing of f64 is 1, so it is `2^52 + round(x)` exactly (default
/// round-to-nearest), and its mantissa bits are `round(x)` as an integer; one less when that is
/// above `x`. Four floating-point operations and no conversion back from a float register with
/// Rust's saturation checks.
#[inline(always)]
fn floor_parts(x: f64) -> Option<(f64, u64)> {
    if !(x > 0.0 && x < INTEGRAL) {
        return None;
    }
    let y = x + INTEGRAL;
    let r = y - INTEGRAL;
    let n = y.to_bits() - INTEGRAL.to_bits();
    Some(if r > x { (r - 1.0, n - 1) } else { (r, n) })
}

/// `x.floor()`, bit for bit, without the libm call it is on baseline x86-64 (no SSE4.1
/// `roundsd`; 1.6 % of an Iwanaga I5 trial's instructions, README "Performance"):
/// [`floor_parts`] for `0 < x < 2^52`, the case of every value CUBIC floors. Otherwise: below
/// 2^52 in magnitude the truncation to i64 and back is exact and one less corrects a negative
/// fraction; the sign of a zero result is `x`'s (`floor(-0.0) = -0.0`); from 2^52 on, and for
/// infinities and NaN, `x` is its own floor.
#[inline(always)]
fn floor(x: f64) -> f64 {
    if let Some((f, _)) = floor_parts(x) {
        return f;
    }
    if x.abs() < INTEGRAL {
        let t = x as i64 as f64;
        (if t > x { t - 1.0 } else { t }).copysign(x)
    } else {
        x
    }
}

/// `x as f64`, the same value: below 2^63 through the signed conversion (one `cvtsi2sd` on
/// x86-64, where the unsigned one is a four-instruction sequence on the critical path of
/// CUBIC's per-ACK arithmetic); both round the same integer to nearest.
#[inline(always)]
fn to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(v) => v as f64,
        Err(_) => x as f64,
    }
}

/// `⌊x·num/den⌋` without intermediate overflow (saturating at `u64::MAX`).
fn scale(x: u64, num: u64, den: u64) -> u64 {
    let r = u128::from(x) * u128::from(num) / u128::from(den.max(1));
    u64::try_from(r).unwrap_or(u64::MAX)
}

/// CUBIC congestion control.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    win: WindowState,
    /// β' = round(β·1024) and Linux `beta_scale` for the packets unit.
    beta_int: u64,
    beta_scale: u64,
    /// RFC 9438 §4.3 `α = 3(1−β)/(1+β)` (bytes unit, while `W_est < cwnd_prior`).
    reno_alpha: f64,

    // Epoch and curve (segments, seconds).
    w_max: f64,
    cwnd_prior: f64,
    epoch_start: Option<Nanos>,
    k: f64,
    origin: f64,
    /// Minimum RTT seen by CUBIC (Linux `delay_min`), 0 before the first sample.
    delay_min: Nanos,

    // Packets unit (Linux).
    cnt: u64,
    ack_cnt: u64,
    tcp_cwnd: u64,

    // Bytes unit (RFC 9438).
    w_est: f64,
    frac_bytes: f64,

    // Undo (RFC 9438 §4.9).
    prior_w_max: f64,
    prior_cwnd_prior: f64,

    // Slow start.
    acked_total: u64,
    hystart: HyStartLinux,
    hystart_pp: HyStartPlusPlus,

    /// Time of the last packet sent (Linux `lsndtime`), for the idle shift.
    last_send: Option<Nanos>,

    /// Delayed-ACK EWMA (Linux `delayed_ack`, packets per ACK ×16): v2.x, or the current
    /// version with `delayed_ack_comp`.
    delayed_ack: u32,
    // Version 2.0: a loss seen since the start or the last RTO (Linux `loss_cwnd != 0`), the
    // Reno estimate and its ACK counter in segments.
    v2_loss_seen: bool,
    v2_ack_cnt: f64,
    v2_tcp_cwnd: f64,
    /// v2.x: the max-increment floor on `cnt` last computed, for (window bits, `delay_min`):
    /// both change far less often than once per ACK, and the floor is two divisions.
    v2_min_cnt: Option<(u64, Nanos, f64)>,
    /// Jiffy clock: cwnd and jiffy of the last recompute of `cnt` (Linux `last_cwnd`,
    /// `last_time`), both 0 after a reset as in Linux `bictcp_reset`.
    last_cwnd: u64,
    last_jiffy: u64,
}

impl Cubic {
    /// A CUBIC controller. Parameters are assumed valid (`0 < beta < 1`, `c > 0` finite); the
    /// registry checks them.
    pub fn new(init: &CcInit, p: CubicParams) -> Self {
        let mut p = p;
        let mut win = WindowState::new(init);
        if p.version.is_v2() {
            // v2.0: no HyStart (2.6.29), β 819/1024 unless set, initial_ssthresh 100.
            p.hystart = HystartMode::Off;
            if p.beta == CubicParams::default().beta {
                p.beta = V2_BETA;
            }
        }
        let initial_ssthresh = p.initial_ssthresh.map_or(
            if p.version == CubicVersion::V2_0 {
                V2_INITIAL_SSTHRESH
            } else {
                0
            },
            u64::from,
        );
        if initial_ssthresh > 0 {
            // Linux cubictcp_init: snd_ssthresh = initial_ssthresh when the parameter is set.
            win.set_ssthresh(initial_ssthresh.saturating_mul(win.mss()));
        }
        let beta_int = ((p.beta * BETA_SCALE as f64).round() as u64).clamp(1, BETA_SCALE - 1);
        // Linux cubictcp_register: beta_scale = 8*(1024 + beta) / 3 / (1024 - beta).
        let beta_scale = 8 * (BETA_SCALE + beta_int) / 3 / (BETA_SCALE - beta_int);
        Cubic {
            p,
            win,
            beta_int,
            beta_scale,
            reno_alpha: 3.0 * (1.0 - p.beta) / (1.0 + p.beta),
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch_start: None,
            k: 0.0,
            origin: 0.0,
            delay_min: 0,
            cnt: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            w_est: 0.0,
            frac_bytes: 0.0,
            prior_w_max: 0.0,
            prior_cwnd_prior: 0.0,
            acked_total: 0,
            hystart: HyStartLinux::new(
                p.hystart_detect,
                p.hystart_low_window,
                p.hystart_ack_delta,
                p.hystart_clock,
            ),
            hystart_pp: HyStartPlusPlus::default(),
            last_send: None,
            delayed_ack: V2_DELAYED_ACK_INIT,
            v2_loss_seen: false,
            v2_ack_cnt: 0.0,
            v2_tcp_cwnd: 0.0,
            v2_min_cnt: None,
            last_cwnd: 0,
            last_jiffy: 0,
        }
    }

    pub fn params(&self) -> &CubicParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// `W_max` in segments (0 = unknown).
    pub fn w_max_segments(&self) -> f64 {
        self.w_max
    }
    /// `K` of the current epoch, seconds.
    pub fn k_seconds(&self) -> f64 {
        self.k
    }
    /// Start of the current epoch, if one is running.
    pub fn epoch_start(&self) -> Option<Nanos> {
        self.epoch_start
    }
    /// Reno-friendly estimate in segments (`tcp_cwnd` in packets, `W_est` in bytes).
    pub fn reno_estimate_segments(&self) -> f64 {
        if self.p.version.is_v2() {
            return self.v2_tcp_cwnd;
        }
        match self.win.growth().unit {
            CwndUnit::Packets => self.tcp_cwnd as f64,
            CwndUnit::Bytes => self.w_est,
        }
    }
    /// The delayed-ACK EWMA in packets per ACK (Linux `delayed_ack / 16`).
    pub fn delayed_ack_ratio(&self) -> f64 {
        f64::from(self.delayed_ack) / f64::from(1u32 << V2_ACK_RATIO_SHIFT)
    }
    /// The growth counter of the last congestion-avoidance ACK (Linux `ca->cnt`).
    pub fn cnt(&self) -> u64 {
        self.cnt
    }
    /// Minimum RTT seen by CUBIC (Linux `delay_min`; 0 before the first sample).
    pub fn delay_min(&self) -> Nanos {
        self.delay_min
    }
    /// The ACK-train allowance of Linux ≥ 5.7 for this ACK (0 with `hystart_ack_delay` off).
    fn hystart_ack_delay(&self, srtt: Nanos) -> Nanos {
        if !self.p.hystart_ack_delay {
            return 0;
        }
        let mss = self.win.mss();
        crate::hystart::linux_ack_delay(
            self.win.cwnd_segments(),
            self.win.ssthresh() / mss.max(1),
            mss,
            srtt,
        )
    }
    /// Linux HyStart state.
    pub fn hystart(&self) -> &HyStartLinux {
        &self.hystart
    }
    /// HyStart++ state.
    pub fn hystart_pp(&self) -> &HyStartPlusPlus {
        &self.hystart_pp
    }

    fn cwnd_seg_f(&self) -> f64 {
        to_f64(self.win.cwnd()) / to_f64(self.win.mss())
    }

    /// `W_cubic(t)` (RFC 9438 eq. 1) in segments for `t` seconds into the epoch.
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.p.c * d * d * d + self.origin
    }

    /// Starts an epoch at `now` with the current window (RFC 9438 §4.2 `cwnd_epoch`).
    fn start_epoch(&mut self, now: Nanos, cwnd: f64) {
        self.epoch_start = Some(now);
        if self.w_max > cwnd {
            self.k = cbrt((self.w_max - cwnd) / self.p.c);
            self.origin = self.w_max;
        } else {
            // No usable W_max (none yet, after an RTO, or already above it): K = 0 and the
            // curve starts here (RFC 9438 §4.8, §4.10; Linux bic_K = 0, origin = cwnd).
            self.k = 0.0;
            self.origin = cwnd;
        }
        if self.cwnd_prior <= 0.0 {
            // RFC 9438 §4.10: without a prior reduction, cwnd_prior = cwnd at CA start.
            self.cwnd_prior = cwnd;
        }
    }

    /// Jiffy clock, Linux `bictcp_update` rule (1): true when `cnt` is kept (cwnd unchanged
    /// since the last recompute, at most HZ/32 jiffies ago). Otherwise records this recompute
    /// unless rule (2) applies (`Some(true)`: same jiffy, epoch running).
    fn jiffy_gate(&mut self, now: Nanos, cwnd: u64, once_per_jiffy: bool) -> Option<bool> {
        let jiffy = self.p.jiffy_clock;
        if jiffy == 0 {
            return Some(false);
        }
        let j = now / jiffy;
        // HZ/32 in whole jiffies, as Linux's integer division (7 at HZ 250, 31 at HZ 1000).
        let hold = (SEC / jiffy) / 32;
        if self.last_cwnd == cwnd && j.wrapping_sub(self.last_jiffy) <= hold {
            return None;
        }
        if once_per_jiffy && self.epoch_start.is_some() && j == self.last_jiffy {
            return Some(true);
        }
        self.last_cwnd = cwnd;
        self.last_jiffy = j;
        Some(false)
    }

    /// Starts the epoch at `now`, on the jiffy clock at the start of the current jiffy.
    fn start_epoch_clocked(&mut self, now: Nanos, cwnd: f64) {
        let jiffy = self.p.jiffy_clock;
        let at = now.checked_div(jiffy).map_or(now, |j| j * jiffy);
        self.start_epoch(at, cwnd);
    }

    /// Time on the curve in seconds: `now − epoch + delay_min`; on the jiffy clock Linux's
    /// `((jiffies − epoch_start) + usecs_to_jiffies(delay_min)) << BICTCP_HZ / HZ` (whole
    /// jiffies, `delay_min` rounded up, then 1/1024 s rounded down).
    fn curve_time(&self, now: Nanos, epoch: Nanos) -> f64 {
        let jiffy = self.p.jiffy_clock;
        if jiffy == 0 {
            return to_f64(now.saturating_sub(epoch).saturating_add(self.delay_min)) / SEC as f64;
        }
        let jiffies = (now / jiffy)
            .saturating_sub(epoch / jiffy)
            .saturating_add(self.delay_min.div_ceil(jiffy));
        let hz = (SEC / jiffy).max(1);
        to_f64(jiffies.saturating_mul(1 << BICTCP_HZ) / hz) / f64::from(1u32 << BICTCP_HZ)
    }

    /// The increase with the `cnt` kept (Linux: `bictcp_update` returned early).
    fn increase_kept(&mut self, credit: u64) {
        self.win
            .additive_increase_rule(self.p.ai_rule, self.cnt.max(1), credit);
    }

    /// Linux `bictcp_update`'s `cnt` from the curve (packets unit): ACKs per segment of
    /// growth toward the target one `delay_min` ahead, capped at 20 while `W_max` is unknown.
    fn curve_cnt(&self, now: Nanos, cwnd: u64) -> u64 {
        let epoch = self.epoch_start.unwrap_or(now);
        // Target one delay_min ahead: W_cubic(t + RTT) (Linux adds delay_min to t).
        let t = self.curve_time(now, epoch);
        let offs = t - self.k;
        let delta = self.p.c * offs.abs() * offs.abs() * offs.abs();
        // Integer origin ± integer delta, as Linux (delta rounded down, toward the origin).
        let origin = self.origin as u64;
        let delta = delta as u64; // saturating conversion
        let target = if offs < 0.0 {
            origin.saturating_sub(delta)
        } else {
            origin.saturating_add(delta)
        };
        let cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            cwnd.saturating_mul(100)
        };
        if self.p.unknown_wmax_cap && self.w_max <= 0.0 && cnt > CNT_MAX_UNKNOWN_WMAX {
            CNT_MAX_UNKNOWN_WMAX
        } else {
            cnt
        }
    }

    /// Linux `bictcp_update` + `tcp_cong_avoid_ai` (packets unit).
    fn avoid_packets(&mut self, now: Nanos, credit: u64) {
        let cwnd = self.win.cwnd_segments();
        self.ack_cnt = self.ack_cnt.saturating_add(credit);
        // Rule (2) came with 4.0's stretch-ACK series, which also removed delayed_ack.
        let once_per_jiffy = self.p.ai_rule == AiRule::Linux4 && !self.p.delayed_ack_comp;
        let same_jiffy = if self.p.jiffy_clock == 0 {
            false
        } else if let Some(same) = self.jiffy_gate(now, cwnd, once_per_jiffy) {
            same
        } else {
            self.increase_kept(credit);
            return;
        };
        if self.epoch_start.is_none() {
            self.start_epoch_clocked(now, cwnd as f64);
            self.ack_cnt = credit;
            self.tcp_cwnd = cwnd;
        }
        let mut cnt = if same_jiffy {
            // Linux ≥ 4.0: at most one evaluation of the curve per jiffy; the last cnt goes
            // on to the Reno-friendly part.
            self.cnt
        } else {
            self.curve_cnt(now, cwnd)
        };
        if self.p.tcp_friendliness {
            // Reno estimate: +1 segment per cwnd·beta_scale/8 counted units.
            let per = (cwnd.saturating_mul(self.beta_scale) >> 3).max(1);
            if self.ack_cnt > per {
                let n = (self.ack_cnt - 1) / per;
                self.ack_cnt -= n * per;
                self.tcp_cwnd = self.tcp_cwnd.saturating_add(n);
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                cnt = cnt.min(max_cnt);
            }
        }
        if self.p.delayed_ack_comp {
            // Linux ≤ 3.19: cnt·16/delayed_ack (packets per ACK ×16).
            cnt = scale(
                cnt,
                1 << V2_ACK_RATIO_SHIFT,
                u64::from(self.delayed_ack.max(1)),
            );
        }
        match self.p.ai_rule {
            AiRule::Linux4 => {
                self.cnt = cnt.max(CNT_MIN);
                self.win.additive_increase(self.cnt, credit);
            }
            AiRule::Linux26 => {
                // cnt ≥ 1 and +1 segment per cnt + 1 ACKs (snd_cwnd_cnt counts 0..=cnt).
                self.cnt = cnt.max(1);
                self.win
                    .additive_increase_rule(AiRule::Linux26, self.cnt, credit);
            }
        }
    }

    /// RFC 9438 §4.2–4.5 (bytes unit). `credit` is in bytes (SMSS per ACK without ABC).
    fn avoid_bytes(&mut self, ev: &AckEvent, credit: u64) {
        let mss = to_f64(self.win.mss());
        let cwnd = self.cwnd_seg_f();
        let acked = to_f64(credit) / mss;
        if self.epoch_start.is_none() {
            self.start_epoch(ev.now, cwnd);
            self.w_est = cwnd;
            self.frac_bytes = 0.0;
        }
        let epoch = self.epoch_start.unwrap_or(ev.now);
        let rtt = [ev.srtt, ev.min_rtt, self.delay_min]
            .into_iter()
            .find(|&r| r > 0)
            .unwrap_or(0);
        let t = to_f64(ev.now.saturating_sub(epoch)) / SEC as f64;
        let rtt_s = to_f64(rtt) / SEC as f64;
        let w_t = self.w_cubic(t);
        let target = self.w_cubic(t + rtt_s).clamp(cwnd, MAX_TARGET_RATIO * cwnd);
        let mut new_cwnd = cwnd + (target - cwnd) / cwnd * acked;
        if self.p.tcp_friendliness {
            let alpha = if self.w_est >= self.cwnd_prior {
                1.0
            } else {
                self.reno_alpha
            };
            self.w_est += alpha * acked / cwnd;
            if w_t < self.w_est {
                // Reno-friendly region (§4.3): cwnd = W_est (never a decrease here).
                new_cwnd = self.w_est.max(cwnd);
            }
        }
        let inc = (new_cwnd - cwnd) * mss + self.frac_bytes;
        if let Some((whole, n)) = floor_parts(inc) {
            self.frac_bytes = inc - whole;
            self.win.grow_bytes(n);
        } else if inc.is_finite() && inc > 0.0 {
            let whole = floor(inc);
            self.frac_bytes = inc - whole;
            self.win.grow_bytes(whole as u64);
        }
    }

    /// Linux v2.0 `bictcp_update` + increase (both units; module doc "Version 2.0").
    fn avoid_v2(&mut self, now: Nanos, credit: u64) {
        let int = self.win.growth().unit == CwndUnit::Packets;
        let q = |x: f64| if int { floor(x) } else { x };
        let cwnd_int = self.win.cwnd_segments();
        let cwnd = if int {
            to_f64(cwnd_int)
        } else {
            self.cwnd_seg_f()
        };
        // ACK units (segments of credit) for the Reno estimate.
        let units = if int {
            to_f64(credit)
        } else {
            to_f64(credit) / to_f64(self.win.mss())
        };
        self.v2_ack_cnt += units;
        // Jiffy clock (packets only): v2.x holds cnt as rule (1); rule (2) came in 4.0.
        let jiffies = int && self.p.jiffy_clock != 0;
        if jiffies && self.jiffy_gate(now, cwnd_int, false).is_none() {
            self.win
                .additive_increase_rule(self.p.ai_rule, self.cnt.max(1), credit);
            return;
        }
        if self.epoch_start.is_none() {
            if jiffies {
                self.start_epoch_clocked(now, cwnd);
            } else {
                self.start_epoch(now, cwnd);
            }
            self.v2_ack_cnt = units;
            self.v2_tcp_cwnd = cwnd;
        }
        let epoch = self.epoch_start.unwrap_or(now);
        let t = if jiffies {
            self.curve_time(now, epoch)
        } else {
            to_f64(now.saturating_sub(epoch).saturating_add(self.delay_min)) / SEC as f64
        };
        let offs = (t - self.k).abs();
        // The scaling errors are v2.0's only (fixed in 2.6.19, before v2.1): the curve's
        // growth term (2.6.18; 2.6.16 UNVERIFIED) and the floor's delay_min unit (the first
        // v2.0 text and 2.6.18 alike).
        let v2_0 = self.p.version == CubicVersion::V2_0;
        let scaling_bug = self.p.v2_scaling_bug && v2_0;
        let strict_floor = self.p.v2_strict_floor && v2_0;
        let c_growth = if scaling_bug {
            self.p.c * V2_BUG_GROWTH_SCALE
        } else {
            self.p.c
        };
        let delta = q(c_growth * offs * offs * offs);
        let target = if t < self.k {
            self.origin - delta
        } else {
            self.origin + delta
        };
        let mut cnt = if target > cwnd {
            q(cwnd / (target - cwnd))
        } else {
            100.0 * cwnd
        };
        // v2.1 applies the floor only once the target is above the origin (t ≥ K: concave
        // growth below W_max is left to the curve); v2.0 always.
        let floor_applies = self.p.version == CubicVersion::V2_0 || t >= self.k;
        if self.delay_min > 0 && floor_applies {
            // max increment = Smax·rtt/0.1 s: cnt ≥ cwnd·0.1 s/(Smax·delay_min).
            let min_cnt = match self.v2_min_cnt {
                Some((w, dm, m)) if w == cwnd.to_bits() && dm == self.delay_min => m,
                _ => {
                    let d = to_f64(self.delay_min) / SEC as f64;
                    let bug = if strict_floor {
                        V2_BUG_DELAY_FACTOR
                    } else {
                        1.0
                    };
                    let m = q(cwnd * 0.1 * bug / (V2_MAX_INCREMENT * d));
                    self.v2_min_cnt = Some((cwnd.to_bits(), self.delay_min, m));
                    m
                }
            };
            cnt = cnt.max(min_cnt);
        }
        if !self.v2_loss_seen {
            // "slow start and low utilization": could be aggressive, cnt = 50.
            cnt = V2_CNT_NO_LOSS;
        }
        if self.p.tcp_friendliness {
            // In packets ⌊cwnd·beta_scale/8⌋ is exact in integers: beta_scale < 2^13 (β' ≥ 1),
            // so below 2^40 segments the product is below 2^53, exact in f64 as well.
            debug_assert!(self.beta_scale < 1 << 13);
            let per = if int && cwnd_int < 1 << 40 {
                to_f64((cwnd_int * self.beta_scale) >> 3)
            } else {
                q(cwnd * to_f64(self.beta_scale) / 8.0)
            };
            if per > 0.0 && self.v2_ack_cnt > per {
                let n = (self.v2_ack_cnt / per).ceil() - 1.0;
                self.v2_ack_cnt -= n * per;
                self.v2_tcp_cwnd += n;
            }
            if self.v2_tcp_cwnd > cwnd {
                cnt = cnt.min(q(cwnd / (self.v2_tcp_cwnd - cwnd)));
            }
        }
        let scaled =
            cnt * f64::from(1u32 << V2_ACK_RATIO_SHIFT) / f64::from(self.delayed_ack.max(1));
        match floor_parts(scaled).filter(|_| int) {
            Some((f, n)) => {
                cnt = f;
                self.cnt = n.max(1);
            }
            None => {
                cnt = q(scaled);
                self.cnt = cnt.max(1.0) as u64;
            }
        }
        if int {
            // increase_per_cnt's packets case, with the conversion of cnt done once.
            self.win
                .additive_increase_rule(self.p.ai_rule, self.cnt, credit);
        } else {
            increase_per_cnt(&mut self.win, self.p.ai_rule, credit, cnt);
        }
    }

    /// RFC 9438 §4.6–4.7 / Linux `cubictcp_recalc_ssthresh`: new W_max and ssthresh.
    fn reduce(&mut self, in_flight: u64, peer_window: u64) {
        self.epoch_start = None;
        self.v2_loss_seen = true;
        self.prior_w_max = self.w_max;
        self.prior_cwnd_prior = self.cwnd_prior;
        let basis = self
            .p
            .ssthresh_from
            .bytes(&self.win, in_flight, peer_window);
        match self.win.growth().unit {
            CwndUnit::Packets => {
                let cwnd = self.win.cwnd_segments();
                self.cwnd_prior = cwnd as f64;
                // Linux integer arithmetic (in u128 so no window can overflow it).
                self.w_max = if self.p.fast_convergence && (cwnd as f64) < self.w_max {
                    scale(cwnd, BETA_SCALE + self.beta_int, 2 * BETA_SCALE) as f64
                } else {
                    cwnd as f64
                };
                let basis_seg = basis / self.win.mss();
                let s = scale(basis_seg, self.beta_int, BETA_SCALE);
                self.win.set_ssthresh(s.saturating_mul(self.win.mss()));
            }
            CwndUnit::Bytes => {
                // XNU tcp_cubic_pre_fr: W_lastmax from the same min(snd_cwnd, snd_wnd) as
                // ssthresh (SsthreshBasis::Xnu); elsewhere the window at the event.
                let cwnd = if self.p.ssthresh_from == SsthreshBasis::Xnu {
                    to_f64(basis) / to_f64(self.win.mss())
                } else {
                    self.cwnd_seg_f()
                };
                self.cwnd_prior = cwnd;
                self.w_max = if self.p.fast_convergence && cwnd < self.w_max {
                    cwnd * (1.0 + self.p.beta) / 2.0
                } else {
                    cwnd
                };
                self.win.set_reduced_ssthresh(
                    self.p.ssthresh_from,
                    (basis as f64 * self.p.beta) as u64,
                );
            }
        }
        self.win.reset_counters();
        self.cnt = 0;
        self.frac_bytes = 0.0;
    }

    /// Moves the epoch start forward by the idle time since the last send (Linux TX_START).
    fn shift_epoch_for_idle(&mut self, now: Nanos) {
        if self.p.version.is_v2() {
            return; // v2.0 and v2.1 had no cwnd_event hook.
        }
        if let (Some(epoch), Some(last)) = (self.epoch_start, self.last_send) {
            let idle = now.saturating_sub(last);
            if idle > 0 {
                self.epoch_start = Some(epoch.saturating_add(idle).min(now));
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn rtt_stamp(&self) -> bool {
        self.p.rtt_stamp
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.acked_total = self.acked_total.saturating_add(ev.bytes_acked);
        let v2 = self.p.version.is_v2();
        if (v2 || self.p.delayed_ack_comp)
            && !ev.in_recovery
            && !ev.outside_open
            && ev.packets_acked > 0
        {
            // bictcp_acked: delayed-ACK ratio EWMA, on ACKs that arrive in the Open state (not
            // in Disorder, CWR, Recovery or Loss, nor on the ACK that ends a recovery); limited
            // to 32 packets per ACK from 2.6.39 (the 32-bit field of v2.0/v2.1 had no limit).
            let d = self
                .delayed_ack
                .saturating_add(ev.packets_acked)
                .saturating_sub(self.delayed_ack >> V2_ACK_RATIO_SHIFT);
            self.delayed_ack = if v2 { d } else { d.min(ACK_RATIO_LIMIT) };
        }

        // RTT samples: delay_min and Linux HyStart (cubictcp_acked, also during recovery).
        if ev.rtt_sample.is_none()
            && self.p.hystart == HystartMode::Linux
            && self.win.in_slow_start()
            && !ev.in_recovery
            && ev.bytes_acked > 0
        {
            // Old releases start HyStart rounds in cong_avoid, sample or not.
            self.hystart
                .on_ack_without_sample(ev.now, self.acked_total, ev.in_flight);
        }
        if let Some(sample) = ev.rtt_sample {
            let fresh_epoch = matches!(self.epoch_start,
                Some(e) if ev.now.saturating_sub(e) < DISCARD_AFTER_EPOCH);
            if !fresh_epoch {
                let delay = sample.max(1);
                if self.delay_min == 0 || delay < self.delay_min {
                    self.delay_min = delay;
                }
                if self.p.hystart == HystartMode::Linux
                    && !self.hystart.found()
                    && self.win.in_slow_start()
                    && self.hystart.on_sample(
                        ev.now,
                        delay,
                        self.delay_min,
                        self.hystart_ack_delay(ev.srtt),
                        self.win.cwnd_segments(),
                        self.acked_total,
                        ev.in_flight,
                    )
                {
                    let c = self.win.cwnd();
                    self.win.set_ssthresh(c);
                }
            }
        }

        // HyStart++ (RFC 9406 §4.2) runs on ACKs of the initial slow start. As in the RFC's
        // order, this ACK grows the window with the phase it arrived in (slow start or CSS),
        // then its RTT sample may change the phase for the following ACKs.
        let mut divisor = 1;
        if self.p.hystart == HystartMode::Rfc9406
            && self.hystart_pp.active()
            && self.win.in_slow_start()
            && !ev.in_recovery
        {
            divisor = self.hystart_pp.growth_divisor();
            if self
                .hystart_pp
                .on_ack(ev.rtt_sample, self.acked_total, ev.in_flight)
                == HyStartAction::EnterAvoidance
            {
                // CSS_ROUNDS rounds of CSS complete: ssthresh = cwnd, congestion avoidance.
                let c = self.win.cwnd();
                self.win.set_ssthresh(c);
            }
        }

        if !may_grow(ev) {
            return;
        }
        let credit = self.win.slow_start_divided(ev, divisor);
        if credit == 0 {
            return;
        }
        // Linux 2.x counts the ACK once in congestion avoidance, with ABC on too (AiRule).
        let credit = self.p.ai_rule.credit(self.win.growth().unit, credit);
        if self.p.version.is_v2() {
            self.avoid_v2(ev.now, credit);
            return;
        }
        match self.win.growth().unit {
            CwndUnit::Packets => self.avoid_packets(ev.now, credit),
            CwndUnit::Bytes => self.avoid_bytes(ev, credit),
        }
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.reduce(ev.in_flight, ev.peer_window);
        self.hystart_pp.finish();
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        if self.p.ssthresh_from == SsthreshBasis::Xnu {
            // XNU tcp_cubic_after_timeout (first timeout of a series only, SsthreshBasis::Xnu):
            // outside a fast recovery the state is cleared and tcp_cubic_pre_fr sets W_lastmax
            // and ssthresh from min(cwnd, snd_wnd); inside one the recovery's stay. Then cwnd is
            // one segment. The next epoch starts from W_lastmax (K from it), not from 0.
            if ev.sets_ssthresh() && !ev.in_recovery {
                self.reduce(ev.in_flight, ev.peer_window);
            }
            self.epoch_start = None;
            self.cnt = 0;
            self.frac_bytes = 0.0;
            self.win.on_timeout();
            return;
        }
        if self.p.ssthresh_from.reduces_on_timeout(ev) {
            self.reduce(ev.in_flight, ev.peer_window);
        }
        // Linux bictcp_reset + bictcp_hystart_reset on TCP_CA_Loss; RFC 9438 §4.8 (W_max is
        // the window at the start of the next congestion avoidance, K = 0).
        self.w_max = 0.0;
        self.cwnd_prior = 0.0;
        self.epoch_start = None;
        self.k = 0.0;
        self.origin = 0.0;
        self.delay_min = 0;
        self.cnt = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.w_est = 0.0;
        self.frac_bytes = 0.0;
        self.hystart.reset();
        self.hystart_pp.finish();
        self.delayed_ack = V2_DELAYED_ACK_INIT;
        self.v2_loss_seen = false;
        self.v2_ack_cnt = 0.0;
        self.v2_tcp_cwnd = 0.0;
        self.last_cwnd = 0;
        self.last_jiffy = 0;
        self.win.on_timeout();
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if ev.in_flight <= u64::from(ev.bytes) {
            // Nothing was in flight: transmission restarts (Linux CA_EVENT_TX_START).
            self.shift_epoch_for_idle(ev.now);
        }
        self.last_send = Some(ev.now);
    }

    fn on_idle_restart(&mut self, now: Nanos, restart_window: u64) {
        self.shift_epoch_for_idle(now);
        self.last_send = Some(now);
        let w = self.win.cwnd().min(restart_window);
        self.win.set_cwnd(w);
    }

    fn on_undo(&mut self, _now: Nanos, prior_cwnd: u64, prior_ssthresh: u64) {
        if self.p.undo_rule == UndoRule::WMax {
            // Linux 2.6.16–3.2 bictcp_undo_cwnd: max(cwnd, last_max_cwnd), nothing restored.
            let w_max = (self.w_max * self.win.mss() as f64) as u64; // saturating conversion
            let c = self.win.cwnd().max(w_max);
            self.win.set_cwnd(c);
            self.win.set_ssthresh(prior_ssthresh);
            return;
        }
        // RFC 9438 §4.9: restore the state from before the spurious reduction.
        self.w_max = self.prior_w_max;
        self.cwnd_prior = self.prior_cwnd_prior;
        self.epoch_start = None;
        self.win.set_cwnd(prior_cwnd);
        self.win.set_ssthresh(prior_ssthresh);
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let vars = [
            ("w_max", self.w_max),
            ("k_s", self.k),
            ("origin", self.origin),
            ("reno_est", self.reno_estimate_segments()),
            ("cnt", self.cnt as f64),
            ("delay_min_ms", self.delay_min as f64 / 1e6),
            ("hystart_found", f64::from(u8::from(self.hystart.found()))),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "hystart",
        kind: ParamKind::Choice(HystartMode::CHOICES),
        default: "linux",
        doc: "slow-start exit: \"off\", \"linux\" (HyStart: ACK train + delay increase) or \
              \"rfc9406\" (HyStart++); true = \"linux\", false = \"off\"",
    },
    ParamInfo {
        name: "hystart_detect",
        kind: ParamKind::Choice(HystartDetect::CHOICES),
        default: "both",
        doc: "Linux HyStart detectors (module parameter hystart_detect)",
    },
    ParamInfo {
        name: "hystart_low_window",
        kind: ParamKind::Int,
        default: "16",
        doc: "Linux HyStart acts only from this window, segments (hystart_low_window)",
    },
    ParamInfo {
        name: "hystart_ack_delta_us",
        kind: ParamKind::Int,
        default: "2000",
        doc: "Linux HyStart: largest ACK spacing that continues an ACK train, µs",
    },
    ParamInfo {
        name: "hystart_ack_delay",
        kind: ParamKind::Bool,
        default: "true",
        doc: "Linux HyStart (kernels ≥ 5.7): the ACK train must outlast (delay_min + \
              min(1 ms, 4·64 KiB/pacing rate))/2, not delay_min/2 (tcp_cubic.c \
              hystart_ack_delay); false for 2.6.29-5.6",
    },
    ParamInfo {
        name: "hystart_clock",
        kind: ParamKind::Choice(HystartClock::CHOICES),
        default: "us",
        doc: "clock and rules of Linux HyStart's release: \"jiffies\" (2.6.29-2.6.38: ACK \
              times and RTTs in jiffies, train test >= delay_min/2, delay threshold RTT/16 in \
              2-16 jiffies), \"ms\" (2.6.39: ms clock, > delay_min/2, RTT/16 in 4-16 ms) or \
              \"us\" (current rules)",
    },
    ParamInfo {
        name: "hystart_jiffy_us",
        kind: ParamKind::Int,
        default: "4000",
        doc: "one jiffy (1/HZ), µs (4000 at HZ 250): HyStart's clock with hystart_clock \
              \"jiffies\", and the window update's with jiffy_clock",
    },
    ParamInfo {
        name: "jiffy_clock",
        kind: ParamKind::Bool,
        default: "false",
        doc: "packets unit: Linux's jiffy clock in bictcp_update (cnt kept up to HZ/32 while \
              cwnd is unchanged, curve time in whole jiffies, once per jiffy with ai_rule \
              linux-4); jiffy length hystart_jiffy_us",
    },
    ParamInfo {
        name: "rtt_stamp",
        kind: ParamKind::Bool,
        default: "false",
        doc: "ask for µs RTT samples (Linux TCP_CONG_RTT_STAMP; 2.6.39 sets it when HZ < 1000); \
              read by the stack with rtt_sampling = \"linux-2.6\"",
    },
    ParamInfo {
        name: "unknown_wmax_cap",
        kind: ParamKind::Bool,
        default: "true",
        doc: "cnt <= 20 (>= 5 % per RTT) before the first loss (Linux 2.6.39, 'fix low \
              utilization of CUBIC with HyStart'); false for 2.6.26-2.6.38",
    },
    ParamInfo {
        name: "delayed_ack_comp",
        kind: ParamKind::Bool,
        default: "false",
        doc: "packets unit, version \"rfc9438\": Linux's delayed-ACK compensation cnt = \
              cnt*16/delayed_ack (EWMA of packets per ACK, x16, limited to 32 per ACK), in \
              every Linux CUBIC until 3.19 (removed for 4.0 by 'tcp: fix stretch ACK bugs in \
              CUBIC'); v2.0/v2.1 always have it",
    },
    ParamInfo {
        name: "undo_rule",
        kind: ParamKind::Choice(UndoRule::CHOICES),
        default: "prior",
        doc: "undo of a spurious reduction: \"prior\" (RFC 9438 4.9: prior W_max, cwnd, \
              ssthresh) or \"w_max\" (Linux 2.6.16-3.2: cwnd = max(cwnd, W_max as reduced, 0 \
              after an RTO))",
    },
    AI_RULE,
    ParamInfo {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: "true",
        doc: "W_max = cwnd·(1+β)/2 after a loss below the previous W_max (RFC 9438 §4.7)",
    },
    ParamInfo {
        name: "tcp_friendliness",
        kind: ParamKind::Bool,
        default: "true",
        doc: "Reno-friendly region: never grow slower than Reno (RFC 9438 §4.3)",
    },
    ParamInfo {
        name: "beta",
        kind: ParamKind::Float,
        default: "0.7",
        doc: "multiplicative decrease factor β, 0 < β < 1 (Linux: round(β·1024)/1024 = 717/1024)",
    },
    ParamInfo {
        name: "c",
        kind: ParamKind::Float,
        default: "0.4",
        doc: "cubic scaling constant C, segments/s³, > 0",
    },
    SSTHRESH_FROM,
    ParamInfo {
        name: "version",
        kind: ParamKind::Choice(CubicVersion::CHOICES),
        default: "rfc9438",
        doc: "\"rfc9438\" (current: RFC 9438 / Linux v2.3), \"2.0\" (Linux CUBIC v2.0: β \
              819/1024 unless beta is set, initial ssthresh 100, max increment 16, cnt 50 \
              before the first loss, delayed-ACK compensation, no HyStart) or \"2.1\" (Linux \
              2.6.22-2.6.24: as 2.0 with initial ssthresh 0, the max-increment floor only \
              above W_max, no scaling error)",
    },
    ParamInfo {
        name: "v2_scaling_bug",
        kind: ParamKind::Bool,
        default: "true",
        doc: "version \"2.0\" only: the 2.6.18 scaling error in the curve (growth term \
              cube_rtt_scale 32 instead of 410; fixed in 2.6.19; 2.6.16 UNVERIFIED: the first \
              v2.0 text has 410)",
    },
    ParamInfo {
        name: "v2_strict_floor",
        kind: ParamKind::Bool,
        default: "true",
        doc: "version \"2.0\" only: delay_min in plain jiffies where the max-increment floor \
              expects jiffies·8, so the floor is 8× too strict (≈ 2 segments per 100 ms of \
              RTT); in the first v2.0 text and 2.6.18 alike, fixed in 2.6.19",
    },
    ParamInfo {
        name: "initial_ssthresh",
        kind: ParamKind::Int,
        default: "-1",
        doc: "module parameter initial_ssthresh, segments: slow start ends there (0 = keep the \
              connection's; -1 = the version's: 100 for \"2.0\", 0 otherwise; Linux changed \
              the default from 100 to 0 in 2.6.22)",
    },
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let beta = p.float("beta");
    if !(beta > 0.0 && beta < 1.0) {
        return Err(p.invalid("beta", beta.to_string(), "must be in (0, 1)"));
    }
    let c = p.float("c");
    if !(c.is_finite() && c > 0.0) {
        return Err(p.invalid("c", c.to_string(), "must be a positive finite number"));
    }
    let low = p.int("hystart_low_window");
    let low = u32::try_from(low).map_err(|_| {
        p.invalid(
            "hystart_low_window",
            low.to_string(),
            "must be in 0..=2^32-1",
        )
    })?;
    let delta = p.int("hystart_ack_delta_us");
    let delta_ns = u64::try_from(delta)
        .ok()
        .and_then(|us| us.checked_mul(MS / 1000))
        .ok_or_else(|| p.invalid("hystart_ack_delta_us", delta.to_string(), "must be ≥ 0"))?;
    let jiffy = p.int("hystart_jiffy_us");
    let jiffy_ns = u64::try_from(jiffy)
        .ok()
        .filter(|&us| us > 0)
        .and_then(|us| us.checked_mul(MS / 1000))
        .ok_or_else(|| p.invalid("hystart_jiffy_us", jiffy.to_string(), "must be > 0"))?;
    let params = CubicParams {
        hystart: HystartMode::from_name(p.choice("hystart")).unwrap_or_default(),
        hystart_detect: HystartDetect::from_name(p.choice("hystart_detect")).unwrap_or_default(),
        hystart_low_window: low,
        hystart_ack_delta: delta_ns,
        hystart_ack_delay: p.bool("hystart_ack_delay"),
        hystart_clock: HystartClock::from_name(p.choice("hystart_clock"), jiffy_ns)
            .unwrap_or_default(),
        rtt_stamp: p.bool("rtt_stamp"),
        jiffy_clock: if p.bool("jiffy_clock") { jiffy_ns } else { 0 },
        unknown_wmax_cap: p.bool("unknown_wmax_cap"),
        delayed_ack_comp: p.bool("delayed_ack_comp"),
        ai_rule: p.ai_rule(),
        undo_rule: UndoRule::from_name(p.choice("undo_rule")).unwrap_or_default(),
        fast_convergence: p.bool("fast_convergence"),
        tcp_friendliness: p.bool("tcp_friendliness"),
        beta,
        c,
        ssthresh_from: p.ssthresh_from(),
        version: CubicVersion::from_name(p.choice("version")).unwrap_or_default(),
        v2_scaling_bug: p.bool("v2_scaling_bug"),
        v2_strict_floor: p.bool("v2_strict_floor"),
        initial_ssthresh: match p.int("initial_ssthresh") {
            -1 => None,
            v => Some(u32::try_from(v).map_err(|_| {
                p.invalid(
                    "initial_ssthresh",
                    v.to_string(),
                    "must be -1 (the version's), 0 (keep the connection's) or a segment count",
                )
            })?),
        },
    };
    Ok(Box::new(Cubic::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, loss_episode, AckSpacing, Driver, MSS};
    use crate::MS;

    fn cubic(unit: CwndUnit, cwnd_seg: u64, ssthresh: u64, p: CubicParams) -> Cubic {
        Cubic::new(&cc_init(MSS, unit, 0, cwnd_seg, ssthresh), p)
    }

    fn segs(bytes: u64) -> f64 {
        bytes as f64 / f64::from(MSS)
    }

    /// The local `floor` is `f64::floor` bit for bit, and `floor_parts` answers exactly for
    /// `0 < x < 2^52` with that floor and its integer: edge values, then random bit patterns
    /// (every exponent, NaNs and infinities included) and random values near integers.
    #[test]
    fn test_floor_is_libm_floor_bit_for_bit() {
        let same = |x: f64| {
            assert_eq!(
                floor(x).to_bits(),
                x.floor().to_bits(),
                "floor({x:e}) [{:#x}]",
                x.to_bits()
            );
            let want = (x > 0.0 && x < INTEGRAL).then(|| (x.floor().to_bits(), x.floor() as u64));
            assert_eq!(
                floor_parts(x).map(|(f, n)| (f.to_bits(), n)),
                want,
                "floor_parts({x:e})"
            );
        };
        let two52 = 4_503_599_627_370_496.0_f64;
        for x in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            0.999_999_999_999,
            -1e-300,
            1e-300,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            two52,
            -two52,
            two52 - 0.5,
            0.5 - two52,
            two52 * 2.0,
            -two52 * 2.0,
            9.3e18,
            -9.3e18,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ] {
            same(x);
            same(f64::from_bits(x.to_bits().wrapping_add(1)));
            same(f64::from_bits(x.to_bits().wrapping_sub(1)));
        }
        let mut r = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            same(f64::from_bits(r));
            let near = (r % 20_000) as f64 - 10_000.0 + ((r >> 20) % 7) as f64 * 1e-9;
            same(near);
        }
    }

    /// An RTT sample on an ACK that acknowledges nothing (primes `delay_min`, as the ACKs
    /// before a loss would).
    fn prime_rtt(cc: &mut Cubic, now: Nanos, rtt: Nanos) {
        cc.on_ack(&AckEvent {
            now,
            rtt_sample: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            mss: MSS,
            ..Default::default()
        });
    }

    /// A loss at the current window at time `now`, then recovery exit.
    fn loss(cc: &mut Cubic, now: Nanos) {
        loss_episode(cc, now, MSS);
    }

    /// RFC 9438 eq. 1–2 for the reference: W(t) after a reduction from w_max to w_max·β.
    fn w_ref(c: f64, w_max: f64, cwnd_epoch: f64, t: f64) -> f64 {
        let k = ((w_max - cwnd_epoch) / c).cbrt();
        c * (t - k).powi(3) + w_max
    }

    #[test]
    fn test_cbrt_matches_reference() {
        for &x in &[1e-12, 0.001, 0.5, 1.0, 8.0, 27.0, 750.0, 1e6, 3.3e15, 1e300] {
            let r: f64 = cbrt(x);
            assert!(((r * r * r - x) / x).abs() < 1e-14, "{x}: {r}");
        }
        assert_eq!(cbrt(0.0), 0.0);
        assert_eq!(cbrt(-5.0), 0.0);
        assert_eq!(cbrt(f64::NAN), 0.0);
    }

    #[test]
    fn test_congestion_event_reduces_by_beta_and_sets_w_max() {
        // Packets: Linux max(cwnd·717/1024, 2); W_max = cwnd on the first loss.
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, CubicParams::default());
        loss(&mut cc, 0);
        assert_eq!(cc.ssthresh(), 700 * u64::from(MSS)); // ⌊1000·717/1024⌋ = 700
        assert_eq!(cc.cwnd(), 700 * u64::from(MSS));
        assert_eq!(cc.w_max_segments(), 1000.0);
        // Bytes: β·FlightSize.
        let mut cc = cubic(CwndUnit::Bytes, 1000, u64::MAX, CubicParams::default());
        loss(&mut cc, 0);
        assert_eq!(cc.ssthresh(), 700_000);
        assert_eq!(cc.w_max_segments(), 1000.0);
    }

    #[test]
    fn test_fast_convergence_lowers_w_max() {
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for fc in [true, false] {
                let p = CubicParams {
                    fast_convergence: fc,
                    ..CubicParams::default()
                };
                let mut cc = cubic(unit, 1000, u64::MAX, p);
                loss(&mut cc, 0);
                // Second loss below the previous maximum, at 900 segments.
                cc.set_cwnd(900 * u64::from(MSS));
                loss(&mut cc, SEC);
                let expect = match (fc, unit) {
                    // RFC 9438 §4.7: W_max = cwnd·(1+β)/2; Linux integer 900·1741/2048 = 765.
                    (true, CwndUnit::Packets) => 765.0,
                    (true, CwndUnit::Bytes) => 900.0 * 1.7 / 2.0,
                    (false, _) => 900.0,
                };
                assert!(
                    (cc.w_max_segments() - expect).abs() < 1e-9,
                    "{unit:?} fc={fc}: {}",
                    cc.w_max_segments()
                );
            }
        }
    }

    /// Runs congestion avoidance after a loss at `w_max` and compares cwnd at every round end
    /// with RFC 9438's W(t). CUBIC aims each ACK at W(t+RTT), one RTT ahead, so at a round end
    /// cwnd sits on W(t); a controller without that lead would trail by a whole RTT of curve
    /// movement, |W(t) − W(t−RTT)|, and one with a double lead would be ahead by as much. The
    /// tolerance is half of one RTT's movement (the midpoint between right and wrong) plus the
    /// quantisation: in the packets unit two roundings of < 1 segment each (Linux's integer
    /// target, rounded toward the origin, and the whole-segment cwnd); in bytes one segment for
    /// the per-ACK steps.
    ///
    /// Returns K (RFC 9438 eq. 2) and the midpoint of the times at which cwnd first reaches
    /// W_max − 10 and W_max + 10: the curve is odd-symmetric about (K, W_max), so the midpoint
    /// estimates K without depending on the flat plateau.
    fn check_curve(unit: CwndUnit, w_max: u64, rtt: Nanos, rounds: u32) -> (f64, f64) {
        let p = CubicParams {
            tcp_friendliness: false,
            hystart: HystartMode::Off,
            ..Default::default()
        };
        let mut cc = cubic(unit, w_max, w_max * u64::from(MSS), p);
        let mut d = Driver::new(MSS);
        prime_rtt(&mut cc, 0, rtt);
        loss(&mut cc, 0);
        let cwnd_epoch = segs(cc.cwnd());
        let beta = match unit {
            CwndUnit::Packets => 717.0 / 1024.0,
            CwndUnit::Bytes => 0.7,
        };
        assert!((cwnd_epoch - (w_max as f64 * beta).floor()).abs() <= 1.0);
        let w_max = w_max as f64;
        let (mut below, mut above) = (f64::NAN, f64::NAN);
        for _ in 0..rounds {
            let cwnd = segs(d.round(&mut cc, rtt, rtt, 1, AckSpacing::Spread));
            let epoch = cc.epoch_start().expect("epoch runs");
            let t = (d.now - epoch) as f64 / 1e9;
            let rtt_s = rtt as f64 / 1e9;
            let w = w_ref(0.4, w_max, cwnd_epoch, t);
            let quant = if unit == CwndUnit::Packets { 2.0 } else { 1.0 };
            let tol = 0.5 * (w_ref(0.4, w_max, cwnd_epoch, t + rtt_s) - w).abs() + quant;
            assert!(
                (cwnd - w).abs() <= tol,
                "{unit:?} t={t:.2}s cwnd {cwnd} vs W(t) {w:.2} (tol {tol:.2})"
            );
            if below.is_nan() && cwnd >= w_max - 10.0 {
                below = t;
            }
            if above.is_nan() && cwnd >= w_max + 10.0 {
                above = t;
            }
        }
        assert!(!above.is_nan(), "{unit:?}: never reached W_max + 10");
        let k = ((w_max - cwnd_epoch) / 0.4).cbrt();
        (k, (below + above) / 2.0)
    }

    /// Tolerance for the K estimate: each crossing is seen at round granularity (one RTT) and
    /// one segment of rounding moves it by 1/W'(t) = 1/(3C·δ²) with δ = ∛(10/C) at ±10
    /// segments from W_max.
    fn k_tolerance(rtt: Nanos) -> f64 {
        let delta = (10.0f64 / 0.4).cbrt();
        rtt as f64 / 1e9 + 1.0 / (3.0 * 0.4 * delta * delta)
    }

    #[test]
    fn test_avoidance_follows_cubic_curve() {
        // W_max 1000, RTT 100 ms: K = ∛(300/0.4) ≈ 9.09 s; 15 s covers concave, plateau and
        // convex regions.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let (k, mid) = check_curve(unit, 1000, 100 * MS, 150);
            assert!(
                (mid - k).abs() <= k_tolerance(100 * MS),
                "{unit:?}: K {k:.3} vs {mid:.3}"
            );
        }
    }

    #[test]
    fn test_avoidance_follows_cubic_curve_long_rtt_small_window() {
        // W_max 200, RTT 300 ms: K = ∛(60/0.4) ≈ 5.3 s, 40 rounds = 12 s.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let (k, mid) = check_curve(unit, 200, 300 * MS, 40);
            assert!(
                (mid - k).abs() <= k_tolerance(300 * MS),
                "{unit:?}: K {k:.3} vs {mid:.3}"
            );
        }
    }

    /// Growth per RTT over `rounds` RTTs after a loss at `w_max`, RTT `rtt`.
    fn run_after_loss(
        unit: CwndUnit,
        friendly: bool,
        w_max: u64,
        rtt: Nanos,
        rounds: u32,
    ) -> Vec<f64> {
        let p = CubicParams {
            tcp_friendliness: friendly,
            hystart: HystartMode::Off,
            ..Default::default()
        };
        let mut cc = cubic(unit, w_max, w_max * u64::from(MSS), p);
        let mut d = Driver::new(MSS);
        prime_rtt(&mut cc, 0, rtt);
        loss(&mut cc, 0);
        (0..rounds)
            .map(|_| segs(d.round(&mut cc, rtt, rtt, 1, AckSpacing::Spread)))
            .collect()
    }

    #[test]
    fn test_reno_friendly_region_dominates_at_small_window_short_rtt() {
        // W_max 20, RTT 2 ms: K = ∛(6/0.4) ≈ 2.47 s ≈ 1233 RTTs, so over the 200 RTTs (0.4 s)
        // observed the cubic curve stays between 14 and 17 segments, while Reno would grow
        // α = 3(1−β)/(1+β) ≈ 0.53 segment per RTT (RFC 9438 §4.3): the Reno-friendly region
        // must set the pace.
        let rtt = 2 * MS;
        let alpha = 3.0 * 0.3 / 1.7;
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let off = run_after_loss(unit, false, 20, rtt, 200);
            let on = run_after_loss(unit, true, 20, rtt, 200);
            let w_cubic_end = w_ref(0.4, 20.0, 14.0, 0.4);
            assert!(
                off[199] <= w_cubic_end + 1.0,
                "{unit:?}: {} vs {w_cubic_end}",
                off[199]
            );
            assert!(
                on[199] > off[199] + 50.0,
                "{unit:?}: {} vs {}",
                on[199],
                off[199]
            );
            match unit {
                CwndUnit::Packets => {
                    // Linux: tcp_cwnd += 1 per ⌊15·cwnd/8⌋ ACK units and a round brings cwnd
                    // units, so the estimate grows between 8/15 and 8/(15 − 8/cwnd) per RTT
                    // (15 = beta_scale for β' = 717; 8/15 ≈ α), and cwnd trails it by at most
                    // one segment at either end of the measured span.
                    let slope = (on[199] - on[49]) / 150.0;
                    let hi = 8.0 / (15.0 - 8.0 / on[49]) + 2.0 / 150.0;
                    let lo = 8.0 / 15.0 - 2.0 / 150.0;
                    assert!(
                        (lo..=hi).contains(&slope),
                        "packets slope {slope} not in [{lo}, {hi}]"
                    );
                }
                CwndUnit::Bytes => {
                    // RFC 9438 §4.3: α until W_est reaches cwnd_prior = 20, after
                    // (20 − 14)/α ≈ 11.3 RTTs, then 1 per RTT. A round acknowledges ⌊cwnd⌋
                    // whole segments while cwnd grows within it, which loses at most
                    // 2/(cwnd + 1) of the per-RTT growth.
                    let early = (on[9] - 14.0) / 10.0;
                    assert!(
                        (alpha * (1.0 - 2.0 / 15.0)..=alpha).contains(&early),
                        "early {early}"
                    );
                    let crossing = on.iter().position(|&w| w >= 20.0).unwrap() + 1;
                    let ideal = 6.0 / alpha;
                    assert!(
                        (ideal.floor() as usize..=(ideal / (1.0 - 2.0 / 15.0)).ceil() as usize)
                            .contains(&crossing),
                        "W_est reached cwnd_prior after {crossing} RTTs, ideal {ideal:.1}"
                    );
                    let late = (on[199] - on[99]) / 100.0;
                    assert!(
                        (1.0 - 2.0 / (on[99] + 1.0)..=1.0).contains(&late),
                        "late {late}"
                    );
                }
            }
        }
    }

    #[test]
    fn test_reno_friendly_region_inactive_at_large_window() {
        // At W_max 1000 and RTT 100 ms the cubic curve grows ~10 segments per RTT just after
        // the loss, far above Reno's 0.53, so the friendliness switch must not matter.
        let off = run_after_loss(CwndUnit::Packets, false, 1000, 100 * MS, 100);
        let on = run_after_loss(CwndUnit::Packets, true, 1000, 100 * MS, 100);
        // Linux only caps cnt when tcp_cwnd > cwnd, which never happens here.
        assert_eq!(off, on);
        // RFC 9438: at the epoch's first ACK (t = 0) W_cubic(0) = cwnd_epoch is just below
        // W_est, so that one ACK takes W_est (α/cwnd) instead of the cubic step
        // (W(RTT) − 700)/700 ≈ 0.014 segment; afterwards W_cubic(t) > W_est. The runs may
        // differ by at most that one step.
        let off = run_after_loss(CwndUnit::Bytes, false, 1000, 100 * MS, 100);
        let on = run_after_loss(CwndUnit::Bytes, true, 1000, 100 * MS, 100);
        let step = (w_ref(0.4, 1000.0, 700.0, 0.1) - 700.0) / 700.0;
        for (a, b) in off.iter().zip(&on) {
            assert!((a - b).abs() <= step, "{a} vs {b} (step {step})");
        }
    }

    #[test]
    fn test_avoidance_growth_capped_at_one_and_a_half_per_rtt() {
        // RFC 9438 §4.2: target ≤ 1.5·cwnd, so cwnd grows by at most half a segment per
        // segment acknowledged; Linux: cnt ≥ 2 ("cwnd grows at 1.5x per RTT"). Put the window
        // far below the curve (the stack set cwnd and ssthresh to 100 segments near K, where
        // W(t) ≈ 1000) and check each round against W' = W + W/2.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = cubic(
                unit,
                1000,
                1_000_000,
                CubicParams {
                    hystart: HystartMode::Off,
                    ..Default::default()
                },
            );
            let mut d = Driver::new(MSS);
            prime_rtt(&mut cc, 0, 100 * MS);
            loss(&mut cc, 0);
            for _ in 0..90 {
                d.round(&mut cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread);
            }
            cc.set_ssthresh(100_000);
            cc.set_cwnd(100_000);
            for r in 0..4 {
                let w = segs(cc.cwnd());
                let next = segs(d.round(&mut cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread));
                // ⌊w⌋ ACKs of one segment each, +1/2 segment per ACK; the packets unit rounds
                // to whole segments with the odd half carried in snd_cwnd_cnt (±1).
                let expect = w + 0.5 * w.floor();
                let tol = if unit == CwndUnit::Packets { 1.0 } else { 0.01 };
                assert!(
                    (next - expect).abs() <= tol,
                    "{unit:?} round {r}: {w} -> {next}, want {expect}"
                );
            }
        }
    }

    #[test]
    fn test_slow_start_without_wmax_caps_cnt_at_twenty() {
        // Entering CA without a loss (W_max unknown): Linux grows at least 1/20 per ACK unit,
        // i.e. ≥ 5 % per RTT (cnt ≤ 20), while the curve from K = 0 is still flat.
        let p = CubicParams {
            hystart: HystartMode::Off,
            tcp_friendliness: false,
            ..Default::default()
        };
        let mut cc = cubic(CwndUnit::Packets, 100, 100 * u64::from(MSS), p);
        let mut d = Driver::new(MSS);
        let w = segs(d.round(&mut cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread));
        assert_eq!(w, 105.0);
        // 2.6.26–2.6.38 had no cap: the curve from K = 0 one RTT ahead adds C·0.1³ = 0.0004
        // segments, cnt = 100·cwnd, and a round adds nothing.
        let p = CubicParams {
            unknown_wmax_cap: false,
            ..p
        };
        let mut cc = cubic(CwndUnit::Packets, 100, 100 * u64::from(MSS), p);
        let mut d = Driver::new(MSS);
        let w = segs(d.round(&mut cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread));
        assert_eq!(w, 100.0);
    }

    /// One ACK of one segment at `now` in congestion avoidance.
    fn ack1(cc: &mut Cubic, now: Nanos) {
        cc.on_ack(&AckEvent {
            now,
            bytes_acked: u64::from(MSS),
            packets_acked: 1,
            mss: MSS,
            ..Default::default()
        });
    }

    /// A packets-unit CUBIC at 100 segments in congestion avoidance, after its first ACK at
    /// `first` (which starts the epoch and computes `cnt`).
    fn jiffy_cc(p: CubicParams, first: Nanos) -> Cubic {
        let mut cc = cubic(CwndUnit::Packets, 100, 50, p);
        cc.delay_min = 20 * MS;
        ack1(&mut cc, first);
        cc
    }

    fn jiffy_params(ai_rule: AiRule) -> CubicParams {
        CubicParams {
            hystart: HystartMode::Off,
            tcp_friendliness: false,
            jiffy_clock: 4 * MS,
            ai_rule,
            ..Default::default()
        }
    }

    #[test]
    fn test_jiffy_clock_holds_cnt_while_cwnd_unchanged_within_hz_over_32() {
        // HZ 250: HZ/32 = 7 jiffies. cnt computed at the first ACK (jiffy 0) is kept while
        // cwnd stays the same, up to and including jiffy 7, and recomputed at jiffy 8. The
        // hold is not shortened to delay_min (20 ms here, 5 jiffies): the 2024 proposal
        // "tcp_cubic: fix to run bictcp_update() at least once per RTT" is not in mainline.
        let mut cc = jiffy_cc(jiffy_params(AiRule::Linux4), 0);
        assert_eq!(cc.delay_min, 20 * MS);
        let cnt0 = cc.cnt();
        assert_eq!(cnt0, 20, "W_max unknown: cnt capped at 20");
        // Forget W_max's cap effect: force a different cnt to show it is held, not recomputed.
        cc.cnt = 77;
        for j in 1..=7u64 {
            ack1(&mut cc, j * 4 * MS + MS);
            assert_eq!(cc.window().cwnd_segments(), 100);
            assert_eq!(cc.cnt(), 77, "held at jiffy {j}");
        }
        ack1(&mut cc, 8 * 4 * MS + MS);
        assert_eq!(cc.cnt(), 20, "recomputed after HZ/32");
        // Exact time (jiffy_clock 0): recomputed on every ACK.
        let p = CubicParams {
            jiffy_clock: 0,
            ..jiffy_params(AiRule::Linux4)
        };
        let mut cc = jiffy_cc(p, 0);
        cc.cnt = 77;
        ack1(&mut cc, 4 * MS + MS);
        assert_eq!(cc.cnt(), 20);
    }

    #[test]
    fn test_jiffy_clock_recomputes_once_cwnd_changes() {
        // A cnt of 1000 keeps cwnd at 100 over these ACKs: held; once cwnd is changed the next
        // ACK (in a later jiffy) recomputes cnt at once.
        let mut cc = jiffy_cc(jiffy_params(AiRule::Linux4), 0);
        cc.cnt = 1000;
        let mut now = MS;
        // cwnd unchanged: held (1000 ACK units per segment, nothing grows).
        for _ in 0..5 {
            ack1(&mut cc, now);
            now += MS;
        }
        assert_eq!(cc.cnt(), 1000);
        cc.win.set_cwnd(101 * u64::from(MSS));
        ack1(&mut cc, now);
        assert_eq!(cc.cnt(), 20, "cwnd changed: recomputed");
        // Linux ≥ 4.0: a second change in the same jiffy keeps the curve's cnt (rule 2).
        cc.cnt = 55;
        cc.win.set_cwnd(102 * u64::from(MSS));
        ack1(&mut cc, now);
        assert_eq!(cc.cnt(), 55, "same jiffy: curve not evaluated again");
        // 2.6.x (ai_rule linux-2.6) had no once-per-jiffy test: recomputed.
        let mut cc = jiffy_cc(jiffy_params(AiRule::Linux26), 0);
        cc.win.set_cwnd(101 * u64::from(MSS));
        cc.cnt = 55;
        ack1(&mut cc, MS);
        assert_eq!(cc.cnt(), 20);
    }

    #[test]
    fn test_jiffy_clock_quantises_curve_time() {
        let mut cc = jiffy_cc(jiffy_params(AiRule::Linux4), 4 * MS + 3 * MS);
        // The epoch starts at the start of its jiffy (jiffy 1).
        assert_eq!(cc.epoch_start(), Some(4 * MS));
        // t = whole jiffies since the epoch + delay_min rounded up to jiffies, in 1/1024 s.
        cc.delay_min = 10 * MS + 1; // 3 jiffies
        let t = cc.curve_time(4 * MS + 11 * MS, 4 * MS); // 2 whole jiffies later (jiffy 3)
        let want = ((5u64 << 10) * 4 / 1000) as f64 / 1024.0; // (2 + 3) jiffies of 4 ms
        assert_eq!(t, want);
        assert!(t < 0.020 && t > 0.019, "{t}");
        // Exact clock: now − epoch + delay_min.
        cc.p.jiffy_clock = 0;
        assert_eq!(cc.curve_time(15 * MS, 4 * MS), (21 * MS + 1) as f64 / 1e9);
    }

    #[test]
    fn test_jiffy_clock_v2_holds_cnt() {
        let p = CubicParams {
            version: CubicVersion::V2_1,
            jiffy_clock: 4 * MS,
            ..Default::default()
        };
        let mut cc = jiffy_cc(p, 0);
        assert_eq!(
            cc.cnt(),
            25,
            "cnt 50 before a loss, halved by delayed_ack 2"
        );
        cc.cnt = 77;
        ack1(&mut cc, 28 * MS + MS); // jiffy 7
        assert_eq!(cc.cnt(), 77);
        ack1(&mut cc, 32 * MS); // jiffy 8
        assert_eq!(cc.cnt(), 25);
    }

    #[test]
    fn test_rto_resets_state_and_collapses_window() {
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = cubic(unit, 100, u64::MAX, CubicParams::default());
            cc.on_rto(&RtoEvent {
                in_flight: 100_000,
                backoff_count: 1,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.cwnd(), u64::from(MSS));
            assert_eq!(cc.ssthresh(), 70_000);
            assert_eq!(cc.w_max_segments(), 0.0);
            cc.on_rto(&RtoEvent {
                in_flight: 1_000,
                backoff_count: 2,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.ssthresh(), 70_000);
        }
    }

    #[test]
    fn test_xnu_timeout_takes_w_max_and_ssthresh_from_min_of_windows_first_timeout_only() {
        // XNU (xnu-2422 on): after_timeout runs when t_rxtshift == 1; outside a fast recovery
        // tcp_cubic_pre_fr takes win = min(snd_cwnd, snd_wnd) for W_lastmax and ssthresh =
        // win·0.8 in whole segments; inside one the recovery's ssthresh and W_lastmax stay.
        let p = CubicParams {
            beta: 0.8,
            ssthresh_from: SsthreshBasis::Xnu,
            ..Default::default()
        };
        let mss = u64::from(MSS);
        let rto = |backoff_count, in_recovery, in_flight| RtoEvent {
            in_flight,
            backoff_count,
            mss: MSS,
            peer_window: 61 * mss + mss / 2,
            in_recovery,
            ..Default::default()
        };
        let mut cc = cubic(CwndUnit::Bytes, 100, u64::MAX, p);
        cc.on_rto(&rto(1, false, 100 * mss));
        assert_eq!(cc.cwnd(), mss);
        assert_eq!(
            cc.ssthresh(),
            49 * mss,
            "61.5 · 0.8 = 49.2 segments, truncated"
        );
        assert_eq!(cc.w_max_segments(), 61.5);
        cc.on_rto(&rto(2, false, mss));
        assert_eq!(
            (cc.ssthresh(), cc.w_max_segments()),
            (49 * mss, 61.5),
            "held"
        );
        // A timeout during the fast recovery that set ssthresh from 100 segments keeps it.
        let mut cc = cubic(CwndUnit::Bytes, 100, u64::MAX, p);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 100 * mss,
            mss: MSS,
            peer_window: 200 * mss,
            ..Default::default()
        });
        assert_eq!((cc.ssthresh(), cc.w_max_segments()), (80 * mss, 100.0));
        cc.on_rto(&rto(1, true, 100 * mss));
        assert_eq!(cc.cwnd(), mss);
        assert_eq!((cc.ssthresh(), cc.w_max_segments()), (80 * mss, 100.0));
    }

    #[test]
    fn test_idle_shifts_epoch_start() {
        let p = CubicParams {
            hystart: HystartMode::Off,
            ..Default::default()
        };
        let mut cc = cubic(CwndUnit::Packets, 100, u64::MAX, p);
        let mut d = Driver::new(MSS);
        loss(&mut cc, 0);
        d.round(&mut cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread);
        let epoch = cc.epoch_start().unwrap();
        cc.on_packet_sent(&SentEvent {
            now: d.now,
            bytes: MSS,
            in_flight: 50_000,
            ..Default::default()
        });
        // 5 s idle, then the first packet with nothing in flight.
        let t = d.now + 5 * SEC;
        cc.on_packet_sent(&SentEvent {
            now: t,
            bytes: MSS,
            in_flight: u64::from(MSS),
            ..Default::default()
        });
        assert_eq!(cc.epoch_start(), Some(epoch + 5 * SEC));
        // Not past now.
        let mut cc2 = cc.clone();
        cc2.last_send = Some(0);
        cc2.on_packet_sent(&SentEvent {
            now: t + SEC,
            bytes: MSS,
            in_flight: 0,
            ..Default::default()
        });
        assert_eq!(cc2.epoch_start(), Some(t + SEC));
    }

    /// Slow start from 10 segments at RTT `base` for `rounds`, with RTT `late` from round
    /// `from`, ACKs `gap` apart. Returns (round at which slow start ended, cwnd then).
    /// CUBIC parameters with the given HyStart mode and detectors.
    fn hy(mode: HystartMode, detect: HystartDetect) -> CubicParams {
        CubicParams {
            hystart: mode,
            hystart_detect: detect,
            ..Default::default()
        }
    }

    fn slow_start_exit(
        p: CubicParams,
        base: Nanos,
        late: Nanos,
        from: u32,
        gap: Nanos,
        rounds: u32,
    ) -> Option<(u32, f64)> {
        let mut cc = Cubic::new(&cc_init(MSS, CwndUnit::Packets, u32::MAX, 10, u64::MAX), p);
        let mut d = Driver::new(MSS);
        for r in 0..rounds {
            let rtt = if r >= from { late } else { base };
            d.round(&mut cc, rtt, rtt, 1, AckSpacing::Gap(gap));
            if !cc.in_slow_start() {
                return Some((r, segs(cc.ssthresh())));
            }
        }
        None
    }

    #[test]
    fn test_hystart_linux_exits_on_delay_increase_above_threshold() {
        // delay_min 100 ms → threshold 12.5 ms. RTT +20 ms from round 3 (window 80 ≥ 16):
        // exit in that round at its ninth sample (the first eight only fill the round minimum),
        // ssthresh = cwnd then: 80 + the 8 ACKs before it.
        let got = slow_start_exit(
            hy(HystartMode::Linux, HystartDetect::Both),
            100 * MS,
            120 * MS,
            3,
            50_000,
            12,
        );
        let (round, ssthresh) = got.expect("HyStart exits");
        assert_eq!(round, 3);
        assert_eq!(ssthresh, 88.0);
    }

    #[test]
    fn test_hystart_linux_no_exit_below_threshold() {
        // +12 ms < 12.5 ms: slow start continues (ACK train spans < 50 ms up to 640 segments).
        let got = slow_start_exit(
            hy(HystartMode::Linux, HystartDetect::Both),
            100 * MS,
            112 * MS,
            3,
            50_000,
            7,
        );
        assert_eq!(got, None);
        // And HyStart off never exits early even with a large increase.
        let got = slow_start_exit(
            hy(HystartMode::Off, HystartDetect::Both),
            100 * MS,
            200 * MS,
            3,
            50_000,
            7,
        );
        assert_eq!(got, None);
    }

    #[test]
    fn test_hystart_linux_ack_train_exits_near_half_delay_min() {
        // ACKs 0.2 ms apart, delay_min 100 ms, first possible in the 320-segment round (round
        // 5). Linux ≥ 5.7: the train must outlast (delay_min + ack_delay)/2 with ack_delay =
        // min(1 ms, 4·64 KiB/pacing rate); the pacing rate 2·320·1000 B/100 ms = 6.4 MB/s
        // gives 41 ms, capped at 1 ms: 50.5 ms, passed by the ACK 50.6 ms after the round's
        // first (index 253): ssthresh = 320 + 253 = 573 segments.
        let got = slow_start_exit(
            hy(HystartMode::Linux, HystartDetect::Both),
            100 * MS,
            100 * MS,
            0,
            200_000,
            10,
        );
        assert_eq!(got, Some((5, 573.0)));
        // The 2.6.29-5.6 rule, delay_min/2 = 50 ms: the ACK at 50.2 ms (index 251).
        let p = CubicParams {
            hystart_ack_delay: false,
            ..Default::default()
        };
        assert_eq!(
            slow_start_exit(p, 100 * MS, 100 * MS, 0, 200_000, 10),
            Some((5, 571.0))
        );
        // The delay detector alone ignores the train.
        let got = slow_start_exit(
            hy(HystartMode::Linux, HystartDetect::Delay),
            100 * MS,
            100 * MS,
            0,
            200_000,
            7,
        );
        assert_eq!(got, None);
    }

    #[test]
    fn test_hystartpp_delay_increase_enters_css_then_avoidance() {
        // RFC 9406: RTT +20 ms (≥ 12.5 ms) from round 3 enters CSS; growth is a quarter of
        // slow start (×1.25 per round) for CSS_ROUNDS = 5 rounds, then ssthresh = cwnd.
        let p = CubicParams {
            hystart: HystartMode::Rfc9406,
            ..Default::default()
        };
        let mut cc = Cubic::new(&cc_init(MSS, CwndUnit::Packets, u32::MAX, 10, u64::MAX), p);
        let mut d = Driver::new(MSS);
        let mut w = Vec::new();
        for r in 0..12 {
            let rtt = if r >= 3 { 120 * MS } else { 100 * MS };
            w.push(segs(d.round(&mut cc, rtt, rtt, 1, AckSpacing::Gap(50_000))));
        }
        assert_eq!(&w[..3], &[20.0, 40.0, 80.0]);
        // Round 3: the 8th sample enters CSS after its own ACK grew in slow start (RFC order):
        // 80 + 8 + 72/4 = 106.
        assert_eq!(w[3], 106.0);
        // Rounds 4–6: ×1.25 (quarter growth).
        for r in 4..7 {
            assert!((w[r] / w[r - 1] - 1.25).abs() < 0.01, "round {r}: {:?}", w);
        }
        assert!(!cc.hystart_pp().active());
        assert!(!cc.in_slow_start());
        assert_eq!(cc.hystart_pp().phase(), crate::hystart::HyStartPhase::Done);
        // In CA afterwards: growth far below ×1.25.
        assert!(w[11] / w[10] < 1.1, "{:?}", w);
    }

    #[test]
    fn test_hystartpp_no_exit_below_threshold() {
        // +10 ms < 12.5 ms: neither CSS nor an exit.
        let got = slow_start_exit(
            hy(HystartMode::Rfc9406, HystartDetect::Both),
            100 * MS,
            110 * MS,
            3,
            50_000,
            8,
        );
        assert_eq!(got, None);
        let p = CubicParams {
            hystart: HystartMode::Rfc9406,
            ..Default::default()
        };
        let mut cc = cubic(CwndUnit::Packets, 10, u64::MAX, p);
        let mut d = Driver::new(MSS);
        for r in 0..8 {
            let rtt = if r >= 3 { 110 * MS } else { 100 * MS };
            d.round(&mut cc, rtt, rtt, 1, AckSpacing::Gap(50_000));
        }
        assert_eq!(
            cc.hystart_pp().phase(),
            crate::hystart::HyStartPhase::SlowStart
        );
    }

    #[test]
    fn test_rtt_samples_ignored_in_first_second_of_epoch() {
        // Linux cubictcp_acked: "Discard delay samples right after fast recovery" — samples in
        // the first second (HZ) after the epoch start do not update delay_min.
        let mut cc = cubic(CwndUnit::Packets, 100, u64::MAX, CubicParams::default());
        let mut d = Driver::new(MSS);
        prime_rtt(&mut cc, 0, 100 * MS);
        loss(&mut cc, 0);
        // The ACK that starts the epoch still has epoch_start unset when its sample is taken
        // (pkts_acked runs before cong_avoid), so its sample counts: keep it at 100 ms.
        d.round(&mut cc, 100 * MS, 100 * MS, 1, AckSpacing::Spread);
        let epoch = cc.epoch_start().unwrap();
        while d.now < epoch + SEC - 80 * MS {
            d.round(&mut cc, 80 * MS, 80 * MS, 1, AckSpacing::Spread);
        }
        assert_eq!(cc.delay_min(), 100 * MS);
        d.round(&mut cc, 80 * MS, 80 * MS, 1, AckSpacing::Spread);
        d.round(&mut cc, 80 * MS, 80 * MS, 1, AckSpacing::Spread);
        assert_eq!(cc.delay_min(), 80 * MS);
    }

    #[test]
    fn test_ack_in_recovery_does_not_grow() {
        let mut cc = cubic(CwndUnit::Bytes, 10, u64::MAX, CubicParams::default());
        let ev = AckEvent {
            bytes_acked: 1000,
            packets_acked: 1,
            packets_delivered: 1,
            mss: MSS,
            in_recovery: true,
            ..Default::default()
        };
        cc.on_ack(&ev);
        assert_eq!(cc.cwnd(), 10_000);
    }

    #[test]
    fn test_undo_linux26_restores_only_reduced_w_max() {
        // Linux 2.6.16–3.2: after a loss at 900 below W_max 1000, fast convergence leaves
        // last_max_cwnd = ⌊900·1741/2048⌋ = 765 and the undo gives max(cwnd, 765) = 765 (not 900),
        // W_max stays 765; ssthresh is the stack's. After an RTO (W_max cleared) the undo
        // leaves the window where it is.
        let p = CubicParams {
            undo_rule: UndoRule::WMax,
            ..Default::default()
        };
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, p);
        loss(&mut cc, 0);
        cc.set_cwnd(900_000);
        loss(&mut cc, SEC);
        assert_eq!(cc.cwnd(), 630_000);
        cc.on_undo(2 * SEC, 900_000, 700_000);
        assert_eq!(cc.cwnd(), 765_000);
        assert_eq!(cc.w_max_segments(), 765.0);
        assert_eq!(cc.ssthresh(), 700_000);
        // Without fast convergence's scaling (a loss above W_max) the window comes back whole.
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, p);
        loss(&mut cc, 0);
        cc.on_undo(SEC, 1_000_000, 1_000_000);
        assert_eq!(cc.cwnd(), 1_000_000);
        // RTO: cwnd 1, W_max 0; the undo restores ssthresh only, cwnd stays 3 after growth.
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, p);
        cc.on_rto(&RtoEvent {
            in_flight: 1_000_000,
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        });
        cc.set_cwnd(3000);
        cc.on_undo(SEC, 1_000_000, 1_000_000);
        assert_eq!(cc.cwnd(), 3000);
        assert_eq!(cc.ssthresh(), 1_000_000);
    }

    #[test]
    fn test_undo_restores_w_max() {
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, CubicParams::default());
        loss(&mut cc, 0);
        cc.set_cwnd(900_000);
        loss(&mut cc, SEC);
        assert_eq!(cc.w_max_segments(), 765.0);
        cc.on_undo(2 * SEC, 900_000, 700_000);
        assert_eq!(cc.w_max_segments(), 1000.0);
        assert_eq!(cc.cwnd(), 900_000);
        assert_eq!(cc.ssthresh(), 700_000);
    }

    // -----------------------------------------------------------------------------------------
    // Version 2.0 (Linux CUBIC v2.0, stacks-and-ccas.md A.2).

    /// v2.0 with both scaling errors (2.6.18) or neither (2.6.19–2.6.21).
    fn v2(bug: bool) -> CubicParams {
        v2_errors(bug, bug)
    }

    /// v2.0 with the curve error (`v2_scaling_bug`) and the strict floor (`v2_strict_floor`)
    /// set separately: (false, true) is the first v2.0 text's arithmetic.
    fn v2_errors(curve: bool, floor: bool) -> CubicParams {
        CubicParams {
            version: CubicVersion::V2_0,
            v2_scaling_bug: curve,
            v2_strict_floor: floor,
            initial_ssthresh: None,
            ..Default::default()
        }
    }

    #[test]
    fn test_v2_congestion_event_beta_819_versus_rfc9438_717() {
        // v2.0: ssthresh = ⌊cwnd·819/1024⌋ (β ≈ 0.8); current: ⌊cwnd·717/1024⌋ (β ≈ 0.7).
        // Fast convergence with β' 819: W_max = ⌊cwnd·1843/2048⌋.
        for (p, keep, fc) in [
            (v2(true), 799_000, 809.0),
            (CubicParams::default(), 700_000, 765.0),
        ] {
            let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, p);
            loss(&mut cc, 0);
            assert_eq!(cc.ssthresh(), keep, "{:?}", p.version);
            assert_eq!(cc.w_max_segments(), 1000.0);
            cc.set_cwnd(900_000);
            loss(&mut cc, SEC);
            assert_eq!(cc.w_max_segments(), fc, "{:?}", p.version);
        }
        // Bytes: β·FlightSize with β = 819/1024.
        let mut cc = cubic(CwndUnit::Bytes, 1000, u64::MAX, v2(true));
        loss(&mut cc, 0);
        assert_eq!(cc.ssthresh(), (1_000_000.0 * 819.0 / 1024.0) as u64);
        // An explicit beta still wins.
        let p = CubicParams {
            beta: 0.5,
            ..v2(true)
        };
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, p);
        loss(&mut cc, 0);
        assert_eq!(cc.ssthresh(), 500_000);
    }

    #[test]
    fn test_v2_initial_ssthresh_100_and_no_hystart() {
        let cc = cubic(CwndUnit::Packets, 10, u64::MAX, v2(true));
        assert_eq!(cc.ssthresh(), 100_000);
        assert_eq!(cc.params().hystart, HystartMode::Off);
        let cc = cubic(CwndUnit::Packets, 10, u64::MAX, CubicParams::default());
        assert_eq!(cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn test_v2_avoidance_before_first_loss_cnt_50() {
        // v2.0 sets cnt = 50 until the first loss: with delayed ACKs the compensation (EWMA 2
        // packets per ACK) halves it and the ACK count halves too: +W/50 per RTT, 100 → 102.
        // With an ACK per segment the integer EWMA sits at 31/16 (see bic.rs): cnt =
        // ⌊50·16/31⌋ = 25, 100 ACKs → +4 (bytes: 100·31/800 = 3.875). The current version
        // grows ≥ 5 %/RTT there (cnt ≤ 20, test_slow_start_without_wmax_caps_cnt_at_twenty).
        for (unit, per_ack, want) in [
            (CwndUnit::Packets, 2, 102.0),
            (CwndUnit::Bytes, 2, 102.0),
            (CwndUnit::Packets, 1, 104.0),
            (CwndUnit::Bytes, 1, 103.875),
        ] {
            let mut cc = cubic(unit, 100, u64::MAX, v2(true));
            let mut d = Driver::new(MSS);
            // One round to settle the EWMA (31/16 after the first ACK), then measure.
            d.round(&mut cc, 100 * MS, 100 * MS, per_ack, AckSpacing::Spread);
            cc.set_cwnd(100_000);
            let w = segs(d.round(&mut cc, 100 * MS, 100 * MS, per_ack, AckSpacing::Spread));
            assert!((w - want).abs() < 0.01, "{unit:?} per_ack={per_ack}: {w}");
        }
    }

    /// v2.0 after a loss at 1000 segments, RTT 100 ms, an ACK per two segments (EWMA exactly
    /// 2): cwnd at each of `rounds` round ends and the time since the epoch started.
    fn v2_after_loss(unit: CwndUnit, bug: bool, rounds: u32) -> Vec<(f64, f64)> {
        after_loss(unit, v2(bug), 1000, rounds)
    }

    /// As [`v2_after_loss`] for any parameters and a loss at `w0` segments.
    fn after_loss(unit: CwndUnit, p: CubicParams, w0: u64, rounds: u32) -> Vec<(f64, f64)> {
        let mut cc = cubic(unit, w0, u64::MAX, p);
        let mut d = Driver::new(MSS);
        prime_rtt(&mut cc, 0, 100 * MS);
        loss(&mut cc, 0);
        (0..rounds)
            .map(|_| {
                let w = segs(d.round(&mut cc, 100 * MS, 100 * MS, 2, AckSpacing::Spread));
                let t = (d.now - cc.epoch_start().unwrap()) as f64 / 1e9;
                (t, w)
            })
            .collect()
    }

    #[test]
    fn test_v2_avoidance_follows_curve_without_scaling_bug() {
        // Fixed v2.0 (2.6.19+): the cubic curve with C = 0.4 from W_max = 1000 and
        // cwnd_epoch = 799 (β 819/1024), K = ∛(201/0.4) ≈ 7.95 s; tolerance as check_curve:
        // half an RTT of curve movement plus two segments of integer rounding.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            for (t, w) in v2_after_loss(unit, false, 30) {
                let want = w_ref(0.4, 1000.0, 799.0, t);
                let tol = 0.5 * (w_ref(0.4, 1000.0, 799.0, t + 0.1) - want).abs() + 2.0;
                assert!(
                    (w - want).abs() <= tol,
                    "{unit:?} t={t:.2}: {w} vs W(t) {want:.1}"
                );
            }
        }
    }

    #[test]
    fn test_v2_scaling_bug_grows_two_segments_per_100ms() {
        // 2.6.18: the curve's growth term is 32/410 of C, so the target sits ~15 segments
        // below W_max from the start (far above cwnd), and the max-increment floor, 8× too
        // strict, rules: cnt ≥ cwnd·0.1 s·8/(16·delay_min) → 2 segments per RTT at 100 ms
        // (20 segments per second) instead of the curve's 7–8 per RTT after the loss.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let bug = v2_after_loss(unit, true, 30);
            let fixed = v2_after_loss(unit, false, 30);
            let per_rtt = (bug[29].1 - bug[0].1) / 29.0;
            assert!((per_rtt - 2.0).abs() <= 0.1, "{unit:?}: {per_rtt} per RTT");
            assert!(
                fixed[29].1 > bug[29].1 + 80.0,
                "{unit:?}: {fixed:?} vs {bug:?}"
            );
        }
    }

    #[test]
    fn test_v2_strict_floor_alone_caps_the_first_texts_curve_at_two_per_100ms() {
        // The first v2.0 text (df3271f3361): curve term 410 (no curve error) but delay_min in
        // plain jiffies against the floor's ×8, so cnt ≥ cwnd·0.1 s·8/(16·delay_min): after a
        // loss at 1000 segments (RTT 100 ms, K ≈ 7.95 s) the curve asks 7–8 segments per RTT,
        // the floor allows 2, as with both errors.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let first = after_loss(unit, v2_errors(false, true), 1000, 30);
            let per_rtt = (first[29].1 - first[0].1) / 29.0;
            assert!((per_rtt - 2.0).abs() <= 0.1, "{unit:?}: {per_rtt} per RTT");
        }
    }

    #[test]
    fn test_v2_curve_error_alone_jumps_near_w_max_then_floor_16_per_100ms() {
        // cube_rtt_scale 32 with the floor in its fixed unit: the target starts at W_max −
        // (32/410)·0.4·K³ ≈ 1000 − 15.7 (K ≈ 7.95 s), far above cwnd 799, so the floor rules:
        // 16 segments per 100 ms of RTT, until cwnd nears that target (13 rounds: 799 + 13·16
        // = 1007 > 984), after which the flat curve holds it below W_max.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let w = after_loss(unit, v2_errors(true, false), 1000, 30);
            let per_rtt = (w[9].1 - w[0].1) / 9.0;
            assert!((per_rtt - 16.0).abs() <= 0.5, "{unit:?}: {per_rtt} per RTT");
            for &(t, cwnd) in &w[15..] {
                let target = 1000.0 - 0.4 * 32.0 / 410.0 * (7.95 - t).powi(3);
                assert!(
                    cwnd <= target + 2.0 && cwnd >= target - 16.0,
                    "{unit:?} t={t:.2}: {cwnd} vs {target:.1}"
                );
            }
        }
    }

    #[test]
    fn test_v2_first_text_follows_the_curve_where_it_is_below_the_strict_floor() {
        // Loss at 100 segments (RTT 100 ms): W_max 100, cwnd_epoch ⌊100·819/1024⌋ = 79,
        // K = ∛(21/0.4) ≈ 3.74 s; the curve's slope 3·C·(K − t)² ≤ 16.8 segments/s, below the
        // strict floor's 2 per RTT (20/s), so the first text follows W(t) with C = 0.4, where
        // the curve error's target (C_g ≈ 0.031: 100 − 1.6 at t = 0) lets the floor's 2 per
        // RTT run ahead of the curve.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let first = after_loss(unit, v2_errors(false, true), 100, 30);
            let bug = after_loss(unit, v2_errors(true, true), 100, 30);
            let mut apart = false;
            for (&(t, w), &(_, wb)) in first.iter().zip(&bug) {
                let want = w_ref(0.4, 100.0, 79.0, t);
                let tol = 0.5 * (w_ref(0.4, 100.0, 79.0, t + 0.1) - want).abs() + 2.0;
                assert!(
                    (w - want).abs() <= tol,
                    "{unit:?} t={t:.2}: {w} vs W(t) {want:.1}"
                );
                apart |= (wb - want).abs() > tol;
            }
            assert!(apart, "{unit:?}: the curve error is not visible: {bug:?}");
        }
    }

    #[test]
    fn test_v2_1_follows_the_curve_below_w_max_where_v2_0_is_capped() {
        // Loss at 10 000 segments, RTT 100 ms: W_max 10 000, cwnd_epoch ⌊10 000·819/1024⌋ =
        // 7 998, K = ∛(2 002/0.4) ≈ 17.1 s; the curve starts at 3·C·K² ≈ 350 segments/s, i.e.
        // 35 per RTT. v2.0 (fixed) caps every ACK at max_increment 16 per 100 ms of RTT; v2.1
        // (2.6.24) applies that cap only above the origin (t ≥ K), so it follows the curve.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let v2_1 = CubicParams {
                version: CubicVersion::V2_1,
                // Ignored by v2.1: the scaling error was fixed before it.
                v2_scaling_bug: true,
                ..Default::default()
            };
            let new = after_loss(unit, v2_1, 10_000, 20);
            let old = after_loss(unit, v2(false), 10_000, 20);
            let per_rtt = |w: &[(f64, f64)]| (w[19].1 - w[9].1) / 10.0;
            assert!(
                per_rtt(&old) <= 16.5,
                "{unit:?} v2.0: {} per RTT",
                per_rtt(&old)
            );
            for &(t, w) in &new {
                let want = w_ref(0.4, 10_000.0, 7_998.0, t);
                let tol = 0.5 * (w_ref(0.4, 10_000.0, 7_998.0, t + 0.1) - want).abs() + 2.0;
                assert!(
                    (w - want).abs() <= tol,
                    "{unit:?} t={t:.2}: {w} vs {want:.1}"
                );
            }
            assert!(
                per_rtt(&new) > 25.0,
                "{unit:?} v2.1: {} per RTT",
                per_rtt(&new)
            );
        }
    }

    #[test]
    fn test_v2_1_keeps_v2_0_rules_before_the_first_loss() {
        // cnt = 50 while no loss has been seen, and initial_ssthresh defaults to 0 (2.6.22).
        let p = CubicParams {
            version: CubicVersion::V2_1,
            ..Default::default()
        };
        let mut cc = cubic(CwndUnit::Packets, 100, u64::MAX, p);
        assert_eq!(cc.ssthresh(), u64::MAX);
        cc.set_ssthresh(100_000);
        let mut d = Driver::new(MSS);
        d.round(&mut cc, 100 * MS, 100 * MS, 2, AckSpacing::Spread);
        cc.set_cwnd(100_000);
        let w = segs(d.round(&mut cc, 100 * MS, 100 * MS, 2, AckSpacing::Spread));
        assert_eq!(w, 102.0);
    }

    #[test]
    fn test_v2_rto_forgets_loss_and_restores_cnt_50() {
        let mut cc = cubic(CwndUnit::Packets, 1000, u64::MAX, v2(true));
        loss(&mut cc, 0);
        cc.on_rto(&RtoEvent {
            in_flight: 799_000,
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.w_max_segments(), 0.0);
        cc.set_cwnd(100_000);
        cc.set_ssthresh(100_000);
        let mut d = Driver::new(MSS);
        let w = segs(d.round(&mut cc, 100 * MS, 100 * MS, 2, AckSpacing::Spread));
        assert_eq!(w, 102.0);
    }

    // --- Linux 2.6.x delayed-ACK compensation and growth-counter rule -------------------------

    /// The current version with Linux 2.6/3.x packets-unit knobs.
    fn l26(comp: bool, rule: AiRule) -> CubicParams {
        CubicParams {
            hystart: HystartMode::Off,
            tcp_friendliness: false,
            delayed_ack_comp: comp,
            ai_rule: rule,
            ..Default::default()
        }
    }

    /// Growth of the first congestion-avoidance round at 100 segments before any loss (cnt =
    /// 20, the 5 %/RTT cap) with an ACK per `per_ack` segments. The EWMA needs no settling: it
    /// starts at 2 packets per ACK and an ACK of one packet takes it to 31/16 at once.
    fn round_before_loss(p: CubicParams, per_ack: u32) -> f64 {
        let mut cc = cubic(CwndUnit::Packets, 100, 100 * u64::from(MSS), p);
        let mut d = Driver::new(MSS);
        segs(d.round(&mut cc, 100 * MS, 100 * MS, per_ack, AckSpacing::Spread))
    }

    #[test]
    fn test_delayed_ack_comp_restores_growth_per_rtt_with_delayed_acks() {
        // cnt = 20 (W_max unknown). Without compensation an ACK per two segments gives 50
        // ACKs, +50/20 = 2 segments per round (2 %/RTT instead of 5 %). With Linux's EWMA at
        // exactly 2 packets per ACK (32/16), cnt = 20·16/32 = 10: +5 per round, the designed
        // 5 %/RTT. With an ACK per segment the integer EWMA drops from 32 to 31 and stays there
        // (31 − 31/16 + 1 = 31), so cnt = ⌊320/31⌋ = 10 also: 100 ACKs → +10 (10 %/RTT).
        assert_eq!(round_before_loss(l26(false, AiRule::Linux4), 2), 102.0);
        assert_eq!(round_before_loss(l26(true, AiRule::Linux4), 2), 105.0);
        assert_eq!(round_before_loss(l26(false, AiRule::Linux4), 1), 105.0);
        assert_eq!(round_before_loss(l26(true, AiRule::Linux4), 1), 110.0);
        // Linux ≤ 3.19 increments after cnt + 1 ACKs: 50/11 → +4, 100/11 → +9.
        assert_eq!(round_before_loss(l26(true, AiRule::Linux26), 2), 104.0);
        assert_eq!(round_before_loss(l26(true, AiRule::Linux26), 1), 109.0);
    }

    #[test]
    fn test_delayed_ack_ratio_ewma_and_limit() {
        // Open-state ACKs of 2 packets keep the EWMA at 2; ACKs in recovery do not move it;
        // a stretch ACK of 10000 packets is limited to 32 per ACK (2.6.39's ACK_RATIO_LIMIT).
        let mut cc = cubic(CwndUnit::Packets, 100, u64::MAX, l26(true, AiRule::Linux26));
        let ack = |cc: &mut Cubic, n: u32, rec: bool| {
            cc.on_ack(&AckEvent {
                now: 0,
                bytes_acked: u64::from(n) * u64::from(MSS),
                packets_acked: n,
                in_recovery: rec,
                mss: MSS,
                ..Default::default()
            })
        };
        for _ in 0..50 {
            ack(&mut cc, 2, false);
        }
        assert_eq!(cc.delayed_ack_ratio(), 2.0);
        ack(&mut cc, 1000, true);
        assert_eq!(cc.delayed_ack_ratio(), 2.0);
        // An ACK that arrives outside Open (Disorder, or the one ending a recovery, which
        // covers the SACKed data at once) is not sampled either (bictcp_acked: Open only).
        cc.on_ack(&AckEvent {
            bytes_acked: 40 * u64::from(MSS),
            packets_acked: 40,
            outside_open: true,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.delayed_ack_ratio(), 2.0);
        ack(&mut cc, 10_000, false);
        assert_eq!(cc.delayed_ack_ratio(), 32.0);
        // Off: the EWMA is not kept (stays at its initial 2 packets per ACK).
        let mut cc = cubic(CwndUnit::Packets, 100, u64::MAX, l26(false, AiRule::Linux4));
        ack(&mut cc, 10_000, false);
        assert_eq!(cc.delayed_ack_ratio(), 2.0);
    }

    #[test]
    fn test_linux26_floor_one_grows_at_most_one_segment_per_two_acks() {
        // Far below the curve the target gives cnt = 0: Linux 2.6 raises it to 1 ("cannot be
        // zero") and adds a segment every second ACK, the same limit as 4.0's cnt ≥ 2: ×1.5
        // per RTT with an ACK per segment, ×1.25 with an ACK per two (the compensation cannot
        // go below the floor). As test_avoidance_growth_capped_at_one_and_a_half_per_rtt.
        for (comp, per_ack, factor) in [(false, 1, 1.5), (true, 1, 1.5), (true, 2, 1.25)] {
            let mut cc = cubic(
                CwndUnit::Packets,
                1000,
                1_000_000,
                CubicParams {
                    tcp_friendliness: true,
                    ..l26(comp, AiRule::Linux26)
                },
            );
            let mut d = Driver::new(MSS);
            prime_rtt(&mut cc, 0, 100 * MS);
            loss(&mut cc, 0);
            for _ in 0..90 {
                d.round(&mut cc, 100 * MS, 100 * MS, per_ack, AckSpacing::Spread);
            }
            cc.set_ssthresh(100_000);
            cc.set_cwnd(100_000);
            for r in 0..3 {
                let w = segs(cc.cwnd());
                let next = segs(d.round(&mut cc, 100 * MS, 100 * MS, per_ack, AckSpacing::Spread));
                assert_eq!(cc.cnt(), 1, "comp={comp} per_ack={per_ack} round {r}");
                let expect = w * factor;
                assert!(
                    (next - expect).abs() <= 1.0,
                    "comp={comp} per_ack={per_ack} round {r}: {w} -> {next}, want {expect}"
                );
            }
        }
    }

    #[test]
    fn test_delayed_ack_comp_follows_curve_after_loss_with_delayed_acks() {
        // After a loss at 1000 segments (β 717/1024: cwnd_epoch 700, K = ∛(300/0.4) ≈ 9.09 s),
        // RTT 100 ms, an ACK per two segments. cnt = cwnd/(W(t + RTT) − cwnd) is meant per
        // segment; counted per ACK it gives half the growth, and the window settles where the
        // target is twice as far ahead: it lags the curve. With the compensation (cnt halved)
        // and Linux 2.6's +1 after cnt + 1 ACKs it follows it. `tol` is check_curve's: half an
        // RTT of curve movement plus two segments.
        let lag = |comp: bool, rule: AiRule| {
            let p = CubicParams {
                tcp_friendliness: true,
                ..l26(comp, rule)
            };
            let pts = after_loss(CwndUnit::Packets, p, 1000, 60);
            pts.iter()
                .map(|&(t, w)| {
                    let want = w_ref(0.4, 1000.0, 700.0, t);
                    let tol = 0.5 * (w_ref(0.4, 1000.0, 700.0, t + 0.1) - want).abs() + 2.0;
                    (want - w, tol)
                })
                .collect::<Vec<_>>()
        };
        // With compensation the window stays within 2 segments of W(t); without it, it lags
        // about one RTT of curve movement (≈ 8 segments 0.5 s into the epoch) while the curve
        // is steep (from the fourth round on: the epoch's first round starts on the curve), and
        // catches up only where the curve flattens near K.
        let on = lag(true, AiRule::Linux26);
        let off = lag(false, AiRule::Linux4);
        for (i, (&(a, _), &(b, tol))) in on.iter().zip(&off).enumerate() {
            assert!(a.abs() <= 2.0, "round {i}: with compensation lag {a}");
            if (3..20).contains(&i) {
                assert!(b - a >= 0.9 * tol, "round {i}: lag {b} without vs {a} with");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]
        #[test]
        fn prop_linux26_counter_and_ratio_stay_in_range(
            acks in proptest::collection::vec((1u32..20_000, proptest::bool::weighted(0.1), 0u32..4), 1..300),
            comp in proptest::bool::ANY,
            rule in proptest::prop_oneof![proptest::strategy::Just(AiRule::Linux4), proptest::strategy::Just(AiRule::Linux26)],
        ) {
            // Any mix of ACK sizes, recovery ACKs and losses: the EWMA stays in [1, 32]
            // packets per ACK, cnt never reaches 0 (nor 1 under the 4.0 rule), and an Open
            // congestion-avoidance ACK never shrinks the window.
            let mut cc = cubic(CwndUnit::Packets, 100, 100 * u64::from(MSS), l26(comp, rule));
            let mut now = 0;
            for (n, rec, ev) in acks {
                now += MS;
                if ev == 0 {
                    loss(&mut cc, now);
                    continue;
                }
                let before = cc.cwnd();
                cc.on_ack(&AckEvent {
                    now,
                    bytes_acked: u64::from(n) * u64::from(MSS),
                    packets_acked: n,
                    rtt_sample: Some(100 * MS),
                    srtt: 100 * MS,
                    min_rtt: 100 * MS,
                    in_recovery: rec,
                    mss: MSS,
                    ..Default::default()
                });
                let r = cc.delayed_ack_ratio();
                proptest::prop_assert!((1.0 / 16.0..=32.0).contains(&r), "ratio {r}");
                if !rec {
                    proptest::prop_assert!(cc.cwnd() >= before);
                    if !cc.in_slow_start() {
                        let floor = if rule == AiRule::Linux4 { 2 } else { 1 };
                        proptest::prop_assert!(cc.cnt() >= floor, "cnt {}", cc.cnt());
                    }
                }
            }
        }
    }
}
