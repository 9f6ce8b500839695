//! The `files` tool's native tests in a temporary folder. (Long: one small test per operation
//! and per way a path can escape.)

use std::fs;
use std::io;
use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolcell_guest::{Context, Tool};

use super::*;

/// A temporary directory tree, removed when dropped.
struct Tree {
    dir: TempDir,
}

impl Tree {
    /// A tree holding `files` (paths relative to the root, parents created as needed).
    fn new(files: &[(&str, &[u8])]) -> Self {
        let tree = Self { dir: TempDir::new().expect("create a temporary directory") };
        for (relative, contents) in files {
            tree.write(relative, contents);
        }
        tree
    }

    /// The tree used by most tests.
    fn sample() -> Self {
        let tree = Self::new(&[
            ("a.txt", b"hello\n"),
            ("b.rs", b"fn main() {}\n"),
            ("src/lib.rs", b"pub fn x() {}\n// TODO: more\n"),
            ("src/nested/deep.rs", b"// todo lower\n"),
        ]);
        tree.mkdir("empty");
        tree
    }

    fn write(&self, relative: &str, contents: &[u8]) {
        let path = self.dir.path().join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        fs::write(path, contents).expect("write a file");
    }

    fn mkdir(&self, relative: &str) {
        fs::create_dir_all(self.dir.path().join(relative)).expect("create a directory");
    }

    /// The absolute path of `relative` (the root for `""`), as a string.
    fn path(&self, relative: &str) -> String {
        let path = if relative.is_empty() { self.dir.path().to_path_buf() } else { self.dir.path().join(relative) };
        path.to_str().expect("temporary paths are UTF-8").to_owned()
    }
}

fn invoke(arguments: Value) -> Result<Value, ToolError> {
    FilesTool::invoke(&arguments.to_string(), Context::default())
        .map(|output| serde_json::from_str(&output).expect("the tool returns JSON"))
}

fn run(arguments: Value) -> Result<FilesOutput, ToolError> {
    invoke(arguments).map(|output| serde_json::from_value(output).expect("the output matches FilesOutput"))
}

fn invalid_arguments(arguments: Value) -> String {
    match run(arguments) {
        Err(ToolError::InvalidArguments(message)) => message,
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

struct Listing {
    entries: Vec<Entry>,
    truncated: bool,
    note: Option<String>,
}

fn list(arguments: Value) -> Listing {
    match run(arguments) {
        Ok(FilesOutput::List { count, truncated, note, entries, .. }) => {
            assert_eq!(count, entries.len());
            assert_eq!(truncated, note.is_some(), "a note explains exactly the truncated listings");
            Listing { entries, truncated, note }
        }
        other => panic!("expected list output, got {other:?}"),
    }
}

fn names(entries: &[Entry]) -> Vec<&str> {
    entries.iter().map(|entry| entry.name.as_str()).collect()
}

#[derive(Debug, PartialEq, Eq)]
struct Chunk {
    text: String,
    offset: u64,
    next_offset: Option<u64>,
    eof: bool,
}

fn read(path: &str, offset: Option<u64>, length: Option<u64>) -> Chunk {
    match run(json!({"operation": "read", "path": path, "offset": offset, "length": length})) {
        Ok(FilesOutput::Read { text, offset, next_offset, eof, .. }) => {
            assert_eq!(eof, next_offset.is_none(), "`next_offset` is given exactly when not at the end");
            Chunk { text, offset, next_offset, eof }
        }
        other => panic!("expected read output, got {other:?}"),
    }
}

struct Found {
    matches: Vec<SearchMatch>,
    files_searched: usize,
    files_skipped: usize,
    truncated: bool,
    note: Option<String>,
}

fn search(arguments: Value) -> Found {
    let mut arguments = arguments;
    arguments["operation"] = json!("search");
    match run(arguments) {
        Ok(FilesOutput::Search { count, files_searched, files_skipped, truncated, note, matches, .. }) => {
            assert_eq!(count, matches.len());
            assert_eq!(truncated, note.is_some(), "a note explains exactly the truncated searches");
            Found { matches, files_searched, files_skipped, truncated, note }
        }
        other => panic!("expected search output, got {other:?}"),
    }
}

/// `(path relative to the tree, line number, line)` of each match.
fn hits<'m>(tree: &Tree, found: &'m Found) -> Vec<(String, u64, &'m str)> {
    let root = format!("{}/", tree.path(""));
    found
        .matches
        .iter()
        .map(|found| {
            let relative = found.path.strip_prefix(&root).unwrap_or(&found.path).to_owned();
            (relative, found.line_number, found.line.as_str())
        })
        .collect()
}

// --- list ---

#[test]
fn list_shows_sorted_entries_with_kind_and_size_of_files() {
    let tree = Tree::sample();
    let output = run(json!({"operation": "list", "path": tree.path("")})).unwrap();
    let file = |name: &str, size| Entry { name: name.into(), kind: EntryKind::File, size: Some(size), target: None };
    let dir = |name: &str| Entry { name: name.into(), kind: EntryKind::Dir, size: None, target: None };
    assert_eq!(
        output,
        FilesOutput::List {
            path: tree.path(""),
            count: 4,
            truncated: false,
            note: None,
            entries: vec![file("a.txt", 6), file("b.rs", 13), dir("empty"), dir("src")],
        }
    );
}

#[test]
fn list_json_omits_absent_fields() {
    let tree = Tree::new(&[("f", b"12")]);
    tree.mkdir("d");
    let output = invoke(json!({"operation": "list", "path": tree.path("")})).unwrap();
    assert_eq!(
        output,
        json!({
            "operation": "list",
            "path": tree.path(""),
            "count": 2,
            "truncated": false,
            "entries": [{"name": "d", "kind": "dir"}, {"name": "f", "kind": "file", "size": 2}],
        })
    );
}

#[test]
fn list_recursive_walks_the_tree_with_contents_after_their_directory() {
    let tree = Tree::sample();
    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true}));
    assert_eq!(
        names(&listing.entries),
        ["a.txt", "b.rs", "empty", "src", "src/lib.rs", "src/nested", "src/nested/deep.rs"]
    );
    assert!(!listing.truncated);
    // The same call gives the same result.
    let again = list(json!({"operation": "list", "path": tree.path(""), "recursive": true}));
    assert_eq!(listing.entries, again.entries);
}

