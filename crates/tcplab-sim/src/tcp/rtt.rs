//! RTT estimation and the retransmission timeout (RFC 6298), with the knobs OSes differ in:
//! minimum RTO applied to the whole RTO (RFC 6298 §2.4) or to the variance term (Linux: RTO =
//! SRTT + max(4·RTTVAR, rto_min)), clock granularity G, initial and maximum RTO — and the
//! BSD-derived timer arithmetic ([`BsdTimer`]): an additive slop, the RTO held in whole timer
//! ticks, backoff multiplying the unclamped value, and the estimate dropped after repeated
//! backoffs (4.4BSD `tcp_timer.c`/`tcp_timer.h`, as in FreeBSD and OpenBSD; read for the facts).

use crate::time::Nanos;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    pub srtt: Nanos,
    pub rttvar: Nanos,
    pub min_rtt: Nanos,
    pub latest: Nanos,
    has_sample: bool,
    rto: Nanos,
    /// Consecutive backoffs of the current RTO (RFC 6298 §5.5).
    pub backoff: u32,
    min_rto: Nanos,
    max_rto: Nanos,
    granularity: Nanos,
    min_on_variance: bool,
    bsd: BsdTimer,
    /// The RTO before clamping to [min, max] (BSD backs off from this, [`BsdTimer`]), without
    /// the BSD slop: `TCP_REXMTVAL` in whole ticks.
    raw: Nanos,
    /// BSD's floor above the latest sample ([`BsdTimer::floor_ticks`]); 0 when off.
    sample_floor: Nanos,
    /// [`BsdTimer::fixed_point`]: `t_srtt` (ticks × 32) and `t_rttvar` (ticks × 16); 0 = none.
    fp_srtt: i64,
    fp_rttvar: i64,
    /// [`BsdTimer::forget_into_rttvar`]: `TCP_REXMTVAL` (ns, whole ticks) after the estimate
    /// was dropped, for the timeouts after the one that dropped it.
    forgotten_raw: Option<Nanos>,
    /// [`BsdTimer::recompute_after_bad_rexmt`]: XNU's `t_srtt_prev` and `t_rttvar_prev`, in
    /// whole ticks, saved at the first timeout of a series.
    prev_srtt: i64,
    prev_rttvar: i64,
    /// [`BsdTimer::recompute_after_bad_rexmt`]: XNU's `TF_RECOMPUTE_RTT` with
    /// `t_badrexmt_time`, the timestamp clock's reading when a timeout was found spurious.
    recompute_from: Option<u32>,
    /// Samples taken into the estimate (XNU `t_rttupdated`; not those of the recompute).
    updated: u32,
}

/// The parts of the retransmission timer in which BSD-derived stacks differ from RFC 6298's
/// arithmetic. All off (zero/false) by default: the estimator is then exactly RFC 6298's (or
/// Linux's, with `min_on_variance`).
#[derive(Clone, Copy, Debug, Default)]
pub struct BsdTimer {
    /// Added to SRTT + 4·RTTVAR before the minimum is applied: FreeBSD's `TCPT_RANGESET` adds
    /// `tcp_rexmit_slop` (200 ms, net.inet.tcp.rexmit_slop) to every computed RTO, whose floor
    /// is `tcp_rexmit_min` (30 ms) — stacks-and-ccas.md B.2 "≈ 230 ms (30 ms + 200 ms slop)".
    /// A backed-off timer adds it once to the multiplied value, not to each doubling:
    /// `tcp_timer_rexmt` computes `rexmt = TCP_REXMTVAL(tp) * tcp_backoff[t_rxtshift]` and
    /// `TCPT_RANGESET(t_rxtcur, rexmt, ...)` sets `(tv) = (value) + tcp_rexmit_slop` (FreeBSD
    /// tcp_timer.c / tcp_timer.h, read for the facts): 300 ms of estimate backs off 500, 800,
    /// 1400, 2600 ms, not 500, 1000, 2000 (scripts/freebsd-5.2.1/rto-backoff.pkt).
    pub slop: Nanos,
    /// The RTO is a whole number of timer ticks, truncated: BSD keeps `t_rxtcur` as an integer
    /// tick count computed with shifts (`TCP_REXMTVAL`), so a value between ticks falls to the
    /// tick below before the minimum is applied. FreeBSD: hz ticks (10 ms at HZ 100); OpenBSD
    /// 3.5: slow-timer ticks of 500 ms (PR_SLOWHZ 2; stacks-and-ccas.md B.2). 0 = exact.
    pub tick: Nanos,
    /// Backoff multiplies the unclamped RTO and clamps afterwards (`tcp_timer_rexmt`:
    /// `TCP_REXMTVAL(tp) * tcp_backoff[t_rxtshift]`, then `TCPT_RANGESET` to [`t_rttmin`,
    /// `TCPTV_REXMTMAX`]), so an estimate below the minimum reaches it later than RFC 6298's
    /// doubling of the clamped value; `tcp_backoff[]` = {1, 2, 4, 8, 16, 32, 64, 64, …}.
    pub backoff_unclamped: bool,
    /// Forget SRTT on this many consecutive backoffs (0 = never): BSD drops the smoothed RTT
    /// once `t_rxtshift` > `TCP_MAXRXTSHIFT` / 4 = 3 (the path may have changed), keeping the
    /// variance, and the next sample starts the estimator again.
    pub forget_after: u32,
    /// The RTO computed from a sample is at least the sample plus this many ticks: BSD's
    /// `tcp_xmit_timer` sets the floor of `TCPT_RANGESET` to `max(t_rttmin, rtt + 2)` with `rtt`
    /// the measurement in ticks as that function has it ([`XmitTimerRule`]), "the minimum
    /// feasible timer (which is 2 ticks)" above the sample (FreeBSD tcp_input.c; OpenBSD 3.5
    /// tcp_input.c rev. 1.158.2.3; XNU tcp_input.c; 4.4BSD-Lite2 lineage; read for the facts).
    /// Only there: after a timeout `tcp_timer_rexmt` clamps the backed-off value to `t_rttmin`
    /// alone. 0 = no such floor.
    pub floor_ticks: u32,
    /// FreeBSD's scaled-integer estimator (`tcp_xmit_timer`, FreeBSD 5.x sys/netinet/tcp_input.c
    /// and tcp_var.h, read for the facts): SRTT in ticks × 32 (`TCP_RTT_SHIFT` 5), RTTVAR in
    /// ticks × 16 (`TCP_RTTVAR_SHIFT` 4), `TCP_DELTA_SHIFT` 2. The first sample sets SRTT to it
    /// and RTTVAR to half of it; later ones move SRTT by `((rtt − 1) << 2) − (srtt >> 3)` ("adjust
    /// rtt to origin 0") and RTTVAR by `|delta| − (rttvar >> 2)`, each at least 1; the RTO is
    /// `TCP_REXMTVAL = max(t_rttmin, ((srtt >> 3) + rttvar) >> 2)` ticks, then the slop and the
    /// floor `max(t_rttmin, rtt + 2)`. `rtt` is what FreeBSD passes: a timestamp echo's ticks
    /// plus 1, a timed segment's (`ticks − t_rtttime`) as they are ([`XmitTimerRule`]: OpenBSD
    /// 3.5's and XNU's differ there). Needs `tick` > 0.
    pub fixed_point: bool,
    /// With [`BsdTimer::fixed_point`]: what `tcp_xmit_timer` smooths for a measurement of `k`
    /// whole ticks, and the floor above it ([`XmitTimerRule`]).
    pub xmit_timer: XmitTimerRule,
    /// The largest `tcp_backoff[]` multiplier ([`BsdTimer::backoff_unclamped`]), a power of
    /// two; 0 = 64. 4.4BSD and FreeBSD RELENG_4 stop at 64 ({1, 2, 4, …, 64, 64, …}); FreeBSD
    /// 5.2.1-RELEASE sys/netinet/tcp_timer.c (github kaizendesu/FreeBSD-5.2, read for the
    /// facts) goes on doubling to 512 ({1, 2, …, 256, 512, 512, 512, 512}, tcp_totbackoff
    /// 2559), so the seventh and later consecutive timeouts of a segment wait longer.
    /// Without [`BsdTimer::backoff_unclamped`] (RFC 6298's doubling of the clamped RTO), a
    /// non-zero value caps the doubling there too (0 = doubling until `max_rto`): XNU
    /// bsd/netinet/tcp_timer.c (apple-oss-distributions/xnu, xnu-2782.1.97 for OS X 10.10
    /// through xnu-11417.101.15, read for the facts) keeps 4.4BSD's table, {1, 2, 4, …, 64,
    /// 64, …} (`tcp_totbackoff` 511), for a personality modelled with RFC 6298's arithmetic.
    pub max_multiplier: u32,
    /// With [`BsdTimer::fixed_point`] and [`BsdTimer::forget_after`]: the forgetting is BSD's
    /// own arithmetic. FreeBSD 5.2.1-RELEASE tcp_timer.c `tcp_timer_rexmt` (read for the
    /// facts): once `t_rxtshift` > `TCP_MAXRXTSHIFT` / 4 it adds `t_srtt >> TCP_RTT_SHIFT`
    /// (SRTT in whole ticks) to `t_rttvar` (kept × 16) and zeroes `t_srtt`, after computing
    /// that timeout's interval; `TCP_REXMTVAL` is then `max(t_rttmin, t_rttvar >> 2)`, about
    /// 4·RTTVAR + SRTT/4 — not the old SRTT + 4·RTTVAR the comment there hopes to keep — and
    /// the following timeouts multiply that. Off: the backed-off timer keeps the estimate it
    /// had (the forgetting only restarts the estimator at the next sample) — which is what
    /// OpenBSD's same lines do: OpenBSD 3.5 (tcp_timer.c rev. 1.34 and tcp_var.h rev.
    /// 1.61.2.1 as imported into MirOS, github roytam1/mirbsd-cvs; read for the facts) keeps
    /// `t_srtt` × 32 but has `TCP_RTT_SHIFT` 3, so `t_rttvar += t_srtt >> 3` adds exactly the
    /// term `TCP_REXMTVAL` = `((t_srtt >> 3) + t_rttvar) >> 2` loses with `t_srtt = 0`: the
    /// integer value, and every later interval, is unchanged (test
    /// `test_openbsd35_forgetting_keeps_the_interval`). FreeBSD and XNU shift by 5.
    pub forget_into_rttvar: bool,
    /// With [`BsdTimer::fixed_point`]: XNU's RTT recompute after a spurious timeout (RFC 4015
    /// §2's response as XNU implements it; apple-oss-distributions/xnu tags xnu-2782.1.97 (OS X
    /// 10.10), xnu-4570.1.46, xnu-7195.81.3 and xnu-11417.101.15 alike, read for the facts,
    /// nothing copied). bsd/netinet/tcp_timer.c `tcp_rexmt_save_state`, on the first timeout
    /// (`t_rxtshift == 1`): `t_srtt_prev = (t_srtt >> TCP_RTT_SHIFT) + 2`, `t_rttvar_prev =
    /// t_rttvar >> TCP_RTTVAR_SHIFT` (whole ticks). bsd/netinet/tcp_input.c
    /// `tcp_bad_rexmt_restore_state`, when the timeout is found spurious: `t_rxtshift = 0` (the
    /// armed interval `t_rxtcur` stays the backed-off one), `TF_RECOMPUTE_RTT`, `t_badrexmt_time
    /// = tcp_now`. `tcp_xmit_timer` with the flag set drops every sample ("This RTT might
    /// reflect the extra delay induced by the network") until one from an ACK of new data whose
    /// timestamp echo is at least `t_badrexmt_time` (a timed segment, no echo, always counts),
    /// and from that one sets `t_srtt = max(t_srtt_prev, rtt) << 5`, `t_rttvar =
    /// max(t_rttvar_prev, rtt >> 1) << 4` (not smoothed, not counted in `t_rttupdated`), then
    /// the RTO as after any sample (floor `max(t_rttmin, rtt + 2)`). Off: the first sample after
    /// the undo is smoothed into the old estimate (FreeBSD).
    pub recompute_after_bad_rexmt: bool,
}

