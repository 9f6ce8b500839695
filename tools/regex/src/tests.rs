use serde_json::{Value, json};
use toolcell_guest::{Context, Tool};

use super::*;

fn run(pattern: &str, text: &str, operation: Operation) -> Result<RegexOutput, ToolError> {
    regex(pattern.into(), text.into(), operation, None, None, None)
}

fn find_all(pattern: &str, text: &str, flags: Flags) -> Vec<Match> {
    match regex(pattern.into(), text.into(), Operation::Find, None, Some(flags), None) {
        Ok(RegexOutput::Find { matches, .. }) => matches,
        other => panic!("expected find output, got {other:?}"),
    }
}

fn matched_texts(pattern: &str, text: &str, flags: Flags) -> Vec<String> {
    find_all(pattern, text, flags).into_iter().map(|found| found.text).collect()
}

fn replaced(pattern: &str, text: &str, replacement: &str, limit: Option<usize>) -> (String, usize) {
    match regex(pattern.into(), text.into(), Operation::Replace, Some(replacement.into()), None, limit) {
        Ok(RegexOutput::Replace { text, replacements }) => (text, replacements),
        other => panic!("expected replace output, got {other:?}"),
    }
}

fn parts(pattern: &str, text: &str, limit: Option<usize>) -> Vec<String> {
    match regex(pattern.into(), text.into(), Operation::Split, None, None, limit) {
        Ok(RegexOutput::Split { parts }) => parts,
        other => panic!("expected split output, got {other:?}"),
    }
}

fn invalid_arguments(result: Result<RegexOutput, ToolError>) -> String {
    match result {
        Err(ToolError::InvalidArguments(message)) => message,
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

fn invoke(arguments: Value) -> Result<Value, ToolError> {
    RegexTool::invoke(&arguments.to_string(), Context::default())
        .map(|output| serde_json::from_str(&output).expect("the tool returns JSON"))
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

// --- find ---

#[test]
fn find_lists_every_match_with_offsets() {
    let output = run(r"\d+", "a1 b22 c333", Operation::Find).unwrap();
    let match_at =
        |text: &str, start, end| Match { text: text.into(), start, end, groups: Vec::new(), named: BTreeMap::new() };
    assert_eq!(
        output,
        RegexOutput::Find {
            count: 3,
            truncated: false,
            matches: vec![match_at("1", 1, 2), match_at("22", 4, 6), match_at("333", 8, 11)],
        }
    );
}

#[test]
fn find_without_matches_is_empty_not_an_error() {
    let output = run("z", "abc", Operation::Find).unwrap();
    assert_eq!(output, RegexOutput::Find { count: 0, truncated: false, matches: Vec::new() });
}

#[test]
fn find_offsets_count_characters_not_bytes() {
    // "é" is 2 bytes, "🎉" 4 bytes (2 UTF-16 units): each counts as one character.
    let text = "héllo 🎉 wörld";
    let found = find_all(r"w\w+", text, Flags::default());
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].text.as_str(), found[0].start, found[0].end), ("wörld", 8, 13));
    assert_eq!(text.chars().skip(found[0].start).take(found[0].end - found[0].start).collect::<String>(), "wörld");

    let found = find_all("🎉|ö", text, Flags::default());
    let offsets: Vec<_> = found.iter().map(|found| (found.start, found.end)).collect();
    assert_eq!(offsets, [(6, 7), (9, 10)]);
}

#[test]
fn empty_matches_fall_between_characters() {
    let offsets: Vec<_> = find_all("", "é🎉", Flags::default()).iter().map(|found| found.start).collect();
    assert_eq!(offsets, [0, 1, 2]);
}

#[test]
fn find_reports_numbered_and_named_groups_with_null_for_unused_ones() {
    let pattern = r"(?<year>\d{4})-(\d{2})(?:-(?P<day>\d{2}))?";
    let found = find_all(pattern, "from 2024-05 to 2024-06-07", Flags::default());
    assert_eq!(found.len(), 2);

    assert_eq!(found[0].groups, [Some("2024".to_owned()), Some("05".to_owned()), None]);
    assert_eq!(
        found[0].named,
        BTreeMap::from([("day".to_owned(), None), ("year".to_owned(), Some("2024".to_owned()))])
    );
    assert_eq!(found[1].groups, [Some("2024".to_owned()), Some("06".to_owned()), Some("07".to_owned())]);
    assert_eq!(found[1].named["day"].as_deref(), Some("07"));
}

