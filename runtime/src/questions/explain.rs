//! What each tool can do under a policy: its directories, HTTP rules, environment, the
//! secrets the host sends for it and where, its limits, and what it reaches through the
//! tools it may call.

use serde::Serialize;

use super::reach::{Calls, Scope, chain};
use crate::policy::{DirGrant, EnvValue, Grants, HttpRule, Policy, REDACTED};
use crate::tool::limits::{LimitOverrides, Limits};

/// What one tool can do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolExplanation {
    /// The tool.
    pub tool: String,
    /// Host directories it may open, with their resolved paths and modes.
    pub dirs: Vec<DirGrant>,
    /// The HTTP requests it may send, one entry per rule (`http` rules first, in order, then
    /// `allow_hosts`).
    pub http: Vec<HttpReach>,
    /// Its environment variables; secret values are masked.
    pub env: Vec<EnvShown>,
    /// Secrets the host sends for it, and where to; the tool never holds them.
    pub secrets: Vec<SecretShown>,
    /// Its limits: the runtime's defaults with the policy's over them.
    pub limits: Limits,
    /// Tools it may call directly.
    pub calls: Vec<String>,
    /// Every tool it reaches through calls, with what that tool can do.
    pub through: Vec<ReachedTool>,
}

/// One rule a tool's requests may go out under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HttpReach {
    /// Where it comes from: `http[0]`, or `allow_hosts`.
    pub grant: String,
    /// The rule in words: `GET, POST api.github.com under /repos/*/issues`.
    pub rule: String,
    /// The host pattern.
    pub host: String,
    /// Methods (empty: any).
    pub methods: Vec<String>,
    /// Path patterns (empty: any path).
    pub paths: Vec<String>,
    /// Ports (empty: the host's, or the scheme's default).
    pub ports: Vec<u16>,
    /// Headers the host sets on these requests, as written (placeholders, never values).
    pub headers: Vec<(String, String)>,
    /// Secrets these requests carry.
    pub secrets: Vec<String>,
}

/// An environment variable, its value shown only when it is not a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EnvShown {
    /// The variable.
    pub name: String,
    /// The value, or [`REDACTED`] for a secret.
    pub value: String,
    /// Whether it is a secret.
    pub secret: bool,
    /// The host variable it comes from, if it does.
    pub from_host: Option<String>,
}

/// A secret the host sends for a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SecretShown {
    /// Its name in placeholders.
    pub name: String,
    /// The host variable it comes from, if it does (else it is written in the policy).
    pub from_host: Option<String>,
    /// The rules whose requests carry it, in words.
    pub sent_to: Vec<String>,
}

/// A tool reached through calls, and what it can do there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReachedTool {
    /// The tool.
    pub tool: String,
    /// The chain of calls: the explained tool first, this one last.
    pub via: Vec<String>,
    /// Its directories.
    pub dirs: Vec<DirGrant>,
    /// Its HTTP rules.
    pub http: Vec<HttpReach>,
}

impl Policy {
    /// What each tool in `scope` can do, by name; `limits` are the runtime's defaults.
    pub fn explain(&self, scope: &Scope, limits: &Limits) -> Vec<ToolExplanation> {
        let calls = Calls::new(self, scope);
        calls.tools().map(|tool| explain_tool(&calls, tool, limits)).collect()
    }
}

fn explain_tool(calls: &Calls<'_>, tool: &str, limits: &Limits) -> ToolExplanation {
    let grants = calls.grants(tool);
    let through = calls
        .reached(tool)
        .into_iter()
        .map(|reached| {
            let theirs = calls.grants(&reached.tool);
            ReachedTool { tool: reached.tool, via: reached.via, dirs: theirs.dirs.clone(), http: http_reach(&theirs) }
        })
        .collect();
    ToolExplanation {
        tool: tool.to_owned(),
        dirs: grants.dirs.clone(),
        http: http_reach(&grants),
        env: grants.env.iter().map(|grant| env_shown(&grant.name, &grant.value)).collect(),
        secrets: grants
            .secrets
            .iter()
            .map(|secret| SecretShown {
                name: secret.name.clone(),
                from_host: from_host(&secret.value),
                sent_to: grants
                    .http
                    .iter()
                    .filter(|rule| rule.secrets().any(|name| name == secret.name))
                    .map(HttpRule::in_words)
                    .collect(),
            })
            .collect(),
        limits: limits.with(&grants.limits),
        calls: calls.callees(tool),
        through,
    }
}

fn http_reach(grants: &Grants) -> Vec<HttpReach> {
    let rules = grants.http.iter().enumerate().map(|(i, rule)| (format!("http[{i}]"), rule.clone()));
    let hosts = grants.allow_hosts.iter().map(|host| ("allow_hosts".to_owned(), HttpRule::new(host.clone())));
    rules
        .chain(hosts)
        .map(|(grant, rule)| HttpReach {
            grant,
            rule: rule.in_words(),
            host: rule.host.to_string(),
            methods: rule.methods.clone(),
            paths: rule.paths.iter().map(ToString::to_string).collect(),
            ports: rule.ports.clone(),
            headers: rule.headers.iter().map(|(name, value)| (name.clone(), value.as_str().to_owned())).collect(),
            secrets: rule.secrets().map(str::to_owned).collect(),
        })
        .collect()
}

fn env_shown(name: &str, value: &EnvValue) -> EnvShown {
    let shown = match value {
        EnvValue::Fixed(value) => value.clone(),
        EnvValue::Secret(_) | EnvValue::FromHost(_) => REDACTED.to_owned(),
    };
    EnvShown { name: name.to_owned(), value: shown, secret: value.is_secret(), from_host: from_host(value) }
}

