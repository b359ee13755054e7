//! tcplab's userspace link emulator (issue: "Real-kernel engine", path emulation without netem).
//!
//! The kernel engine (python/tcplab/kernel) puts one interface of every emulated link's veth pairs
//! into one "emulator" network namespace and runs this emulator there. For each link it bridges
//! the two interfaces at layer 2 through AF_PACKET sockets, applying the link direction's rate,
//! one-way delay, drop-tail queue limit and random loss with the same model as the simulator's
//! channel ([`pipe`]), measures how precisely it kept to that schedule, and reports per-direction
//! counters, queue samples and its self-check ([`serve::Report`]).
//!
//! Entry points: [`serve_json`] (used by `tcplab._core.linkem_serve` and the `tcplab-linkem`
//! binary). Control is line-based on standard input: `start <t0 CLOCK_MONOTONIC ns>` sets the
//! experiment's time zero (queue samples are taken at `t0 + k·interval`), `stop` or end of file
//! ends the run; `ready <epoch>` is printed on standard output once every socket is bound.

pub mod config;
pub mod hist;
pub mod pipe;
pub mod serve;
pub mod sys;
pub mod tcpobs;

pub use config::EmuConfig;
pub use serve::{serve, serve_json, Report};
