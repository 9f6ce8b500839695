//! The `datetime` tool: the current time, parsing, formatting, arithmetic and time-zone
//! conversion, with real IANA time-zone rules (daylight saving time included).
//!
//! The component has a clock but no filesystem, so time zones come from the IANA database
//! that jiff's `tzdb-bundle-always` feature compiles into it.
//!
//! (Over 500 lines: one function per operation, each with its own errors in words.)

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::sync::LazyLock;

use jiff::fmt::friendly::{Designator, FractionalUnit, Spacing, SpanPrinter};
use jiff::fmt::temporal::{DateTimeParser, Pieces, TimeZoneAnnotationKind};
use jiff::fmt::{rfc2822, strtime};
use jiff::tz::{AmbiguousOffset, Offset, OffsetConflict, TimeZone, TimeZoneDatabase};
use jiff::{Span, Timestamp, Zoned, civil};
use toolcell_guest::{Context, ToolError, json, tool};

#[cfg(test)]
mod tests;

/// The IANA database compiled into the component. It is used explicitly rather than through
/// jiff's global database so that native tests resolve zones exactly as the component does.
static TZDB: LazyLock<TimeZoneDatabase> = LazyLock::new(TimeZoneDatabase::bundled);

/// Prints spans as "1 day, 2 hours, 30 minutes" (or "... ago" when negative).
static FRIENDLY: SpanPrinter = SpanPrinter::new()
    .designator(Designator::Verbose)
    .spacing(Spacing::BetweenUnitsAndDesignators)
    .comma_after_designator(true)
    .fractional(Some(FractionalUnit::Second));

/// Examples quoted in error messages, so the model sees accepted forms right where it failed.
const INSTANT_EXAMPLES: &str = "\"2024-03-10T08:30:00-05:00\", \"2024-03-10T13:30:00Z\", \"2024-03-10 08:30\", \
                                \"2024-03-10\" or \"2024-03-10T08:30[Europe/Paris]\"";
const DURATION_EXAMPLES: &str = "ISO 8601 like \"P1DT2H\" or \"-PT90M\", or friendly like \"2 hours 30 minutes\", \
                                 \"3d\", \"-1 month\" or \"1 week ago\"";
const FORMAT_EXAMPLES: &str = "\"%Y-%m-%d %H:%M %Z\" or \"%A, %B %-d, %Y at %-I:%M %p\"";

/// What the `datetime` tool does on a call.
#[json]
#[derive(Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// The current date and time in `time_zone`.
    Now,
    /// Read `instant` (laid out as `format` if given) and describe it.
    Parse,
    /// Render `instant` (default: now) with the strftime pattern `format`.
    Format,
    /// Add `duration` to `instant` (default: now); a negative duration subtracts.
    Add,
    /// The span from `instant` (default: now) to `end`.
    Difference,
    /// Express `instant` (default: now) in `to_time_zone`.
    Convert,
}

impl Operation {
    const ALL: [Operation; 6] = [
        Operation::Now,
        Operation::Parse,
        Operation::Format,
        Operation::Add,
        Operation::Difference,
        Operation::Convert,
    ];

    fn name(self) -> &'static str {
        match self {
            Operation::Now => "now",
            Operation::Parse => "parse",
            Operation::Format => "format",
            Operation::Add => "add",
            Operation::Difference => "difference",
            Operation::Convert => "convert",
        }
    }

    /// The optional fields the operation reads. `time_zone` is read by all of them.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Operation::Now => &["time_zone"],
            Operation::Parse => &["instant", "format", "time_zone"],
            Operation::Format => &["format", "instant", "time_zone"],
            Operation::Add => &["duration", "instant", "time_zone"],
            Operation::Difference => &["end", "instant", "largest_unit", "time_zone"],
            Operation::Convert => &["to_time_zone", "instant", "time_zone"],
        }
    }
}

