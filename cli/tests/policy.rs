//! `toolcell policy explain|check|suggest`, `--denials`, and what a denial tells the operator,
//! end to end through the binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

const TOKEN: &str = "ghp-policy-test-7c41d9e2";

fn toolcell() -> Command {
    let mut command = Command::cargo_bin("toolcell").unwrap();
    command.env_remove("TOOLCELL_TOOLS_DIR").env_remove("TOOLCELL_POLICY");
    command.env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
    command.env("TEST_GITHUB_TOKEN", TOKEN);
    command
}

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-policy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    dir
}

/// A policy in `dir`: http_fetch may GET /api/** on 127.0.0.1:9 with a token the host sends,
/// files writes `workspace`, python calls http_fetch.
fn policy(dir: &Path) -> PathBuf {
    let file = dir.join("policy.toml");
    std::fs::write(
        &file,
        r#"
        assertions = ['deny secret "GITHUB_TOKEN" with reach "*" except "127.0.0.1:9"']
        [tools.http_fetch.secrets]
        GITHUB_TOKEN = { from_host = "TEST_GITHUB_TOKEN" }
        [[tools.http_fetch.http]]
        host = "http://127.0.0.1:9"
        methods = ["GET"]
        paths = ["/api/**"]
        headers = { Authorization = "Bearer {secret:GITHUB_TOKEN}" }
        [tools.files]
        dirs = [{ host = "workspace", guest = "/workspace", mode = "rw" }]
        [tools.python]
        call_tools = ["http_fetch"]
        env = { API_TOKEN = { from_host = "TEST_GITHUB_TOKEN" } }
        "#,
    )
    .unwrap();
    file
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn explain_shows_each_tools_rules_secrets_masked_and_what_it_reaches_through_calls() {
    let dir = folder("explain");
    let output = toolcell().arg("--policy").arg(policy(&dir)).args(["policy", "explain", "python"]).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed = text(&output.stdout);
    assert!(printed.starts_with("python\n"), "{printed}");
    assert!(printed.contains("API_TOKEN = [REDACTED] (secret, from the host's $TEST_GITHUB_TOKEN)"), "{printed}");
    assert!(
        printed.contains("python → http_fetch: GET http://127.0.0.1:9 under /api/** [http[0]], the host sets Authorization: Bearer {secret:GITHUB_TOKEN}"),
        "{printed}"
    );
    assert!(!printed.contains(TOKEN), "{printed}");

    let output = toolcell().arg("--policy").arg(policy(&dir)).args(["policy", "explain", "--json"]).output().unwrap();
    let explained: Value = serde_json::from_slice(&output.stdout).unwrap();
    let files = explained.as_array().unwrap().iter().find(|tool| tool["tool"] == "files").unwrap();
    let workspace = std::fs::canonicalize(dir.join("workspace")).unwrap();
    assert_eq!(files["dirs"][0]["host"], workspace.display().to_string(), "the resolved path");
    assert_eq!(files["dirs"][0]["writable"], true);
    let fetch = explained.as_array().unwrap().iter().find(|tool| tool["tool"] == "http_fetch").unwrap();
    assert_eq!(fetch["secrets"][0]["sent_to"][0], "GET http://127.0.0.1:9 under /api/**");
    assert!(!text(&output.stdout).contains(TOKEN));

    let output = toolcell().args(["policy", "explain", "pyton"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("did you mean `python`?"), "{}", text(&output.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_proves_assertions_or_names_the_grant_path_that_breaks_them() {
    let dir = folder("check");
    let assertions = dir.join("assertions.txt");
    let workspace = std::fs::canonicalize(dir.join("workspace")).unwrap();
    std::fs::write(
        &assertions,
        format!(
            "# the operator's promises\ndeny reach \"*.internal\"\n\ndeny write \"{}/**\"\ndeny secret \"API_TOKEN\" with reach \"*\"\n",
            workspace.display()
        ),
    )
    .unwrap();
    let output = toolcell()
        .arg("--policy")
        .arg(policy(&dir))
        .args(["policy", "check", "--assertions"])
        .arg(&assertions)
        .output()
        .unwrap();
    let printed = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{printed}");
    assert!(
        printed.contains("holds   deny secret \"GITHUB_TOKEN\" with reach \"*\" except \"127.0.0.1:9\""),
        "{printed}"
    );
    assert!(printed.contains("holds   deny reach \"*.internal\""), "{printed}");
    assert!(printed.contains(&format!("BROKEN  deny write \"{}/**\"", workspace.display())), "{printed}");
    assert!(printed.contains("by files: `files` is granted"), "{printed}");
    // The environment secret of python can go wherever the tools it calls go.
    assert!(printed.contains("by python holds API_TOKEN (env API_TOKEN) through python → http_fetch"), "{printed}");
    assert!(printed.ends_with("4 assertions over 8 tools: 2 hold, 2 broken\n"), "{printed}");

    let output = toolcell().args(["policy", "check"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "nothing to check");
    assert!(text(&output.stderr).contains("--assertions FILE"), "{}", text(&output.stderr));
    std::fs::write(&assertions, "deny wrte \"/x\"\n").unwrap();
    let output = toolcell().args(["policy", "check", "--assertions"]).arg(&assertions).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("assertions.txt:1: `deny wrte \"/x\"` is not an assertion"),
        "{}",
        text(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_standard_tools_policy_keeps_its_promises_with_and_without_code_mode() {
    let assertions = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/assertions.txt");
    for code_mode in [false, true] {
        let mut command = toolcell();
        command.args(["policy", "check", "--assertions", assertions]);
        if code_mode {
            command.arg("--code-mode");
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}{}", text(&output.stdout), text(&output.stderr));
    }
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/policy/toolcell.toml");
    let output = toolcell().env("GITHUB_TOKEN", TOKEN).args(["--policy", example, "policy", "check"]).output().unwrap();
    assert!(output.status.success(), "{}{}", text(&output.stdout), text(&output.stderr));
    // Code mode lets python reach files: the example's promise does not hold under it.
    let output = toolcell()
        .env("GITHUB_TOKEN", TOKEN)
        .args(["--policy", example, "policy", "check", "--code-mode"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stdout).contains("by python → files"), "{}", text(&output.stdout));
}

#[test]
fn denials_recorded_by_invoke_become_suggested_rules_and_hints() {
    let dir = folder("suggest");
    let denials = dir.join("denials.jsonl");
    for id in ["1", "2", "3"] {
        let url = format!(r#"{{"url": "http://127.0.0.1:9/repos/octo/issues/{id}?key={{secret:GITHUB_TOKEN}}"}}"#);
        let output = toolcell()
            .arg("--policy")
            .arg(policy(&dir))
            .args(["invoke", "http_fetch", &url, "--denials"])
            .arg(&denials)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = text(&output.stderr);
        let rule = format!(r#"{{ host = "127.0.0.1:9", methods = ["GET"], paths = ["/repos/octo/issues/{id}"] }}"#);
        assert!(
            stderr.contains(&format!(
                "hint: to allow only requests like this one, add the rule {rule} to `[[tools.http_fetch.http]]`"
            )),
            "{stderr}"
        );
    }
    // A refusal no rule can allow.
    toolcell()
        .arg("--policy")
        .arg(policy(&dir))
        .args(["invoke", "http_fetch", r#"{"url": "http://127.0.0.1:9/api/%252e%252e/admin"}"#, "--denials"])
        .arg(&denials)
        .assert()
        .code(1);
    let recorded = std::fs::read_to_string(&denials).unwrap();
    assert_eq!(recorded.lines().count(), 4, "{recorded}");
    assert!(!recorded.contains(TOKEN), "{recorded}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&denials).unwrap().permissions().mode() & 0o077, 0);
    }

    let output = toolcell().args(["policy", "suggest"]).arg(&denials).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed = text(&output.stdout);
    let rule = "# would have allowed 3 refused requests\n[[tools.http_fetch.http]]\nhost = \"127.0.0.1:9\"\nmethods = [\"GET\"]\npaths = [\"/repos/octo/issues/*\"]\n";
    assert!(printed.contains(rule), "{printed}");
    assert!(printed.contains("# 1 refused requests no rule can allow"), "{printed}");
    // What it proposes is policy an operator can paste.
    let proposed = dir.join("proposed.toml");
    std::fs::write(&proposed, &printed).unwrap();
    toolcell().arg("--policy").arg(&proposed).args(["policy", "explain", "http_fetch"]).assert().success();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_denials_file_inside_a_granted_directory_is_refused() {
    let dir = folder("denials-grant");
    let output = toolcell()
        .arg("--policy")
        .arg(policy(&dir))
        .args(["invoke", "files", r#"{"operation": "list", "path": "/workspace"}"#, "--denials"])
        .arg(dir.join("workspace/denials.jsonl"))
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(said.contains("the denials file") && said.contains("could write refusals that never happened"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}
