//! The `files` tool: list, read and search the text files in the directories the operator
//! granted to the tool. It only reads: it never creates, changes or deletes anything.
//!
//! At run time the host preopens each granted directory at a guest path such as `/workspace`
//! (read-only or read-write; this tool does not care) and plain `std::fs` reaches them through
//! WASI. Nothing else exists for the component: a path outside the granted directories, or one
//! that escapes them through `..` or a symbolic link, fails with an error the tool reports as
//! "outside the directories this tool may read". Natively (in tests) the same code reads the
//! real file system.
//!
//! Every walk is bounded so that a large tree cannot exhaust the call's time, fuel or memory
//! limits, nor produce a result over the host's result-size limit (1 MiB by default): depth
//! ([`MAX_DEPTH`]), entries visited ([`MAX_VISITED_ENTRIES`]), bytes searched
//! ([`MAX_SEARCHED_BYTES`]) and the size of the result ([`OUTPUT_BUDGET_BYTES`]). Hitting a bound
//! is never an error: the result says `truncated: true` and its `note` tells the model how to
//! see the rest.
//!
//! Output is deterministic: entries and matches are sorted by path, and paths are shown as the
//! guest sees them.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use toolcell_guest::{ToolError, json, tool};

mod glob;
mod list;
mod read;
mod search;

use glob::Glob;

/// `read`: how many bytes are returned when `length` is omitted.
const DEFAULT_READ_LENGTH: u64 = 64 << 10;

/// `read`: the largest `length`. Half of the host's default 1 MiB result limit, which leaves
/// room for JSON escaping; text that still escapes past [`OUTPUT_BUDGET_BYTES`] is cut shorter.
const MAX_READ_LENGTH: u64 = 512 << 10;

/// `list`: how many entries are returned when `max_results` is omitted.
const DEFAULT_LIST_RESULTS: usize = 1000;

/// `search`: how many matching lines are returned when `max_results` is omitted.
const DEFAULT_SEARCH_RESULTS: usize = 100;

/// The largest `max_results` for both `list` and `search`.
const MAX_RESULTS: usize = 10_000;

/// How many directory levels a recursive `list` or `search` descends: `path`'s own entries are
/// level 1. Deeper directories are listed but not entered.
pub const MAX_DEPTH: usize = 16;

/// How many directory entries one recursive `list` or `search` looks at, shown or not, before
/// it stops; keeps a call over a huge tree (a `node_modules`, a build directory) within its
/// time limit.
pub const MAX_VISITED_ENTRIES: usize = 50_000;

/// `search` skips files larger than this (and reports them in `files_skipped`).
pub const MAX_SEARCH_FILE_BYTES: u64 = 4 << 20;

/// How many bytes one `search` reads in all before it stops.
pub const MAX_SEARCHED_BYTES: u64 = 64 << 20;

/// The result's JSON stays under this many bytes: the host rejects results over its limit
/// (1 MiB by default), and a model gains nothing from a larger one.
pub const OUTPUT_BUDGET_BYTES: usize = 768 << 10;

/// Directories that a recursive `list` or `search` shows but does not enter: version-control
/// internals are large, mostly binary, and never what the model is looking for.
const UNENTERED_DIRECTORIES: [&str; 1] = [".git"];

/// What to do with `path`.
#[json]
#[serde(rename_all = "snake_case")]
#[derive(Copy, PartialEq, Eq)]
pub enum Operation {
    /// Show the entries of the directory `path`: name, kind and size.
    List,
    /// Return the text of the file `path`, or the byte range `offset`..`offset + length` of it.
    Read,
    /// Find the lines that contain `pattern` in the text files under the directory `path`, or
    /// in the file `path`.
    Search,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Self::List => "list",
            Self::Read => "read",
            Self::Search => "search",
        }
    }
}

/// What a directory entry is. Symbolic links are reported as links: `list` and `search` never
/// follow them, `read` does.
#[json]
#[serde(rename_all = "snake_case")]
#[derive(Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link; `target` says where it points.
    Symlink,
    /// A device, socket or pipe: not readable as text.
    Other,
}

