//! The `json_query` tool's native tests. (Long: one small test per query form and error.)

use serde_json::json;
use toolcell_guest::{Context, Tool as _};

use super::*;

/// The example document of RFC 9535 section 1.5 (Figure 1).
fn bookstore() -> Value {
    json!({
        "store": {
            "book": [
                {"category": "reference", "author": "Nigel Rees", "title": "Sayings of the Century", "price": 8.95},
                {"category": "fiction", "author": "Evelyn Waugh", "title": "Sword of Honour", "price": 12.99},
                {"category": "fiction", "author": "Herman Melville", "title": "Moby Dick", "isbn": "0-553-21311-3", "price": 8.99},
                {"category": "fiction", "author": "J. R. R. Tolkien", "title": "The Lord of the Rings", "isbn": "0-395-19395-8", "price": 22.99}
            ],
            "bicycle": {"color": "red", "price": 399}
        }
    })
}

/// The example document of RFC 9535 section 2.3.5.3 (filter selector examples).
fn filter_document() -> Value {
    json!({
        "a": [3, 5, 1, 2, 4, 6, {"b": "j"}, {"b": "k"}, {"b": {}}, {"b": "kilo"}],
        "o": {"p": 1, "q": 2, "r": 3, "s": 5, "t": {"u": 6}},
        "e": "f"
    })
}

fn run(document: Value, query: &str) -> QueryResult {
    match json_query(document, query.to_owned(), None) {
        Ok(result) => result,
        Err(err) => panic!("{query:?} failed: {err}"),
    }
}

/// The (path, value) pairs `query` selects, in order.
fn pairs(document: Value, query: &str) -> Vec<(String, Value)> {
    let result = run(document, query);
    assert_eq!(result.count, result.matches.len(), "{query:?}");
    assert!(!result.truncated, "{query:?}");
    result.matches.into_iter().map(|m| (m.path, m.value)).collect()
}

fn paths(document: Value, query: &str) -> Vec<String> {
    pairs(document, query).into_iter().map(|(path, _)| path).collect()
}

/// Paths sorted, for results that include object members (whose order RFC 9535 leaves open).
fn sorted_paths(document: Value, query: &str) -> Vec<String> {
    let mut paths = paths(document, query);
    paths.sort();
    paths
}

fn values(document: Value, query: &str) -> Vec<Value> {
    pairs(document, query).into_iter().map(|(_, value)| value).collect()
}

/// The message of the `InvalidArguments` error `query` must produce.
fn query_error(query: &str) -> String {
    match json_query(bookstore(), query.to_owned(), None) {
        Err(ToolError::InvalidArguments(message)) => message,
        other => panic!("{query:?}: expected invalid arguments, got {other:?}"),
    }
}

fn invoke(arguments: Value) -> Result<Value, ToolError> {
    let output = JsonQueryTool::invoke(&arguments.to_string(), Context::default())?;
    Ok(serde_json::from_str(&output).expect("the tool's output is JSON"))
}

// RFC 9535 Table 2: example JSONPath expressions applied to the bookstore.

#[test]
fn selects_the_authors_of_all_books() {
    let authors = ["Nigel Rees", "Evelyn Waugh", "Herman Melville", "J. R. R. Tolkien"].map(Value::from);
    assert_eq!(values(bookstore(), "$.store.book[*].author"), authors);
    assert_eq!(values(bookstore(), "$..author"), authors);
    assert_eq!(
        paths(bookstore(), "$..author"),
        (0..4).map(|i| format!("$['store']['book'][{i}]['author']")).collect::<Vec<_>>()
    );
}

#[test]
fn wildcard_selects_all_children_of_an_object() {
    assert_eq!(sorted_paths(bookstore(), "$.store.*"), ["$['store']['bicycle']", "$['store']['book']"]);
}

#[test]
fn descendant_segment_finds_members_at_any_depth() {
    let mut prices: Vec<f64> =
        values(bookstore(), "$.store..price").iter().map(|price| price.as_f64().expect("a number")).collect();
    prices.sort_by(f64::total_cmp);
    assert_eq!(prices, [8.95, 8.99, 12.99, 22.99, 399.0]);
    // `$..*`: every member value and array element; the RFC's bookstore has 27.
    assert_eq!(run(bookstore(), "$..*").count, 27);
}

