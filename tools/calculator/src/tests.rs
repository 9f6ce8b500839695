use toolcell_guest::{Context, Tool as _};

use super::*;

fn with(expression: &str, variables: &[(&str, f64)]) -> Result<f64, ToolError> {
    let variables = variables.iter().map(|(name, value)| ((*name).to_owned(), *value)).collect();
    calculator(expression.to_owned(), Some(variables)).map(|evaluation| evaluation.value)
}

fn eval(expression: &str) -> f64 {
    match calculator(expression.to_owned(), None) {
        Ok(evaluation) => evaluation.value,
        Err(err) => panic!("{expression:?} failed: {err}"),
    }
}

/// The message of the `InvalidArguments` error `expression` must produce.
fn error_with(expression: &str, variables: &[(&str, f64)]) -> String {
    match with(expression, variables) {
        Err(ToolError::InvalidArguments(message)) => message,
        other => panic!("{expression:?}: expected invalid arguments, got {other:?}"),
    }
}

fn error(expression: &str) -> String {
    error_with(expression, &[])
}

fn assert_close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() <= 1e-12 * expected.abs().max(1.0), "{actual} != {expected}");
}

#[test]
fn evaluates_the_example_from_the_description() {
    assert_eq!(eval("2 * (3 + sqrt(16)) ^ 2"), 98.0);
    assert_eq!(with("2 * (3 + sqrt(x)) ^ 2", &[("x", 16.0)]), Ok(98.0));
}

#[test]
fn reads_every_number_form() {
    assert_eq!(eval("42"), 42.0);
    assert_eq!(eval("0.5"), 0.5);
    assert_eq!(eval(".5"), 0.5);
    assert_eq!(eval("5."), 5.0);
    assert_eq!(eval("1.5e3"), 1500.0);
    assert_eq!(eval("2E-2"), 0.02);
    assert_eq!(eval("1e+2"), 100.0);
    assert_eq!(eval("1.e2"), 100.0);
    assert_eq!(eval("007"), 7.0);
    // Below the smallest float: rounds to zero rather than failing.
    assert_eq!(eval("1e-400"), 0.0);
}

#[test]
fn multiplication_and_division_bind_tighter_than_addition() {
    assert_eq!(eval("2 + 3 * 4"), 14.0);
    assert_eq!(eval("(2 + 3) * 4"), 20.0);
    assert_eq!(eval("2 * 3 + 4 * 5"), 26.0);
    assert_eq!(eval("1 + 6 / 3"), 3.0);
    assert_eq!(eval("1 + 7 % 4"), 4.0);
}

#[test]
fn binary_operators_other_than_power_are_left_associative() {
    assert_eq!(eval("10 - 4 - 3"), 3.0);
    assert_eq!(eval("100 / 10 / 5"), 2.0);
    assert_eq!(eval("7 % 4 * 2"), 6.0);
    assert_eq!(eval("2 * 7 % 4"), 2.0);
    assert_eq!(eval("8 / 2 * 4"), 16.0);
}

#[test]
fn power_is_right_associative_and_binds_tighter_than_signs() {
    assert_eq!(eval("2 ^ 3 ^ 2"), 512.0);
    assert_eq!(eval("(2 ^ 3) ^ 2"), 64.0);
    assert_eq!(eval("-2 ^ 2"), -4.0);
    assert_eq!(eval("(-2) ^ 2"), 4.0);
    assert_eq!(eval("2 ^ -1"), 0.5);
    assert_eq!(eval("-2 ^ -2"), -0.25);
    assert_eq!(eval("2 ^ -3 ^ 2"), 2f64.powi(-9));
    assert_eq!(eval("2 * 3 ^ 2"), 18.0);
    assert_eq!(eval("2 ** 3 ** 2"), 512.0);
}