/// The largest unit a `difference` is expressed in.
#[json]
#[derive(Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Years, months, days, hours, ... ("1 year, 2 months, 3 days").
    Years,
    /// Months, days, hours, ...
    Months,
    /// Weeks, days, hours, ...
    Weeks,
    /// Days, hours, minutes, seconds (the default).
    Days,
    /// Hours, minutes, seconds.
    Hours,
    /// Minutes and seconds.
    Minutes,
    /// Seconds only.
    Seconds,
}

impl From<Unit> for jiff::Unit {
    fn from(unit: Unit) -> Self {
        match unit {
            Unit::Years => jiff::Unit::Year,
            Unit::Months => jiff::Unit::Month,
            Unit::Weeks => jiff::Unit::Week,
            Unit::Days => jiff::Unit::Day,
            Unit::Hours => jiff::Unit::Hour,
            Unit::Minutes => jiff::Unit::Minute,
            Unit::Seconds => jiff::Unit::Second,
        }
    }
}

/// `kind` is "instant" for `now`, `parse`, `format`, `add` and `convert`; "difference" for `difference`.
#[json]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schemars(extend("type" = "object"))]
pub enum DateTimeResult {
    /// A point in time in a time zone.
    Instant(Instant),
    /// The span between two points in time.
    Difference(Difference),
}

/// A point in time in a time zone.
#[json]
#[derive(PartialEq, Eq)]
pub struct Instant {
    /// RFC 3339 with the offset and, if any, the IANA zone: "2024-03-10T08:30:00-04:00[America/New_York]".
    pub iso: String,
    /// The IANA time zone, e.g. "America/New_York", or the fixed offset, e.g. "-05:00".
    pub time_zone: String,
    /// The UTC offset in effect, e.g. "-04:00".
    pub offset: String,
    /// The zone's abbreviation in effect, e.g. "EDT".
    pub abbreviation: String,
    /// Seconds since 1970-01-01T00:00:00Z (fractions truncated toward zero).
    pub unix_seconds: i64,
    /// The day of the week, e.g. "Sunday".
    pub weekday: String,
    /// The instant rendered with `format` (operation `format` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formatted: Option<String>,
}

/// The span from `start` to `end` (negative when `end` is earlier).
#[json]
#[derive(PartialEq, Eq)]
pub struct Difference {
    /// The start (`instant`), in the same form as an instant's `iso`.
    pub start: String,
    /// The end, expressed in the start's time zone.
    pub end: String,
    /// The span in ISO 8601, e.g. "P1DT2H30M"; a leading "-" when negative.
    pub iso: String,
    /// The span in words, e.g. "1 day, 2 hours, 30 minutes"; "... ago" when negative.
    pub friendly: String,
    /// Exact elapsed seconds, fractions truncated (negative if `end` is earlier; DST days last 23 or 25 hours).
    pub total_seconds: i64,
}

