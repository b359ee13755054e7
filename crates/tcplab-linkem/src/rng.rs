//! Random streams of the loss models: xoshiro256** (Blackman & Vigna, "Scrambled linear
//! pseudorandom number generators", 2018) seeded through SplitMix64, one stream per link direction,
//! derived from the run's seed and the direction's stable name (as docs/design.md §2 does for the
//! simulator), so the draws of one direction do not depend on which other links exist.

/// SplitMix64 step (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the bytes (a stable, platform-independent name hash).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream of entity `name` under run seed `seed`.
    pub fn for_entity(seed: u64, name: &str) -> Rng {
        let mut st = seed ^ fnv1a(name.as_bytes()).rotate_left(17);
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        Rng { s }
    }

    /// Next 64 random bits (xoshiro256**).
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.next_f64() < p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_rng_streams_are_stable_and_distinct() {
        let mut a = Rng::for_entity(1, "bn.ab");
        let mut b = Rng::for_entity(1, "bn.ab");
        let mut c = Rng::for_entity(1, "bn.ba");
        let va: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn test_rng_chance_frequency() {
        let mut r = Rng::for_entity(7, "x");
        let n = 200_000;
        let hits = (0..n).filter(|_| r.chance(0.01)).count() as f64;
        // Binomial(200000, 0.01): mean 2000, sd ≈ 44.5; ±5 sd.
        assert!((hits - 2000.0).abs() < 225.0, "hits {hits}");
        assert!(!r.chance(0.0));
        assert!(r.chance(1.0));
    }
}
