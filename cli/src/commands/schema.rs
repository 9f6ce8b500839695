//! `toolcell schema NAME`: one tool's definition, in words or in a provider's shape.

use std::process::ExitCode;

use anyhow::bail;
use toolcell_author::shell_quote;
use toolcell_runtime::Format;
use toolcell_runtime::formats::ToolMarks;
use toolcell_runtime::policy::Grants;
use toolcell_schema::words::human_bytes;

use crate::commands::list::code_callers;
use crate::describe::{describe_annotations, describe_granted, describe_requested};
use crate::load::{Source, command_line, load_one, no_such_tool, warn_diagnostics};
use crate::print::{grouped, human_duration, print_json};
use crate::schema_text;

pub(crate) async fn schema(
    source: Source<'_>,
    tool: &str,
    as_json: bool,
    format: Option<Format>,
    marks: ToolMarks,
) -> anyhow::Result<ExitCode> {
    let (runtime, name) = load_one(source, tool, &Grants::new()).await?;
    let Some(definition) = runtime.definition(&name) else {
        warn_diagnostics(&runtime);
        bail!("{}", no_such_tool(&runtime, tool));
    };
    if let Some(format) = format {
        if marks.code_callable && !code_callers(&runtime).contains(&name) {
            bail!(
                "the policy's `[code_mode] tools` does not let programs call `{name}`, so --allowed-callers cannot \
                 mark it: add it to that list (toolcell.toml or --policy), or leave the flag out"
            );
        }
        print_json(&definition.to_format_marked(format, marks)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if as_json {
        print_json(definition)?;
        return Ok(ExitCode::SUCCESS);
    }
    out!("{} {}", definition.name, definition.version);
    if let Some(title) = &definition.title {
        out!("title: {title}");
    }
    out!("source: {}", runtime.source(&name).unwrap_or("?"));
    out!("hints: {}", describe_annotations(&definition.annotations));
    out!("\n{}\n", definition.description);
    out!("parameters:");
    for line in schema_text::property_lines(&definition.parameters) {
        out!("{line}");
    }
    if let Some(limits) = runtime.limits(&name) {
        out!(
            "\nlimits: fuel {}, timeout {}, memory {}, arguments {}, output {}",
            grouped(limits.fuel),
            human_duration(limits.timeout),
            human_bytes(limits.memory_bytes),
            human_bytes(limits.max_argument_bytes),
            human_bytes(limits.max_output_bytes)
        );
    }
    let requested = runtime.requested(&name).map(describe_requested).unwrap_or_default();
    let granted = runtime.grants(&name).map(describe_granted).unwrap_or_default();
    out!("\ncapabilities:");
    out!("  requests: {}", if requested.is_empty() { "nothing".to_owned() } else { requested.join("; ") });
    out!("  granted:  {}", if granted.is_empty() { "nothing".to_owned() } else { granted.join("; ") });
    out!("\nFull JSON Schema: {} --json", command_line(source, &format!("schema {}", shell_quote(tool))));
    Ok(ExitCode::SUCCESS)
}
