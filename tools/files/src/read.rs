//! `read`: a byte range of a text file, cut at character boundaries.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use toolcell_guest::ToolError;

use crate::{FilesOutput, OUTPUT_BUDGET_BYTES, display, io_error, json_byte_len};

/// The most bytes a UTF-8 character continues past its first byte.
const MAX_CONTINUATION_BYTES: u64 = 3;

/// Reads at most `length` bytes of `path` from `offset`, never splitting a character.
pub(crate) fn read(path: &Path, offset: u64, length: u64) -> Result<FilesOutput, ToolError> {
    let metadata = fs::metadata(path).map_err(|error| io_error(path, &error))?;
    let shown = display(path);
    if metadata.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "`{shown}` is a directory, not a file: `list` it to see its files, then `read` one of them"
        )));
    }
    if !metadata.is_file() {
        return Err(ToolError::invalid_arguments(format!(
            "`{shown}` is not a regular file (a device, socket or pipe) and cannot be read as text: `read` another file"
        )));
    }
    let size = metadata.len();
    if offset > size {
        return Err(ToolError::invalid_arguments(format!(
            "`offset` {offset} is past the end of `{shown}`, which has {size} bytes: give an offset from 0 to {size}"
        )));
    }

    // Read up to 3 bytes more on each side: to step over the rest of a character `offset` may
    // fall inside, and to finish a character that starts before `length` runs out.
    let wanted = length + 2 * MAX_CONTINUATION_BYTES;
    let mut buffer = Vec::new();
    let mut file = File::open(path).map_err(|error| io_error(path, &error))?;
    file.seek(SeekFrom::Start(offset)).map_err(|error| io_error(path, &error))?;
    file.take(wanted).read_to_end(&mut buffer).map_err(|error| io_error(path, &error))?;
    let reached_end = (buffer.len() as u64) < wanted;

    let skipped = if offset == 0 {
        0
    } else {
        buffer.iter().take(MAX_CONTINUATION_BYTES as usize).take_while(|byte| is_continuation(**byte)).count()
    };
    let start = offset + skipped as u64;
    let bytes = buffer.get(skipped..).unwrap_or_default();
    let window = bytes.len().min(usize::try_from(length).unwrap_or(usize::MAX));

    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) => error.valid_up_to(),
    };
    // A character that starts inside the window always ends within the 3 bytes read past it,
    // so invalid bytes before `window` are really in the file, not an artifact of the cut.
    if valid < window {
        return Err(not_text(&shown, start + valid as u64, bytes.get(valid).copied(), "is not UTF-8 text"));
    }
    if let Some(nul) = bytes[..window].iter().position(|byte| *byte == 0) {
        return Err(not_text(&shown, start + nul as u64, Some(0), "is a NUL byte"));
    }
    let text = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
    let mut end = text.floor_char_boundary(window);
    if end == 0 && window > 0 {
        // `length` is shorter than the first character: return that one character whole.
        end = text.ceil_char_boundary(1);
    }
    end = json_prefix(&text[..end], OUTPUT_BUDGET_BYTES);

    let eof = reached_end && end == bytes.len();
    let next_offset = (!eof).then_some(start + end as u64);
    Ok(FilesOutput::Read { path: shown, size, offset: start, next_offset, eof, text: text[..end].to_owned() })
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

fn not_text(shown: &str, offset: u64, byte: Option<u8>, what: &str) -> ToolError {
    let byte = byte.map(|byte| format!(" (0x{byte:02X})")).unwrap_or_default();
    ToolError::invalid_arguments(format!(
        "`{shown}` is not a text file: byte {offset}{byte} {what}. It is binary or in another encoding, and this \
         tool reads only UTF-8 text: `read` another file"
    ))
}

/// The length of the longest prefix of `text`, ending at a character boundary, whose JSON
/// string form takes at most `budget` bytes.
pub(crate) fn json_prefix(text: &str, budget: usize) -> usize {
    let mut used = 0;
    for (index, character) in text.char_indices() {
        let cost = if character.is_ascii() { json_byte_len(character as u8) } else { character.len_utf8() };
        if used + cost > budget {
            return index;
        }
        used += cost;
    }
    text.len()
}
