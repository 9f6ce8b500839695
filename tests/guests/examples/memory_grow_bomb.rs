//! Grows linear memory page by page with `memory.grow` (no allocator involved) until the
//! host refuses, then aborts.

use toolcell_guest::tool;

/// Grows memory until refused.
#[tool]
fn memory_grow_bomb() -> usize {
    #[cfg(target_arch = "wasm32")]
    loop {
        if core::arch::wasm32::memory_grow(0, 16) == usize::MAX {
            std::process::abort();
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    0
}
