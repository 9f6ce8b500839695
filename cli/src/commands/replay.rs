//! `toolcell replay FILE`: a recorded call, run again from its record.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use toolcell_runtime::policy::Grants;
use toolcell_runtime::record::Record;

use crate::EXIT_TOOL_ERROR;
use crate::load::{Source, load_one};
use crate::print::print_json;

/// The host a replayed tool is granted when its record holds HTTP requests: `.invalid` never
/// resolves.
const REPLAY_HOST: &str = "replay.invalid";

pub(crate) async fn replay(source: Source<'_>, file: &Path) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read the record {}", file.display()))?;
    let record = Record::from_json(&text).with_context(|| format!("{} is not a record", file.display()))?;
    // A record of HTTP requests answers each of them: the tool needs `wasi:http` linked, and a
    // host no name resolves to (nothing is ever sent).
    let grants = if record.observed.http.is_empty() {
        Grants::new()
    } else {
        Grants::new().allow_host(REPLAY_HOST.parse().map_err(anyhow::Error::msg)?)
    };
    let (runtime, _) = load_one(source, &record.tool, &grants).await?;
    let replayed = runtime.replay(&record).await.with_context(|| format!("cannot replay {}", file.display()))?;
    print_json(&replayed.output)?;
    let fuel = replayed.output.usage.fuel_consumed;
    let recorded_fuel = record.output.fuel_consumed;
    match (replayed.same_result, replayed.same_fuel) {
        (true, true) => eprintln!("replayed `{}`: the same result, with the same fuel ({fuel})", record.tool),
        (same_result, same_fuel) => {
            let result = if same_result { "the same result" } else { "another result" };
            let fuel = if same_fuel {
                format!("the same fuel ({fuel})")
            } else {
                format!("fuel {fuel}, recorded {recorded_fuel}")
            };
            eprintln!("replayed `{}`: {result}, with {fuel}", record.tool);
            if replayed.limits_lowered {
                eprintln!(
                    "hint: the record's limits are above what this runtime gives `{}`; a replay never raises them",
                    record.tool
                );
            }
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
    }
    Ok(ExitCode::SUCCESS)
}
