//! The policy is part of the boundary: no grant exposes what the host loads (tools folders,
//! components, policy files, the compile cache and its key), a grant never follows a
//! symlink (at load or at a reload), overlapping grants are refused whichever tools are
//! loaded together, and the host's own credentials are never granted.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolcell_runtime::{
    Policy, Runtime, RuntimeError, ToolCall, ToolOutput,
    policy::{DirGrant, EnvGrant, Grants},
};

use crate::common::{COMPILE_CACHE, kind, value};

/// What the file outside every grant holds.
const SECRET: &str = "TOP SECRET: the private key";

/// A folder tree of its own per test, removed at the end: `tools/` (a tools folder),
/// `proj/inner/file.txt`, and `secret/id_key` outside every grant.
struct Tree(PathBuf);

impl Tree {
    fn new(name: &str) -> Self {
        let root = std::env::temp_dir().join(format!("toolcell-boundary-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["tools", "proj/inner", "secret"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("proj/inner/file.txt"), "inner file").unwrap();
        std::fs::write(root.join("secret/id_key"), SECRET).unwrap();
        Self(root)
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.0.join(relative)
    }

    /// Puts guests in the tools folder, with `policy` as its `toolcell.toml`.
    fn tools(&self, guests: &[(&str, &str)], policy: &str) -> PathBuf {
        let tools = self.path("tools");
        for (file, guest) in guests {
            std::fs::copy(guest, tools.join(file)).unwrap();
        }
        std::fs::write(tools.join("toolcell.toml"), policy).unwrap();
        tools
    }

    /// Replaces `proj/inner` with a symlink to `../secret`, as whoever can write `proj` can.
    fn swap_inner_for_a_symlink(&self) {
        std::fs::rename(self.path("proj/inner"), self.path("proj/inner.old")).unwrap();
        std::os::unix::fs::symlink("../secret", self.path("proj/inner")).unwrap();
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn folder_runtime(tools: &Path) -> Runtime {
    Runtime::builder().tools_dir(tools).compile_cache(COMPILE_CACHE).build().await.unwrap()
}

/// The one diagnostic about `tool`.
fn refusal(runtime: &Runtime, tool: &str) -> String {
    let reasons: Vec<&str> = runtime
        .diagnostics()
        .iter()
        .map(|diagnostic| diagnostic.reason.as_str())
        .filter(|reason| reason.contains(&format!("tool `{tool}` was not loaded")))
        .collect();
    assert_eq!(reasons.len(), 1, "{:#?}", runtime.diagnostics());
    reasons[0].to_owned()
}

/// An edit of a tools folder's policy that grants nothing new.
fn touch_policy(tools: &Path) {
    let file = tools.join("toolcell.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}# edited\n")).unwrap();
}

async fn read(runtime: &Runtime, path: &str) -> ToolOutput {
    runtime.call(ToolCall::new("1", "fs_escape", json!({ "path": path }))).await
}

#[tokio::test]
async fn a_tool_granted_its_own_tools_folder_read_write_is_refused_and_cannot_rewrite_its_grants() {
    let tree = Tree::new("own-folder");
    let policy = r#"
        [tools.fs_write]
        dirs = [{ host = ".", guest = "/tools", mode = "rw" }]
    "#;
    let tools = tree.tools(&[("fs_write.wasm", toolcell_tests::FS_WRITE)], policy);
    let runtime = folder_runtime(&tools).await;
    let reason = refusal(&runtime, "fs_write");
    assert!(reason.contains("contains the tools folder") && reason.contains("/tools (read-write)"), "{reason}");

    // The attack itself: a new policy granting the tool the secret folder. It never runs.
    let grab = format!("[tools.fs_write]\ndirs = [{{ host = {:?}, guest = \"/tools\" }}]\n", tree.path("secret"));
    let output =
        runtime.call(ToolCall::new("1", "fs_write", json!({ "path": "/tools/toolcell.toml", "text": grab }))).await;
    assert_eq!(kind(&output), "unknown_tool", "{output:#?}");
    assert_eq!(std::fs::read_to_string(tools.join("toolcell.toml")).unwrap(), policy);
}

#[tokio::test]
async fn a_read_only_grant_of_the_tools_folder_cannot_read_another_tools_inline_secret() {
    let tree = Tree::new("read-policy");
    let policy = r#"
        [tools.fs_escape]
        dirs = [{ host = ".", guest = "/data" }]
        [tools.env_reader.env]
        API_TOKEN = { secret = "inline-secret-4f1c2b9a" }
    "#;
    let guests = [("fs_escape.wasm", toolcell_tests::FS_ESCAPE), ("env_reader.wasm", toolcell_tests::ENV_READER)];
    let runtime = folder_runtime(&tree.tools(&guests, policy)).await;
    let reason = refusal(&runtime, "fs_escape");
    assert!(reason.contains("the tools folder") && reason.contains("(read-only)"), "{reason}");
    let output = read(&runtime, "/data/toolcell.toml").await;
    assert!(!output.content.contains("inline-secret"), "{}", output.content);
    assert!(runtime.definition("env_reader").is_some(), "the other tool loads");
}

#[tokio::test]
async fn grants_inside_a_tools_folder_or_around_a_policy_file_or_component_are_refused() {
    let tree = Tree::new("protected");
    std::fs::create_dir_all(tree.path("tools/data")).unwrap();
    let inside = "[tools.fs_escape]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n";
    let runtime = folder_runtime(&tree.tools(&[("fs_escape.wasm", toolcell_tests::FS_ESCAPE)], inside)).await;
    assert!(refusal(&runtime, "fs_escape").contains("is inside the tools folder"));

    // A policy file given apart from any tools folder (`--policy`, `TOOLCELL_POLICY`).
    let operator = tree.path("proj/operator.toml");
    std::fs::write(&operator, "[tools.fs_escape]\ndirs = [{ host = \".\", guest = \"/data\" }]\n").unwrap();
    let policy = Policy::from_file(&operator).unwrap();
    assert_eq!(policy.files(), [std::fs::canonicalize(&operator).unwrap()]);
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::FS_ESCAPE)
        .policy(policy)
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    assert!(refusal(&runtime, "fs_escape").contains("contains the policy file"));

    // A component loaded from a file.
    std::fs::copy(toolcell_tests::FS_ESCAPE, tree.path("proj/fs_escape.wasm")).unwrap();
    let runtime = Runtime::builder()
        .component_file(tree.path("proj/fs_escape.wasm"))
        .grant("fs_escape", Grants::new().dir(DirGrant::read_only(tree.path("proj"), "/data")))
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    assert!(refusal(&runtime, "fs_escape").contains("contains the component"));
}

#[tokio::test]
async fn a_grant_through_a_symlink_is_refused_at_load_naming_it() {
    let tree = Tree::new("symlink-load");
    tree.swap_inner_for_a_symlink();
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::FS_ESCAPE)
        .grant("fs_escape", Grants::new().dir(DirGrant::read_only(tree.path("proj/inner"), "/data")))
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    let reason = refusal(&runtime, "fs_escape");
    assert!(reason.contains("symlink") && reason.contains(&tree.path("proj/inner").display().to_string()), "{reason}");
    assert!(!read(&runtime, "/data/id_key").await.content.contains("TOP SECRET"));

    // In a policy file the same grant is a problem of the file.
    let policy = format!("[tools.fs_escape]\ndirs = [{{ host = {:?}, guest = \"/data\" }}]\n", tree.path("proj/inner"));
    let tools = tree.tools(&[("fs_escape.wasm", toolcell_tests::FS_ESCAPE)], &policy);
    let err = Runtime::builder().tools_dir(&tools).build().await.expect_err("a policy through a symlink");
    assert!(matches!(&err, RuntimeError::Policy(_)) && err.to_string().contains("symlink"), "{err}");
}

#[tokio::test]
async fn a_reload_never_follows_a_symlink_planted_in_a_granted_path() {
    let tree = Tree::new("symlink-reload");
    let policy = format!("[tools.fs_escape]\ndirs = [{{ host = {:?}, guest = \"/data\" }}]\n", tree.path("proj/inner"));
    let tools = tree.tools(&[("fs_escape.wasm", toolcell_tests::FS_ESCAPE)], &policy);
    let first = folder_runtime(&tools).await;
    assert_eq!(value(&read(&first, "/data/file.txt").await), json!("inner file"));

    tree.swap_inner_for_a_symlink();
    let err = first.reload().await.expect_err("the grant now goes through a symlink");
    assert!(err.to_string().contains("symlink"), "{err}");
    assert!(!read(&first, "/data/id_key").await.content.contains("TOP SECRET"));
    assert_eq!(value(&read(&first, "/data/file.txt").await), json!("inner file"), "the grant keeps its directory");
}

#[tokio::test]
async fn a_reload_refuses_an_unchanged_grant_that_now_leads_to_another_directory() {
    let tree = Tree::new("replaced");
    let policy = format!("[tools.fs_escape]\ndirs = [{{ host = {:?}, guest = \"/data\" }}]\n", tree.path("proj/inner"));
    let tools = tree.tools(&[("fs_escape.wasm", toolcell_tests::FS_ESCAPE)], &policy);
    let first = folder_runtime(&tools).await;
    let (same, _) = first.reload().await.expect("nothing moved");
    assert_eq!(value(&read(&same, "/data/file.txt").await), json!("inner file"));

    std::fs::rename(tree.path("proj/inner"), tree.path("proj/inner.old")).unwrap();
    std::fs::create_dir(tree.path("proj/inner")).unwrap();
    std::fs::write(tree.path("proj/inner/file.txt"), "planted").unwrap();
    let (unchanged, _) = same.reload().await.expect("nothing the reload reads changed");
    assert!(unchanged.same_version(&same), "so nothing was resolved again: the grant keeps its handle");
    assert_eq!(value(&read(&unchanged, "/data/file.txt").await), json!("inner file"));
    // An edit of the policy makes the reload resolve the grants again.
    touch_policy(&tools);
    let err = same.reload().await.expect_err("the grant leads elsewhere");
    assert!(matches!(&err, RuntimeError::GrantReplaced { tool, .. } if tool == "fs_escape"), "{err}");
    assert!(err.to_string().contains("restart"), "{err}");
    assert_eq!(value(&read(&same, "/data/file.txt").await), json!("inner file"));
}

#[tokio::test]
async fn overlapping_grants_are_refused_even_when_one_tool_is_loaded_alone() {
    let tree = Tree::new("subset");
    let policy = format!(
        "[tools.fs_write]\ndirs = [{{ host = {:?}, guest = \"/data\", mode = \"rw\" }}]\n\
         [tools.fs_escape]\ndirs = [{{ host = {:?}, guest = \"/data\" }}]\n",
        tree.path("proj"),
        tree.path("proj/inner")
    );
    let guests = [("fs_write.wasm", toolcell_tests::FS_WRITE), ("fs_escape.wasm", toolcell_tests::FS_ESCAPE)];
    let tools = tree.tools(&guests, &policy);
    // As `toolcell invoke fs_escape` loads it: alone, from `fs_escape.wasm`.
    let alone =
        Runtime::builder().tools_dir(&tools).only_tool("fs_escape").compile_cache(COMPILE_CACHE).build().await.unwrap();
    assert_eq!(alone.definitions().len(), 0, "{:#?}", alone.diagnostics());
    let reason = refusal(&alone, "fs_escape");
    assert!(reason.contains("`fs_write`") && reason.contains("may write to"), "{reason}");
    let writer =
        Runtime::builder().tools_dir(&tools).only_tool("fs_write").compile_cache(COMPILE_CACHE).build().await.unwrap();
    assert!(refusal(&writer, "fs_write").contains("`fs_escape`"));
}

#[tokio::test]
async fn the_hosts_own_credentials_are_never_granted_by_name_or_by_value() {
    let server_token = "server-token-5b0e7d21c4";
    let tree = Tree::new("credentials");
    let policy = "[tools.env_reader.env]\nAPI_TOKEN = { from_host = \"TOOLCELL_TOKEN\" }\n";
    let tools = tree.tools(&[("env_reader.wasm", toolcell_tests::ENV_READER)], policy);
    let err = Runtime::builder().tools_dir(&tools).build().await.expect_err("a reserved variable");
    assert!(err.to_string().contains("TOOLCELL_TOKEN") && err.to_string().contains("no tool may be granted"), "{err}");

    // The same value under another name, inline or from the host.
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::ENV_READER)
        .grant("env_reader", Grants::new().env(EnvGrant::secret("API_TOKEN", format!("Bearer {server_token}"))))
        .host_secret(server_token)
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    let reason = refusal(&runtime, "env_reader");
    assert!(reason.contains("`API_TOKEN`") && reason.contains("credential of the host"), "{reason}");
    assert!(!reason.contains(server_token), "{reason}");
}
