use toolcell_guest::{Context, Tool};

use super::*;

/// Converts through the plain function, failing the test on an error.
fn convert(value: f64, from: Unit, to: Unit) -> f64 {
    match unit_convert(value, from, to) {
        Ok(conversion) => conversion.value,
        Err(err) => panic!("{value} {from:?} -> {to:?} failed: {err}"),
    }
}

fn assert_close(actual: f64, expected: f64, what: &str) {
    let tolerance = 1e-12 * expected.abs().max(1.0);
    assert!((actual - expected).abs() <= tolerance, "{what}: got {actual}, expected {expected}");
}

fn invalid_message(result: Result<impl std::fmt::Debug, ToolError>) -> String {
    match result {
        Err(ToolError::InvalidArguments(message)) => message,
        other => panic!("expected invalid_arguments, got {other:?}"),
    }
}

#[test]
fn known_conversions() {
    use Unit::*;
    let cases = [
        // Length.
        (1.0, Mile, Kilometer, 1.609344),
        (1.0, Inch, Centimeter, 2.54),
        (3.0, Foot, Meter, 0.9144),
        (1.0, NauticalMile, Meter, 1852.0),
        (1.0, Meter, Micrometer, 1e6),
        (1.0, Millimeter, Nanometer, 1e6),
        (1.0, Mile, Yard, 1760.0),
        (1.0, Yard, Inch, 36.0),
        // Mass.
        (1.0, Pound, Kilogram, 0.45359237),
        (1.0, Pound, Ounce, 16.0),
        (1.0, Stone, Kilogram, 6.35029318),
        (1.0, Tonne, Gram, 1e6),
        (1.0, Gram, Microgram, 1e6),
        (1.0, Milligram, Microgram, 1e3),
        (1.0, ShortTon, Pound, 2000.0),
        (1.0, LongTon, Kilogram, 1016.0469088),
        // Temperature.
        (100.0, Celsius, Fahrenheit, 212.0),
        (212.0, Fahrenheit, Celsius, 100.0),
        (0.0, Kelvin, Celsius, -273.15),
        (0.0, Kelvin, Fahrenheit, -459.67),
        (-40.0, Celsius, Fahrenheit, -40.0),
        (98.6, Fahrenheit, Celsius, 37.0),
        (32.0, Fahrenheit, Kelvin, 273.15),
        (0.0, Celsius, Kelvin, 273.15),
        (300.0, Kelvin, Celsius, 26.85),
        // Volume.
        (1.0, Gallon, Liter, 3.785411784),
        (1.0, Gallon, Quart, 4.0),
        (1.0, Quart, Pint, 2.0),
        (1.0, Pint, Cup, 2.0),
        (1.0, Cup, FluidOunce, 8.0),
        (1.0, Cup, Milliliter, 236.5882365),
        (1.0, FluidOunce, Tablespoon, 2.0),
        (1.0, Tablespoon, Teaspoon, 3.0),
        (1.0, ImperialGallon, Liter, 4.54609),
        (1.0, ImperialGallon, ImperialPint, 8.0),
        (1.0, ImperialPint, ImperialFluidOunce, 20.0),
        (1.0, CubicMeter, Liter, 1000.0),
        (1.0, CubicCentimeter, Milliliter, 1.0),
        (1.0, CubicFoot, CubicInch, 1728.0),
        (1.0, CubicFoot, Liter, 28.316846592),
        (1.0, Gallon, CubicInch, 231.0),
        // Speed.
        (1.0, Knot, KilometersPerHour, 1.852),
        (1.0, MilesPerHour, KilometersPerHour, 1.609344),
        (36.0, KilometersPerHour, MetersPerSecond, 10.0),
        (1.0, FeetPerSecond, MetersPerSecond, 0.3048),
        (1.0, MetersPerSecond, Knot, 3600.0 / 1852.0),
        // Data size.
        (1.0, Gibibyte, Gigabyte, 1.073741824),
        (1.0, Byte, Bit, 8.0),
        (1.0, Megabyte, Megabit, 8.0),
        (1.0, Kibibyte, Byte, 1024.0),
        (1.0, Tebibyte, Gibibyte, 1024.0),
        (1.0, Pebibyte, Tebibyte, 1024.0),
        (1.0, Petabyte, Terabyte, 1000.0),
        (1.0, Terabyte, Gigabyte, 1000.0),
        (1.0, Gigabit, Megabit, 1000.0),
        (1.0, Terabit, Gigabit, 1000.0),
        (1.0, Kilobyte, Kilobit, 8.0),
        (1.0, Mebibyte, Kibibyte, 1024.0),
        (1.0, Tebibyte, Terabyte, 1.099511627776),
    ];
    for (value, from, to, expected) in cases {
        assert_close(convert(value, from, to), expected, &format!("{value} {from:?} -> {to:?}"));
    }
}

