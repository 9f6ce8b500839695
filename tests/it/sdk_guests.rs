//! Tools written in Python and JavaScript with the SDKs in `sdk/`, built by
//! `toolcell_author::build` (as `toolcell build` does) and loaded next to the standard Rust
//! tools: a correct answer, and each way a call can go wrong, as the runtime reports it.
//!
//! Each language has its example tool and one misbehaving guest whose `mode` argument picks
//! the failure, so the suite compiles two components per language (each about 40 MB of
//! native code; the compile cache keeps them between runs).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolcell_runtime::{LimitOverrides, Runtime, ToolCall, ToolOutput};

use crate::common::{kind, value};

/// A language's SDK folder under `sdk/`, its example tool and the example's name.
#[derive(Clone, Copy)]
struct Language {
    sdk: &'static str,
    example: &'static str,
    secret: &'static str,
}

const PYTHON: Language = Language { sdk: "python", example: "text_stats", secret: "SECRET-py-7f3a" };
const JAVASCRIPT: Language = Language { sdk: "js", example: "slugify", secret: "SECRET-js-7f3a" };

fn sdk_dir(language: Language) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk").join(language.sdk)
}

/// Builds `sdk/<language>/examples/<project>` in a copy under the target folder, unless a
/// component built there is newer than every file of the SDK (which includes the examples).
fn build_example(language: Language, project: &str) -> PathBuf {
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdk-guests").join(language.sdk).join(project);
    let built = copy.join("build").join(format!("{project}.wasm"));
    let built_at = std::fs::metadata(&built).and_then(|metadata| metadata.modified()).ok();
    if built_at.is_some_and(|built_at| built_at > newest_source(&sdk_dir(language))) {
        return built;
    }
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&sdk_dir(language).join("examples").join(project), &copy);
    let components = toolcell_author::build(&copy).unwrap_or_else(|err| panic!("building {project}: {err}"));
    assert_eq!(components.len(), 1);
    assert_eq!(components[0].wasm, built.canonicalize().unwrap());
    built
}

/// The newest modification time of the SDK's own files (not its installed build tools or
/// build output).
fn newest_source(dir: &Path) -> SystemTime {
    let skip = ["node_modules", ".build-venv", "build", "__pycache__"];
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| !skip.contains(&entry.file_name().to_string_lossy().as_ref()))
        .map(|entry| {
            let path = entry.path();
            if path.is_dir() { newest_source(&path) } else { entry.metadata().unwrap().modified().unwrap() }
        })
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name();
        if ["build", "node_modules", "__pycache__"].contains(&name.to_string_lossy().as_ref()) {
            continue;
        }
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// A runtime over the language's two guests and the standard tools.
fn runtime(language: Language) -> &'static Runtime {
    static PYTHON_RUNTIME: OnceLock<Runtime> = OnceLock::new();
    static JAVASCRIPT_RUNTIME: OnceLock<Runtime> = OnceLock::new();
    let cell = if language.sdk == PYTHON.sdk { &PYTHON_RUNTIME } else { &JAVASCRIPT_RUNTIME };
    cell.get_or_init(|| {
        let files = [build_example(language, language.example), build_example(language, "misbehave")];
        // Built on a runtime of its own: the tests' runtimes come and go.
        std::thread::spawn(move || {
            let tokio = tokio::runtime::Runtime::new().expect("tokio runtime");
            tokio.block_on(async {
                let builder = crate::common::standard_tools();
                let builder = files.iter().fold(builder, |builder, file| builder.component_file(file));
                let runtime = builder.build().await.expect("runtime builds");
                assert_eq!(runtime.diagnostics(), &[], "every guest loads");
                runtime
            })
        })
        .join()
        .expect("runtime thread")
    })
}

async fn call(language: Language, tool: &str, arguments: Value, limits: LimitOverrides) -> ToolOutput {
    runtime(language).call(ToolCall::new("call-1", tool, arguments).with_limits(limits)).await
}

async fn misbehave(language: Language, mode: &str) -> ToolOutput {
    // Tight limits, so that the loop and the bomb end quickly.
    let mut limits = LimitOverrides::new();
    limits.timeout = Some(Duration::from_secs(2));
    limits.memory_bytes = Some(48 << 20);
    call(language, "misbehave", json!({"mode": mode}), limits).await
}

