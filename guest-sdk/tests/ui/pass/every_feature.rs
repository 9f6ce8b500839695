// A tool that compiles must compile without a warning, the macro's own included.
#![deny(warnings)]

use toolcell_guest::{Context, Tool, ToolError, json, tool};

/// A unit.
#[json]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Metres.
    Meter,
    /// Feet.
    Foot,
}

/// A point.
#[json]
pub struct Point {
    /// Horizontal.
    pub x: f64,
    /// Vertical.
    pub y: f64,
}

/// The result.
#[json]
pub struct Measured {
    pub length: f64,
    pub unit: Unit,
}

/// Measure the distance between two points.
///
/// Second paragraph.
#[tool(name = "measure", title = " Measure a distance ", output_schema, read_only, idempotent = true, open_world = false)]
pub fn measure_distance(
    /// Where to start.
    from: Point,
    /// Where to end.
    to: Point,
    /// The unit of the result.
    unit: Option<Unit>,
    /// Labels to echo.
    #[schemars(length(max = 3))]
    labels: Option<Vec<String>>,
    context: Context,
    /// How many decimals.
    #[schemars(range(min = 0, max = 10))]
    decimals: u8,
    /// A three-letter code.
    #[schemars(pattern(r"^[A-Z]{3}$"))]
    code: Option<String>,
) -> Result<Measured, ToolError> {
    let _ = (labels, context, decimals, code);
    let length = ((to.x - from.x).powi(2) + (to.y - from.y).powi(2)).sqrt();
    if length.is_nan() {
        return Err(ToolError::invalid_arguments("coordinates must be numbers"));
    }
    Ok(Measured { length, unit: unit.unwrap_or(Unit::Meter) })
}

fn main() {
    let metadata = MeasureDistanceTool::metadata();
    assert_eq!(metadata.name, "measure");
    assert_eq!(metadata.description, "Measure the distance between two points.\n\nSecond paragraph.");
    assert_eq!(metadata.version, "0.0.0");
    let schema = &metadata.parameters_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], toolcell_guest::__private::serde_json::json!(["from", "to", "decimals"]));
    assert_eq!(schema["properties"]["from"]["description"], "Where to start.");
    assert_eq!(schema["properties"]["decimals"]["maximum"], 10);
    assert_eq!(schema["properties"]["labels"]["maxItems"], 3);
    assert_eq!(schema["properties"]["code"]["pattern"], "^[A-Z]{3}$");
    assert_eq!(schema["properties"]["code"]["description"], "A three-letter code.");
    assert!(schema["properties"].get("context").is_none());
    assert!(metadata.output_schema.is_some());

    let annotations = MeasureDistanceTool::annotations();
    assert_eq!(annotations.title.as_deref(), Some("Measure a distance"), "trimmed");
    assert_eq!(annotations.read_only, Some(true));
    assert_eq!(annotations.destructive, None, "unsaid");
    assert_eq!(annotations.idempotent, Some(true));
    assert_eq!(annotations.open_world, Some(false));

    let result = MeasureDistanceTool::invoke(r#"{"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}, "decimals": 1}"#, Context::default());
    assert_eq!(result.unwrap(), r#"{"length":5.0,"unit":"meter"}"#);
    let unknown = MeasureDistanceTool::invoke(r#"{"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}, "decimals": 1, "extra": 1}"#, Context::default());
    assert!(matches!(unknown, Err(ToolError::InvalidArguments(_))));
}