/// Date and time calculations with real time-zone rules (IANA database, daylight saving time included). Use it
/// instead of working out dates, weekdays, offsets or durations yourself.
///
/// Operations: `now` (current time), `parse` (read `instant`, optionally laid out as a strftime `format`),
/// `format` (render with a strftime `format`), `add` (add a `duration`; negative subtracts), `difference`
/// (`end` minus `instant`), `convert` (show `instant` in `to_time_zone`). `instant` defaults to the current time
/// except for `parse`.
///
/// Instants are RFC 3339 / ISO 8601: "2024-03-10T08:30:00-05:00", "2024-03-10T13:30:00Z",
/// "2024-03-10 08:30" or "2024-03-10" (read in `time_zone`), or "2024-03-10T08:30[Europe/Paris]".
/// Results come back in `time_zone` (default: the zone written in the instant, else the user's zone, else UTC).
///
/// Example: {"operation": "add", "instant": "2024-03-09 12:00", "time_zone": "America/New_York", "duration": "1 day"}
// Reads the clock (`now`, and `instant` when omitted), so two calls may answer differently;
// it changes nothing, so calling again has no further effect: MCP's idempotentHint holds.
#[tool(title = "Date and Time", output_schema, read_only, idempotent, open_world = false)]
// The parameters are the flat properties of the arguments object, one per field.
#[expect(clippy::too_many_arguments, reason = "one parameter per property of the arguments")]
pub fn datetime(
    /// What to do.
    operation: Operation,
    /// IANA time zone to work in, e.g. "America/New_York", "Europe/Paris" or "UTC" (a fixed offset like "+05:30"
    /// also works). Date-times without an offset are read in it and results are shown in it.
    /// Default: the zone written in `instant`, else the user's zone, else UTC.
    time_zone: Option<String>,
    /// The date-time to work on, e.g. "2024-03-10T08:30:00-05:00", "2024-03-10T13:30:00Z", "2024-03-10 08:30"
    /// or "2024-03-10" (read in `time_zone`), or "2024-03-10T08:30[Europe/Paris]".
    /// Required for `parse`; `format`, `add`, `difference` and `convert` use the current time when it is omitted.
    instant: Option<String>,
    /// A strftime pattern. For `format` (required): how to render, e.g. "%A, %B %-d, %Y at %-I:%M %p %Z".
    /// For `parse` (optional): the exact layout of `instant`, e.g. "%d/%m/%Y %H:%M", or "%s" for Unix seconds.
    format: Option<String>,
    /// For `add` (required): how much to add, ISO 8601 ("P1DT2H", "-P2W") or friendly ("2 hours 30 minutes",
    /// "3d", "-1 month", "1 week ago"). Negative subtracts. Days and larger units follow the calendar of the
    /// time zone, so "1 day" across a DST change keeps the wall-clock time while "24 hours" does not.
    duration: Option<String>,
    /// For `difference` (required): the other date-time, in the same forms as `instant` (without an offset it
    /// is read in the zone of `instant`). The result is `end` minus `instant`.
    end: Option<String>,
    /// For `difference`: the largest unit of the span (default `days`).
    /// `years` gives "1 year, 2 months, 3 days"; `hours` gives "27 hours, 30 minutes".
    largest_unit: Option<Unit>,
    /// For `convert` (required): the IANA time zone to express `instant` in, e.g. "Asia/Tokyo".
    to_time_zone: Option<String>,
    ctx: Context,
) -> Result<DateTimeResult, ToolError> {
    // Blank strings count as absent: some models fill every optional field.
    let time_zone = present(time_zone);
    let instant = present(instant);
    let format = present(format);
    let duration = present(duration);
    let end = present(end);
    let to_time_zone = present(to_time_zone);

    let given = [
        ("instant", instant.is_some()),
        ("format", format.is_some()),
        ("duration", duration.is_some()),
        ("end", end.is_some()),
        ("largest_unit", largest_unit.is_some()),
        ("to_time_zone", to_time_zone.is_some()),
    ];
    check_fields(operation, &given)?;

    let zone = WorkZone {
        explicit: time_zone.as_deref().map(|name| lookup_zone("time_zone", name)).transpose()?,
        host: ctx.get::<String>("time_zone"),
    };

    let result = match operation {
        Operation::Now => describe(&zone.now()?, None),
        Operation::Parse => {
            let text = required(operation, "instant", instant, "\"2024-03-10 08:30\"")?;
            let zoned = match format {
                Some(format) => read_with_format(&text, &format, &zone)?,
                None => read_instant("instant", &text, &zone)?,
            };
            describe(&zoned, None)
        }
        Operation::Format => {
            let format = required(operation, "format", format, FORMAT_EXAMPLES)?;
            let zoned = instant_or_now(instant, &zone)?;
            let formatted = strtime::format(format.as_str(), &zoned).map_err(|err| {
                ToolError::invalid_arguments(format!(
                    "`format`: `{format}` is not a valid strftime pattern: {err}. Examples: {FORMAT_EXAMPLES}"
                ))
            })?;
            describe(&zoned, Some(formatted))
        }
        Operation::Add => {
            let duration = required(operation, "duration", duration, "\"2h 30m\"")?;
            let start = instant_or_now(instant, &zone)?;
            describe(&add(&start, &duration)?, None)
        }
        Operation::Difference => {
            let end = required(operation, "end", end, "\"2024-12-25\"")?;
            let start = instant_or_now(instant, &zone)?;
            difference(&start, &end, largest_unit.unwrap_or(Unit::Days))?
        }
        Operation::Convert => {
            let target = required(operation, "to_time_zone", to_time_zone, "\"Asia/Tokyo\"")?;
            let target = lookup_zone("to_time_zone", &target)?;
            describe(&instant_or_now(instant, &zone)?.with_time_zone(target), None)
        }
    };
    Ok(result)
}