#[test]
fn exact_definitions_give_exact_results() {
    // Multiplying by the reduced ratio before dividing keeps these free of rounding noise.
    assert_eq!(convert(3.0, Unit::Foot, Unit::Meter), 0.9144);
    assert_eq!(convert(1.0, Unit::Mile, Unit::Kilometer), 1.609344);
    assert_eq!(convert(1.0, Unit::Gibibyte, Unit::Gigabyte), 1.073741824);
    assert_eq!(convert(1.0, Unit::Gallon, Unit::Liter), 3.785411784);
    assert_eq!(convert(100.0, Unit::Celsius, Unit::Fahrenheit), 212.0);
    assert_eq!(convert(212.0, Unit::Fahrenheit, Unit::Celsius), 100.0);
    assert_eq!(convert(0.0, Unit::Kelvin, Unit::Celsius), -273.15);
}

#[test]
fn same_unit_returns_the_value_unchanged() {
    for &unit in Unit::ALL {
        let value = 123.456_789;
        assert_eq!(convert(value, unit, unit), value, "{unit:?}");
    }
}

#[test]
fn every_unit_round_trips_through_every_unit_of_its_category() {
    let values = [123.456, 0.001, 1e9];
    for &from in Unit::ALL {
        for &to in Unit::ALL.iter().filter(|unit| unit.category() == from.category()) {
            for value in values {
                let there = convert(value, from, to);
                let back = convert(there, to, from);
                assert_close(back, value, &format!("{value} {from:?} -> {to:?} -> back"));
            }
        }
    }
}

#[test]
fn conversion_ratios_are_exact_in_f64() {
    // `Ratio::apply` relies on both terms converting to f64 without loss.
    const EXACT: u128 = 1 << 53;
    for &from in Unit::ALL {
        for &to in Unit::ALL {
            if let (Definition::Linear(a), Definition::Linear(b)) = (from.definition(), to.definition())
                && from.category() == to.category()
            {
                let ratio = a.over(b);
                assert!(ratio.num <= EXACT && ratio.den <= EXACT, "{from:?} -> {to:?}: {ratio:?}");
            }
        }
    }
}

#[test]
fn result_names_the_target_unit() {
    let conversion = unit_convert(5.0, Unit::Mile, Unit::Kilometer).expect("converts");
    assert_eq!(conversion.unit, Unit::Kilometer);
    assert_eq!(conversion.symbol, "km");
    assert_eq!(conversion.category, Category::Length);

    let conversion = unit_convert(1.0, Unit::Gibibyte, Unit::Megabyte).expect("converts");
    assert_eq!((conversion.symbol.as_str(), conversion.category), ("MB", Category::DataSize));
}

