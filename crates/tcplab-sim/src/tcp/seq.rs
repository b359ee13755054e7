//! Wrap-safe 32-bit TCP sequence numbers.
//!
//! # Model
//!
//! TCP numbers every byte (and the SYN and FIN flags) with a 32-bit sequence number that wraps
//! modulo 2^32 (RFC 9293 §3.4, "Sequence Numbers": "all arithmetic dealing with sequence numbers
//! must be performed modulo 2**32"). Two sequence numbers are compared with *serial number
//! arithmetic* (RFC 1982 §3.2): `a < b` iff the forward distance from `a` to `b`, taken modulo
//! 2^32, is in `1 ..= 2^31 - 1`. This is the same rule as `SEQ_LT` in the BSD stacks and the
//! signed-difference test used by most TCP implementations: interpret `a - b` (wrapping) as a
//! signed 32-bit integer and look at its sign.
//!
//! [`Seq`] is a newtype over `u32` that only offers these wrap-safe operations. It deliberately
//! does **not** implement `PartialOrd`/`Ord`: serial-number order is not transitive over the whole
//! number circle, so it must not be used for sorting, and `<` on the raw `u32` would be wrong
//! across the wrap. Use [`Seq::lt`], [`Seq::le`], [`Seq::gt`], [`Seq::ge`] instead.
//!
//! Simulations move far more than 4 GiB, so the rest of the simulator keeps 64-bit *stream
//! offsets* (bytes since a base sequence number, like web100's `SndUna − ISN`, docs/design.md §4)
//! and converts at the wire boundary with [`Seq::from_offset`] and [`Seq::unwrap`].
//!
//! # Limits
//!
//! * Comparisons are only meaningful when the two numbers are less than 2^31 apart
//!   (RFC 1982 §3.2). At a distance of exactly 2^31 the result is undefined by the RFC; here both
//!   `a.lt(b)` and `b.lt(a)` are true (the signed difference is `i32::MIN` both ways). TCP keeps
//!   windows ≤ 2^30 (RFC 7323 §2.3), so correct use never gets near this.
//! * [`Seq::unwrap`] picks the 64-bit offset *nearest* to a reference offset; it is correct as long
//!   as the true offset is within 2^31 of the reference (same argument).

use core::ops::{Add, AddAssign, Sub, SubAssign};

/// A 32-bit TCP sequence number with wrap-around (serial-number) arithmetic.
///
/// See the module documentation for the rules (RFC 9293 §3.4, RFC 1982 §3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Seq(pub u32);

impl Seq {
    /// Wraps a raw 32-bit sequence number.
    #[inline]
    pub const fn new(raw: u32) -> Self {
        Seq(raw)
    }

    /// The raw 32-bit value, as carried in the TCP header.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Signed distance `self − other` (wrapping, then read as `i32`), RFC 1982 §3.2.
    ///
    /// Positive when `self` is after `other`. Only meaningful for numbers less than 2^31 apart.
    #[inline]
    pub const fn diff(self, other: Seq) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }

    /// Forward distance from `other` to `self` modulo 2^32, i.e. how many sequence numbers one
    /// must add to `other` to reach `self`. Equals `diff` when `self` is at or after `other`.
    #[inline]
    pub const fn distance_from(self, other: Seq) -> u32 {
        self.0.wrapping_sub(other.0)
    }

    /// `self < other` in serial-number order (RFC 1982 §3.2; BSD `SEQ_LT`).
    #[inline]
    pub const fn lt(self, other: Seq) -> bool {
        self.diff(other) < 0
    }

    /// `self ≤ other` in serial-number order.
    #[inline]
    pub const fn le(self, other: Seq) -> bool {
        self.diff(other) <= 0
    }

    /// `self > other` in serial-number order.
    #[inline]
    pub const fn gt(self, other: Seq) -> bool {
        self.diff(other) > 0
    }

    /// `self ≥ other` in serial-number order.
    #[inline]
    pub const fn ge(self, other: Seq) -> bool {
        self.diff(other) >= 0
    }

    /// The later of two sequence numbers (serial-number order).
    #[inline]
    pub const fn max(self, other: Seq) -> Seq {
        if self.ge(other) {
            self
        } else {
            other
        }
    }

    /// The earlier of two sequence numbers (serial-number order).
    #[inline]
    pub const fn min(self, other: Seq) -> Seq {
        if self.le(other) {
            self
        } else {
            other
        }
    }

    /// `start ≤ self < end` in serial-number order (the half-open range RFC 9293 §3.4 uses for
    /// acceptability tests). An empty range (`start == end`) contains nothing.
    #[inline]
    pub const fn in_range(self, start: Seq, end: Seq) -> bool {
        // Forward distances from `start` avoid any ambiguity for ranges shorter than 2^32.
        self.distance_from(start) < end.distance_from(start)
    }

    /// The sequence number of 64-bit stream offset `offset`, where offset 0 has sequence number
    /// `base` (e.g. the ISN, or ISN + 1 for the first data byte). Truncates modulo 2^32.
    #[inline]
    pub const fn from_offset(base: Seq, offset: u64) -> Seq {
        Seq(base.0.wrapping_add(offset as u32))
    }

    /// The 64-bit stream offset of `self` (offset 0 has sequence number `base`) that is nearest
    /// to `reference`, a 64-bit offset known to be close (e.g. the current `rcv_nxt` or `snd_una`
    /// offset). This is how transfers longer than 4 GiB are tracked: the caller keeps a 64-bit
    /// reference and the header supplies the low 32 bits.
    ///
    /// Correct whenever the true offset is within 2^31 of `reference`. If the nearest value
    /// would be negative (a sequence number just before `base` while `reference` is small), the
    /// nearest non-negative candidate, 2^32 further on, is returned.
    #[inline]
    pub const fn unwrap(self, base: Seq, reference: u64) -> u64 {
        let d = self.diff(Seq::from_offset(base, reference)) as i64;
        match reference.checked_add_signed(d) {
            Some(v) => v,
            // d < 0 and |d| > reference: take the candidate one wrap later (non-negative).
            None if d < 0 => reference.wrapping_add_signed(d).wrapping_add(1 << 32),
            // d > 0 overflowing u64: unreachable for real streams; saturate.
            None => u64::MAX,
        }
    }
}