fn from_host(value: &EnvValue) -> Option<String> {
    match value {
        EnvValue::FromHost(from) => Some(from.clone()),
        EnvValue::Fixed(_) | EnvValue::Secret(_) => None,
    }
}

impl ToolExplanation {
    /// The explanation as lines of text for a person.
    pub fn to_text(&self) -> String {
        // A policy may name a tool anything: no control character of its name reaches a terminal.
        let name: String = self.tool.chars().flat_map(char::escape_default).collect();
        let name = if name == self.tool { name } else { format!("\"{name}\" (a name no tool can have)") };
        let mut text = format!("{name}\n");
        let mut line = |label: &str, items: Vec<String>| {
            if items.is_empty() {
                text.push_str(&format!("  {label}: none\n"));
            } else {
                text.push_str(&format!("  {label}:\n    - {}\n", items.join("\n    - ")));
            }
        };
        line("directories", self.dirs.iter().map(dir_words).collect());
        line("http", self.http.iter().map(http_words).collect());
        line(
            "env",
            self.env
                .iter()
                .map(|env| match (&env.from_host, env.secret) {
                    (Some(from), _) => format!("{} = {} (secret, from the host's ${from})", env.name, env.value),
                    (None, true) => format!("{} = {} (secret, written in the policy)", env.name, env.value),
                    (None, false) => format!("{} = {:?}", env.name, env.value),
                })
                .collect(),
        );
        line(
            "secrets the host sends (the tool never holds them)",
            self.secrets
                .iter()
                .map(|secret| {
                    let from = secret
                        .from_host
                        .as_ref()
                        .map_or("written in the policy".to_owned(), |from| format!("from the host's ${from}"));
                    format!("{} ({from}) → {}", secret.name, secret.sent_to.join("; "))
                })
                .collect(),
        );
        line("limits", vec![limits_words(&self.limits)]);
        line("calls", self.calls.clone());
        let mut through = Vec::new();
        for reached in &self.through {
            let what: Vec<String> =
                reached.dirs.iter().map(dir_words).chain(reached.http.iter().map(http_words)).collect();
            let what = if what.is_empty() { "nothing beyond computing".to_owned() } else { what.join("; ") };
            through.push(format!("{}: {what}", chain(&reached.via)));
        }
        line("through the tools it calls", through);
        text
    }
}

fn dir_words(dir: &DirGrant) -> String {
    let mode = if dir.writable { "read-write" } else { "read-only" };
    format!("{} at {} ({mode})", dir.host.display(), dir.guest)
}

fn http_words(reach: &HttpReach) -> String {
    let mut words = format!("{} [{}]", reach.rule, reach.grant);
    if !reach.headers.is_empty() {
        let headers: Vec<String> = reach.headers.iter().map(|(name, value)| format!("{name}: {value}")).collect();
        words.push_str(&format!(", the host sets {}", headers.join(", ")));
    }
    words
}

/// `fuel 10000000000, timeout_ms 5000, …`, in the order the policy's keys are documented.
fn limits_words(limits: &Limits) -> String {
    let values = serde_json::to_value(limits).unwrap_or_default();
    LimitOverrides::KEYS
        .iter()
        .filter_map(|key| values.get(*key).map(|value| format!("{key} {value}")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_explained_with_what_it_reaches_through_its_callees() {
        let text = r#"
            [tools.python]
            call_tools = ["http_fetch"]
            env = { API_TOKEN = { secret = "python-secret-1234" }, UNITS = "metric" }
            [tools.http_fetch]
            allow_hosts = ["example.com"]
            limits = { timeout_ms = 2000 }
            [tools.http_fetch.secrets]
            TOKEN = { secret = "fetch-secret-5678" }
            [[tools.http_fetch.http]]
            host = "api.github.com"
            methods = ["GET"]
            headers = { Authorization = "Bearer {secret:TOKEN}" }
        "#;
        let policy = Policy::parse(text, std::path::Path::new(".")).expect("policy");
        let explained = policy.explain(&Scope::new(["calculator"]), &Limits::default());
        let names: Vec<&str> = explained.iter().map(|tool| tool.tool.as_str()).collect();
        assert_eq!(names, ["calculator", "http_fetch", "python"]);
        let fetch = &explained[1];
        assert_eq!(fetch.http.len(), 2);
        assert_eq!(fetch.http[0].rule, "GET api.github.com");
        assert_eq!(fetch.secrets[0].sent_to, ["GET api.github.com"]);
        assert_eq!(fetch.limits.timeout.as_millis(), 2000);
        let python = &explained[2];
        assert_eq!(python.through[0].via, ["python", "http_fetch"]);
        assert_eq!(python.through[0].http.len(), 2);
        let text = python.to_text();
        assert!(text.contains("API_TOKEN = [REDACTED] (secret, written in the policy)"), "{text}");
        assert!(text.contains("UNITS = \"metric\""), "{text}");
        assert!(
            text.contains(
                "python → http_fetch: GET api.github.com [http[0]], the host sets Authorization: Bearer {secret:TOKEN}"
            ),
            "{text}"
        );
        assert!(text.contains("limits:\n    - fuel "), "{text}");
        let all = format!("{explained:?}{}", serde_json::to_string(&explained).expect("json"));
        assert!(!all.contains("python-secret-1234") && !all.contains("fetch-secret-5678"), "{all}");
        assert!(explained[0].to_text().contains("  directories: none\n"));
    }
}
