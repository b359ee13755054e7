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
//! and reads [`allocations`] before and after the measured part. The count is per thread: the
//! test harness's own thread (which may do its bookkeeping late on a loaded machine: a CI run
//! once saw 4 allocations in `tcplab-trace/tests/alloc.rs` that the measured path did not make)
//! and other tests' threads do not enter it. [`exclusive`] remains for tests that want to run
//! alone.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

/// Forwards every call to the system allocator and counts allocations and reallocations.
pub struct Counting;

static EXCLUSIVE: Mutex<()> = Mutex::new(());

thread_local! {
    /// Allocations and reallocations of this thread (const-initialised, no destructor: reading
    /// it allocates nothing, so the allocator may use it).
    static MINE: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn count() {
    // `try_with`: a thread being torn down has no counter any more; its allocations are not
    // counted (none is measured then).
    let _ = MINE.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `System` through this allocator, with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `realloc`, passed on unchanged.
        unsafe { System.realloc(p, l, n) }
    }
}

/// Allocations and reallocations so far by the calling thread (when [`Counting`] is the global
/// allocator; 0 otherwise).
pub fn allocations() -> u64 {
    MINE.try_with(|c| c.get()).unwrap_or(0)
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

    #[test]
    fn test_other_threads_allocations_do_not_count() {
        let before = allocations();
        let v = std::thread::spawn(|| vec![1u8; 64]).join().unwrap();
        // Spawning a thread allocates in this thread (its handle; more the first time, for
        // state set up once); the vector made in the other thread does not count.
        let spawned = allocations() - before;
        let before = allocations();
        std::thread::spawn(|| {
            let mut w: Vec<Vec<u8>> = Vec::new();
            for i in 0..100 {
                w.push(vec![i; 64]);
            }
        })
        .join()
        .unwrap();
        let second = allocations() - before;
        assert!(
            second <= spawned && spawned < 20,
            "{second} {spawned} {v:?}"
        );
    }
}