/// One entry found by `list`.
#[json]
#[derive(PartialEq, Eq)]
pub struct Entry {
    /// The entry's path relative to the listed directory, `/`-separated: just the file name
    /// unless `recursive`. Append it to the listed `path` (with a `/`) to `read` the entry.
    pub name: String,
    /// File, directory, symbolic link or other.
    pub kind: EntryKind,
    /// The size in bytes; only for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Where a symbolic link points, as written in the link; only for symbolic links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// One line found by `search`.
#[json]
#[derive(PartialEq, Eq)]
pub struct SearchMatch {
    /// The file, as an absolute path.
    pub path: String,
    /// The line's number in the file, counting from 1.
    pub line_number: u64,
    /// The byte offset of the line's start in the file: `read` from here to see the line and
    /// what follows it.
    pub offset: u64,
    /// The line, without its line break. A line longer than 300 bytes is cut to the part
    /// around the first match, with `…` marking what was left out.
    pub line: String,
}

/// The result, tagged with the operation that produced it.
#[json]
#[serde(tag = "operation", rename_all = "snake_case")]
#[derive(PartialEq, Eq)]
pub enum FilesOutput {
    /// The entries of a directory.
    List {
        /// The directory listed.
        path: String,
        /// How many entries are listed.
        count: usize,
        /// True when entries are missing; `note` says why and how to see them.
        truncated: bool,
        /// Why entries are missing and how to see them; only when `truncated`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// The entries, sorted by name; with `recursive`, a directory's contents follow it.
        entries: Vec<Entry>,
    },
    /// A range of a file's text.
    Read {
        /// The file read.
        path: String,
        /// The file's size in bytes.
        size: u64,
        /// The byte offset where `text` starts: the requested `offset`, moved forward past the
        /// rest of a character if it fell inside one.
        offset: u64,
        /// Where the next `read` should start to continue after `text`; absent at the end of
        /// the file. `text` ends before a character that would not fit in `length`, never
        /// inside one, so this can be up to 3 bytes short of `offset + length`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next_offset: Option<u64>,
        /// True when `text` reaches the end of the file.
        eof: bool,
        /// The text.
        text: String,
    },
    /// The lines that match, in order of path and line.
    Search {
        /// The directory or file searched.
        path: String,
        /// How many matching lines are listed.
        count: usize,
        /// How many text files were searched.
        files_searched: usize,
        /// How many files were not searched: binary (not UTF-8 text, or containing a NUL
        /// byte), larger than 4 MiB, or unreadable. Symbolic links are not counted: they are
        /// never followed.
        files_skipped: usize,
        /// True when the search stopped early and there may be more matches; `note` says why
        /// and how to see them.
        truncated: bool,
        /// Why the search stopped early and how to see the rest; only when `truncated`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// The matching lines, one per line however many matches it holds.
        matches: Vec<SearchMatch>,
    },
}

/// List, read and search the text files in the directories granted to this tool, such as `/workspace`. Read-only:
/// nothing is ever written. Paths are absolute.
/// - `list`: a directory's entries (name, kind, size in bytes); `recursive` walks the whole tree.
/// - `read`: a file's text from byte `offset`, at most `length` bytes; if `eof` is false, continue at `next_offset`.
/// - `search`: each line containing `pattern` in the text files under `path`, with file, line number and byte offset.
///
/// `pattern` is literal text unless `regex` is true (Rust syntax: no look-around or backreferences). `glob`, such as
/// `*.rs`, keeps only matching names in `list` and `search`. Only UTF-8 text can be read; `search` skips binary files.
/// Symbolic links are listed but not followed.
///
/// Example: {"operation": "search", "path": "/workspace", "pattern": "fn main", "glob": "*.rs"}
// Lists, reads and searches; it never writes (and asks for `/workspace` read-only). Its
// world is the granted folder, not the open web.
#[tool(title = "Files", output_schema, dirs = ["/workspace"], read_only, idempotent, open_world = false)]
pub fn files(
    /// `list` a directory, `read` a file, or `search` the files under a directory.
    operation: Operation,
    /// The absolute path of the directory or file, e.g. `/workspace/src/main.rs`.
    path: String,
    /// `list` and `search`: also enter subdirectories, down to 16 levels (`.git` directories are
    /// listed but not entered). Default: false for `list`, true for `search`.
    recursive: Option<bool>,
    /// `read` only: the byte offset to start at. Default: 0.
    offset: Option<u64>,
    /// `read` only: how many bytes to return, at most 524288 (512 KiB). Default: 65536.
    #[schemars(range(min = 1, max = MAX_READ_LENGTH))]
    length: Option<u64>,
    /// `search` only, and required for it: the text to find. Each line it occurs on is reported
    /// once; a regular expression (`regex: true`) may also span lines with `\n`.
    pattern: Option<String>,
    /// `search` only: treat `pattern` as a Rust regular expression (no look-around or
    /// backreferences; `^` and `$` match at line starts and ends). Default: false, a literal
    /// text.
    regex: Option<bool>,
    /// `search` only: letters match regardless of case. Default: false.
    case_insensitive: Option<bool>,
    /// `list` and `search`: only entries whose name matches this pattern, e.g. `*.rs` or
    /// `*.{ts,tsx}` (`*` any characters, `?` one character, `[abc]` one of them). A pattern
    /// with `/` is matched against the path relative to `path`, where `**` spans directories:
    /// `src/**/*.rs`. Directories are still entered when their name does not match.
    glob: Option<String>,
    /// `list` and `search`: the most entries or matching lines to return, at most 10000.
    /// Default: 1000 for `list`, 100 for `search`.
    #[schemars(range(min = 1, max = MAX_RESULTS))]
    max_results: Option<usize>,
) -> Result<FilesOutput, ToolError> {
    use Operation::{List, Read, Search};
    reject_unused(
        operation,
        &[
            ("recursive", recursive == Some(true), &[List, Search]),
            ("offset", offset.is_some(), &[Read]),
            ("length", length.is_some(), &[Read]),
            ("pattern", pattern.is_some(), &[Search]),
            ("regex", regex == Some(true), &[Search]),
            ("case_insensitive", case_insensitive == Some(true), &[Search]),
            ("glob", glob.is_some(), &[List, Search]),
            ("max_results", max_results.is_some(), &[List, Search]),
        ],
    )?;
    let path = guest_path(&path)?;
    let glob = glob.as_deref().map(Glob::new).transpose()?;
    match operation {
        List => {
            let max_results = checked_max_results(max_results, DEFAULT_LIST_RESULTS)?;
            list::list(&path, recursive.unwrap_or(false), glob.as_ref(), max_results)
        }
        Read => {
            let length = length.unwrap_or(DEFAULT_READ_LENGTH);
            if !(1..=MAX_READ_LENGTH).contains(&length) {
                return Err(ToolError::invalid_arguments(format!(
                    "`length` must be between 1 and {MAX_READ_LENGTH} bytes; read a larger file in several calls, \
                     continuing at `next_offset`"
                )));
            }
            read::read(&path, offset.unwrap_or(0), length)
        }
        Search => {
            let pattern = pattern.ok_or_else(|| {
                ToolError::invalid_arguments(
                    "`pattern` is required when `operation` is `search`: give the text to find",
                )
            })?;
            let matcher = search::matcher(&pattern, regex.unwrap_or(false), case_insensitive.unwrap_or(false))?;
            let max_results = checked_max_results(max_results, DEFAULT_SEARCH_RESULTS)?;
            search::search(&path, &matcher, glob.as_ref(), recursive.unwrap_or(true), max_results)
        }
    }
}

/// Rejects a parameter given for an operation that does not use it: the model has most likely
/// misunderstood what it does (e.g. `pattern` with `list`, expecting a filter), and silently
/// ignoring it would return something other than what it asked for. Booleans set to `false`
/// change nothing and are accepted.
fn reject_unused(operation: Operation, parameters: &[(&str, bool, &[Operation])]) -> Result<(), ToolError> {
    let Some((name, _, used_by)) =
        parameters.iter().find(|(_, given, used_by)| *given && !used_by.contains(&operation))
    else {
        return Ok(());
    };
    let used_by: Vec<String> = used_by.iter().map(|operation| format!("`{}`", operation.name())).collect();
    let hint = match (*name, operation) {
        ("pattern", Operation::List) => "; to keep only some names, use `glob`",
        ("pattern", Operation::Read) => "; to find text in a file, use `search` with the file as `path`",
        _ => "",
    };
    Err(ToolError::invalid_arguments(format!(
        "`{name}` is used only by {}, not by `{}`: remove it{hint}",
        used_by.join(" and "),
        operation.name()
    )))
}

fn checked_max_results(max_results: Option<usize>, default: usize) -> Result<usize, ToolError> {
    match max_results {
        None => Ok(default),
        Some(max_results @ 1..=MAX_RESULTS) => Ok(max_results),
        Some(_) => Err(ToolError::invalid_arguments(format!(
            "`max_results` must be between 1 and {MAX_RESULTS}; omit it for the default ({default})"
        ))),
    }
}

/// The path to use: absolute, with `.` components, repeated and trailing `/` removed, so that
/// paths in the result read cleanly. `..` is kept: resolving it is the file system's job (and
/// WASI refuses any path that would leave a granted directory).
fn guest_path(path: &str) -> Result<PathBuf, ToolError> {
    if path.is_empty() {
        return Err(ToolError::invalid_arguments(
            "`path` is empty: give the absolute path of a directory or file under a granted directory",
        ));
    }
    let given = Path::new(path);
    if !given.is_absolute() {
        return Err(ToolError::invalid_arguments(format!(
            "`path` must be absolute, but `{path}` is relative: start it with the granted directory it is in, e.g. \
             `/workspace/{path}`"
        )));
    }
    Ok(given.components().collect())
}

/// A path as the guest sees it, for messages and results.
fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Turns a file-system error about `path` into a message that says what to do next.
fn io_error(path: &Path, error: &io::Error) -> ToolError {
    let shown = display(path);
    // Rust's WASI support reports a path under no preopened directory with this message (and
    // an uncategorized kind); the host refuses an escape through `..` or a link with EPERM.
    let outside = granted_directories().is_some_and(|granted| !granted.iter().any(|dir| path.starts_with(dir)));
    if outside || error.kind() == io::ErrorKind::PermissionDenied || error.to_string().contains("pre-opened") {
        return outside_the_grants(&shown);
    }
    match error.kind() {
        io::ErrorKind::NotFound => {
            ToolError::invalid_arguments(format!("`{shown}` does not exist; {}", where_to_look(path)))
        }
        io::ErrorKind::NotADirectory => ToolError::invalid_arguments(format!(
            "`{shown}` does not exist: a part of it before the last `/` is a file, not a directory; {}",
            where_to_look(path)
        )),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidFilename => ToolError::invalid_arguments(format!(
            "`{shown}` is not a valid path ({error}); `list` its directory to see the exact names"
        )),
        io::ErrorKind::Interrupted | io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
            ToolError::retryable(format!("reading `{shown}` was interrupted ({error}); call again"))
        }
        _ => ToolError::failed(format!(
            "reading `{shown}` failed: {error}. The file system refused, not the arguments: try another file, or tell \
             the user"
        )),
    }
}

