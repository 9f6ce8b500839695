//! The `calculator` tool: evaluates an arithmetic expression with named variables.
//!
//! `calculator.pest` parses the expression into flat runs of operands and operators; a Pratt
//! parser folds each run by precedence and evaluates it as it goes, so no syntax tree is
//! built. Every operand carries the byte span it came from, which is how errors quote the
//! offending fragment and name its column.
//!
//! (Over 500 lines: the grammar's evaluation and its error messages read best together.)

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::f64::consts::{E, PI, TAU};

use pest::Parser as _;
use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, ConstPrattParser, Op};
use toolcell_guest::{ToolError, json, tool};

#[cfg(test)]
mod tests;

/// The longest `expression` accepted, in characters.
const MAX_EXPRESSION_CHARS: usize = 10_000;

/// How deeply an expression may nest (see [`Evaluator::check_nesting`]). Parsing and
/// evaluation recurse once per level, and a wasm guest has a small fixed stack, so deeper
/// input must be refused rather than allowed to overflow it.
const MAX_NESTING: usize = 256;

/// How many names an error lists before it summarizes the rest.
const MAX_LISTED_NAMES: usize = 20;

/// The result of a calculation.
#[json]
pub struct Evaluation {
    /// The value of the expression, a 64-bit float (about 16 significant digits).
    pub value: f64,
}

/// Evaluates an arithmetic expression and returns its value as a 64-bit float. Use it for
/// any arithmetic instead of working it out yourself.
///
/// Supports numbers (42, 0.5, 1.5e3), + - * / % ^ (power; right-associative and tighter than
/// a leading minus, so -2^2 = -4 and 2^3^2 = 512), parentheses, the constants pi, e and tau,
/// names given in `variables`, and the functions sqrt, cbrt, abs, exp, ln, log10, log2,
/// log(x, base), pow(x, y), sin, cos, tan, asin, acos, atan, atan2(y, x), sinh, cosh, tanh,
/// floor, ceil, round, trunc, min(a, b, ...), max(a, b, ...), hypot(x, y). Angles are in
/// radians. Multiplication needs an explicit `*`. An error names the column of the problem.
///
/// Example: {"expression": "2 * (3 + sqrt(x)) ^ 2", "variables": {"x": 16}}
#[tool(title = "Calculator", output_schema, read_only, idempotent, open_world = false)]
pub fn calculator(
    /// The expression to evaluate, e.g. `2 * (3 + sqrt(16)) ^ 2`. `**` also means `^`; `%` is
    /// the remainder and takes the sign of the left operand (-7 % 3 = -1).
    #[schemars(length(min = 1, max = MAX_EXPRESSION_CHARS))]
    expression: String,
    /// Values for the names used in `expression`, e.g. {"x": 2.5, "rate": 0.07}. A name starts
    /// with a letter or `_`, continues with letters, digits or `_`, and must not be a constant
    /// or function name.
    variables: Option<BTreeMap<String, f64>>,
) -> Result<Evaluation, ToolError> {
    let variables = variables.unwrap_or_default();
    check_variables(&variables)?;
    let value = Evaluator { source: &expression, variables: &variables }.evaluate()?;
    // `+ 0.0` turns a negative zero (from `-0` or `round(-0.2)`) into a plain 0.
    Ok(Evaluation { value: value + 0.0 })
}

/// The parser `calculator.pest` generates, with its `Rule`s (undocumented, so kept private).
mod grammar {
    use pest_derive::Parser;

    #[derive(Parser)]
    #[grammar = "calculator.pest"]
    pub(crate) struct ExpressionParser;
}

use grammar::{ExpressionParser, Rule};

/// Precedence from lowest to highest (`true` starts a new level). Signs bind looser than `^`
/// so that -2^2 = -(2^2), and tighter than `*` so that -2 * 3 = (-2) * 3.
static PRATT: ConstPrattParser<Rule, 8> = ConstPrattParser::new_const([
    (Op::infix(Rule::add, Assoc::Left), true),
    (Op::infix(Rule::sub, Assoc::Left), false),
    (Op::infix(Rule::mul, Assoc::Left), true),
    (Op::infix(Rule::div, Assoc::Left), false),
    (Op::infix(Rule::rem, Assoc::Left), false),
    (Op::prefix(Rule::neg), true),
    (Op::prefix(Rule::plus), false),
    (Op::infix(Rule::pow, Assoc::Right), true),
]);