#[test]
fn signs_bind_tighter_than_multiplication_and_stack() {
    assert_eq!(eval("-2 * 3"), -6.0);
    assert_eq!(eval("2 * -3"), -6.0);
    assert_eq!(eval("--2"), 2.0);
    assert_eq!(eval("+-+2"), -2.0);
    assert_eq!(eval("2 - -2"), 4.0);
    assert_eq!(eval("2--2"), 4.0);
    assert_eq!(eval("-(1 + 2)"), -3.0);
    // `%` keeps the sign of the left operand.
    assert_eq!(eval("-7 % 3"), -1.0);
    assert_eq!(eval("7 % -3"), 1.0);
    assert_eq!(eval("7.5 % 2"), 1.5);
}

#[test]
fn negative_zero_is_reported_as_zero() {
    for expression in ["-0", "round(-0.2)", "0 * -1"] {
        let value = eval(expression);
        assert!(value == 0.0 && value.is_sign_positive(), "{expression}: {value}");
    }
}

#[test]
fn whitespace_is_allowed_between_any_tokens() {
    assert_eq!(eval(" \t1 +\n 2 * ( 3 ) "), 7.0);
    assert_eq!(eval("max ( 1 , 2 )"), 2.0);
    assert_eq!(eval("1+2*3"), 7.0);
}

#[test]
fn constants() {
    assert_eq!(eval("pi"), PI);
    assert_eq!(eval("e"), E);
    assert_eq!(eval("tau"), TAU);
    assert_eq!(eval("2 * pi"), TAU);
}

#[test]
fn every_function() {
    let cases: [(&str, f64); 31] = [
        ("sqrt(16)", 4.0),
        ("cbrt(-27)", -3.0),
        ("abs(-2.5)", 2.5),
        ("exp(1)", E),
        ("ln(e ^ 3)", 3.0),
        ("log10(1000)", 3.0),
        ("log2(1024)", 10.0),
        ("log(81, 3)", 4.0),
        ("pow(2, 10)", 1024.0),
        ("sin(pi / 2)", 1.0),
        ("cos(pi)", -1.0),
        ("tan(pi / 4)", 1.0),
        ("asin(1)", PI / 2.0),
        ("acos(-1)", PI),
        ("atan(1)", PI / 4.0),
        ("atan2(1, -1)", 3.0 * PI / 4.0),
        ("sinh(1)", 1f64.sinh()),
        ("cosh(1)", 1f64.cosh()),
        ("tanh(1)", 1f64.tanh()),
        ("floor(-2.5)", -3.0),
        ("ceil(-2.5)", -2.0),
        ("round(2.5)", 3.0),
        ("round(-2.5)", -3.0),
        ("trunc(-2.7)", -2.0),
        ("min(3)", 3.0),
        ("min(3, -1, 2)", -1.0),
        ("max(3, -1, 2)", 3.0),
        ("max(-5, -7)", -5.0),
        ("hypot(3, 4)", 5.0),
        ("sqrt(abs(-16)) + max(1, min(5, 2))", 6.0),
        ("pow(2, pow(2, 2))", 16.0),
    ];
    for (expression, expected) in cases {
        assert_close(eval(expression), expected);
    }
    // Every function in the table is exercised above.
    for function in &FUNCTIONS {
        assert!(
            cases.iter().any(|(expression, _)| expression.starts_with(&format!("{}(", function.name))),
            "{}",
            function.name
        );
    }
}

#[test]
fn variables() {
    assert_eq!(with("x * 2", &[("x", 2.5)]), Ok(5.0));
    assert_eq!(
        with("principal * (1 + rate_2) ^ years", &[("principal", 100.0), ("rate_2", 0.5), ("years", 2.0)]),
        Ok(225.0)
    );
    assert_eq!(with("_a + A", &[("_a", 1.0), ("A", 2.0)]), Ok(3.0));
    // Unused variables are fine.
    assert_eq!(with("1 + 1", &[("unused", 9.0)]), Ok(2.0));
    // Names are case-sensitive: `E` is a variable, `e` the constant.
    assert_eq!(with("E - e", &[("E", 1.0)]), Ok(1.0 - E));
}