/// The error for a path no granted directory contains: the model's to fix when some
/// directory is granted (it names them), the operator's when none is.
fn outside_the_grants(shown: &str) -> ToolError {
    match granted_directories() {
        Some(granted) if granted.is_empty() => ToolError::unavailable(
            "no directory is granted to this tool here, so it cannot read any files. This is a setting of the host, \
             not something the arguments can change: tell the user that an operator must grant a directory",
        ),
        Some(granted) => ToolError::invalid_arguments(format!(
            "`{shown}` is outside the directories this tool may read: {}. Use a path under one of them",
            granted.iter().map(|dir| format!("`{dir}`")).collect::<Vec<_>>().join(", ")
        )),
        None => ToolError::invalid_arguments(format!(
            "`{shown}` is outside the directories this tool may read; only paths under the granted directories are \
             readable"
        )),
    }
}

/// The guest paths of the directories the host granted, sorted; `None` natively (where the
/// whole file system is reachable).
fn granted_directories() -> Option<Vec<String>> {
    #[cfg(target_arch = "wasm32")]
    {
        let mut paths: Vec<String> =
            wasip2::filesystem::preopens::get_directories().into_iter().map(|(_, path)| path).collect();
        paths.sort();
        Some(paths)
    }
    #[cfg(not(target_arch = "wasm32"))]
    None
}