/// The zone a call works in.
struct WorkZone {
    /// `time_zone` as given: it also overrides the zone written in an instant.
    explicit: Option<TimeZone>,
    /// The host's default zone name, looked up only when an instant needs it.
    host: Option<String>,
}

impl WorkZone {
    /// The zone for date-times that carry no offset or zone of their own, and for "now".
    fn local(&self) -> Result<TimeZone, ToolError> {
        if let Some(zone) = &self.explicit {
            return Ok(zone.clone());
        }
        match &self.host {
            // A broken host setting is fixable by the model: naming the zone bypasses it.
            Some(name) => TZDB.get(name).map_err(|_| {
                ToolError::invalid_arguments(format!(
                    "the host's default time zone `{name}` is not a known IANA time zone; pass `time_zone` \
                     explicitly, e.g. \"Europe/Paris\""
                ))
            }),
            None => Ok(TimeZone::UTC),
        }
    }

    /// Puts an instant read from text into the explicit zone, if any; otherwise it keeps the
    /// zone or offset it was written with.
    fn adopt(&self, zoned: Zoned) -> Zoned {
        match &self.explicit {
            Some(zone) => zoned.with_time_zone(zone.clone()),
            None => zoned,
        }
    }

    fn now(&self) -> Result<Zoned, ToolError> {
        // Not `Timestamp::now()`: it panics if the host clock is outside jiff's range. Whole
        // seconds only: nanoseconds of "now" would clutter every result derived from it.
        let now = Timestamp::try_from(std::time::SystemTime::now())
            .and_then(|now| Timestamp::from_second(now.as_second()))
            .map_err(|err| ToolError::failed(format!("the host clock reports an unusable time: {err}")))?;
        Ok(now.to_zoned(self.local()?))
    }
}

fn present(value: Option<String>) -> Option<String> {
    value.filter(|value| !value.trim().is_empty())
}

/// Rejects fields the operation would ignore: silently ignoring `to_time_zone` on `now`, say,
/// would answer in the wrong zone without the model noticing.
fn check_fields(operation: Operation, given: &[(&str, bool)]) -> Result<(), ToolError> {
    let used = operation.fields();
    let Some((field, _)) = given.iter().find(|(field, given)| *given && !used.contains(field)) else {
        return Ok(());
    };
    let users: Vec<String> =
        Operation::ALL.iter().filter(|op| op.fields().contains(field)).map(|op| format!("`{}`", op.name())).collect();
    let used: Vec<String> = used.iter().map(|field| format!("`{field}`")).collect();
    Err(ToolError::invalid_arguments(format!(
        "operation `{}` does not use `{field}` (it takes {}); `{field}` is for {}. \
         Leave it out or pick that operation.",
        operation.name(),
        used.join(", "),
        users.join(" and "),
    )))
}

fn required(operation: Operation, field: &str, value: Option<String>, example: &str) -> Result<String, ToolError> {
    value.ok_or_else(|| {
        ToolError::invalid_arguments(format!("operation `{}` needs `{field}`, e.g. {example}", operation.name()))
    })
}

