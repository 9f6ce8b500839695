//! Reads past the end of its linear memory, once, outside any recursion: a memory fault the
//! host must not mistake for a stack overflow.

use toolcell_guest::tool;

/// Reads the byte at the highest address.
#[tool]
fn memory_fault() -> u8 {
    // SAFETY: none: the read is out of bounds on purpose, and the host traps it.
    unsafe { std::ptr::read_volatile(usize::MAX as *const u8) }
}
