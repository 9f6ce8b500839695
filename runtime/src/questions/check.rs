//! Assertions about a policy ([`Assertion`]) proved over every tool and every chain of calls,
//! or broken by grants this names.
//!
//! Reach counts calls: a tool that may call another (directly or through others) writes,
//! reads and sends what that one may. A tool that holds a secret in its environment may pass
//! it to any tool it calls, and may hand it back, encoded past redaction, to any tool that
//! calls it; a secret the host sends for a tool goes only where its rules say.

use serde::Serialize;

use super::reach::{Calls, Scope, chain};
use crate::policy::{Assertion, Claim, EnvValue, Grants, HttpRule, PathPattern, Policy};

/// Whether an assertion holds, and if not, the grants that break it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CheckOutcome {
    /// The assertion, as written.
    pub assertion: String,
    /// Whether it holds for every tool and every chain of calls.
    pub holds: bool,
    /// Each grant (and chain of calls) that breaks it, in words.
    pub broken_by: Vec<String>,
}

impl Policy {
    /// Checks each assertion over every tool in `scope` and every chain of calls.
    pub fn check(&self, assertions: &[Assertion], scope: &Scope) -> Vec<CheckOutcome> {
        let calls = Calls::new(self, scope);
        assertions
            .iter()
            .map(|assertion| {
                let broken_by = broken_by(&calls, assertion.claim());
                CheckOutcome { assertion: assertion.to_string(), holds: broken_by.is_empty(), broken_by }
            })
            .collect()
    }
}

/// Each tool with its grants, and the chain that reaches it from `tool` (empty: the tool
/// itself).
fn acting_for<'a>(calls: &'a Calls<'_>, tool: &'a str) -> impl Iterator<Item = (String, Grants, String)> + 'a {
    let own = std::iter::once((tool.to_owned(), calls.grants(tool), String::new()));
    let reached = calls.reached(tool).into_iter().map(move |reached| {
        let grants = calls.grants(&reached.tool);
        (reached.tool, grants, format!(" through {}", chain(&reached.via)))
    });
    own.chain(reached)
}

fn broken_by(calls: &Calls<'_>, claim: &Claim) -> Vec<String> {
    let mut broken = Vec::new();
    for tool in calls.tools() {
        match claim {
            Claim::Write(glob) | Claim::Read(glob) => {
                let writes = matches!(claim, Claim::Write(_));
                let globs = spellings_on_disk(glob);
                for (owner, grants, through) in acting_for(calls, tool) {
                    for (i, dir) in grants.dirs.iter().enumerate() {
                        if (dir.writable || !writes) && globs.iter().any(|glob| glob.overlaps_tree(&dir.host)) {
                            let mode = if dir.writable { "read-write" } else { "read-only" };
                            broken.push(format!(
                                "{tool}{through}: `{owner}` is granted {} at {} ({mode}) [tools.{owner}] dirs[{i}]",
                                dir.host.display(),
                                dir.guest
                            ));
                        }
                    }
                }
            }
            Claim::Reach(glob) => {
                for (owner, grants, through) in acting_for(calls, tool) {
                    for (grant, rule) in rules(&grants) {
                        if glob.overlaps(&rule.host) {
                            broken.push(format!(
                                "{tool}{through}: `{owner}` may send {} [tools.{owner}] {grant}",
                                rule.in_words()
                            ));
                        }
                    }
                }
            }
            Claim::Secret { name, reach, except } => {
                let outside =
                    |rule: &HttpRule| reach.overlaps(&rule.host) && !except.iter().any(|e| e.covers(&rule.host));
                let grants = calls.grants(tool);
                if let Some(how) = obtains(calls, tool, name) {
                    for (owner, theirs, through) in acting_for(calls, tool) {
                        for (grant, rule) in rules(&theirs).into_iter().filter(|(_, rule)| outside(rule)) {
                            broken.push(format!(
                                "{tool} {how}{through}: `{owner}` may send {} [tools.{owner}] {grant}",
                                rule.in_words()
                            ));
                        }
                    }
                }
                for secret in grants.secrets.iter().filter(|secret| names_secret(&secret.name, &secret.value, name)) {
                    for (i, rule) in grants.http.iter().enumerate() {
                        if rule.secrets().any(|sent| sent == secret.name) && outside(rule) {
                            broken.push(format!(
                                "{tool}: the host sends {name} (secrets.{}) to {} [tools.{tool}] http[{i}]",
                                secret.name,
                                rule.in_words()
                            ));
                        }
                    }
                }
            }
            Claim::Call { caller, callee } if caller == tool => {
                if let Some(reached) = calls.reached(tool).into_iter().find(|reached| &reached.tool == callee) {
                    broken.push(chain(&reached.via));
                }
            }
            Claim::Call { .. } => {}
        }
    }
    broken
}

