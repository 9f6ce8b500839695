//! `toolcell check FILE`: whether a component loads, and what it is.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use toolcell_author::shell_quote;

use crate::EXIT_TOOL_ERROR;
use crate::describe::{describe_annotations, describe_requested};
use crate::load::{Source, command_line, load, names_a_file, not_a_file};
use crate::print::summary;
use crate::schema_text;

pub(crate) async fn check(source: Source<'_>, file: &Path) -> anyhow::Result<ExitCode> {
    if !file.is_file() {
        let mut message = not_a_file(file);
        let text = file.to_string_lossy();
        if !names_a_file(&text) {
            // A tool's name where a file was wanted: `schema` is the command that takes one.
            let schema = command_line(source, &format!("schema {}", shell_quote(&text)));
            message.push_str(&format!(". `check` takes a component file; to see the tool `{text}`, run: {schema}"));
        }
        bail!("{message}");
    }
    let runtime = load(Source { tools_dir: None, ..source }, Some(file), None).await?;
    if let Some(diagnostic) = runtime.diagnostics().first() {
        out!("{}: not a loadable tool: {}", file.display(), diagnostic.reason);
        return Ok(ExitCode::from(EXIT_TOOL_ERROR));
    }
    let tool = runtime.definitions().next().context("the file defines no tool")?;
    let properties = tool.parameters["properties"].as_object().map_or(0, serde_json::Map::len);
    out!("{}: ok", file.display());
    out!("tool: {} {}", tool.name, tool.version);
    if let Some(title) = &tool.title {
        out!("title: {title}");
    }
    out!("description: {}", summary(&tool.description));
    out!("hints: {}", describe_annotations(&tool.annotations));
    out!("parameters: {properties}; output schema: {}", if tool.output_schema.is_some() { "yes" } else { "no" });
    let undocumented = schema_text::undocumented(&tool.parameters);
    if !undocumented.is_empty() {
        out!(
            "warning: no description for the parameter(s) {}: a model sees only their names and types; \
             describe each (a `///` comment in Rust, the docstring's Args: section in Python, `description` in JavaScript)",
            undocumented.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
        );
    }
    let requested = runtime.requested(&tool.name).map(describe_requested).unwrap_or_default();
    if requested.is_empty() {
        out!("requests: nothing (pure computation)");
    } else {
        out!("requests:");
        for item in requested {
            out!("  {item}");
        }
        out!("(requests grant nothing: grant them in toolcell.toml, or with invoke --allow-host/--dir/--env)");
    }
    Ok(ExitCode::SUCCESS)
}
