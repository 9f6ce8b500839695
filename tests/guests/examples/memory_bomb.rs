//! Allocates and keeps 1 MiB chunks until the allocator is refused.

use toolcell_guest::tool;

/// Eats memory.
#[tool]
fn memory_bomb() -> usize {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    loop {
        chunks.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&chunks);
    }
}