/// `glob` as written, and with the part of it before its first wildcard resolved through
/// symlinks where that exists: grants are compared by their real paths, so `/tmp/link/**`
/// must also be `/private/tmp/...` when `/tmp` is a link.
fn spellings_on_disk(glob: &PathPattern) -> Vec<PathPattern> {
    let mut spellings = vec![glob.clone()];
    let segments: Vec<&str> = glob.as_str().split('/').filter(|segment| !segment.is_empty()).collect();
    let literal = segments.iter().take_while(|segment| !segment.contains('*')).count();
    for cut in (1..=literal).rev() {
        let prefix: std::path::PathBuf = std::iter::once("/").chain(segments[..cut].iter().copied()).collect();
        let Ok(real) = std::fs::canonicalize(&prefix) else { continue };
        let rest = segments[cut..].join("/");
        let text = if rest.is_empty() { real.display().to_string() } else { format!("{}/{rest}", real.display()) };
        if let Ok(resolved) = text.parse::<PathPattern>()
            && resolved != *glob
        {
            spellings.push(resolved);
        }
        break;
    }
    spellings
}

/// How `tool` can come to hold the `env` secret `name`: it is granted it, or it calls
/// (directly or through others) a tool that is, which can hand it back encoded past
/// redaction. `None`: it cannot.
fn obtains(calls: &Calls<'_>, tool: &str, name: &str) -> Option<String> {
    let holds = |tool: &str| {
        calls.grants(tool).env.into_iter().find(|env| names_secret(&env.name, &env.value, name)).map(|env| env.name)
    };
    if let Some(env) = holds(tool) {
        return Some(format!("holds {name} (env {env})"));
    }
    calls.reached(tool).into_iter().find_map(|reached| {
        let env = holds(&reached.tool)?;
        Some(format!("can get {name} back from `{}` (env {env}, through {})", reached.tool, chain(&reached.via)))
    })
}

/// A tool's rules with where each is granted: `http` rules, then `allow_hosts` entries.
fn rules(grants: &Grants) -> Vec<(String, HttpRule)> {
    let own = grants.http.iter().enumerate().map(|(i, rule)| (format!("http[{i}]"), rule.clone()));
    let hosts = grants
        .allow_hosts
        .iter()
        .enumerate()
        .map(|(i, host)| (format!("allow_hosts[{i}]"), HttpRule::new(host.clone())));
    own.chain(hosts).collect()
}

