//! The `python` standard tool end to end: real programs, the errors a model makes and reads,
//! containment (each hostile program followed by a correct one), and code mode through the
//! interpreter, where a program calls other tools as functions. (Long: one test per program.)

use std::time::Duration;

use serde_json::{Value, json};
use toolcell_runtime::{
    CallError, LimitOverrides, Runtime, ToolCall, ToolOutput,
    policy::{EnvGrant, Grants},
    tool::CrashReason,
};

use crate::common::{call, call_with, kind, runtime, standard_tools, value};
use crate::containment::benign_call_is_correct;

/// Runs `code` with `inputs` in the shared runtime; the program's run (`ok`, `stdout`,
/// `value`, `error`, ...).
async fn run_with(code: &str, inputs: Value) -> Value {
    value(&call("python", json!({"code": code, "inputs": inputs})).await)
}

async fn run(code: &str) -> Value {
    run_with(code, Value::Null).await
}

/// The run of a program that raised: its `error` (`type`, `message`, `line`, `traceback`).
async fn raised(code: &str) -> Value {
    let run = run(code).await;
    assert_eq!(run["ok"], false, "{run:#}");
    run["error"].clone()
}

/// After a hostile program: a fresh interpreter runs the next one correctly, and other
/// tools are unharmed.
async fn next_program_is_correct() {
    let run = run("print(6 * 7)\nsorted({'b': 1, 'a': 2})").await;
    assert_eq!((&run["stdout"], &run["value"]), (&json!("42\n"), &json!(["a", "b"])), "{run:#}");
    benign_call_is_correct(runtime()).await;
}

#[tokio::test]
async fn arithmetic_and_exact_numbers() {
    let run = run("from fractions import Fraction\nfrom decimal import Decimal\n\
                   total = sum(i * i for i in range(1, 101))\nprint(total, Decimal('0.1') + Decimal('0.2'))\n\
                   Fraction(1, 3) + Fraction(1, 6)")
    .await;
    assert_eq!(run["ok"], true, "{run:#}");
    assert_eq!(run["stdout"], "338350 0.3\n");
    // Not plain JSON: shown as its repr, with its type.
    assert_eq!((&run["value"], &run["value_type"]), (&json!("Fraction(1, 2)"), &json!("Fraction")));
}

#[tokio::test]
async fn string_processing_on_inputs() {
    let text = "The cat saw the dog. The dog ran!";
    let code = "import re, collections\nwords = re.findall(r'[a-z]+', inputs.lower())\n\
                collections.Counter(words).most_common(2)";
    let run = run_with(code, json!(text)).await;
    assert_eq!(run["value"], json!([["the", 3], ["dog", 2]]), "{run:#}");
    assert_eq!(run["value_type"], "list");
}

#[tokio::test]
async fn a_csv_summary() {
    let csv = "region,product,units,price\nnorth,tea,3,2.50\nsouth,tea,1,2.50\nnorth,cake,2,4.00\nsouth,jam,5,3.20\n";
    let code = r#"
import csv, io, statistics
from collections import defaultdict

revenue = defaultdict(float)
units = []
for row in csv.DictReader(io.StringIO(inputs)):
    revenue[row["region"]] += int(row["units"]) * float(row["price"])
    units.append(int(row["units"]))
print(f"{len(units)} rows, median units {statistics.median(units)}")
{region: round(total, 2) for region, total in sorted(revenue.items())}
"#;
    let run = run_with(code, json!(csv)).await;
    assert_eq!(run["stdout"], "4 rows, median units 2.5\n", "{run:#}");
    assert_eq!(run["value"], json!({"north": 15.5, "south": 18.5}));
}

#[tokio::test]
async fn dates() {
    let code = "from datetime import date, timedelta\nleap = (date(2024, 3, 1) - date(2024, 2, 1)).days\n\
                [leap, date(2026, 11, 24).strftime('%A'), (date(2026, 1, 31) + timedelta(days=30)).isoformat()]";
    assert_eq!(run(code).await["value"], json!([29, "Tuesday", "2026-03-02"]));
}