#[test]
fn find_json_omits_group_fields_only_when_the_pattern_has_no_such_groups() {
    let output = invoke(json!({"pattern": "b", "text": "abc", "operation": "find"})).unwrap();
    assert_eq!(
        output,
        json!({"operation": "find", "count": 1, "truncated": false, "matches": [{"text": "b", "start": 1, "end": 2}]})
    );

    let output = invoke(json!({"pattern": "(a)|(b)", "text": "b", "operation": "find"})).unwrap();
    assert_eq!(output["matches"][0], json!({"text": "b", "start": 0, "end": 1, "groups": [null, "b"]}));

    let output = invoke(json!({"pattern": "(?<x>a)?b", "text": "b", "operation": "find"})).unwrap();
    assert_eq!(output["matches"][0]["named"], json!({"x": null}));
}

#[test]
fn find_limit_caps_the_matches_and_says_so() {
    let output = regex(r"\d".into(), "1 2 3".into(), Operation::Find, None, None, Some(2)).unwrap();
    let RegexOutput::Find { count, truncated, matches } = output else { panic!("expected find output") };
    assert_eq!((count, truncated), (2, true));
    assert_eq!(matches.iter().map(|found| found.text.as_str()).collect::<Vec<_>>(), ["1", "2"]);

    // A limit that is exactly the number of matches truncates nothing.
    let output = regex(r"\d".into(), "1 2 3".into(), Operation::Find, None, None, Some(3)).unwrap();
    assert!(matches!(output, RegexOutput::Find { count: 3, truncated: false, .. }));
}

// --- flags ---

#[test]
fn case_insensitive_flag() {
    let flags = Flags { case_insensitive: true, ..Flags::default() };
    assert_eq!(matched_texts("straße", "STRASSE Straße STRAẞE", flags), ["Straße", "STRAẞE"]);
    assert_eq!(matched_texts("straße", "STRASSE Straße", Flags::default()), Vec::<String>::new());
}

#[test]
fn multi_line_flag() {
    let text = "one\ntwo\nthree";
    assert_eq!(matched_texts(r"^\w+$", text, Flags::default()), Vec::<String>::new());
    let flags = Flags { multi_line: true, ..Flags::default() };
    assert_eq!(matched_texts(r"^\w+$", text, flags), ["one", "two", "three"]);
}

#[test]
fn dot_matches_new_line_flag() {
    let text = "<b>\nbold\n</b>";
    assert_eq!(matched_texts("<b>.*</b>", text, Flags::default()), Vec::<String>::new());
    let flags = Flags { dot_matches_new_line: true, ..Flags::default() };
    assert_eq!(matched_texts("<b>.*</b>", text, flags), [text]);
}

#[test]
fn ignore_whitespace_flag() {
    let pattern = r"\d{3} - \d{4}   # a phone number";
    assert_eq!(matched_texts(pattern, "call 555-1234", Flags::default()), Vec::<String>::new());
    let flags = Flags { ignore_whitespace: true, ..Flags::default() };
    assert_eq!(matched_texts(pattern, "call 555-1234", flags), ["555-1234"]);
}

#[test]
fn unicode_flag_switches_classes_to_ascii() {
    assert_eq!(matched_texts(r"\w+", "naïve café", Flags::default()), ["naïve", "café"]);
    let ascii = Flags { unicode: false, ..Flags::default() };
    assert_eq!(matched_texts(r"\w+", "naïve café", ascii), ["na", "ve", "caf"]);
}

#[test]
fn flags_default_when_the_object_is_partial() {
    let output =
        invoke(json!({"pattern": "é", "text": "É", "operation": "find", "flags": {"case_insensitive": true}})).unwrap();
    // Case folding of "é" needs Unicode, so this also shows `unicode` defaulted to true.
    assert_eq!(output["count"], 1);
}