async fn answers_correctly_next_to_the_rust_tools(language: Language) {
    let output = call(language, language.example, json!({"text": "one two three"}), LimitOverrides::new()).await;
    let result = value(&output);
    let answer = if language.sdk == PYTHON.sdk { &result["count"] } else { &result["slug"] };
    let expected = if language.sdk == PYTHON.sdk { json!(3) } else { json!("one-two-three") };
    assert_eq!(answer, &expected, "{result}");
    if language.sdk == PYTHON.sdk {
        // `top_words` runs `Counter.most_common`, which imports `heapq` during the call.
        let arguments = json!({"text": "b a b", "top_words": 1});
        let output = call(language, language.example, arguments, LimitOverrides::new()).await;
        assert_eq!(value(&output)["most_common"], json!(["b"]), "{output:?}");
    }
    let output = call(language, "calculator", json!({"expression": "6 * 7"}), LimitOverrides::new()).await;
    assert_eq!(value(&output)["value"], 42.0, "{output:?}");
    let output = misbehave(language, "ok").await;
    assert!(!output.is_error, "{output:?}");
}

async fn a_schema_violation_is_refused_before_the_guest_runs(language: Language) {
    let output = call(language, "misbehave", json!({"mode": "nope"}), LimitOverrides::new()).await;
    assert_eq!(kind(&output), "invalid_arguments", "{output:?}");
    assert!(output.content.contains("/mode"), "{}", output.content);
    assert_eq!(output.usage.fuel_consumed, 0, "the guest never ran");
}

async fn a_rejected_argument_is_the_models_to_fix(language: Language) {
    let output = misbehave(language, "reject").await;
    assert_eq!(kind(&output), "rejected_arguments", "{output:?}");
}

async fn an_exception_fails_the_call_and_keeps_its_text_from_the_model(language: Language) {
    let output = misbehave(language, "boom").await;
    assert_eq!(kind(&output), "tool_failed", "{output:?}");
    let model_facing = serde_json::to_string(&(&output.content, &output.error)).unwrap();
    assert!(!model_facing.contains(language.secret), "{model_facing}");
    assert!(output.diagnostics.stderr.contains(language.secret), "the operator sees it: {output:?}");
}

async fn an_endless_loop_is_stopped(language: Language) {
    let output = misbehave(language, "spin").await;
    assert!(["timeout", "fuel_exhausted"].contains(&kind(&output)), "{output:?}");
}

async fn a_memory_bomb_hits_the_memory_limit(language: Language) {
    let output = misbehave(language, "bomb").await;
    assert_eq!(kind(&output), "memory_limit", "{output:?}");
    // The host and the tool are unharmed: the next call answers.
    let output = misbehave(language, "ok").await;
    assert!(!output.is_error, "{output:?}");
}

macro_rules! language_tests {
    ($module:ident, $language:expr) => {
        mod $module {
            use super::*;

            #[tokio::test]
            async fn answers_correctly_next_to_the_rust_tools() {
                super::answers_correctly_next_to_the_rust_tools($language).await;
            }

            #[tokio::test]
            async fn a_schema_violation_is_refused_before_the_guest_runs() {
                super::a_schema_violation_is_refused_before_the_guest_runs($language).await;
            }

            #[tokio::test]
            async fn a_rejected_argument_is_the_models_to_fix() {
                super::a_rejected_argument_is_the_models_to_fix($language).await;
            }

            #[tokio::test]
            async fn an_exception_fails_the_call_and_keeps_its_text_from_the_model() {
                super::an_exception_fails_the_call_and_keeps_its_text_from_the_model($language).await;
            }

            #[tokio::test]
            async fn an_endless_loop_is_stopped() {
                super::an_endless_loop_is_stopped($language).await;
            }

            #[tokio::test]
            async fn a_memory_bomb_hits_the_memory_limit() {
                super::a_memory_bomb_hits_the_memory_limit($language).await;
            }
        }
    };
}

language_tests!(python, PYTHON);
language_tests!(javascript, JAVASCRIPT);