const CONSTANTS: [(&str, f64); 3] = [("pi", PI), ("e", E), ("tau", TAU)];

/// How a built-in function computes its value from its evaluated arguments.
#[derive(Clone, Copy)]
enum Apply {
    Unary(fn(f64) -> f64),
    Binary(fn(f64, f64) -> f64),
    /// One or more arguments.
    Variadic(fn(&[f64]) -> f64),
}

struct Function {
    name: &'static str,
    /// The parameter list as messages show it, e.g. `x, base`.
    params: &'static str,
    apply: Apply,
}

const fn unary(name: &'static str, apply: fn(f64) -> f64) -> Function {
    Function { name, params: "x", apply: Apply::Unary(apply) }
}

const fn binary(name: &'static str, params: &'static str, apply: fn(f64, f64) -> f64) -> Function {
    Function { name, params, apply: Apply::Binary(apply) }
}

const fn variadic(name: &'static str, apply: fn(&[f64]) -> f64) -> Function {
    Function { name, params: "a, b, ...", apply: Apply::Variadic(apply) }
}

const FUNCTIONS: [Function; 26] = [
    unary("sqrt", f64::sqrt),
    unary("cbrt", f64::cbrt),
    unary("abs", f64::abs),
    unary("exp", f64::exp),
    unary("ln", f64::ln),
    unary("log10", f64::log10),
    unary("log2", f64::log2),
    binary("log", "x, base", f64::log),
    binary("pow", "x, y", f64::powf),
    unary("sin", f64::sin),
    unary("cos", f64::cos),
    unary("tan", f64::tan),
    unary("asin", f64::asin),
    unary("acos", f64::acos),
    unary("atan", f64::atan),
    binary("atan2", "y, x", f64::atan2),
    unary("sinh", f64::sinh),
    unary("cosh", f64::cosh),
    unary("tanh", f64::tanh),
    unary("floor", f64::floor),
    unary("ceil", f64::ceil),
    unary("round", f64::round),
    unary("trunc", f64::trunc),
    variadic("min", |args| args.iter().copied().fold(f64::INFINITY, f64::min)),
    variadic("max", |args| args.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    binary("hypot", "x, y", f64::hypot),
];

impl Function {
    fn find(name: &str) -> Option<&'static Self> {
        FUNCTIONS.iter().find(|function| function.name == name)
    }

    fn signature(&self) -> String {
        format!("{}({})", self.name, self.params)
    }

    fn accepts(&self, count: usize) -> bool {
        match self.apply {
            Apply::Unary(_) => count == 1,
            Apply::Binary(_) => count == 2,
            Apply::Variadic(_) => count >= 1,
        }
    }

    fn arity(&self) -> &'static str {
        match self.apply {
            Apply::Unary(_) => "1 argument",
            Apply::Binary(_) => "2 arguments",
            Apply::Variadic(_) => "at least 1 argument",
        }
    }

    /// `None` when `args` does not fit the arity.
    fn call(&self, args: &[f64]) -> Option<f64> {
        match (self.apply, args) {
            (Apply::Unary(apply), [x]) => Some(apply(*x)),
            (Apply::Binary(apply), [x, y]) => Some(apply(*x, *y)),
            (Apply::Variadic(apply), [_, ..]) => Some(apply(args)),
            _ => None,
        }
    }
}

fn constant(name: &str) -> Option<f64> {
    CONSTANTS.iter().find(|(constant, _)| *constant == name).map(|(_, value)| *value)
}