/// Advice for a path that does not exist: list its nearest existing ancestor directory.
fn where_to_look(path: &Path) -> String {
    let existing = path
        .ancestors()
        .skip(1)
        .find(|ancestor| ancestor.parent().is_some() && fs::metadata(ancestor).is_ok_and(|meta| meta.is_dir()));
    match existing {
        Some(directory) => format!("`list` `{}` to see what it contains", display(directory)),
        None => "only paths under the directories granted to this tool exist for it: check the path's first \
                 directory"
            .to_owned(),
    }
}

/// The error for `list` on something that is not a directory.
fn not_a_directory(path: &Path) -> ToolError {
    let parent = path.parent().map_or_else(|| "/".to_owned(), display);
    ToolError::invalid_arguments(format!(
        "`{}` is a file, not a directory: `read` it, or `list` its directory `{parent}`",
        display(path)
    ))
}

/// How many bytes `text` takes as a JSON string's contents: serde_json escapes `"`, `\` and
/// control characters, and writes everything else as is.
fn json_len(text: &str) -> usize {
    text.bytes().map(json_byte_len).sum()
}

fn json_byte_len(byte: u8) -> usize {
    match byte {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0x00..0x20 => 6,
        _ => 1,
    }
}

/// What a directory holds, read without following symbolic links.
struct Child {
    name: String,
    path: PathBuf,
    kind: EntryKind,
    /// For files only.
    size: Option<u64>,
}

/// The entries of `dir`, sorted by name. Entries that cannot be read are left out.
fn read_dir_sorted(dir: &Path) -> io::Result<Vec<Child>> {
    let mut children = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let Ok(file_type) = entry.file_type() else { continue };
        let kind = if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        // `DirEntry::metadata` does not follow links either.
        let size = if kind == EntryKind::File { entry.metadata().ok().map(|meta| meta.len()) } else { None };
        children.push(Child { name: entry.file_name().to_string_lossy().into_owned(), path: entry.path(), kind, size });
    }
    children.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(children)
}

/// `name` under `prefix`, `/`-separated; `name` alone at the top.
fn relative_path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_owned() } else { format!("{prefix}/{name}") }
}

fn is_entered(kind: EntryKind, name: &str) -> bool {
    kind == EntryKind::Dir && !UNENTERED_DIRECTORIES.contains(&name)
}

#[cfg(test)]
mod tests;
