//! `search`: the lines of the text files under a directory that match a pattern.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use regex::{Regex, RegexBuilder};
use toolcell_guest::ToolError;

use crate::{
    Child, EntryKind, FilesOutput, MAX_DEPTH, MAX_RESULTS, MAX_SEARCH_FILE_BYTES, MAX_SEARCHED_BYTES,
    MAX_VISITED_ENTRIES, OUTPUT_BUDGET_BYTES, SearchMatch, display, glob::Glob, io_error, is_entered, json_len,
    read_dir_sorted, relative_path,
};

/// The most heap a compiled pattern (and the lazy DFA's cache) may use, as in the `regex` tool.
const SIZE_LIMIT_BYTES: usize = 1 << 20;

/// Lines longer than this are cut to a window around the first match.
const MAX_LINE_BYTES: usize = 300;

/// How much of a cut line is kept before the match.
const CONTEXT_BEFORE_MATCH_BYTES: usize = 100;

/// What one match adds to the result's JSON besides its strings (keys, numbers).
const MATCH_OVERHEAD_BYTES: usize = 64;

/// Compiles the search pattern. `^` and `$` match at line boundaries (`\r\n` included) since
/// matches are reported by line.
pub(crate) fn matcher(pattern: &str, regex: bool, case_insensitive: bool) -> Result<Regex, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::invalid_arguments("`pattern` is empty: give the text to find"));
    }
    let source = if regex { pattern.to_owned() } else { regex::escape(pattern) };
    RegexBuilder::new(&source)
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .size_limit(SIZE_LIMIT_BYTES)
        .dfa_size_limit(SIZE_LIMIT_BYTES)
        .build()
        .map_err(|error| match error {
            // The syntax error already quotes the pattern with a caret under the problem.
            regex::Error::Syntax(message) => ToolError::invalid_arguments(format!(
                "`pattern` is not a valid regular expression:\n{message}\nFix it, or set `regex` to false to search \
                 for the literal text"
            )),
            regex::Error::CompiledTooBig(limit) => ToolError::invalid_arguments(format!(
                "`pattern` is too big: compiled, it exceeds the size limit of {limit} bytes. Search for a shorter \
                 text, or use smaller repetition counts in a regular expression"
            )),
            other => ToolError::invalid_arguments(format!("`pattern` cannot be used: {other}")),
        })
}

/// Searches the file `root`, or the files under the directory `root`.
pub(crate) fn search(
    root: &Path,
    matcher: &Regex,
    glob: Option<&Glob>,
    recursive: bool,
    max_results: usize,
) -> Result<FilesOutput, ToolError> {
    let metadata = fs::metadata(root).map_err(|error| io_error(root, &error))?;
    let mut search = Search {
        matcher,
        glob,
        recursive,
        max_results,
        matches: Vec::new(),
        files_searched: 0,
        files_skipped: 0,
        bytes_searched: 0,
        visited: 0,
        output_bytes: 0,
        note: None,
        too_deep: false,
    };
    if metadata.is_dir() {
        let children = read_dir_sorted(root).map_err(|error| io_error(root, &error))?;
        search.walk(children, "", 1);
    } else if metadata.is_file() {
        // A file named by `path` is searched whatever `glob` says; if it cannot be, say why.
        let shown = display(root);
        match search.file(root, Some(metadata.len())) {
            Outcome::Searched | Outcome::Stopped => {}
            Outcome::TooBig => {
                return Err(ToolError::invalid_arguments(format!(
                    "`{shown}` is larger than {} MiB, too big to search: `read` it in parts instead",
                    MAX_SEARCH_FILE_BYTES >> 20
                )));
            }
            Outcome::Binary { offset } => {
                return Err(ToolError::invalid_arguments(format!(
                    "`{shown}` is not a text file (byte {offset} is not UTF-8 text, or is a NUL byte), so it cannot \
                     be searched: search a text file or a directory"
                )));
            }
            Outcome::Unreadable(error) => return Err(io_error(root, &error)),
        }
    } else {
        return Err(ToolError::invalid_arguments(format!(
            "`{}` is not a regular file or directory (a device, socket or pipe): search a directory or a text file",
            display(root)
        )));
    }
    let Search { matches, files_searched, files_skipped, mut note, too_deep, .. } = search;
    if note.is_none() && too_deep {
        note = Some(format!(
            "directories more than {MAX_DEPTH} levels below `path` were not searched; search them directly"
        ));
    }
    Ok(FilesOutput::Search {
        path: display(root),
        count: matches.len(),
        files_searched,
        files_skipped,
        truncated: note.is_some(),
        note,
        matches,
    })
}

/// What happened to one file.
enum Outcome {
    Searched,
    /// Not searched: a limit of the whole search was reached (`Search::note` says which).
    Stopped,
    TooBig,
    Binary {
        offset: usize,
    },
    Unreadable(io::Error),
}

/// The state of one search. It stops, with a `note`, at the first limit reached.
struct Search<'a> {
    matcher: &'a Regex,
    glob: Option<&'a Glob>,
    recursive: bool,
    max_results: usize,
    matches: Vec<SearchMatch>,
    files_searched: usize,
    files_skipped: usize,
    bytes_searched: u64,
    visited: usize,
    output_bytes: usize,
    note: Option<String>,
    too_deep: bool,
}

