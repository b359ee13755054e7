//! TCP Westwood+ (Mascolo, Casetti, Gerla et al., "TCP Westwood: Bandwidth Estimation for
//! Enhanced Transport over Wireless Links", MobiCom 2001; Grieco & Mascolo, "Performance
//! evaluation and comparison of Westwood+, New Reno, and Vegas TCP congestion control",
//! CCR 34(2), 2004; L: net/ipv4/tcp_westwood.c; stacks-and-ccas.md A.10).
//!
//! Reno's probing (slow start, +1 segment per RTT), but the window after a loss comes from an
//! end-to-end bandwidth estimate instead of halving:
//!
//! * **Bandwidth samples** (Linux `westwood_update_window`, `westwood_filter`): acknowledged
//!   bytes `bk` are accumulated; when more than `max(RTT, 50 ms)` has passed since the sample
//!   window opened (RTT = the latest RTT sample, 20 s before any), the sample `bk/Δt` enters two
//!   cascaded 7/8 EWMAs — `bw_ns ← (7·bw_ns + sample)/8`, `bw ← (7·bw + bw_ns)/8` (the first
//!   sample fills both) — and a new window opens. The ≥ 50 ms floor keeps samples from short
//!   RTTs meaningful (Westwood+, Grieco & Mascolo 2004).
//! * **Acknowledged bytes** (`westwood_acked_count`): a cumulative ACK counts the bytes it
//!   acknowledges; a duplicate ACK (nothing cumulatively acknowledged) counts one MSS as
//!   delivered and remembers it (`accounted`); a later cumulative ACK covering more than one
//!   MSS subtracts what was already counted (a delayed or recovery ACK counts only its news).
//! * **RTTmin**: minimum of the RTT samples, restarted at the next ACK after an RTO.
//!   (Linux updates it from the previous ACK's sample: `in_ack_event` runs before
//!   `pkts_acked`; kept.)
//! * **Congestion event**: `ssthresh = max(basis/2, 2)` (`.ssthresh = tcp_reno_ssthresh`), so
//!   recovery runs with Reno's halving; at the end of recovery (`CA_EVENT_COMPLETE_CWR`)
//!   `cwnd = ssthresh = max(bw·RTTmin/MSS, 2)` segments.
//! * **RTO** (`CA_EVENT_LOSS`, first timeout only): `ssthresh = max(bw·RTTmin/MSS, 2)`, RTTmin
//!   restarts; cwnd 1 segment.
//!
//! Packets unit: the window `⌊bw·RTTmin/MSS⌋` segments; bytes unit: `bw·RTTmin` bytes.
//! The estimate is kept in bytes per second (Linux: bytes per jiffy, integer).

use crate::growth::{SsthreshBasis, WindowState};
use crate::params::{ParamInfo, Params, SSTHRESH_FROM};
use crate::registry::CcError;
use crate::{AckEvent, CcInit, CongestionControl, CongestionEvent, Nanos, RtoEvent, MS, SEC};

/// Linux `TCP_WESTWOOD_RTT_MIN`: samples span at least 50 ms.
const MIN_SAMPLE_WINDOW: Nanos = 50 * MS;
/// Linux `TCP_WESTWOOD_INIT_RTT`: RTT assumed before the first sample (20 s).
const INIT_RTT: Nanos = 20 * SEC;

/// Westwood+.
#[derive(Clone, Debug)]
pub struct Westwood {
    win: WindowState,
    basis: SsthreshBasis,
    /// First-stage and final bandwidth estimates, bytes per second.
    bw_ns_est: f64,
    bw_est: f64,
    /// Bytes acknowledged in the open sample window.
    bk: u64,
    /// Start of the open sample window.
    win_start: Option<Nanos>,
    /// Latest RTT sample and the minimum.
    rtt: Nanos,
    rtt_min: Nanos,
    reset_rtt_min: bool,
    /// Bytes already counted for duplicate ACKs.
    accounted: u64,
    samples: u64,
}

