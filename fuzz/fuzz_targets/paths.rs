//! A request path (anyone's: a model's URL, a tool's request) through the normalization egress
//! rules match against, and a path pattern (an operator's) matched against it: neither may
//! panic, what is sent must be what was checked (normalizing it again changes nothing), no
//! step up may survive in a spelling a server decodes, and a pattern must match a path as it
//! matches the path sent.
//!
//! The input is UTF-8: the path, then optionally a line break and a pattern.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolcell_runtime::policy::{PathPattern, normalize_path};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (raw, pattern) = text.split_once('\n').unwrap_or((text, "/**"));
    let pattern = pattern.parse::<PathPattern>().ok();
    let Ok(sent) = normalize_path(raw) else {
        assert!(pattern.is_none_or(|pattern| !pattern.matches_path(raw)), "a refused path matched {raw:?}");
        return;
    };
    assert_eq!(normalize_path(&sent).as_deref(), Ok(sent.as_str()), "sent {sent:?} for {raw:?}");
    for segment in sent.split('/') {
        let upper = segment.to_ascii_uppercase();
        assert!(segment != ".." && segment != "." && !upper.contains("%2E"), "{segment:?} in {sent:?} for {raw:?}");
    }
    if let Some(pattern) = pattern {
        assert_eq!(pattern.matches_path(raw), pattern.matches_path(&sent), "{pattern:?} on {raw:?} and {sent:?}");
    }
});
