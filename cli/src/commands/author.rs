//! `toolcell new` and `toolcell build`: a tool crate made, and built into components.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use toolcell_author::shell_quote;

use crate::EXIT_TOOL_ERROR;
use crate::load::{Source, load};

pub(crate) fn new_tool(
    name: &str,
    path: Option<PathBuf>,
    language: toolcell_author::Language,
) -> anyhow::Result<ExitCode> {
    let dir = path.unwrap_or_else(|| PathBuf::from(name));
    let created = toolcell_author::create(name, &dir, language)?;
    out!("created the {} tool `{name}` in {}:", language.name(), dir.display());
    for file in &created.files {
        out!("  {}", file.display());
    }
    out!("next, in {}:", dir.display());
    out!("  {}    # run its tests natively", created.test_command);
    out!("  toolcell test    # run the same tests inside the component, as the tool will run");
    out!("  toolcell build    # compile it into tools/{name}.wasm (the first build takes a minute or two)");
    out!("  toolcell --tools-dir tools invoke {name} {}", shell_quote(&created.example_arguments));
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn build(source: Source<'_>, path: &Path, out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let out_dir = out.or_else(|| source.tools_dir.map(Path::to_path_buf)).unwrap_or_else(|| PathBuf::from("tools"));
    let built = match toolcell_author::build(path) {
        Ok(built) => built,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
    };
    let mut names = Vec::new();
    for component in built {
        let runtime = load(Source { tools_dir: None, ..source }, Some(&component.wasm), None).await?;
        if let Some(diagnostic) = runtime.diagnostics().first() {
            eprintln!(
                "error: {} built {}, but it is not a loadable tool: {}",
                component.project.display(),
                component.wasm.display(),
                diagnostic.reason
            );
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
        let tool = runtime.definitions().next().context("the component defines no tool")?;
        std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
        let dest = out_dir.join(format!("{}.wasm", tool.name));
        // With its definition announced in it: a server lists it before compiling it.
        let bytes = std::fs::read(&component.wasm)
            .with_context(|| format!("cannot read the built component {}", component.wasm.display()))?;
        let announcement = runtime.announcement(&tool.name).context("the tool loaded")?;
        std::fs::write(&dest, toolcell_guest_build::with_metadata_section(&bytes, &announcement))
            .with_context(|| format!("cannot write the component to {}", dest.display()))?;
        let size = std::fs::metadata(&dest).map_or(0, |metadata| metadata.len());
        out!("built {} {} -> {} ({} KiB)", tool.name, tool.version, dest.display(), size.div_ceil(1024));
        names.push(tool.name.clone());
    }
    let tools_dir = shell_quote(&out_dir.display().to_string());
    for name in names {
        out!("try: toolcell --tools-dir {tools_dir} schema {name}");
    }
    Ok(ExitCode::SUCCESS)
}