#[test]
fn index_selects_one_element() {
    assert_eq!(paths(bookstore(), "$..book[2]"), ["$['store']['book'][2]"]);
    assert_eq!(
        pairs(bookstore(), "$..book[2].author"),
        [("$['store']['book'][2]['author']".to_owned(), json!("Herman Melville"))]
    );
}

#[test]
fn negative_index_counts_from_the_end() {
    assert_eq!(paths(bookstore(), "$..book[-1]"), ["$['store']['book'][3]"]);
    assert_eq!(values(json!(["a", "b", "c", "d", "e", "f", "g"]), "$[-2]"), [json!("f")]);
    // Out of range on either side selects nothing rather than failing.
    assert!(paths(json!([1, 2]), "$[-3]").is_empty());
    assert!(paths(json!([1, 2]), "$[2]").is_empty());
}

#[test]
fn union_and_slice_select_the_first_two_books() {
    let first_two = ["$['store']['book'][0]", "$['store']['book'][1]"];
    assert_eq!(paths(bookstore(), "$..book[0,1]"), first_two);
    assert_eq!(paths(bookstore(), "$..book[:2]"), first_two);
}

#[test]
fn filters_by_existence_and_comparison() {
    assert_eq!(paths(bookstore(), "$..book[?@.isbn]"), ["$['store']['book'][2]", "$['store']['book'][3]"]);
    assert_eq!(
        values(bookstore(), "$..book[?@.price<10].title"),
        [json!("Sayings of the Century"), json!("Moby Dick")]
    );
    // The bracketed filter form many other JSONPath dialects use is valid RFC 9535 too.
    assert_eq!(values(bookstore(), "$.store.book[?(@.price > 20)].title"), [json!("The Lord of the Rings")]);
}

#[test]
fn missing_member_selects_nothing() {
    let result = run(bookstore(), "$..book[2].publisher");
    assert_eq!(result.count, 0);
    assert!(result.matches.is_empty());
    assert!(!result.truncated);
}

#[test]
fn root_selects_the_whole_document() {
    assert_eq!(pairs(bookstore(), "$"), [("$".to_owned(), bookstore())]);
    // Any JSON value can be queried, not only objects.
    assert_eq!(pairs(json!(42), "$"), [("$".to_owned(), json!(42))]);
    assert_eq!(pairs(Value::Null, "$"), [("$".to_owned(), Value::Null)]);
    assert!(paths(json!(42), "$.a").is_empty());
}

// RFC 9535 section 2.3.4.3: array slice examples.

#[test]
fn slices_with_steps() {
    let letters = || json!(["a", "b", "c", "d", "e", "f", "g"]);
    assert_eq!(values(letters(), "$[1:3]"), [json!("b"), json!("c")]);
    assert_eq!(values(letters(), "$[5:]"), [json!("f"), json!("g")]);
    assert_eq!(values(letters(), "$[1:5:2]"), [json!("b"), json!("d")]);
    assert_eq!(values(letters(), "$[5:1:-2]"), [json!("f"), json!("d")]);
    assert_eq!(paths(letters(), "$[::-1]"), (0..7).rev().map(|i| format!("$[{i}]")).collect::<Vec<_>>());
    assert_eq!(values(letters(), "$[-2:]"), [json!("f"), json!("g")]);
    // A step of 0 selects nothing.
    assert!(values(letters(), "$[1:2:0]").is_empty());
}

// RFC 9535 section 2.3.5.3: filter selector examples.

#[test]
fn filter_compares_against_a_string_literal() {
    assert_eq!(pairs(filter_document(), "$.a[?@.b == 'kilo']"), [("$['a'][9]".to_owned(), json!({"b": "kilo"}))]);
}

#[test]
fn filter_compares_numbers() {
    assert_eq!(paths(filter_document(), "$.a[?@>3.5]"), ["$['a'][1]", "$['a'][4]", "$['a'][5]"]);
    assert_eq!(sorted_paths(filter_document(), "$.o[?@>1 && @<4]"), ["$['o']['q']", "$['o']['r']"]);
}

