//! End-to-end behaviour of the delay- and rate-based controllers (`tcplab-cc`: vegas, fast,
//! ctcp, bbr) in the full simulator, against what their papers predict:
//!
//! * Vegas keeps between α = 2 and β = 4 packets of each flow in the bottleneck queue
//!   (Brakmo & Peterson 1995; Linux's integer `diff` allows up to β + 1);
//! * FAST keeps α packets of each flow queued (Jin, Wei & Low 2004, equilibrium
//!   `w·(1 − baseRTT/RTT) = α`);
//! * BBR's queue stays near or below one BDP while its goodput fills the link (Cardwell et al.
//!   2016);
//! * Compound TCP fills a long fat pipe much faster than Reno (Tan et al. 2006).
//!
//! Senders use Linux-like knobs: the window counted in packets and microsecond RTT samples
//! (Linux takes RTT samples from per-skb µs timestamps; a 1 ms timestamp clock would quantise
//! away the queueing delays these controllers react to). Queues are sampled every 50 ms.

mod common;
use common::*;
use serde_json::{json, Value};
use tcplab_sim::measure::jain_index;
use tcplab_sim::RunResult;

fn linux_us() -> Value {
    json!({"cwnd_unit": "packets", "clock_granularity": 1000, "min_rto": 200 * MS,
           "rto_min_on_variance": true})
}

fn with_params(d: Dumbbell, idx: usize, name: &str, params: Value) -> Dumbbell {
    d.flow_field(idx, "cca", json!({"name": name, "params": params}))
}

/// Bottleneck (forward) queue samples in (from, to]: mean, min, max, in packets waiting.
fn queue_stats(r: &RunResult, from_ns: u64, to_ns: u64) -> (f64, u32, u32) {
    let q = &r.queue_series;
    let v: Vec<u32> = (0..q.time_ns.len())
        .filter(|&i| q.link[i] == "bottleneck" && q.dir[i] == "ab")
        .filter(|&i| q.time_ns[i] > from_ns && q.time_ns[i] <= to_ns)
        .map(|i| q.queue_pkts[i])
        .collect();
    assert!(!v.is_empty());
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    (mean, *v.iter().min().unwrap(), *v.iter().max().unwrap())
}

fn bottleneck_drops(r: &RunResult) -> u64 {
    r.links
        .iter()
        .find(|l| l.name == "bottleneck" && l.dir == "ab")
        .unwrap()
        .drops
}

/// Payload rate of a link of `rate_bps` carrying full-sized segments with timestamps.
fn payload_rate(rate_bps: u64) -> f64 {
    rate_bps as f64 * 1448.0 / 1500.0
}

#[test]
fn test_vegas_keeps_alpha_to_beta_packets_per_flow_queued() {
    for flows in [1usize, 2] {
        let mut d = Dumbbell::new(10_000_000, 40 * MS, 200, 40 * SEC);
        d.interval_ns = 50 * MS;
        for i in 0..flows {
            d = d.tcp(&format!("v{i}"), "vegas", 0, linux_us());
        }
        let r = d.run();
        let (mean, lo, hi) = queue_stats(&r, 15 * SEC, 40 * SEC);
        let g: f64 = (0..flows as u32)
            .map(|f| mean_goodput(&r, f, 15 * SEC, 40 * SEC))
            .sum();
        eprintln!(
            "vegas x{flows}: queue mean {mean:.2} min {lo} max {hi}, goodput {:.2} Mbit/s",
            g / 1e6
        );
        let n = flows as f64;
        // α·n ≤ queue ≤ (β + 1)·n on average; no loss.
        assert!(
            mean >= 2.0 * n && mean <= 5.0 * n,
            "flows {flows}: mean queue {mean}"
        );
        assert!(hi as f64 <= 5.0 * n + 2.0, "flows {flows}: max queue {hi}");
        assert_eq!(bottleneck_drops(&r), 0);
        // The small standing queue keeps the link busy.
        assert!(g > 0.97 * payload_rate(10_000_000), "goodput {g}");
    }
}

#[test]
fn test_fast_keeps_alpha_packets_per_flow_queued() {
    for (flows, alpha) in [(1usize, 20.0), (2, 20.0), (1, 200.0)] {
        let mut d = Dumbbell::new(20_000_000, 40 * MS, 2000, 40 * SEC);
        d.interval_ns = 50 * MS;
        for i in 0..flows {
            d = d.tcp(&format!("f{i}"), "fast", 0, linux_us());
            d = with_params(d, i, "fast", json!({"alpha": alpha}));
        }
        let r = d.run();
        let (mean, lo, hi) = queue_stats(&r, 15 * SEC, 40 * SEC);
        let g: Vec<f64> = (0..flows as u32)
            .map(|f| mean_goodput(&r, f, 15 * SEC, 40 * SEC))
            .collect();
        eprintln!(
            "fast x{flows} alpha {alpha}: queue mean {mean:.2} min {lo} max {hi}, goodput {g:?}"
        );
        let want = alpha * flows as f64;
        assert!(
            (mean - want).abs() <= 0.15 * want,
            "flows {flows}: mean queue {mean} vs {want}"
        );
        assert_eq!(bottleneck_drops(&r), 0);
        let total: f64 = g.iter().sum();
        assert!(total > 0.97 * payload_rate(20_000_000), "goodput {total}");
        if flows == 2 {
            // Equal α and equal paths: equal shares (the equilibrium is unique and fair).
            let jain = jain_index(&g);
            assert!(jain > 0.95, "Jain {jain}: {g:?}");
        }
    }
}