impl From<u32> for Seq {
    #[inline]
    fn from(raw: u32) -> Self {
        Seq(raw)
    }
}

impl From<Seq> for u32 {
    #[inline]
    fn from(s: Seq) -> Self {
        s.0
    }
}

/// `seq + n` modulo 2^32.
impl Add<u32> for Seq {
    type Output = Seq;
    #[inline]
    fn add(self, n: u32) -> Seq {
        Seq(self.0.wrapping_add(n))
    }
}

impl AddAssign<u32> for Seq {
    #[inline]
    fn add_assign(&mut self, n: u32) {
        self.0 = self.0.wrapping_add(n);
    }
}

/// `seq − n` modulo 2^32.
impl Sub<u32> for Seq {
    type Output = Seq;
    #[inline]
    fn sub(self, n: u32) -> Seq {
        Seq(self.0.wrapping_sub(n))
    }
}

impl SubAssign<u32> for Seq {
    #[inline]
    fn sub_assign(&mut self, n: u32) {
        self.0 = self.0.wrapping_sub(n);
    }
}

/// `a − b` is the signed distance [`Seq::diff`] (RFC 1982 §3.2).
impl Sub<Seq> for Seq {
    type Output = i32;
    #[inline]
    fn sub(self, other: Seq) -> i32 {
        self.diff(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TWO32: u64 = 1 << 32;

    #[test]
    fn test_compare_without_wrap() {
        let a = Seq(100);
        let b = Seq(200);
        assert!(a.lt(b) && a.le(b) && !a.gt(b) && !a.ge(b));
        assert!(b.gt(a) && b.ge(a) && !b.lt(a) && !b.le(a));
        assert!(a.le(a) && a.ge(a) && !a.lt(a) && !a.gt(a));
        assert_eq!(b.diff(a), 100);
        assert_eq!(a.diff(b), -100);
        assert_eq!(b - a, 100);
    }

    #[test]
    fn test_compare_across_wrap() {
        let before = Seq(u32::MAX - 10);
        let after = Seq(5);
        assert!(before.lt(after), "u32::MAX-10 precedes 5 across the wrap");
        assert!(after.gt(before));
        assert_eq!(after.diff(before), 16);
        assert_eq!(before.diff(after), -16);
        assert_eq!(after.distance_from(before), 16);
        assert_eq!(before.distance_from(after), u32::MAX - 15);
        assert_eq!(before.max(after), after);
        assert_eq!(before.min(after), before);
        assert_eq!(after.max(before), after);
        assert_eq!(after.min(before), before);
    }

    #[test]
    fn test_compare_at_half_circle_is_symmetric_undefined() {
        // RFC 1982 §3.2 leaves distance 2^31 undefined; document what we return.
        let a = Seq(0);
        let b = Seq(1 << 31);
        assert!(a.lt(b) && b.lt(a));
        // One less than half the circle is well defined.
        let c = Seq((1 << 31) - 1);
        assert!(a.lt(c) && !c.lt(a));
    }

    #[test]
    fn test_add_sub_wrap() {
        let mut s = Seq(u32::MAX - 1);
        assert_eq!(s + 3, Seq(1));
        s += 2;
        assert_eq!(s, Seq(0));
        s -= 1;
        assert_eq!(s, Seq(u32::MAX));
        assert_eq!(Seq(2) - 5u32, Seq(u32::MAX - 2));
        assert_eq!(u32::from(Seq::from(7u32)), 7);
        assert_eq!(Seq::new(9).get(), 9);
    }

    #[test]
    fn test_in_range_across_wrap() {
        let start = Seq(u32::MAX - 2);
        let end = start + 6; // = Seq(3)
        assert!(start.in_range(start, end));
        assert!(Seq(u32::MAX).in_range(start, end));
        assert!(Seq(0).in_range(start, end));
        assert!(Seq(2).in_range(start, end));
        assert!(!Seq(3).in_range(start, end), "end is exclusive");
        assert!(!Seq(u32::MAX - 3).in_range(start, end));
        assert!(!start.in_range(start, start), "empty range");
    }

    #[test]
    fn test_from_offset_and_unwrap_beyond_4gib() {
        let isn = Seq(u32::MAX - 1000);
        // Offsets in the 3rd and 4th wraps of the sequence space.
        for &off in &[0u64, 999, 1000, 1001, TWO32 - 1, TWO32, 3 * TWO32 + 12_345] {
            let s = Seq::from_offset(isn, off);
            assert_eq!(s.unwrap(isn, off), off, "exact reference");
            assert_eq!(s.unwrap(isn, off + 1_000_000), off, "reference ahead");
            assert_eq!(
                s.unwrap(isn, off.saturating_sub(1_000_000)),
                off,
                "reference behind"
            );
        }
        // The stream passed the 32-bit wrap: offset 1001 has seq 0.
        assert_eq!(Seq::from_offset(isn, 1001), Seq(0));
    }

    #[test]
    fn test_unwrap_just_before_base_is_not_negative() {
        // A sequence number one before the base while the reference is 0: the nearest
        // non-negative candidate is one wrap later.
        let base = Seq(10);
        assert_eq!(Seq(9).unwrap(base, 0), TWO32 - 1);
        // With a larger reference the nearest value is used.
        assert_eq!(Seq(9).unwrap(base, TWO32 + 5), TWO32 - 1);
    }

    #[test]
    fn test_unwrap_picks_nearest_wrap() {
        let base = Seq(0);
        // Reference at 5 GiB: seq 0 is offset 4 GiB (distance 1 GiB) rather than 8 GiB.
        let reference = 5 * (1 << 30);
        assert_eq!(Seq(0).unwrap(base, reference), TWO32);
        // seq 3 GiB + 1: candidates 3 GiB + 1 (2^31 − 1 below) and 7 GiB + 1 (2^31 + 1 above).
        let s = Seq((1 << 31) + (1 << 30) + 1);
        assert_eq!(s.unwrap(base, reference), 3 * (1 << 30) + 1);
        // seq 3 GiB − 1 would be 2^31 + 1 below, so the later candidate (7 GiB − 1) wins.
        let s = Seq((1 << 31) + (1 << 30) - 1);
        assert_eq!(s.unwrap(base, reference), 7 * (1 << 30) - 1);
    }

    proptest! {
        #[test]
        fn prop_unwrap_inverts_from_offset(
            base in any::<u32>(),
            off in 0u64..(1u64 << 48),
            delta in -(1i64 << 31) + 1..(1i64 << 31),
        ) {
            let base = Seq(base);
            let s = Seq::from_offset(base, off);
            // Any reference within 2^31 of the true offset recovers it.
            let reference = off.checked_add_signed(delta).unwrap_or(0);
            prop_assume!(reference.abs_diff(off) < 1 << 31);
            prop_assert_eq!(s.unwrap(base, reference), off);
        }

        #[test]
        fn prop_order_matches_offsets_within_half_circle(
            base in any::<u32>(),
            a in 0u64..(1u64 << 40),
            d in 1u64..(1u64 << 31),
        ) {
            let base = Seq(base);
            let sa = Seq::from_offset(base, a);
            let sb = Seq::from_offset(base, a + d);
            prop_assert!(sa.lt(sb) && sa.le(sb) && sb.gt(sa) && sb.ge(sa));
            prop_assert!(!sb.lt(sa) && !sa.gt(sb));
            prop_assert_eq!(i64::from(sb.diff(sa)), d as i64);
            prop_assert_eq!(u64::from(sb.distance_from(sa)), d);
            prop_assert_eq!(sa + (d as u32), sb);
            prop_assert!(sa.in_range(sa, sb) && !sb.in_range(sa, sb));
        }
    }
}