#[test]
fn inline_flags_work_without_the_flags_argument() {
    assert_eq!(matched_texts("(?i)abc", "ABC", Flags::default()), ["ABC"]);
}

// --- replace ---

#[test]
fn replace_expands_numbered_named_and_whole_match_references() {
    let pattern = r"(?<year>\d{4})-(\d{2})-(\d{2})";
    let (text, count) = replaced(pattern, "on 2024-05-06 and 1999-12-31", "$3.${2}.${year} [$0] $$1", None);
    assert_eq!(text, "on 06.05.2024 [2024-05-06] $1 and 31.12.1999 [1999-12-31] $1");
    assert_eq!(count, 2);
}

#[test]
fn replace_puts_nothing_for_a_group_that_did_not_participate() {
    assert_eq!(replaced("(a)|(b)", "ab", "<$1|$2>", None), ("<a|><|b>".to_owned(), 2));
}

#[test]
fn replace_with_empty_string_deletes_matches() {
    assert_eq!(replaced(r"\s+", " a  b\tc ", "", None), ("abc".to_owned(), 4));
}

#[test]
fn replace_limit_replaces_only_the_first_matches() {
    assert_eq!(replaced("o", "foo boo", "0", Some(3)), ("f00 b0o".to_owned(), 3));
}

#[test]
fn replace_without_matches_returns_the_text_unchanged() {
    assert_eq!(replaced("x", "abc", "y", None), ("abc".to_owned(), 0));
}

#[test]
fn dollar_signs_that_start_no_reference_are_literal() {
    // `$` before a non-name character, at the end, or before an unclosed brace.
    assert_eq!(replaced("a", "a", "$ $-${x $", None), ("$ $-${x $".to_owned(), 1));
}

#[test]
fn replace_through_json() {
    let output = invoke(json!({
        "pattern": "(\\w+)@(\\w+)",
        "text": "ann@home, bob@work",
        "operation": "replace",
        "replacement": "${2}:$1",
        "limit": 1,
    }))
    .unwrap();
    assert_eq!(output, json!({"operation": "replace", "text": "home:ann, bob@work", "replacements": 1}));
}

// --- split ---

#[test]
fn split_returns_the_pieces_between_matches() {
    assert_eq!(parts(r"\s*[,;]\s*", "a , b;c,,d", None), strings(&["a", "b", "c", "", "d"]));
    assert_eq!(parts(",", ",a,", None), strings(&["", "a", ""]));
    assert_eq!(parts(",", "no commas", None), strings(&["no commas"]));
}

#[test]
fn split_limit_counts_cuts_and_keeps_the_rest_whole() {
    assert_eq!(parts(",", "a,b,c,d", Some(2)), strings(&["a", "b", "c,d"]));
    assert_eq!(parts(",", "a,b", Some(usize::MAX)), strings(&["a", "b"]));
}

#[test]
fn split_handles_multibyte_text() {
    assert_eq!(parts("🎉", "é🎉ü🎉", None), strings(&["é", "ü", ""]));
}

#[test]
fn split_through_json() {
    let output = invoke(json!({"pattern": "-", "text": "x-y", "operation": "split"})).unwrap();
    assert_eq!(output, json!({"operation": "split", "parts": ["x", "y"]}));
}

// --- errors ---

#[test]
fn bad_pattern_quotes_the_regex_error_with_a_caret() {
    let message = invalid_arguments(run("(ab", "ab", Operation::Find));
    assert!(message.starts_with("`pattern` is not a valid regular expression"), "{message}");
    assert!(message.contains("(ab\n") && message.contains('^') && message.contains("unclosed group"), "{message}");
}

#[test]
fn look_around_and_backreferences_are_rejected_as_bad_patterns() {
    let message = invalid_arguments(run("a(?=b)", "ab", Operation::Find));
    assert!(message.contains("look-around"), "{message}");
    let message = invalid_arguments(run(r"(a)\1", "aa", Operation::Find));
    assert!(message.contains("backreferences are not supported"), "{message}");
}

