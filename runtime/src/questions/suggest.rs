//! Rules that would have allowed refused requests, proposed from a denials file for an
//! operator to review (never applied): one `[[tools.<tool>.http]]` rule per tool, host and
//! set of methods, each path as refused, except that three or more paths differing in one
//! segment only (an id, a name) become one pattern with `*` there.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::policy::{HostPattern, PathPattern};
use crate::tool::definition::is_tool_name;

/// One refused request, as `invoke --denials` and `serve --denials` write them (a JSON object
/// per line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Denial {
    /// The tool whose request it was.
    pub tool: String,
    /// `GET https://example.com/path`, secrets redacted, cut to 200 bytes.
    pub request: String,
    /// Why it was refused.
    pub reason: String,
    /// The narrowest rule that would allow it (an inline table), when one would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// When, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<u64>,
}

impl Denial {
    /// A refusal of `tool`'s `request`.
    pub fn new(tool: impl Into<String>, request: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { tool: tool.into(), request: request.into(), reason: reason.into(), rule: None, at: None }
    }

    /// With the rule that would allow it.
    #[must_use]
    pub fn rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = Some(rule.into());
        self
    }
}

/// A rule to add, and how many refused requests it would have allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Suggestion {
    /// The tool to add it to.
    pub tool: String,
    /// The rule's host.
    pub host: String,
    /// Its methods.
    pub methods: Vec<String>,
    /// Its path patterns.
    pub paths: Vec<String>,
    /// How many refused requests it covers.
    pub denials: usize,
}

/// What a denials file suggests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Suggestions {
    /// Rules to review and add.
    pub rules: Vec<Suggestion>,
    /// Refusals no rule can allow (a path with `..`, a malformed URL, too many requests in
    /// flight).
    pub unallowable: Vec<Denial>,
}

/// The methods asked for on one path (or pattern), and how many refusals asked.
type Asked = (BTreeSet<String>, usize);

/// How many paths differing in one segment only become a pattern.
const PATHS_TO_GENERALIZE: usize = 3;

/// The rules that would have allowed `denials`.
pub fn suggest(denials: &[Denial]) -> Suggestions {
    let mut unallowable = Vec::new();
    // (tool, host) → path → methods, and the count of each.
    let mut wanted: BTreeMap<(String, String), BTreeMap<String, Asked>> = BTreeMap::new();
    for denial in denials {
        // A denials file is read as untrusted: a tool name, host, method or path that is not one
        // (a forged or damaged line) proposes nothing.
        let parsed = denial.rule.as_deref().and_then(parse_rule).filter(|(host, methods, paths)| {
            is_tool_name(&denial.tool)
                && host.parse::<HostPattern>().is_ok()
                && methods.iter().all(|method| http::Method::from_bytes(method.as_bytes()).is_ok())
                && paths.iter().all(|path| path.parse::<PathPattern>().is_ok())
        });
        let Some((host, methods, paths)) = parsed else {
            unallowable.push(denial.clone());
            continue;
        };
        let by_path = wanted.entry((denial.tool.clone(), host)).or_default();
        for path in paths {
            let entry = by_path.entry(path).or_default();
            entry.0.extend(methods.iter().cloned());
            entry.1 += 1;
        }
    }
    let mut rules = Vec::new();
    for ((tool, host), by_path) in wanted {
        // Patterns, each with the methods and count of the paths it took in.
        let mut patterns: BTreeMap<Vec<String>, Asked> =
            by_path.into_iter().map(|(path, wanted)| (segments(&path), wanted)).collect();
        generalize(&mut patterns);
        let mut by_methods: BTreeMap<BTreeSet<String>, (Vec<String>, usize)> = BTreeMap::new();
        for (segments, (methods, count)) in patterns {
            let entry = by_methods.entry(methods).or_default();
            entry.0.push(format!("/{}", segments.join("/")));
            entry.1 += count;
        }
        for (methods, (paths, count)) in by_methods {
            rules.push(Suggestion {
                tool: tool.clone(),
                host: host.clone(),
                methods: methods.into_iter().collect(),
                paths,
                denials: count,
            });
        }
    }
    Suggestions { rules, unallowable }
}

/// `{ host = "…", methods = […], paths = […] }`, as a denial's `rule` holds it.
fn parse_rule(text: &str) -> Option<(String, Vec<String>, Vec<String>)> {
    let table: toml::Table = toml::from_str(&format!("rule = {text}")).ok()?;
    let rule = table.get("rule")?.as_table()?;
    let strings = |key: &str| -> Option<Vec<String>> {
        rule.get(key)?.as_array()?.iter().map(|value| value.as_str().map(str::to_owned)).collect()
    };
    Some((rule.get("host")?.as_str()?.to_owned(), strings("methods")?, strings("paths")?))
}

fn segments(path: &str) -> Vec<String> {
    path.split('/').filter(|segment| !segment.is_empty()).map(str::to_owned).collect()
}