/// Rejects `variables` keys the expression could never refer to, or that would shadow a
/// built-in name and make the expression ambiguous, and values that are not finite (JSON
/// cannot carry them, but a native caller can).
fn check_variables(variables: &BTreeMap<String, f64>) -> Result<(), ToolError> {
    for (name, value) in variables {
        let problem = if ExpressionParser::parse(Rule::variable_name, name).is_err() {
            "is not a valid name: a name starts with a letter or `_` and continues with letters, digits or `_`"
        } else if constant(name).is_some() {
            "is the name of a built-in constant; rename the variable and use the new name in `expression`"
        } else if Function::find(name).is_some() {
            "is the name of a built-in function; rename the variable and use the new name in `expression`"
        } else if !value.is_finite() {
            "is not a finite number"
        } else {
            continue;
        };
        return Err(ToolError::invalid_arguments(format!("`variables`: {} {problem}", quote(name))));
    }
    Ok(())
}

/// A value computed from the source text between the byte offsets `start` and `end`.
#[derive(Debug, Clone, Copy)]
struct Operand {
    value: f64,
    start: usize,
    end: usize,
}

struct Evaluator<'a> {
    source: &'a str,
    variables: &'a BTreeMap<String, f64>,
}

impl Evaluator<'_> {
    fn evaluate(&self) -> Result<f64, ToolError> {
        let length = self.source.chars().count();
        if length > MAX_EXPRESSION_CHARS {
            return Err(ToolError::invalid_arguments(format!(
                "`expression` is {length} characters long; the limit is {MAX_EXPRESSION_CHARS}"
            )));
        }
        // pest recurses once per parenthesis, before any other check could run.
        self.check_parenthesis_depth()?;
        let mut pairs = ExpressionParser::parse(Rule::calculation, self.source).map_err(|err| self.parse_error(err))?;
        let Some(expr) = pairs.next() else {
            return Err(ToolError::failed("internal error: the parser produced no expression"));
        };
        self.check_nesting(expr.clone(), 0)?;
        Ok(self.eval_expr(expr)?.value)
    }

    /// Fails when parentheses open deeper than [`MAX_NESTING`] anywhere in the text.
    /// Parentheses are the grammar's only recursion, so this bounds the parser's stack.
    fn check_parenthesis_depth(&self) -> Result<(), ToolError> {
        let mut depth = 0usize;
        for (byte, char) in self.source.char_indices() {
            match char {
                '(' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(self.too_deep(byte));
                    }
                }
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        Ok(())
    }

    /// Fails when evaluation would recurse deeper than [`MAX_NESTING`] levels: each group or
    /// call is a level, and so is each sign or `^` chained within one term (the Pratt parser
    /// recurses for those; `+ - * / %` chains it folds in a loop). `outer` is the depth `expr`
    /// sits at. Recurses only into groups and calls, so at most `MAX_NESTING` deep itself.
    fn check_nesting(&self, expr: Pair<'_, Rule>, outer: usize) -> Result<(), ToolError> {
        let mut chain = 0;
        for pair in expr.into_inner() {
            match pair.as_rule() {
                Rule::add | Rule::sub | Rule::mul | Rule::div | Rule::rem => chain = 0,
                Rule::neg | Rule::plus | Rule::pow => {
                    chain += 1;
                    if outer + chain > MAX_NESTING {
                        return Err(self.too_deep(pair.as_span().start()));
                    }
                }
                Rule::group | Rule::call => {
                    let depth = outer + chain + 1;
                    for inner in pair.into_inner() {
                        match inner.as_rule() {
                            // Blame the `(`, like `check_parenthesis_depth`.
                            Rule::open if depth > MAX_NESTING => return Err(self.too_deep(inner.as_span().start())),
                            Rule::expr => self.check_nesting(inner, depth)?,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn eval_expr(&self, expr: Pair<'_, Rule>) -> Result<Operand, ToolError> {
        PRATT
            .map_primary(|primary| self.eval_primary(primary))
            .map_prefix(|sign, operand| self.apply_sign(&sign, operand?))
            .map_infix(|lhs, operator, rhs| self.apply_operator(lhs?, &operator, rhs?))
            .parse(expr.into_inner())
    }

    fn eval_primary(&self, primary: Pair<'_, Rule>) -> Result<Operand, ToolError> {
        let span = primary.as_span();
        let value = match primary.as_rule() {
            Rule::number => self.number(&primary)?,
            Rule::name => self.lookup(&primary)?,
            Rule::call => self.call(primary)?,
            Rule::group => {
                let Some(inner) = primary.into_inner().find(|pair| pair.as_rule() == Rule::expr) else {
                    return Err(self.internal(span.start()));
                };
                self.eval_expr(inner)?.value
            }
            _ => return Err(self.internal(span.start())),
        };
        Ok(Operand { value, start: span.start(), end: span.end() })
    }

    #[inline(never)]
    fn number(&self, number: &Pair<'_, Rule>) -> Result<f64, ToolError> {
        let text = number.as_str();
        let problem = match text.parse::<f64>() {
            Ok(value) if value.is_finite() => return Ok(value),
            Ok(_) => "is beyond the 64-bit float range (about ±1.8e308)",
            Err(_) => "is not a valid number",
        };
        Err(self.error(format!("the number {} at {} {problem}", quote(text), self.position(number.as_span().start()))))
    }

    #[inline(never)]
    fn lookup(&self, name: &Pair<'_, Rule>) -> Result<f64, ToolError> {
        let text = name.as_str();
        if let Some(value) = self.variables.get(text).copied().or_else(|| constant(text)) {
            return Ok(value);
        }
        let at = self.position(name.as_span().start());
        if let Some(function) = Function::find(text) {
            return Err(self.error(format!(
                "{} at {at} is a function: call it with its arguments in parentheses, {}",
                quote(text),
                function.signature()
            )));
        }
        let given = if self.variables.is_empty() {
            "No variables were given".to_owned()
        } else {
            format!("The variables given are {}", list(self.variables.keys().map(String::as_str)))
        };
        Err(self.error(format!(
            "unknown variable {} at {at}.{} {given}; the constants are {}. Pass its value in `variables`, e.g. {{\"{text}\": 1.5}}",
            quote(text),
            self.suggestion(text),
            list(CONSTANTS.iter().map(|(name, _)| *name)),
        )))
    }

    /// On the recursion path: the messages are built out of line (`#[cold]`) to keep this
    /// frame small, since the wasm stack must hold [`MAX_NESTING`] of them.
    fn call(&self, call: Pair<'_, Rule>) -> Result<f64, ToolError> {
        let span = call.as_span();
        let mut parts = call.into_inner();
        let name = parts.next().map(|name| name.as_str()).unwrap_or_default();
        let args: Vec<_> = parts.filter(|pair| pair.as_rule() == Rule::expr).collect();

        let Some(function) = Function::find(name) else { return Err(self.not_a_function(name, span.start())) };
        // Check the arity before evaluating the arguments: it is the more basic mistake.
        if !function.accepts(args.len()) {
            return Err(self.wrong_arity(function, args.len(), span));
        }
        let values =
            args.into_iter().map(|arg| Ok(self.eval_expr(arg)?.value)).collect::<Result<Vec<_>, ToolError>>()?;
        match function.call(&values) {
            Some(value) if value.is_finite() => Ok(value),
            Some(value) => Err(self.non_finite_call(function, &values, value, span)),
            None => Err(self.internal(span.start())),
        }
    }

    #[cold]
    #[inline(never)]
    fn not_a_function(&self, name: &str, start: usize) -> ToolError {
        let at = self.position(start);
        let kind = if self.variables.contains_key(name) {
            "a variable"
        } else if constant(name).is_some() {
            "a constant"
        } else {
            return self.error(format!(
                "unknown function {} at {at}.{} The functions are {}",
                quote(name),
                self.suggestion(name),
                FUNCTIONS.iter().map(Function::signature).collect::<Vec<_>>().join(", "),
            ));
        };
        self.error(format!(
            "{} at {at} is {kind}, not a function; multiplication needs an explicit `*`, as in `{name} * (...)`",
            quote(name)
        ))
    }

    #[cold]
    #[inline(never)]
    fn wrong_arity(&self, function: &Function, given: usize, call: pest::Span<'_>) -> ToolError {
        let hint =
            if function.name == "log" && given == 1 { "; for one argument use ln(x) (base e) or log10(x)" } else { "" };
        self.error(format!(
            "{} at {} takes {}, {}, but was given {given}: {}{hint}",
            quote(function.name),
            self.position(call.start()),
            function.arity(),
            function.signature(),
            quote(call.as_str()),
        ))
    }

    #[cold]
    #[inline(never)]
    fn non_finite_call(&self, function: &Function, args: &[f64], value: f64, call: pest::Span<'_>) -> ToolError {
        let args = args.iter().map(|arg| show(*arg)).collect::<Vec<_>>().join(", ");
        self.error(format!(
            "{} at {} has no finite value: {}({args}) is {}",
            quote(call.as_str()),
            self.position(call.start()),
            function.name,
            non_finite(value)
        ))
    }

    #[inline(never)]
    fn apply_sign(&self, sign: &Pair<'_, Rule>, operand: Operand) -> Result<Operand, ToolError> {
        let value = match sign.as_rule() {
            Rule::neg => -operand.value,
            Rule::plus => operand.value,
            _ => return Err(self.internal(sign.as_span().start())),
        };
        Ok(Operand { value, start: sign.as_span().start(), end: operand.end })
    }

    #[inline(never)]
    fn apply_operator(&self, lhs: Operand, operator: &Pair<'_, Rule>, rhs: Operand) -> Result<Operand, ToolError> {
        let (a, b) = (lhs.value, rhs.value);
        let start = operator.as_span().start();
        let value = match operator.as_rule() {
            Rule::add => a + b,
            Rule::sub => a - b,
            Rule::mul => a * b,
            Rule::div | Rule::rem if b == 0.0 => {
                let kind = if operator.as_rule() == Rule::div { "division" } else { "modulo" };
                return Err(self.error(format!(
                    "{kind} by zero at {}: the divisor {} evaluates to 0",
                    self.position(start),
                    self.quote_span(rhs.start, rhs.end),
                )));
            }
            Rule::div => a / b,
            Rule::rem => a % b,
            Rule::pow => a.powf(b),
            _ => return Err(self.internal(start)),
        };
        if !value.is_finite() {
            return Err(self.error(format!(
                "{} in {} at {} has no finite value: {} {} {} is {}",
                quote(operator.as_str()),
                self.quote_span(lhs.start, rhs.end),
                self.position(start),
                show_operand(a),
                operator.as_str(),
                show_operand(b),
                non_finite(value),
            )));
        }
        Ok(Operand { value, start: lhs.start, end: rhs.end })
    }

    fn parse_error(&self, error: pest::error::Error<Rule>) -> ToolError {
        let byte = match error.location {
            InputLocation::Pos(byte) | InputLocation::Span((byte, _)) => byte,
        };
        let at = self.position(byte);
        let positives = match error.variant {
            ErrorVariant::ParsingError { positives, .. } => positives,
            ErrorVariant::CustomError { message } => return self.error(format!("cannot be parsed at {at}: {message}")),
        };
        let expects = |rules: &[Rule]| positives.iter().any(|rule| rules.contains(rule));
        let operand = [Rule::expr, Rule::number, Rule::name, Rule::call, Rule::group, Rule::neg, Rule::plus];
        let operator = [Rule::add, Rule::sub, Rule::pow, Rule::mul, Rule::div, Rule::rem];

        let mut expected = Vec::new();
        if expects(&operand) {
            expected.push("a number, a name or `(`");
        } else if expects(&[Rule::open]) {
            expected.push("`(`");
        }
        if expects(&operator) {
            expected.push("an operator (+ - * / % ^)");
        }
        if expects(&[Rule::comma]) {
            expected.push("`,`");
        }
        if expects(&[Rule::close]) {
            expected.push("`)`");
        }
        if expects(&[Rule::EOI]) {
            expected.push("the end of the expression");
        }
        if expected.is_empty() {
            expected.push("a valid expression");
        }

        let found = self.source.get(byte..).unwrap_or_default();
        let hint = match found.chars().next() {
            Some(',') if !expects(&[Rule::comma]) => {
                " (`,` only separates function arguments: write 1000, not 1,000, and 0.5, not 0,5)"
            }
            Some('=') => " (this tool evaluates an expression; it does not solve equations)",
            Some(next) if expects(&operator) && (next.is_alphanumeric() || next == '_' || next == '(') => {
                " (multiplication needs an explicit `*`, e.g. `2 * x`)"
            }
            _ => "",
        };
        self.error(format!("expected {} at {at}, found {}{hint}", join_or(&expected), describe_token(found)))
    }

    /// " Did you mean `pi`?" when `name` matches a known name but for letter case.
    fn suggestion(&self, name: &str) -> String {
        let known = self
            .variables
            .keys()
            .map(String::as_str)
            .chain(CONSTANTS.iter().map(|(name, _)| *name))
            .chain(FUNCTIONS.iter().map(|function| function.name));
        known
            .filter(|known| known.eq_ignore_ascii_case(name))
            .map(|known| format!(" Did you mean {}?", quote(known)))
            .next()
            .unwrap_or_default()
    }

    fn too_deep(&self, byte: usize) -> ToolError {
        self.error(format!(
            "the expression nests too deeply at {} ({}): at most {MAX_NESTING} levels of parentheses, function calls, signs and chained `^` are allowed; compute inner parts separately and pass them in `variables`",
            self.position(byte),
            describe_token(self.source.get(byte..).unwrap_or_default()),
        ))
    }

    /// For states the grammar rules out; reaching one is a bug in this tool, not in the input.
    #[cold]
    #[inline(never)]
    fn internal(&self, byte: usize) -> ToolError {
        ToolError::failed(format!("internal error: unexpected parse tree at {}", self.position(byte)))
    }

    fn error(&self, message: String) -> ToolError {
        ToolError::invalid_arguments(format!("`expression`: {message}"))
    }

    /// "column 7", counting characters from 1, or "line 2, column 3" in a multi-line
    /// expression.
    fn position(&self, byte: usize) -> String {
        let before = self.source.get(..byte).unwrap_or(self.source);
        match before.rfind('\n') {
            None => format!("column {}", before.chars().count() + 1),
            Some(newline) => format!(
                "line {}, column {}",
                before.matches('\n').count() + 1,
                before[newline + 1..].chars().count() + 1
            ),
        }
    }

    fn quote_span(&self, start: usize, end: usize) -> String {
        quote(self.source.get(start..end).unwrap_or_default())
    }
}

/// `text` in backticks, shortened to 40 characters.
fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    if text.chars().count() <= MAX_CHARS {
        format!("`{text}`")
    } else {
        format!("`{}…`", text.chars().take(MAX_CHARS - 1).collect::<String>())
    }
}

fn is_word_char(char: char) -> bool {
    char.is_alphanumeric() || char == '_' || char == '.'
}

/// The token at the start of `rest`, quoted: a whole word or number, or one other character.
fn describe_token(rest: &str) -> String {
    let Some(first) = rest.chars().next() else { return "the end of the expression".to_owned() };
    let length =
        if is_word_char(first) { rest.find(|c| !is_word_char(c)).unwrap_or(rest.len()) } else { first.len_utf8() };
    quote(rest.get(..length).unwrap_or(rest))
}

/// "a, b or c"
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The names quoted and comma-separated, at most [`MAX_LISTED_NAMES`] of them.
fn list<'n>(names: impl ExactSizeIterator<Item = &'n str>) -> String {
    let total = names.len();
    let mut listed = names.take(MAX_LISTED_NAMES).map(quote).collect::<Vec<_>>().join(", ");
    if total > MAX_LISTED_NAMES {
        listed.push_str(&format!(" and {} more", total - MAX_LISTED_NAMES));
    }
    listed
}

/// A number for a message: plain for ordinary magnitudes, exponent notation otherwise (Rust
/// prints 1e300 with all 301 digits).
fn show(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e16).contains(&magnitude) { format!("{value:e}") } else { format!("{value}") }
}

/// [`show`], with a negative number in parentheses so that `(-8) ^ 0.5` reads right.
fn show_operand(value: f64) -> String {
    if value < 0.0 { format!("({})", show(value)) } else { show(value) }
}

fn non_finite(value: f64) -> &'static str {
    if value.is_nan() {
        "undefined (not a real number)"
    } else {
        "infinite or beyond the 64-bit float range (about ±1.8e308)"
    }
}