/// Looks up an IANA time zone name, or a fixed offset such as "+05:30".
fn lookup_zone(field: &str, name: &str) -> Result<TimeZone, ToolError> {
    let name = name.trim();
    if let Ok(zone) = TZDB.get(name) {
        return Ok(zone);
    }
    // The temporal parser also reads offsets (and POSIX TZ strings, which are not offered).
    if let Ok(zone) = DateTimeParser::new().parse_time_zone_with(&TZDB, name)
        && zone.to_fixed_offset().is_ok()
    {
        return Ok(zone);
    }
    let suggestions = suggest_zones(name);
    let hint = if suggestions.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = suggestions.iter().map(|zone| format!("\"{zone}\"")).collect();
        format!(" Did you mean {}?", quoted.join(" or "))
    };
    Err(ToolError::invalid_arguments(format!(
        "`{field}`: unknown time zone `{name}`; it must be an IANA time zone name like \"Europe/Paris\" or \
         \"America/New_York\" (or a fixed offset like \"+05:30\").{hint}"
    )))
}

/// Common abbreviations that are not IANA names, and the zone usually meant by them.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("PT", "America/Los_Angeles"),
    ("PST", "America/Los_Angeles"),
    ("PDT", "America/Los_Angeles"),
    ("MDT", "America/Denver"),
    ("CT", "America/Chicago"),
    ("CST", "America/Chicago"),
    ("CDT", "America/Chicago"),
    ("ET", "America/New_York"),
    ("EDT", "America/New_York"),
    ("BST", "Europe/London"),
    ("CEST", "Europe/Paris"),
    ("IST", "Asia/Kolkata"),
    ("JST", "Asia/Tokyo"),
    ("AEST", "Australia/Sydney"),
    ("AEDT", "Australia/Sydney"),
];

/// Zones the model may have meant by `name`: for an abbreviation, its usual zone; otherwise
/// up to three zones whose name contains it ("new york" -> "America/New_York").
fn suggest_zones(name: &str) -> Vec<String> {
    if let Some((_, zone)) = ABBREVIATIONS.iter().find(|(abbreviation, _)| abbreviation.eq_ignore_ascii_case(name)) {
        return vec![(*zone).to_owned()];
    }
    let wanted = name.to_ascii_lowercase().replace(' ', "_");
    if wanted.len() < 3 {
        return Vec::new();
    }
    TZDB.available()
        .map(|zone| zone.to_string())
        .filter(|zone| zone.to_ascii_lowercase().contains(&wanted))
        .take(3)
        .collect()
}

fn instant_or_now(instant: Option<String>, zone: &WorkZone) -> Result<Zoned, ToolError> {
    match instant {
        Some(text) => read_instant("instant", &text, zone),
        None => zone.now(),
    }
}

/// Reads an RFC 3339 / ISO 8601 date-time (RFC 9557 zone annotations included), or an
/// RFC 2822 one as found in e-mail headers.
fn read_instant(field: &str, text: &str, zone: &WorkZone) -> Result<Zoned, ToolError> {
    let text = text.trim();
    let zoned = match Pieces::parse(text) {
        Ok(pieces) => from_pieces(field, text, &pieces, zone)?,
        Err(iso_error) => rfc2822::parse(text).map_err(|_| {
            ToolError::invalid_arguments(format!(
                "`{field}`: cannot read `{text}` as a date-time: {iso_error}. Accepted forms: {INSTANT_EXAMPLES}; \
                 for other layouts use operation `parse` with a strftime `format`."
            ))
        })?,
    };
    Ok(zone.adopt(zoned))
}

