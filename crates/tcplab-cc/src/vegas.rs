//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8), 1995) as Linux implements it (L: net/ipv4/tcp_vegas.c;
//! stacks-and-ccas.md A.9).
//!
//! * **RTT samples** (Linux `tcp_vegas_pkts_acked`, on every ACK with a sample, also during
//!   recovery): `baseRTT` = the smallest sample of the connection, `minRTT` = the smallest of the
//!   current round, `cntRTT` = the round's number of samples. Samples are made non-zero.
//! * **Once per round** (`after(ack, beg_snd_nxt)`, see `round.rs`), in the Open state, with
//!   `cntRTT ≥ 3` (with two samples or fewer they are probably delayed ACKs and the ACK is
//!   treated as Reno's `tcp_reno_cong_avoid`):
//!   `diff = ⌊cwnd·(minRTT − baseRTT)/baseRTT⌋` segments (Brakmo & Peterson's
//!   `Diff = (Expected − Actual)·BaseRTT`) and `target = ⌊cwnd·baseRTT/minRTT⌋`;
//!   - slow start and `diff > γ`: `cwnd = min(cwnd, target + 1)`, `ssthresh = min(ssthresh,
//!     cwnd)` — leave slow start at the rate actually achieved;
//!   - slow start otherwise: normal slow start (Linux grows every RTT, not every other RTT as
//!     the paper's Vegas did);
//!   - congestion avoidance: `diff > β` → `cwnd − 1` (and `ssthresh = min(ssthresh, cwnd)`),
//!     `diff < α` → `cwnd + 1`, otherwise unchanged;
//!   - then `cwnd ≥ 2` and `ssthresh = max(ssthresh, ¾·cwnd)` (`tcp_current_ssthresh`).
//! * Between round ends, slow start continues per ACK; congestion avoidance does nothing.
//! * Outside the Open state (recovery, and after an RTO until the data outstanding at the
//!   timeout is acknowledged — Linux's Loss state) Vegas is off and the Reno rules apply; when
//!   the connection returns to Open, Vegas restarts its round (`vegas_enable`). Loss response is
//!   Reno's: `ssthresh = max(cwnd/2, 2)` (`.ssthresh = tcp_reno_ssthresh`), RTO to 1 segment.
//! * Restart after idle (`CA_EVENT_CWND_RESTART`) and a transmission with nothing in flight
//!   (`CA_EVENT_TX_START`) forget `baseRTT` (`tcp_vegas_init`).
//!
//! Defaults α = 2, β = 4, γ = 1 (Linux module parameters). In the bytes unit the same integer
//! rules are applied to `cwnd/MSS` and the window moves by one MSS. Documented differences: the
//! ±1 increase is not applied to an ACK flagged [`AckEvent::app_limited`] (Linux's Vegas path does
//! not check `tcp_is_cwnd_limited`; this crate's contract is that app-limited ACKs never grow the
//! window), and RTT samples are in nanoseconds (Linux: µs + 1).

use crate::growth::{may_grow, CwndUnit, SsthreshBasis, WindowState};
use crate::params::{ParamInfo, ParamKind, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::round::DelayRounds;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, SentEvent};

/// Vegas' parameters (Linux module parameters; stacks-and-ccas.md A.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasParams {
    /// Lower bound of the packets kept queued (Linux `alpha` = 2).
    pub alpha: u32,
    /// Upper bound of the packets kept queued (Linux `beta` = 4).
    pub beta: u32,
    /// Slow-start exit threshold in packets (Linux `gamma` = 1).
    pub gamma: u32,
    /// Basis of the loss-triggered halving.
    pub ssthresh_from: SsthreshBasis,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams {
            alpha: 2,
            beta: 4,
            gamma: 1,
            ssthresh_from: SsthreshBasis::Auto,
        }
    }
}

/// TCP Vegas.
#[derive(Clone, Debug)]
pub struct Vegas {
    p: VegasParams,
    win: WindowState,
    /// Rounds, RTT samples, `baseRTT`, on/off state (`round::DelayRounds`, as Vegas, FAST and
    /// Compound share them).
    d: DelayRounds,
    /// `diff` of the last Vegas decision, segments.
    last_diff: Option<u64>,
}

