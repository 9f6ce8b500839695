//! `list`: the entries of a directory, optionally of its whole tree.

use std::collections::VecDeque;
use std::fs;
use std::path::{Path, PathBuf};

use toolcell_guest::ToolError;

use crate::{
    Entry, EntryKind, FilesOutput, MAX_DEPTH, MAX_RESULTS, MAX_VISITED_ENTRIES, OUTPUT_BUDGET_BYTES, display,
    glob::Glob, io_error, is_entered, json_len, not_a_directory, read_dir_sorted, relative_path,
};

/// What one entry adds to the result's JSON besides its strings (keys, quotes, kind, size).
const ENTRY_OVERHEAD_BYTES: usize = 64;

/// Lists `root`. The walk is breadth-first, so when a cap stops it the entries nearest to
/// `root` are the ones shown; the result is then sorted by path.
pub(crate) fn list(
    root: &Path,
    recursive: bool,
    glob: Option<&Glob>,
    max_results: usize,
) -> Result<FilesOutput, ToolError> {
    let metadata = fs::metadata(root).map_err(|error| io_error(root, &error))?;
    if !metadata.is_dir() {
        return Err(not_a_directory(root));
    }

    let mut entries = Vec::new();
    let mut output_bytes = 0;
    let mut visited = 0;
    let mut note = None;
    let mut too_deep = false;
    let mut queue: VecDeque<(PathBuf, String, usize)> = VecDeque::from([(root.to_path_buf(), String::new(), 1)]);
    'walk: while let Some((directory, prefix, depth)) = queue.pop_front() {
        let children = match read_dir_sorted(&directory) {
            Ok(children) => children,
            Err(error) if depth == 1 => return Err(io_error(root, &error)),
            // A subdirectory that cannot be read is listed, just not entered.
            Err(_) => continue,
        };
        for child in children {
            visited += 1;
            if visited > MAX_VISITED_ENTRIES {
                note = Some(format!(
                    "the walk stopped after looking at {MAX_VISITED_ENTRIES} entries; `list` a subdirectory, or \
                     narrow `glob`, to see the rest"
                ));
                break 'walk;
            }
            let name = relative_path(&prefix, &child.name);
            if recursive && is_entered(child.kind, &child.name) {
                if depth < MAX_DEPTH {
                    queue.push_back((child.path.clone(), name.clone(), depth + 1));
                } else {
                    too_deep = true;
                }
            }
            if glob.is_some_and(|glob| !glob.matches(&name)) {
                continue;
            }
            let target = match child.kind {
                EntryKind::Symlink => fs::read_link(&child.path).ok().map(|target| display(&target)),
                _ => None,
            };
            let cost = ENTRY_OVERHEAD_BYTES + json_len(&name) + target.as_deref().map_or(0, json_len);
            if entries.len() == max_results {
                note = Some(format!(
                    "only the first {max_results} entries are listed (nearest to `path` first); raise `max_results` \
                     (at most {MAX_RESULTS}), narrow `glob`, or `list` a subdirectory"
                ));
                break 'walk;
            }
            if output_bytes + cost > OUTPUT_BUDGET_BYTES {
                note = Some(format!(
                    "the listing stopped at {} entries to keep the result small; `list` a subdirectory, or narrow \
                     `glob`, to see the rest",
                    entries.len()
                ));
                break 'walk;
            }
            output_bytes += cost;
            entries.push(Entry { name, kind: child.kind, size: child.size, target });
        }
    }
    if note.is_none() && too_deep {
        note = Some(format!(
            "directories more than {MAX_DEPTH} levels below `path` were not entered; `list` them directly"
        ));
    }
    // Component by component, so that a directory's contents follow it (`a`, `a/x`, `a-b`).
    entries.sort_by(|a, b| a.name.split('/').cmp(b.name.split('/')));
    Ok(FilesOutput::List { path: display(root), count: entries.len(), truncated: note.is_some(), note, entries })
}
