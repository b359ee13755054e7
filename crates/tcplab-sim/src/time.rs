//! Simulation time: `u64` nanoseconds since the start of the run (docs/design.md §2).
//! f64 seconds appear only in reports.

pub use tcplab_cc::Nanos;

pub const US: Nanos = 1_000;
pub const MS: Nanos = 1_000_000;
pub const SEC: Nanos = 1_000_000_000;

/// Time to serialise `bytes` at `rate_bps`, in picoseconds, rounded up (exact when the rate
/// divides 8e12·bytes; otherwise < 1 ps long, so a link is never faster than its rate).
#[inline]
pub fn tx_time_ps(bytes: u32, rate_bps: u64) -> u64 {
    (bytes as u128 * 8 * 1_000_000_000_000u128).div_ceil(rate_bps as u128) as u64
}

/// Round picoseconds up to whole nanoseconds.
#[inline]
pub fn ps_to_ns_ceil(ps: u64) -> Nanos {
    ps.div_ceil(1000)
}
