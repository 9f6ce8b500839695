//! A tool's hints, requests and grants in words, for `list`, `check` and `schema`.

use toolcell_runtime::policy::{Grants, RequestedCapabilities};
use toolcell_runtime::tool::ToolAnnotations;

/// `read-only, idempotent, closed world`: the hints a tool declares (or the host derived),
/// in MCP's order.
pub(crate) fn describe_annotations(annotations: &ToolAnnotations) -> String {
    let words = [
        annotations.read_only.map(|yes| if yes { "read-only" } else { "modifies its environment" }),
        annotations.destructive.map(|yes| if yes { "destructive" } else { "not destructive" }),
        annotations.idempotent.map(|yes| if yes { "idempotent" } else { "not idempotent" }),
        annotations.open_world.map(|yes| if yes { "open world" } else { "closed world" }),
    ];
    let words: Vec<&str> = words.into_iter().flatten().collect();
    if words.is_empty() { "none declared".to_owned() } else { words.join(", ") }
}

/// `http example.com`, `dir /workspace (read-only)`, `env API_KEY`.
pub(crate) fn describe_requested(requested: &RequestedCapabilities) -> Vec<String> {
    let hosts = requested.http_hosts.iter().map(|host| format!("http {host}"));
    let dirs = requested
        .directories
        .iter()
        .map(|dir| format!("dir {} ({})", dir.guest_path, if dir.writable { "read-write" } else { "read-only" }));
    let env = requested.env.iter().map(|name| format!("env {name}"));
    hosts.chain(dirs).chain(env).collect()
}

/// `http example.com`, `dir /workspace = /home/me/project (read-only)`, `env API_KEY`.
pub(crate) fn describe_granted(grants: &Grants) -> Vec<String> {
    let rules = grants.http.iter().map(|rule| {
        let mut words = format!("http {}", rule_words(rule));
        let secrets: Vec<&str> = rule.secrets().collect();
        if !secrets.is_empty() {
            words.push_str(&format!(" (the host sends {})", secrets.join(", ")));
        }
        words
    });
    let hosts = rules.chain(grants.allow_hosts.iter().map(|host| format!("http {host}")));
    let dirs = grants.dirs.iter().map(|dir| {
        let mode = if dir.writable { "read-write" } else { "read-only" };
        format!("dir {} = {} ({mode})", dir.guest, dir.host.display())
    });
    let env = grants.env.iter().map(|grant| format!("env {}", grant.name));
    let calls = grants.call_tools.iter().map(|tool| format!("calls {tool}"));
    hosts.chain(dirs).chain(env).chain(calls).collect()
}

/// `GET, POST api.github.com /repos/*/issues`.
fn rule_words(rule: &toolcell_runtime::policy::HttpRule) -> String {
    let mut words = String::new();
    if !rule.methods.is_empty() {
        words.push_str(&rule.methods.join(", "));
        words.push(' ');
    }
    words.push_str(rule.host.as_str());
    for port in &rule.ports {
        words.push_str(&format!(" :{port}"));
    }
    for path in &rule.paths {
        words.push_str(&format!(" {path}"));
    }
    words
}