fn from_pieces(field: &str, text: &str, pieces: &Pieces<'_>, zone: &WorkZone) -> Result<Zoned, ToolError> {
    let datetime = pieces.date().to_datetime(pieces.time().unwrap_or(civil::Time::midnight()));
    let annotated = match pieces.time_zone_annotation().map(|annotation| annotation.kind()) {
        Some(TimeZoneAnnotationKind::Named(name)) => Some(lookup_zone(field, name.as_str())?),
        Some(TimeZoneAnnotationKind::Offset(offset)) => Some(TimeZone::fixed(*offset)),
        Some(_) => {
            return Err(ToolError::invalid_arguments(format!(
                "`{field}`: the bracketed time zone in `{text}` is not supported; use an IANA name like \
                 \"[Europe/Paris]\""
            )));
        }
        None => None,
    };
    match (annotated, pieces.to_numeric_offset()) {
        (Some(tz), Some(offset)) => {
            // An offset that the zone never had at that time is rejected, not silently corrected.
            OffsetConflict::Reject.resolve(datetime, offset, tz).and_then(|ambiguous| ambiguous.unambiguous()).map_err(
                |err| {
                    ToolError::invalid_arguments(format!(
                        "`{field}`: `{text}`: {err}. Drop the offset or the bracketed zone, or correct the offset."
                    ))
                },
            )
        }
        (Some(tz), None) => resolve_local(field, text, datetime, &tz),
        (None, Some(offset)) => {
            let zone = if offset == Offset::UTC { TimeZone::UTC } else { TimeZone::fixed(offset) };
            offset
                .to_timestamp(datetime)
                .map(|timestamp| timestamp.to_zoned(zone))
                .map_err(|err| out_of_range(field, text, &err))
        }
        (None, None) => resolve_local(field, text, datetime, &zone.local()?),
    }
}

/// Reads `text` laid out as the strftime pattern `format`.
fn read_with_format(text: &str, format: &str, zone: &WorkZone) -> Result<Zoned, ToolError> {
    let parsed = strtime::parse(format, text).map_err(|err| {
        ToolError::invalid_arguments(format!("`instant`: `{text}` does not match `format` `{format}`: {err}"))
    })?;
    let local_datetime = || {
        parsed.to_datetime().map_err(|err| {
            ToolError::invalid_arguments(format!(
                "`format`: `{format}` must read at least a year, month and day (e.g. \"%Y-%m-%d\"), or \"%s\": {err}"
            ))
        })
    };
    let zoned = match (parsed.offset(), parsed.iana_time_zone()) {
        (None, zone_name) => {
            let tz = match zone_name {
                Some(name) => lookup_zone("instant", name)?,
                None => zone.local()?,
            };
            match parsed.timestamp() {
                Some(timestamp) => timestamp.to_zoned(tz),
                None => resolve_local("instant", text, local_datetime()?, &tz)?,
            }
        }
        (Some(_), _) => parsed.to_zoned_with(&TZDB).map_err(|err| {
            ToolError::invalid_arguments(format!("`instant`: `{text}` read with `format` `{format}`: {err}"))
        })?,
    };
    Ok(zone.adopt(zoned))
}

/// Places a wall-clock date-time in `tz`, refusing the times a DST change skips or repeats:
/// guessing there would silently shift the answer by an hour.
fn resolve_local(field: &str, text: &str, datetime: civil::DateTime, tz: &TimeZone) -> Result<Zoned, ToolError> {
    let ambiguous = tz.to_ambiguous_zoned(datetime);
    let zone_name = tz.iana_name().unwrap_or("this time zone");
    let show =
        |zoned: Result<Zoned, jiff::Error>| zoned.map(|zoned| format!("\"{}\"", iso(&zoned))).unwrap_or_default();
    match ambiguous.offset() {
        AmbiguousOffset::Unambiguous { .. } => ambiguous.compatible().map_err(|err| out_of_range(field, text, &err)),
        AmbiguousOffset::Gap { before, after } => Err(ToolError::invalid_arguments(format!(
            "`{field}`: `{text}` does not exist in {zone_name}: the clocks jump from {} to {} there (a daylight \
             saving gap), so this wall-clock time is skipped. Use a time that exists, e.g. {} (moved forward past \
             the gap) or {} (moved back before it).",
            offset_text(before),
            offset_text(after),
            show(ambiguous.clone().later()),
            show(ambiguous.clone().earlier()),
        ))),
        AmbiguousOffset::Fold { before, after } => Err(ToolError::invalid_arguments(format!(
            "`{field}`: `{text}` is ambiguous in {zone_name}: the clocks go back from {} to {} there (a daylight \
             saving fold), so this wall-clock time happens twice. Write the offset to choose: {} (the first) or {} \
             (the second).",
            offset_text(before),
            offset_text(after),
            show(ambiguous.clone().earlier()),
            show(ambiguous.clone().later()),
        ))),
    }
}