#[tokio::test]
async fn in_memory_sqlite_and_xml_are_there() {
    let code = "import sqlite3, xml.etree.ElementTree as ET\ndb = sqlite3.connect(':memory:')\n\
                db.execute('create table t (n integer)')\ndb.executemany('insert into t values (?)', [(i,) for i in range(10)])\n\
                [db.execute('select sum(n) from t').fetchone()[0], ET.fromstring('<a><b>hi</b></a>').find('b').text]";
    assert_eq!(run(code).await["value"], json!([45, "hi"]));
}

#[tokio::test]
async fn a_program_without_a_final_expression_has_no_value() {
    let run = run("x = 1\nprint('done')").await;
    assert_eq!((&run["ok"], &run["value"], &run["value_type"]), (&json!(true), &Value::Null, &Value::Null));
}

#[tokio::test]
async fn random_is_seeded_from_the_call_so_a_run_repeats() {
    let code = "import random\n[random.random(), random.randint(1, 10**9)]";
    let first = run(code).await["value"].clone();
    assert_eq!(run(code).await["value"], first, "the same call repeats");
    assert_ne!(run_with(code, json!(1)).await["value"], first, "other arguments, other numbers");
}

#[tokio::test]
async fn output_past_the_bound_is_dropped_and_counted() {
    let run = run("print('x' * 100_000)").await;
    assert_eq!(run["stdout"].as_str().unwrap().len(), 64 * 1024);
    assert_eq!(run["dropped_chars"], 100_001 - 64 * 1024);
}

#[tokio::test]
async fn a_syntax_error_is_the_models_to_fix_with_line_and_column() {
    let output = call("python", json!({"code": "total = 0\nfor x in [1, 2]\n    total += x"})).await;
    assert_eq!(kind(&output), "rejected_arguments", "{output:#?}");
    let message = &output.content;
    assert!(message.contains("line 2, column 16: expected ':'"), "{message}");
    assert!(message.contains("for x in [1, 2]"), "shows the line: {message}");
    assert!(message.contains("Change the arguments"), "{message}");
}

#[tokio::test]
async fn an_exception_is_a_result_with_a_traceback_of_the_programs_lines_only() {
    let error = raised("def mean(xs):\n    return sum(xs) / len(xs)\n\nmean([])").await;
    assert_eq!(error["type"], "ZeroDivisionError");
    assert_eq!(error["message"], "division by zero");
    assert_eq!(error["line"], 2);
    let traceback = error["traceback"].as_str().unwrap();
    assert!(traceback.contains("line 4, in <module>") && traceback.contains("line 2, in mean"), "{traceback}");
    assert!(traceback.contains("return sum(xs) / len(xs)"), "shows the source line: {traceback}");
    for leak in ["/", ".py", "toolcell", "File "] {
        assert!(!traceback.replace("sum(xs) / len(xs)", "").contains(leak), "{leak:?} in {traceback}");
    }
}

#[tokio::test]
async fn a_busy_loop_is_stopped_by_fuel() {
    let output =
        call_with("python", json!({"code": "while True: pass"}), LimitOverrides::new().fuel(2_000_000_000)).await;
    assert_eq!(output.error, Some(CallError::FuelExhausted { limit: 2_000_000_000 }), "{output:#?}");
    next_program_is_correct().await;
}

#[tokio::test]
async fn a_memory_bomb_is_a_memory_error_in_the_program() {
    for bomb in ["x = [0] * 10**9", "chunks = []\nwhile True:\n    chunks.append('a' * 10**6)"] {
        let error = raised(bomb).await;
        assert_eq!(error["type"], "MemoryError", "{bomb}: {error:#}");
        next_program_is_correct().await;
    }
}

#[tokio::test]
async fn deep_recursion_is_a_recursion_error_in_the_program() {
    // Pure Python, and through C (map, sorted's key): both stop at the recursion limit.
    for code in [
        "def f(n): return f(n + 1)\nf(0)",
        "def f(n): return list(map(f, [n + 1]))\nf(0)",
        "def f(n): return sorted([1, 2], key=lambda k: f(n + 1))\nf(0)",
    ] {
        let error = raised(code).await;
        assert_eq!(error["type"], "RecursionError", "{code}: {error:#}");
        assert!(error["traceback"].as_str().unwrap().contains("earlier calls left out"), "{error:#}");
    }
    next_program_is_correct().await;
}