impl Search<'_> {
    /// Searches `children`, which are at `depth` (1 for `path`'s own entries), depth first and
    /// in name order, so matches come out sorted by path.
    fn walk(&mut self, children: Vec<Child>, prefix: &str, depth: usize) {
        for child in children {
            if self.note.is_some() {
                return;
            }
            self.visited += 1;
            if self.visited > MAX_VISITED_ENTRIES {
                self.note = Some(format!(
                    "the search stopped after looking at {MAX_VISITED_ENTRIES} entries; search a subdirectory, or \
                     narrow `glob`, to cover the rest"
                ));
                return;
            }
            let relative = relative_path(prefix, &child.name);
            match child.kind {
                EntryKind::File => {
                    if self.glob.is_some_and(|glob| !glob.matches(&relative)) {
                        continue;
                    }
                    match self.file(&child.path, child.size) {
                        Outcome::Searched | Outcome::Stopped => {}
                        Outcome::TooBig | Outcome::Binary { .. } | Outcome::Unreadable(_) => self.files_skipped += 1,
                    }
                }
                kind if self.recursive && is_entered(kind, &child.name) => {
                    if depth >= MAX_DEPTH {
                        self.too_deep = true;
                    } else if let Ok(grandchildren) = read_dir_sorted(&child.path) {
                        self.walk(grandchildren, &relative, depth + 1);
                    }
                }
                // Links are not followed; devices, sockets and pipes are not text.
                _ => {}
            }
        }
    }

    /// Searches one file; `size` is what its directory entry said, if known.
    fn file(&mut self, path: &Path, size: Option<u64>) -> Outcome {
        let size = match size {
            Some(size) => size,
            None => match fs::metadata(path) {
                Ok(metadata) => metadata.len(),
                Err(error) => return Outcome::Unreadable(error),
            },
        };
        if size > MAX_SEARCH_FILE_BYTES {
            return Outcome::TooBig;
        }
        if self.bytes_searched + size > MAX_SEARCHED_BYTES {
            self.note = Some(format!(
                "the search stopped after reading {} MiB in {} files; search a subdirectory, or narrow `glob`, to \
                 cover the rest",
                MAX_SEARCHED_BYTES >> 20,
                self.files_searched
            ));
            return Outcome::Stopped;
        }
        // Read at most one byte past the cap, in case the file grew since its size was taken.
        let mut bytes = Vec::new();
        let read = File::open(path).and_then(|file| file.take(MAX_SEARCH_FILE_BYTES + 1).read_to_end(&mut bytes));
        if let Err(error) = read {
            return Outcome::Unreadable(error);
        }
        if bytes.len() as u64 > MAX_SEARCH_FILE_BYTES {
            return Outcome::TooBig;
        }
        self.bytes_searched += bytes.len() as u64;
        if let Some(offset) = bytes.iter().position(|byte| *byte == 0) {
            return Outcome::Binary { offset };
        }
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => return Outcome::Binary { offset: error.utf8_error().valid_up_to() },
        };
        self.files_searched += 1;
        self.lines(path, &text);
        Outcome::Searched
    }

    /// Records each line of `text` on which a match starts, once.
    fn lines(&mut self, path: &Path, text: &str) {
        let mut shown_path = None;
        let mut line_number = 1_u64;
        let mut line_start = 0;
        // Line breaks are counted up to here.
        let mut counted = 0;
        // Matches starting before here are on a line already reported.
        let mut reported_until = 0;
        for found in self.matcher.find_iter(text) {
            let start = found.start();
            if start < reported_until {
                continue;
            }
            // An empty match after the final line break is not on a line.
            if start == text.len() && text.ends_with('\n') {
                break;
            }
            let skipped = &text[counted..start];
            line_number += skipped.bytes().filter(|byte| *byte == b'\n').count() as u64;
            if let Some(last_break) = skipped.rfind('\n') {
                line_start = counted + last_break + 1;
            }
            counted = start;
            let line_end = text[line_start..].find('\n').map_or(text.len(), |end| line_start + end);
            reported_until = line_end + 1;

            let full_line = &text[line_start..line_end];
            let full_line = full_line.strip_suffix('\r').unwrap_or(full_line);
            let line = excerpt(full_line, start - line_start);
            if self.matches.len() == self.max_results {
                self.note = Some(format!(
                    "only the first {} matching lines are listed; raise `max_results` (at most {MAX_RESULTS}), or \
                     narrow `path`, `glob` or `pattern`",
                    self.max_results
                ));
                return;
            }
            let path = shown_path.get_or_insert_with(|| display(path));
            let cost = MATCH_OVERHEAD_BYTES + json_len(path) + json_len(&line);
            if self.output_bytes + cost > OUTPUT_BUDGET_BYTES {
                self.note = Some(format!(
                    "the search stopped at {} matching lines to keep the result small; narrow `path`, `glob` or \
                     `pattern` to see the rest",
                    self.matches.len()
                ));
                return;
            }
            self.output_bytes += cost;
            self.matches.push(SearchMatch { path: path.clone(), line_number, offset: line_start as u64, line });
        }
    }
}

/// `line`, or when it is longer than [`MAX_LINE_BYTES`], the part of it around byte `at`
/// (where the match starts) with `…` marking the cuts.
pub(crate) fn excerpt(line: &str, at: usize) -> String {
    if line.len() <= MAX_LINE_BYTES {
        return line.to_owned();
    }
    let at = at.min(line.len());
    let start =
        line.floor_char_boundary(at.saturating_sub(CONTEXT_BEFORE_MATCH_BYTES).min(line.len() - MAX_LINE_BYTES));
    let end = line.floor_char_boundary(start + MAX_LINE_BYTES);
    let before = if start > 0 { "…" } else { "" };
    let after = if end < line.len() { "…" } else { "" };
    format!("{before}{}{after}", &line[start..end])
}
