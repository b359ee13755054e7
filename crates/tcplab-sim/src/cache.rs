//! Cache hints for the event loop's memory-bound paths (large-window runs, where packets and
//! link entries wait a round trip and leave the caches). A hint changes no result.

/// Packets on the wire of one link direction from which its next packets and ring entries are
/// prefetched. Below it they stay in the caches anyway (1 024 packets with their ring entries
/// are ≈ 130 KB) and the hint would only cost instructions: on every arrival it added 3.4 % to
/// the bench scenario s1 (≤ 10³ packets per direction); behind this test, out of line, 1.2 %.
pub const FAR: u64 = 1024;

/// Hint the CPU to load the cache line holding `*r` (a no-op on other architectures).
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` (PREFETCHT0) only hints the cache: it never faults, reads nothing
    // into a register and writes nothing, whatever the address; here the address is that of a
    // live reference. SSE, which it needs, is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (r as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
