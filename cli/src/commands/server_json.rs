//! `toolcell server-json`: the entry that lists a served tools folder in the official MCP
//! registry (`server.json`, schema 2025-12-11), as an OCI package: the image built from
//! `deploy/Dockerfile`, which serves the folder over streamable HTTP at `/mcp`.
//!
//! The entry is checked against the registry's published schema (vendored in `cli/schemas/`,
//! from modelcontextprotocol/static, MIT) and against the rules the registry applies when
//! publishing an OCI package, before anything is written.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::LazyLock;

use anyhow::Context as _;
use serde_json::{Value, json};
use toolcell_oci::OciReference;

use crate::args::ServerJsonArgs;
use crate::load::{Source, load, warn_diagnostics};

/// The schema's URL, which every entry names as its `$schema`.
pub(crate) const SCHEMA_URL: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The registry's schema, as published at [`SCHEMA_URL`].
const SCHEMA: &str = include_str!("../../schemas/server.schema.2025-12-11.json");

/// The label the registry reads from the image to prove the entry's name is the image's.
const NAME_LABEL: &str = "io.modelcontextprotocol.server.name";

/// The schema's limit on a description.
const MAX_DESCRIPTION: usize = 100;

static VALIDATOR: LazyLock<Result<jsonschema::Validator, String>> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(SCHEMA).map_err(|err| err.to_string())?;
    jsonschema::draft7::new(&schema).map_err(|err| err.to_string())
});

pub(crate) async fn server_json(source: Source<'_>, args: ServerJsonArgs) -> anyhow::Result<ExitCode> {
    let image = parse_image(&args.image)?;
    let runtime = load(source, None, None).await?;
    warn_diagnostics(&runtime);
    let tools: Vec<String> = runtime.definitions().map(|tool| tool.name.clone()).collect();
    let entry = match entry(&args, &image, &tools) {
        Ok(entry) => entry,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let problems = problems(&entry);
    if !problems.is_empty() {
        eprintln!(
            "error: the MCP registry would refuse this entry:\n- {}\nChange what the flags give for these fields and \
             run again.",
            problems.join("\n- ")
        );
        return Ok(ExitCode::FAILURE);
    }
    let text = serde_json::to_string_pretty(&entry)? + "\n";
    match &args.output {
        Some(file) => write(file, &text)?,
        None => print!("{text}"),
    }
    eprintln!(
        "The image must carry the label {NAME_LABEL}={:?} (deploy/Dockerfile: --build-arg MCP_SERVER_NAME={}), \
         or the registry refuses the entry.",
        args.name, args.name
    );
    Ok(ExitCode::SUCCESS)
}

/// `registry/repository:tag` or `…@sha256:…`, as the registry writes an OCI identifier (an
/// `oci://` prefix is accepted and dropped).
fn parse_image(image: &str) -> anyhow::Result<OciReference> {
    let reference = format!("oci://{}", image.strip_prefix("oci://").unwrap_or(image));
    reference.parse::<OciReference>().map_err(|err| {
        anyhow::anyhow!(
            "--image {image:?}: {}",
            err.replace("is not a tool reference", "is not an image reference").replace("oci://", "")
        )
    })
}

/// The entry: one OCI package, run with docker, serving streamable HTTP on the image's port with
/// the bearer token from `TOOLCELL_TOKEN`.
fn entry(args: &ServerJsonArgs, image: &OciReference, tools: &[String]) -> anyhow::Result<Value> {
    let version = match (&args.server_version, &image.tag) {
        (Some(version), _) => version.clone(),
        (None, Some(tag)) if tag != "latest" => tag.clone(),
        _ => anyhow::bail!(
            "--image {} has no version tag: give the entry's version with --server-version (e.g. 1.0.0)",
            args.image
        ),
    };
    let identifier = image.to_string().trim_start_matches("oci://").to_owned();
    let port = args.port;
    let mut entry = json!({
        "$schema": SCHEMA_URL,
        "name": args.name,
        "description": args.description.clone().unwrap_or_else(|| describe(tools)),
        "version": version,
        "packages": [{
            "registryType": "oci",
            "identifier": identifier,
            "runtimeHint": "docker",
            "runtimeArguments": [
                { "type": "named", "name": "-p", "value": format!("127.0.0.1:{port}:{port}") },
                { "type": "named", "name": "-e", "value": "TOOLCELL_TOKEN" },
            ],
            "environmentVariables": [{
                "name": "TOOLCELL_TOKEN",
                "description": "The bearer token the server requires of every request",
                "isRequired": true,
                "isSecret": true,
            }],
            "transport": {
                "type": "streamable-http",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": [{
                    "name": "Authorization",
                    "value": "Bearer {TOOLCELL_TOKEN}",
                    "isRequired": true,
                    "isSecret": true,
                }],
            },
        }],
        "_meta": {
            "io.modelcontextprotocol.registry/publisher-provided": {
                "tool": "toolcell",
                "version": env!("CARGO_PKG_VERSION"),
                "tools": tools,
            },
        },
    });
    if let Some(title) = &args.title {
        entry["title"] = json!(title);
    }
    if let Some(url) = &args.repository {
        entry["repository"] = repository(url)?;
    }
    Ok(entry)
}

