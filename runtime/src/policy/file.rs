//! Reading a policy file (`toolcell.toml`): every problem is collected and reported with its
//! table and key, so an operator fixes them all at once.

use std::collections::BTreeMap;
use std::path::Path;

use super::access::{check_dir, check_grantable, check_secrets};
use super::egress::parse_rule;
use super::registry::{self, RegistryPolicy};
use super::{
    Assertion, CodeModePolicy, DirGrant, EnvGrant, EnvValue, Grants, HostPattern, HostVariables, Policy, PolicyError,
    SecretGrant, TaskMode, check_env_name,
};
use crate::tool::definition::is_tool_name;
use crate::tool::limits::LimitOverrides;

impl Policy {
    /// Reads a policy file. Relative directory paths in it are relative to the file's folder.
    ///
    /// # Errors
    /// When the file cannot be read, is not TOML, or has unknown keys, bad host patterns,
    /// bad values or malformed directory grants.
    pub fn from_file(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| PolicyError { file: path.to_owned(), problems: vec![format!("cannot be read: {err}")] })?;
        Self::parse_file(&text, path, HostVariables::Required)
    }

    /// Reads a policy file to ask it questions ([`crate::questions`]): as [`Self::from_file`],
    /// except that a `from_host` variable need not be set (the value is not read here, and
    /// a check in CI has no production secrets).
    ///
    /// # Errors
    /// As [`Self::from_file`], but for unset host variables.
    pub fn from_file_unresolved(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| PolicyError { file: path.to_owned(), problems: vec![format!("cannot be read: {err}")] })?;
        Self::parse_file(&text, path, HostVariables::NotRead)
    }

    /// Parses the text read from the policy file `path` (relative directory paths are
    /// relative to its folder), and remembers the file ([`Self::files`]).
    pub(crate) fn parse_file(text: &str, path: &Path, host: HostVariables) -> Result<Self, PolicyError> {
        let base = path.parent().unwrap_or(Path::new("."));
        let reading = Reading { base, host };
        let mut policy =
            Self::parse_with(text, &reading).map_err(|problems| PolicyError { file: path.to_owned(), problems })?;
        policy.files.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()));
        Ok(policy)
    }

    /// Parses policy text; relative directory paths are joined to `base`.
    ///
    /// # Errors
    /// Every problem found, each naming the table and key.
    pub fn parse(text: &str, base: &Path) -> Result<Self, Vec<String>> {
        Self::parse_with(text, &Reading { base, host: HostVariables::Required })
    }

    fn parse_with(text: &str, reading: &Reading<'_>) -> Result<Self, Vec<String>> {
        let document: toml::Table = toml::from_str(text).map_err(|err| vec![err.to_string().trim_end().to_owned()])?;
        let mut problems = Vec::new();
        let mut tools = BTreeMap::new();
        let mut code_mode = None;
        let mut assertions = Vec::new();
        let mut registry = RegistryPolicy::default();
        for (key, value) in document {
            if key == "signers" {
                registry.signers = registry::parse_signers(&value, reading.base, &mut problems);
                continue;
            }
            if key == "registries" {
                registry.plain_http = registry::parse_registries(&value, &mut problems);
                continue;
            }
            if key == "code_mode" {
                code_mode = Some(parse_code_mode(&value, &mut problems));
                continue;
            }
            if key == "assertions" {
                for (i, entry) in array(&value, "", "assertions", &mut problems).iter().enumerate() {
                    match entry.as_str().map(str::parse::<Assertion>) {
                        Some(Ok(assertion)) => assertions.push(assertion),
                        Some(Err(reason)) => problems.push(format!("assertions[{i}]: {reason}")),
                        None => {
                            problems.push(format!("assertions[{i}] must be a string such as 'deny write \"/home/**\"'"))
                        }
                    }
                }
                continue;
            }
            if key != "tools" {
                problems.push(format!(
                    "unknown top-level key `{key}`; grants go in `[tools.<tool name>]` tables, code mode's settings \
                     in `[code_mode]`, assertions in `assertions`, signing keys in `[signers.<name>]`, registry \
                     settings in `[registries.\"<host:port>\"]`"
                ));
                continue;
            }
            let Some(table) = value.as_table() else {
                problems.push("`tools` must be a table of `[tools.<tool name>]` tables".into());
                continue;
            };
            for (tool, value) in table {
                let at = format!("[tools.{tool}]");
                match value.as_table() {
                    Some(table) => {
                        let mut table = table.clone();
                        if let Some(source) = registry::take_tool(&mut table, reading.base, &at, &mut problems) {
                            registry.tools.insert(tool.clone(), source);
                        }
                        tools.insert(tool.clone(), parse_grants(&table, reading, &at, &mut problems));
                    }
                    None => problems.push(format!("{at} must be a table")),
                }
            }
        }
        if problems.is_empty() {
            Ok(Self { tools, code_mode, files: Vec::new(), assertions, registry })
        } else {
            Err(problems)
        }
    }
}

