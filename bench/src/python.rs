//! The `python` tool beside the other ways to run a model's Python program, in one run
//! (`toolcell-bench --python`): Monty (`bench/monty`: a fresh session from its warm pool of
//! workers, and cold); `python3 -c` in a new process per program (no isolation at all: the
//! floor for starting a process), and the same programs timed inside CPython (no start: the
//! native speed); and Pyodide under Node (`bench/pyodide`), with one interpreter reused and
//! with a new interpreter per program. Then code mode: one script making five tool calls
//! against the same five calls made one by one; the start-up rows of the main run. Last, issue
//! 33's goals beside the figures.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolcell_runtime::load::Precompiled;
use toolcell_runtime::{Runtime, RuntimeBuilder, ToolCall, policy::Grants};

use crate::stats::median;
use crate::{Size, cache_dir, remove_cache};

/// The programs every runner runs, with the calls each takes per approach (full, quick).
const PROGRAMS: [(&str, &str, usize, usize); 3] = [
    ("print(1)", "print(1)", 200, 20),
    ("10^6-iteration loop", "t = 0\nfor i in range(10**6):\n    t += i\nprint(t)", 20, 3),
    ("50-line data wrangling", include_str!("../python/wrangle.py"), 50, 5),
];

/// The tools the code-mode script calls, in its order (`code_mode` has the arguments it passes).
const CODE_MODE_TOOLS: [&str; 5] = ["json_query", "calculator", "unit_convert", "datetime", "regex"];

pub async fn run(size: Size) -> Value {
    println!("## The `python` tool beside Monty, a process and Pyodide\n");
    let toolcell = toolcell(size).await;
    let monty = monty(size);
    let process = process(size);
    let pyodide = pyodide(size);
    print_programs(&toolcell, &monty, &process, &pyodide);
    print_cold_starts(&toolcell, &monty, &process, &pyodide);
    let code_mode = code_mode(size).await;
    let startup = crate::startup().await;
    print_goals(&toolcell, &monty, &code_mode, &startup);
    json!({
        "toolcell": toolcell, "monty": monty, "python3_process": process, "pyodide": pyodide,
        "code_mode": code_mode, "startup": startup,
    })
}

fn samples(quick: bool, full: usize, quick_count: usize) -> usize {
    if quick { quick_count } else { full }
}

fn ms(durations: &[Duration]) -> Vec<f64> {
    durations.iter().map(|duration| duration.as_secs_f64() * 1e3).collect()
}