/// Whether a grant named `granted` with `value` is the secret `name`: by its name, or by the
/// host variable it comes from.
fn names_secret(granted: &str, value: &EnvValue, name: &str) -> bool {
    value.is_secret() && (granted == name || matches!(value, EnvValue::FromHost(from) if from == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(policy: &str, assertion: &str) -> CheckOutcome {
        let policy = Policy::parse(policy, std::path::Path::new("/")).expect("policy");
        let assertion: Assertion = assertion.parse().expect("assertion");
        policy.check(&[assertion], &Scope::new(["calculator"])).remove(0)
    }

    const POLICY: &str = r#"
        [tools.files]
        dirs = [{ host = "/tmp", guest = "/workspace", mode = "rw" }]
        [tools.python]
        call_tools = ["http_fetch"]
        env = { API_TOKEN = { secret = "python-secret-1234" } }
        [tools.http_fetch]
        allow_hosts = ["*.example.com"]
        [tools.gh]
        [tools.gh.secrets]
        GITHUB_TOKEN = { secret = "gh-secret-12345678" }
        [[tools.gh.http]]
        host = "api.github.com"
        headers = { Authorization = "Bearer {secret:GITHUB_TOKEN}" }
    "#;

    #[test]
    fn assertions_hold_or_name_the_grants_that_break_them() {
        let write = check(POLICY, r#"deny write "/tmp/**""#);
        assert!(!write.holds);
        assert_eq!(
            write.broken_by,
            ["files: `files` is granted /tmp at /workspace (read-write) [tools.files] dirs[0]"]
        );
        assert!(check(POLICY, r#"deny write "/home/**""#).holds);
        assert!(check(POLICY, r#"deny reach "*.internal""#).holds);
        let reach = check(POLICY, r#"deny reach "api.example.com""#);
        assert_eq!(
            reach.broken_by,
            [
                "http_fetch: `http_fetch` may send *.example.com [tools.http_fetch] allow_hosts[0]",
                "python through python → http_fetch: `http_fetch` may send *.example.com [tools.http_fetch] allow_hosts[0]",
            ]
        );
        let leak = check(POLICY, r#"deny secret "API_TOKEN" with reach "*""#);
        assert_eq!(
            leak.broken_by,
            [
                "python holds API_TOKEN (env API_TOKEN) through python → http_fetch: `http_fetch` may send *.example.com \
              [tools.http_fetch] allow_hosts[0]"
            ]
        );
        assert!(check(POLICY, r#"deny secret "GITHUB_TOKEN" with reach "*" except "api.github.com""#).holds);
        let sent = check(POLICY, r#"deny secret "GITHUB_TOKEN" with reach "*.github.com""#);
        assert_eq!(
            sent.broken_by,
            ["gh: the host sends GITHUB_TOKEN (secrets.GITHUB_TOKEN) to api.github.com [tools.gh] http[0]"]
        );
        assert_eq!(check(POLICY, r#"deny call "python" -> "http_fetch""#).broken_by, ["python → http_fetch"]);
        assert!(check(POLICY, r#"deny call "python" -> "files""#).holds);
    }

    #[test]
    fn a_secret_flows_back_up_to_the_callers_of_its_holder() {
        let policy = r#"
            [tools.weather]
            env = { API_KEY = { secret = "weather-secret-1234" } }
            allow_hosts = ["api.weather.example"]
            [tools.python]
            call_tools = ["weather", "http_fetch"]
            [tools.http_fetch]
            allow_hosts = ["evil.example"]
        "#;
        let outcome = check(policy, r#"deny secret "API_KEY" with reach "*" except "api.weather.example""#);
        assert_eq!(
            outcome.broken_by,
            ["python can get API_KEY back from `weather` (env API_KEY, through python → weather) through python → \
              http_fetch: `http_fetch` may send evil.example [tools.http_fetch] allow_hosts[0]"]
        );
    }

    #[test]
    fn a_path_through_a_symlink_is_compared_by_where_it_leads() {
        let root = std::env::temp_dir().join(format!("toolcell-check-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home/alice")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("home"), root.join("alias")).expect("symlink");
        let policy = format!(
            "[tools.files]\ndirs = [{{ host = \"{}\", guest = \"/w\", mode = \"rw\" }}]\n",
            root.join("home/alice").display()
        );
        let outcome = check(&policy, &format!("deny write \"{}/alias/**\"", root.display()));
        assert!(!outcome.holds, "{outcome:?}");
        let outcome = check(&policy, &format!("deny read \"{}/alias/alice\"", root.display()));
        assert!(!outcome.holds, "{outcome:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn code_mode_lets_the_program_tool_act_through_every_tool() {
        let policy = Policy::parse(&format!("{POLICY}\n[code_mode]\n"), std::path::Path::new("/")).expect("policy");
        let assertion: Assertion = r#"deny call "python" -> "files""#.parse().expect("assertion");
        let outcome = policy.check(&[assertion], &Scope::new(["calculator"])).remove(0);
        assert_eq!(outcome.broken_by, ["python → files"]);
    }
}