/// How a policy is read: where relative directories are, and whether host variables must be set.
struct Reading<'a> {
    base: &'a Path,
    host: HostVariables,
}

fn parse_grants(table: &toml::Table, reading: &Reading<'_>, at: &str, problems: &mut Vec<String>) -> Grants {
    let mut grants = Grants::default();
    for (key, value) in table {
        match key.as_str() {
            "allow_hosts" => {
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    match entry.as_str().map(str::parse::<HostPattern>) {
                        Some(Ok(pattern)) => grants.allow_hosts.push(pattern),
                        Some(Err(reason)) => problems.push(format!("{at} allow_hosts[{i}]: {reason}")),
                        None => {
                            problems.push(format!("{at} allow_hosts[{i}] must be a string such as \"example.com\""))
                        }
                    }
                }
            }
            "http" => {
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    let at = format!("{at} http[{i}]");
                    match entry.as_table() {
                        Some(table) => grants.http.extend(parse_rule(table, &at, problems)),
                        None => problems.push(format!(
                            "{at} must be a table such as {{ host = \"api.github.com\", methods = [\"GET\"] }}"
                        )),
                    }
                }
            }
            "secrets" => match value.as_table() {
                Some(secrets) => {
                    for (name, value) in secrets {
                        let at = format!("{at} secrets.{name}");
                        if let Some(secret) = parse_secret(name, value, &at, reading.host, problems) {
                            grants.secrets.push(secret);
                        }
                    }
                }
                None => problems.push(format!(
                    "{at} secrets must be a table of NAME = {{ from_host = \"HOST_NAME\" }} or NAME = {{ secret = \"value\" }}"
                )),
            },
            "dirs" => {
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    if let Some(dir) = parse_dir(entry, reading.base, &format!("{at} dirs[{i}]"), problems) {
                        grants.dirs.push(dir);
                    }
                }
            }
            "env" => match value.as_table() {
                Some(env) => {
                    for (name, value) in env {
                        if let Some(grant) = parse_env(name, value, &format!("{at} env.{name}"), reading.host, problems) {
                            grants.env.push(grant);
                        }
                    }
                }
                None => problems.push(format!(
                    "{at} env must be a table of NAME = \"value\", NAME = {{ secret = \"value\" }} or \
                     NAME = {{ from_host = \"HOST_NAME\" }}"
                )),
            },
            "call_tools" => {
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    match entry.as_str() {
                        Some(tool) if is_tool_name(tool) => grants.call_tools.push(tool.to_owned()),
                        _ => problems.push(format!(
                            "{at} call_tools[{i}] must be the name of a tool, such as \"calculator\" (1-64 of \
                             a-z, A-Z, 0-9, _ and -)"
                        )),
                    }
                }
            }
            "approve" => match value.as_bool() {
                Some(approve) => grants.approve = Some(approve),
                None => problems.push(format!("{at} approve must be true or false")),
            },
            "task" => match value.as_str().map(str::parse::<TaskMode>) {
                Some(Ok(task)) => grants.task = Some(task),
                Some(Err(reason)) => problems.push(format!("{at} task: {reason}")),
                None => problems.push(format!(
                    "{at} task must be \"never\", \"optional\" (the default), \"always\" or \"required\""
                )),
            },
            "limits" => match value.as_table() {
                Some(limits) => grants.limits = parse_limits(limits, &format!("{at} limits"), problems),
                None => problems.push(format!("{at} limits must be a table such as {{ timeout_ms = 10000 }}")),
            },
            _ => problems.push(format!(
                "{at} has an unknown key `{key}`; expected allow_hosts, http, secrets, dirs, env, call_tools, approve, task or \
                 limits"
            )),
        }
    }
    check_secrets(&grants, at, problems);
    let mut guest_paths = std::collections::BTreeSet::new();
    for dir in &grants.dirs {
        if !guest_paths.insert(dir.guest.as_str()) {
            problems.push(format!("{at} dirs: two directories are granted at guest path `{}`", dir.guest));
        }
    }
    grants
}