/// toolcell: compiling the component; a runtime from the compile cache and its first call;
/// and each program per call, a fresh instance each.
async fn toolcell(size: Size) -> Value {
    let cache = cache_dir("python");
    let started = Instant::now();
    let runtime = standard_tools(&cache).build().await.expect("runtime");
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    let shipped = precompiled_standard_tools(&runtime);
    drop(runtime);
    // First use where the standard tools are shipped compiled (`just install`): no cache at all.
    let started = Instant::now();
    let runtime =
        Runtime::builder().tools_dir(toolcell_tools::DIR).precompiled(shipped).build().await.expect("runtime");
    run_program(&runtime, "print(1)").await;
    let shipped_first_use_ms = started.elapsed().as_secs_f64() * 1e3;
    drop(runtime);
    let mut start_ms = Vec::new();
    for _ in 0..samples(size.quick, 5, 1) {
        let started = Instant::now();
        let runtime = standard_tools(&cache).build().await.expect("runtime");
        run_program(&runtime, "print(1)").await;
        start_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let runtime = standard_tools(&cache).build().await.expect("runtime");
    let mut per_call = serde_json::Map::new();
    for (name, code, full, quick) in PROGRAMS {
        run_program(&runtime, code).await;
        let mut calls = Vec::new();
        for _ in 0..samples(size.quick, full, quick) {
            let started = Instant::now();
            run_program(&runtime, code).await;
            calls.push(started.elapsed());
        }
        per_call.insert(name.into(), json!(median(ms(&calls))));
    }
    // As an agent's calls come, a model's turn apart: the runtime makes the next instance
    // ready in the pause, and the call finds it.
    let mut after_pause = Vec::new();
    for _ in 0..samples(size.quick, 100, 20) {
        tokio::time::sleep(PAUSE_BETWEEN_CALLS).await;
        let started = Instant::now();
        run_program(&runtime, "print(1)").await;
        after_pause.push(started.elapsed());
    }
    let ready = runtime.metrics().tools.get("python").map_or(0, |tool| tool.ready_instance_calls);
    remove_cache(&cache);
    json!({
        "compile_ms": compile_ms,
        "shipped_first_use_ms": shipped_first_use_ms,
        "cached_start_and_first_call_ms": median(start_ms),
        "per_call_ms": per_call,
        "print_after_pause_ms": median(ms(&after_pause)),
        "calls_in_ready_instances": ready,
    })
}

/// The pause before each call of the "after a pause" figure: idle time, as between an
/// agent's turns (seconds with a hosted model), in which the next instance is made ready.
const PAUSE_BETWEEN_CALLS: Duration = Duration::from_millis(20);

/// The standard tools compiled ahead of time by `runtime`, as `toolcell precompile` ships them.
fn precompiled_standard_tools(runtime: &Runtime) -> Precompiled {
    let artifacts: Vec<Vec<u8>> =
        toolcell_tools::ALL.iter().map(|(_, component)| runtime.precompile(component).expect("precompile")).collect();
    // SAFETY: this process's own `precompile` output, kept in memory.
    #[allow(unsafe_code)]
    unsafe { Precompiled::new(artifacts) }.expect("artifacts")
}

/// The eight standard tools under their policy, compiled into (or loaded from) `cache`.
fn standard_tools(cache: &Path) -> RuntimeBuilder {
    Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(cache)
}

/// Runs `code` in the `python` tool; panics unless the program ran to its end.
async fn run_program(runtime: &Runtime, code: &str) -> Value {
    let output = runtime.call(ToolCall::new("bench", "python", json!({ "code": code }))).await;
    let run = output.value().unwrap_or_else(|| panic!("the python tool failed: {}", output.content));
    assert_eq!(run["ok"], true, "{run}");
    run
}

/// `python3 -c CODE`, a new process per program: the interpreter itself (`python3` on PATH may
/// be a shim, such as pyenv's shell script, that would double the time), with its
/// site-packages as a user runs it, and `-I -S` (no site-packages, no environment) as the floor.
fn process(size: Size) -> Value {
    let found = Command::new("python3")
        .args(["-c", "import sys, platform; print(sys.executable); print(platform.python_version())"])
        .output();
    let Some((executable, version)) = found.ok().filter(|output| output.status.success()).and_then(|output| {
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let (executable, version) = stdout.trim().split_once('\n')?;
        Some((PathBuf::from(executable), version.to_owned()))
    }) else {
        return json!({"skipped": "no python3 on PATH"});
    };
    let mut per_call = serde_json::Map::new();
    for (name, code, full, quick) in PROGRAMS {
        let calls: Vec<Duration> =
            (0..samples(size.quick, full.min(50), quick)).map(|_| python3(&executable, &[], code)).collect();
        per_call.insert(name.into(), json!(median(ms(&calls))));
    }
    let bare: Vec<Duration> =
        (0..samples(size.quick, 50, 3)).map(|_| python3(&executable, &["-I", "-S"], "print(1)")).collect();
    json!({"version": version, "per_call_ms": per_call, "isolated_no_site_print_ms": median(ms(&bare))})
}

fn python3(executable: &Path, flags: &[&str], code: &str) -> Duration {
    let started = Instant::now();
    let status =
        Command::new(executable).args(flags).args(["-c", code]).stdout(Stdio::null()).status().expect("python3 runs");
    assert!(status.success(), "python3 -c failed: {status}");
    started.elapsed()
}

/// Monty (`pydantic-monty`, pinned in `bench/monty/requirements.txt`, installed by `bench/run
/// --python`): a cold start (a new pool of workers, a session, the first `print(1)`), and each
/// program in a fresh session from one warm pool; and each program timed inside the driver's
/// own CPython, with no process start.
fn monty(size: Size) -> Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("../target/python/bench-monty/bin/python");
    if !python.is_file() {
        return json!({"skipped": "Monty is not installed: `bench/run --python` installs it into target/python/bench-monty"});
    }
    let programs: serde_json::Map<String, Value> =
        PROGRAMS.iter().map(|(name, code, ..)| ((*name).to_owned(), json!(code))).collect();
    let request = json!({"programs": programs, "calls": samples(size.quick, 20, 3), "cold": samples(size.quick, 5, 1)});
    let measured = json_child(Command::new(python).arg(root.join("monty/bench.py")), &request);
    let medians = |runs: &Value| -> serde_json::Map<String, Value> {
        runs.as_object()
            .map(|runs| {
                runs.iter()
                    .map(|(name, samples)| {
                        let samples: Vec<f64> =
                            samples.as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
                        (name.clone(), json!(median(samples)))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let cold: Vec<f64> = measured["cold_start_ms"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
    json!({
        "version": measured["version"],
        "cold_start_ms": median(cold),
        "fresh_session_per_call_ms": medians(&measured["fresh_session"]),
        "unsupported": measured["unsupported"],
        "native": {
            "version": measured["native"]["version"],
            "in_process_per_call_ms": medians(&measured["native"]["in_process_ms"]),
        },
    })
}

/// Runs `command` with `request` as JSON on its stdin, and parses the JSON it prints.
fn json_child(command: &mut Command, request: &Value) -> Value {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("the driver runs");
    let stdin = child.stdin.take().expect("stdin");
    serde_json::to_writer(stdin, request).expect("write the request");
    let output = child.wait_with_output().expect("the driver finishes");
    assert!(output.status.success(), "{command:?} failed: {}", output.status);
    serde_json::from_slice(&output.stdout).expect("the driver prints JSON")
}

/// Pyodide under Node: a cold start (a new process that loads Pyodide and runs `print(1)`),
/// and each program in one interpreter reused and in a new interpreter per program.
fn pyodide(size: Size) -> Value {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pyodide");
    if !dir.join("node_modules/pyodide").is_dir() {
        return json!({"skipped": "bench/pyodide is not installed: `npm ci --prefix bench/pyodide` (bench/run --python does)"});
    }
    let cold: Vec<Duration> = (0..samples(size.quick, 3, 1)).map(|_| node_once(&dir)).collect();
    let programs: serde_json::Map<String, Value> =
        PROGRAMS.iter().map(|(name, code, ..)| ((*name).to_owned(), json!(code))).collect();
    let request = json!({
        "programs": programs,
        "calls": samples(size.quick, 20, 3),
        "fresh": samples(size.quick, 3, 1),
    });
    let measured = node_bench(&dir, &request);
    let medians = |key: &str| -> serde_json::Map<String, Value> {
        measured[key]
            .as_object()
            .expect("per program")
            .iter()
            .map(|(name, samples)| {
                let samples: Vec<f64> = samples.as_array().unwrap().iter().filter_map(Value::as_f64).collect();
                (name.clone(), json!(median(samples)))
            })
            .collect()
    };
    json!({
        "version": measured["version"],
        "cold_start_ms": median(ms(&cold)),
        "load_ms": measured["load_ms"],
        "reused_per_call_ms": medians("reused"),
        "fresh_per_call_ms": medians("fresh"),
    })
}

fn node_once(dir: &Path) -> Duration {
    let started = Instant::now();
    let status =
        Command::new("node").current_dir(dir).args(["bench.mjs", "--once", "print(1)"]).status().expect("node runs");
    assert!(status.success(), "node bench.mjs --once failed: {status}");
    started.elapsed()
}

fn node_bench(dir: &Path, request: &Value) -> Value {
    json_child(Command::new("node").current_dir(dir).arg("bench.mjs"), request)
}

fn figure(value: &Value, path: &[&str]) -> String {
    let found = path.iter().try_fold(value, |value, key| value.get(*key));
    match found.and_then(Value::as_f64) {
        Some(ms) if ms >= 100.0 => format!("{ms:.0} ms"),
        Some(ms) if ms >= 1.0 => format!("{ms:.1} ms"),
        Some(ms) => format!("{ms:.2} ms"),
        None => "—".into(),
    }
}

fn print_programs(toolcell: &Value, monty: &Value, process: &Value, pyodide: &Value) {
    println!(
        "Median per program, ms. toolcell, Monty and a process isolate each program; Pyodide isolates it only \
         in a new interpreter; CPython in process is the native speed, with no isolation and no start.\n"
    );
    println!(
        "| program | toolcell `python`, fresh instance | Monty, fresh session from a warm pool | CPython, in \
         process | `python3 -c`, new process | Pyodide, new interpreter | Pyodide, one interpreter reused |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    for (name, ..) in PROGRAMS {
        let monty_figure = match monty["unsupported"][name].as_str() {
            Some(_) => "not supported".to_owned(),
            None => figure(monty, &["fresh_session_per_call_ms", name]),
        };
        println!(
            "| {name} | {} | {monty_figure} | {} | {} | {} | {} |",
            figure(toolcell, &["per_call_ms", name]),
            figure(monty, &["native", "in_process_per_call_ms", name]),
            figure(process, &["per_call_ms", name]),
            figure(pyodide, &["fresh_per_call_ms", name]),
            figure(pyodide, &["reused_per_call_ms", name]),
        );
    }
    if let Some(unsupported) = monty["unsupported"].as_object().filter(|unsupported| !unsupported.is_empty()) {
        let why: Vec<String> =
            unsupported.iter().map(|(name, error)| format!("{name}: {}", error.as_str().unwrap_or("?"))).collect();
        println!("\nMonty runs a subset of Python: {}.", why.join("; "));
    }
    println!(
        "\nVersions: Monty {}; CPython in process and `python3 -c` {}; the `python` tool's CPython 3.14.",
        monty["version"].as_str().unwrap_or("—"),
        monty["native"]["version"].as_str().unwrap_or("—"),
    );
    for skipped in [monty, process, pyodide].iter().filter_map(|runner| runner["skipped"].as_str()) {
        println!("\n(skipped: {skipped})");
    }
}

fn print_cold_starts(toolcell: &Value, monty: &Value, process: &Value, pyodide: &Value) {
    println!("\nFrom nothing to the first `print(1)`:\n\n| | ms |\n|---|---:|");
    println!(
        "| toolcell: compiling the 8 standard tools (python's 21 MB among them), no cache | {} |",
        figure(toolcell, &["compile_ms"])
    );
    println!(
        "| toolcell: the 8 standard tools shipped compiled, no cache, and the first call | {} |",
        figure(toolcell, &["shipped_first_use_ms"])
    );
    println!(
        "| toolcell: a runtime of the 8 tools from the compile cache, and the first call | {} |",
        figure(toolcell, &["cached_start_and_first_call_ms"])
    );
    println!(
        "| Monty: a pool of workers, a session and the first `print(1)` | {} |",
        figure(monty, &["cold_start_ms"])
    );
    println!("| `python3 -c`: a process | {} |", figure(process, &["per_call_ms", "print(1)"]));
    println!(
        "| `python3 -I -S -c`: a process without site-packages | {} |",
        figure(process, &["isolated_no_site_print_ms"])
    );
    println!("| Pyodide: a Node process that loads it | {} |", figure(pyodide, &["cold_start_ms"]));
}

/// One script making five tool calls, against the same five calls through `Runtime::call`
/// one after another (as an agent makes them, minus the model's turn between each).
async fn code_mode(size: Size) -> Value {
    let cache = cache_dir("code-mode");
    let grants = CODE_MODE_TOOLS.iter().fold(Grants::new(), |grants, tool| grants.call_tool(*tool));
    let runtime = standard_tools(&cache).grant("python", grants).build().await.expect("runtime");
    let inputs = json!({
        "shipments": [
            {"id": "A1", "weight_lb": 12.5, "shipped": "2026-11-02", "status": "open"},
            {"id": "B7", "weight_lb": 30, "shipped": "2026-10-28", "status": "open"},
            {"id": "C3", "weight_lb": 8, "shipped": "2026-11-10", "status": "closed"},
        ],
        "note": "Questions: ops@example.com, or +1 555 0100.",
    });
    let script = json!({"code": include_str!("../python/code_mode.py"), "inputs": inputs});
    let separate = [
        json!({"document": inputs, "query": "$.shipments[?@.status == 'open']"}),
        json!({"expression": "12.5 + 30"}),
        json!({"value": 42.5, "from": "pound", "to": "kilogram"}),
        json!({"operation": "difference", "instant": "2026-10-28", "end": "2026-11-24", "time_zone": "UTC"}),
        json!({"operation": "find", "pattern": r"[\w.]+@[\w.]+\w", "text": inputs["note"]}),
    ];
    let count = samples(size.quick, 50, 5);
    let (mut scripts, mut five_calls) = (Vec::new(), Vec::new());
    for _ in 0..=count {
        let started = Instant::now();
        let output = runtime.call(ToolCall::new("bench", "python", script.clone())).await;
        scripts.push(started.elapsed());
        assert_eq!(output.usage.nested_calls, 5, "{}", output.content);
        assert_eq!(output.value().unwrap()["ok"], true, "{}", output.content);
        let started = Instant::now();
        for (tool, arguments) in CODE_MODE_TOOLS.iter().zip(&separate) {
            let output = runtime.call(ToolCall::new("bench", *tool, arguments.clone())).await;
            assert!(!output.is_error, "{tool}: {}", output.content);
        }
        five_calls.push(started.elapsed());
    }
    // The first round warmed up.
    let (script_ms, calls_ms) = (median(ms(&scripts[1..])), median(ms(&five_calls[1..])));
    println!("\n## Code mode: five tool calls\n\n| | median |\n|---|---:|");
    println!("| one `python` script making the five calls (`tools.json_query(...)`, ...) | {script_ms:.1} ms |");
    println!("| the five calls through `Runtime::call`, one after another | {calls_ms:.1} ms |");
    println!(
        "\nThe script saves the model four turns (each a request, a generation and a reply, seconds with a \
         hosted model); it costs {:.1} ms more host time, for the interpreter.",
        script_ms - calls_ms
    );
    remove_cache(&cache);
    json!({"script_ms": script_ms, "five_calls_ms": calls_ms})
}

/// Issue 33's goals beside this run's figures.
fn print_goals(toolcell: &Value, monty: &Value, code_mode: &Value, startup: &Value) {
    let at = |value: &Value, path: &[&str]| path.iter().try_fold(value, |value, key| value.get(*key))?.as_f64();
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "—".into(),
    };
    let loop_name = PROGRAMS[1].0;
    println!("\n## Goals (issue 33)\n\n| | goal | this run |\n|---|---:|---:|");
    println!(
        "| a fresh `print(1)` through `Runtime::call`, back to back | ≤ 0.5 ms | {} |",
        figure(toolcell, &["per_call_ms", "print(1)"])
    );
    println!(
        "| the same, each call {} ms after the last (its instance made ready in the pause) | ≤ 0.5 ms | {} |",
        PAUSE_BETWEEN_CALLS.as_millis(),
        figure(toolcell, &["print_after_pause_ms"])
    );
    println!(
        "| the {loop_name}, against CPython in process | ≤ 1.5× | {} |",
        ratio(at(toolcell, &["per_call_ms", loop_name]), at(monty, &["native", "in_process_per_call_ms", loop_name]))
    );
    println!(
        "| first use: the standard tools shipped compiled (`just install`), no cache, and `print(1)` | ≤ 1,000 ms | {} |",
        figure(toolcell, &["shipped_first_use_ms"])
    );
    println!(
        "| first use without them: compiling the standard tools, no cache | ≤ 1,000 ms | {} |",
        figure(toolcell, &["compile_ms"])
    );
    println!(
        "| code mode: the five-call script, against the five direct calls | ≤ 1.5× | {} |",
        ratio(at(code_mode, &["script_ms"]), at(code_mode, &["five_calls_ms"]))
    );
    println!(
        "| ten tools (the standard tools but `python`, and three more) from a warm cache | ≤ 20 ms | {} |",
        figure(startup, &["folder_warm_ms"])
    );
}