#[test]
fn list_sorts_by_path_component() {
    let tree = Tree::new(&[("a/x", b""), ("a-b", b""), ("a.c", b""), ("B", b"")]);
    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true}));
    // Byte order, with a directory's contents right after it.
    assert_eq!(names(&listing.entries), ["B", "a", "a/x", "a-b", "a.c"]);
}

#[test]
fn list_path_is_cleaned_of_dots_and_trailing_slashes() {
    let tree = Tree::sample();
    let messy = format!("{}/./src//", tree.path(""));
    match run(json!({"operation": "list", "path": messy})).unwrap() {
        FilesOutput::List { path, .. } => assert_eq!(path, tree.path("src")),
        other => panic!("expected list output, got {other:?}"),
    }
}

#[test]
fn list_max_results_keeps_the_entries_nearest_to_the_path() {
    let tree = Tree::sample();
    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true, "max_results": 5}));
    assert_eq!(names(&listing.entries), ["a.txt", "b.rs", "empty", "src", "src/lib.rs"]);
    assert!(listing.truncated);
    let note = listing.note.unwrap();
    assert!(note.contains("first 5 entries") && note.contains("`max_results`"), "{note}");

    // Exactly as many entries as allowed is not truncated.
    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true, "max_results": 7}));
    assert_eq!(listing.entries.len(), 7);
    assert!(!listing.truncated);
}

#[test]
fn list_stops_before_the_result_gets_too_big() {
    let tree = Tree::new(&[]);
    for index in 0..MAX_RESULTS {
        tree.write(&format!("file-{index:05}-with-a-longer-name.txt"), b"");
    }
    let listing = list(json!({"operation": "list", "path": tree.path(""), "max_results": MAX_RESULTS}));
    assert!(listing.truncated && listing.entries.len() < MAX_RESULTS, "{}", listing.entries.len());
    let note = listing.note.unwrap();
    assert!(note.contains("to keep the result small"), "{note}");
    // The entries kept are the first ones, in order.
    assert_eq!(listing.entries[0].name, "file-00000-with-a-longer-name.txt");
    let output = invoke(json!({"operation": "list", "path": tree.path(""), "max_results": MAX_RESULTS})).unwrap();
    assert!(output.to_string().len() <= OUTPUT_BUDGET_BYTES);
}

#[test]
fn list_recursion_stops_at_the_depth_cap() {
    let tree = Tree::new(&[]);
    let deep = vec!["d"; MAX_DEPTH + 2].join("/");
    tree.write(&format!("{deep}/bottom.txt"), b"x");
    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true}));
    // Levels 1 to MAX_DEPTH are listed; the directory at MAX_DEPTH is not entered.
    assert_eq!(listing.entries.len(), MAX_DEPTH);
    assert_eq!(listing.entries.last().unwrap().name, vec!["d"; MAX_DEPTH].join("/"));
    assert!(listing.truncated);
    let note = listing.note.unwrap();
    assert!(note.contains(&format!("more than {MAX_DEPTH} levels")), "{note}");
}

#[test]
fn list_shows_but_does_not_enter_git_directories() {
    let tree = Tree::new(&[(".git/config", b"[core]"), ("README", b"hi")]);
    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true}));
    assert_eq!(names(&listing.entries), [".git", "README"]);
    assert!(!listing.truncated);
    // Listed directly, it is an ordinary directory.
    let listing = list(json!({"operation": "list", "path": tree.path(".git")}));
    assert_eq!(names(&listing.entries), ["config"]);
}

