#![allow(unsafe_code)] // the `GlobalAlloc` implementation below
//! A counting global allocator for the tests that a path allocates nothing (per packet, per
//! connection): `tcplab-sim/tests/alloc.rs`, `tcplab-trace/tests/alloc.rs`. A test binary
//! installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static A: tcplab_testalloc::Counting = tcplab_testalloc::Counting;
//! ```
//!
//! and reads [`allocations`] before and after the measured part. The count is global: tests of
//! one binary run on parallel threads, so each measuring test holds [`exclusive`] throughout.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Forwards every call to the system allocator and counts allocations and reallocations.
pub struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static EXCLUSIVE: Mutex<()> = Mutex::new(());

// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `System` through this allocator, with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc`, passed on unchanged.
        unsafe { System.realloc(p, l, n) }
    }
}

/// Allocations and reallocations so far, in every thread of the process (when [`Counting`] is
/// the global allocator; 0 otherwise).
pub fn allocations() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

/// Held by a test while it counts, so that no other test of the binary allocates meanwhile (a
/// test that panicked while holding it does not block the others).
pub fn exclusive() -> MutexGuard<'static, ()> {
    EXCLUSIVE.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static A: Counting = Counting;

    #[test]
    fn test_counts_allocations_and_reallocations() {
        let _g = exclusive();
        let before = allocations();
        let mut v: Vec<u64> = vec![1];
        v.push(2); // grows: a reallocation
        let b = Box::new(3u8);
        assert_eq!(allocations() - before, 3, "{v:?} {b}");
        let before = allocations();
        v.pop();
        drop(b);
        assert_eq!(allocations() - before, 0);
    }
}
