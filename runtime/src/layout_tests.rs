//! The runtime's layout, held by a test: read from the sources' own `use crate::…`,
//! `use super::…` and `use self::…` paths, the files of `src/` import each other in no cycle
//! of more than two files, and the data layers (`tool/`, `policy/`, `formats/`) import
//! nothing above them. `docs/src/architecture.md` draws the layers this keeps.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folders (and root files) each layer may import from, besides itself: the data
/// layers stand on the floor.
const FLOOR: &[(&str, &[&str])] = &[
    ("redact", &[]),
    ("bindings", &[]),
    ("tool", &["redact"]),
    ("policy", &["tool", "redact"]),
    ("formats", &["tool", "redact"]),
];

/// Every `.rs` file under `src/`, as its module path (`call::admission`; `call` for
/// `call/mod.rs`; `` for `lib.rs`).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(src).unwrap().with_extension("");
                let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                    parts.pop();
                }
                found.insert(parts.join("::"), path);
            }
        }
    }
    found
}

/// The code of a file without its comments and its `#[cfg(test)]` module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
    text.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The paths `module` names: `crate::a::b`, `super::c` and `self::d` made absolute, each
/// with every name a `{…}` group adds to it.
fn named_paths(module: &str, code: &str) -> Vec<Vec<String>> {
    let own: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split("::").collect() };
    let parent = &own[..own.len().saturating_sub(1)];
    let mut paths = Vec::new();
    for (start, _) in code.match_indices(|c: char| c.is_ascii_alphabetic()) {
        let rest = &code[start..];
        let preceded = code[..start].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
        let (base, tail): (Vec<&str>, &str) = if let Some(tail) = rest.strip_prefix("crate::") {
            (Vec::new(), tail)
        } else if let Some(tail) = rest.strip_prefix("super::") {
            (parent.to_vec(), tail)
        } else if let Some(tail) = rest.strip_prefix("self::") {
            (own.clone(), tail)
        } else {
            continue;
        };
        if preceded {
            continue;
        }
        let segments: Vec<&str> = tail
            .split("::")
            .map_while(|segment| {
                let name: String = segment.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                (!name.is_empty() && name.len() == segment.len()).then_some(segment)
            })
            .collect();
        // The last whole segment before a `{`, `(`, `;`… ends the path; a `{…}` group names more.
        let mut path: Vec<String> = base.iter().map(|segment| (*segment).to_owned()).collect();
        path.extend(segments.iter().map(|segment| (*segment).to_owned()));
        let first: String = tail
            .split("::")
            .nth(segments.len())
            .map(|segment| segment.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
            .unwrap_or_default();
        let group_base = path.clone();
        if !first.is_empty() {
            path.push(first);
        }
        paths.push(path);
        let after = tail.split("::").skip(segments.len()).collect::<Vec<_>>().join("::");
        if let Some(group) = after.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or_default();
            for name in group.split(',') {
                let name = name.split("::").next().unwrap_or_default().trim();
                if !name.is_empty() && name != "self" {
                    let mut named = group_base.clone();
                    named.push(name.to_owned());
                    paths.push(named);
                }
            }
        }
    }
    paths
}

/// The longest prefix of `path` that is a module.
fn module_of(path: &[String], modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    (1..=path.len()).rev().map(|len| path[..len].join("::")).find(|prefix| modules.contains_key(prefix))
}

/// `module` imports `imported`: module paths, without the root.
fn imports(modules: &BTreeMap<String, PathBuf>) -> BTreeSet<(String, String)> {
    let mut arrows = BTreeSet::new();
    for (module, path) in modules.iter().filter(|(module, _)| !module.is_empty()) {
        for named in named_paths(module, &code(path)) {
            if let Some(imported) = module_of(&named, modules)
                && imported != *module
            {
                arrows.insert((module.clone(), imported));
            }
        }
    }
    arrows
}

/// The strongly connected components of the import graph with more than one file.
fn cycles(arrows: &BTreeSet<(String, String)>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = arrows.iter().flat_map(|(from, to)| [from, to]).collect();
    let reaches = |from: &String| {
        let mut seen = BTreeSet::from([from.clone()]);
        let mut stack = vec![from.clone()];
        while let Some(node) = stack.pop() {
            for (_, to) in arrows.iter().filter(|(start, _)| *start == node) {
                if seen.insert(to.clone()) {
                    stack.push(to.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|node| (*node, reaches(node))).collect();
    let mut components: Vec<BTreeSet<String>> = Vec::new();
    for node in &nodes {
        let component: BTreeSet<String> =
            reach[node].iter().filter(|other| reach[other].contains(*node)).cloned().collect();
        if component.len() > 1 && !components.contains(&component) {
            components.push(component);
        }
    }
    components
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_cycle_is_larger_than_two_files() {
    let modules = modules(&src());
    let arrows = imports(&modules);
    assert!(arrows.len() > 50, "the imports were not read: {arrows:?}");
    let large: Vec<_> = cycles(&arrows).into_iter().filter(|cycle| cycle.len() > 2).collect();
    assert!(large.is_empty(), "files that import each other in a cycle of more than two: {large:?}");
}

#[test]
fn the_data_layers_import_nothing_above_them() {
    let modules = modules(&src());
    let top = |module: &str| module.split("::").next().unwrap_or_default().to_owned();
    let mut wrong = Vec::new();
    for (from, to) in imports(&modules) {
        let (from_top, to_top) = (top(&from), top(&to));
        if let Some((_, allowed)) = FLOOR.iter().find(|(layer, _)| *layer == from_top)
            && from_top != to_top
            && !allowed.contains(&to_top.as_str())
        {
            wrong.push(format!("{from} imports {to}"));
        }
    }
    assert!(wrong.is_empty(), "a data layer imports from above it: {wrong:?}");
}

#[test]
fn a_cycle_of_three_files_is_found() {
    let arrows: BTreeSet<(String, String)> = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d")]
        .into_iter()
        .map(|(from, to)| (from.to_owned(), to.to_owned()))
        .collect();
    let found = cycles(&arrows);
    assert_eq!(found.len(), 2);
    assert!(found.iter().any(|cycle| cycle.len() == 3));
}

#[test]
fn paths_are_read_from_use_groups_and_relative_to_the_file() {
    let paths = named_paths("call::outcome", "use super::output::check_output;\nuse crate::tool::{io::Usage, limits};");
    assert!(paths.contains(&vec!["call".into(), "output".into(), "check_output".into()]), "{paths:?}");
    assert!(paths.contains(&vec!["tool".into(), "io".into()]), "{paths:?}");
    assert!(paths.contains(&vec!["tool".into(), "limits".into()]), "{paths:?}");
}
