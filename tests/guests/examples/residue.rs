//! Looks for anything an earlier call left in memory, then leaves some itself: a zeroed
//! static, and pages it grows (zero by wasm's rules), must be zero in every call. The grown
//! region is larger than what a pooled slot keeps resident, so both ways a slot is reset
//! (rewriting the pages a call wrote, unmapping the rest) are exercised.

use toolcell_guest::{json, tool};

/// Bytes grown per call: 3 MiB, past the 2 MiB a pooled slot keeps resident.
const GROWN_PAGES: usize = 48;
const PAGE_BYTES: usize = 64 << 10;

static mut SCRATCH: [u8; 64 << 10] = [0; 64 << 10];

#[json]
struct Found {
    /// Non-zero bytes found in the zeroed static.
    static_bytes: usize,
    /// Non-zero bytes found in the freshly grown pages.
    grown_bytes: usize,
}

/// Counts bytes left behind by an earlier call, then dirties the same memory.
#[tool]
fn residue() -> Found {
    // SAFETY: the only access to SCRATCH, in a single-threaded guest.
    let scratch = unsafe { &mut *std::ptr::addr_of_mut!(SCRATCH) };
    let static_bytes = dirty_then_count(scratch);
    let grown_bytes = dirty_then_count(grow_memory(GROWN_PAGES));
    Found { static_bytes, grown_bytes }
}

/// Pages added to the linear memory, outside any Rust allocation.
#[cfg(target_arch = "wasm32")]
fn grow_memory(pages: usize) -> &'static mut [u8] {
    let previous_pages = core::arch::wasm32::memory_grow(0, pages);
    assert_ne!(previous_pages, usize::MAX, "memory.grow of {pages} pages was refused");
    // SAFETY: the pages just grown belong to no Rust allocation: nothing else touches them.
    unsafe { std::slice::from_raw_parts_mut((previous_pages * PAGE_BYTES) as *mut u8, pages * PAGE_BYTES) }
}

/// Natively (the crate is also built for the host), zeroed memory of the same size.
#[cfg(not(target_arch = "wasm32"))]
fn grow_memory(pages: usize) -> &'static mut [u8] {
    vec![0; pages * PAGE_BYTES].leak()
}

/// The non-zero bytes in `memory`, which is then filled with a marker.
fn dirty_then_count(memory: &mut [u8]) -> usize {
    let found = memory.iter().filter(|&&byte| byte != 0).count();
    memory.fill(0xAB);
    found
}