fn parse_code_mode(value: &toml::Value, problems: &mut Vec<String>) -> CodeModePolicy {
    let mut settings = CodeModePolicy::default();
    let Some(table) = value.as_table() else {
        problems.push("`code_mode` must be a table: `[code_mode]` with `program` and `tools`".into());
        return settings;
    };
    let at = "[code_mode]";
    for (key, value) in table {
        match key.as_str() {
            "program" => match value.as_str() {
                Some(tool) if is_tool_name(tool) => settings.program = Some(tool.to_owned()),
                _ => problems.push(format!("{at} program must be the name of a tool, such as \"python\"")),
            },
            "tools" => {
                let mut tools = Vec::new();
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    match entry.as_str() {
                        Some(tool) if is_tool_name(tool) => tools.push(tool.to_owned()),
                        _ => problems.push(format!(
                            "{at} tools[{i}] must be the name of a tool, such as \"calculator\" (1-64 of a-z, A-Z, \
                             0-9, _ and -)"
                        )),
                    }
                }
                settings.tools = Some(tools);
            }
            _ => problems.push(format!("{at} has an unknown key `{key}`; expected program or tools")),
        }
    }
    settings
}

fn array<'a>(value: &'a toml::Value, at: &str, key: &str, problems: &mut Vec<String>) -> &'a [toml::Value] {
    match value.as_array() {
        Some(array) => array,
        None => {
            problems.push(format!("{at} {key} must be an array").trim_start().to_owned());
            &[]
        }
    }
}

fn parse_dir(value: &toml::Value, base: &Path, at: &str, problems: &mut Vec<String>) -> Option<DirGrant> {
    let Some(table) = value.as_table() else {
        problems.push(format!(
            "{at} must be a table such as {{ host = \"./project\", guest = \"/workspace\", mode = \"ro\" }}"
        ));
        return None;
    };
    let (mut host, mut guest, mut writable) = (None, None, false);
    for (key, value) in table {
        match (key.as_str(), value.as_str()) {
            ("host", Some(path)) => host = Some(std::path::PathBuf::from(path)),
            ("guest", Some(path)) => guest = Some(path.to_owned()),
            ("mode", Some("ro")) => writable = false,
            ("mode", Some("rw")) => writable = true,
            ("mode", _) => problems.push(format!("{at} mode must be \"ro\" (read-only) or \"rw\" (read-write)")),
            ("host" | "guest", None) => problems.push(format!("{at} {key} must be a string path")),
            _ => problems.push(format!("{at} has an unknown key `{key}`; expected host, guest and mode")),
        }
    }
    let (Some(host), Some(guest)) = (host, guest) else {
        problems
            .push(format!("{at} needs both `host` (a directory on this machine) and `guest` (e.g. \"/workspace\")"));
        return None;
    };
    match check_dir(DirGrant { host, guest, writable }, base) {
        Ok((dir, _)) => Some(dir),
        Err(reason) => {
            problems.push(format!("{at}: {reason}"));
            None
        }
    }
}

fn parse_env(
    name: &str,
    value: &toml::Value,
    at: &str,
    host: HostVariables,
    problems: &mut Vec<String>,
) -> Option<EnvGrant> {
    if let Err(reason) = check_env_name(name) {
        problems.push(format!("{at}: {reason}"));
        return None;
    }
    if let toml::Value::String(fixed) = value {
        return Some(EnvGrant::fixed(name, fixed.clone()));
    }
    let value = parse_secret_value(value, at, host, problems, "a string (a plain value), ")?;
    Some(EnvGrant { name: name.to_owned(), value })
}