fn out_of_range(field: &str, text: &str, err: &jiff::Error) -> ToolError {
    ToolError::invalid_arguments(format!(
        "`{field}`: `{text}` is outside the supported range (years -9999 to 9999): {err}"
    ))
}

fn add(start: &Zoned, duration: &str) -> Result<Zoned, ToolError> {
    let span: Span = duration.trim().parse().map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`duration`: cannot read `{duration}` as a duration: {err}. Use {DURATION_EXAMPLES}."
        ))
    })?;
    start.checked_add(span).map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`duration`: {} plus `{duration}` is outside the supported range (years -9999 to 9999): {err}",
            iso(start)
        ))
    })
}

fn difference(start: &Zoned, end: &str, largest: Unit) -> Result<DateTimeResult, ToolError> {
    // Read `end` in the start's zone and compare within it: calendar units (days and up)
    // only make sense in one zone, whose DST rules decide how long each day is.
    let start_zone = WorkZone { explicit: Some(start.time_zone().clone()), host: None };
    let end = read_instant("end", end, &start_zone)?;
    let span = start.until((jiff::Unit::from(largest), &end)).map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`largest_unit`: the span from {} to {} cannot be expressed in it: {err}; try a larger unit",
            iso(start),
            iso(&end)
        ))
    })?;
    Ok(DateTimeResult::Difference(Difference {
        start: iso(start),
        end: iso(&end),
        iso: span.to_string(),
        friendly: FRIENDLY.span_to_string(&span),
        total_seconds: start.timestamp().duration_until(end.timestamp()).as_secs(),
    }))
}

fn describe(zoned: &Zoned, formatted: Option<String>) -> DateTimeResult {
    let info = zoned.time_zone().to_offset_info(zoned.timestamp());
    DateTimeResult::Instant(Instant {
        iso: iso(zoned),
        time_zone: zoned.time_zone().iana_name().map_or_else(|| offset_text(zoned.offset()), str::to_owned),
        offset: offset_text(zoned.offset()),
        abbreviation: info.abbreviation().to_owned(),
        unix_seconds: zoned.timestamp().as_second(),
        weekday: weekday_name(zoned.weekday()).to_owned(),
        formatted,
    })
}

/// RFC 3339 with the offset, plus the IANA zone in brackets when there is one (RFC 9557), so
/// that passing the value back as `instant` keeps the zone's DST rules.
fn iso(zoned: &Zoned) -> String {
    match zoned.time_zone().iana_name() {
        Some(_) => zoned.to_string(),
        None => zoned.timestamp().display_with_offset(zoned.offset()).to_string(),
    }
}

/// "+05:30", "-04:00", "+00:00": always hours and minutes (jiff's `Display` writes "-04").
fn offset_text(offset: Offset) -> String {
    let sign = if offset.is_negative() { '-' } else { '+' };
    let total = offset.seconds().unsigned_abs();
    let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60);
    if seconds == 0 {
        format!("{sign}{hours:02}:{minutes:02}")
    } else {
        format!("{sign}{hours:02}:{minutes:02}:{seconds:02}")
    }
}

fn weekday_name(weekday: jiff::civil::Weekday) -> &'static str {
    use jiff::civil::Weekday;
    match weekday {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}