#[test]
fn list_glob_filters_names_but_still_enters_directories() {
    let tree = Tree::sample();
    let glob = |glob: &str| {
        let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true, "glob": glob}));
        names(&listing.entries).into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(glob("*.rs"), ["b.rs", "src/lib.rs", "src/nested/deep.rs"]);
    assert_eq!(glob("src/*.rs"), ["src/lib.rs"]);
    assert_eq!(glob("src/**/*.rs"), ["src/lib.rs", "src/nested/deep.rs"]);
    assert_eq!(glob("**/*.rs"), ["b.rs", "src/lib.rs", "src/nested/deep.rs"]);
    assert_eq!(glob("*.{txt,md}"), ["a.txt"]);
    assert_eq!(glob("s*"), ["src"]);
    assert!(glob("*.py").is_empty());
}

#[test]
fn list_of_a_file_says_to_read_it() {
    let tree = Tree::sample();
    let message = invalid_arguments(json!({"operation": "list", "path": tree.path("src/lib.rs")}));
    assert!(message.contains("is a file, not a directory") && message.contains("`read` it"), "{message}");
    assert!(message.contains(&format!("`list` its directory `{}`", tree.path("src"))), "{message}");
}

#[test]
fn missing_paths_point_to_the_nearest_existing_directory() {
    let tree = Tree::sample();
    let message = invalid_arguments(json!({"operation": "list", "path": tree.path("nope")}));
    assert!(message.starts_with(&format!("`{}` does not exist", tree.path("nope"))), "{message}");
    assert!(message.contains(&format!("`list` `{}`", tree.path(""))), "{message}");

    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("src/gone/x.rs")}));
    assert!(message.contains(&format!("`list` `{}` to see what it contains", tree.path("src"))), "{message}");

    let message = invalid_arguments(json!({"operation": "search", "path": tree.path("zzz"), "pattern": "a"}));
    assert!(message.contains("does not exist"), "{message}");

    // A path through a file: NotADirectory on Linux.
    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("a.txt/inner")}));
    assert!(message.contains("does not exist") && message.contains("`list`"), "{message}");
}

// --- read ---

#[test]
fn read_returns_a_small_file_whole() {
    let tree = Tree::sample();
    let output = invoke(json!({"operation": "read", "path": tree.path("src/lib.rs")})).unwrap();
    assert_eq!(
        output,
        json!({
            "operation": "read",
            "path": tree.path("src/lib.rs"),
            "size": 28,
            "offset": 0,
            "eof": true,
            "text": "pub fn x() {}\n// TODO: more\n",
        })
    );
}

#[test]
fn read_range_gives_next_offset_until_the_end() {
    let tree = Tree::new(&[("f.txt", b"0123456789")]);
    let path = tree.path("f.txt");
    assert_eq!(
        read(&path, Some(2), Some(3)),
        Chunk { text: "234".into(), offset: 2, next_offset: Some(5), eof: false }
    );
    assert_eq!(read(&path, Some(7), Some(3)), Chunk { text: "789".into(), offset: 7, next_offset: None, eof: true });
    assert_eq!(read(&path, Some(7), Some(100)), Chunk { text: "789".into(), offset: 7, next_offset: None, eof: true });
}

#[test]
fn read_never_splits_a_character_at_the_end() {
    // "€" is 3 bytes, at 2..5.
    let tree = Tree::new(&[("f.txt", "ab€cd".as_bytes())]);
    let path = tree.path("f.txt");
    assert_eq!(read(&path, None, Some(3)), Chunk { text: "ab".into(), offset: 0, next_offset: Some(2), eof: false });
    assert_eq!(read(&path, None, Some(4)), Chunk { text: "ab".into(), offset: 0, next_offset: Some(2), eof: false });
    assert_eq!(read(&path, None, Some(5)), Chunk { text: "ab€".into(), offset: 0, next_offset: Some(5), eof: false });
}

#[test]
fn read_returns_one_whole_character_when_length_is_shorter() {
    let tree = Tree::new(&[("f.txt", "🎉x".as_bytes())]);
    assert_eq!(
        read(&tree.path("f.txt"), None, Some(1)),
        Chunk { text: "🎉".into(), offset: 0, next_offset: Some(4), eof: false }
    );
}

#[test]
fn read_moves_an_offset_inside_a_character_to_the_next_one() {
    // "€" spans bytes 1..4.
    let tree = Tree::new(&[("f.txt", "a€b".as_bytes())]);
    let path = tree.path("f.txt");
    assert_eq!(read(&path, Some(2), None), Chunk { text: "b".into(), offset: 4, next_offset: None, eof: true });
    assert_eq!(read(&path, Some(3), Some(1)), Chunk { text: "b".into(), offset: 4, next_offset: None, eof: true });
}

#[test]
fn read_in_chunks_reassembles_the_file_for_every_length() {
    let text = "héllo wörld, € and 🎉 and 日本語\nline two\n";
    let tree = Tree::new(&[("f.txt", text.as_bytes())]);
    let path = tree.path("f.txt");
    for length in 1..=9 {
        let mut assembled = String::new();
        let mut offset = 0;
        loop {
            let chunk = read(&path, Some(offset), Some(length));
            assert_eq!(chunk.offset, offset, "length {length}");
            assert!(!chunk.text.is_empty(), "length {length}: no progress at {offset}");
            assert!(chunk.text.len() <= (length as usize).max(4), "length {length}: {:?}", chunk.text);
            assembled.push_str(&chunk.text);
            match chunk.next_offset {
                Some(next) => offset = next,
                None => break,
            }
        }
        assert_eq!(assembled, text, "length {length}");
    }
}

