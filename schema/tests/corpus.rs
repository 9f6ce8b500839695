//! The shared corpus (`schema/corpus/`, see its README): every case through
//! `CompiledSchema`, as the host checks arguments, and the standard formats' table. The
//! Python and JavaScript SDKs run the same `violations.json` through their explainers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use toolcell_schema::{CompiledSchema, Violation, formats};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    schemas: BTreeMap<String, Value>,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    /// Why the SDKs cannot give the host's answer (`host_only.json` only).
    why: Option<String>,
    /// A schema, or the name of one in `schemas`.
    schema: Value,
    instance: Value,
    violations: Vec<Violation>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Format {
    format: String,
    words: String,
}

fn corpus_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus").join(name)
}

/// The corpus in `name`, which must exist and hold cases.
fn load(name: &str) -> Corpus {
    let path = corpus_file(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let corpus: Corpus = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    assert!(!corpus.cases.is_empty(), "{} has no cases", path.display());
    corpus
}

/// What the host says about the case, or why it cannot say.
fn explained(corpus: &Corpus, case: &Case) -> Result<Vec<Violation>, String> {
    let schema = match &case.schema {
        Value::String(name) => corpus.schemas.get(name).ok_or_else(|| format!("no schema named {name:?}"))?,
        schema => schema,
    };
    let (_, compiled) = CompiledSchema::compile(&schema.to_string()).map_err(|err| format!("the schema {err}"))?;
    Ok(compiled.violations(&case.instance))
}

/// Every case of `name` through the host, each mismatch named; `why` must be given exactly
/// when `host_only`.
fn check(name: &str, host_only: bool) {
    let corpus = load(name);
    let mut names = BTreeSet::new();
    let mut failures = Vec::new();
    for case in &corpus.cases {
        if !names.insert(case.name.as_str()) {
            failures.push(format!("{:?}: the name is used twice", case.name));
        }
        if case.why.as_deref().is_some_and(|why| !why.trim().is_empty()) != host_only {
            let rule = if host_only { "needs a `why`" } else { "must not have a `why`" };
            failures.push(format!("{:?}: a case of {name} {rule}", case.name));
        }
        match explained(&corpus, case) {
            Ok(found) if found == case.violations => {}
            Ok(found) => failures.push(format!(
                "{:?}:\n  expected {}\n  got      {}",
                case.name,
                serde_json::json!(case.violations),
                serde_json::json!(found)
            )),
            Err(reason) => failures.push(format!("{:?}: {reason}", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases in {name} fail:\n{}",
        failures.len(),
        corpus.cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_shared_cases_are_explained_as_expected() {
    check("violations.json", false);
}

#[test]
fn the_host_only_cases_are_explained_as_expected() {
    check("host_only.json", true);
}

#[test]
fn the_formats_file_is_the_standard_table() {
    let path = corpus_file("formats.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let listed: Vec<Format> = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let listed: Vec<(&str, &str)> = listed.iter().map(|f| (f.format.as_str(), f.words.as_str())).collect();
    assert_eq!(listed, formats::STANDARD, "{} must list toolcell_schema::formats::STANDARD", path.display());
}

#[test]
fn the_shared_cases_cover_every_standard_format() {
    fn formats_in<'v>(value: &'v Value, found: &mut BTreeSet<&'v str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(format)) = map.get("format") {
                    found.insert(format);
                }
                map.values().for_each(|child| formats_in(child, found));
            }
            Value::Array(items) => items.iter().for_each(|child| formats_in(child, found)),
            _ => {}
        }
    }
    let corpus = load("violations.json");
    let mut found = BTreeSet::new();
    corpus.cases.iter().for_each(|case| formats_in(&case.schema, &mut found));
    let missing: Vec<&str> =
        formats::STANDARD.iter().map(|(name, _)| *name).filter(|name| !found.contains(name)).collect();
    assert!(missing.is_empty(), "no case of violations.json uses the formats {missing:?}");
}