#[test]
fn filter_tests_existence() {
    assert_eq!(paths(filter_document(), "$.a[?@.b]"), ["$['a'][6]", "$['a'][7]", "$['a'][8]", "$['a'][9]"]);
    assert_eq!(sorted_paths(filter_document(), "$[?@.*]"), ["$['a']", "$['o']"]);
    assert_eq!(paths(filter_document(), "$[?@[?@.b]]"), ["$['a']"]);
    assert_eq!(paths(filter_document(), "$.o[?@.u || @.x]"), ["$['o']['t']"]);
    assert_eq!(paths(filter_document(), "$.a[?@<2 || @.b == \"k\"]"), ["$['a'][2]", "$['a'][7]"]);
}

#[test]
fn filter_compares_absent_values_as_equal() {
    // Neither `@.b` nor `$.x` exists for the numbers, and Nothing == Nothing.
    assert_eq!(
        paths(filter_document(), "$.a[?@.b == $.x]"),
        (0..6).map(|i| format!("$['a'][{i}]")).collect::<Vec<_>>()
    );
    assert_eq!(run(filter_document(), "$.a[?@ == @]").count, 10);
}

#[test]
fn repeated_selectors_keep_duplicates() {
    let paths = sorted_paths(filter_document(), "$.o[?@<3, ?@<3]");
    assert_eq!(paths, ["$['o']['p']", "$['o']['p']", "$['o']['q']", "$['o']['q']"]);
}

#[test]
fn filter_functions_match_and_search() {
    assert_eq!(paths(filter_document(), "$.a[?match(@.b, '[jk]')]"), ["$['a'][6]", "$['a'][7]"]);
    assert_eq!(paths(filter_document(), "$.a[?search(@.b, '[jk]')]"), ["$['a'][6]", "$['a'][7]", "$['a'][9]"]);
    assert_eq!(values(bookstore(), "$.store.book[?match(@.author, '.*Melville')].title"), [json!("Moby Dick")]);
    // An invalid regular expression matches nothing (RFC 9535 section 2.4.6) rather than failing.
    assert!(paths(filter_document(), "$.a[?match(@.b, '[')]").is_empty());
}

#[test]
fn filter_functions_length_count_and_value() {
    assert_eq!(values(bookstore(), "$.store.book[?length(@.title) > 21].title"), [json!("Sayings of the Century")]);
    assert_eq!(
        values(bookstore(), "$.store.book[?count(@.*) == 5].title"),
        [json!("Moby Dick"), json!("The Lord of the Rings")]
    );
    assert_eq!(paths(bookstore(), "$.store[?value(@..color) == 'red']"), ["$['store']['bicycle']"]);
}

// RFC 9535 Table 16: normalized path examples.

#[test]
fn paths_are_normalized() {
    assert_eq!(paths(json!({"a": 1}), "$.a"), ["$['a']"]);
    assert_eq!(paths(json!([0, 1]), "$[1]"), ["$[1]"]);
    assert_eq!(paths(json!([0, 1, 2, 3, 4]), "$[-3]"), ["$[2]"]);
    assert_eq!(paths(json!({"a": {"b": [0, 1, 2]}}), "$.a.b[1:2]"), ["$['a']['b'][1]"]);
    assert_eq!(paths(json!({"\u{b}": 1}), "$[\"\\u000B\"]"), ["$['\\u000b']"]);
    assert_eq!(paths(json!({"a": 1}), "$[\"\\u0061\"]"), ["$['a']"]);
}