/// `NAME = { secret = "…" }` or `NAME = { from_host = "…" }` of `[tools.<tool>.secrets]`.
fn parse_secret(
    name: &str,
    value: &toml::Value,
    at: &str,
    host: HostVariables,
    problems: &mut Vec<String>,
) -> Option<SecretGrant> {
    if !super::egress::is_secret_name(name) {
        problems.push(format!("{at}: a secret's name is letters, digits and `_`, not starting with a digit"));
        return None;
    }
    let value = parse_secret_value(value, at, host, problems, "")?;
    Some(SecretGrant { name: name.to_owned(), value })
}

/// A secret's source: `{ secret = "…" }` or `{ from_host = "…" }` (a variable the host has).
fn parse_secret_value(
    value: &toml::Value,
    at: &str,
    host: HostVariables,
    problems: &mut Vec<String>,
    plain: &str,
) -> Option<EnvValue> {
    let expected = || format!("{at} must be {plain}{{ secret = \"value\" }} or {{ from_host = \"HOST_NAME\" }}");
    let toml::Value::Table(table) = value else {
        problems.push(expected());
        return None;
    };
    match table.iter().next().filter(|_| table.len() == 1) {
        Some((key, toml::Value::String(secret))) if key == "secret" => Some(EnvValue::Secret(secret.clone())),
        Some((key, toml::Value::String(from))) if key == "from_host" => {
            if let Err(reason) = check_grantable(from) {
                problems.push(format!("{at}: {reason}"));
                return None;
            }
            if host == HostVariables::Required && std::env::var_os(from).is_none() {
                problems
                    .push(format!("{at}: the host environment has no variable `{from}`; set it or remove the grant"));
                return None;
            }
            Some(EnvValue::FromHost(from.clone()))
        }
        _ => {
            problems.push(expected());
            None
        }
    }
}

fn parse_limits(table: &toml::Table, at: &str, problems: &mut Vec<String>) -> LimitOverrides {
    let mut limits = LimitOverrides::default();
    for (key, value) in table {
        let Some(number) = value.as_integer().and_then(|n| u64::try_from(n).ok()).filter(|n| *n > 0) else {
            problems.push(format!("{at} {key} must be a positive integer"));
            continue;
        };
        if !limits.set_by_key(key, number) {
            problems.push(format!("{at} has an unknown key `{key}`; expected {}", keys_in_words(LimitOverrides::KEYS)));
        }
    }
    limits
}