#[test]
fn invoke_returns_the_json_result() {
    let output = UnitConvertTool::invoke(r#"{"value": 1, "from": "mile", "to": "kilometer"}"#, Context::default())
        .expect("converts");
    let json: serde_json::Value = serde_json::from_str(&output).expect("valid JSON");
    assert_eq!(
        json,
        serde_json::json!({ "value": 1.609344, "unit": "kilometer", "symbol": "km", "category": "length" })
    );

    let output =
        UnitConvertTool::invoke(r#"{"value": 100, "from": "celsius", "to": "fahrenheit"}"#, Context::default())
            .expect("converts");
    let json: serde_json::Value = serde_json::from_str(&output).expect("valid JSON");
    assert_eq!(
        json,
        serde_json::json!({ "value": 212.0, "unit": "fahrenheit", "symbol": "°F", "category": "temperature" })
    );

    let output = UnitConvertTool::invoke(r#"{"value": 2, "from": "tebibyte", "to": "gigabyte"}"#, Context::default())
        .expect("converts");
    let json: serde_json::Value = serde_json::from_str(&output).expect("valid JSON");
    assert_eq!(json["category"], "data_size");
    assert_eq!(json["symbol"], "GB");
}

#[test]
fn cross_category_conversion_is_rejected_with_the_alternatives() {
    let message = invalid_message(unit_convert(1.0, Unit::Kilogram, Unit::Meter));
    assert!(message.contains("`from` kilogram (mass)"), "{message}");
    assert!(message.contains("`to` meter (length)"), "{message}");
    let alternatives = message.rsplit(": ").next().unwrap_or_default();
    assert_eq!(alternatives, "gram, milligram, microgram, tonne, pound, ounce, stone, short_ton, long_ton");

    // Temperature against a linear unit, both ways.
    let message = invalid_message(unit_convert(20.0, Unit::Celsius, Unit::Liter));
    assert!(message.contains("celsius (temperature)") && message.contains("liter (volume)"), "{message}");
    assert!(message.ends_with("fahrenheit, kelvin"), "{message}");
    let message = invalid_message(unit_convert(20.0, Unit::Byte, Unit::Kelvin));
    assert!(message.contains("byte (data_size)") && message.contains("kelvin (temperature)"), "{message}");

    // The JSON path reports the same error.
    let message = invalid_message(UnitConvertTool::invoke(
        r#"{"value": 1, "from": "knot", "to": "nautical_mile"}"#,
        Context::default(),
    ));
    assert!(message.contains("knot (speed)") && message.contains("nautical_mile (length)"), "{message}");
    assert!(message.contains("meters_per_second, kilometers_per_hour, miles_per_hour, feet_per_second"), "{message}");
}

#[test]
fn non_finite_values_are_rejected() {
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let message = invalid_message(unit_convert(value, Unit::Meter, Unit::Foot));
        assert!(message.starts_with("`value` must be a finite number"), "{message}");
    }
}

#[test]
fn results_too_large_for_f64_are_rejected() {
    let message = invalid_message(unit_convert(1e308, Unit::Tebibyte, Unit::Bit));
    assert_eq!(
        message,
        "`value` 1e308 tebibyte is too large to express in bit: the result exceeds the largest number representable (about 1.8e308)"
    );
    let message = invalid_message(unit_convert(1.5e308, Unit::Celsius, Unit::Fahrenheit));
    assert!(message.contains("1.5e308 celsius") && message.contains("in fahrenheit"), "{message}");
}

#[test]
fn huge_values_that_fit_still_convert() {
    // The intermediate `value * numerator` overflows here; the result does not.
    assert_close(convert(1e308, Unit::Mile, Unit::NauticalMile), 1e308 * 1609.344 / 1852.0, "mile -> nmi");
    assert_close(convert(9e307, Unit::Celsius, Unit::Fahrenheit), 1.62e308, "°C -> °F");
}

#[test]
fn temperatures_below_absolute_zero_are_rejected() {
    let cases = [
        (-273.16, Unit::Celsius, "`value` -273.16 °C is below absolute zero (-273.15 °C)"),
        (-460.0, Unit::Fahrenheit, "`value` -460 °F is below absolute zero (-459.67 °F)"),
        (-1.0, Unit::Kelvin, "`value` -1 K is below absolute zero (0 K)"),
        (-1e300, Unit::Kelvin, "`value` -1e300 K is below absolute zero (0 K)"),
    ];
    for (value, from, expected) in cases {
        let message = invalid_message(unit_convert(value, from, Unit::Celsius));
        assert!(message.starts_with(expected), "{message}");
    }
    let message = invalid_message(UnitConvertTool::invoke(
        r#"{"value": -500, "from": "fahrenheit", "to": "kelvin"}"#,
        Context::default(),
    ));
    assert!(message.contains("below absolute zero"), "{message}");
}

#[test]
fn absolute_zero_itself_converts_to_absolute_zero() {
    let zero = [(Unit::Celsius, -273.15), (Unit::Fahrenheit, -459.67), (Unit::Kelvin, 0.0)];
    for (from, from_zero) in zero {
        for (to, to_zero) in zero {
            let converted = convert(from_zero, from, to);
            assert!(converted >= to_zero, "{from:?} -> {to:?}: {converted} is below absolute zero");
            assert_close(converted, to_zero, &format!("{from:?} -> {to:?}"));
        }
    }
}

#[test]
fn unknown_unit_names_are_invalid_arguments() {
    let message = invalid_message(UnitConvertTool::invoke(
        r#"{"value": 1, "from": "kilometre", "to": "mile"}"#,
        Context::default(),
    ));
    // Refused by the schema, natively as in the host, with what the model probably meant.
    assert!(
        message.contains("- /from: `kilometre` is not one of the 61 allowed values; did you mean `kilometer`?"),
        "{message}"
    );
    let message = invalid_message(UnitConvertTool::invoke(r#"{"value": 1, "from": "mile"}"#, Context::default()));
    assert!(message.contains("`to` is missing"), "{message}");
}

#[test]
fn a_unit_symbol_is_pointed_to_its_unit_name() {
    // Every unit's symbol, as a model might send it, leads to that unit's name.
    // (`cup` and `bit` are their own symbols, and valid as they are.)
    for unit in Unit::ALL.iter().filter(|unit| unit.symbol() != unit.name()) {
        let arguments = serde_json::json!({"value": 1, "from": unit.symbol(), "to": unit.name()}).to_string();
        let message = invalid_message(UnitConvertTool::invoke(&arguments, Context::default()));
        let pointed =
            format!("`{}` is not one of the 61 allowed values; it is the symbol of `{}`", unit.symbol(), unit.name());
        assert!(message.contains(&pointed), "{message}");
    }
}

/// The units in the parameters schema's `Unit` definition, as (name, description) pairs.
fn schema_units() -> Vec<(String, String)> {
    let schema = UnitConvertTool::metadata().parameters_schema;
    let variants = schema["$defs"]["Unit"]["oneOf"].as_array().cloned().unwrap_or_default();
    variants
        .iter()
        .map(|variant| {
            let name = variant["const"].as_str().unwrap_or_default().to_owned();
            let description = variant["description"].as_str().unwrap_or_default().to_owned();
            (name, description)
        })
        .collect()
}

#[test]
fn schema_lists_every_unit_with_its_symbol() {
    let listed = schema_units();
    let names: Vec<&str> = listed.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<&str> = Unit::ALL.iter().map(|unit| unit.name()).collect();
    assert_eq!(names, expected);
    for (&unit, (_, description)) in Unit::ALL.iter().zip(&listed) {
        let suffix = format!("({})", unit.symbol());
        assert!(description.ends_with(&suffix), "{unit:?}: description {description:?} lacks {suffix}");
    }
    // The brief's required units, at least.
    for name in [
        "meter",
        "kilometer",
        "centimeter",
        "millimeter",
        "micrometer",
        "nanometer",
        "mile",
        "yard",
        "foot",
        "inch",
        "nautical_mile",
        "kilogram",
        "gram",
        "milligram",
        "microgram",
        "tonne",
        "pound",
        "ounce",
        "stone",
        "celsius",
        "fahrenheit",
        "kelvin",
        "liter",
        "milliliter",
        "cubic_meter",
        "cubic_centimeter",
        "gallon",
        "quart",
        "pint",
        "cup",
        "fluid_ounce",
        "tablespoon",
        "teaspoon",
        "imperial_gallon",
        "imperial_pint",
        "meters_per_second",
        "kilometers_per_hour",
        "miles_per_hour",
        "knot",
        "feet_per_second",
        "bit",
        "byte",
        "kilobit",
        "megabit",
        "gigabit",
        "kilobyte",
        "megabyte",
        "gigabyte",
        "terabyte",
        "kibibyte",
        "mebibyte",
        "gibibyte",
        "tebibyte",
    ] {
        assert!(names.contains(&name), "{name} missing from the schema");
    }
}

#[test]
fn names_match_serialization() {
    for &unit in Unit::ALL {
        assert_eq!(serde_json::to_value(unit).ok(), Some(serde_json::Value::from(unit.name())));
        assert_eq!(serde_json::to_value(unit.category()).ok(), Some(serde_json::Value::from(unit.category().name())));
    }
}

#[test]
fn display_number_switches_to_scientific_for_extremes() {
    assert_eq!(display_number(-273.16), "-273.16");
    assert_eq!(display_number(0.0), "0");
    assert_eq!(display_number(1e300), "1e300");
    assert_eq!(display_number(2.5e-9), "2.5e-9");
}

#[test]
fn parameters_schema_snapshot() {
    insta::assert_json_snapshot!(UnitConvertTool::metadata().parameters_schema);
}

#[test]
fn output_schema_snapshot() {
    insta::assert_json_snapshot!(UnitConvertTool::metadata().output_schema);
}
