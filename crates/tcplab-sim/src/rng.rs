//! Per-entity random streams (docs/design.md §2).
//!
//! Each consumer of randomness owns a [`Rng`] seeded from the trial seed and a stable entity
//! name, so adding a flow or a link never changes the draws of the others (Shadow's per-host
//! seeding). The generator is xoshiro256** (Blackman & Vigna, 2018), seeded through SplitMix64.
//! Hand-written, not `rand`: results are hash-checked across releases, and rand permits
//! value-breaking changes in minor versions (rand book, "Reproducibility").

/// SplitMix64 step (Steele, Lea, Flood, OOPSLA 2014); used to expand seeds.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable 64-bit FNV-1a hash of the seed, an entity kind and an entity name.
pub fn derive_seed(seed: u64, kind: &str, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    };
    eat(&seed.to_le_bytes());
    eat(kind.as_bytes());
    eat(&[0xff]);
    eat(name.as_bytes());
    let mut s = h;
    splitmix64(&mut s)
}

/// xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    /// The stream of entity `name` of kind `kind` in a trial with seed `seed`.
    pub fn for_entity(seed: u64, kind: &str, name: &str) -> Rng {
        Rng::new(derive_seed(seed, kind, name))
    }

    #[inline]
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

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_streams_independent_of_other_entities() {
        let a1 = Rng::for_entity(7, "flow", "a").next_u64();
        let a2 = Rng::for_entity(7, "flow", "a").next_u64();
        let b = Rng::for_entity(7, "flow", "b").next_u64();
        let a_other_seed = Rng::for_entity(8, "flow", "a").next_u64();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, a_other_seed);
    }

    #[test]
    fn test_chance_frequency() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let hits = (0..n).filter(|_| r.chance(0.01)).count() as f64;
        // Binomial SD = sqrt(n p (1-p)) ≈ 44.5; allow 5 SD.
        assert!((hits - 2000.0).abs() < 5.0 * 44.5, "hits {hits}");
        assert!(!r.chance(0.0));
    }
}