/// "Sandboxed tools: a, b, c", cut to the schema's 100 characters with the count of those left out.
fn describe(tools: &[String]) -> String {
    let mut text = String::from("Sandboxed WebAssembly tools");
    if tools.is_empty() {
        return text;
    }
    text.push_str(": ");
    for (shown, tool) in tools.iter().enumerate() {
        let rest = tools.len() - shown;
        let separator = if shown == 0 { "" } else { ", " };
        let more = if rest > 1 { format!(" and {} more", rest - 1) } else { String::new() };
        if text.len() + separator.len() + tool.len() + more.len() > MAX_DESCRIPTION {
            text.push_str(&format!(" and {rest} more"));
            return text;
        }
        text.push_str(separator);
        text.push_str(tool);
    }
    text
}

/// `{url, source}`, the source named from the host the registry knows.
fn repository(url: &str) -> anyhow::Result<Value> {
    let host = url
        .strip_prefix("https://")
        .and_then(|rest| rest.split('/').next())
        .with_context(|| format!("--repository {url:?}: give the repository's https:// URL"))?;
    let source = match host {
        "github.com" => "github",
        "gitlab.com" => "gitlab",
        _ => anyhow::bail!("--repository {url:?}: the registry knows repositories on github.com and gitlab.com"),
    };
    Ok(json!({ "url": url, "source": source }))
}

/// What the registry's schema and its publishing rules for OCI packages refuse, as
/// `/path: problem` lines.
fn problems(entry: &Value) -> Vec<String> {
    let validator = match &*VALIDATOR {
        Ok(validator) => validator,
        Err(err) => return vec![format!("the vendored registry schema does not load: {err}")],
    };
    let mut problems: Vec<String> = validator
        .iter_errors(entry)
        .map(|error| {
            let path = error.instance_path().to_string();
            format!("{}: {error}", if path.is_empty() { "/" } else { &path })
        })
        .collect();
    let version = entry["version"].as_str().unwrap_or_default();
    if version == "latest" || version.starts_with(['^', '~', '>', '<', '=']) || version.contains(['*', 'x']) {
        problems.push(format!("/version: {version:?} is not one version (the registry refuses `latest` and ranges)"));
    }
    problems
}

fn write(file: &PathBuf, text: &str) -> anyhow::Result<()> {
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: &str, image: &str) -> ServerJsonArgs {
        ServerJsonArgs {
            name: name.to_owned(),
            image: image.to_owned(),
            server_version: None,
            title: None,
            description: None,
            repository: None,
            port: 8000,
            output: None,
        }
    }

    fn made(args: &ServerJsonArgs) -> Value {
        entry(args, &parse_image(&args.image).expect("image"), &["calculator".to_owned()]).expect("entry")
    }

    #[test]
    fn an_entry_for_an_image_passes_the_registrys_schema() {
        let mut args = args("io.github.acme/tools", "ghcr.io/acme/tools:1.2.0");
        args.repository = Some("https://github.com/acme/tools".to_owned());
        let entry = made(&args);
        assert_eq!(problems(&entry), Vec::<String>::new(), "{entry:#}");
        assert_eq!(entry["version"], "1.2.0");
        assert_eq!(entry["packages"][0]["identifier"], "ghcr.io/acme/tools:1.2.0");
        assert_eq!(entry["repository"]["source"], "github");
        assert_eq!(entry["description"], "Sandboxed WebAssembly tools: calculator");
    }

    #[test]
    fn the_schema_refuses_what_the_registry_refuses() {
        let mut entry = made(&args("no-slash-in-this-name", "ghcr.io/acme/tools:1.2.0"));
        assert!(problems(&entry).iter().any(|problem| problem.starts_with("/name: ")), "{:?}", problems(&entry));
        entry["name"] = json!("io.github.acme/tools");
        entry["description"] = json!("x".repeat(101));
        assert!(problems(&entry).iter().any(|problem| problem.starts_with("/description: ")));
        entry["description"] = json!("fine");
        entry["packages"][0]["transport"]["type"] = json!("carrier-pigeon");
        assert!(!problems(&entry).is_empty());
        entry["packages"][0]["transport"]["type"] = json!("streamable-http");
        entry["version"] = json!("^1.2");
        assert!(problems(&entry).iter().any(|problem| problem.starts_with("/version: ")));
    }

    #[test]
    fn an_image_without_a_version_tag_needs_version() {
        let args = args("io.github.acme/tools", "ghcr.io/acme/tools:latest");
        let err = entry(&args, &parse_image(&args.image).expect("image"), &[]).expect_err("no version");
        assert!(err.to_string().contains("give the entry's version with --server-version"), "{err}");
        let err = parse_image("ghcr.io/Acme/tools:1").expect_err("upper case");
        assert!(err.to_string().contains("is not an image reference"), "{err}");
    }

    #[test]
    fn a_long_list_of_tools_is_cut_to_the_schemas_limit() {
        let tools: Vec<String> = (0..40).map(|n| format!("tool_number_{n}")).collect();
        let text = describe(&tools);
        assert!(text.len() <= MAX_DESCRIPTION, "{text}");
        assert!(text.ends_with(" more"), "{text}");
    }
}
