#![allow(unsafe_code)] // the counting allocator below
//! The hot path allocates nothing per packet: count heap allocations during a steady-state run
//! with a counting global allocator. Growth of amortised buffers (series columns, ring buffers)
//! is allowed; it must be negligible per packet.

mod common;
use common::*;
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call unchanged to the system allocator; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn test_no_per_packet_allocation() {
    let mut d = Dumbbell::new(100_000_000, 50 * MS, 100, 60 * SEC)
        .tcp("a", "cubic", 0, json!({}))
        .tcp("b", "newreno", 0, json!({"sack": false}));
    d.fwd_loss = json!({"model": "bernoulli", "p": 0.0002});
    let cfg = tcplab_sim::Config::from_json(&d.config().to_string()).unwrap();
    let mut sim = tcplab_sim::Simulation::new(&cfg).unwrap();
    // Warm-up: buffers reach their working size.
    sim.run_until(10 * SEC);
    let before = ALLOCS.load(Ordering::Relaxed);
    let p0 = sim.data_delivered;
    sim.run();
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    let packets = sim.data_delivered - p0;
    let per_packet = allocs as f64 / packets as f64;
    eprintln!("{allocs} allocations for {packets} delivered packets ({per_packet:.6} per packet)");
    assert!(packets > 100_000);
    assert!(per_packet < 0.001, "{per_packet} allocations per packet");
}