#[test]
fn read_at_the_end_is_empty_and_past_it_is_an_error() {
    let tree = Tree::new(&[("f.txt", b"abc"), ("empty.txt", b"")]);
    assert_eq!(
        read(&tree.path("f.txt"), Some(3), None),
        Chunk { text: "".into(), offset: 3, next_offset: None, eof: true }
    );
    assert_eq!(
        read(&tree.path("empty.txt"), None, None),
        Chunk { text: "".into(), offset: 0, next_offset: None, eof: true }
    );

    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("f.txt"), "offset": 4}));
    assert!(message.starts_with("`offset` 4 is past the end") && message.contains("has 3 bytes"), "{message}");
}

#[test]
fn read_of_a_binary_file_names_the_offending_byte() {
    let tree = Tree::new(&[("latin1.txt", b"caf\xe9 au lait"), ("nul.bin", b"abc\0def"), ("lone.txt", b"ab\xe2\x82")]);
    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("latin1.txt")}));
    assert!(message.starts_with(&format!("`{}` is not a text file", tree.path("latin1.txt"))), "{message}");
    assert!(
        message.contains("byte 3 (0xE9) is not UTF-8 text") && message.contains("`read` another file"),
        "{message}"
    );

    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("nul.bin")}));
    assert!(message.contains("byte 3 (0x00) is a NUL byte"), "{message}");

    // A file that ends in the middle of a character.
    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("lone.txt")}));
    assert!(message.contains("byte 2 (0xE2)"), "{message}");
}

#[test]
fn read_of_text_before_a_binary_part_succeeds() {
    let tree = Tree::new(&[("f", b"hello world\xff\xff")]);
    let path = tree.path("f");
    assert_eq!(read(&path, None, Some(5)), Chunk { text: "hello".into(), offset: 0, next_offset: Some(5), eof: false });
    let message = invalid_arguments(json!({"operation": "read", "path": path, "offset": 6}));
    assert!(message.contains("byte 11 (0xFF)"), "{message}");
}

#[test]
fn read_of_a_directory_says_to_list_it() {
    let tree = Tree::sample();
    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("src")}));
    assert!(message.contains("is a directory, not a file") && message.contains("`list` it"), "{message}");
}

#[test]
fn read_length_must_be_in_range() {
    let tree = Tree::sample();
    for length in [0, MAX_READ_LENGTH + 1] {
        let message = invalid_arguments(json!({"operation": "read", "path": tree.path("a.txt"), "length": length}));
        // The schema's range refuses it before the tool runs, natively as in the host.
        assert!(message.contains("- /length: must be at"), "{message}");
    }
    let chunk = read(&tree.path("a.txt"), None, Some(MAX_READ_LENGTH));
    assert_eq!(chunk.text, "hello\n");
}

#[test]
fn read_cuts_text_whose_json_would_exceed_the_output_budget() {
    // Each 0x01 is written `\u0001` in JSON: six bytes.
    let tree = Tree::new(&[("controls.txt", &vec![1; MAX_READ_LENGTH as usize])]);
    let chunk = read(&tree.path("controls.txt"), None, Some(MAX_READ_LENGTH));
    let expected = OUTPUT_BUDGET_BYTES / 6;
    assert_eq!(chunk.text.len(), expected);
    assert_eq!(chunk.next_offset, Some(expected as u64));
}

#[test]
fn json_lengths_count_escapes() {
    assert_eq!(json_len("a\"\\\n\t\u{1}é"), 1 + 2 + 2 + 2 + 2 + 6 + 2);
    assert_eq!(read::json_prefix("ab\"c", 3), 2);
    assert_eq!(read::json_prefix("ab\"c", 4), 3);
    assert_eq!(read::json_prefix("é€", 4), 2);
    assert_eq!(read::json_prefix("é€", 5), 5);
}

// --- search ---

#[test]
fn search_finds_lines_in_every_file_sorted_by_path() {
    let tree = Tree::sample();
    let found = search(json!({"path": tree.path(""), "pattern": "fn"}));
    assert_eq!(
        hits(&tree, &found),
        [("b.rs".to_owned(), 1, "fn main() {}"), ("src/lib.rs".to_owned(), 1, "pub fn x() {}")]
    );
    assert_eq!(found.files_searched, 4);
    assert_eq!(found.files_skipped, 0);
    assert!(!found.truncated);
}

#[test]
fn search_json_shape() {
    let tree = Tree::new(&[("notes.md", b"# Title\nsome text\n")]);
    let output = invoke(json!({"operation": "search", "path": tree.path(""), "pattern": "text"})).unwrap();
    assert_eq!(
        output,
        json!({
            "operation": "search",
            "path": tree.path(""),
            "count": 1,
            "files_searched": 1,
            "files_skipped": 0,
            "truncated": false,
            "matches": [{"path": tree.path("notes.md"), "line_number": 2, "offset": 8, "line": "some text"}],
        })
    );
}

