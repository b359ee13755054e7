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
    // In 64 bits while `bytes · 8e12` fits (every packet: up to 2.3 MB), the same quotient
    // without a 128-bit division (a `__udivti3` call, ≈ 2 % of a run on such a link).
    const FITS: u32 = (u64::MAX / 8_000_000_000_000) as u32;
    if bytes <= FITS {
        return (bytes as u64 * 8_000_000_000_000).div_ceil(rate_bps);
    }
    (bytes as u128 * 8 * 1_000_000_000_000u128).div_ceil(rate_bps as u128) as u64
}

/// Round picoseconds up to whole nanoseconds.
#[inline]
pub fn ps_to_ns_ceil(ps: u64) -> Nanos {
    ps.div_ceil(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_tx_time_ps_matches_the_128_bit_quotient() {
        let full = |b: u32, r: u64| ((b as u128 * 8_000_000_000_000).div_ceil(r as u128)) as u64;
        let rates = [
            1,
            3,
            999_999,
            980_000_000,
            1_000_000_000,
            7_919_000_013,
            u64::MAX,
        ];
        let sizes = [
            0,
            1,
            52,
            1500,
            65_535,
            2_305_843,
            2_305_844,
            10_000_000,
            u32::MAX,
        ];
        for r in rates {
            for b in sizes {
                assert_eq!(tx_time_ps(b, r), full(b, r), "{b} bytes at {r} bit/s");
            }
        }
    }
}