impl Vegas {
    /// A Vegas controller; parameters are assumed valid (the registry checks `alpha ≤ beta`).
    pub fn new(init: &CcInit, p: VegasParams) -> Self {
        Vegas {
            p,
            win: WindowState::new(init),
            d: DelayRounds::default(),
            last_diff: None,
        }
    }

    pub fn params(&self) -> &VegasParams {
        &self.p
    }
    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// Smallest RTT seen (Linux `baseRTT`), 0 before the first sample.
    pub fn base_rtt(&self) -> Nanos {
        self.d.base_rtt
    }
    /// `diff` (segments) computed at the last once-per-RTT decision.
    pub fn last_diff(&self) -> Option<u64> {
        self.last_diff
    }
    /// Whether the Vegas rules are active (Linux `doing_vegas_now`).
    pub fn enabled(&self) -> bool {
        self.d.enabled
    }

    /// Linux `vegas_enable`: start a fresh round from the current `snd_nxt`.
    fn enable(&mut self, in_flight: u64) {
        self.d.enable(in_flight);
    }

    /// Linux `tcp_vegas_init` (connection start, idle restart, TX start): forget `baseRTT`.
    fn reinit(&mut self, in_flight: u64) {
        self.d.base_rtt = 0;
        self.enable(in_flight);
    }

    /// `tcp_reno_cong_avoid`: slow start, then +1 segment per window of credit.
    fn reno(&mut self, ev: &AckEvent) {
        self.win.reno_on_ack(ev);
    }

    /// Linux `tcp_current_ssthresh` in the Open state: `max(ssthresh, cwnd/2 + cwnd/4)`.
    fn current_ssthresh(&self) -> u64 {
        let s = self.win.ssthresh();
        let c = self.win.cwnd();
        let three_quarters = match self.win.growth().unit {
            CwndUnit::Packets => {
                let seg = self.win.cwnd_segments();
                ((seg >> 1) + (seg >> 2)) * self.win.mss()
            }
            CwndUnit::Bytes => (c >> 1) + (c >> 2),
        };
        s.max(three_quarters)
    }