#[test]
fn long_flat_chains_are_not_nesting() {
    let sum = vec!["1"; 4_000].join("+");
    assert_eq!(eval(&sum), 4_000.0);
    let alternating = vec!["-1"; 2_000].join("*");
    assert_eq!(eval(&alternating), 1.0);
    let arguments = vec!["1"; 3_000].join(",");
    assert_eq!(eval(&format!("max({arguments}, 2)")), 2.0);
}

#[test]
fn nesting_up_to_the_limit_evaluates() {
    let parens = format!("{}1{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    assert_eq!(eval(&parens), 1.0);
    let calls = format!("{}4{}", "abs(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    assert_eq!(eval(&calls), 4.0);
    let calls = format!("{}4{}", "min(1e9, ".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    assert_eq!(eval(&calls), 4.0);
    let signs = format!("{}1", "-".repeat(MAX_NESTING));
    assert_eq!(eval(&signs), 1.0);
    let powers = format!("{}1", "1^".repeat(MAX_NESTING));
    assert_eq!(eval(&powers), 1.0);
    // Each `-(` is two levels.
    let mixed = format!("{}1{}", "-(".repeat(MAX_NESTING / 2), ")".repeat(MAX_NESTING / 2));
    assert_eq!(eval(&mixed), 1.0);
}

#[test]
fn nesting_beyond_the_limit_is_refused_at_its_column() {
    let too_deep = |expression: &str, column: usize| {
        let message = error(expression);
        assert!(message.contains(&format!("nests too deeply at column {column} ")), "{message}");
        assert!(message.contains("at most 256 levels"), "{message}");
    };
    // Unbalanced and far too deep: refused before parsing, at the 257th `(`.
    too_deep(&"(".repeat(MAX_EXPRESSION_CHARS), MAX_NESTING + 1);
    too_deep(&format!("{}1{}", "(".repeat(MAX_NESTING + 1), ")".repeat(MAX_NESTING + 1)), MAX_NESTING + 1);
    too_deep(&format!("{}1{}", "sqrt(".repeat(MAX_NESTING + 1), ")".repeat(MAX_NESTING + 1)), 5 * (MAX_NESTING + 1));
    // A sign inside the deepest call is one level too many.
    too_deep(&format!("{}-4{}", "abs(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING)), 4 * MAX_NESTING + 1);
    // One sign before 256 parentheses: the 256th `(` is at level 257.
    too_deep(&format!("-{}1{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING)), MAX_NESTING + 1);
    too_deep(&format!("{}1", "-".repeat(MAX_EXPRESSION_CHARS - 1)), MAX_NESTING + 1);
    too_deep(&format!("{}1", "2^".repeat(MAX_NESTING + 1)), 2 * MAX_NESTING + 2);
    too_deep(&format!("{}-1{}", "-(".repeat(MAX_NESTING / 2), ")".repeat(MAX_NESTING / 2)), MAX_NESTING + 1);
}

#[test]
fn the_expression_length_is_capped() {
    let expression = format!("1{}", "+1".repeat(MAX_EXPRESSION_CHARS / 2));
    let message = error(&expression);
    assert!(message.contains("10001 characters") && message.contains("10000"), "{message}");
}

#[test]
fn parse_errors_say_what_was_expected_where() {
    let cases = [
        ("", "expected a number, a name or `(` at column 1, found the end of the expression"),
        ("1 +", "expected a number, a name or `(` at column 4, found the end of the expression"),
        ("1 + * 2", "expected a number, a name or `(` at column 5, found `*`"),
        (")", "expected a number, a name or `(` at column 1, found `)`"),
        ("(1 + 2", "expected an operator (+ - * / % ^) or `)` at column 7, found the end of the expression"),
        ("max(1, 2", "expected an operator (+ - * / % ^), `,` or `)` at column 9"),
        ("sqrt(1,", "expected a number, a name or `(` at column 8"),
        ("1 + 2)", "expected an operator (+ - * / % ^) or the end of the expression at column 6, found `)`"),
        ("2 $ 3", "at column 3, found `$`"),
        ("2 × 3", "at column 3, found `×`"),
        ("sqrt 2", "expected `(`, an operator (+ - * / % ^) or the end of the expression at column 6, found `2`"),
        ("1.5.3", "at column 4, found `.3`"),
        ("1 +\n  * 2", "at line 2, column 3, found `*`"),
    ];
    for (expression, expected) in cases {
        let message = error(expression);
        assert!(message.starts_with("`expression`: expected "), "{message}");
        assert!(message.contains(expected), "{expression:?}: {message}");
    }
}

#[test]
fn parse_errors_explain_common_slips() {
    let message = error("2x + 1");
    assert!(message.contains("column 2, found `x` (multiplication needs an explicit `*`"), "{message}");
    let message = error("(1)(2)");
    assert!(message.contains("column 4, found `(` (multiplication"), "{message}");
    let message = error("1,000 + 1");
    assert!(message.contains("column 2, found `,` (`,` only separates function arguments"), "{message}");
    let message = error("2 + 2 = 4");
    assert!(message.contains("column 7, found `=` (this tool evaluates an expression"), "{message}");
}

#[test]
fn division_and_modulo_by_zero_name_the_operator_column_and_the_divisor() {
    assert_eq!(
        error_with("10 / (x - 2)", &[("x", 2.0)]),
        "`expression`: division by zero at column 4: the divisor `(x - 2)` evaluates to 0"
    );
    assert_eq!(error("1 + 5 % 0"), "`expression`: modulo by zero at column 7: the divisor `0` evaluates to 0");
    assert!(error("1/-0").contains("division by zero at column 2: the divisor `-0`"));
    assert!(error("2 / sin(0)").contains("division by zero at column 3: the divisor `sin(0)`"));
}

#[test]
fn unknown_variables_list_the_variables_and_constants() {
    let message = error_with("x + y", &[("x", 1.0), ("z", 2.0)]);
    assert!(message.starts_with("`expression`: unknown variable `y` at column 5."), "{message}");
    assert!(message.contains("The variables given are `x`, `z`"), "{message}");
    assert!(message.contains("the constants are `pi`, `e`, `tau`"), "{message}");
    assert!(message.contains(r#"{"y": 1.5}"#), "{message}");

    let message = error("2 * r");
    assert!(message.contains("unknown variable `r` at column 5. No variables were given"), "{message}");

    let message = error("PI / 2");
    assert!(message.contains("unknown variable `PI` at column 1. Did you mean `pi`?"), "{message}");

    let many: Vec<(String, f64)> = (0..25).map(|i| (format!("v{i:02}"), 0.0)).collect();
    let many: Vec<(&str, f64)> = many.iter().map(|(name, value)| (name.as_str(), *value)).collect();
    let message = error_with("w", &many);
    assert!(message.contains("`v19` and 5 more;"), "{message}");
    assert!(!message.contains("`v20`"), "{message}");
}

#[test]
fn unknown_functions_list_the_functions() {
    let message = error("1 + foo(2)");
    assert!(message.starts_with("`expression`: unknown function `foo` at column 5."), "{message}");
    assert!(message.contains("sqrt(x), cbrt(x)"), "{message}");
    assert!(message.contains("log(x, base)") && message.contains("atan2(y, x)") && message.contains("min(a, b, ...)"));

    let message = error("Sqrt(4)");
    assert!(message.contains("unknown function `Sqrt` at column 1. Did you mean `sqrt`?"), "{message}");
}

#[test]
fn wrong_arity_names_the_function_its_arity_and_the_column() {
    let cases = [
        (
            "log(8)",
            "`log` at column 1 takes 2 arguments, log(x, base), but was given 1: `log(8)`; for one argument use ln(x)",
        ),
        ("1 + atan2(1)", "`atan2` at column 5 takes 2 arguments, atan2(y, x), but was given 1: `atan2(1)`"),
        ("sqrt(1, 2)", "`sqrt` at column 1 takes 1 argument, sqrt(x), but was given 2: `sqrt(1, 2)`"),
        ("pow()", "`pow` at column 1 takes 2 arguments, pow(x, y), but was given 0: `pow()`"),
        ("2 * min()", "`min` at column 5 takes at least 1 argument, min(a, b, ...), but was given 0: `min()`"),
    ];
    for (expression, expected) in cases {
        let message = error(expression);
        assert!(message.starts_with(&format!("`expression`: {expected}")), "{message}");
    }
    // The arity is checked before the arguments are evaluated.
    assert!(error("sqrt(1 / 0, 2)").contains("takes 1 argument"));
}

#[test]
fn names_used_as_the_wrong_kind_of_thing() {
    let message = error("2 * sqrt");
    assert!(
        message.contains("`sqrt` at column 5 is a function: call it with its arguments in parentheses, sqrt(x)"),
        "{message}"
    );
    let message = error_with("x(2)", &[("x", 1.0)]);
    assert!(
        message.contains("`x` at column 1 is a variable, not a function; multiplication needs an explicit `*`"),
        "{message}"
    );
    let message = error("3 + pi(2)");
    assert!(message.contains("`pi` at column 5 is a constant, not a function"), "{message}");
}

#[test]
fn results_that_are_not_finite_name_the_function_or_operator_and_column() {
    let cases = [
        ("sqrt(-1)", "`sqrt(-1)` at column 1 has no finite value: sqrt(-1) is undefined (not a real number)"),
        ("1 + ln(0)", "`ln(0)` at column 5 has no finite value: ln(0) is infinite"),
        ("asin(2)", "`asin(2)` at column 1 has no finite value: asin(2) is undefined"),
        ("exp(1000)", "`exp(1000)` at column 1 has no finite value: exp(1000) is infinite"),
        ("log(8, 1)", "`log(8, 1)` at column 1 has no finite value: log(8, 1) is infinite"),
        ("10 ^ 400", "`^` in `10 ^ 400` at column 4 has no finite value: 10 ^ 400 is infinite"),
        (
            "(-8) ^ (1/3)",
            "`^` in `(-8) ^ (1/3)` at column 6 has no finite value: (-8) ^ 0.3333333333333333 is undefined",
        ),
        ("1e308 * 10", "`*` in `1e308 * 10` at column 7 has no finite value: 1e308 * 10 is infinite"),
        ("1e308 + 1e308", "`+` in `1e308 + 1e308` at column 7 has no finite value"),
        ("-1e308 - 1e308", "`-` in `-1e308 - 1e308` at column 8 has no finite value: (-1e308) - 1e308 is infinite"),
        ("2 ** 2000", "`**` in `2 ** 2000` at column 3"),
        ("pow(0, -1)", "`pow(0, -1)` at column 1 has no finite value"),
    ];
    for (expression, expected) in cases {
        let message = error(expression);
        assert!(message.starts_with(&format!("`expression`: {expected}")), "{expression:?}: {message}");
    }
    let message = error_with("sqrt(x - 5)", &[("x", 1.0)]);
    assert!(message.contains("`sqrt(x - 5)` at column 1 has no finite value: sqrt(-4) is undefined"), "{message}");
}

#[test]
fn numbers_beyond_the_float_range_are_refused() {
    assert_eq!(
        error("2 * 1e999"),
        "`expression`: the number `1e999` at column 5 is beyond the 64-bit float range (about ±1.8e308)"
    );
}

#[test]
fn variable_names_must_be_usable_and_not_shadow_built_ins() {
    let cases = [
        ("pi", "`pi` is the name of a built-in constant"),
        ("e", "`e` is the name of a built-in constant"),
        ("sqrt", "`sqrt` is the name of a built-in function"),
        ("min", "`min` is the name of a built-in function"),
        ("2x", "`2x` is not a valid name"),
        ("my var", "`my var` is not a valid name"),
        ("", "`` is not a valid name"),
        ("x-1", "`x-1` is not a valid name"),
    ];
    for (name, expected) in cases {
        let message = error_with("1", &[(name, 1.0)]);
        assert!(message.starts_with(&format!("`variables`: {expected}")), "{name:?}: {message}");
    }
}

#[test]
fn variable_values_must_be_finite() {
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(error_with("x", &[("x", value)]), "`variables`: `x` is not a finite number");
    }
}

#[test]
fn errors_are_reported_left_to_right() {
    let message = error("sqrt(-1) + 1 / 0");
    assert!(message.contains("sqrt(-1)"), "{message}");
    let message = error("a + b");
    assert!(message.contains("`a`"), "{message}");
}

/// Every short combination of awkward tokens either evaluates to a finite value or is
/// refused as invalid arguments naming a column; nothing panics or fails otherwise.
#[test]
fn no_input_panics_and_every_error_names_a_column() {
    const TOKENS: [&str; 14] = ["1", "0", "x", "(", ")", "-", "^", "**", "/", ",", "sqrt", "log", ".", "é"];
    let variables = BTreeMap::from([("x".to_owned(), 0.0)]);
    let mut expressions = vec![String::new()];
    for _ in 0..4 {
        expressions =
            expressions.iter().flat_map(|prefix| TOKENS.iter().map(move |token| format!("{prefix}{token}"))).collect();
        for expression in &expressions {
            match calculator(expression.clone(), Some(variables.clone())) {
                Ok(evaluation) => assert!(evaluation.value.is_finite(), "{expression:?}"),
                Err(ToolError::InvalidArguments(message)) => {
                    assert!(message.contains("column "), "{expression:?}: {message}");
                }
                Err(other) => panic!("{expression:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn invoke_parses_json_arguments_and_returns_json() {
    let output = CalculatorTool::invoke(r#"{"expression": "2 * (3 + sqrt(16)) ^ 2"}"#, Context::default());
    assert_eq!(output.as_deref(), Ok(r#"{"value":98.0}"#));
    let output = CalculatorTool::invoke(r#"{"expression": "x / 4", "variables": {"x": 10}}"#, Context::default());
    assert_eq!(output.as_deref(), Ok(r#"{"value":2.5}"#));
    let output = CalculatorTool::invoke(r#"{"expression": "1", "variables": null}"#, Context::default());
    assert_eq!(output.as_deref(), Ok(r#"{"value":1.0}"#));
}

#[test]
fn invoke_reports_errors_as_invalid_arguments() {
    let output = CalculatorTool::invoke(r#"{"expression": "1 / (x - 2)", "variables": {"x": 2}}"#, Context::default());
    assert_eq!(
        output,
        Err(ToolError::invalid_arguments(
            "`expression`: division by zero at column 3: the divisor `(x - 2)` evaluates to 0"
        ))
    );
    let output = CalculatorTool::invoke(r#"{"expression": "1", "precision": 3}"#, Context::default());
    assert!(matches!(output, Err(ToolError::InvalidArguments(message)) if message.contains("precision")));
    let output = CalculatorTool::invoke(r#"{"variables": {}}"#, Context::default());
    assert!(matches!(output, Err(ToolError::InvalidArguments(message)) if message.contains("expression")));
}

#[test]
fn metadata() {
    let metadata = CalculatorTool::metadata();
    assert_eq!(metadata.name, "calculator");
    assert_eq!(metadata.version, env!("CARGO_PKG_VERSION"));
    assert!(metadata.description.contains("\"expression\": \"2 * (3 + sqrt(x)) ^ 2\""));
}

#[test]
fn parameters_schema() {
    insta::assert_json_snapshot!(CalculatorTool::metadata().parameters_schema);
}

#[test]
fn output_schema() {
    insta::assert_json_snapshot!(CalculatorTool::metadata().output_schema);
}