#[test]
fn paths_escape_member_names() {
    let document = json!({"it's": {"a\\b": {"line\nbreak": {"\u{1}\u{1f}\u{7f}é": 1}}}});
    assert_eq!(
        paths(document, "$..*").last().map(String::as_str),
        Some("$['it\\'s']['a\\\\b']['line\\nbreak']['\\u0001\\u001f\u{7f}é']")
    );
    let mut path = String::new();
    push_escaped_name(&mut path, "\u{8}\u{c}\n\r\t'\\\u{0}\u{7}\u{b}\u{e}\u{1a}\"/ x");
    assert_eq!(path, r#"\b\f\n\r\t\'\\\u0000\u0007\u000b\u000e\u001a"/ x"#);
}

#[test]
fn document_given_as_json_text_is_parsed() {
    let text = Value::String(bookstore().to_string());
    assert_eq!(values(text, "$.store.bicycle.color"), [json!("red")]);
    assert_eq!(values(json!("[1, 2, 3]"), "$[-1]"), [json!(3)]);
    // Strings holding anything but an object or array stay strings.
    assert_eq!(values(json!("42"), "$"), [json!("42")]);
    assert_eq!(values(json!("{not json"), "$"), [json!("{not json")]);
}

#[test]
fn limit_truncates_matches_but_not_count() {
    let result = json_query(bookstore(), "$..author".to_owned(), Some(2)).expect("valid query");
    assert_eq!(result.count, 4);
    assert!(result.truncated);
    assert_eq!(
        result.matches.iter().map(|m| m.value.clone()).collect::<Vec<_>>(),
        [json!("Nigel Rees"), json!("Evelyn Waugh")]
    );

    let result = json_query(bookstore(), "$..author".to_owned(), Some(0)).expect("valid query");
    assert_eq!((result.count, result.matches.len(), result.truncated), (4, 0, true));

    let result = json_query(bookstore(), "$..author".to_owned(), Some(4)).expect("valid query");
    assert_eq!((result.count, result.matches.len(), result.truncated), (4, 4, false));

    let result = json_query(bookstore(), "$..nothing".to_owned(), Some(0)).expect("valid query");
    assert_eq!((result.count, result.matches.len(), result.truncated), (0, 0, false));
}

#[test]
fn limit_above_the_maximum_is_rejected() {
    let err = json_query(bookstore(), "$".to_owned(), Some(MAX_LIMIT + 1)).expect_err("limit too large");
    let ToolError::InvalidArguments(message) = err else { panic!("expected invalid arguments, got {err:?}") };
    assert!(message.starts_with("`limit` is 10001; at most 10000"), "{message}");
    assert!(json_query(bookstore(), "$".to_owned(), Some(MAX_LIMIT)).is_ok());
}

// Errors.

#[test]
fn empty_query_is_rejected() {
    let message = query_error("");
    assert!(message.starts_with("`query` is empty. A JSONPath query starts with `$`"), "{message}");
}

#[test]
fn query_without_root_is_rejected_with_a_reminder() {
    let message = query_error("store.book");
    assert_eq!(
        message,
        format!("`query` is not valid JSONPath: unexpected `s` at column 1:\n  store.book\n  ^\n{SYNTAX_REMINDER}")
    );
    let message = query_error(" $.store");
    assert!(message.starts_with("`query` is not valid JSONPath: unexpected space at column 1:"), "{message}");
}

#[test]
fn syntax_error_quotes_the_parser_and_points_at_the_column() {
    let message = query_error("$.store[?@.price <]");
    assert!(
        message.starts_with(
            "`query` is not valid JSONPath: in long-hand segment, expected closing ']' at column 18:\n  \
             $.store[?@.price <]\n                   ^\n"
        ),
        "{message}"
    );
    assert!(message.ends_with(SYNTAX_REMINDER), "{message}");

    let message = query_error("$.my-key");
    assert!(message.starts_with("`query` is not valid JSONPath: unexpected `-` at column 5:"), "{message}");

    let message = query_error("$[?foo(@)]");
    assert!(message.contains("function name 'foo' is not defined at column 4"), "{message}");

    let message = query_error("$[?length(@.*) > 1]");
    assert!(message.contains("received nodes type at column 4"), "{message}");

    let message = query_error("$.");
    assert!(message.contains("must start with lowercase alpha or '_' at column 3"), "{message}");
}

#[test]
fn syntax_error_at_the_end_says_so() {
    let message = query_error("$[");
    assert!(message.starts_with("`query` is not valid JSONPath: unexpected `[` at column 2:"), "{message}");
    let message = query_error("$['a");
    assert!(message.contains("expected an ending quote at column 5:\n  $['a\n      ^\n"), "{message}");
    let message = query_error("$[?@.a == 1 && ]");
    assert!(message.contains("in long-hand segment, unexpected `]` at column 16"), "{message}");
}

#[test]
fn syntax_error_columns_count_characters_not_bytes() {
    let message = query_error("$.é.ü[");
    assert!(message.contains("at column 6:\n  $.é.ü[\n       ^\n"), "{message}");
}

#[test]
fn syntax_error_in_a_multi_line_query_names_the_line() {
    let message = query_error("$[?@.price < 10\n  && @.title = 'x']");
    assert!(message.contains("at line 2, column 14:\n    && @.title = 'x']\n               ^\n"), "{message}");
}

#[test]
fn syntax_error_in_a_long_query_shows_an_excerpt() {
    let query = format!("$[?{}@.b ==]", "@.a == 1 || ".repeat(20));
    let message = query_error(&query);
    // The parser stops at the `==` that lacks a right-hand side.
    let column = query.len() - 2;
    assert!(message.contains(&format!("at column {column}:\n  …")), "{message}");
    let excerpt: Vec<&str> = message.lines().skip(1).take(2).collect();
    let caret = excerpt[1].chars().count() - 1;
    assert_eq!(excerpt[0].chars().nth(caret), Some('='), "{message}");
    assert!(excerpt[0].chars().count() <= 2 + 1 + EXCERPT_CHARS, "{message}");
}

#[test]
fn caret_excerpt_cuts_both_ends_of_a_long_line() {
    let query = format!("{}X{}", "a".repeat(100), "b".repeat(100));
    let excerpt = caret_excerpt(&query, 100);
    let lines: Vec<&str> = excerpt.lines().collect();
    assert!(lines[0].starts_with("  …a") && lines[0].ends_with("b…"), "{excerpt}");
    assert_eq!(lines[0].chars().nth(lines[1].chars().count() - 1), Some('X'), "{excerpt}");
    // Tabs are kept on the caret line so the caret stays under the right character.
    assert_eq!(caret_excerpt("$\t.x", 3), "  $\t.x\n   \t ^");
}

#[test]
fn control_characters_are_named_in_errors() {
    assert_eq!(quote_char('\t'), "tab");
    assert_eq!(quote_char('\u{7}'), "control character U+0007");
    assert_eq!(quote_char('`'), "backtick (`)");
    let message = query_error("$\u{7}");
    assert!(message.contains("unexpected control character U+0007 at column 2:\n  $ \n   ^"), "{message}");
}

#[test]
fn overly_long_query_is_rejected() {
    let query = format!("$['{}']", "x".repeat(MAX_QUERY_CHARS));
    let message = query_error(&query);
    assert_eq!(message, format!("`query` is {} characters long; at most 4096 are allowed", MAX_QUERY_CHARS + 5));
    // The limit counts characters, not bytes.
    let query = format!("$['{}']", "é".repeat(MAX_QUERY_CHARS - 5));
    assert!(json_query(bookstore(), query, None).is_ok());
}

#[test]
fn deep_nesting_is_rejected_before_parsing() {
    // Parsing this would take far too long (each nested filter doubles the work).
    let query = format!("$[?{}@.a{}]", "@[?".repeat(40), "]".repeat(40));
    let message = query_error(&query);
    assert!(
        message.starts_with("`query` nests brackets and parentheses more than 8 levels deep at column 26;"),
        "{message}"
    );
    // Parsing this would overflow the stack.
    let query = format!("$[?{}@.a{}]", "(".repeat(2000), ")".repeat(2000));
    let message = query_error(&query);
    assert!(message.contains("more than 8 levels deep at column 11;"), "{message}");
    // Brackets and parentheses inside string literals do not count.
    let literal = "[(".repeat(20);
    assert!(paths(json!({"k": literal}), &format!("$[?@ == '{literal}']")) == ["$['k']"]);
    assert!(paths(json!({"k": "\"[[[[[[[[[[[["}), r#"$[?@ == "\"[[[[[[[[[[[["]"#) == ["$['k']"]);
    // Exactly the limit is fine.
    let query = format!("$[?{}@.a{}]", "(".repeat(MAX_NESTING - 1), ")".repeat(MAX_NESTING - 1));
    assert!(json_query(bookstore(), query, None).is_ok());
}

#[test]
fn nesting_scan_counts_only_structure() {
    assert_eq!(nesting_exceeded_at("$[?(@[?(@.a)])]", 4), None);
    assert_eq!(nesting_exceeded_at("$[?(@[?(@.a)])]", 3), Some(7));
    assert_eq!(nesting_exceeded_at("$['[[[[', \"((((\"]", 1), None);
    assert_eq!(nesting_exceeded_at(r"$['\'[[[[']", 1), None);
    assert_eq!(nesting_exceeded_at("$[0][1][2][3]", 1), None);
}

#[test]
fn arbitrary_queries_never_panic() {
    // A fixed pseudo-random sequence (an LCG) of short queries over JSONPath's punctuation, so
    // that the error formatting meets every kind of position, including multi-byte and line
    // breaks; each query must either run or be rejected as invalid arguments.
    const ALPHABET: [char; 32] = [
        '$', '@', '.', '[', ']', '(', ')', '?', '*', ',', ':', '\'', '"', '\\', 'a', 'b', '0', '1', '-', 'é', '\n',
        '\r', ' ', '=', '<', '>', '!', '&', '|', 'l', '\t', '\u{7}',
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(state >> 33).expect("31 bits fit in usize")
    };
    for _ in 0..5000 {
        let length = next() % 24;
        let query: String =
            std::iter::once('$').chain((0..length).map(|_| ALPHABET[next() % ALPHABET.len()])).collect();
        match json_query(filter_document(), query.clone(), None) {
            Ok(result) => assert_eq!(result.count, result.matches.len(), "{query:?}"),
            Err(ToolError::InvalidArguments(message)) => assert!(message.contains("column"), "{query:?}: {message}"),
            Err(err) => panic!("{query:?}: {err:?}"),
        }
    }
}

// Through the JSON interface the host uses.

#[test]
fn invoke_runs_a_query() {
    let output = invoke(json!({"document": bookstore(), "query": "$.store.book[?@.price < 10].title", "limit": 1}));
    assert_eq!(
        output,
        Ok(json!({
            "count": 2,
            "matches": [{"path": "$['store']['book'][0]['title']", "value": "Sayings of the Century"}],
            "truncated": true
        }))
    );
    let output = invoke(json!({"document": [1, 2], "query": "$[5]", "limit": null}));
    assert_eq!(output, Ok(json!({"count": 0, "matches": [], "truncated": false})));
}

#[test]
fn invoke_reports_a_syntax_error() {
    let err = invoke(json!({"document": {}, "query": "$.a b"})).expect_err("invalid query");
    let ToolError::InvalidArguments(message) = err else { panic!("expected invalid arguments, got {err:?}") };
    assert!(message.starts_with("`query` is not valid JSONPath: unexpected space at column 4:"), "{message}");
}

#[test]
fn invoke_rejects_arguments_that_do_not_match_the_schema() {
    for arguments in [
        json!({"document": {}}),
        json!({"query": "$"}),
        json!({"document": {}, "query": "$", "limit": -1}),
        json!({"document": {}, "query": "$", "extra": true}),
    ] {
        let err = invoke(arguments.clone()).expect_err("bad arguments");
        assert!(
            matches!(&err, ToolError::InvalidArguments(message) if message.starts_with("The arguments do not match the tool's parameters schema")),
            "{arguments}: {err:?}"
        );
    }
}

#[test]
fn output_matches_the_declared_shape() {
    let output = invoke(json!({"document": bookstore(), "query": "$..color"})).expect("valid query");
    assert_eq!(
        output,
        json!({"count": 1, "matches": [{"path": "$['store']['bicycle']['color']", "value": "red"}], "truncated": false})
    );
}

#[test]
fn parameters_schema() {
    insta::assert_json_snapshot!(JsonQueryTool::metadata().parameters_schema);
}

#[test]
fn output_schema() {
    insta::assert_json_snapshot!(JsonQueryTool::metadata().output_schema);
}

#[test]
fn metadata() {
    let metadata = JsonQueryTool::metadata();
    assert_eq!(metadata.name, "json_query");
    assert_eq!(metadata.version, "1.0.0");
    assert!(metadata.description.chars().count() <= 1024);
    assert!(metadata.description.contains("\"query\": \"$.store.book[?@.price < 10].title\""));
}