/// Merges patterns that differ in one segment only, when there are enough of them, into one
/// with `*` there; until no more merge.
fn generalize(patterns: &mut BTreeMap<Vec<String>, Asked>) {
    loop {
        let mut merged = false;
        let lengths: BTreeSet<usize> = patterns.keys().map(Vec::len).collect();
        'positions: for length in lengths {
            for position in 0..length {
                let mut groups: BTreeMap<Vec<String>, Vec<Vec<String>>> = BTreeMap::new();
                for pattern in patterns.keys().filter(|pattern| pattern.len() == length) {
                    let mut key = pattern.clone();
                    key[position] = "*".to_owned();
                    groups.entry(key).or_default().push(pattern.clone());
                }
                let Some((key, members)) = groups.into_iter().find(|(_, members)| members.len() >= PATHS_TO_GENERALIZE)
                else {
                    continue;
                };
                let mut combined: Asked = patterns.remove(&key).unwrap_or_default();
                for member in members {
                    if let Some((methods, count)) = patterns.remove(&member) {
                        combined.0.extend(methods);
                        combined.1 += count;
                    }
                }
                patterns.insert(key, combined);
                merged = true;
                break 'positions;
            }
        }
        if !merged {
            return;
        }
    }
}

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |items: &[String]| items.iter().map(|item| format!("{item:?}")).collect::<Vec<_>>().join(", ");
        let requests = if self.denials == 1 { "request".to_owned() } else { "requests".to_owned() };
        writeln!(f, "# would have allowed {} refused {requests}", self.denials)?;
        writeln!(f, "[[tools.{}.http]]", self.tool)?;
        writeln!(f, "host = {:?}", self.host)?;
        writeln!(f, "methods = [{}]", list(&self.methods))?;
        writeln!(f, "paths = [{}]", list(&self.paths))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denial(tool: &str, method: &str, host: &str, path: &str) -> Denial {
        let rule = format!(r#"{{ host = "{host}", methods = ["{method}"], paths = ["{path}"] }}"#);
        Denial::new(tool, format!("{method} https://{host}{path}"), "not allowed").rule(rule)
    }

    #[test]
    fn denials_become_the_narrowest_rules_with_ids_generalized() {
        let mut denials = vec![
            denial("gh", "DELETE", "api.github.com", "/repos/o/r/issues/1"),
            denial("gh", "DELETE", "api.github.com", "/repos/o/r/issues/2"),
            denial("gh", "DELETE", "api.github.com", "/repos/o/r/issues/3"),
            denial("gh", "GET", "api.github.com", "/user"),
            denial("gh", "POST", "api.github.com", "/user"),
            denial("fetch", "GET", "example.com", "/a"),
            denial("fetch", "GET", "example.com", "/b"),
        ];
        denials.push(Denial::new("fetch", "GET https://example.com/../x", "`..` is refused"));
        let suggested = suggest(&denials);
        let rules: Vec<String> = suggested.rules.iter().map(ToString::to_string).collect();
        assert_eq!(
            rules,
            [
                "# would have allowed 2 refused requests\n[[tools.fetch.http]]\nhost = \"example.com\"\nmethods = [\"GET\"]\npaths = [\"/a\", \"/b\"]\n",
                "# would have allowed 3 refused requests\n[[tools.gh.http]]\nhost = \"api.github.com\"\nmethods = [\"DELETE\"]\npaths = [\"/repos/o/r/issues/*\"]\n",
                "# would have allowed 2 refused requests\n[[tools.gh.http]]\nhost = \"api.github.com\"\nmethods = [\"GET\", \"POST\"]\npaths = [\"/user\"]\n",
            ]
        );
        assert_eq!(suggested.unallowable.len(), 1);
        // What it proposes parses as a policy.
        let policy = rules.concat();
        assert!(crate::Policy::parse(&policy, std::path::Path::new(".")).is_ok(), "{policy}");
    }

    #[test]
    fn a_forged_line_proposes_nothing() {
        let forged = [
            denial("http_fetch\"]\n[tools.evil.http]]", "GET", "example.com", "/x"),
            denial("gh", "GET", "exa mple.com\u{1b}[2J", "/x"),
            denial("gh", "G ET", "example.com", "/x"),
            denial("gh", "GET", "example.com", "x/../y"),
        ];
        let suggested = suggest(&forged);
        assert!(suggested.rules.is_empty(), "{:?}", suggested.rules);
        assert_eq!(suggested.unallowable.len(), 4);
    }

    #[test]
    fn a_denials_line_round_trips_as_json() {
        let line = serde_json::to_string(&denial("gh", "GET", "api.github.com", "/x")).expect("json");
        let back: Denial = serde_json::from_str(&line).expect("parse");
        assert_eq!(back.tool, "gh");
        assert!(suggest(&[Denial { rule: Some("{ not toml".into()), ..back }]).rules.is_empty());
    }
}