    /// The once-per-RTT decision with `cntRTT ≥ 3` (L: tcp_vegas.c, `tcp_vegas_cong_avoid`).
    fn vegas_update(&mut self, ev: &AckEvent, rtt: Nanos) {
        let mss = self.win.mss();
        let cwnd = self.win.cwnd();
        let base = self.d.base_rtt.max(1);
        let rtt = rtt.max(base);
        // Brakmo & Peterson §3.2: Diff = (Expected − Actual)·BaseRTT = cwnd·(RTT − base)/RTT;
        // Linux divides by baseRTT instead: diff = ⌊cwnd·(rtt − baseRTT)/baseRTT⌋ segments.
        let diff = u128::from(cwnd) * u128::from(rtt - base) / (u128::from(base) * u128::from(mss));
        let diff = u64::try_from(diff).unwrap_or(u64::MAX);
        // target_cwnd = cwnd·baseRTT/rtt (the window that achieves the measured rate).
        let target = (u128::from(cwnd) * u128::from(base) / u128::from(rtt)) as u64;
        self.last_diff = Some(diff);
        let in_ss = self.win.in_slow_start();
        if diff > u64::from(self.p.gamma) && in_ss {
            // "Going too fast. Time to slow down and switch to congestion avoidance": cwnd =
            // actual rate × baseRTT, +1 because integer truncation robs full utilisation.
            let c = cwnd.min(target.saturating_add(mss));
            self.win.set_cwnd(c);
            let s = self.win.ssthresh().min(self.win.cwnd());
            self.win.set_ssthresh(s);
        } else if in_ss {
            if may_grow(ev) {
                self.win.slow_start(ev);
            }
        } else if diff > u64::from(self.p.beta) {
            // Too many packets queued: −1 segment per RTT (Brakmo & Peterson §3.2, Diff > β).
            self.win.set_cwnd(cwnd.saturating_sub(mss));
            let s = self.win.ssthresh().min(self.win.cwnd());
            self.win.set_ssthresh(s);
        } else if diff < u64::from(self.p.alpha) {
            // Too few: +1 segment per RTT (Diff < α).
            if !ev.app_limited {
                self.win.set_cwnd(cwnd.saturating_add(mss));
            }
        }
        // Linux: cwnd ≥ 2, then ssthresh = tcp_current_ssthresh().
        if self.win.cwnd() < 2 * mss {
            self.win.set_cwnd(2 * mss);
        }
        let s = self.current_ssthresh();
        self.win.set_ssthresh(s);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    /// Linux tcp_vegas.c sets `TCP_CONG_RTT_STAMP` (2.6.22–3.14; read for the facts): µs RTT
    /// samples from the send stamps.
    fn rtt_stamp(&self) -> bool {
        true
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.d.on_ack(ev);
        // tcp_cong_control: cong_avoid runs only outside window reduction and on ACKs of data.
        if ev.in_recovery || ev.bytes_acked == 0 {
            return;
        }
        if !self.d.enabled {
            self.reno(ev);
            return;
        }
        if self.d.rounds.acked_past_mark() {
            // Once per RTT: beg_snd_nxt = snd_nxt, then decide on the round's samples.
            self.d.rounds.advance(ev.in_flight);
            match self.d.rtt.min() {
                Some(min) if self.d.rtt.count() > 2 => self.vegas_update(ev, min),
                // ≤ 2 samples: probably only delayed ACKs, behave like Reno.
                _ => self.reno(ev),
            }
            self.d.rtt.reset();
        } else if self.win.in_slow_start() && may_grow(ev) {
            self.win.slow_start(ev);
        }
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        // .ssthresh = tcp_reno_ssthresh; the Recovery state disables Vegas.
        self.win
            .reno_decrease(self.p.ssthresh_from, ev.in_flight, ev.peer_window);
        self.d.enabled = false;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        let s = self.win.ssthresh();
        self.win.set_cwnd(s);
        // Back to Open: vegas_enable (the next decision waits for a whole fresh round).
        self.enable(0);
    }

    fn on_cwr_complete(&mut self, _now: Nanos) {
        // tcp_complete_cwr's min rule, then the Open state: vegas_enable (tcp_vegas_state).
        let w = self.win.cwnd().min(self.win.ssthresh());
        self.win.set_cwnd(w);
        self.enable(0);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        self.win.reno_timeout(self.p.ssthresh_from, ev);
        self.d.on_rto();
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if !ev.is_retransmission && ev.in_flight <= u64::from(ev.bytes) {
            // CA_EVENT_TX_START (nothing was in flight): tcp_vegas_init before this packet
            // counts in snd_nxt, as Linux raises the event before advancing snd_nxt.
            self.reinit(0);
        }
        self.d.rounds.on_sent(ev);
    }

    fn on_idle_restart(&mut self, _now: Nanos, restart_window: u64) {
        // CA_EVENT_CWND_RESTART: tcp_vegas_init, then the stack's restart window.
        self.reinit(0);
        let w = self.win.cwnd().min(restart_window);
        self.win.set_cwnd(w);
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let vars = [
            ("base_rtt_ms", self.d.base_rtt as f64 / 1e6),
            // −1 before the first decision (the series must stay finite).
            ("diff", self.last_diff.map_or(-1.0, |d| d as f64)),
            ("vegas_on", f64::from(u8::from(self.d.enabled))),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        kind: ParamKind::Int,
        default: "2",
        doc: "grow by one segment per RTT while fewer than alpha packets are queued (Linux 2)",
    },
    ParamInfo {
        name: "beta",
        kind: ParamKind::Int,
        default: "4",
        doc: "shrink by one segment per RTT while more than beta packets are queued (Linux 4); \
              ≥ alpha",
    },
    ParamInfo {
        name: "gamma",
        kind: ParamKind::Int,
        default: "1",
        doc: "leave slow start when more than gamma packets are queued (Linux 1)",
    },
    SSTHRESH_FROM,
];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    let alpha = p.u32("alpha")?;
    let beta = p.u32("beta")?;
    let gamma = p.u32("gamma")?;
    if beta < alpha {
        return Err(p.invalid("beta", beta.to_string(), "must be ≥ alpha"));
    }
    let params = VegasParams {
        alpha,
        beta,
        gamma,
        ssthresh_from: p.ssthresh_from(),
    };
    Ok(Box::new(Vegas::new(init, params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::bottleneck::Bottleneck;
    use crate::testkit::{cc_init, recovery_ack, Driver, MSS, RTT as BASE};
    use crate::{MS, SEC};

    fn vegas(unit: CwndUnit, cwnd_seg: u64, ssthresh_seg: Option<u64>) -> Vegas {
        Vegas::new(
            &cc_init(
                MSS,
                unit,
                0,
                cwnd_seg,
                ssthresh_seg.map_or(u64::MAX, |s| s * u64::from(MSS)),
            ),
            VegasParams::default(),
        )
    }

    fn segs(c: &Vegas) -> u64 {
        c.cwnd() / u64::from(MSS)
    }

    /// The RTT that makes Linux's `diff = ⌊cwnd·(rtt − base)/base⌋` equal `d` at window `w`.
    fn rtt_for_diff(w: u64, d: u64) -> Nanos {
        BASE + BASE * (2 * d + 1) / (2 * w)
    }

    #[test]
    fn test_avoidance_diff_below_alpha_adds_one_segment_per_rtt() {
        // Brakmo & Peterson §3.2: Diff < α → cwnd + 1 per RTT. RTT = baseRTT → diff = 0.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = vegas(unit, 20, Some(10));
            let mut d = Driver::sending(MSS);
            d.steady(&mut cc, BASE, BASE); // first round: baseRTT learnt
            let start = segs(&cc);
            for r in 1..=10 {
                d.steady(&mut cc, BASE, BASE);
                assert_eq!(segs(&cc), start + r, "{unit:?} round {r}");
            }
            assert_eq!(cc.last_diff(), Some(0));
        }
    }

    #[test]
    fn test_avoidance_diff_between_alpha_and_beta_holds() {
        // α ≤ diff ≤ β: "sending just as fast as we should be" — no change.
        for diff in [2, 3, 4] {
            let mut cc = vegas(CwndUnit::Packets, 30, Some(10));
            let mut d = Driver::sending(MSS);
            d.steady(&mut cc, BASE, BASE);
            // A decision at a round's first ACK judges the samples of the round before: the
            // round that switches to the longer RTT still sees diff = 0 and adds one segment.
            let w = segs(&cc) + 1;
            let rtt = rtt_for_diff(w, diff);
            d.steady(&mut cc, rtt, rtt);
            assert_eq!(segs(&cc), w);
            for _ in 0..5 {
                d.steady(&mut cc, rtt, rtt);
                assert_eq!(segs(&cc), w, "diff {diff}");
            }
            assert_eq!(cc.last_diff(), Some(diff));
        }
    }

    #[test]
    fn test_avoidance_diff_above_beta_removes_one_segment_per_rtt() {
        // Diff > β → cwnd − 1 per RTT, and ssthresh follows cwnd down (min(ssthresh, cwnd),
        // then max with ¾·cwnd).
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = vegas(unit, 40, Some(10));
            let mut d = Driver::sending(MSS);
            d.steady(&mut cc, BASE, BASE);
            // RTT = 1.5·base: diff ≈ w/2 ≫ β for every window below. The first round at the
            // new RTT is still judged on the samples before it (diff 0: +1).
            let rtt = BASE * 3 / 2;
            d.steady(&mut cc, rtt, rtt);
            let w = segs(&cc);
            for r in 1..=8 {
                d.steady(&mut cc, rtt, rtt);
                assert_eq!(segs(&cc), w - r, "{unit:?} round {r}");
                assert!(cc.ssthresh() <= cc.cwnd());
            }
        }
    }

    #[test]
    fn test_avoidance_never_below_two_segments() {
        // Linux clamps cwnd ≥ 2 after a decision. At 2 segments a round has only 2 ACKs, so
        // cntRTT ≤ 2 and Reno's rule applies (one segment per window of ACKs): the window
        // cycles between 2 and 3 and never goes below 2.
        let mut cc = vegas(CwndUnit::Packets, 4, Some(2));
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        let mut seen = Vec::new();
        for _ in 0..12 {
            d.steady(&mut cc, 10 * BASE, 10 * BASE);
            seen.push(segs(&cc));
        }
        assert_eq!(*seen.iter().min().unwrap(), 2, "{seen:?}");
        assert!(seen[6..].iter().all(|&w| w <= 3), "{seen:?}");
    }

    #[test]
    fn test_round_with_two_samples_falls_back_to_reno() {
        // cntRTT ≤ 2 (one ACK per half window): Linux calls tcp_reno_cong_avoid instead, so a
        // huge queueing delay does not shrink the window; with 3 samples per round it does.
        let mut cc = vegas(CwndUnit::Packets, 20, Some(10));
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        let w = segs(&cc);
        let rtt = 2 * BASE;
        for _ in 0..5 {
            let per_ack = (segs(&cc) as u32).div_ceil(2);
            d.round_with(&mut cc, rtt, per_ack, |_| rtt);
            assert!(segs(&cc) >= w, "Reno never shrinks without loss");
        }
        let before = segs(&cc);
        let per_ack = (before as u32).div_ceil(3);
        d.round_with(&mut cc, rtt, per_ack, |_| rtt);
        d.round_with(&mut cc, rtt, per_ack, |_| rtt);
        assert!(segs(&cc) < before, "3 samples: Vegas decreases");
    }

    #[test]
    fn test_slow_start_exits_when_diff_above_gamma() {
        // Round 0 at baseRTT (10 → 20 segments), round 1 with every sample at 1.5·baseRTT
        // (20 → 40: its decision still sees round 0's samples). The decision at round 2's first
        // ACK sees min RTT = 1.5·base at cwnd 40: diff = ⌊40·0.5⌋ = 20 > γ, so cwnd =
        // min(40, ⌊40/1.5⌋ + 1) = 27, ssthresh = 27, and congestion avoidance holds it there.
        let mut cc = vegas(CwndUnit::Packets, 10, None);
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        assert_eq!(segs(&cc), 20);
        let rtt = BASE * 3 / 2;
        d.steady(&mut cc, rtt, rtt);
        assert_eq!(segs(&cc), 40);
        assert!(cc.window().in_slow_start());
        d.steady(&mut cc, rtt, rtt);
        assert_eq!(cc.last_diff(), Some(20));
        assert_eq!(segs(&cc), 27);
        assert_eq!(cc.ssthresh(), 27 * u64::from(MSS));
        assert!(!cc.window().in_slow_start());
    }

    #[test]
    fn test_slow_start_continues_when_diff_at_most_gamma() {
        let mut cc = vegas(CwndUnit::Packets, 10, None);
        let mut d = Driver::sending(MSS);
        for r in 0..4 {
            let before = segs(&cc);
            // diff ≤ 1 at every decision: at most one packet queued.
            let rtt = BASE + BASE / (4 * before);
            d.steady(&mut cc, rtt, rtt);
            assert!(cc.window().in_slow_start(), "round {r}");
            assert!(
                segs(&cc) >= 2 * before - 1,
                "round {r}: {before} -> {}",
                segs(&cc)
            );
        }
    }

    #[test]
    fn test_slow_start_exit_sets_window_to_target_plus_one() {
        // Directly at a decision: cwnd 40 in slow start, baseRTT 100 ms, round min RTT 125 ms:
        // diff = ⌊40·25/100⌋ = 10 > γ, target = ⌊40·100/125⌋ = 32 → cwnd = 33, ssthresh 33.
        let mut cc = vegas(CwndUnit::Packets, 40, None);
        cc.d.base_rtt = BASE;
        let ev = AckEvent {
            bytes_acked: 1000,
            packets_acked: 1,
            packets_delivered: 1,
            mss: MSS,
            ..Default::default()
        };
        cc.vegas_update(&ev, BASE * 5 / 4);
        assert_eq!(cc.last_diff(), Some(10));
        assert_eq!(segs(&cc), 33);
        assert_eq!(cc.ssthresh(), 33 * u64::from(MSS));
    }

    #[test]
    fn test_congestion_event_halves_and_disables_until_exit() {
        let mut cc = vegas(CwndUnit::Packets, 40, Some(10));
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        let w = cc.cwnd();
        cc.on_congestion_event(&CongestionEvent {
            in_flight: w,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.ssthresh(), w / 2 / u64::from(MSS) * u64::from(MSS));
        assert!(!cc.enabled());
        // ACKs in recovery do not change the window.
        let c = cc.cwnd();
        cc.on_ack(&recovery_ack(BASE, MSS));
        assert_eq!(cc.cwnd(), c);
        cc.on_recovery_exit(0);
        assert!(cc.enabled());
        assert_eq!(cc.cwnd(), cc.ssthresh());
    }

    #[test]
    fn test_rto_uses_reno_until_loss_state_ends() {
        let mut cc = vegas(CwndUnit::Packets, 20, Some(10));
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        cc.on_rto(&RtoEvent {
            in_flight: cc.cwnd(),
            backoff_count: 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(cc.cwnd(), u64::from(MSS));
        assert!(!cc.enabled());
        // The data outstanding at the timeout (everything sent so far) is acknowledged by the
        // next round's ACKs: Vegas comes back on.
        d.steady(&mut cc, BASE, BASE);
        assert!(cc.enabled());
    }

    #[test]
    fn test_idle_restart_forgets_base_rtt() {
        let mut cc = vegas(CwndUnit::Packets, 20, Some(10));
        let mut d = Driver::sending(MSS);
        d.steady(&mut cc, BASE, BASE);
        assert_eq!(cc.base_rtt(), BASE);
        cc.on_idle_restart(10 * SEC, 4 * u64::from(MSS));
        assert_eq!(cc.base_rtt(), 0);
        assert_eq!(segs(&cc), 4);
    }

    /// Vegas flows on the model bottleneck; returns the mean and extremes of the queue after
    /// `settle`.
    fn run_bottleneck(flows: usize, secs: u64, settle: u64) -> (f64, usize, usize, Vec<u64>) {
        // 10 Mbit/s, 1000-byte packets: 1250 packets/s; base RTT 40 ms: BDP = 50 packets.
        let mut m = Bottleneck::new(10_000_000, MSS);
        for i in 0..flows {
            let cc = Vegas::new(
                &cc_init(MSS, CwndUnit::Packets, u32::MAX, 2, u64::MAX),
                VegasParams::default(),
            );
            m.add_flow(cc, 40 * MS, i as u64 * 10 * MS);
        }
        m.sample_every = 5 * MS;
        m.run_until(secs * SEC);
        let late = m.samples_from(settle * SEC);
        let q = m.mean_backlog_from(settle * SEC);
        let lo = late.iter().map(|s| s.backlog).min().unwrap();
        let hi = late.iter().map(|s| s.backlog).max().unwrap();
        let w = m
            .flows
            .iter()
            .map(|f| f.cc.cwnd() / u64::from(MSS))
            .collect();
        eprintln!("flows {flows}: backlog mean {q:.2} range {lo}..={hi}, cwnd {w:?}");
        (q, lo, hi, w)
    }

    #[test]
    fn test_bottleneck_one_flow_keeps_alpha_to_beta_packets_queued() {
        // Equilibrium of Vegas (Brakmo & Peterson §3.2; Low, Peterson & Wang 2002): the flow
        // keeps between α = 2 and β = 4 packets in the queue (Linux's integer diff: [2, 5)).
        // The backlog (packets waiting behind the one in service) is what diff measures: baseRTT
        // already contains one serialisation. Every sample must lie in [α, β + 1].
        let (q, lo, hi, w) = run_bottleneck(1, 30, 10);
        assert!((2.0..5.0).contains(&q), "mean queue {q}");
        assert!(lo >= 2 && hi <= 5, "queue range {lo}..{hi}");
        // And the window is the BDP (50) plus the queue.
        assert!((52..=55).contains(&w[0]), "cwnd {w:?}");
    }

    #[test]
    fn test_bottleneck_two_flows_each_keep_alpha_to_beta_packets() {
        // Two Vegas flows: 2α ≤ total backlog ≤ 2(β + 1) (integer diff).
        let (q, lo, hi, w) = run_bottleneck(2, 40, 20);
        assert!((4.0..10.0).contains(&q), "mean queue {q}");
        assert!(lo >= 4 && hi <= 10, "queue range {lo}..{hi}");
        assert!(w.iter().sum::<u64>() >= 54, "windows {w:?}");
    }
}
