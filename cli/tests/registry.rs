//! `toolcell keygen`, `push` and `pull` against a real OCI registry (Debian's
//! `docker-registry` on 127.0.0.1), end to end through the binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use toolcell_tests::registry::LocalRegistry;

fn toolcell(cache: &Path) -> Command {
    let mut command = Command::cargo_bin("toolcell").unwrap();
    command.env_remove("TOOLCELL_TOOLS_DIR").env_remove("TOOLCELL_POLICY");
    command.env("TOOLCELL_CACHE_DIR", cache);
    command
}

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-registry-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `toolcell push ECHO REFERENCE --sign release.key` in `dir`, which must succeed.
fn push_signed(cache: &Path, dir: &Path, reference: &str) -> String {
    let pushed = toolcell(cache)
        .current_dir(dir)
        .args(["push", toolcell_tests::ECHO, reference, "--sign", "release.key"])
        .output()
        .unwrap();
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    text(&pushed.stdout)
}

#[test]
fn a_signed_tool_is_pushed_pulled_pinned_and_pulled_again_with_the_registry_gone() {
    let mut registry = LocalRegistry::start("cli-signed");
    let dir = folder("signed");
    let cache = dir.join("cache");
    let reference = format!("oci://{}/tools/echo:1.0", registry.host());

    let made = toolcell(&cache).current_dir(&dir).args(["keygen", "release"]).output().unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("release.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the private key is its owner's only: {mode:o}");
    }
    let again = toolcell(&cache).current_dir(&dir).args(["keygen", "release"]).output().unwrap();
    assert!(!again.status.success() && text(&again.stderr).contains("--force"), "{}", text(&again.stderr));

    let out = push_signed(&cache, &dir, &reference);
    assert!(out.contains("pushed echo") && out.contains("@sha256:") && out.contains("signed with the key"), "{out}");

    // No key and not --unsigned: refused before anything is fetched, with what to do.
    let bare = toolcell(&cache).current_dir(&dir).args(["pull", &reference]).output().unwrap();
    assert_eq!(bare.status.code(), Some(2), "a usage error");
    assert!(text(&bare.stderr).contains("--key FILE.pub") && text(&bare.stderr).contains("--unsigned"));

    let pull = || {
        toolcell(&cache)
            .current_dir(&dir)
            .args(["pull", &reference, "--key", "release.pub", "--json", "-o", "echo.wasm"])
            .output()
            .unwrap()
    };
    let first = pull();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let report: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(report["verified"]["signer"], "release", "{report}");
    assert_eq!(report["from_store"], false);
    assert_eq!(std::fs::read(dir.join("echo.wasm")).unwrap(), std::fs::read(toolcell_tests::ECHO).unwrap());
    let lock = std::fs::read_to_string(dir.join("toolcell.lock")).unwrap();
    let digest = report["digest"].as_str().unwrap();
    assert!(lock.contains(&reference) && lock.contains(digest), "{lock}");

    // The pulled file loads and runs as any other.
    let call = toolcell(&cache)
        .current_dir(&dir)
        .args(["invoke", "./echo.wasm", r#"{"text": "from the registry", "count": 1}"#])
        .output()
        .unwrap();
    assert!(call.status.success() && text(&call.stdout).contains("from the registry"), "{}", text(&call.stderr));

    registry.stop();
    let offline = pull();
    assert!(offline.status.success(), "pinned and stored: no registry needed: {}", text(&offline.stderr));
    let report: Value = serde_json::from_slice(&offline.stdout).unwrap();
    assert_eq!(report["from_store"], true);
    assert_eq!(report["digest"], digest);
}

#[test]
fn a_pull_with_another_key_is_refused_naming_the_reference_the_digest_and_the_key_expected() {
    let registry = LocalRegistry::start("cli-wrong-key");
    let dir = folder("wrong-key");
    let cache = dir.join("cache");
    let reference = format!("oci://{}/tools/echo:1.0", registry.host());
    for prefix in ["release", "stranger"] {
        assert!(toolcell(&cache).current_dir(&dir).args(["keygen", prefix]).output().unwrap().status.success());
    }
    push_signed(&cache, &dir, &reference);
    let refused =
        toolcell(&cache).current_dir(&dir).args(["pull", &reference, "--key", "stranger.pub"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err = text(&refused.stderr);
    assert!(err.contains(&reference) && err.contains("@sha256:"), "{err}");
    assert!(err.contains("must be signed by `stranger`") && err.contains("not trusted"), "{err}");
    assert!(!dir.join("toolcell.lock").exists(), "nothing refused is pinned");

    let unsigned = toolcell(&cache).current_dir(&dir).args(["pull", &reference, "--unsigned"]).output().unwrap();
    assert!(unsigned.status.success(), "explicitly unsigned: {}", text(&unsigned.stderr));
}

#[test]
fn a_moved_tag_does_not_move_its_pin_until_asked_and_keygen_never_writes_through_a_symlink() {
    let registry = LocalRegistry::start("cli-moved");
    let dir = folder("moved");
    let cache = dir.join("cache");
    let reference = format!("oci://{}/tools/echo:1.0", registry.host());
    assert!(toolcell(&cache).current_dir(&dir).args(["keygen", "release"]).output().unwrap().status.success());
    push_signed(&cache, &dir, &reference);
    let pull = |extra: &[&str]| {
        let mut args = vec!["pull", reference.as_str(), "--key", "release.pub", "--json"];
        args.extend_from_slice(extra);
        let out = toolcell(&cache).current_dir(&dir).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["digest"].as_str().unwrap().to_owned()
    };
    let first = pull(&[]);

    // The tag moves to another component (the guest that greets), signed by the same key.
    let greet = dir.join("greet.wasm");
    std::fs::copy(toolcell_tests::GREET, &greet).unwrap();
    let moved = toolcell(&cache)
        .current_dir(&dir)
        .args(["push", greet.to_str().unwrap(), &reference, "--sign", "release.key"])
        .output()
        .unwrap();
    assert!(moved.status.success(), "{}", text(&moved.stderr));
    assert_eq!(pull(&[]), first, "the pin holds");
    assert!(std::fs::read_to_string(dir.join("toolcell.lock")).unwrap().contains(&first));
    let updated = pull(&["--update"]);
    assert_ne!(updated, first, "--update follows the tag");
    assert!(std::fs::read_to_string(dir.join("toolcell.lock")).unwrap().contains(&updated));

    // A (dangling) symlink where a key would go: refused, and with --force replaced, never
    // written through.
    #[cfg(unix)]
    {
        let victim = dir.join("victim.txt");
        std::os::unix::fs::symlink(&victim, dir.join("k.pub")).unwrap();
        let refused = toolcell(&cache).current_dir(&dir).args(["keygen", "k"]).output().unwrap();
        assert!(!refused.status.success() && text(&refused.stderr).contains("exists"), "{}", text(&refused.stderr));
        let forced = toolcell(&cache).current_dir(&dir).args(["keygen", "k", "--force"]).output().unwrap();
        assert!(forced.status.success(), "{}", text(&forced.stderr));
        assert!(!victim.exists(), "nothing was written through the link");
        assert!(!std::fs::symlink_metadata(dir.join("k.pub")).unwrap().file_type().is_symlink());
    }
}

#[test]
fn an_oci_tool_is_invoked_and_served_straight_from_the_registry_only_when_signed_as_required() {
    let registry = LocalRegistry::start("cli-oci-tool");
    let dir = folder("oci-tool");
    let cache = dir.join("cache");
    let reference = format!("oci://{}/tools/echo:1.0", registry.host());
    for key in ["release", "other"] {
        assert!(toolcell(&cache).current_dir(&dir).args(["keygen", key]).output().unwrap().status.success());
    }
    push_signed(&cache, &dir, &reference);
    let invoke = |trust: &[&str]| {
        toolcell(&cache)
            .current_dir(&dir)
            .args(["invoke", &reference, r#"{"text": "straight from the registry", "count": 1}"#])
            .args(trust)
            .output()
            .unwrap()
    };

    let called = invoke(&["--key", "release.pub"]);
    assert!(called.status.success(), "{}", text(&called.stderr));
    assert!(text(&called.stdout).contains("straight from the registry"), "{}", text(&called.stdout));
    assert!(text(&called.stderr).contains("signed by `release`"), "{}", text(&called.stderr));
    assert!(std::fs::read_to_string(dir.join("toolcell.lock")).unwrap().contains(&reference), "pinned as pull pins");

    // An empty identity or issuer (an unset variable in a script) is a usage error, not a wildcard.
    let empty = invoke(&["--identity", "", "--issuer", "https://issuer.example", "--trusted-root", "root.json"]);
    assert_eq!(empty.status.code(), Some(2), "{}", text(&empty.stderr));
    assert!(text(&empty.stderr).contains("--identity"), "{}", text(&empty.stderr));

    let unsaid = invoke(&[]);
    assert!(!unsaid.status.success() && text(&unsaid.stderr).contains("--key FILE.pub"), "{}", text(&unsaid.stderr));
    let other = invoke(&["--key", "other.pub"]);
    assert!(!other.status.success(), "another key");
    assert!(text(&other.stderr).contains("must be signed by `other`"), "{}", text(&other.stderr));

    // `serve --tool`: listed beside the built-in tools, over stdio.
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ];
    let served = toolcell(&cache)
        .current_dir(&dir)
        .args(["serve", "--tool", &reference, "--key", "release.pub"])
        .write_stdin(requests.join("\n") + "\n")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let listed = text(&served.stdout);
    assert!(listed.contains(r#""id":2"#) && listed.contains(r#""name":"echo""#), "{listed}\n{}", text(&served.stderr));
    assert!(listed.contains(r#""name":"calculator""#), "beside the built-in tools: {listed}");
}
