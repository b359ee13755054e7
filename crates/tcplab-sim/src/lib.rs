//! # tcplab-sim: a deterministic packet-level simulator of TCP
//!
//! A discrete-event simulator of hosts and routers joined by point-to-point links, with real TCP
//! connections (handshake and options, byte sequence numbers, SACK, RFC 6675 / NewReno recovery,
//! RFC 6298 timers, delayed ACKs) whose congestion control comes from `tcplab-cc`, and UDP
//! constant-bit-rate sources. It is sans-I/O: no clocks, no OS randomness, no threads; time is
//! `u64` nanoseconds; events have a documented total order; every random consumer has its own
//! stream derived from the trial seed and its stable name (docs/design.md §2).
//!
//! ```
//! let json = r#"{
//!   "seed": 1, "duration_ns": 2000000000,
//!   "nodes": [{"name":"a","kind":"host"},{"name":"b","kind":"host"}],
//!   "links": [{"name":"l","a":"a","b":"b",
//!              "ab":{"rate_bps":10000000,"delay_ns":10000000,"queue":{"limit_pkts":100}},
//!              "ba":{"rate_bps":10000000,"delay_ns":10000000,"queue":{"limit_pkts":100}}}],
//!   "flows": [{"name":"f","kind":"tcp","src":"a","dst":"b","cca":{"name":"reno"}}]
//! }"#;
//! let r = tcplab_sim::run_json(json).unwrap();
//! assert!(r.flows[0].bytes_delivered > 1_000_000);
//! ```

// `deny`, not `forbid`: exactly one function, `cache::prefetch` (a cache hint, its soundness argued
// there), opts in with `#[allow(unsafe_code)]`; everything else stays safe code.
#![deny(unsafe_code)]

pub mod background;
pub mod cache;
pub mod config;
pub mod emuthread;
pub mod endpoint;
pub mod event;
pub mod host;
pub mod link;
pub mod measure;
pub mod net;
pub mod packet;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod udp;

pub use config::{Config, ConfigError};
pub use sim::{run_json, RunResult, Simulation};
