//! Counts its calls in a global: with a fresh instance per call it must always say 1.

use std::sync::atomic::{AtomicU32, Ordering};

use toolcell_guest::tool;

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Returns how many times this instance has been called.
#[tool]
fn counter() -> u32 {
    CALLS.fetch_add(1, Ordering::SeqCst) + 1
}
