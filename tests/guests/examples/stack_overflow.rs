//! Recurses without end, with small frames.

use toolcell_guest::tool;

#[expect(unconditional_recursion, reason = "the point of this guest")]
fn recurse(depth: u64) -> u64 {
    std::hint::black_box(recurse(std::hint::black_box(depth + 1))) + 1
}

/// Recurses forever.
#[tool]
fn stack_overflow() -> u64 {
    recurse(0)
}