#[tokio::test]
async fn a_long_linked_structure_is_built_walked_and_left() {
    // Freeing it would recurse in C once per link, past the wasm stack: the program's
    // objects are left to the instance, which is thrown away.
    let code = "node = None\nfor i in range(100_000):\n    node = (i, node)\nn = 0\nwhile node:\n    n += node[0]\n    \
                node = node[1]\nnested = []\nfor _ in range(100_000):\n    nested = [nested]\nn";
    assert_eq!(run(code).await["value"], 4_999_950_000_u64);
}

#[tokio::test]
async fn recursion_in_c_past_the_wasm_stack_is_a_clean_crash_the_model_can_act_on() {
    // (json.dumps of such a list raises RecursionError: CPython's own check comes first.)
    let code = "import json\njson.loads('[' * 100_000 + ']' * 100_000)";
    let output = call("python", json!({ "code": code })).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: CrashReason::StackOverflow }), "{output:#?}");
    assert!(output.content.contains("make them shallower"), "{}", output.content);
    next_program_is_correct().await;
}

#[tokio::test]
async fn source_nested_too_deeply_to_parse_is_rejected() {
    let code = format!("x = {}1{}", "(".repeat(3000), ")".repeat(3000));
    let output = call("python", json!({ "code": code })).await;
    assert_eq!(kind(&output), "rejected_arguments", "{output:#?}");
    assert!(output.content.contains("nests too deeply"), "{}", output.content);
    next_program_is_correct().await;
}

#[tokio::test]
async fn no_sockets_processes_threads_host_files_or_environment() {
    let cases = [
        ("import socket", "ModuleNotFoundError"),
        ("import subprocess", "ModuleNotFoundError"),
        ("import ctypes", "ModuleNotFoundError"),
        ("import numpy", "ModuleNotFoundError"),
        ("import threading\nthreading.Thread(target=print).start()", "RuntimeError"),
        ("open('/etc/passwd').read()", "FileNotFoundError"),
        ("import os\nos.listdir('/')", "FileNotFoundError"),
    ];
    for (code, expected) in cases {
        let error = raised(code).await;
        assert_eq!(error["type"], expected, "{code}: {error:#}");
        next_program_is_correct().await;
    }
    assert_eq!(run("import os\ndict(os.environ)").await["value"], json!({}), "no environment");
}

/// The run of a program that must end as its own result, never as the tool's crash.
async fn own_result(code: &str) -> Value {
    let output = call("python", json!({ "code": code })).await;
    assert_eq!(output.error, None, "{code}\n{output:#?}");
    value(&output)
}

