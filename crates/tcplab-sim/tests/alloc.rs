//! The hot path allocates nothing per packet, and background traffic nothing per connection:
//! heap allocations counted during steady-state runs with a counting global allocator (crate
//! `tcplab-testalloc`). Growth of amortised buffers (series columns, ring buffers, a background
//! source's pool of connection slots) is allowed; it must be negligible per packet and per
//! connection.

mod common;
use common::*;
use serde_json::json;
use tcplab_testalloc::{allocations, exclusive};

#[global_allocator]
static A: tcplab_testalloc::Counting = tcplab_testalloc::Counting;

#[test]
fn test_no_per_packet_allocation() {
    let _only_me = exclusive();
    let mut d = Dumbbell::new(100_000_000, 50 * MS, 100, 60 * SEC)
        .tcp("a", "cubic", 0, json!({}))
        .tcp("b", "newreno", 0, json!({"sack": false}));
    d.fwd_loss = json!({"model": "bernoulli", "p": 0.0002});
    let cfg = tcplab_sim::Config::from_json(&d.config().to_string()).unwrap();
    let mut sim = tcplab_sim::Simulation::new(&cfg).unwrap();
    // Warm-up: buffers reach their working size.
    sim.run_until(10 * SEC);
    let before = allocations();
    let p0 = sim.data_delivered;
    sim.run();
    let allocs = allocations() - before;
    let packets = sim.data_delivered - p0;
    let per_packet = allocs as f64 / packets as f64;
    eprintln!("{allocs} allocations for {packets} delivered packets ({per_packet:.6} per packet)");
    assert!(packets > 100_000);
    assert!(per_packet < 0.001, "{per_packet} allocations per packet");
}

#[test]
fn test_no_per_connection_allocation_of_background_mice() {
    // Many short connections (mean 20 kB, 300 a second) of two algorithms, on a lossy path so
    // that they retransmit and their receivers hold out-of-order data, with timer slack on
    // the CUBIC senders; a bulk flow beside them.
    let _only_me = exclusive();
    let mut d =
        Dumbbell::new(100_000_000, 40 * MS, 200, 100 * SEC).tcp("bulk", "cubic", 0, json!({}));
    d.fwd_loss = json!({"model": "bernoulli", "p": 0.003});
    let mut cfg = d.config();
    let mice = |name: &str, cca: &str, tcp: serde_json::Value| {
        json!({"name": name, "kind": "tcp", "src": "s0", "dst": "d0", "load_bps": 25_000_000,
               "size_shape": 1.2, "size_min": 6_000, "size_max": 2_000_000,
               "cca": {"name": cca}, "tcp": tcp})
    };
    cfg["background"] = json!([
        mice(
            "web",
            "cubic",
            json!({"sack": true, "timer_slack": 2_000_000})
        ),
        mice("old", "newreno", json!({"sack": false})),
    ]);
    let cfg = tcplab_sim::Config::from_json(&cfg.to_string()).unwrap();
    let mut sim = tcplab_sim::Simulation::new(&cfg).unwrap();
    // Warm-up: the pools reach their working size.
    sim.run_until(20 * SEC);
    let (a0, c0) = (allocations(), sim.background_connections());
    sim.run_until(60 * SEC);
    let (a1, c1) = (allocations(), sim.background_connections());
    sim.run();
    let (a2, c2) = (allocations(), sim.background_connections());
    let per_conn = (a2 - a0) as f64 / (c2 - c0) as f64;
    eprintln!(
        "{} and {} allocations for {} and {} connections ({per_conn:.4} per connection)",
        a1 - a0,
        a2 - a1,
        c1 - c0,
        c2 - c1
    );
    assert!(c2 - c0 > 15_000, "{} connections", c2 - c0);
    // A connection built anew costs about 11 allocations (sender, receiver, their buffers, the
    // controller twice, the timer slack); renewed in a pool slot, none. What remains is the bulk
    // flow's series and a slot added to a pool at a new peak of open connections (measured:
    // 0.011 per connection).
    assert!(per_conn < 0.05, "{per_conn} allocations per connection");
}