/// What a BSD `tcp_xmit_timer` makes of a measurement that spans `k` whole ticks
/// ([`BsdTimer::fixed_point`], knob `rtt_xmit_timer`): the value that starts the estimate
/// (`t_srtt = rtt << 5`, `t_rttvar = rtt << 3`), the value smoothed into it
/// (`delta = (rtt << 2) - (t_srtt >> 3)`) and the base of the floor `max(t_rttmin, rtt + 2)`.
/// The scaling (SRTT in ticks × 32, RTTVAR × 16, `TCP_REXMTVAL` =
/// `((t_srtt >> 3) + t_rttvar) >> 2`) is the same in all three (read for the facts, nothing
/// copied).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum XmitTimerRule {
    /// FreeBSD 5.x (sys/netinet/tcp_input.c): the callers pass a timestamp echo as
    /// `ticks - to_tsecr + 1` (k + 1) and a timed segment as `ticks - t_rtttime` (k);
    /// `tcp_xmit_timer` starts the estimate and floors at that value and smooths `rtt - 1`
    /// ("adjust rtt to origin 0").
    #[default]
    #[serde(rename = "freebsd")]
    Freebsd,
    /// OpenBSD 3.5 (the OPENBSD_3_5 branch's tcp_input.c rev. 1.158.2.3 as imported into MirOS
    /// BSD, github roytam1/mirbsd-cvs commit 8500871fbe, src/sys/netinet): the callers pass
    /// `tcp_now - opti.ts_ecr + 1` (an echo, k + 1) or `tcp_now - tp->t_rtttime` (a timed
    /// segment, k; `t_rtttime = tcp_now` when tcp_output.c rev. 1.67 starts timing, `tcp_now`
    /// counting 500-ms slow-timer ticks, tcp_timer.c rev. 1.34), and `tcp_xmit_timer` begins with
    /// `--rtt`, raised to 0 and capped at `TCP_RTT_MAX` (512): an echo is k, a timed segment k − 1
    /// (at least 0), and that one value starts, is smoothed and floors (`rtt + 2`). A first
    /// sample of 0 leaves `t_srtt` 0 — no estimate, the next sample starts it again — and the
    /// RTO at `t_rttmin`. (The engine before 2026-11-29 used the 2005 reading of rev. 1.194,
    /// k + 1 for both: one tick larger; nothing else used it, so it was dropped.)
    #[serde(rename = "openbsd-3.5")]
    Openbsd35,
    /// XNU (bsd/netinet/tcp_input.c `tcp_compute_rtt` / `tcp_xmit_timer`, apple-oss-distributions
    /// xnu-2782.1.97 (OS X 10.10), xnu-4570.1.46, xnu-7195.81.3 and xnu-11417.101.15 alike):
    /// `tcp_now - to_tsecr` or `tcp_now - t_rtttime` (k, 1-ms ticks of `TCP_RETRANSHZ` 1000)
    /// starts, is smoothed ("this extra adjustment is not needed", no `rtt - 1`) and floors.
    #[serde(rename = "xnu")]
    Xnu,
}

/// One RTT measurement as a tick-based clock takes it: the whole ticks between the two readings
/// (0 when both fall in one tick) and the value the estimator and the congestion controller
/// get, at least one tick (the usual jiffies-clock convention). BSD's RTO floor
/// ([`BsdTimer::floor_ticks`]) counts from `ticks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttSample {
    pub ticks: u64,
    pub nanos: Nanos,
    /// Taken from a timestamp echo (RFC 7323 §4), not a timed segment.
    pub echo: bool,
    /// The echoed timestamp when [`RttSample::echo`] (0 otherwise).
    pub tsecr: u32,
}

impl RttSample {
    /// A measurement of `ticks` ticks of `g` ns.
    pub fn from_ticks(ticks: u64, g: Nanos) -> RttSample {
        let g = g.max(1);
        RttSample {
            ticks,
            nanos: ticks.max(1) * g,
            echo: false,
            tsecr: 0,
        }
    }

    /// From a send stamp on a µs clock (Linux's `tcp_mstamp`, [`crate::tcp::sender::ack::
    /// linux_rtt_samples`]): the whole µs between the two readings, at least 1; `ticks` counts
    /// whole ticks of `g` in it.
    pub fn from_send_stamp_us(sent: Nanos, now: Nanos, g: Nanos) -> RttSample {
        let nanos = (now / 1_000).saturating_sub(sent / 1_000).max(1) * 1_000;
        RttSample {
            ticks: nanos / g.max(1),
            nanos,
            echo: false,
            tsecr: 0,
        }
    }

    /// From timestamps (RFC 7323 §4): our clock now (`now` ns, ticks of `g`) minus the echoed
    /// value `ts_ecr`, in the clock's 32-bit modular arithmetic.
    pub fn from_timestamps(now: Nanos, ts_ecr: u32, g: Nanos) -> RttSample {
        let ts_now = ts_ticks(now, g);
        RttSample {
            echo: true,
            tsecr: ts_ecr,
            ..RttSample::from_ticks(u64::from(ts_now.wrapping_sub(ts_ecr)), g)
        }
    }
}

/// A timestamp clock's reading (RFC 7323 §5.4): `clock` ns (simulated time plus the host's
/// `clock_phase`) in whole ticks of `g`, modulo 2³².
#[inline]
pub fn ts_ticks(clock: Nanos, g: Nanos) -> u32 {
    (clock / g.max(1)) as u32
}

/// BSD `tcp_backoff[]`: the multiplier stops growing at 64.
const BSD_MAX_MULTIPLIER_SHIFT: u32 = 6;

impl RttEstimator {
    pub fn new(
        initial_rto: Nanos,
        min_rto: Nanos,
        max_rto: Nanos,
        g: Nanos,
        min_on_var: bool,
    ) -> Self {
        Self::with_bsd(
            initial_rto,
            min_rto,
            max_rto,
            g,
            min_on_var,
            BsdTimer::default(),
        )
    }

