//! The `datetime` tool's native tests. (Long: one small test per operation, time zone rule
//! and error.)

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use toolcell_guest::Tool;

use super::*;

/// The arguments of one call, so tests name only the fields they use.
#[derive(Default)]
struct Call {
    time_zone: Option<&'static str>,
    instant: Option<&'static str>,
    format: Option<&'static str>,
    duration: Option<&'static str>,
    end: Option<&'static str>,
    largest_unit: Option<Unit>,
    to_time_zone: Option<&'static str>,
    context: Context,
}

impl Call {
    fn run(self, operation: Operation) -> Result<DateTimeResult, ToolError> {
        let owned = |value: Option<&str>| value.map(str::to_owned);
        datetime(
            operation,
            owned(self.time_zone),
            owned(self.instant),
            owned(self.format),
            owned(self.duration),
            owned(self.end),
            self.largest_unit,
            owned(self.to_time_zone),
            self.context,
        )
    }

    fn instant(self, operation: Operation) -> Instant {
        match self.run(operation) {
            Ok(DateTimeResult::Instant(instant)) => instant,
            other => panic!("expected an instant, got {other:?}"),
        }
    }

    fn difference(self) -> Difference {
        match self.run(Operation::Difference) {
            Ok(DateTimeResult::Difference(difference)) => difference,
            other => panic!("expected a difference, got {other:?}"),
        }
    }

    /// The message of the `InvalidArguments` error the call must fail with.
    fn invalid(self, operation: Operation) -> String {
        match self.run(operation) {
            Err(ToolError::InvalidArguments(message)) => message,
            other => panic!("expected invalid arguments, got {other:?}"),
        }
    }
}

fn host_zone(name: &str) -> Context {
    let mut host = Map::new();
    host.insert("time_zone".to_owned(), Value::String(name.to_owned()));
    Context::new("call-1", host)
}

/// Runs the JSON path: arguments text in, result text out, parsed back for comparison.
fn invoke(arguments: Value, context: Context) -> Result<Value, ToolError> {
    let output = DatetimeTool::invoke(&arguments.to_string(), context)?;
    Ok(serde_json::from_str(&output).expect("the tool returns JSON"))
}

fn assert_mentions(message: &str, needles: &[&str]) {
    for needle in needles {
        assert!(message.contains(needle), "message {message:?} should mention {needle:?}");
    }
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs() as i64).expect("clock after 1970")
}

// --- schema -------------------------------------------------------------------------------

#[test]
fn parameters_schema() {
    insta::assert_json_snapshot!(DatetimeTool::metadata().parameters_schema);
}

#[test]
fn output_schema() {
    insta::assert_json_snapshot!(DatetimeTool::metadata().output_schema);
}

#[test]
fn metadata_names_the_tool() {
    let metadata = DatetimeTool::metadata();
    assert_eq!(metadata.name, "datetime");
    assert_eq!(metadata.version, "1.0.0");
    assert!(metadata.description.contains("`difference`"));
}

// --- now ----------------------------------------------------------------------------------

#[test]
fn now_is_the_current_time_in_utc_by_default() {
    let before = unix_now();
    let now = Call::default().instant(Operation::Now);
    let after = unix_now();
    assert!((before..=after).contains(&now.unix_seconds), "{now:?} not within [{before}, {after}]");
    assert_eq!(now.time_zone, "UTC");
    assert!(!now.iso.contains('.'), "whole seconds: {}", now.iso);
    let parsed: Zoned = now.iso.parse().expect("`iso` parses back");
    assert_eq!(parsed.timestamp().as_second(), now.unix_seconds);
}

#[test]
fn now_in_a_time_zone_is_the_same_instant() {
    let before = unix_now();
    let now = Call { time_zone: Some("Asia/Tokyo"), ..Call::default() }.instant(Operation::Now);
    assert!((before..=unix_now()).contains(&now.unix_seconds));
    assert_eq!(
        (now.time_zone.as_str(), now.offset.as_str(), now.abbreviation.as_str()),
        ("Asia/Tokyo", "+09:00", "JST")
    );
    assert!(now.iso.ends_with("+09:00[Asia/Tokyo]"), "{}", now.iso);
}

