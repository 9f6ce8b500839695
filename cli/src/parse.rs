//! Human-friendly values on the command line: `2s`, `500ms`, `32MiB`.

use std::time::Duration;

/// The longest timeout the command line accepts.
const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// `500ms`, `2s`, `1.5s`, `1m`; a bare number is seconds; at most a day.
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("`{text}` is not a duration; write e.g. 500ms, 2s or 1m"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "" | "s" => number,
        "m" | "min" => number * 60.0,
        other => return Err(format!("unknown duration unit `{other}`; use ms, s or m")),
    };
    let duration =
        Duration::try_from_secs_f64(seconds).map_err(|err| format!("`{text}` is not a usable duration: {err}"))?;
    if duration > MAX_DURATION {
        return Err(format!("`{text}` is longer than a day, the longest timeout toolcell accepts"));
    }
    Ok(duration)
}

/// `32MiB`, `512KiB`, `1GiB`, `64MB`, `1000`; a bare number is bytes.
pub fn size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 =
        number.parse().map_err(|_| format!("`{text}` is not a size; write e.g. 32MiB, 512KiB or 1048576"))?;
    let multiplier: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => return Err(format!("unknown size unit `{other}`; use B, KiB, MiB, GiB, KB, MB or GB")),
    };
    number.checked_mul(multiplier).ok_or_else(|| format!("`{text}` is too large"))
}

/// `all`, or tool names separated by commas: the tools `--defer-loading` defers.
pub fn deferral(text: &str) -> Result<toolcell_runtime::formats::Deferral, String> {
    use toolcell_runtime::formats::Deferral;
    if text.trim() == "all" {
        return Ok(Deferral::All);
    }
    let names: std::collections::BTreeSet<String> =
        text.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect();
    if names.is_empty() {
        return Err(format!(
            "`{text}` names no tool: write `all`, or tool names separated by commas, e.g. regex,files"
        ));
    }
    Ok(Deferral::Only(names))
}

/// A W3C `traceparent` value.
pub fn trace_parent(text: &str) -> Result<toolcell_runtime::trace::TraceParent, String> {
    toolcell_runtime::trace::TraceParent::parse(text, None).map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use toolcell_runtime::policy::{DirGrant, EnvGrant, HostPattern};

    #[test]
    fn a_grant_for_one_tool_is_tool_equals_spec() {
        let dir: ForTool<DirGrant> = "files=./data:/workspace:rw".parse().unwrap();
        assert_eq!((dir.tool.as_str(), dir.grant.guest.as_str(), dir.grant.writable), ("files", "/workspace", true));
        let env: ForTool<EnvGrant> = "weather=API_KEY=abc=d".parse().unwrap();
        assert_eq!((env.tool.as_str(), env.grant), ("weather", EnvGrant::fixed("API_KEY", "abc=d")));
        let host: ForTool<HostPattern> = "http_fetch=api.github.com".parse().unwrap();
        assert_eq!(host.tool, "http_fetch");
        let no_tool = "./data:/workspace".parse::<ForTool<DirGrant>>().unwrap_err();
        assert!(no_tool.contains("names no tool: write TOOL=./data:/workspace"), "{no_tool}");
        let bad_spec = "files=/tmp".parse::<ForTool<DirGrant>>().unwrap_err();
        assert!(bad_spec.starts_with("files=/tmp: "), "{bad_spec}");
    }

    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("1m"), Ok(Duration::from_secs(60)));
        assert!(duration("soon").is_err());
        assert!(duration("2h").is_err());
        assert!(duration("10000000000000000000").unwrap_err().contains("longer than a day"));
        assert!(duration("1441m").is_err());
    }

    #[test]
    fn deferrals() {
        use toolcell_runtime::formats::Deferral;
        assert_eq!(deferral("all"), Ok(Deferral::All));
        let names = ["files", "regex"].into_iter().map(str::to_owned).collect();
        assert_eq!(deferral("regex, files,"), Ok(Deferral::Only(names)));
        assert!(deferral(" , ").unwrap_err().contains("names no tool: write `all`"));
    }

    #[test]
    fn sizes() {
        assert_eq!(size("32MiB"), Ok(32 << 20));
        assert_eq!(size("64MB"), Ok(64_000_000));
        assert_eq!(size("1000"), Ok(1000));
        assert!(size("lots").is_err());
        assert!(size("99999999999GiB").is_err());
    }
}

/// A grant for one tool, written `TOOL=SPEC` (`files=.:/workspace`, `http_fetch=api.github.com`,
/// `weather=API_KEY`): what `serve`'s --dir, --allow-host and --env take.
#[derive(Debug, Clone)]
pub(crate) struct ForTool<T> {
    pub(crate) tool: String,
    pub(crate) grant: T,
}

impl<T> std::str::FromStr for ForTool<T>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let Some((tool, spec)) = text.split_once('=') else {
            return Err(format!(
                "`{text}` names no tool: write TOOL={text}, e.g. files=.:/workspace or http_fetch=api.github.com"
            ));
        };
        let valid = !tool.is_empty() && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(format!("`{tool}` is not a tool name (letters, digits, `_` and `-`): write TOOL=SPEC"));
        }
        let grant = spec.parse().map_err(|err| format!("{tool}={spec}: {err}"))?;
        Ok(Self { tool: tool.to_owned(), grant })
    }
}
