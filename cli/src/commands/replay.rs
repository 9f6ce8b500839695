//! `toolcell replay FILE`: a recorded call, run again from its record.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use toolcell_runtime::policy::Grants;
use toolcell_runtime::record::Record;

use crate::EXIT_TOOL_ERROR;
use crate::load::{Source, load_one};
use crate::print::print_json;

pub(crate) async fn replay(source: Source<'_>, file: &Path) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read the record {}", file.display()))?;
    let record = Record::from_json(&text).with_context(|| format!("{} is not a record", file.display()))?;
    let (runtime, _) = load_one(source, &record.tool, &Grants::new()).await?;
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
