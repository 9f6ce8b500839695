//! The `toolcell-metadata` custom section: a tool's definition written into its component, so
//! that a runtime can list the tool before compiling it. This crate writes it (for the
//! standard tools' build and `toolcell build`) and the runtime reads it; its payload's format
//! is the runtime's.

/// The custom section's name.
pub const METADATA_SECTION: &str = "toolcell-metadata";

/// The payload of the last `toolcell-metadata` custom section at the top level of a
/// component; `None` when it has none, or is cut short. Nothing but section sizes is parsed:
/// every other section is skipped whole.
pub fn metadata_section(component: &[u8]) -> Option<&[u8]> {
    let mut found = None;
    for section in sections(component)? {
        if let Section::Metadata(payload) = section? {
            found = Some(payload);
        }
    }
    found
}

/// `component` with `payload` as its `toolcell-metadata` section, at its end, in place of any
/// it had. A component whose sections cannot be walked is returned with the section appended.
pub fn with_metadata_section(component: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut written = Vec::with_capacity(component.len() + payload.len() + METADATA_SECTION.len() + 10);
    let walked: Option<Vec<&[u8]>> = sections(component).and_then(|sections| {
        sections
            .filter_map(|section| match section {
                Some(Section::Metadata(_)) => None,
                Some(Section::Other(bytes)) => Some(Some(bytes)),
                None => Some(None),
            })
            .collect()
    });
    match walked {
        Some(kept) => {
            written.extend_from_slice(&component[..8]);
            kept.iter().for_each(|bytes| written.extend_from_slice(bytes));
        }
        None => written.extend_from_slice(component),
    }
    let name = METADATA_SECTION.as_bytes();
    let mut name_len = Vec::new();
    leb128_write(&mut name_len, name.len());
    written.push(0);
    leb128_write(&mut written, name_len.len() + name.len() + payload.len());
    written.extend_from_slice(&name_len);
    written.extend_from_slice(name);
    written.extend_from_slice(payload);
    written
}

/// One top-level section.
enum Section<'a> {
    /// A `toolcell-metadata` section's payload.
    Metadata(&'a [u8]),
    /// Any other section, whole (id, size and payload).
    Other(&'a [u8]),
}

/// The top-level sections after the 8-byte preamble; `None` for a component too short to
/// have one, and an item `None` where a section's size runs past the end.
fn sections(component: &[u8]) -> Option<impl Iterator<Item = Option<Section<'_>>>> {
    let mut rest = component.get(8..)?;
    let mut failed = false;
    Some(std::iter::from_fn(move || {
        if failed || rest.is_empty() {
            return None;
        }
        let next = next_section(rest);
        match next {
            Some((section, after)) => {
                rest = after;
                Some(Some(section))
            }
            None => {
                failed = true;
                Some(None)
            }
        }
    }))
}

fn next_section(bytes: &[u8]) -> Option<(Section<'_>, &[u8])> {
    let (&id, after_id) = bytes.split_first()?;
    let (size, after_size) = leb128_read(after_id)?;
    let payload = after_size.get(..size)?;
    let whole_len = bytes.len() - after_size.len() + size;
    let (whole, after) = bytes.split_at(whole_len);
    if id == 0 {
        let (name_len, after_len) = leb128_read(payload)?;
        if after_len.get(..name_len)? == METADATA_SECTION.as_bytes() {
            return Some((Section::Metadata(&after_len[name_len..]), after));
        }
    }
    Some((Section::Other(whole), after))
}

/// An unsigned LEB128 `u32` at the start of `bytes`, and what follows it.
fn leb128_read(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let mut value: u32 = 0;
    for (index, &byte) in bytes.iter().enumerate().take(5) {
        let shift = 7 * u32::try_from(index).ok()?;
        let bits = u32::from(byte & 0x7f);
        // The fifth byte may carry only the top four bits of a `u32`.
        if shift == 28 && bits > 0x0f {
            return None;
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            return Some((usize::try_from(value).ok()?, &bytes[index + 1..]));
        }
    }
    None
}

fn leb128_write(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    #[test]
    fn written_once_and_read_back() {
        assert_eq!(metadata_section(EMPTY_COMPONENT), None);
        let with = with_metadata_section(EMPTY_COMPONENT, b"{}");
        assert_eq!(metadata_section(&with), Some(&b"{}"[..]));
        let again = with_metadata_section(&with, b"[1]");
        assert_eq!(metadata_section(&again), Some(&b"[1]"[..]));
        assert_eq!(again.len(), with.len() + 1, "replaced, not repeated");
        let long = vec![b'x'; 300];
        assert_eq!(metadata_section(&with_metadata_section(&again, &long)), Some(&long[..]));
    }

    #[test]
    fn other_sections_are_kept_byte_for_byte() {
        let mut component = EMPTY_COMPONENT.to_vec();
        component.extend_from_slice(&[0, 4, 3, b'a', b'b', b'c', 7, 2, 0xaa, 0xbb]);
        let with = with_metadata_section(&component, b"{}");
        assert_eq!(&with[..component.len()], &component[..]);
    }

    #[test]
    fn truncated_or_lying_sizes_find_nothing() {
        let with = with_metadata_section(EMPTY_COMPONENT, b"{\"a\": 1}");
        for cut in 0..with.len() {
            assert_eq!(metadata_section(&with[..cut]), None, "cut at {cut}");
        }
        for bytes in [&[0, 0xff, 0xff, 0xff, 0xff, 0x0f][..], &[0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]] {
            let mut lying = EMPTY_COMPONENT.to_vec();
            lying.extend_from_slice(bytes);
            assert_eq!(metadata_section(&lying), None);
        }
    }
}