#[tokio::test]
async fn a_final_value_that_cannot_be_shown_is_described_with_the_output_kept() {
    // Showing the value runs the program's `__repr__`: whatever it raises, the run is the
    // program's, with what it printed (also while being shown).
    let stops = [
        ("raise SystemExit", "SystemExit"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise GeneratorExit", "GeneratorExit"),
        ("import sys; sys.exit(3)", "SystemExit"),
        ("raise type('Stop', (BaseException,), {})()", "Stop"),
    ];
    for (stop, name) in stops {
        let code = format!(
            "print('before')\nclass A:\n    def __repr__(self):\n        print('in repr')\n        {stop}\nA()"
        );
        let run = own_result(&code).await;
        assert_eq!((&run["ok"], &run["stdout"]), (&json!(true), &json!("before\nin repr\n")), "{code}\n{run:#}");
        assert_eq!(run["value"], format!("<A whose repr failed: {name}>"), "{code}\n{run:#}");
        assert_eq!(run["value_type"], "A");
    }
    // Reading the value's type or structure runs no code of the program's: not a
    // `__class__` property, a metaclass's `__name__`, nor a list's own `__iter__`.
    let run = own_result("class A:\n    @property\n    def __class__(self):\n        raise SystemExit\nA()").await;
    assert!(run["value"].as_str().unwrap().starts_with("<__main__.A object at 0x"), "{run:#}");
    let code = "class M(type):\n    @property\n    def __name__(cls):\n        raise KeyboardInterrupt\n\
                class A(metaclass=M):\n    pass\nA()";
    let run = own_result(code).await;
    assert_eq!(run["value_type"], "A", "{run:#}");
    assert_eq!(run["value"], "<A whose repr failed: KeyboardInterrupt>");
    let run = own_result("class L(list):\n    def __iter__(self):\n        raise SystemExit\nL([1, 2])").await;
    assert_eq!((&run["value"], &run["value_type"]), (&json!([1, 2]), &json!("L")), "{run:#}");
    next_program_is_correct().await;
}

#[tokio::test]
async fn an_exception_that_cannot_be_shown_is_still_the_programs_error_with_the_output_kept() {
    let cases = [
        (
            "class E(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\nraise E()",
            "E",
            "<exception str() failed>",
        ),
        (
            "class E(Exception):\n    def __str__(self):\n        raise SystemExit\nraise E()",
            "E",
            "<exception str() failed>",
        ),
        ("class E(Exception):\n    def __str__(self):\n        return 42\nraise E()", "E", "<exception str() failed>"),
        (
            "class A:\n    def __repr__(self):\n        raise GeneratorExit\nraise ValueError(A(), 2)",
            "ValueError",
            "<exception str() failed>",
        ),
        (
            "class E(Exception):\n    @property\n    def __notes__(self):\n        raise SystemExit\nraise E('m')",
            "E",
            "m",
        ),
        (
            "class E(Exception):\n    @property\n    def __traceback__(self):\n        raise SystemExit\nraise E('m')",
            "E",
            "m",
        ),
        // The traceback's "Did you mean" reads the object's attributes.
        (
            "class A:\n    def __dir__(self):\n        raise SystemExit\nA().missing",
            "AttributeError",
            "'A' object has no attribute 'missing'",
        ),
        (
            "class X(SystemExit):\n    @property\n    def code(self):\n        raise KeyboardInterrupt\nraise X(1)",
            "X",
            "1",
        ),
    ];
    for (code, kind, message) in cases {
        let code = format!("print('before')\n{code}");
        let run = own_result(&code).await;
        assert_eq!((&run["ok"], &run["stdout"]), (&json!(false), &json!("before\n")), "{code}\n{run:#}");
        let error = &run["error"];
        let last = code.lines().next_back().unwrap();
        assert_eq!((&error["type"], &error["message"]), (&json!(kind), &json!(message)), "{code}\n{run:#}");
        assert_eq!(error["line"], code.lines().count(), "{code}\n{run:#}");
        let traceback = error["traceback"].as_str().unwrap();
        assert!(traceback.contains(last) && traceback.ends_with(&format!("{kind}: {message}\n")), "{traceback}");
    }
    next_program_is_correct().await;
}

#[tokio::test]
async fn os_exit_ends_the_program_with_its_status_and_its_output() {
    // Status 0 ends a run that succeeded; it has no value, as the lines after the exit
    // never ran.
    let code = "import os, sys\nprint('before')\nprint('err', file=sys.stderr)\nos._exit(0)\nprint('after')\n1";
    let run = own_result(code).await;
    assert_eq!((&run["ok"], &run["error"], &run["value"]), (&json!(true), &Value::Null, &Value::Null), "{run:#}");
    assert_eq!((&run["stdout"], &run["stderr"]), (&json!("before\n"), &json!("err\n")));

    // Any other status is the program's error, as `sys.exit(status)` is, however the exit
    // is reached.
    let cases = [
        ("import os\nos._exit(3)", 3, 3),
        ("import posix\nposix._exit(4)", 4, 3),
        ("from os import _exit\ndef leave():\n    _exit(5)\nleave()", 5, 4),
        ("import sys\nsys.modules['posix']._exit(6)", 6, 3),
        // Caught, it still ends the program: nothing after it is seen.
        ("import os\ntry:\n    os._exit(7)\nexcept BaseException:\n    print('caught')\nprint('after')\n'value'", 7, 4),
        // From code run to show the value or the exception, or from a finalizer.
        ("class A:\n    def __repr__(self):\n        import os\n        os._exit(8)\nA()", 8, 5),
        ("class E(Exception):\n    def __str__(self):\n        import os\n        os._exit(9)\nraise E()", 9, 5),
        (
            "class D:\n    def __del__(self):\n        import os\n        os._exit(10)\nd = D()\ndel d\nprint('after')",
            10,
            5,
        ),
        // os executed again takes _exit from posix, and posix made afresh has it too.
        ("import importlib, os\nimportlib.reload(os)\nos._exit(11)", 11, 4),
        ("import sys\ndel sys.modules['posix']\nimport posix\nposix._exit(12)", 12, 5),
        (
            "import _imp, importlib.machinery as m\nposix = _imp.create_builtin(m.ModuleSpec('posix', m.BuiltinImporter))\n\
             posix._exit(13)",
            13,
            4,
        ),
    ];
    for (code, status, line) in cases {
        let code = format!("print('before')\n{code}");
        let run = own_result(&code).await;
        assert_eq!(
            (&run["ok"], &run["stdout"], &run["value"]),
            (&json!(false), &json!("before\n"), &Value::Null),
            "{code}\n{run:#}"
        );
        let error = &run["error"];
        assert_eq!(
            (&error["type"], &error["message"]),
            (&json!("SystemExit"), &json!(status.to_string())),
            "{code}\n{run:#}"
        );
        assert_eq!(error["line"], line, "{code}\n{run:#}");
        assert!(error["traceback"].as_str().unwrap().ends_with(&format!("SystemExit: {status}\n")), "{run:#}");
    }

    let run = own_result("import os\nprint('before')\nos.abort()").await;
    assert_eq!((&run["ok"], &run["stdout"]), (&json!(false), &json!("before\n")), "{run:#}");
    assert_eq!(
        (&run["error"]["type"], &run["error"]["message"]),
        (&json!("SystemExit"), &json!("os.abort() ended the program"))
    );
    next_program_is_correct().await;
}

#[tokio::test]
async fn the_interpreter_has_limits_of_its_own_from_the_standard_policy() {
    let limits = runtime().limits("python").unwrap();
    assert_eq!(
        (limits.fuel, limits.timeout, limits.memory_bytes),
        (30_000_000_000, Duration::from_secs(10), 128 << 20)
    );
    let calculator = runtime().limits("calculator").unwrap();
    assert_eq!(calculator.fuel, 10_000_000_000, "the other tools keep the defaults");
}

/// A runtime where `python` may call `call_tools`, with a secret of its own, and limits
/// `limits` over the standard ones.
async fn code_mode(call_tools: &[&str], limits: LimitOverrides) -> Runtime {
    let grants = call_tools.iter().fold(Grants::new(), |grants, tool| grants.call_tool(*tool));
    let grants = grants.env(EnvGrant::secret("API_TOKEN", "python-secret-93ab")).limits(limits);
    let sleeper = Grants::new().limits(LimitOverrides::new().timeout(Duration::from_secs(120)));
    let builder = standard_tools();
    let builder =
        [toolcell_tests::SLEEPER, toolcell_tests::ENV_READER].iter().fold(builder, |b, g| b.component_file(g));
    builder.grant("python", grants).grant("sleeper", sleeper).build().await.expect("runtime builds")
}

async fn program(runtime: &Runtime, code: &str, inputs: Value) -> ToolOutput {
    runtime.call(ToolCall::new("program", "python", json!({"code": code, "inputs": inputs}))).await
}

#[tokio::test]
async fn a_script_calls_tools_as_functions_and_combines_their_results() {
    let runtime = code_mode(&["calculator", "json_query"], LimitOverrides::new()).await;
    let code = r#"
prices = tools.json_query(document=inputs, query="$.orders[*].total")
totals = [match["value"] for match in prices["matches"]]
with_tax = tools.calculator(expression=f"({' + '.join(map(str, totals))}) * (1 + rate)", variables={"rate": 0.2})
print(tools)
{"orders": len(totals), "with_tax": with_tax["value"], "doc": tools.calculator.__doc__.splitlines()[0][:40]}
"#;
    let orders = json!({"orders": [{"id": 1, "total": 12.5}, {"id": 2, "total": 30}, {"id": 3, "total": 7.5}]});
    let output = program(&runtime, code, orders).await;
    let run = value(&output);
    assert_eq!(run["value"]["orders"], 3, "{run:#}");
    assert!((run["value"]["with_tax"].as_f64().unwrap() - 60.0).abs() < 1e-9, "{run:#}");
    assert_eq!(run["stdout"], "<tools: calculator, json_query>\n");
    let description = &runtime.definition("calculator").unwrap().description;
    assert!(description.starts_with(run["value"]["doc"].as_str().unwrap()), "docstrings are the descriptions");
    assert_eq!(output.usage.nested_calls, 2);
    assert!(output.usage.nested_fuel > 0 && output.usage.nested_fuel < output.usage.fuel_consumed);
}

#[tokio::test]
async fn a_failed_nested_call_is_a_python_exception_with_the_model_facing_message() {
    let runtime = code_mode(&["calculator"], LimitOverrides::new()).await;
    let caught = "try:\n    tools.calculator(expression='2 +')\nexcept ToolCallError as err:\n    \
                  result = [err.kind, err.message, err.retryable]\nresult";
    let run = value(&program(&runtime, caught, Value::Null).await);
    let [kind, message, retryable] = run["value"].as_array().unwrap().as_slice() else { panic!("{run:#}") };
    assert_eq!((kind, retryable), (&json!("rejected_arguments"), &json!(true)), "fixable by the program");
    let message = message.as_str().unwrap();
    assert!(message.starts_with("The tool rejected the arguments") && message.contains("Change the arguments"));

    // Uncaught, it ends the program, with the line of the call.
    let run = value(&program(&runtime, "x = 1\ntools.calculator(expression='2 +')", Value::Null).await);
    assert_eq!((&run["error"]["type"], &run["error"]["line"]), (&json!("ToolCallError"), &json!(2)), "{run:#}");
    assert_eq!(run["error"]["message"].as_str().unwrap(), message);
}

#[tokio::test]
async fn a_tool_not_allowed_is_refused_even_past_the_tools_object() {
    let runtime = code_mode(&["calculator"], LimitOverrides::new()).await;
    let run = value(&program(&runtime, "tools.http_fetch(url='https://example.com')", Value::Null).await);
    assert_eq!(run["error"]["type"], "AttributeError", "{run:#}");
    assert_eq!(run["error"]["message"], "no tool `http_fetch` may be called here; these may: calculator");

    let bypass = "from toolcell_tool.calls import call_tool\ncall_tool('http_fetch', {'url': 'https://example.com'})";
    let output = program(&runtime, bypass, Value::Null).await;
    let run = value(&output);
    assert_eq!(run["error"]["type"], "ToolCallError", "{run:#}");
    let message = run["error"]["message"].as_str().unwrap();
    assert!(message.contains("may not call `http_fetch`") || message.contains("http_fetch"), "{message}");
    assert!(message.contains("call_tools"), "says what the operator can change: {message}");
    assert_eq!(output.usage.nested_fuel, 0, "nothing ran");

    // With no call_tools at all (the standard policy), `tools` is empty and says so.
    let run = run_with("tools.calculator(expression='1')", Value::Null).await;
    assert_eq!(
        run["error"]["message"],
        "no tool `calculator`: this program may call no tools here (the operator allows none)"
    );
}

#[tokio::test]
async fn nesting_stops_at_the_depth_limit_and_calls_at_the_count_limit() {
    let runtime = code_mode(&["python", "calculator"], LimitOverrides::new().max_nested_calls(5)).await;
    // A program that runs itself in a nested python, until refused.
    let nest = "try:\n    result = {'inner': tools.python(code=inputs, inputs=inputs)['value']}\n\
                except ToolCallError as err:\n    result = {'refused': err.kind}\nresult";
    let run = value(&program(&runtime, nest, json!(nest)).await);
    assert_eq!(run["value"], json!({"inner": {"inner": {"refused": "depth_limit"}}}), "{run:#}");

    let count = "made = 0\ntry:\n    for i in range(100):\n        tools.calculator(expression=str(i))\n        made += 1\n\
                 except ToolCallError as err:\n    refused = err.kind\n[made, refused]";
    let output = program(&runtime, count, Value::Null).await;
    assert_eq!(value(&output)["value"], json!([5, "call_limit"]), "{output:#?}");
    assert_eq!(output.usage.nested_calls, 6, "five made, the sixth refused");
}

#[tokio::test]
async fn nested_calls_spend_the_programs_time() {
    let runtime = code_mode(&["sleeper"], LimitOverrides::new().timeout(Duration::from_millis(1000))).await;
    let output = program(&runtime, "tools.sleeper()", Value::Null).await;
    assert_eq!(output.error, Some(CallError::Timeout { limit_ms: 1000 }), "{output:#?}");
    assert!(output.usage.duration < Duration::from_secs(30), "long before the sleeper wakes: {:?}", output.usage);
    benign_call_is_correct(&runtime).await;
}

#[tokio::test]
async fn a_nested_tool_gets_its_own_grants_never_the_programs() {
    let runtime = code_mode(&["env_reader"], LimitOverrides::new()).await;
    let code = "import os\nhas_own = os.environ.get('API_TOKEN') is not None\n\
                try:\n    tools.env_reader(name='API_TOKEN')\n    seen = 'read it'\nexcept ToolCallError as err:\n    \
                seen = err.kind\n[has_own, seen]";
    let output = program(&runtime, code, Value::Null).await;
    assert_eq!(value(&output)["value"], json!([true, "tool_failed"]), "{output:#?}");
    assert!(!output.content.contains("python-secret-93ab"));
}

#[tokio::test]
async fn a_programs_secret_stays_out_of_the_spans_and_logs_of_the_tools_it_calls() {
    let runtime = code_mode(&["http_fetch", "calculator"], LimitOverrides::new()).await;
    // The issue's program: the key goes into a URL for a tool the program calls.
    let code = "import os\nkey = os.environ['API_TOKEN']\ntry:\n    \
                tools.http_fetch(url=f'https://example.org/?key={key}')\nexcept ToolCallError as err:\n    \
                print(err.kind)\ntry:\n    tools.calculator(expression=key)\nexcept ToolCallError as err:\n    \
                print(err.kind)\nf'key={key}'";
    let call = ToolCall::new("py-chain", "python", json!({"code": code, "inputs": Value::Null}));
    let (output, spans, events) = crate::spans::tool_call_spans_and_events("py-chain", runtime.call(call)).await;
    let run = value(&output);
    assert_eq!(run["stdout"], "http_denied\nrejected_arguments\n", "{run:#}");
    assert_eq!(run["value"], "key=[REDACTED]");
    assert_eq!(spans.len(), 3, "{spans:#?}");
    let everything = crate::redaction::everything(&spans, &events, &output);
    assert!(!everything.contains("python-secret-93ab"), "{everything}");
}

#[tokio::test]
async fn a_programs_prints_are_handed_on_a_line_at_a_time_and_redacted() {
    let runtime = code_mode(&[], LimitOverrides::default()).await;
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = lines.clone();
    let code = "import os\nprint('step 1')\nprint('token', os.environ['API_TOKEN'])\nprint('last', end='')\n7";
    let call = ToolCall::new("streamed", "python", json!({"code": code}))
        .on_stdout_line(move |line| seen.lock().unwrap().push(line.to_owned()));
    let output = runtime.call(call).await;
    assert!(!output.is_error, "{output:?}");
    assert_eq!(*lines.lock().unwrap(), ["step 1", "token [REDACTED]"], "a last line without a line break is not");
}