#[test]
fn search_match_offset_is_where_read_shows_the_line() {
    let tree = Tree::new(&[("f.txt", "first\nsécond\nthird needle here\n".as_bytes())]);
    let found = search(json!({"path": tree.path(""), "pattern": "needle"}));
    let hit = &found.matches[0];
    assert_eq!((hit.line_number, hit.offset), (3, 14));
    let chunk = read(&hit.path, Some(hit.offset), Some(hit.line.len() as u64));
    assert_eq!(chunk.text, hit.line);
}

#[test]
fn search_is_literal_unless_regex_is_set() {
    let tree = Tree::new(&[("f.txt", b"a.b\naxb\n(x)\n")]);
    let lines =
        |arguments: Value| -> Vec<u64> { search(arguments).matches.iter().map(|found| found.line_number).collect() };
    assert_eq!(lines(json!({"path": tree.path(""), "pattern": "a.b"})), [1]);
    assert_eq!(lines(json!({"path": tree.path(""), "pattern": "a.b", "regex": true})), [1, 2]);
    assert_eq!(lines(json!({"path": tree.path(""), "pattern": "(x)"})), [3]);
    assert_eq!(lines(json!({"path": tree.path(""), "pattern": r"^a\wb$", "regex": true})), [2]);
}

#[test]
fn search_case_insensitive_folds_unicode_too() {
    let tree = Tree::sample();
    tree.write("fr.txt", "Un été chaud\n".as_bytes());
    let found = search(json!({"path": tree.path(""), "pattern": "TODO", "case_insensitive": true}));
    assert_eq!(
        hits(&tree, &found),
        [("src/lib.rs".to_owned(), 2, "// TODO: more"), ("src/nested/deep.rs".to_owned(), 1, "// todo lower")]
    );
    let found = search(json!({"path": tree.path(""), "pattern": "TODO"}));
    assert_eq!(found.matches.len(), 1);
    let found = search(json!({"path": tree.path(""), "pattern": "ÉTÉ", "case_insensitive": true}));
    assert_eq!(hits(&tree, &found), [("fr.txt".to_owned(), 1, "Un été chaud")]);
}

#[test]
fn search_reports_each_line_once_and_strips_line_breaks() {
    let tree = Tree::new(&[("crlf.txt", b"one\r\naaa two\r\nthree\r\n")]);
    let found = search(json!({"path": tree.path(""), "pattern": "a"}));
    assert_eq!(hits(&tree, &found), [("crlf.txt".to_owned(), 2, "aaa two")]);
    assert_eq!(found.matches[0].offset, 5);
    // `$` matches before `\r\n`.
    let found = search(json!({"path": tree.path(""), "pattern": "e$", "regex": true}));
    assert_eq!(hits(&tree, &found), [("crlf.txt".to_owned(), 1, "one"), ("crlf.txt".to_owned(), 3, "three")]);
}

