//! `toolcell client-config`: the entry an MCP host's config file needs to start (or reach)
//! this server, with absolute paths, since a desktop app does not run with a shell's PATH.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};

use crate::args::{McpHost, Transport};
use crate::print::print_json;

/// The global flags the server is to be started with, as given to this command.
pub(crate) struct ServerFlags<'a> {
    pub(crate) tools_dir: Option<&'a Path>,
    pub(crate) no_builtins: bool,
    pub(crate) policy: Option<&'a Path>,
    pub(crate) cache_dir: Option<&'a Path>,
    pub(crate) no_cache: bool,
}

/// The name of the server in the host's list.
const SERVER_NAME: &str = "toolcell";

pub(crate) fn client_config(
    server: &ServerFlags<'_>,
    host: McpHost,
    transport: Transport,
    url: &str,
) -> anyhow::Result<ExitCode> {
    let entry = match transport {
        Transport::Stdio => stdio_entry(host, server)?,
        Transport::Http => http_entry(host, url)?,
    };
    let (servers_key, file) = match host {
        McpHost::ClaudeDesktop => (
            "mcpServers",
            "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\)",
        ),
        McpHost::Vscode => ("servers", ".vscode/mcp.json in the workspace (or the `mcp` key of the user settings)"),
        McpHost::Cursor => ("mcpServers", "~/.cursor/mcp.json (or .cursor/mcp.json in a project)"),
    };
    let mut config = json!({ servers_key: { SERVER_NAME: entry } });
    if host == McpHost::Vscode && transport == Transport::Http {
        config["inputs"] = json!([{
            "type": "promptString",
            "id": "toolcell-token",
            "description": "toolcell's bearer token (TOOLCELL_TOKEN of the server)",
            "password": true,
        }]);
    }
    print_json(&config)?;
    eprintln!("Merge it into {file}, then restart the host.");
    if transport == Transport::Stdio {
        eprintln!(
            "The server's log (TOOLCELL_LOG=info) goes to the host's MCP log. Compile the tools once before the \
             first start, or the first calls wait while they compile: {}",
            warm_command(server)?
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The host starts `toolcell serve` itself.
fn stdio_entry(host: McpHost, server: &ServerFlags<'_>) -> anyhow::Result<Value> {
    let mut entry = Map::new();
    if host == McpHost::Vscode {
        entry.insert("type".into(), json!("stdio"));
    }
    entry.insert("command".into(), json!(toolcell_path()?));
    let mut args = global_args(server)?;
    args.push("serve".into());
    entry.insert("args".into(), json!(args));
    entry.insert("env".into(), json!({ "TOOLCELL_LOG": "info" }));
    Ok(Value::Object(entry))
}

/// The host connects to a running server. The token is never written out: VS Code prompts
/// for it, Cursor reads it from the environment.
fn http_entry(host: McpHost, url: &str) -> anyhow::Result<Value> {
    if !url.starts_with("https://") && !is_loopback_http(url) {
        bail!(
            "{url} is plain HTTP off this machine: the bearer token would cross the network in clear; serve it behind TLS (https://) or use a loopback URL"
        );
    }
    match host {
        McpHost::ClaudeDesktop => bail!(
            "Claude Desktop's config file starts local servers only: use --transport stdio, or add {url} as a \
             custom connector in Claude's settings"
        ),
        McpHost::Vscode => Ok(json!({
            "type": "http",
            "url": url,
            "headers": { "Authorization": "Bearer ${input:toolcell-token}" },
        })),
        McpHost::Cursor => Ok(json!({
            "url": url,
            "headers": { "Authorization": "Bearer ${env:TOOLCELL_TOKEN}" },
        })),
    }
}

/// Whether `url` is plain HTTP to this machine: its host exactly `127.0.0.1`, `localhost` or
/// `[::1]` (`http://localhost.example.com` is not).
fn is_loopback_http(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((inner, port)) if port.is_empty() || port.starts_with(':') => format!("[{inner}]"),
            _ => return false,
        },
        None => authority.split(':').next().unwrap_or_default().to_owned(),
    };
    ["127.0.0.1", "localhost", "[::1]"].contains(&host.to_ascii_lowercase().as_str())
}

/// This binary, absolute.
fn toolcell_path() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot tell where this toolcell binary is")?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe).display().to_string())
}

/// The global flags, with absolute paths.
fn global_args(server: &ServerFlags<'_>) -> anyhow::Result<Vec<String>> {
    let mut args = Vec::new();
    if let Some(dir) = server.tools_dir {
        args.extend(["--tools-dir".to_owned(), absolute(dir)?]);
    }
    if server.no_builtins {
        args.push("--no-builtins".into());
    }
    if let Some(policy) = server.policy {
        args.extend(["--policy".to_owned(), absolute(policy)?]);
    }
    if server.no_cache {
        args.push("--no-cache".into());
    } else if let Some(cache) = server.cache_dir {
        args.extend(["--cache-dir".to_owned(), absolute(cache)?]);
    }
    Ok(args)
}

fn absolute(path: &Path) -> anyhow::Result<String> {
    let path: PathBuf = std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    Ok(path.display().to_string())
}

/// `toolcell [the same flags] warm`, to run before the first start.
fn warm_command(server: &ServerFlags<'_>) -> anyhow::Result<String> {
    let mut words = vec![toolcell_author::shell_quote(&toolcell_path()?)];
    words.extend(global_args(server)?.iter().map(|arg| toolcell_author::shell_quote(arg)));
    words.push("warm".into());
    Ok(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::is_loopback_http;

    #[test]
    fn only_a_loopback_host_is_plain_http_to_this_machine() {
        for local in
            ["http://127.0.0.1:8000/mcp", "http://localhost/mcp", "http://[::1]:9000/mcp", "http://LOCALHOST:1"]
        {
            assert!(is_loopback_http(local), "{local}");
        }
        for remote in [
            "http://localhost.example.com/mcp",
            "http://127.0.0.1.example.com:8000/mcp",
            "http://[::1].example.com/mcp",
            "http://localhost@example.com/mcp",
            "http://example.com/mcp",
            "https://localhost/mcp",
        ] {
            assert!(!is_loopback_http(remote), "{remote}");
        }
    }
}