/// `a, b or c`.
fn keys_in_words(keys: &[&str]) -> String {
    match keys.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn code_mode_is_off_without_its_table_and_checked_with_it() {
        let dir = std::env::temp_dir();
        assert_eq!(Policy::parse("", &dir).unwrap().code_mode(), None);
        let on = Policy::parse("[code_mode]\n", &dir).unwrap();
        assert_eq!(on.code_mode().map(CodeModePolicy::program_tool), Some("python"));
        let named = Policy::parse("[code_mode]\nprogram = \"py\"\ntools = [\"calculator\"]\n", &dir).unwrap();
        let settings = named.code_mode().unwrap();
        assert_eq!((settings.program_tool(), settings.tools.as_deref()), ("py", Some(&["calculator".to_owned()][..])));

        let problems = Policy::parse("[code_mode]\nprogram = 7\ntools = [\"a b\"]\nsearch = true\n", &dir).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("[code_mode] program must be the name of a tool"), "{problems:?}");
        assert!(
            problems[1].contains("[code_mode] has an unknown key `search`; expected program or tools"),
            "{problems:?}"
        );
        assert!(problems[2].contains("[code_mode] tools[0] must be the name of a tool"), "{problems:?}");
        assert!(Policy::parse("code_mode = 1\n", &dir).unwrap_err()[0].contains("`code_mode` must be a table"));

        // What a later policy sets wins; what it leaves alone stays.
        let mut merged = named.clone();
        merged.merge(Policy::parse("[code_mode]\ntools = []\n", &dir).unwrap());
        let settings = merged.code_mode().unwrap();
        assert_eq!((settings.program_tool(), settings.tools.as_deref()), ("py", Some(&[][..])));
    }

    #[test]
    fn policy_files_parse_and_every_problem_names_its_table_and_key() {
        let dir = std::env::temp_dir();
        let text = r#"
            [tools.fetch]
            allow_hosts = ["example.com", "*.wiki.org:8443"]
            env = { TOKEN = { from_host = "PATH" }, MODE = "fast" }
            limits = { timeout_ms = 2000, max_http_response_bytes = 1000 }

            [tools.files]
            dirs = [{ host = "." , guest = "/workspace" }]

            [tools.python]
            call_tools = ["calculator", "json_query"]
            limits = { max_nested_calls = 10 }
            task = "required"
        "#;
        let policy = Policy::parse(text, &dir).expect("valid policy");
        let python = policy.grants("python").expect("python");
        assert_eq!(python.call_tools, ["calculator", "json_query"]);
        assert_eq!(python.limits.max_nested_calls, Some(10));
        assert_eq!(python.task, Some(super::TaskMode::Required));
        let fetch = policy.grants("fetch").expect("fetch");
        assert_eq!(fetch.allow_hosts.len(), 2);
        assert_eq!(fetch.env.len(), 2);
        assert_eq!(fetch.limits.timeout, Some(Duration::from_millis(2000)));
        assert_eq!(fetch.limits.max_http_response_bytes, Some(1000));
        let files = policy.grants("files").expect("files");
        assert!(files.dirs[0].host.is_absolute() && !files.dirs[0].writable);

        let bad = r#"
            [tools.fetch]
            allow_host = ["example.com"]
            allow_hosts = ["*bad.com", 3]
            [tools.files]
            dirs = [{ host = "/no/such/dir", guest = "/w" }, { host = ".", guest = "relative", mode = "rx" }]
            limits = { fuel = -1, speed = 3 }
            env = { A = 1, B = { from_host = "TOOLCELL_TEST_NO_SUCH_VARIABLE" } }
            call_tools = ["calculator", "no spaces", 7]
            task = "sometimes"
            [tools.thief]
            task = true
            [tools.thief.env]
            SERVER = { from_host = "TOOLCELL_TOKEN" }
            EXPORT = { from_host = "OTEL_EXPORTER_OTLP_HEADERS" }
            [other]
        "#;
        let problems = Policy::parse(bad, &dir).expect_err("invalid policy");
        let expected = [
            "[tools.fetch] has an unknown key `allow_host`",
            "[tools.fetch] allow_hosts[0]: `*bad.com`",
            "[tools.fetch] allow_hosts[1] must be a string",
            "[tools.files] dirs[0]: host directory /no/such/dir cannot be used",
            "[tools.files] dirs[1] mode must be",
            "[tools.files] limits fuel must be a positive integer",
            "[tools.files] limits has an unknown key `speed`",
            "[tools.files] env.A must be a string",
            "[tools.files] env.B: the host environment has no variable `TOOLCELL_TEST_NO_SUCH_VARIABLE`",
            "[tools.files] call_tools[1] must be the name of a tool",
            "[tools.files] call_tools[2] must be the name of a tool",
            "[tools.files] task: `sometimes` is not a task mode; use \"never\", \"optional\" (the default)",
            "[tools.thief] task must be \"never\", \"optional\" (the default), \"always\" or \"required\"",
            "[tools.thief] env.SERVER: the host's `TOOLCELL_TOKEN` holds a credential of toolcell itself",
            "[tools.thief] env.EXPORT: the host's `OTEL_EXPORTER_OTLP_HEADERS` holds a credential",
            "unknown top-level key `other`",
        ];
        for expected in expected {
            assert!(problems.iter().any(|p| p.contains(expected)), "missing {expected:?} in {problems:#?}");
        }
        assert!(Policy::parse("[tools", &dir).expect_err("syntax")[0].contains("line 1"));
    }

    #[test]
    fn the_limits_keys_are_listed_in_words_in_their_order() {
        assert_eq!(
            keys_in_words(LimitOverrides::KEYS),
            "fuel, timeout_ms, memory_bytes, max_argument_bytes, max_output_bytes, max_stdio_bytes, \
             max_http_response_bytes or max_nested_calls"
        );
    }
}