    /// As [`RttEstimator::new`], with BSD timer arithmetic ([`BsdTimer`]).
    pub fn with_bsd(
        initial_rto: Nanos,
        min_rto: Nanos,
        max_rto: Nanos,
        g: Nanos,
        min_on_var: bool,
        bsd: BsdTimer,
    ) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            min_rtt: 0,
            latest: 0,
            has_sample: false,
            rto: initial_rto.min(max_rto),
            backoff: 0,
            min_rto,
            max_rto,
            granularity: g.max(1),
            min_on_variance: min_on_var,
            bsd,
            raw: initial_rto,
            sample_floor: 0,
            fp_srtt: 0,
            fp_rttvar: 0,
            forgotten_raw: None,
            prev_srtt: 0,
            prev_rttvar: 0,
            recompute_from: None,
            updated: 0,
        }
    }

    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// The measurement from a segment sent at `sent` and acknowledged at `now`, as a tick-based
    /// clock takes it: the difference of two tick counts ([`RttSample`]).
    pub fn sample(&self, sent: Nanos, now: Nanos) -> RttSample {
        let g = self.granularity;
        RttSample::from_ticks((now / g).saturating_sub(sent / g), g)
    }

    /// Feed one measurement taken by the clock ([`RttSample`]): as [`RttEstimator::on_sample`],
    /// and BSD's floor of the RTO above the sample ([`BsdTimer::floor_ticks`]) is set from its
    /// ticks (the clock's ticks are the timer's: `clock_granularity` = `timer_tick` in the BSD
    /// personalities). `min_sample` feeds the minimum RTT: the same measurement, or with Linux's
    /// sampling the congestion controller's, the newest segment's (`tcp_update_rtt_min` takes
    /// `ca_rtt_us`; [`crate::tcp::sender::ack::linux_rtt_samples`]).
    #[inline]
    pub fn on_measurement(&mut self, m: RttSample, min_sample: Nanos) {
        if self.bsd.fixed_point && self.bsd.tick > 0 {
            self.update_fixed_point(m, min_sample);
            return;
        }
        self.sample_floor = match (self.bsd.floor_ticks, self.bsd.tick) {
            (0, _) | (_, 0) => 0,
            (f, t) => (m.ticks + u64::from(f)).saturating_mul(t),
        };
        self.update(m.nanos, min_sample);
    }

    /// Feed one RTT measurement `r` (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4) that no clock took
    /// (no BSD floor).
    pub fn on_sample(&mut self, r: Nanos) {
        self.sample_floor = 0;
        self.update(r, r);
    }

    /// The latest measurement and the minimum RTT (both estimator forms).
    #[inline]
    fn record(&mut self, r: Nanos, min_sample: Nanos) {
        self.latest = r.max(1);
        let m = min_sample.max(1);
        self.min_rtt = if self.min_rtt > 0 {
            self.min_rtt.min(m)
        } else {
            m
        };
    }

    /// A new estimate without backoff: the RTO from `raw` (before the minimum and the BSD
    /// slop) and the floor above the sample (both estimator forms).
    #[inline]
    fn set_rto(&mut self, raw: Nanos) {
        self.backoff = 0;
        self.forgotten_raw = None;
        self.raw = raw;
        self.rto = self
            .clamp(self.raw + self.bsd.slop)
            .max(self.sample_floor)
            .min(self.max_rto);
    }

    fn update(&mut self, r: Nanos, min_sample: Nanos) {
        let r = r.max(1);
        self.record(r, min_sample);
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
        } else {
            let err = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        self.set_rto(self.unclamped_rto());
    }

    /// [`BsdTimer::fixed_point`]: FreeBSD's, OpenBSD 3.5's or XNU's `tcp_xmit_timer`
    /// ([`XmitTimerRule`]) on the measurement `m`. Out of line, so that `on_measurement` stays
    /// small enough to inline on the other stacks.
    #[inline(never)]
    fn update_fixed_point(&mut self, m: RttSample, min_sample: Nanos) {
        let tick = self.bsd.tick;
        let k = m.ticks as i64;
        // ([`XmitTimerRule`]) the value that starts the estimate, the value smoothed, the base
        // of the floor `rtt + 2`.
        let (start, smoothed, floor_base) = match self.bsd.xmit_timer {
            // FreeBSD: an echo's ticks + 1 (`ticks - to_tsecr + 1`), a timed segment's ticks as
            // they are (`ticks - t_rtttime`); smoothed as `rtt - 1`.
            XmitTimerRule::Freebsd => {
                let rtt = k + i64::from(m.echo);
                (rtt, rtt - 1, rtt)
            }
            // OpenBSD 3.5: the same values passed, then `--rtt`, at least 0, at most
            // TCP_RTT_MAX (1 << 9, tcp_var.h rev. 1.61.2.1).
            XmitTimerRule::Openbsd35 => {
                let rtt = (k + i64::from(m.echo) - 1).clamp(0, 1 << 9);
                (rtt, rtt, rtt)
            }
            // XNU: `tcp_now - to_tsecr` or `tcp_now - t_rtttime`, no adjustment.
            XmitTimerRule::Xnu => (k, k, k),
        };
        if let Some(bad) = self.recompute_from {
            // [`BsdTimer::recompute_after_bad_rexmt`] (XNU tcp_xmit_timer, TF_RECOMPUTE_RTT):
            // an echo older than the undo (`TSTMP_GEQ(tsecr, t_badrexmt_time)` false, in the
            // timestamp clock's modular arithmetic) is dropped whole; the first other sample
            // restarts the estimate from the values saved at the timeout, unsmoothed.
            if m.echo && (m.tsecr.wrapping_sub(bad) as i32) < 0 {
                return;
            }
            self.recompute_from = None;
            self.fp_srtt = self.prev_srtt.max(start) << 5;
            self.fp_rttvar = self.prev_rttvar.max(start >> 1) << 4;
            self.has_sample = true;
        } else {
            self.record(m.nanos, min_sample);
            self.updated = self.updated.saturating_add(1);
            if !self.has_sample || self.fp_srtt == 0 {
                self.fp_srtt = start << 5;
                self.fp_rttvar = start << 3;
                self.has_sample = true;
            } else {
                let mut delta = (smoothed << 2) - (self.fp_srtt >> 3);
                self.fp_srtt += delta;
                if self.fp_srtt <= 0 {
                    self.fp_srtt = 1;
                }
                delta = delta.abs() - (self.fp_rttvar >> 2);
                self.fp_rttvar += delta;
                if self.fp_rttvar <= 0 {
                    self.fp_rttvar = 1;
                }
            }
        }
        // The nanosecond view for everything else that reads the estimate (SRTT for the
        // bad-retransmit window, RTTVAR for reports).
        self.srtt = self.fp_srtt as u64 * tick / 32;
        self.rttvar = self.fp_rttvar as u64 * tick / 16;
        let rttmin_ticks = self.min_rto.div_ceil(tick);
        let rexmtval = ((((self.fp_srtt >> 3) + self.fp_rttvar) >> 2) as u64).max(rttmin_ticks);
        self.sample_floor = match self.bsd.floor_ticks {
            0 => 0,
            f => (floor_base.max(0) as u64 + u64::from(f)) * tick,
        };
        self.set_rto(rexmtval * tick);
    }

    /// SRTT + max(G, 4·RTTVAR) (in whole ticks, BSD's `TCP_REXMTVAL`), before the minimum and
    /// the BSD slop; with `min_on_variance` the minimum belongs to the variance term (Linux) and
    /// is applied here. The slop is a whole number of ticks (hz/5), so truncating before adding
    /// it equals truncating the sum.
    fn unclamped_rto(&self) -> Nanos {
        let var = (4 * self.rttvar).max(self.granularity);
        let rto = if self.min_on_variance {
            self.srtt + var.max(self.min_rto)
        } else {
            self.srtt + var
        };
        match self.bsd.tick {
            0 => rto,
            t => rto / t * t,
        }
    }

    fn clamp(&self, rto: Nanos) -> Nanos {
        rto.max(self.min_rto).min(self.max_rto)
    }

    /// The current RTO including exponential backoff (RFC 6298 §5.5), capped at the maximum;
    /// BSD style ([`BsdTimer::backoff_unclamped`]): the unclamped value times `tcp_backoff[]`.
    #[inline]
    pub fn rto(&self) -> Nanos {
        if self.backoff == 0 {
            // The common case, on every ACK that restarts the timer: no backoff (BSD style
            // with the floor above the sample; RFC 6298 capped at the maximum).
            return if self.bsd.backoff_unclamped {
                self.rto
            } else {
                self.rto.min(self.max_rto)
            };
        }
        self.backed_off_rto()
    }

    /// [`RttEstimator::rto`] after one or more timeouts, out of line (the per-ACK path above
    /// stays small enough to inline).
    #[cold]
    #[inline(never)]
    fn backed_off_rto(&self) -> Nanos {
        if self.bsd.backoff_unclamped {
            let cap = match self.bsd.max_multiplier {
                0 => BSD_MAX_MULTIPLIER_SHIFT,
                m => m.ilog2(),
            };
            let shift = self.backoff.min(cap);
            return self.clamp(
                self.raw
                    .saturating_mul(1u64 << shift)
                    .saturating_add(self.bsd.slop),
            );
        }
        // [`BsdTimer::max_multiplier`] caps the doubling (XNU's `tcp_backoff[]`); 0 = none.
        let cap = match self.bsd.max_multiplier {
            0 => 30,
            m => m.ilog2().min(30),
        };
        let shift = self.backoff.min(cap);
        self.rto.saturating_mul(1u64 << shift).min(self.max_rto)
    }

    /// A timeout was found spurious and undone (knob `undo_bad_rexmt`) at timestamp-clock
    /// reading `ts_now`. With [`BsdTimer::recompute_after_bad_rexmt`] (XNU
    /// `tcp_bad_rexmt_restore_state`): `t_rxtshift = 0` while the armed interval stays the
    /// backed-off one (`t_rxtcur` is not recomputed there), and the next eligible sample
    /// recomputes the estimate; otherwise nothing (the next sample is smoothed in and resets
    /// the backoff).
    pub fn on_bad_rexmt_undo(&mut self, ts_now: u32) {
        if !self.bsd.recompute_after_bad_rexmt || !self.bsd.fixed_point {
            return;
        }
        self.rto = self.rto();
        self.backoff = 0;
        self.forgotten_raw = None;
        self.recompute_from = Some(ts_now);
    }

    /// XNU `tcp_getrt_rtt` (bsd/netinet/tcp_subr.c, apple-oss-distributions/xnu tags
    /// xnu-2782.1.97 (OS X 10.10) through xnu-11417.101.15 alike; read for the facts, nothing
    /// copied): a new connection whose route has a cached RTT starts from it. `rmx_rtt` and
    /// `rmx_rttvar` are in `RTM_RTTUNIT` (1 000 000 per second, µs); `t_srtt = rmx_rtt /
    /// (RTM_RTTUNIT / (TCP_RETRANSHZ × TCP_RTT_SCALE))` and `t_rttvar = rmx_rttvar /
    /// (RTM_RTTUNIT / (TCP_RETRANSHZ × TCP_RTTVAR_SCALE))` with C's integer division (÷ 31 and
    /// ÷ 62 at 1-ms ticks: 1 000 000 / 32 000 truncates), `t_rttvar = t_srtt × 16 / 32` when no
    /// variance is cached ("default variation is +- 1 rtt"); `t_rxtcur` =
    /// `TCPT_RANGESET(((t_srtt >> 2) + t_rttvar) >> 1, t_rttmin, TCPTV_REXMTMAX)` without the
    /// slop (the connection is not established: `TCP_ADD_REXMTSLOP`) — the interval tcp_output.c
    /// arms for the first SYN (`t_state < TCPS_ESTABLISHED && t_rxtshift == 0`). The estimate
    /// then counts as a sample (`t_srtt != 0`): the SYN-ACK's sample is smoothed into it.
    /// Returns (the first SYN's interval, `TCP_REXMTVAL` for the SYN's retransmissions), or
    /// `None` (nothing changed) without [`BsdTimer::fixed_point`] or a cached RTT.
    pub fn seed_from_route(&mut self, rmx_rtt: u64, rmx_rttvar: u64) -> Option<(Nanos, Nanos)> {
        let tick = self.bsd.tick;
        if !self.bsd.fixed_point || tick == 0 || rmx_rtt == 0 {
            return None;
        }
        const RTM_RTTUNIT: u64 = 1_000_000;
        let hz = (1_000_000_000 / tick).max(1); // TCP_RETRANSHZ
        let srtt = (rmx_rtt / (RTM_RTTUNIT / (hz * 32)).max(1)) as i64;
        let rttvar = if rmx_rttvar > 0 {
            (rmx_rttvar / (RTM_RTTUNIT / (hz * 16)).max(1)) as i64
        } else {
            srtt * 16 / 32
        };
        if srtt == 0 {
            return None;
        }
        self.fp_srtt = srtt;
        self.fp_rttvar = rttvar;
        self.has_sample = true;
        self.srtt = srtt as u64 * tick / 32;
        self.rttvar = rttvar as u64 * tick / 16;
        let rttmin_ticks = self.min_rto.div_ceil(tick);
        let rexmtval = ((((srtt >> 3) + rttvar) >> 2) as u64).max(rttmin_ticks);
        let first = ((((srtt >> 2) + rttvar) >> 1) as u64)
            .max(rttmin_ticks)
            .saturating_mul(tick)
            .min(self.max_rto);
        // What the estimate gives once established (TCP_REXMTVAL + slop), until a sample.
        self.sample_floor = 0;
        self.set_rto(rexmtval * tick);
        Some((first, rexmtval * tick))
    }

    /// XNU `tcp_close` (bsd/netinet/tcp_subr.c, the same tags as
    /// [`RttEstimator::seed_from_route`]): a connection that took at least 16 samples
    /// (`t_rttupdated >= 16`, "enough for the srtt filter to converge") writes its estimate to
    /// the route, half the old cached value and half the new when one is cached ("filter this
    /// update"), in `RTM_RTTUNIT`: `t_srtt × (RTM_RTTUNIT / (TCP_RETRANSHZ × 32))`, `t_rttvar
    /// × (RTM_RTTUNIT / (TCP_RETRANSHZ × 16))`. Returns the route's new (`rmx_rtt`,
    /// `rmx_rttvar`) from the old ones, or `None` when the route is left alone. Not wired
    /// between connections in the engine (a scenario gives the route's metrics with knobs
    /// `route_rtt`, `route_rttvar`).
    pub fn route_metrics_on_close(&self, old: (u64, u64)) -> Option<(u64, u64)> {
        let tick = self.bsd.tick;
        if !self.bsd.fixed_point || tick == 0 || self.updated < 16 {
            return None;
        }
        const RTM_RTTUNIT: u64 = 1_000_000;
        let hz = (1_000_000_000 / tick).max(1);
        let filter = |cached: u64, i: u64| {
            if cached != 0 && i != 0 {
                (cached + i) / 2
            } else {
                i
            }
        };
        let i_rtt = self.fp_srtt.max(0) as u64 * (RTM_RTTUNIT / (hz * 32));
        let i_var = self.fp_rttvar.max(0) as u64 * (RTM_RTTUNIT / (hz * 16));
        Some((filter(old.0, i_rtt), filter(old.1, i_var)))
    }

    /// Base RTO without backoff.
    pub fn base_rto(&self) -> Nanos {
        self.rto
    }

    /// Double the RTO after a timeout (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        if self.bsd.recompute_after_bad_rexmt && self.backoff == 0 {
            // XNU tcp_rexmt_save_state on the first timeout of a series (t_rxtshift == 1):
            // SRTT in whole ticks + 2 and RTTVAR in whole ticks, for the recompute after an
            // undo ([`BsdTimer::recompute_after_bad_rexmt`]); a pending recompute is cleared.
            self.prev_srtt = (self.fp_srtt >> 5) + 2;
            self.prev_rttvar = self.fp_rttvar >> 4;
            self.recompute_from = None;
        }
        // [`BsdTimer::forget_into_rttvar`]: the estimate dropped at an earlier timeout sets
        // this and later intervals (`TCP_REXMTVAL` read afresh in `tcp_timer_rexmt`).
        if let Some(raw) = self.forgotten_raw.take() {
            self.raw = raw;
        }
        self.backoff = self.backoff.saturating_add(1);
        if self.bsd.forget_into_rttvar
            && self.bsd.fixed_point
            && self.bsd.tick > 0
            && self.bsd.forget_after > 0
            && self.backoff >= self.bsd.forget_after
            && self.fp_srtt > 0
        {
            // FreeBSD 5.2.1 tcp_timer_rexmt: t_rttvar += t_srtt >> TCP_RTT_SHIFT;
            // t_srtt = 0, after this timeout's interval was computed (rto() still reads the
            // old `raw`); TCP_REXMTVAL = max(t_rttmin, ((0 >> 3) + t_rttvar) >> 2).
            self.fp_rttvar += self.fp_srtt >> 5;
            self.fp_srtt = 0;
            self.has_sample = false;
            let tick = self.bsd.tick;
            let rttmin_ticks = self.min_rto.div_ceil(tick);
            let rexmtval = ((self.fp_rttvar >> 2) as u64).max(rttmin_ticks);
            self.forgotten_raw = Some(rexmtval * tick);
            return;
        }
        if self.bsd.forget_after > 0 && self.backoff == self.bsd.forget_after && self.has_sample {
            // BSD: `t_rttvar += t_srtt; t_srtt = 0` — the next sample re-initialises both
            // (RFC 6298 §2.2 form), so only "no estimate" matters here.
            self.has_sample = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    #[test]
    fn test_first_sample_sets_srtt_and_rttvar() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, MS, false);
        e.on_sample(100 * MS);
        assert_eq!(e.srtt, 100 * MS);
        assert_eq!(e.rttvar, 50 * MS);
        // RFC 6298: RTO = 100 + 4·50 = 300 ms, raised to min 1 s.
        assert_eq!(e.rto(), SEC);
    }

    #[test]
    fn test_linux_style_min_on_variance() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS, true);
        for _ in 0..50 {
            e.on_sample(100 * MS);
        }
        // Converged: RTTVAR → 0, so RTO = SRTT + 200 ms.
        assert!(e.rto() >= 300 * MS && e.rto() < 305 * MS, "{}", e.rto());
    }

    #[test]
    fn test_backoff_doubles_and_caps() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, MS, false);
        e.back_off();
        assert_eq!(e.rto(), 2 * SEC);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), 60 * SEC);
        e.on_sample(10 * MS);
        assert_eq!(e.backoff, 0);
    }

    fn freebsd_timer() -> BsdTimer {
        BsdTimer {
            slop: 200 * MS,
            tick: 10 * MS,
            backoff_unclamped: true,
            forget_after: 4,
            floor_ticks: 0,
            fixed_point: false,
            xmit_timer: XmitTimerRule::Freebsd,
            max_multiplier: 0,
            forget_into_rttvar: false,
            recompute_after_bad_rexmt: false,
        }
    }

    fn freebsd() -> RttEstimator {
        RttEstimator::with_bsd(3 * SEC, 30 * MS, 64 * SEC, 10 * MS, false, freebsd_timer())
    }

    /// OpenBSD 3.5's timer: 500-ms slow ticks, `t_rttmin` 2 ticks, the floor `rtt + 2` ticks.
    fn openbsd(floor_ticks: u32) -> RttEstimator {
        let bsd = BsdTimer {
            tick: 500 * MS,
            backoff_unclamped: true,
            forget_after: 4,
            floor_ticks,
            ..BsdTimer::default()
        };
        RttEstimator::with_bsd(3 * SEC, SEC, 64 * SEC, 500 * MS, false, bsd)
    }

    #[test]
    fn test_bsd_floor_two_ticks_above_the_sample() {
        // A 200-ms path timed by a 500-ms clock: the sample spans 0 or 1 tick boundaries.
        // Converged, SRTT + 4·RTTVAR truncates to below t_rttmin (1 s): the RTO is 1 s when the
        // last sample spanned 0 ticks (0 + 2 ticks = 1 s) and 1.5 s when it spanned 1 tick.
        let mut e = openbsd(2);
        for _ in 0..40 {
            e.on_measurement(
                RttSample {
                    ticks: 0,
                    nanos: 500 * MS,
                    echo: false,
                    tsecr: 0,
                },
                500 * MS,
            );
        }
        assert_eq!(e.rto(), SEC);
        e.on_measurement(
            RttSample {
                ticks: 1,
                nanos: 500 * MS,
                echo: false,
                tsecr: 0,
            },
            500 * MS,
        );
        assert_eq!(e.rto(), 1500 * MS);
        // Without the floor (RFC 6298 arithmetic on the same samples) it stays at t_rttmin.
        let mut f = openbsd(0);
        for _ in 0..40 {
            f.on_measurement(
                RttSample {
                    ticks: 0,
                    nanos: 500 * MS,
                    echo: false,
                    tsecr: 0,
                },
                500 * MS,
            );
        }
        f.on_measurement(
            RttSample {
                ticks: 1,
                nanos: 500 * MS,
                echo: false,
                tsecr: 0,
            },
            500 * MS,
        );
        assert_eq!(f.rto(), SEC);
    }

    /// FreeBSD 5.x with its scaled-integer estimator: HZ 100, t_rttmin 3 ticks, slop 200 ms,
    /// floor `rtt + 2` ticks.
    fn freebsd_fixed_point() -> RttEstimator {
        let bsd = BsdTimer {
            floor_ticks: 2,
            fixed_point: true,
            ..freebsd_timer()
        };
        RttEstimator::with_bsd(3 * SEC, 30 * MS, 64 * SEC, 10 * MS, false, bsd)
    }

    #[test]
    fn test_freebsd_fixed_point_estimator_by_hand() {
        // Timed segments of 10 ticks (`ticks - t_rtttime`), worked through tcp_xmit_timer:
        // first: srtt 320, rttvar 80, REXMTVAL ((320 >> 3) + 80) >> 2 = 30 ticks, + 20 slop;
        // second: delta (9 << 2) - 40 = -4, srtt 316; |delta| - (80 >> 2) = -16, rttvar 64,
        // REXMTVAL (39 + 64) >> 2 = 25; third: delta 36 - 39 = -3, srtt 313; 3 - 16, rttvar 51,
        // REXMTVAL (39 + 51) >> 2 = 22 ticks: 420 ms with the slop (RFC 6298's arithmetic on
        // 100-ms samples gives 210 + 200 = 410 ms).
        let timed = RttSample::from_ticks(10, 10 * MS);
        let mut e = freebsd_fixed_point();
        e.on_measurement(timed, timed.nanos);
        assert_eq!(e.rto(), 500 * MS);
        e.on_measurement(timed, timed.nanos);
        assert_eq!(e.rto(), 450 * MS);
        e.on_measurement(timed, timed.nanos);
        assert_eq!(e.rto(), 420 * MS);
        assert_eq!(e.srtt, 313 * 10 * MS / 32);
        // A fourth: delta 36 - 39 = -3, srtt 310; 3 - 12 = -9, rttvar 42: (38 + 42) >> 2 = 20.
        e.on_measurement(timed, timed.nanos);
        assert_eq!(e.rto(), 400 * MS);
        // A timestamp echo of 10 ticks is passed as 11 (`ticks - to_tsecr + 1`): SRTT falls from
        // 352 until (srtt >> 3) = 40 (origin 0), at 327 (10.2 ticks: the truncation's +1/2 tick
        // bias tcp_var.h describes); a timed segment's 10 ticks settle one tick lower, at 295.
        let echo = RttSample::from_timestamps(100 * MS, 0, 10 * MS);
        assert!(echo.echo && echo.ticks == 10);
        let mut e = freebsd_fixed_point();
        for _ in 0..100 {
            e.on_measurement(echo, echo.nanos);
        }
        assert_eq!(e.srtt, 327 * 10 * MS / 32);
        let mut t = freebsd_fixed_point();
        for _ in 0..100 {
            t.on_measurement(timed, timed.nanos);
        }
        assert_eq!(t.srtt, 295 * 10 * MS / 32);
    }

    /// OpenBSD 3.5 with its scaled-integer estimator: 500-ms slow ticks, `t_rttmin` 2 ticks,
    /// every sample decremented at the start of `tcp_xmit_timer` ([`XmitTimerRule::Openbsd35`]),
    /// the floor two ticks above the decremented sample.
    fn openbsd_fixed_point() -> RttEstimator {
        let bsd = BsdTimer {
            tick: 500 * MS,
            backoff_unclamped: true,
            forget_after: 4,
            floor_ticks: 2,
            fixed_point: true,
            xmit_timer: XmitTimerRule::Openbsd35,
            ..BsdTimer::default()
        };
        RttEstimator::with_bsd(6 * SEC, SEC, 64 * SEC, 500 * MS, false, bsd)
    }

    #[test]
    fn test_xmit_timer_rules_side_by_side() {
        // One measurement spanning one 500-ms tick boundary, the same timer otherwise (t_rttmin
        // 2 ticks, floor rtt + 2): what each tcp_xmit_timer starts the estimate from.
        let timed = RttSample::from_ticks(1, 500 * MS);
        let echo = RttSample::from_timestamps(600 * MS, 0, 500 * MS);
        let first = |rule, m: RttSample| {
            let mut e = openbsd_fixed_point();
            e.bsd.xmit_timer = rule;
            e.on_measurement(m, m.nanos);
            (e.fp_srtt, e.fp_rttvar, e.rto() / MS)
        };
        // FreeBSD: timed 1 tick (32, 8: 3 ticks), echo 1 + 1 (64, 16: 6 ticks).
        assert_eq!(first(XmitTimerRule::Freebsd, timed), (32, 8, 1500));
        assert_eq!(first(XmitTimerRule::Freebsd, echo), (64, 16, 3000));
        // OpenBSD 3.5: timed 1 - 1 = 0 (no estimate, t_rttmin), echo 1 + 1 - 1 = 1.
        assert_eq!(first(XmitTimerRule::Openbsd35, timed), (0, 0, 1000));
        assert_eq!(first(XmitTimerRule::Openbsd35, echo), (32, 8, 1500));
        // XNU: both 1.
        assert_eq!(first(XmitTimerRule::Xnu, timed), (32, 8, 1500));
        assert_eq!(first(XmitTimerRule::Xnu, echo), (32, 8, 1500));
        // Smoothing: a second echo of 1 tick. FreeBSD smooths rtt - 1 = 1: delta 4 - (64 >> 3) =
        // -4, t_srtt 60; 4 - (16 >> 2) = 0, t_rttvar 16: (7 + 16) >> 2 = 5 ticks. OpenBSD 3.5
        // and XNU smooth 1: delta 4 - 4 = 0, t_srtt 32; 0 - 2, t_rttvar 6: (4 + 6) >> 2 = 2
        // ticks, below the floor 1 + 2 ticks.
        let second = |rule| {
            let mut e = openbsd_fixed_point();
            e.bsd.xmit_timer = rule;
            e.on_measurement(echo, echo.nanos);
            e.on_measurement(echo, echo.nanos);
            (e.fp_srtt, e.fp_rttvar, e.rto() / MS)
        };
        assert_eq!(second(XmitTimerRule::Freebsd), (60, 16, 2500));
        assert_eq!(second(XmitTimerRule::Openbsd35), (32, 6, 1500));
        assert_eq!(second(XmitTimerRule::Xnu), (32, 6, 1500));
    }

    #[test]
    fn test_openbsd35_samples_one_tick_smaller() {
        // OpenBSD 3.5 (OPENBSD_3_5 tcp_input.c rev. 1.158.2.3, tcp_var.h rev. 1.61.2.1, in the
        // MirOS import github roytam1/mirbsd-cvs 8500871fbe; read for the facts): the callers
        // pass `tcp_now - ts_ecr + 1` (an echo) or `tcp_now - t_rtttime` (a timed segment), and
        // tcp_xmit_timer begins with `--rtt`, at least 0: an echo of k ticks is smoothed as k, a
        // timed segment's as k - 1. First sample: t_srtt = rtt << 5, t_rttvar = rtt << 3; floor
        // max(t_rttmin, rtt + 2) on the decremented rtt; t_rttmin 2 ticks (TCPTV_MIN, 1 s).
        //
        // (b) a timed segment spanning one tick boundary: rtt 0, t_srtt 0 (no estimate yet),
        // TCP_REXMTVAL 0: the RTO is max(t_rttmin, 0 + 2) = 2 ticks = 1 s (the 2005 reading gave
        // 3 s, RFC 6298's arithmetic 1.5 s).
        let timed1 = RttSample::from_ticks(1, 500 * MS);
        let mut e = openbsd_fixed_point();
        e.on_measurement(timed1, timed1.nanos);
        assert_eq!(e.rto(), SEC);
        assert_eq!((e.fp_srtt, e.fp_rttvar), (0, 0));
        // tcp_timer_rexmt: max(TCP_REXMTVAL 0, t_rttmin 2) x tcp_backoff[1] = 4 ticks, then 8.
        e.back_off();
        assert_eq!(e.rto(), 2 * SEC);
        e.back_off();
        assert_eq!(e.rto(), 4 * SEC);
        // t_srtt 0: the next sample initialises again. Three boundaries timed: rtt 2, t_srtt 64,
        // t_rttvar 16, ((64 >> 3) + 16) >> 2 = 6 ticks = 3 s, above the floor 2 + 2.
        let timed3 = RttSample::from_ticks(3, 500 * MS);
        e.on_measurement(timed3, timed3.nanos);
        assert_eq!(e.rto(), 3 * SEC);
        assert_eq!((e.fp_srtt, e.fp_rttvar), (64, 16));
        // A timed segment within one tick: 0 - 1, raised to 0: 1 s as well.
        let timed0 = RttSample::from_ticks(0, 500 * MS);
        let mut e = openbsd_fixed_point();
        e.on_measurement(timed0, timed0.nanos);
        assert_eq!(e.rto(), SEC);
        // Two boundaries timed: rtt 1, t_srtt 32, t_rttvar 8, (4 + 8) >> 2 = 3 ticks = 1.5 s.
        let timed2 = RttSample::from_ticks(2, 500 * MS);
        let mut e = openbsd_fixed_point();
        e.on_measurement(timed2, timed2.nanos);
        assert_eq!(e.rto(), 1500 * MS);
        // (a) an echo spanning one tick boundary: tcp_now - ts_ecr + 1 - 1 = 1 tick: t_srtt 32,
        // t_rttvar 8, 3 ticks = 1.5 s (floor 1 + 2 = 3 ticks); the 2005 reading gave 3 s.
        let echo1 = RttSample::from_timestamps(600 * MS, 0, 500 * MS);
        assert!(echo1.echo && echo1.ticks == 1);
        let mut e = openbsd_fixed_point();
        e.on_measurement(echo1, echo1.nanos);
        assert_eq!(e.rto(), 1500 * MS);
        // A later echo within one tick is smoothed as 0: delta (0 << 2) - (32 >> 3) = -4, t_srtt
        // 28; 4 - (8 >> 2) = 2, t_rttvar 10; (3 + 10) >> 2 = 3 ticks; floor 0 + 2.
        let echo0 = RttSample::from_timestamps(100 * MS, 0, 500 * MS);
        e.on_measurement(echo0, echo0.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar), (28, 10));
        assert_eq!(e.rto(), 1500 * MS);
        // A first echo within one tick: rtt 0, no estimate, 1 s (the 2005 reading: 1.5 s).
        let mut e = openbsd_fixed_point();
        e.on_measurement(echo0, echo0.nanos);
        assert_eq!(e.rto(), SEC);
    }

    /// XNU's timer (macos): 1-ms ticks (`TCP_RETRANSHZ` 1000), `t_rttmin` 30 ms
    /// (`TCPTV_REXMTMIN`), 200-ms slop (`TCPTV_REXMTSLOP`), floor `rtt + 2`, FreeBSD's scaling,
    /// `tcp_backoff[]` to 64, the estimate moved into RTTVAR after the fourth timeout.
    fn xnu() -> RttEstimator {
        let bsd = BsdTimer {
            slop: 200 * MS,
            tick: MS,
            backoff_unclamped: true,
            forget_after: 4,
            floor_ticks: 2,
            fixed_point: true,
            xmit_timer: XmitTimerRule::Xnu,
            max_multiplier: 64,
            forget_into_rttvar: true,
            recompute_after_bad_rexmt: false,
        };
        RttEstimator::with_bsd(SEC, 30 * MS, 64 * SEC, MS, false, bsd)
    }

    /// XNU's timer with the RTT recompute after a spurious timeout
    /// ([`BsdTimer::recompute_after_bad_rexmt`]), or without it (FreeBSD's smoothing).
    fn xnu_recompute(on: bool) -> RttEstimator {
        let mut e = xnu();
        e.bsd.recompute_after_bad_rexmt = on;
        // Two 100-ms samples (scripts/macos/bad-rexmt-rtt.pkt): t_srtt 3200, t_rttvar 600,
        // TCP_REXMTVAL (400 + 600) >> 2 = 250 ms + 200 ms slop.
        let m = RttSample::from_ticks(100, MS);
        e.on_measurement(m, m.nanos);
        e.on_measurement(m, m.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3200, 600, 450 * MS));
        e
    }

    #[test]
    fn test_xnu_rtt_recompute_after_spurious_timeout() {
        // XNU tcp_rexmt_save_state at the first timeout: t_srtt_prev = 100 + 2, t_rttvar_prev
        // = 600 >> 4 = 37; the undo (tcp_bad_rexmt_restore_state) at tcp_now 660; the next
        // timed sample (300 ms) restarts the estimate: t_srtt = max(102, 300) << 5 = 9600,
        // t_rttvar = max(37, 150) << 4 = 2400, TCP_REXMTVAL (1200 + 2400) >> 2 = 900 ms.
        let timed = RttSample::from_ticks(300, MS);
        let mut e = xnu_recompute(true);
        e.back_off();
        assert_eq!(e.rto(), 700 * MS); // 250 × 2 + 200
        e.on_bad_rexmt_undo(660);
        // t_rxtshift = 0, the armed interval (t_rxtcur) still the backed-off one.
        assert_eq!((e.backoff, e.rto()), (0, 700 * MS));
        e.on_measurement(timed, timed.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (9600, 2400, 1100 * MS));
        // FreeBSD's rule (off): smoothed, delta 1200 - 400 = 800, t_srtt 4000, t_rttvar 600 +
        // 800 - 150 = 1250, TCP_REXMTVAL (500 + 1250) >> 2 = 437 ms.
        let mut f = xnu_recompute(false);
        f.back_off();
        f.on_bad_rexmt_undo(660);
        assert_eq!(f.backoff, 1, "no change without the knob");
        f.on_measurement(timed, timed.nanos);
        assert_eq!((f.fp_srtt, f.fp_rttvar, f.rto()), (4000, 1250, 637 * MS));
        // A sample below the saved values: both maxima keep the old estimate (+ 2 ms):
        // t_srtt 102 << 5 = 3264, t_rttvar 37 << 4 = 592, (408 + 592) >> 2 = 250 ms.
        let short = RttSample::from_ticks(60, MS);
        let mut e = xnu_recompute(true);
        e.back_off();
        e.on_bad_rexmt_undo(660);
        e.on_measurement(short, short.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3264, 592, 450 * MS));
    }

    #[test]
    fn test_xnu_rtt_recompute_drops_echoes_older_than_the_undo() {
        // TF_RECOMPUTE_RTT: an echo below t_badrexmt_time (660) is dropped whole (not smoothed,
        // no RTO change); one at or above it recomputes. Echoes at tcp_now 700 and 960.
        let old = RttSample::from_timestamps(700 * MS, 200, MS);
        let new = RttSample::from_timestamps(960 * MS, 660, MS);
        assert!(old.echo && old.ticks == 500 && new.ticks == 300);
        let mut e = xnu_recompute(true);
        e.back_off();
        e.on_bad_rexmt_undo(660);
        e.on_measurement(old, old.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3200, 600, 700 * MS));
        e.on_measurement(new, new.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (9600, 2400, 1100 * MS));
        // Then ordinary smoothing again: 300 ms, delta 1200 - 1200 = 0, t_rttvar 2400 - 600.
        e.on_measurement(new, new.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar), (9600, 1800));
    }

    #[test]
    fn test_xnu_timeout_after_undo_backs_off_from_one() {
        // t_rxtshift = 0 after the undo: a timeout before any eligible sample multiplies
        // TCP_REXMTVAL by tcp_backoff[1] = 2 again (250 × 2 + 200 = 700 ms), and saves the
        // state afresh (which cancels the pending recompute).
        let mut e = xnu_recompute(true);
        e.back_off();
        e.on_bad_rexmt_undo(660);
        e.back_off();
        assert_eq!((e.backoff, e.rto()), (1, 700 * MS));
        let echo = RttSample::from_timestamps(700 * MS, 200, MS);
        e.on_measurement(echo, echo.nanos);
        // Smoothed (no recompute pending): delta 2000 - 400 = 1600, t_srtt 4800, t_rttvar
        // 600 + 1600 - 150 = 2050: (600 + 2050) >> 2 = 662 ms + 200 ms slop.
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (4800, 2050, 862 * MS));
    }

    #[test]
    fn test_xnu_route_rtt_seed() {
        // XNU tcp_getrt_rtt: rmx_rtt 99200 µs / 31 = 3200, rmx_rttvar 37200 / 62 = 600; the
        // first SYN's interval ((3200 >> 2) + 600) >> 1 = 700 ms, TCP_REXMTVAL (400 + 600) >> 2
        // = 250 ms (450 with the slop once established).
        let mut e = xnu();
        assert_eq!(
            e.seed_from_route(99_200, 37_200),
            Some((700 * MS, 250 * MS))
        );
        assert!(e.has_sample());
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3200, 600, 450 * MS));
        // The SYN's 100-ms sample is smoothed in: t_srtt 3200, t_rttvar 450, (400 + 450) >> 2
        // = 212 ms + 200 (scripts/macos/route-rtt-seed.pkt); unseeded it starts the estimate.
        let m = RttSample::from_ticks(100, MS);
        e.on_measurement(m, m.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3200, 450, 412 * MS));
        // 100 ms written by a person (100000 µs): / 31 = 3225 (XNU's truncated factor); no
        // variance cached: t_rttvar = 3225 × 16 / 32 = 1612 ("+- 1 rtt"): first SYN
        // ((806 + 1612) >> 1) = 1209 ms, TCP_REXMTVAL (403 + 1612) >> 2 = 503 ms.
        let mut p = xnu();
        assert_eq!(p.seed_from_route(100_000, 0), Some((1209 * MS, 503 * MS)));
        assert_eq!((p.fp_srtt, p.fp_rttvar), (3225, 1612));
        // No cached RTT, or a timer without BSD's fixed point: nothing changes.
        let mut n = xnu();
        assert_eq!(n.seed_from_route(0, 37_200), None);
        assert!(!n.has_sample());
        let mut r = RttEstimator::new(SEC, 30 * MS, 64 * SEC, MS, false);
        assert_eq!(r.seed_from_route(99_200, 37_200), None);
        assert!(!r.has_sample());
    }

    #[test]
    fn test_xnu_route_metrics_on_close() {
        // XNU tcp_close: nothing before 16 samples (t_rttupdated >= 16).
        let m = RttSample::from_ticks(100, MS);
        let mut e = xnu();
        for _ in 0..15 {
            e.on_measurement(m, m.nanos);
        }
        assert_eq!(e.route_metrics_on_close((0, 0)), None);
        e.on_measurement(m, m.nanos);
        // 16 samples of 100 ms: t_srtt stays 3200 (delta 0); t_rttvar loses a quarter (t_rttvar
        // >> 2) at each of the 15 later samples: 800, 600, 450, 338, ...
        let mut var = 800i64;
        for _ in 1..16 {
            var += -(var >> 2);
            var = var.max(1);
        }
        assert_eq!((e.fp_srtt, e.fp_rttvar), (3200, var));
        // An empty route takes the values (× 31, × 62); a cached one is averaged with them.
        assert_eq!(
            e.route_metrics_on_close((0, 0)),
            Some((3200 * 31, var as u64 * 62))
        );
        assert_eq!(
            e.route_metrics_on_close((200_000, 40_000)),
            Some(((200_000 + 99_200) / 2, (40_000 + var as u64 * 62) / 2))
        );
        // Written and read back by the next connection: the same t_srtt.
        let (rtt, rttvar) = e.route_metrics_on_close((0, 0)).unwrap();
        let mut next = xnu();
        next.seed_from_route(rtt, rttvar);
        assert_eq!((next.fp_srtt, next.fp_rttvar), (3200, var));
    }

    #[test]
    fn test_xnu_timer_after_one_100ms_sample() {
        // XNU tcp_input.c tcp_xmit_timer (xnu-2782.1.97 … xnu-11417.101.15): 100 ticks: t_srtt
        // 100 << 5 = 3200, t_rttvar 100 << 3 = 800, TCP_REXMTVAL max(30, (400 + 800) >> 2) =
        // 300 ms; TCPT_RANGESET adds tcp_rexmt_slop once established: 500 ms (floor 102 ms).
        let m = RttSample::from_ticks(100, MS);
        let mut e = xnu();
        e.on_measurement(m, m.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3200, 800, 500 * MS));
        // tcp_timers TCPT_REXMT: TCP_REXMTVAL × tcp_backoff[shift] + slop: 800, 1400, 2600,
        // 5000 ms; at the fourth (t_rxtshift 4 > 3) t_rttvar += 3200 >> 5 = 900, t_srtt = 0:
        // TCP_REXMTVAL max(30, 900 >> 2) = 225 ms, × 32 + 200 = 7400, × 64 + 200 = 14600 ms.
        assert_eq!(
            backoff_series(&mut e, 8),
            vec![800, 1400, 2600, 5000, 7400, 14600, 14600, 14600]
        );
        // The engine's RFC 6298 form for macos before 2026-11-29 (230 ms on the variance):
        // 330, 660, 1320 ms.
        let mut r = RttEstimator::with_bsd(
            SEC,
            230 * MS,
            64 * SEC,
            MS,
            true,
            BsdTimer {
                max_multiplier: 64,
                ..BsdTimer::default()
            },
        );
        r.on_sample(100 * MS);
        assert_eq!(r.rto(), 330 * MS);
        // A second sample of 100 ticks is smoothed as 100 (no FreeBSD `rtt - 1`): delta 400 -
        // (3200 >> 3) = 0, t_srtt 3200; 0 - (800 >> 2), t_rttvar 600: (400 + 600) >> 2 = 250 ms.
        let mut e = xnu();
        e.on_measurement(m, m.nanos);
        e.on_measurement(m, m.nanos);
        assert_eq!((e.fp_srtt, e.fp_rttvar, e.rto()), (3200, 600, 450 * MS));
        // FreeBSD's rule smooths 99 instead: delta (99 << 2) - 400 = -4, t_srtt 3196; 4 - 200,
        // t_rttvar 604.
        let mut f = xnu();
        f.bsd.xmit_timer = XmitTimerRule::Freebsd;
        f.on_measurement(m, m.nanos);
        f.on_measurement(m, m.nanos);
        assert_eq!((f.fp_srtt, f.fp_rttvar), (3196, 604));
    }

    #[test]
    fn test_freebsd_fixed_point_rttmin_inside_rexmtval() {
        // A 1-tick path: REXMTVAL is at least t_rttmin (3 ticks) before the slop is added,
        // so the RTO is 3 + 20 ticks, never 1 + 20.
        let m = RttSample::from_ticks(1, 10 * MS);
        let mut e = freebsd_fixed_point();
        for _ in 0..50 {
            e.on_measurement(m, m.nanos);
        }
        assert_eq!(e.rto(), 230 * MS);
        // Backed off: REXMTVAL (3 ticks) x 2, then the slop.
        e.back_off();
        assert_eq!(e.rto(), 260 * MS);
    }

    #[test]
    fn test_bsd_floor_not_applied_to_backed_off_values() {
        // tcp_timer_rexmt clamps TCP_REXMTVAL × tcp_backoff[] to t_rttmin only.
        let mut e = openbsd(2);
        for _ in 0..40 {
            e.on_measurement(
                RttSample {
                    ticks: 3,
                    nanos: 500 * MS,
                    echo: false,
                    tsecr: 0,
                },
                500 * MS,
            );
        }
        assert_eq!(e.rto(), 2500 * MS, "3 + 2 ticks");
        let raw = e.raw;
        assert!(
            raw < 2500 * MS,
            "the estimate itself is below the floor: {raw}"
        );
        e.back_off();
        assert_eq!(e.rto(), (2 * raw).max(SEC));
        // A new sample starts from the floor again.
        e.on_measurement(
            RttSample {
                ticks: 3,
                nanos: 500 * MS,
                echo: false,
                tsecr: 0,
            },
            500 * MS,
        );
        assert_eq!(e.rto(), 2500 * MS);
    }

    #[test]
    fn test_sample_counts_tick_boundaries() {
        let e = openbsd(2);
        let s = e.sample(100 * MS, 300 * MS);
        assert_eq!(
            (s.ticks, s.nanos),
            (0, 500 * MS),
            "at least one tick for the estimator"
        );
        let s = e.sample(400 * MS, 600 * MS);
        assert_eq!((s.ticks, s.nanos), (1, 500 * MS));
        let s = RttSample::from_timestamps(1300 * MS, 1, 500 * MS);
        assert_eq!((s.ticks, s.nanos), (1, 500 * MS));
        let s = RttSample::from_timestamps(0, u32::MAX, 500 * MS);
        assert_eq!(s.ticks, 1, "the timestamp clock wraps");
    }

    #[test]
    fn test_bsd_slop_is_added_not_a_floor() {
        let mut e = freebsd();
        for _ in 0..60 {
            e.on_sample(200 * MS);
        }
        // RTTVAR decays towards 0 but 4·RTTVAR stays ≥ G = 10 ms: 200 + 10 + 200 ms.
        assert_eq!(e.rto(), 410 * MS);
        // Linux's variance floor instead gives SRTT + 200 ms for the same samples.
        let mut l = RttEstimator::new(3 * SEC, 200 * MS, 120 * SEC, 10 * MS, true);
        for _ in 0..60 {
            l.on_sample(200 * MS);
        }
        assert_eq!(l.rto(), 400 * MS);
    }

    #[test]
    fn test_bsd_backoff_adds_slop_once_to_the_multiplied_value() {
        // FreeBSD tcp_timer_rexmt: TCPT_RANGESET(t_rxtcur, TCP_REXMTVAL * tcp_backoff[shift])
        // adds tcp_rexmit_slop to the product. One 100-ms sample: SRTT 100, RTTVAR 50 ms,
        // TCP_REXMTVAL 300 ms; the timer runs 500 ms, then 800, 1400, 2600 ms.
        let mut e = freebsd();
        e.on_sample(100 * MS);
        let mut seq = vec![e.rto()];
        for _ in 0..3 {
            e.back_off();
            seq.push(e.rto());
        }
        assert_eq!(seq, vec![500 * MS, 800 * MS, 1400 * MS, 2600 * MS]);
        // Without slop the same estimator doubles: the slop is the only difference.
        let mut o = openbsd(0);
        o.on_sample(100 * MS);
        assert_eq!(o.rto(), SEC, "OpenBSD: 300 ms in 500-ms ticks, at t_rttmin");
    }

    /// FreeBSD 5.2.1-RELEASE's timer as the personality sets it: 10-ms ticks (HZ 100),
    /// `tcp_rexmit_min` 3 ticks, slop 200 ms, the scaled-integer estimator.
    fn freebsd521(max_multiplier: u32, forget_into_rttvar: bool) -> RttEstimator {
        let bsd = BsdTimer {
            fixed_point: true,
            floor_ticks: 2,
            max_multiplier,
            forget_into_rttvar,
            ..freebsd_timer()
        };
        RttEstimator::with_bsd(3 * SEC, 30 * MS, 64 * SEC, 10 * MS, false, bsd)
    }

    fn backoff_series(e: &mut RttEstimator, n: usize) -> Vec<Nanos> {
        (0..n)
            .map(|_| {
                e.back_off();
                e.rto() / MS
            })
            .collect()
    }

    #[test]
    fn test_freebsd521_backoff_multiplier_reaches_512() {
        // FreeBSD 5.2.1 tcp_timer.c: tcp_backoff[] = {1, 2, …, 256, 512, 512, 512, 512}.
        // A 10-tick timed segment: t_srtt 320, t_rttvar 80, TCP_REXMTVAL (40 + 80) >> 2 = 30
        // ticks; each timeout TCPT_RANGESET(30 × tcp_backoff[shift] ticks + slop), at most 64 s.
        let sample = RttSample::from_ticks(10, 10 * MS);
        let mut e = freebsd521(512, false);
        e.on_measurement(sample, 100 * MS);
        assert_eq!(e.rto(), 500 * MS);
        let s = backoff_series(&mut e, 9);
        assert_eq!(
            s,
            vec![800, 1400, 2600, 5000, 9800, 19400, 38600, 64000, 64000]
        );
        // 4.4BSD's table (the engine's default) stops at 64: 19.4 s from the sixth on.
        let mut o = freebsd521(0, false);
        o.on_measurement(sample, 100 * MS);
        let s = backoff_series(&mut o, 9);
        assert_eq!(&s[5..], &[19400, 19400, 19400, 19400]);
    }

    #[test]
    fn test_openbsd35_forgetting_keeps_the_interval() {
        // OpenBSD 3.5 tcp_timer.c rev. 1.34 tcp_timer_rexmt (MirOS import of the 3.5 tree,
        // read for the facts): rto = TCP_REXMTVAL, at least t_rttmin (2 ticks);
        // TCPT_RANGESET(rto * tcp_backoff[shift], t_rttmin, TCPTV_REXMTMAX 128 ticks); then,
        // for shift > 3, t_rttvar += t_srtt >> 3 (TCP_RTT_SHIFT 3, tcp_var.h) and t_srtt = 0.
        // Worked step by step beside the engine, which keeps the estimate (knob off).
        const BACKOFF: [i64; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
        // An echo spanning one tick boundary: tcp_now - ts_ecr + 1, decremented: 1 tick.
        let echo = RttSample::from_timestamps(600 * MS, 0, 500 * MS);
        let mut e = openbsd_fixed_point();
        e.on_measurement(echo, echo.nanos);
        let (mut srtt, mut rttvar) = (e.fp_srtt, e.fp_rttvar);
        assert_eq!((srtt, rttvar), (32, 8), "1 tick: 1 << 5, 1 << 3");
        let mut by_hand = Vec::new();
        for (shift, mult) in BACKOFF.iter().enumerate().skip(1) {
            let rto = (((srtt >> 3) + rttvar) >> 2).max(2);
            by_hand.push((rto * mult).clamp(2, 128) as u64 * 500);
            if shift > 3 {
                rttvar += srtt >> 3;
                srtt = 0;
            }
        }
        let engine = backoff_series(&mut e, 12);
        assert_eq!(engine, by_hand);
        assert_eq!(&engine[..6], &[3000, 6000, 12000, 24000, 48000, 64000]);
        // FreeBSD's shift (t_srtt >> 5) on the same state would shrink the fifth: 8 + 1 = 9,
        // TCP_REXMTVAL 9 >> 2 = 2 ticks, × 32 = 32 s, not 3 × 32 ticks = 48 s.
        let mut f = openbsd_fixed_point();
        f.bsd.forget_into_rttvar = true;
        f.on_measurement(echo, echo.nanos);
        assert_eq!(backoff_series(&mut f, 5)[4], 32000);
        // With t_rttmin 2 ticks the multiplier's cap never shows: 2 × 64 ticks = TCPTV_REXMTMAX.
        let mut g = openbsd_fixed_point();
        g.bsd.max_multiplier = 512;
        g.on_measurement(echo, echo.nanos);
        assert_eq!(backoff_series(&mut g, 12), engine);
    }

    #[test]
    fn test_rfc_doubling_capped_by_max_multiplier() {
        // XNU tcp_timer.c (xnu-2782.1.97 … xnu-11417.101.15): tcp_backoff[] stops at 64 and
        // TCPTV_REXMTMAX is 64 s. On RFC 6298's doubling (the macos personality) the cap
        // holds a 330-ms RTO at 64 × 330 ms = 21.12 s from the sixth timeout on.
        let bsd = BsdTimer {
            max_multiplier: 64,
            ..BsdTimer::default()
        };
        let mut e = RttEstimator::with_bsd(SEC, 230 * MS, 64 * SEC, MS, true, bsd);
        e.on_sample(100 * MS);
        assert_eq!(e.rto(), 330 * MS);
        let s = backoff_series(&mut e, 9);
        assert_eq!(
            s,
            vec![660, 1320, 2640, 5280, 10560, 21120, 21120, 21120, 21120]
        );
        // No cap (0): doubling until max_rto.
        let mut o = RttEstimator::with_bsd(SEC, 230 * MS, 64 * SEC, MS, true, BsdTimer::default());
        o.on_sample(100 * MS);
        assert_eq!(
            &backoff_series(&mut o, 9)[5..],
            &[21120, 42240, 64000, 64000]
        );
    }

    #[test]
    fn test_freebsd521_forget_moves_srtt_into_rttvar() {
        // tcp_timer_rexmt at t_rxtshift 4 (> TCP_MAXRXTSHIFT / 4): the interval is computed
        // from the old TCP_REXMTVAL (30 ticks × 16 + slop = 5 s), then t_rttvar += t_srtt >> 5
        // (80 + 10 = 90) and t_srtt = 0: TCP_REXMTVAL = 90 >> 2 = 22 ticks, so the fifth
        // timeout waits 22 × 32 ticks + 200 ms = 7.24 s (not 9.8 s), the sixth 14.28 s.
        let sample = RttSample::from_ticks(10, 10 * MS);
        let mut e = freebsd521(512, true);
        e.on_measurement(sample, 100 * MS);
        let s = backoff_series(&mut e, 8);
        assert_eq!(s, vec![800, 1400, 2600, 5000, 7240, 14280, 28360, 56520]);
        assert!(!e.has_sample());
        // The next sample starts the estimate again (t_srtt == 0 in tcp_xmit_timer).
        e.on_measurement(sample, 100 * MS);
        assert_eq!((e.backoff, e.rto()), (0, 500 * MS));
        // Off: the later timeouts keep the old estimate.
        let mut o = freebsd521(512, false);
        o.on_measurement(sample, 100 * MS);
        assert_eq!(backoff_series(&mut o, 5)[4], 9800);
    }

    #[test]
    fn test_bsd_rto_truncated_to_ticks() {
        let bsd = BsdTimer {
            tick: 500 * MS,
            ..BsdTimer::default()
        };
        let mut e = RttEstimator::with_bsd(3 * SEC, SEC, 64 * SEC, 500 * MS, false, bsd);
        e.on_sample(1500 * MS); // SRTT 1.5 s, RTTVAR 0.75 s: 4.5 s exactly
        assert_eq!(e.rto(), 4500 * MS);
        e.on_sample(1700 * MS); // 1525 + 4·612.5 = 3975 ms → 3.5 s in 500-ms ticks
        assert_eq!(e.rto(), 3500 * MS);
    }

    #[test]
    fn test_bsd_backoff_from_unclamped_value_with_multiplier_cap() {
        let bsd = BsdTimer {
            backoff_unclamped: true,
            ..BsdTimer::default()
        };
        let mut e = RttEstimator::with_bsd(3 * SEC, SEC, 200 * SEC, MS, false, bsd);
        for _ in 0..60 {
            e.on_sample(100 * MS);
        }
        // Unclamped ≈ 100 ms + 4 ms: 1 s (min), then 1 s again (0.2 s → min), 1 s, then
        // 1.66 s, 3.3 s, 6.6 s; tcp_backoff[] stops at ×64 (≈ 6.6 s), below max_rto.
        let mut seq = vec![e.rto()];
        for _ in 0..8 {
            e.back_off();
            seq.push(e.rto());
        }
        let raw = e.raw;
        let want: Vec<Nanos> = [1u64, 2, 4, 8, 16, 32, 64, 64, 64]
            .iter()
            .map(|m| (raw * m).max(SEC))
            .collect();
        assert_eq!(seq, want);
        assert_eq!(seq[1], SEC, "RFC 6298 doubling would give 2 s");
        // RFC 6298 doubles the clamped value.
        let mut r = RttEstimator::new(3 * SEC, SEC, 200 * SEC, MS, false);
        for _ in 0..60 {
            r.on_sample(100 * MS);
        }
        r.back_off();
        assert_eq!(r.rto(), 2 * SEC);
    }

    #[test]
    fn test_bsd_forgets_srtt_on_fourth_backoff() {
        let mut e = freebsd();
        e.on_sample(2 * SEC);
        for _ in 0..3 {
            e.back_off();
        }
        assert!(e.has_sample());
        e.back_off();
        assert!(
            !e.has_sample(),
            "t_rxtshift 4 > TCP_MAXRXTSHIFT/4 drops SRTT"
        );
        e.on_sample(100 * MS); // a fresh start: SRTT = R, RTTVAR = R/2 (RFC 6298 §2.2)
        assert_eq!((e.srtt, e.rttvar, e.backoff), (100 * MS, 50 * MS, 0));
        assert_eq!(e.min_rtt, 100 * MS);
    }

    #[test]
    fn test_quantise_to_ticks() {
        let e = RttEstimator::new(SEC, SEC, 60 * SEC, 10 * MS, false);
        assert_eq!(e.sample(5 * MS, 14 * MS).nanos, 10 * MS);
        assert_eq!(e.sample(MS, 2 * MS).nanos, 10 * MS); // zero ticks counts as one
        assert_eq!(e.sample(9 * MS, 31 * MS).nanos, 30 * MS);
    }
}