impl Westwood {
    pub fn new(init: &CcInit, basis: SsthreshBasis) -> Self {
        Westwood {
            win: WindowState::new(init),
            basis,
            bw_ns_est: 0.0,
            bw_est: 0.0,
            bk: 0,
            win_start: None,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            reset_rtt_min: true,
            accounted: 0,
            samples: 0,
        }
    }

    pub fn window(&self) -> &WindowState {
        &self.win
    }
    /// Bandwidth estimate, bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.bw_est
    }
    /// First EWMA stage, bytes per second.
    pub fn bandwidth_first_stage(&self) -> f64 {
        self.bw_ns_est
    }
    /// Number of bandwidth samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
    pub fn rtt_min(&self) -> Nanos {
        self.rtt_min
    }

    /// `max(bw·RTTmin/MSS, 2)` segments as bytes (`tcp_westwood_bw_rttmin`); the 2-segment floor
    /// is [`WindowState::set_ssthresh`]'s.
    fn bw_rttmin(&self) -> u64 {
        let bytes = self.bw_est * self.rtt_min as f64 / SEC as f64;
        let bytes = if bytes.is_finite() && bytes > 0.0 {
            bytes.min(u64::MAX as f64) as u64
        } else {
            0
        };
        // set_ssthresh rounds down to whole segments in the packets unit (Linux's division).
        bytes
    }

    fn update_window(&mut self, now: Nanos) {
        let start = *self.win_start.get_or_insert(now);
        let delta = now.saturating_sub(start);
        if self.rtt > 0 && delta > self.rtt.max(MIN_SAMPLE_WINDOW) {
            let sample = self.bk as f64 * SEC as f64 / delta as f64;
            if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = (7.0 * self.bw_ns_est + sample) / 8.0;
                self.bw_est = (7.0 * self.bw_est + self.bw_ns_est) / 8.0;
            }
            self.samples += 1;
            self.bk = 0;
            self.win_start = Some(now);
        }
    }

    /// Linux `westwood_acked_count`.
    fn acked_count(&mut self, bytes_acked: u64) -> u64 {
        let mss = self.win.mss();
        let mut cum = bytes_acked;
        if cum == 0 {
            // Duplicate ACK: one segment left the network.
            self.accounted = self.accounted.saturating_add(mss);
            cum = mss;
        } else if cum > mss {
            // Partial or delayed ACK: do not count twice what dupACKs already counted.
            if self.accounted >= cum {
                self.accounted -= cum;
                cum = mss;
            } else {
                cum -= self.accounted;
                self.accounted = 0;
            }
        }
        cum
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        // tcp_westwood_ack (in_ack_event, before this ACK's RTT sample is seen).
        self.update_window(ev.now);
        let counted = self.acked_count(ev.bytes_acked);
        self.bk = self.bk.saturating_add(counted);
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
        // tcp_westwood_pkts_acked.
        if let Some(s) = ev.rtt_sample {
            if s > 0 {
                self.rtt = s;
            }
        }
        // Reno probing (tcp_reno_cong_avoid).
        self.win.reno_on_ack(ev);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.win
            .reno_decrease(self.basis, ev.in_flight, ev.peer_window);
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        // CA_EVENT_COMPLETE_CWR: cwnd = ssthresh = bw·RTTmin.
        let w = self.bw_rttmin();
        self.win.set_ssthresh(w);
        let s = self.win.ssthresh();
        self.win.set_cwnd(s);
    }

    fn on_cwr_complete(&mut self, now: Nanos) {
        // tcp_complete_cwr's min rule, then CA_EVENT_COMPLETE_CWR: cwnd = ssthresh = bw·RTTmin
        // (tcp_westwood_event), which overrides the min.
        self.on_recovery_exit(now);
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        if ev.sets_ssthresh() {
            // CA_EVENT_LOSS overrides tcp_reno_ssthresh (both only where tcp_enter_loss calls
            // the controller: the stack's gate, RtoEvent::sets_ssthresh).
            let w = self.bw_rttmin();
            self.win.set_ssthresh(w);
            self.reset_rtt_min = true;
        }
        self.win.on_timeout();
    }

    crate::growth::delegate_window!();

    fn debug_vars(&self, extra: &mut [(&'static str, f64)]) -> usize {
        let vars = [
            ("bw_bps", self.bw_est * 8.0),
            ("rtt_min_ms", self.rtt_min as f64 / 1e6),
        ];
        crate::write_debug_vars(extra, &vars)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry.

pub(crate) const PARAMS: &[ParamInfo] = &[SSTHRESH_FROM];

pub(crate) fn build(p: &Params, init: &CcInit) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(Westwood::new(init, p.ssthresh_from())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cc_init, MSS};
    use crate::CwndUnit;

    fn westwood(unit: CwndUnit) -> Westwood {
        Westwood::new(
            &cc_init(MSS, unit, 0, 10, 2 * u64::from(MSS)),
            SsthreshBasis::Auto,
        )
    }

    fn ack(now: Nanos, bytes: u64, rtt: Nanos) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: bytes,
            packets_acked: (bytes / u64::from(MSS)) as u32,
            packets_delivered: (bytes / u64::from(MSS)) as u32,
            rtt_sample: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            mss: MSS,
            ..Default::default()
        }
    }

    /// A constant stream: one MSS every `gap` from `from` to `to`, RTT samples `rtt`.
    fn stream(cc: &mut Westwood, from: Nanos, to: Nanos, gap: Nanos, rtt: Nanos) {
        let mut t = from;
        while t < to {
            cc.on_ack(&ack(t, u64::from(MSS), rtt));
            t += gap;
        }
    }

    #[test]
    fn test_bandwidth_estimate_converges_to_ack_rate() {
        // 1000 B every 1 ms = 1 MB/s. Samples span just over max(RTT, 50 ms): the bytes of
        // that span over its length, within one ACK (1/51).
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = westwood(unit);
            stream(&mut cc, 0, 3 * SEC, MS, 100 * MS);
            let bw = cc.bandwidth();
            assert!((bw / 1e6 - 1.0).abs() <= 1.0 / 51.0, "{unit:?}: {bw}");
        }
    }

    #[test]
    fn test_samples_span_at_least_max_rtt_and_50ms() {
        // Over 1 s of ACKs every ms: with RTT 20 ms a sample closes on the first ACK more than
        // 50 ms after the window opened (every 51 ms: 19 samples); with RTT 200 ms every
        // 201 ms (4). The first window opens at the first ACK.
        for (rtt, want) in [(20 * MS, 1000 / 51), (200 * MS, 1000 / 201)] {
            let mut cc = westwood(CwndUnit::Packets);
            stream(&mut cc, 0, SEC, MS, rtt);
            assert_eq!(cc.samples(), want as u64, "RTT {}", rtt / MS);
        }
    }

    #[test]
    fn test_two_stage_ewma_on_rate_step() {
        // Two 7/8 EWMAs in cascade (Linux westwood_do_filter): after a step from r1 to r2 the
        // first sample moves bw_ns by 1/8 of the step and bw by 1/64.
        let mut cc = westwood(CwndUnit::Packets);
        // RTT 100 ms: samples every 101 ms. 1 MB/s for 20 samples (settled).
        let mut t = 0;
        while cc.samples() < 20 {
            cc.on_ack(&ack(t, u64::from(MSS), 100 * MS));
            t += MS;
        }
        let n = cc.samples();
        let (r1_ns, r1) = (cc.bandwidth_first_stage(), cc.bandwidth());
        assert!((r1 / 1e6 - 1.0).abs() < 0.02);
        // Then 2 MB/s (an MSS every 0.5 ms) for exactly one more sample.
        t -= MS / 2;
        while cc.samples() == n {
            cc.on_ack(&ack(t, u64::from(MSS), 100 * MS));
            t += MS / 2;
        }
        let ns = cc.bandwidth_first_stage();
        let bw = cc.bandwidth();
        // The sample spans the switch: mostly at 2 MB/s; compute it from the estimate's own
        // first stage and check the second stage follows bw = (7·bw + bw_ns)/8.
        let sample = 8.0 * ns - 7.0 * r1_ns;
        assert!(sample > 1.5e6 && sample < 2.05e6, "{sample}");
        assert!((bw - (7.0 * r1 + ns) / 8.0).abs() < 1e-6 * bw, "{bw}");
    }

    #[test]
    fn test_recovery_exit_sets_window_to_bandwidth_delay_product() {
        // 1 MB/s with RTTmin 100 ms: BDP 100 000 B = 100 segments. The congestion event
        // halves (Reno) for the recovery; its end sets cwnd = ssthresh = bw·RTTmin/MSS.
        for unit in [CwndUnit::Packets, CwndUnit::Bytes] {
            let mut cc = westwood(unit);
            stream(&mut cc, 0, 3 * SEC, MS, 100 * MS);
            cc.set_cwnd(300_000);
            cc.on_congestion_event(&CongestionEvent {
                in_flight: 300_000,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(cc.ssthresh(), 150_000, "{unit:?}");
            cc.on_recovery_exit(3 * SEC);
            let want = cc.bandwidth() * 0.1;
            let got = cc.cwnd() as f64;
            assert_eq!(cc.cwnd(), cc.ssthresh());
            assert!(
                (got - want).abs() <= f64::from(MSS),
                "{unit:?}: {got} vs {want}"
            );
            assert!((got / 100_000.0 - 1.0).abs() <= 0.03, "{unit:?}: {got}");
        }
    }

    #[test]
    fn test_rto_sets_ssthresh_to_bdp_and_restarts_rtt_min() {
        let mut cc = westwood(CwndUnit::Packets);
        stream(&mut cc, 0, 3 * SEC, MS, 100 * MS);
        cc.on_rto(&RtoEvent {
            now: 3 * SEC,
            in_flight: 300_000,
            backoff_count: 1,
            mss: MSS,
            peer_window: u64::MAX,
            in_recovery: false,
            keeps_ssthresh: false,
        });
        assert_eq!(cc.cwnd(), u64::from(MSS));
        let s = cc.ssthresh() as f64;
        assert!((s / 100_000.0 - 1.0).abs() <= 0.03, "{s}");
        assert_eq!(cc.rtt_min(), 100 * MS);
        // The path's RTT rose to 150 ms before the timeout: RTTmin restarts from the latest
        // sample (Linux: reset_rtt_min takes w->rtt on the next ACK) and 150 ms takes over.
        let mut cc = westwood(CwndUnit::Packets);
        stream(&mut cc, 0, 3 * SEC, MS, 100 * MS);
        stream(&mut cc, 3 * SEC, 3 * SEC + 10 * MS, MS, 150 * MS);
        assert_eq!(cc.rtt_min(), 100 * MS);
        cc.on_rto(&RtoEvent {
            now: 4 * SEC,
            in_flight: 300_000,
            backoff_count: 1,
            mss: MSS,
            peer_window: u64::MAX,
            in_recovery: false,
            keeps_ssthresh: false,
        });
        stream(&mut cc, 5 * SEC, 5 * SEC + 10 * MS, MS, 150 * MS);
        assert_eq!(cc.rtt_min(), 150 * MS);
    }

    #[test]
    fn test_no_estimate_gives_two_segments() {
        // No bandwidth sample yet: max(0, 2) segments.
        let mut cc = westwood(CwndUnit::Bytes);
        cc.on_congestion_event(&CongestionEvent {
            in_flight: 10_000,
            mss: MSS,
            ..Default::default()
        });
        cc.on_recovery_exit(0);
        assert_eq!(cc.cwnd(), 2 * u64::from(MSS));
    }

    #[test]
    fn test_duplicate_acks_count_one_segment_and_are_not_double_counted() {
        // Three dupACKs count 3 MSS; the cumulative ACK for 4 MSS then counts only 1 MSS.
        let mut cc = westwood(CwndUnit::Packets);
        for _ in 0..3 {
            assert_eq!(cc.acked_count(0), 1000);
        }
        assert_eq!(cc.acked_count(4000), 1000);
        assert_eq!(cc.acked_count(3000), 3000);
    }
}
