//! `toolcell respond`: every tool call in a model's message, answered in its format.

use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::Value;
use toolcell_runtime::Format;

use crate::load::{Source, load, warn_diagnostics};
use crate::print::print_json;

pub(crate) async fn respond(source: Source<'_>, format: Format, message: &Path) -> anyhow::Result<ExitCode> {
    let text = if message == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the message from stdin (it must be UTF-8 JSON)")?;
        text
    } else {
        std::fs::read_to_string(message)
            .with_context(|| format!("cannot read the message file {} (it must be UTF-8 JSON)", message.display()))?
    };
    let message: Value = serde_json::from_str(&text).context("the message is not valid JSON")?;
    let runtime = load(source, None, None).await?;
    warn_diagnostics(&runtime);
    print_json(&runtime.respond(format, &message).await?)?;
    Ok(ExitCode::SUCCESS)
}
