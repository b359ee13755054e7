//! Run a normalized config (JSON file) and print per-interval flow samples: a debugging aid.
//! `cargo run --release -p tcplab-sim --example runjson -- config.json`
//! The last line, `run_wall_s`, is the wall time of `run_json` alone (benches/peers.py --runjson).
// A benchmark driver, not the engine: it times the run, which the engine itself never does.
#![allow(clippy::disallowed_methods)]
fn main() {
    let path = std::env::args().nth(1).expect("usage: runjson CONFIG.json");
    let text = std::fs::read_to_string(&path).expect("read config");
    let t0 = std::time::Instant::now();
    let r = tcplab_sim::run_json(&text).unwrap_or_else(|e| panic!("{e}"));
    let wall = t0.elapsed().as_secs_f64();
    let s = &r.series;
    println!(
        "flow time_s goodput_mbps cwnd_seg ssthresh srtt_ms rto_ms inflight rwnd retx fr to dup"
    );
    for i in 0..s.flow.len() {
        println!(
            "{} {:.1} {:.3} {:.1} {:.0} {:.1} {:.0} {:.0} {:.0} {} {} {} {}",
            s.flow[i],
            s.time_ns[i] as f64 / 1e9,
            s.goodput_bps[i] / 1e6,
            s.cwnd_segments[i],
            s.ssthresh_bytes[i],
            s.srtt_ns[i] / 1e6,
            s.rto_ns[i] / 1e6,
            s.in_flight_bytes[i],
            s.rwnd_bytes[i],
            s.retransmits[i],
            s.fast_retransmits[i],
            s.timeouts[i],
            s.dupacks[i]
        );
    }
    println!("sim_packets {} events {}", r.sim_packets, r.events);
    for l in &r.links {
        if l.monitor {
            println!(
                "link {} {} pkts {} drops {} lost {}",
                l.name, l.dir, l.packets, l.drops, l.lost
            );
        }
    }
    println!("run_wall_s {wall:.6}");
}