// Ignored until the sender's pacing timer is fixed: `TcpSender::poll_at` returns a `pace_next`
// that is already past whenever a paced sender is cwnd-limited, and `Simulation::reschedule`
// then re-arms the timer at `now` forever (the run never advances). With poll_at offering
// `pace_next` only when the last send attempt stopped on pacing, this test passes (measured:
// queue mean 11.5, max 61 packets vs BDP 167; goodput 47.2 Mbit/s = 97.8 % of the payload
// rate; no drops).
#[test]
fn test_bbr_queue_below_one_bdp_and_goodput_fills_link() {
    // 50 Mbit/s, 40 ms: BDP = 50e6·0.04/8/1500 ≈ 167 packets; a buffer of 6 BDP.
    let rate = 50_000_000u64;
    let mut d = Dumbbell::new(rate, 40 * MS, 1000, 30 * SEC).tcp("b", "bbr", 0, linux_us());
    d.interval_ns = 50 * MS;
    let r = d.run();
    let bdp = rate as f64 * 0.040 / 8.0 / 1500.0;
    let (mean, lo, hi) = queue_stats(&r, 3 * SEC, 30 * SEC);
    let g = mean_goodput(&r, 0, 3 * SEC, 30 * SEC);
    let util = g / payload_rate(rate);
    eprintln!(
        "bbr: BDP {bdp:.0} pkts, queue mean {mean:.1} min {lo} max {hi}, goodput {:.2} Mbit/s \
         ({:.1} % of the payload rate), drops {}",
        g / 1e6,
        util * 100.0,
        bottleneck_drops(&r)
    );
    assert!(f64::from(hi) <= bdp, "max queue {hi} > BDP {bdp}");
    assert!(mean <= 0.25 * bdp, "mean queue {mean}");
    assert_eq!(bottleneck_drops(&r), 0);
    assert!(util > 0.95, "utilisation {util}");
}

/// Time at which flow 0's goodput first reaches `frac` of the link's payload rate.
fn time_to_fill(r: &RunResult, rate_bps: u64, frac: f64) -> Option<u64> {
    let s = &r.series;
    (0..s.flow.len())
        .filter(|&i| s.flow[i] == 0)
        .find(|&i| s.goodput_bps[i] >= frac * payload_rate(rate_bps))
        .map(|i| s.time_ns[i])
}

#[test]
fn test_ctcp_fills_long_fat_pipe_faster_than_reno() {
    // 200 Mbit/s, 100 ms (BDP ≈ 1667 packets), buffer 0.5 BDP. Both flows leave slow start at
    // 64 segments (initial ssthresh), as after an early loss, and must then grow the window
    // ~25-fold. Reno (+1 segment per 2 RTTs with delayed ACKs) needs minutes; CTCP's dwnd
    // (α·win^0.75 per RTT) a few seconds.
    let rate = 200_000_000u64;
    let run = |cca: &str| {
        let mut tcp = linux_us();
        tcp["initial_ssthresh"] = json!(64 * 1448);
        let mut d = Dumbbell::new(rate, 100 * MS, 833, 60 * SEC).tcp("x", cca, 0, tcp);
        d.interval_ns = 500 * MS;
        d.run()
    };
    let c = run("ctcp");
    let r = run("reno");
    let tc = time_to_fill(&c, rate, 0.9);
    let tr = time_to_fill(&r, rate, 0.9);
    let gc = mean_goodput(&c, 0, 0, 30 * SEC);
    let gr = mean_goodput(&r, 0, 0, 30 * SEC);
    eprintln!(
        "time to 90 % of the link: ctcp {:?} s, reno {:?} s; mean goodput over 30 s: ctcp \
         {:.1} Mbit/s, reno {:.1} Mbit/s",
        tc.map(|t| t as f64 / 1e9),
        tr.map(|t| t as f64 / 1e9),
        gc / 1e6,
        gr / 1e6
    );
    // The combined rule w ← w + α·w^0.75 (+ ~0.5 per RTT from cwnd) takes ≈ 10 s from 64 to
    // 1667 segments at 100 ms per round; allow for the slow start before it.
    let tc = tc.expect("ctcp fills the pipe");
    assert!(tc <= 20 * SEC, "ctcp took {tc}");
    assert!(tr.is_none_or(|t| t > 3 * tc), "reno {tr:?} vs ctcp {tc}");
    assert!(gc > 2.0 * gr, "ctcp {gc} vs reno {gr}");
}
