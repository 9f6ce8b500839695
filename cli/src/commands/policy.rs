//! `toolcell policy explain|check|suggest`: questions about the policy the tools would run
//! under, answered without loading a tool (see `toolcell_runtime::questions`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use toolcell_runtime::policy::Assertion;
use toolcell_runtime::questions::{Denial, Scope, suggest};
use toolcell_runtime::{Limits, Policy};

use crate::args::PolicyCommand;
use crate::load::{Source, builder};
use crate::print::print_json;
use crate::{EXIT_TOOL_ERROR, EXIT_USAGE};

pub(crate) fn policy(source: Source<'_>, command: PolicyCommand) -> anyhow::Result<ExitCode> {
    match command {
        PolicyCommand::Explain { tool, json, code_mode } => explain(source, tool.as_deref(), json, code_mode),
        PolicyCommand::Check { assertions, json, code_mode } => check(source, &assertions, json, code_mode),
        PolicyCommand::Suggest { file, json } => suggest_rules(&file, json),
    }
}

/// The policy the tools would run under, and the tools it is about.
fn read(source: Source<'_>, code_mode: bool) -> anyhow::Result<(Policy, Scope)> {
    let policy = builder(source, None, None).read_policy()?;
    let scope = Scope::new(tool_names(source));
    Ok((policy, if code_mode { scope.with_code_mode() } else { scope }))
}

/// The tools a command would load, by file name: the built-in ones and the tools folder's.
fn tool_names(source: Source<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if source.builtins {
        names.extend(toolcell_tools::ALL.iter().filter_map(|(file, _)| file.strip_suffix(".wasm")).map(str::to_owned));
    }
    if let Some(dir) = source.tools_dir {
        let files = std::fs::read_dir(dir).into_iter().flatten().flatten();
        names.extend(files.filter_map(|entry| entry.file_name().to_str()?.strip_suffix(".wasm").map(str::to_owned)));
    }
    names.sort();
    names.dedup();
    names
}

fn explain(source: Source<'_>, tool: Option<&str>, json: bool, code_mode: bool) -> anyhow::Result<ExitCode> {
    let (policy, scope) = read(source, code_mode)?;
    let mut explained = policy.explain(&scope, &Limits::default());
    if let Some(tool) = tool {
        let names: Vec<&str> = explained.iter().map(|explained| explained.tool.as_str()).collect();
        if !names.contains(&tool) {
            let mut message = format!("no tool named `{tool}` is loaded or named by the policy");
            if let Some(best) = toolcell_schema::words::closest(tool, names.iter().copied(), 1).first() {
                message.push_str(&format!("; did you mean `{best}`?"));
            }
            bail!("{message} Tools: {}", names.join(", "));
        }
        explained.retain(|explained| explained.tool == tool);
    }
    if json {
        print_json(&explained)?;
    } else {
        let texts: Vec<String> = explained.iter().map(|explained| explained.to_text()).collect();
        out!("{}", texts.join("\n").trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

fn check(source: Source<'_>, files: &[PathBuf], json: bool, code_mode: bool) -> anyhow::Result<ExitCode> {
    let (policy, scope) = read(source, code_mode)?;
    let mut assertions: Vec<Assertion> = policy.assertions().to_vec();
    for file in files {
        assertions.extend(read_assertions(file)?);
    }
    if assertions.is_empty() {
        eprintln!(
            "error: there is nothing to check: add assertions to the policy (`assertions = ['deny write \"/home/**\"']`) \
             or pass --assertions FILE"
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let outcomes = policy.check(&assertions, &scope);
    let broken = outcomes.iter().filter(|outcome| !outcome.holds).count();
    if json {
        print_json(&outcomes)?;
    } else {
        for outcome in &outcomes {
            out!("{}  {}", if outcome.holds { "holds " } else { "BROKEN" }, outcome.assertion);
            for grant in &outcome.broken_by {
                out!("          by {grant}");
            }
        }
        let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        out!(
            "{} over {}: {}, {broken} broken",
            count(outcomes.len(), "assertion", "assertions"),
            count(scope.tools.len(), "tool", "tools"),
            count(outcomes.len() - broken, "holds", "hold")
        );
    }
    Ok(if broken == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_TOOL_ERROR) })
}

/// One assertion per line; blank lines and `#` comments are skipped.
fn read_assertions(file: &Path) -> anyhow::Result<Vec<Assertion>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut assertions = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let assertion =
            line.parse().map_err(|reason| anyhow::anyhow!("{}:{}: {reason}", file.display(), number + 1))?;
        assertions.push(assertion);
    }
    Ok(assertions)
}

fn suggest_rules(file: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read the denials file {}", file.display()))?;
    let mut denials = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        match serde_json::from_str::<Denial>(line) {
            Ok(denial) => denials.push(denial),
            Err(err) => eprintln!("warning: {}:{}: not a refused request ({err}); skipped", file.display(), number + 1),
        }
    }
    let suggested = suggest(&denials);
    if json {
        print_json(&suggested)?;
        return Ok(ExitCode::SUCCESS);
    }
    if suggested.rules.is_empty() {
        out!("# No rule to suggest: {} refused requests read from {}.", denials.len(), file.display());
    } else {
        out!(
            "# Rules that would have allowed the {} refused requests in {}.\n# Review each before adding it to the \
             policy: a refused request may be one the policy is right to refuse.\n",
            denials.len() - suggested.unallowable.len(),
            file.display()
        );
        let rules: Vec<String> = suggested.rules.iter().map(ToString::to_string).collect();
        out!("{}", rules.join("\n").trim_end());
    }
    if !suggested.unallowable.is_empty() {
        out!("\n# {} refused requests no rule can allow, e.g.:", suggested.unallowable.len());
        for denial in suggested.unallowable.iter().take(5) {
            out!("#   {} ({}): {}", denial.request, denial.tool, denial.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}