#[test]
fn oversized_pattern_is_rejected_with_the_limit() {
    let message = invalid_arguments(run(r"\w{100}{100}", "", Operation::Find));
    assert!(message.starts_with("`pattern` is too big"), "{message}");
    assert!(message.contains(&SIZE_LIMIT_BYTES.to_string()), "{message}");
}

#[test]
fn ascii_mode_rejects_patterns_that_could_split_a_character() {
    let flags = Flags { unicode: false, ..Flags::default() };
    let message = invalid_arguments(regex(".".into(), "é".into(), Operation::Find, None, Some(flags.clone()), None));
    assert!(message.starts_with("`pattern` is not a valid regular expression"), "{message}");
    assert!(message.contains("invalid UTF-8"), "{message}");
    let message = invalid_arguments(regex("[^a]".into(), "é".into(), Operation::Find, None, Some(flags), None));
    assert!(message.contains("invalid UTF-8"), "{message}");
}

#[test]
fn replace_requires_a_replacement() {
    let message = invalid_arguments(run("a", "a", Operation::Replace));
    assert!(message.starts_with("`replacement` is required"), "{message}");
}

#[test]
fn replacement_referring_to_a_missing_group_is_rejected() {
    let replace_with = |pattern: &str, replacement: &str| {
        invalid_arguments(regex(pattern.into(), "ab".into(), Operation::Replace, Some(replacement.into()), None, None))
    };

    // `$1x` names a group `1x`; the hint shows the braced form.
    let message = replace_with("(a)", "$1x");
    assert!(message.starts_with("`replacement` refers to `$1x`"), "{message}");
    assert!(message.contains("only group `$1`") && message.contains("write `${1}x`"), "{message}");

    let message = replace_with("(a)(b)", "$3");
    assert!(message.contains("`$3`") && message.contains("groups `$1` to `$2`"), "{message}");

    let message = replace_with("(?<first>a)", "${frist}");
    assert!(message.contains("`${frist}`") && message.contains("named `first`"), "{message}");

    let message = replace_with("a", "$1");
    assert!(message.contains("no capture groups"), "{message}");

    let message = replace_with("a", "${}");
    assert!(message.contains("`${}`"), "{message}");

    // Every reference is checked, not just the first.
    let message = replace_with("(a)", "$1 $USD");
    assert!(message.contains("`$USD`") && message.contains("write `$$` for a literal `$`"), "{message}");
}

#[test]
fn limit_zero_is_rejected() {
    let message = invalid_arguments(regex("a".into(), "a".into(), Operation::Split, None, None, Some(0)));
    assert!(message.starts_with("`limit` must be at least 1"), "{message}");
}

#[test]
fn errors_through_json() {
    let error = invoke(json!({"pattern": "[", "text": "", "operation": "find"})).unwrap_err();
    assert!(matches!(&error, ToolError::InvalidArguments(message) if message.contains("`pattern`")), "{error:?}");

    let error = invoke(json!({"pattern": "a", "text": "a", "operation": "replace"})).unwrap_err();
    assert!(matches!(&error, ToolError::InvalidArguments(message) if message.contains("`replacement`")), "{error:?}");

    // Shapes the host's schema validation would reject still fail cleanly, never panic.
    for arguments in [
        json!({"pattern": "a", "text": "a"}),
        json!({"pattern": "a", "text": "a", "operation": "match"}),
        json!({"pattern": "a", "text": "a", "operation": "find", "flags": {"global": true}}),
        json!({"pattern": "a", "text": "a", "operation": "find", "limit": -1}),
    ] {
        let error = invoke(arguments.clone()).unwrap_err();
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{arguments}: {error:?}");
    }
}

// --- metadata ---

#[test]
fn metadata_names_the_tool_regex() {
    let metadata = RegexTool::metadata();
    assert_eq!(metadata.name, "regex");
    assert!(metadata.description.chars().count() <= 1024);
    assert!(metadata.description.contains("look-around") && metadata.description.contains("backreferences"));
}

#[test]
fn parameters_schema_snapshot() {
    insta::assert_json_snapshot!(RegexTool::metadata().parameters_schema);
}

#[test]
fn output_schema_snapshot() {
    insta::assert_json_snapshot!(RegexTool::metadata().output_schema);
}
