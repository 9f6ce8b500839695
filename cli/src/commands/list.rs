//! `toolcell list`: the tools, their versions, hints and grants.

use std::process::ExitCode;

use serde_json::{Value, json};
use toolcell_runtime::formats::{ExportOptions, Namespace};
use toolcell_runtime::{Format, Runtime};

use crate::args::ExportArgs;

use crate::describe::{describe_granted, describe_requested};
use crate::load::{Source, load, warn_diagnostics};
use crate::print::{MAX_TITLE_COLUMN, cut, print_json, summary};

pub(crate) async fn list(
    source: Source<'_>,
    as_json: bool,
    format: Option<Format>,
    export: ExportArgs,
) -> anyhow::Result<ExitCode> {
    let runtime = load(source, None, None).await?;
    if let Some(format) = format {
        warn_diagnostics(&runtime);
        print_json(&format.tools_with(runtime.definitions(), &export_options(&runtime, export))?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if as_json {
        let tools: Vec<Value> = runtime
            .definitions()
            .map(|tool| {
                let mut entry = serde_json::to_value(tool).unwrap_or_default();
                entry["requested"] = json!(runtime.requested(&tool.name));
                entry["granted"] = json!(runtime.grants(&tool.name));
                entry
            })
            .collect();
        print_json(&json!({ "tools": tools, "diagnostics": runtime.diagnostics() }))?;
        return Ok(ExitCode::SUCCESS);
    }
    warn_diagnostics(&runtime);
    let rows: Vec<[String; 4]> = runtime
        .definitions()
        .map(|tool| {
            let title = tool.title.as_deref().map_or_else(|| "-".to_owned(), |title| cut(title, MAX_TITLE_COLUMN));
            [tool.name.clone(), tool.version.clone(), title, summary(&tool.description)]
        })
        .collect();
    let width = |column: usize, header: &str| {
        rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0).max(header.len())
    };
    let (name_width, version_width, title_width) = (width(0, "NAME"), width(1, "VERSION"), width(2, "TITLE"));
    out!("{:name_width$}  {:version_width$}  {:title_width$}  DESCRIPTION", "NAME", "VERSION", "TITLE");
    for [name, version, title, description] in rows {
        out!("{name:name_width$}  {version:version_width$}  {title:title_width$}  {description}");
    }
    let mut header = false;
    for tool in runtime.definitions() {
        let requested = runtime.requested(&tool.name).map(describe_requested).unwrap_or_default();
        let granted = runtime.grants(&tool.name).map(describe_granted).unwrap_or_default();
        if requested.is_empty() && granted.is_empty() {
            continue;
        }
        if !header {
            out!("\nCAPABILITIES (requested / granted)");
            header = true;
        }
        let or_none = |items: Vec<String>| if items.is_empty() { "nothing".to_owned() } else { items.join("; ") };
        out!("{:name_width$}  requests {}", tool.name, or_none(requested));
        out!("{:name_width$}  granted  {}", "", or_none(granted));
    }
    Ok(ExitCode::SUCCESS)
}

/// What the flags ask the export to add.
fn export_options(runtime: &Runtime, export: ExportArgs) -> ExportOptions {
    let mut options = ExportOptions::new().deferring(export.defer_loading.unwrap_or_default());
    if let Some(name) = export.namespace {
        options = options.in_namespace(match export.namespace_description {
            Some(description) => Namespace::new(name, description),
            None => Namespace::listing(name, runtime.definitions()),
        });
    }
    if export.allowed_callers {
        let callers = code_callers(runtime);
        if callers.is_empty() {
            eprintln!(
                "warning: --allowed-callers marks no tool: the policy's `[code_mode] tools` lets programs call none \
                 of these"
            );
        }
        options = options.callable_from_code(callers);
    }
    options
}

/// The loaded tools a program may call, as the policy's `[code_mode]` says (without the
/// table, its default: every tool but `python`).
pub(crate) fn code_callers(runtime: &Runtime) -> Vec<String> {
    let settings = runtime.code_mode_policy().cloned().unwrap_or_default();
    runtime.definitions().filter(|tool| settings.may_call(&tool.name)).map(|tool| tool.name.clone()).collect()
}