#[test]
fn search_regex_can_span_lines_and_reports_the_first() {
    let tree = Tree::new(&[("f.txt", b"x\nfoo\nbar\n")]);
    let found = search(json!({"path": tree.path(""), "pattern": r"foo\nbar", "regex": true}));
    assert_eq!(hits(&tree, &found), [("f.txt".to_owned(), 2, "foo")]);
    // An empty match after the last line break is not a line.
    let found = search(json!({"path": tree.path(""), "pattern": "^", "regex": true}));
    assert_eq!(found.matches.iter().map(|found| found.line_number).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn search_rejects_bad_patterns() {
    let tree = Tree::sample();
    let message =
        invalid_arguments(json!({"operation": "search", "path": tree.path(""), "pattern": "(a", "regex": true}));
    assert!(message.starts_with("`pattern` is not a valid regular expression"), "{message}");
    assert!(message.contains("unclosed group") && message.contains("set `regex` to false"), "{message}");

    let message = invalid_arguments(
        json!({"operation": "search", "path": tree.path(""), "pattern": r"\w{100}{100}", "regex": true}),
    );
    assert!(message.starts_with("`pattern` is too big"), "{message}");

    let message = invalid_arguments(json!({"operation": "search", "path": tree.path(""), "pattern": ""}));
    assert!(message.starts_with("`pattern` is empty"), "{message}");

    let message = invalid_arguments(json!({"operation": "search", "path": tree.path("")}));
    assert!(message.starts_with("`pattern` is required when `operation` is `search`"), "{message}");
}

#[test]
fn search_max_results_truncates_with_a_note() {
    let tree = Tree::new(&[("a.txt", "x\n".repeat(6).as_bytes()), ("b.txt", b"x\n")]);
    let found = search(json!({"path": tree.path(""), "pattern": "x", "max_results": 3}));
    assert_eq!(found.matches.iter().map(|found| found.line_number).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(found.truncated);
    let note = found.note.unwrap();
    assert!(note.contains("first 3 matching lines") && note.contains("`max_results`"), "{note}");

    // Exactly as many matches as allowed is not truncated.
    let found = search(json!({"path": tree.path(""), "pattern": "x", "max_results": 7}));
    assert_eq!(found.matches.len(), 7);
    assert!(!found.truncated);
}

#[test]
fn search_stops_before_the_result_gets_too_big() {
    let line = format!("needle {}\n", "\"".repeat(290));
    let tree = Tree::new(&[("quotes.txt", line.repeat(5000).as_bytes())]);
    let arguments =
        json!({"operation": "search", "path": tree.path(""), "pattern": "needle", "max_results": MAX_RESULTS});
    let found = search(arguments.clone());
    assert!(found.truncated && found.matches.len() < 5000, "{}", found.matches.len());
    let note = found.note.unwrap();
    assert!(note.contains("to keep the result small"), "{note}");
    assert!(invoke(arguments).unwrap().to_string().len() <= OUTPUT_BUDGET_BYTES);
}

#[test]
fn search_skips_binary_and_oversized_files() {
    let big = format!("needle\n{}", "x".repeat(MAX_SEARCH_FILE_BYTES as usize));
    let tree = Tree::new(&[
        ("binary.dat", b"needle\0\x01"),
        ("latin1.txt", b"needle caf\xe9"),
        ("big.txt", big.as_bytes()),
        ("text.txt", b"a needle\n"),
    ]);
    let found = search(json!({"path": tree.path(""), "pattern": "needle"}));
    assert_eq!(hits(&tree, &found), [("text.txt".to_owned(), 1, "a needle")]);
    assert_eq!((found.files_searched, found.files_skipped), (1, 3));
    assert!(!found.truncated);

    // Named directly, such a file is an error that says why.
    let message = invalid_arguments(json!({"operation": "search", "path": tree.path("binary.dat"), "pattern": "n"}));
    assert!(message.contains("is not a text file (byte 6"), "{message}");
    let message = invalid_arguments(json!({"operation": "search", "path": tree.path("big.txt"), "pattern": "n"}));
    assert!(message.contains("larger than 4 MiB") && message.contains("`read` it in parts"), "{message}");
}

#[test]
fn search_of_a_single_file_ignores_glob() {
    let tree = Tree::sample();
    let found = search(json!({"path": tree.path("src/lib.rs"), "pattern": "TODO", "glob": "*.md"}));
    assert_eq!(hits(&tree, &found), [("src/lib.rs".to_owned(), 2, "// TODO: more")]);
    assert_eq!(found.files_searched, 1);
}

#[test]
fn search_glob_and_recursive_narrow_the_files() {
    let tree = Tree::sample();
    tree.write("notes.txt", b"fn in a note\n");
    let files = |arguments: Value| -> Vec<String> {
        hits(&tree, &search(arguments)).into_iter().map(|(path, _, _)| path).collect()
    };
    assert_eq!(files(json!({"path": tree.path(""), "pattern": "fn"})), ["b.rs", "notes.txt", "src/lib.rs"]);
    assert_eq!(files(json!({"path": tree.path(""), "pattern": "fn", "glob": "*.rs"})), ["b.rs", "src/lib.rs"]);
    assert_eq!(files(json!({"path": tree.path(""), "pattern": "fn", "glob": "src/**"})), ["src/lib.rs"]);
    assert_eq!(files(json!({"path": tree.path(""), "pattern": "fn", "recursive": false})), ["b.rs", "notes.txt"]);
}

#[test]
fn search_does_not_enter_git_directories_or_go_past_the_depth_cap() {
    let tree = Tree::new(&[(".git/COMMIT_EDITMSG", b"needle"), ("top.txt", b"needle")]);
    let deep = vec!["d"; MAX_DEPTH + 1].join("/");
    tree.write(&format!("{deep}/deep.txt"), b"needle");
    let found = search(json!({"path": tree.path(""), "pattern": "needle"}));
    assert_eq!(hits(&tree, &found), [("top.txt".to_owned(), 1, "needle")]);
    assert!(found.truncated);
    let note = found.note.unwrap();
    assert!(note.contains(&format!("more than {MAX_DEPTH} levels")), "{note}");
}

#[test]
fn search_cuts_long_lines_around_the_match() {
    let line = format!("{}needle{}", "a".repeat(1000), "é".repeat(1000));
    let tree = Tree::new(&[("long.txt", line.as_bytes())]);
    let found = search(json!({"path": tree.path(""), "pattern": "needle"}));
    let shown = &found.matches[0].line;
    assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
    assert!(shown.contains(&format!("{}needle", "a".repeat(100))), "{shown}");
    assert!(shown.len() <= 300 + 2 * '…'.len_utf8(), "{}", shown.len());
}

#[test]
fn excerpt_keeps_short_lines_and_cuts_at_character_boundaries() {
    assert_eq!(search::excerpt("short", 2), "short");
    let line = "€".repeat(200); // 600 bytes
    for at in [0, 1, 299, 300, 599, 600, 10_000] {
        let shown = search::excerpt(&line, at);
        let inner = shown.trim_start_matches('…').trim_end_matches('…');
        assert!(!inner.is_empty() && inner.len() <= 300 && inner.chars().all(|c| c == '€'), "{at}: {shown}");
    }
    // A match near the end shows a full window that reaches the end.
    let line = format!("{}END", "x".repeat(500));
    let shown = search::excerpt(&line, 500);
    assert!(shown.starts_with('…') && shown.ends_with("END") && shown.len() == 300 + '…'.len_utf8(), "{shown}");
}

// --- symbolic links ---

#[cfg(unix)]
#[test]
fn symlinks_are_listed_but_not_followed() {
    use std::os::unix::fs::symlink;

    let tree = Tree::sample();
    symlink("a.txt", tree.dir.path().join("link.txt")).unwrap();
    symlink("src", tree.dir.path().join("linkdir")).unwrap();
    symlink("/nowhere", tree.dir.path().join("dangling")).unwrap();

    let listing = list(json!({"operation": "list", "path": tree.path(""), "recursive": true}));
    let links: Vec<_> = listing.entries.iter().filter(|entry| entry.kind == EntryKind::Symlink).collect();
    let link = |name: &str, target: &str| Entry {
        name: name.into(),
        kind: EntryKind::Symlink,
        size: None,
        target: Some(target.into()),
    };
    assert_eq!(links, [&link("dangling", "/nowhere"), &link("link.txt", "a.txt"), &link("linkdir", "src")]);
    assert!(!names(&listing.entries).iter().any(|name| name.starts_with("linkdir/")), "{:?}", names(&listing.entries));

    // `search` skips links (without counting them), so each file is found once.
    let found = search(json!({"path": tree.path(""), "pattern": "hello"}));
    assert_eq!(hits(&tree, &found), [("a.txt".to_owned(), 1, "hello")]);
    assert_eq!(found.files_skipped, 0);
    let found = search(json!({"path": tree.path(""), "pattern": "TODO"}));
    assert_eq!(found.matches.len(), 1);

    // Named explicitly, a link is followed like any path.
    assert_eq!(read(&tree.path("link.txt"), None, None).text, "hello\n");
    let listing = list(json!({"operation": "list", "path": tree.path("linkdir")}));
    assert_eq!(names(&listing.entries), ["lib.rs", "nested"]);
    let message = invalid_arguments(json!({"operation": "read", "path": tree.path("dangling")}));
    assert!(message.contains("does not exist"), "{message}");
}

// --- errors ---

#[test]
fn io_errors_become_messages_that_say_what_to_do() {
    let path = Path::new("/etc/passwd");
    let outside = "`/etc/passwd` is outside the directories this tool may read; only paths under the granted \
                   directories are readable";
    let denied = io_error(path, &io::Error::from(io::ErrorKind::PermissionDenied));
    assert_eq!(denied, ToolError::invalid_arguments(outside));
    // What Rust's WASI support reports for a path under no preopened directory.
    let no_preopen =
        io::Error::other("failed to find a pre-opened file descriptor through which \"/etc/passwd\" could be opened");
    assert_eq!(io_error(path, &no_preopen), ToolError::invalid_arguments(outside));

    let missing = io_error(Path::new("/no/such/dir/file"), &io::Error::from(io::ErrorKind::NotFound));
    assert!(
        matches!(&missing, ToolError::InvalidArguments(message) if message.contains("does not exist")),
        "{missing:?}"
    );

    let interrupted = io_error(path, &io::Error::from(io::ErrorKind::TimedOut));
    assert!(matches!(interrupted, ToolError::Failed { retryable: true, .. }), "{interrupted:?}");

    let other = io_error(path, &io::Error::other("disk on fire"));
    assert!(
        matches!(&other, ToolError::Failed { message, retryable: false }
            if message.starts_with("reading `/etc/passwd` failed: disk on fire")),
        "{other:?}"
    );
}

#[test]
fn paths_must_be_absolute() {
    let message = invalid_arguments(json!({"operation": "read", "path": "src/main.rs"}));
    assert!(
        message.starts_with("`path` must be absolute") && message.contains("`/workspace/src/main.rs`"),
        "{message}"
    );
    let message = invalid_arguments(json!({"operation": "list", "path": ""}));
    assert!(message.starts_with("`path` is empty"), "{message}");
}

#[test]
fn parameters_of_other_operations_are_rejected() {
    let tree = Tree::sample();
    let root = tree.path("");
    let message = invalid_arguments(json!({"operation": "list", "path": root, "offset": 0}));
    assert_eq!(message, "`offset` is used only by `read`, not by `list`: remove it");
    let message = invalid_arguments(json!({"operation": "list", "path": root, "pattern": "x"}));
    assert_eq!(
        message,
        "`pattern` is used only by `search`, not by `list`: remove it; to keep only some names, use `glob`"
    );
    let message = invalid_arguments(json!({"operation": "read", "path": root, "pattern": "x"}));
    assert!(message.ends_with("use `search` with the file as `path`"), "{message}");
    let message = invalid_arguments(json!({"operation": "read", "path": root, "max_results": 3}));
    assert_eq!(message, "`max_results` is used only by `list` and `search`, not by `read`: remove it");
    let message = invalid_arguments(json!({"operation": "search", "path": root, "pattern": "x", "length": 3}));
    assert_eq!(message, "`length` is used only by `read`, not by `search`: remove it");

    // `false` and `null` change nothing and are accepted anywhere.
    let listing = list(json!({
        "operation": "list", "path": root, "regex": false, "case_insensitive": false, "offset": null,
    }));
    assert_eq!(listing.entries.len(), 4);
    assert_eq!(read(&tree.path("a.txt"), None, None).text, "hello\n");
    let output = run(json!({"operation": "read", "path": tree.path("a.txt"), "recursive": false}));
    assert!(output.is_ok(), "{output:?}");
}

#[test]
fn max_results_must_be_in_range() {
    let tree = Tree::sample();
    for max_results in [0, MAX_RESULTS + 1] {
        let message =
            invalid_arguments(json!({"operation": "list", "path": tree.path(""), "max_results": max_results}));
        // The schema's range refuses it before the tool runs, natively as in the host.
        assert!(message.contains("- /max_results: must be at"), "{message}");
    }
    let message =
        invalid_arguments(json!({"operation": "search", "path": tree.path(""), "pattern": "x", "max_results": 0}));
    assert!(message.contains("- /max_results: must be at least 1"), "{message}");
}

#[test]
fn bad_globs_are_rejected() {
    let tree = Tree::sample();
    let message = |glob: &str| invalid_arguments(json!({"operation": "list", "path": tree.path(""), "glob": glob}));
    assert!(message("").starts_with("`glob` is empty"));
    let absolute = message("/workspace/src/*.rs");
    assert!(absolute.contains("cannot start with `/`") && absolute.contains("`src/*.rs`"), "{absolute}");
    let unclosed = message("*.{ts,tsx");
    assert!(unclosed.contains("has a `{` without its `}`"), "{unclosed}");
    let range = message("[z-a]");
    assert!(range.contains("is not a valid pattern"), "{range}");
}

#[test]
fn glob_syntax() {
    let matches = |glob: &str, path: &str| Glob::new(glob).unwrap().matches(path);
    assert!(matches("*.rs", "lib.rs") && matches("*.rs", "src/lib.rs"));
    assert!(!matches("*.rs", "lib.rs.bak") && !matches("*.rs", "src.rs/lib.txt"));
    assert!(matches("lib.?s", "lib.rs") && !matches("lib.?s", "lib.s"));
    assert!(matches("*.{ts,tsx}", "a.tsx") && matches("*.{ts,tsx}", "a.ts") && !matches("*.{ts,tsx}", "a.js"));
    assert!(matches("file[12].txt", "file1.txt") && !matches("file[12].txt", "file3.txt"));
    assert!(matches("[a-c]*", "beta") && !matches("[a-c]*", "delta"));
    assert!(matches("[!a]*", "beta") && !matches("[!a]*", "alpha"));
    assert!(matches("[]]", "]") && matches("a[b", "a[b"));
    assert!(matches(r"\*", "*") && !matches(r"\*", "x"));
    assert!(matches("a+b (1).txt", "a+b (1).txt"));
    // With a `/`, the whole relative path is matched; `**/` spans zero or more directories.
    assert!(matches("src/*.rs", "src/lib.rs") && !matches("src/*.rs", "src/a/lib.rs"));
    assert!(matches("src/**/*.rs", "src/lib.rs") && matches("src/**/*.rs", "src/a/b/lib.rs"));
    assert!(!matches("src/**/*.rs", "lib/src/x.rs"));
    assert!(matches("**/test_*", "test_a") && matches("**/test_*", "x/y/test_a"));
    assert!(matches("src/**", "src/a/b") && !matches("src/**", "src"));
    // `*` and `?` stay within one name.
    assert!(!matches("src/*", "src/a/b") && !matches("a?b", "a/b"));
}

#[test]
fn errors_through_json() {
    // Shapes the host's schema validation would reject still fail cleanly, never panic.
    for arguments in [
        json!({"path": "/workspace"}),
        json!({"operation": "list"}),
        json!({"operation": "delete", "path": "/workspace"}),
        json!({"operation": "read", "path": "/workspace", "offset": -1}),
        json!({"operation": "list", "path": "/workspace", "hidden": true}),
        json!({"operation": "list", "path": 7}),
    ] {
        let error = invoke(arguments.clone()).unwrap_err();
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{arguments}: {error:?}");
    }
}

// --- metadata ---

#[test]
fn metadata_names_the_tool_files() {
    let metadata = FilesTool::metadata();
    assert_eq!(metadata.name, "files");
    assert!(metadata.description.chars().count() <= 1024, "{}", metadata.description.chars().count());
    for operation in ["`list`", "`read`", "`search`"] {
        assert!(metadata.description.contains(operation), "{operation}");
    }
}

#[test]
fn parameters_schema_snapshot() {
    insta::assert_json_snapshot!(FilesTool::metadata().parameters_schema);
}

#[test]
fn output_schema_snapshot() {
    insta::assert_json_snapshot!(FilesTool::metadata().output_schema);
}