#[test]
fn now_uses_the_host_time_zone() {
    let now = Call { context: host_zone("Europe/Paris"), ..Call::default() }.instant(Operation::Now);
    assert_eq!(now.time_zone, "Europe/Paris");
    // An explicit zone beats the host's.
    let now =
        Call { time_zone: Some("UTC"), context: host_zone("Europe/Paris"), ..Call::default() }.instant(Operation::Now);
    assert_eq!(now.time_zone, "UTC");
}

#[test]
fn now_through_json() {
    let result = invoke(json!({"operation": "now", "time_zone": "America/New_York"}), Context::default()).unwrap();
    assert_eq!(result["kind"], "instant");
    assert_eq!(result["time_zone"], "America/New_York");
    let seconds = result["unix_seconds"].as_i64().unwrap();
    assert!((seconds - unix_now()).abs() <= 5, "{result}");
}

// --- parse --------------------------------------------------------------------------------

#[test]
fn parse_keeps_the_written_offset() {
    let parsed = Call { instant: Some("2024-03-10T08:30:00-05:00"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(
        parsed,
        Instant {
            iso: "2024-03-10T08:30:00-05:00".to_owned(),
            time_zone: "-05:00".to_owned(),
            offset: "-05:00".to_owned(),
            abbreviation: "-05".to_owned(),
            unix_seconds: 1_710_077_400,
            weekday: "Sunday".to_owned(),
            formatted: None,
        }
    );
}

#[test]
fn parse_zulu_and_zero_offsets_as_utc() {
    for text in ["2024-03-10T13:30:00Z", "2024-03-10T13:30:00+00:00", "2024-03-10t13:30:00z", "20240310T133000Z"] {
        let parsed = Call { instant: Some(text), ..Call::default() }.instant(Operation::Parse);
        assert_eq!(parsed.iso, "2024-03-10T13:30:00+00:00[UTC]", "{text}");
        assert_eq!(parsed.unix_seconds, 1_710_077_400, "{text}");
    }
}

#[test]
fn parse_reads_a_bracketed_zone() {
    let parsed = Call { instant: Some("2024-07-01T08:30[Europe/Paris]"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-07-01T08:30:00+02:00[Europe/Paris]");
    assert_eq!((parsed.time_zone.as_str(), parsed.abbreviation.as_str()), ("Europe/Paris", "CEST"));
    // The offset and the zone may both be written when they agree.
    let parsed =
        Call { instant: Some("2024-07-01T08:30+02:00[Europe/Paris]"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(parsed.unix_seconds, 1_719_815_400);
}

#[test]
fn parse_reads_a_local_time_in_the_time_zone() {
    // UTC when nothing says otherwise.
    let parsed = Call { instant: Some("2024-03-10 08:30"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T08:30:00+00:00[UTC]");
    let parsed = Call { instant: Some("2024-03-10 08:30"), time_zone: Some("America/New_York"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T08:30:00-04:00[America/New_York]");
    // A date alone is midnight.
    let parsed = Call { instant: Some("2024-12-25"), time_zone: Some("Europe/Paris"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(
        (parsed.iso.as_str(), parsed.weekday.as_str()),
        ("2024-12-25T00:00:00+01:00[Europe/Paris]", "Wednesday")
    );
}

#[test]
fn parse_converts_into_an_explicit_time_zone() {
    let parsed =
        Call { instant: Some("2024-03-10T08:30:00-05:00"), time_zone: Some("Europe/Paris"), ..Call::default() }
            .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T14:30:00+01:00[Europe/Paris]");
    assert_eq!(parsed.unix_seconds, 1_710_077_400);
}

#[test]
fn parse_keeps_fractional_seconds() {
    let parsed =
        Call { instant: Some("2024-03-10T08:30:00.123456789+05:30"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T08:30:00.123456789+05:30");
    assert_eq!(parsed.unix_seconds, 1_710_039_600);
}

#[test]
fn parse_reads_rfc_2822() {
    let parsed = Call { instant: Some("Sun, 10 Mar 2024 08:30:00 -0500"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T08:30:00-05:00");
}

#[test]
fn parse_with_a_format() {
    let parsed = Call {
        instant: Some("10/03/2024 08:30"),
        format: Some("%d/%m/%Y %H:%M"),
        time_zone: Some("Europe/Paris"),
        ..Call::default()
    }
    .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T08:30:00+01:00[Europe/Paris]");

    let parsed =
        Call { instant: Some("Mar 10 2024"), format: Some("%b %d %Y"), ..Call::default() }.instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T00:00:00+00:00[UTC]");
}

#[test]
fn parse_unix_seconds_with_a_format() {
    let parsed = Call {
        instant: Some("1710077400"),
        format: Some("%s"),
        time_zone: Some("America/New_York"),
        ..Call::default()
    }
    .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-03-10T09:30:00-04:00[America/New_York]");
}

#[test]
fn parse_with_a_format_that_reads_the_offset_or_zone() {
    let parsed = Call {
        instant: Some("2024-07-14 21:14 -04:00 America/New_York"),
        format: Some("%F %H:%M %:z %:Q"),
        ..Call::default()
    }
    .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-07-14T21:14:00-04:00[America/New_York]");

    let parsed = Call { instant: Some("2024-07-14 21:14 +0530"), format: Some("%F %H:%M %z"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-07-14T21:14:00+05:30");

    let parsed = Call { instant: Some("2024-07-14 21:14 Asia/Tokyo"), format: Some("%F %H:%M %Q"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(parsed.iso, "2024-07-14T21:14:00+09:00[Asia/Tokyo]");
}

#[test]
fn parse_through_json() {
    let result = invoke(
        json!({"operation": "parse", "instant": "2024-03-10T08:30:00-05:00", "time_zone": "America/New_York"}),
        Context::default(),
    )
    .unwrap();
    assert_eq!(
        result,
        json!({
            "kind": "instant",
            "iso": "2024-03-10T09:30:00-04:00[America/New_York]",
            "time_zone": "America/New_York",
            "offset": "-04:00",
            "abbreviation": "EDT",
            "unix_seconds": 1_710_077_400,
            "weekday": "Sunday",
        })
    );
}

// --- DST gaps and folds -------------------------------------------------------------------

#[test]
fn a_time_in_the_new_york_spring_gap_is_rejected() {
    let message = Call { instant: Some("2024-03-10 02:30"), time_zone: Some("America/New_York"), ..Call::default() }
        .invalid(Operation::Parse);
    assert_mentions(
        &message,
        &[
            "`instant`",
            "does not exist in America/New_York",
            "gap",
            "\"2024-03-10T03:30:00-04:00[America/New_York]\"",
            "\"2024-03-10T01:30:00-05:00[America/New_York]\"",
        ],
    );
}

#[test]
fn a_time_in_the_new_york_autumn_fold_is_rejected() {
    let message = Call { instant: Some("2024-11-03 01:30"), time_zone: Some("America/New_York"), ..Call::default() }
        .invalid(Operation::Parse);
    assert_mentions(
        &message,
        &[
            "`instant`",
            "ambiguous in America/New_York",
            "twice",
            "\"2024-11-03T01:30:00-04:00[America/New_York]\" (the first)",
            "\"2024-11-03T01:30:00-05:00[America/New_York]\" (the second)",
        ],
    );
}

#[test]
fn the_suggested_fold_offsets_resolve_it() {
    let first = Call { instant: Some("2024-11-03T01:30:00-04:00[America/New_York]"), ..Call::default() }
        .instant(Operation::Parse);
    let second =
        Call { instant: Some("2024-11-03T01:30:00-05:00"), time_zone: Some("America/New_York"), ..Call::default() }
            .instant(Operation::Parse);
    assert_eq!(second.unix_seconds - first.unix_seconds, 3600);
    assert_eq!((first.abbreviation.as_str(), second.abbreviation.as_str()), ("EDT", "EST"));
}

#[test]
fn paris_gap_and_fold_are_rejected() {
    let message = Call { instant: Some("2024-03-31T02:30[Europe/Paris]"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "does not exist in Europe/Paris", "from +01:00 to +02:00"]);
    let message = Call { instant: Some("2024-10-27 02:30"), time_zone: Some("Europe/Paris"), ..Call::default() }
        .invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "ambiguous in Europe/Paris", "from +02:00 to +01:00"]);
}

#[test]
fn a_gap_in_end_or_a_formatted_parse_is_rejected_too() {
    let message = Call {
        instant: Some("2024-03-01"),
        end: Some("2024-03-10 02:30"),
        time_zone: Some("America/New_York"),
        ..Call::default()
    }
    .invalid(Operation::Difference);
    assert_mentions(&message, &["`end`", "does not exist"]);
    let message = Call {
        instant: Some("31/03/2024 02:30"),
        format: Some("%d/%m/%Y %H:%M"),
        time_zone: Some("Europe/Paris"),
        ..Call::default()
    }
    .invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "does not exist in Europe/Paris"]);
}

// --- format -------------------------------------------------------------------------------

#[test]
fn format_renders_strftime() {
    let formatted = Call {
        instant: Some("2024-03-10T08:30:00[America/New_York]"),
        format: Some("%A, %B %-d, %Y at %-I:%M %p %Z (%:z, day %j, week %V)"),
        ..Call::default()
    }
    .instant(Operation::Format);
    assert_eq!(
        formatted.formatted.as_deref(),
        Some("Sunday, March 10, 2024 at 8:30 AM EDT (-04:00, day 070, week 10)")
    );
    assert_eq!(formatted.iso, "2024-03-10T08:30:00-04:00[America/New_York]");
}

#[test]
fn format_in_another_time_zone() {
    let formatted = Call {
        instant: Some("2024-03-10T08:30:00Z"),
        format: Some("%Y-%m-%d %H:%M %Z"),
        time_zone: Some("Asia/Kolkata"),
        ..Call::default()
    }
    .instant(Operation::Format);
    assert_eq!(formatted.formatted.as_deref(), Some("2024-03-10 14:00 IST"));
}

#[test]
fn format_defaults_to_now() {
    let before = unix_now();
    let formatted = Call { format: Some("%s"), ..Call::default() }.instant(Operation::Format);
    let seconds: i64 = formatted.formatted.as_deref().and_then(|text| text.parse().ok()).expect("%s is a number");
    assert!((before..=unix_now()).contains(&seconds));
}

#[test]
fn format_through_json() {
    let result = invoke(
        json!({"operation": "format", "instant": "2024-07-04T12:00:00-04:00", "format": "%d.%m.%Y"}),
        Context::default(),
    )
    .unwrap();
    assert_eq!(result["formatted"], "04.07.2024");
    assert_eq!(result["weekday"], "Thursday");
}

// --- add ----------------------------------------------------------------------------------

#[test]
fn adding_a_day_across_spring_forward_keeps_the_wall_time() {
    let start = Some("2024-03-09T12:00[America/New_York]");
    let day = Call { instant: start, duration: Some("1 day"), ..Call::default() }.instant(Operation::Add);
    assert_eq!(day.iso, "2024-03-10T12:00:00-04:00[America/New_York]");
    let hours = Call { instant: start, duration: Some("24 hours"), ..Call::default() }.instant(Operation::Add);
    assert_eq!(hours.iso, "2024-03-10T13:00:00-04:00[America/New_York]");
    assert_eq!(hours.unix_seconds - day.unix_seconds, 3600);
}

#[test]
fn adding_across_fall_back_in_paris() {
    let start = Some("2024-10-26T12:00");
    let day = Call { instant: start, time_zone: Some("Europe/Paris"), duration: Some("P1D"), ..Call::default() }
        .instant(Operation::Add);
    assert_eq!(day.iso, "2024-10-27T12:00:00+01:00[Europe/Paris]");
    let hours = Call { instant: start, time_zone: Some("Europe/Paris"), duration: Some("PT24H"), ..Call::default() }
        .instant(Operation::Add);
    assert_eq!(hours.iso, "2024-10-27T11:00:00+01:00[Europe/Paris]");
}

#[test]
fn adding_into_a_gap_moves_forward_past_it() {
    let added = Call { instant: Some("2024-03-09T02:30[America/New_York]"), duration: Some("1d"), ..Call::default() }
        .instant(Operation::Add);
    assert_eq!(added.iso, "2024-03-10T03:30:00-04:00[America/New_York]");
}

#[test]
fn adding_with_a_fixed_offset_ignores_dst() {
    // Without a zone name there are no DST rules: the offset stays.
    let added = Call { instant: Some("2024-03-09T12:00:00-05:00"), duration: Some("1 day"), ..Call::default() }
        .instant(Operation::Add);
    assert_eq!(added.iso, "2024-03-10T12:00:00-05:00");
}

#[test]
fn add_calendar_and_negative_durations() {
    let cases = [
        ("P1M", "2024-02-29T00:00:00+00:00[UTC]"),
        ("1 month", "2024-02-29T00:00:00+00:00[UTC]"),
        ("-P2W", "2024-01-17T00:00:00+00:00[UTC]"),
        ("3 days ago", "2024-01-28T00:00:00+00:00[UTC]"),
        ("-2h 30m", "2024-01-30T21:30:00+00:00[UTC]"),
        ("PT1.5H", "2024-01-31T01:30:00+00:00[UTC]"),
        ("1 year, 2 months, 3 days", "2025-04-03T00:00:00+00:00[UTC]"),
    ];
    for (duration, expected) in cases {
        let added =
            Call { instant: Some("2024-01-31"), duration: Some(duration), ..Call::default() }.instant(Operation::Add);
        assert_eq!(added.iso, expected, "{duration}");
    }
}

#[test]
fn add_through_json_with_the_host_zone() {
    let result = invoke(
        json!({"operation": "add", "instant": "2024-03-30 12:00", "duration": "1 day"}),
        host_zone("Europe/Paris"),
    )
    .unwrap();
    assert_eq!(result["iso"], "2024-03-31T12:00:00+02:00[Europe/Paris]");
    assert_eq!(result["abbreviation"], "CEST");
}

// --- difference ---------------------------------------------------------------------------

#[test]
fn difference_across_spring_forward() {
    let difference =
        Call { instant: Some("2024-03-09T12:00[America/New_York]"), end: Some("2024-03-10 12:00"), ..Call::default() }
            .difference();
    assert_eq!(
        difference,
        Difference {
            start: "2024-03-09T12:00:00-05:00[America/New_York]".to_owned(),
            end: "2024-03-10T12:00:00-04:00[America/New_York]".to_owned(),
            iso: "P1D".to_owned(),
            friendly: "1 day".to_owned(),
            total_seconds: 23 * 3600,
        }
    );
    let hours = Call {
        instant: Some("2024-03-09T12:00[America/New_York]"),
        end: Some("2024-03-10 12:00"),
        largest_unit: Some(Unit::Hours),
        ..Call::default()
    }
    .difference();
    assert_eq!((hours.iso.as_str(), hours.friendly.as_str()), ("PT23H", "23 hours"));
}

#[test]
fn difference_in_each_largest_unit() {
    let cases = [
        (Unit::Years, "P1Y2M3DT4H5M6S", "1 year, 2 months, 3 days, 4 hours, 5 minutes, 6 seconds"),
        (Unit::Months, "P14M3DT4H5M6S", "14 months, 3 days, 4 hours, 5 minutes, 6 seconds"),
        (Unit::Weeks, "P61W1DT4H5M6S", "61 weeks, 1 day, 4 hours, 5 minutes, 6 seconds"),
        (Unit::Days, "P428DT4H5M6S", "428 days, 4 hours, 5 minutes, 6 seconds"),
        (Unit::Hours, "PT10276H5M6S", "10276 hours, 5 minutes, 6 seconds"),
        (Unit::Minutes, "PT616565M6S", "616565 minutes, 6 seconds"),
        (Unit::Seconds, "PT36993906S", "36993906 seconds"),
    ];
    for (unit, iso, friendly) in cases {
        let difference = Call {
            instant: Some("2023-01-01T00:00:00Z"),
            end: Some("2024-03-04T04:05:06Z"),
            largest_unit: Some(unit),
            ..Call::default()
        }
        .difference();
        assert_eq!((difference.iso.as_str(), difference.friendly.as_str()), (iso, friendly), "{unit:?}");
        assert_eq!(difference.total_seconds, 36_993_906);
    }
}

#[test]
fn a_negative_difference() {
    let difference =
        Call { instant: Some("2024-03-04T12:00:00Z"), end: Some("2024-03-01T00:00:00.5Z"), ..Call::default() }
            .difference();
    assert_eq!(difference.iso, "-P3DT11H59M59.5S");
    assert_eq!(difference.friendly, "3 days, 11 hours, 59 minutes, 59.5 seconds ago");
    assert_eq!(difference.total_seconds, -(3 * 86_400 + 11 * 3600 + 59 * 60 + 59));
}

#[test]
fn difference_expresses_end_in_the_start_zone() {
    let difference = Call {
        instant: Some("2024-03-10T08:00[Europe/Paris]"),
        end: Some("2024-03-10T08:00-05:00"),
        ..Call::default()
    }
    .difference();
    assert_eq!(difference.end, "2024-03-10T14:00:00+01:00[Europe/Paris]");
    assert_eq!((difference.iso.as_str(), difference.total_seconds), ("PT6H", 6 * 3600));
}

#[test]
fn difference_until_a_date_from_now() {
    let difference =
        Call { end: Some("2000-01-01T00:00:00Z"), largest_unit: Some(Unit::Seconds), ..Call::default() }.difference();
    let expected = 946_684_800 - unix_now();
    assert!((difference.total_seconds - expected).abs() <= 5, "{difference:?}");
    assert!(difference.friendly.ends_with(" ago"), "{difference:?}");
}

#[test]
fn difference_through_json() {
    let result = invoke(
        json!({"operation": "difference", "instant": "2024-01-01", "end": "2024-12-25", "largest_unit": "months"}),
        Context::default(),
    )
    .unwrap();
    assert_eq!(
        result,
        json!({
            "kind": "difference",
            "start": "2024-01-01T00:00:00+00:00[UTC]",
            "end": "2024-12-25T00:00:00+00:00[UTC]",
            "iso": "P11M24D",
            "friendly": "11 months, 24 days",
            "total_seconds": 359 * 86_400,
        })
    );
}

// --- convert ------------------------------------------------------------------------------

#[test]
fn convert_between_zones() {
    let converted = Call {
        instant: Some("2024-03-09T12:00[America/New_York]"),
        to_time_zone: Some("asia/tokyo"),
        ..Call::default()
    }
    .instant(Operation::Convert);
    assert_eq!(converted.iso, "2024-03-10T02:00:00+09:00[Asia/Tokyo]");
    assert_eq!((converted.weekday.as_str(), converted.unix_seconds), ("Sunday", 1_710_003_600));
}

#[test]
fn convert_follows_each_zone_dst() {
    // New York has switched to summer time, Paris has not yet: 5 hours apart, not 6.
    let converted = Call {
        instant: Some("2024-03-15 09:00"),
        time_zone: Some("America/New_York"),
        to_time_zone: Some("Europe/Paris"),
        ..Call::default()
    }
    .instant(Operation::Convert);
    assert_eq!(converted.iso, "2024-03-15T14:00:00+01:00[Europe/Paris]");
    let converted = Call {
        instant: Some("2024-04-15 09:00"),
        time_zone: Some("America/New_York"),
        to_time_zone: Some("Europe/Paris"),
        ..Call::default()
    }
    .instant(Operation::Convert);
    assert_eq!(converted.iso, "2024-04-15T15:00:00+02:00[Europe/Paris]");
}

#[test]
fn convert_to_a_fixed_offset() {
    let converted = Call { instant: Some("2024-03-10T00:00:00Z"), to_time_zone: Some("+05:30"), ..Call::default() }
        .instant(Operation::Convert);
    assert_eq!((converted.iso.as_str(), converted.time_zone.as_str()), ("2024-03-10T05:30:00+05:30", "+05:30"));
}

#[test]
fn convert_through_json_reads_local_times_in_the_host_zone() {
    let result = invoke(
        json!({"operation": "convert", "instant": "2024-07-01 09:00", "to_time_zone": "UTC"}),
        host_zone("America/Los_Angeles"),
    )
    .unwrap();
    assert_eq!(result["iso"], "2024-07-01T16:00:00+00:00[UTC]");
}

// --- host zone ----------------------------------------------------------------------------

#[test]
fn the_host_zone_applies_only_to_local_times() {
    let local = Call { instant: Some("2024-07-01 12:00"), context: host_zone("Europe/Paris"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(local.iso, "2024-07-01T12:00:00+02:00[Europe/Paris]");
    let offset = Call { instant: Some("2024-07-01T12:00:00Z"), context: host_zone("Europe/Paris"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(offset.iso, "2024-07-01T12:00:00+00:00[UTC]");
}

#[test]
fn a_bad_host_zone_is_reported_only_when_needed() {
    let message = Call { context: host_zone("Mars/Olympus"), ..Call::default() }.invalid(Operation::Now);
    assert_mentions(&message, &["host's default time zone `Mars/Olympus`", "pass `time_zone`"]);
    // An explicit zone, or an instant with its own offset, does not need it.
    let now =
        Call { time_zone: Some("UTC"), context: host_zone("Mars/Olympus"), ..Call::default() }.instant(Operation::Now);
    assert_eq!(now.time_zone, "UTC");
    let parsed = Call { instant: Some("2024-07-01T12:00:00Z"), context: host_zone("Mars/Olympus"), ..Call::default() }
        .instant(Operation::Parse);
    assert_eq!(parsed.unix_seconds, 1_719_835_200);
}

#[test]
fn a_host_zone_of_another_type_is_ignored() {
    let mut host = Map::new();
    host.insert("time_zone".to_owned(), json!(3));
    let now = Call { context: Context::new("call-1", host), ..Call::default() }.instant(Operation::Now);
    assert_eq!(now.time_zone, "UTC");
}

// --- errors -------------------------------------------------------------------------------

#[test]
fn unknown_time_zones_are_rejected_with_suggestions() {
    let message = Call { time_zone: Some("Mars/Olympus"), ..Call::default() }.invalid(Operation::Now);
    assert_mentions(&message, &["`time_zone`", "unknown time zone `Mars/Olympus`", "IANA", "\"Europe/Paris\""]);
    assert!(!message.contains("Did you mean"), "{message}");

    let message = Call { to_time_zone: Some("PST"), ..Call::default() }.invalid(Operation::Convert);
    assert_mentions(&message, &["`to_time_zone`", "`PST`", "Did you mean \"America/Los_Angeles\"?"]);

    let message = Call { time_zone: Some("new york"), ..Call::default() }.invalid(Operation::Now);
    assert_mentions(&message, &["`time_zone`", "Did you mean \"America/New_York\"?"]);

    // POSIX TZ strings are not offered: results could not name their zone.
    let message = Call { time_zone: Some("EST5EDT,M3.2.0,M11.1.0"), ..Call::default() }.invalid(Operation::Now);
    assert_mentions(&message, &["`time_zone`", "unknown time zone"]);
}

#[test]
fn an_unknown_bracketed_zone_is_rejected() {
    let message =
        Call { instant: Some("2024-03-10T08:30[Europe/Pariss]"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "unknown time zone `Europe/Pariss`"]);
    let message = Call { instant: Some("2024-07-14 Mars/Olympus"), format: Some("%F %Q"), ..Call::default() }
        .invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "unknown time zone `Mars/Olympus`"]);
}

#[test]
fn unreadable_instants_are_rejected_with_examples() {
    let message = Call { instant: Some("yesterday"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(
        &message,
        &["`instant`", "cannot read `yesterday`", "year", "\"2024-03-10T08:30:00-05:00\"", "`format`"],
    );
    let message = Call { instant: Some("2024-02-30"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "`2024-02-30`", "day"]);
    let message =
        Call { instant: Some("2024-01-01"), end: Some("next week"), ..Call::default() }.invalid(Operation::Difference);
    assert_mentions(&message, &["`end`", "cannot read `next week`"]);
}

#[test]
fn an_offset_that_contradicts_the_zone_is_rejected() {
    let message =
        Call { instant: Some("2024-03-10T08:30-05:00[Europe/Paris]"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "Europe/Paris", "offset"]);
    let message = Call {
        instant: Some("2024-07-14 21:14 -05:00 America/New_York"),
        format: Some("%F %H:%M %:z %:Q"),
        ..Call::default()
    }
    .invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "America/New_York", "offset"]);
}

#[test]
fn out_of_range_instants_are_rejected() {
    let message = Call { instant: Some("9999-12-31T23:59:59-23:59"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "outside the supported range"]);
    let message = Call { instant: Some("9999-12-31T23:00"), time_zone: Some("Pacific/Kiritimati"), ..Call::default() }
        .invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "outside the supported range"]);
}

#[test]
fn bad_format_strings_are_rejected() {
    let message = Call { instant: Some("2024-03-10T08:30:00Z"), format: Some("%Y-%K"), ..Call::default() }
        .invalid(Operation::Format);
    assert_mentions(&message, &["`format`", "`%Y-%K`", "not a valid strftime pattern", "`K`", "%Y-%m-%d"]);
}

#[test]
fn text_that_does_not_match_the_parse_format_is_rejected() {
    let message =
        Call { instant: Some("2024-03-10"), format: Some("%d/%m/%Y"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`instant`", "`2024-03-10`", "does not match `format` `%d/%m/%Y`"]);
    let message = Call { instant: Some("08:30"), format: Some("%H:%M"), ..Call::default() }.invalid(Operation::Parse);
    assert_mentions(&message, &["`format`", "`%H:%M`", "year, month and day"]);
}

#[test]
fn bad_durations_are_rejected() {
    for duration in ["soon", "1.5 days", "P1X"] {
        let message =
            Call { instant: Some("2024-01-01"), duration: Some(duration), ..Call::default() }.invalid(Operation::Add);
        assert_mentions(
            &message,
            &["`duration`", &format!("cannot read `{duration}`"), "\"P1DT2H\"", "\"2 hours 30 minutes\""],
        );
    }
}

#[test]
fn arithmetic_overflow_is_rejected() {
    let message = Call { instant: Some("2024-03-09T12:00Z"), duration: Some("P9999Y"), ..Call::default() }
        .invalid(Operation::Add);
    assert_mentions(&message, &["`duration`", "`P9999Y`", "outside the supported range", "year"]);
    let message = Call { instant: Some("-009000-01-01T00:00Z"), duration: Some("-P1000Y"), ..Call::default() }
        .invalid(Operation::Add);
    assert_mentions(&message, &["`duration`", "outside the supported range"]);
}

#[test]
fn each_operation_names_its_missing_field() {
    let cases = [
        (Operation::Parse, "operation `parse` needs `instant`"),
        (Operation::Format, "operation `format` needs `format`, e.g. \"%Y-%m-%d %H:%M %Z\""),
        (Operation::Add, "operation `add` needs `duration`, e.g. \"2h 30m\""),
        (Operation::Difference, "operation `difference` needs `end`"),
        (Operation::Convert, "operation `convert` needs `to_time_zone`, e.g. \"Asia/Tokyo\""),
    ];
    for (operation, expected) in cases {
        let message = Call::default().invalid(operation);
        assert!(message.starts_with(expected), "{message}");
    }
}

#[test]
fn fields_the_operation_ignores_are_rejected() {
    let message = Call { to_time_zone: Some("Asia/Tokyo"), ..Call::default() }.invalid(Operation::Now);
    assert_eq!(
        message,
        "operation `now` does not use `to_time_zone` (it takes `time_zone`); `to_time_zone` is for `convert`. \
         Leave it out or pick that operation."
    );
    let message =
        Call { instant: Some("2024-01-01"), duration: Some("1d"), end: Some("2024-02-01"), ..Call::default() }
            .invalid(Operation::Add);
    assert_mentions(&message, &["operation `add` does not use `end`", "`end` is for `difference`"]);
    let message = Call { instant: Some("2024-01-01"), largest_unit: Some(Unit::Days), ..Call::default() }
        .invalid(Operation::Parse);
    assert_mentions(&message, &["does not use `largest_unit`"]);
    let message = Call { instant: Some("2024-01-01"), format: Some("%Y"), ..Call::default() }.invalid(Operation::Now);
    assert_mentions(&message, &["does not use `instant`", "`instant` is for `parse` and `format` and `add`"]);
}

#[test]
fn blank_fields_count_as_absent() {
    let now = Call { time_zone: Some(" "), instant: Some(""), to_time_zone: Some(""), ..Call::default() }
        .instant(Operation::Now);
    assert_eq!(now.time_zone, "UTC");
    let message = Call { duration: Some("  "), ..Call::default() }.invalid(Operation::Add);
    assert!(message.starts_with("operation `add` needs `duration`"), "{message}");
}

#[test]
fn json_arguments_outside_the_schema_are_rejected() {
    for arguments in [
        json!({"operation": "subtract"}),
        json!({"operation": "now", "zone": "UTC"}),
        json!({"operation": "difference", "end": "2024-01-01", "largest_unit": "decades"}),
        json!({}),
    ] {
        match invoke(arguments.clone(), Context::default()) {
            Err(ToolError::InvalidArguments(message)) => assert!(message.contains("schema"), "{message}"),
            other => panic!("{arguments}: expected invalid arguments, got {other:?}"),
        }
    }
}

#[test]
fn errors_through_json() {
    let result =
        invoke(json!({"operation": "convert", "instant": "2024-01-01", "to_time_zone": "Nowhere"}), Context::default());
    match result {
        Err(ToolError::InvalidArguments(message)) => assert_mentions(&message, &["`to_time_zone`", "`Nowhere`"]),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[test]
fn the_bundled_database_knows_the_zones() {
    for name in ["Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "UTC", "Etc/GMT+5"] {
        assert!(TZDB.get(name).is_ok(), "{name}");
    }
    assert!(TZDB.available().count() > 400);
}
