//! The `unit_convert` tool: converts a value between units of length, mass, temperature,
//! volume, speed and data size.
//!
//! Every linear unit is defined as an exact rational multiple of its category's base unit
//! (meter, kilogram, liter, meter per second, bit), straight from the unit's legal definition
//! (international yard and pound of 1959, US customary gallon of 231 in³, imperial gallon of
//! 4.54609 L, knot of 1852 m/h). A conversion multiplies by the reduced ratio of the two
//! definitions, so the only rounding is in the final floating-point arithmetic.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use toolcell_guest::{ToolError, json, tool};

/// Defines [`Unit`] and its per-unit data from one table, so that a unit's JSON name, its
/// symbol, its category and its definition live on one line and [`Unit::ALL`] cannot miss a
/// variant. The doc comment on each row becomes that unit's description in the schema.
macro_rules! units {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal, $symbol:literal, $category:ident, $definition:expr;
    )*) => {
        /// A unit of measurement.
        #[json]
        #[derive(Copy, PartialEq, Eq)]
        pub enum Unit {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $variant,
            )*
        }

        impl Unit {
            /// Every unit, grouped by category, in the order the schema lists them.
            pub const ALL: &[Unit] = &[$(Unit::$variant),*];

            /// The name the model uses for this unit (its JSON value).
            pub fn name(self) -> &'static str {
                match self {
                    $(Unit::$variant => $name,)*
                }
            }

            /// The unit's conventional symbol, e.g. `km`.
            pub fn symbol(self) -> &'static str {
                match self {
                    $(Unit::$variant => $symbol,)*
                }
            }

            /// The quantity this unit measures.
            pub fn category(self) -> Category {
                match self {
                    $(Unit::$variant => Category::$category,)*
                }
            }

            fn definition(self) -> Definition {
                // The table's definitions are written `Linear(...)` and `Temperature(...)`.
                use Definition::{Linear, Temperature};
                match self {
                    $(Unit::$variant => $definition,)*
                }
            }
        }
    };
}

units! {
    // Length, in meters.
    /// meter (m)
    Meter = "meter", "m", Length, Linear(Ratio::new(1, 1));
    /// kilometer (km)
    Kilometer = "kilometer", "km", Length, Linear(Ratio::new(1_000, 1));
    /// centimeter (cm)
    Centimeter = "centimeter", "cm", Length, Linear(Ratio::new(1, 100));
    /// millimeter (mm)
    Millimeter = "millimeter", "mm", Length, Linear(Ratio::new(1, 1_000));
    /// micrometer (µm)
    Micrometer = "micrometer", "µm", Length, Linear(Ratio::new(1, 1_000_000));
    /// nanometer (nm)
    Nanometer = "nanometer", "nm", Length, Linear(Ratio::new(1, 1_000_000_000));
    /// mile, 1760 yards (mi)
    Mile = "mile", "mi", Length, Linear(YARD.times(1_760));
    /// yard (yd)
    Yard = "yard", "yd", Length, Linear(YARD);
    /// foot (ft)
    Foot = "foot", "ft", Length, Linear(YARD.per(3));
    /// inch (in)
    Inch = "inch", "in", Length, Linear(YARD.per(36));
    /// nautical mile, 1852 m (nmi)
    NauticalMile = "nautical_mile", "nmi", Length, Linear(NAUTICAL_MILE);

    // Mass, in kilograms.
    /// kilogram (kg)
    Kilogram = "kilogram", "kg", Mass, Linear(Ratio::new(1, 1));
    /// gram (g)
    Gram = "gram", "g", Mass, Linear(Ratio::new(1, 1_000));
    /// milligram (mg)
    Milligram = "milligram", "mg", Mass, Linear(Ratio::new(1, 1_000_000));
    /// microgram (µg)
    Microgram = "microgram", "µg", Mass, Linear(Ratio::new(1, 1_000_000_000));
    /// tonne, metric ton of 1000 kg (t)
    Tonne = "tonne", "t", Mass, Linear(Ratio::new(1_000, 1));
    /// pound (lb)
    Pound = "pound", "lb", Mass, Linear(POUND);
    /// ounce, avoirdupois (oz)
    Ounce = "ounce", "oz", Mass, Linear(POUND.per(16));
    /// stone, 14 lb (st)
    Stone = "stone", "st", Mass, Linear(POUND.times(14));
    /// short ton, US ton of 2000 lb (sh tn)
    ShortTon = "short_ton", "sh tn", Mass, Linear(POUND.times(2_000));
    /// long ton, imperial ton of 2240 lb (LT)
    LongTon = "long_ton", "LT", Mass, Linear(POUND.times(2_240));

    // Temperature, as points on each scale (not differences).
    /// degree Celsius (°C)
    Celsius = "celsius", "°C", Temperature, Temperature(CELSIUS);
    /// degree Fahrenheit (°F)
    Fahrenheit = "fahrenheit", "°F", Temperature, Temperature(FAHRENHEIT);
    /// kelvin (K)
    Kelvin = "kelvin", "K", Temperature, Temperature(KELVIN);

    // Volume, in liters.
    /// liter (L)
    Liter = "liter", "L", Volume, Linear(Ratio::new(1, 1));
    /// milliliter (mL)
    Milliliter = "milliliter", "mL", Volume, Linear(Ratio::new(1, 1_000));
    /// cubic meter (m³)
    CubicMeter = "cubic_meter", "m³", Volume, Linear(Ratio::new(1_000, 1));
    /// cubic centimeter (cm³)
    CubicCentimeter = "cubic_centimeter", "cm³", Volume, Linear(Ratio::new(1, 1_000));
    /// cubic foot (ft³)
    CubicFoot = "cubic_foot", "ft³", Volume, Linear(CUBIC_INCH.times(1_728));
    /// cubic inch (in³)
    CubicInch = "cubic_inch", "in³", Volume, Linear(CUBIC_INCH);
    /// US liquid gallon, 231 in³ (gal)
    Gallon = "gallon", "gal", Volume, Linear(US_GALLON);
    /// US liquid quart (qt)
    Quart = "quart", "qt", Volume, Linear(US_GALLON.per(4));
    /// US liquid pint (pt)
    Pint = "pint", "pt", Volume, Linear(US_GALLON.per(8));
    /// US cup, 8 US fl oz (cup)
    Cup = "cup", "cup", Volume, Linear(US_GALLON.per(16));
    /// US fluid ounce (fl oz)
    FluidOunce = "fluid_ounce", "fl oz", Volume, Linear(US_GALLON.per(128));
    /// US tablespoon, 1/2 US fl oz (tbsp)
    Tablespoon = "tablespoon", "tbsp", Volume, Linear(US_GALLON.per(256));
    /// US teaspoon, 1/6 US fl oz (tsp)
    Teaspoon = "teaspoon", "tsp", Volume, Linear(US_GALLON.per(768));
    /// imperial gallon, 4.54609 L (imp gal)
    ImperialGallon = "imperial_gallon", "imp gal", Volume, Linear(IMPERIAL_GALLON);
    /// imperial pint (imp pt)
    ImperialPint = "imperial_pint", "imp pt", Volume, Linear(IMPERIAL_GALLON.per(8));
    /// imperial fluid ounce (imp fl oz)
    ImperialFluidOunce = "imperial_fluid_ounce", "imp fl oz", Volume, Linear(IMPERIAL_GALLON.per(160));

    // Speed, in meters per second.
    /// meters per second (m/s)
    MetersPerSecond = "meters_per_second", "m/s", Speed, Linear(Ratio::new(1, 1));
    /// kilometers per hour (km/h)
    KilometersPerHour = "kilometers_per_hour", "km/h", Speed, Linear(Ratio::new(1_000, SECONDS_PER_HOUR));
    /// miles per hour (mph)
    MilesPerHour = "miles_per_hour", "mph", Speed, Linear(YARD.times(1_760).per(SECONDS_PER_HOUR));
    /// knot, one nautical mile per hour (kn)
    Knot = "knot", "kn", Speed, Linear(NAUTICAL_MILE.per(SECONDS_PER_HOUR));
    /// feet per second (ft/s)
    FeetPerSecond = "feet_per_second", "ft/s", Speed, Linear(YARD.per(3));

    // Data size, in bits. Decimal prefixes are powers of 1000, binary (IEC) ones powers of 1024.
    /// bit, one binary digit (bit)
    Bit = "bit", "bit", DataSize, Linear(Ratio::new(1, 1));
    /// byte, 8 bits (B)
    Byte = "byte", "B", DataSize, Linear(BYTE);
    /// kilobit, 1000 bits (kbit)
    Kilobit = "kilobit", "kbit", DataSize, Linear(Ratio::new(1_000, 1));
    /// megabit, 10^6 bits (Mbit)
    Megabit = "megabit", "Mbit", DataSize, Linear(Ratio::new(1_000_000, 1));
    /// gigabit, 10^9 bits (Gbit)
    Gigabit = "gigabit", "Gbit", DataSize, Linear(Ratio::new(1_000_000_000, 1));
    /// terabit, 10^12 bits (Tbit)
    Terabit = "terabit", "Tbit", DataSize, Linear(Ratio::new(1_000_000_000_000, 1));
    /// kilobyte, 1000 bytes (kB)
    Kilobyte = "kilobyte", "kB", DataSize, Linear(BYTE.times(1_000));
    /// megabyte, 10^6 bytes (MB)
    Megabyte = "megabyte", "MB", DataSize, Linear(BYTE.times(1_000_000));
    /// gigabyte, 10^9 bytes (GB)
    Gigabyte = "gigabyte", "GB", DataSize, Linear(BYTE.times(1_000_000_000));
    /// terabyte, 10^12 bytes (TB)
    Terabyte = "terabyte", "TB", DataSize, Linear(BYTE.times(1_000_000_000_000));
    /// petabyte, 10^15 bytes (PB)
    Petabyte = "petabyte", "PB", DataSize, Linear(BYTE.times(1_000_000_000_000_000));
    /// kibibyte, 1024 bytes (KiB)
    Kibibyte = "kibibyte", "KiB", DataSize, Linear(BYTE.times(1 << 10));
    /// mebibyte, 2^20 bytes (MiB)
    Mebibyte = "mebibyte", "MiB", DataSize, Linear(BYTE.times(1 << 20));
    /// gibibyte, 2^30 bytes (GiB)
    Gibibyte = "gibibyte", "GiB", DataSize, Linear(BYTE.times(1 << 30));
    /// tebibyte, 2^40 bytes (TiB)
    Tebibyte = "tebibyte", "TiB", DataSize, Linear(BYTE.times(1 << 40));
    /// pebibyte, 2^50 bytes (PiB)
    Pebibyte = "pebibyte", "PiB", DataSize, Linear(BYTE.times(1 << 50));
}

/// The international yard (1959): exactly 0.9144 m.
const YARD: Ratio = Ratio::new(9_144, 10_000);
/// The international nautical mile: exactly 1852 m.
const NAUTICAL_MILE: Ratio = Ratio::new(1_852, 1);
/// The international avoirdupois pound (1959): exactly 0.45359237 kg.
const POUND: Ratio = Ratio::new(45_359_237, 100_000_000);
/// A cubic inch in liters: 2.54³ cm³ = 0.016387064 L.
const CUBIC_INCH: Ratio = Ratio::new(16_387_064, 1_000_000_000);
/// The US liquid gallon: 231 in³ = 3.785411784 L.
const US_GALLON: Ratio = CUBIC_INCH.times(231);
/// The imperial gallon: exactly 4.54609 L.
const IMPERIAL_GALLON: Ratio = Ratio::new(454_609, 100_000);
const BYTE: Ratio = Ratio::new(8, 1);
const SECONDS_PER_HOUR: u64 = 3_600;

/// Water freezes at 273.15 K = 0 °C = 32 °F; absolute zero is 0 K = -273.15 °C = -459.67 °F.
const KELVIN: TemperatureScale =
    TemperatureScale { degree: Ratio::new(1, 1), absolute_zero: 0.0, freezing_point: 273.15 };
const CELSIUS: TemperatureScale =
    TemperatureScale { degree: Ratio::new(1, 1), absolute_zero: -273.15, freezing_point: 0.0 };
const FAHRENHEIT: TemperatureScale =
    TemperatureScale { degree: Ratio::new(5, 9), absolute_zero: -459.67, freezing_point: 32.0 };

/// What a unit measures; only units of the same category convert into each other.
#[json]
#[derive(Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Length or distance.
    Length,
    /// Mass (weight).
    Mass,
    /// Temperature.
    Temperature,
    /// Volume, liquid or solid.
    Volume,
    /// Speed.
    Speed,
    /// Amount of digital data, in bits and bytes.
    DataSize,
}

impl Category {
    /// The category's JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::Mass => "mass",
            Self::Temperature => "temperature",
            Self::Volume => "volume",
            Self::Speed => "speed",
            Self::DataSize => "data_size",
        }
    }
}

/// How a unit relates to its category's base unit.
#[derive(Debug, Clone, Copy)]
enum Definition {
    /// One of this unit is this many base units.
    Linear(Ratio),
    /// A temperature scale, which has its own zero as well as its own degree size.
    Temperature(TemperatureScale),
}

#[derive(Debug, Clone, Copy)]
struct TemperatureScale {
    /// The size of one degree, in kelvins.
    degree: Ratio,
    /// Absolute zero on this scale.
    absolute_zero: f64,
    /// The freezing point of water on this scale.
    freezing_point: f64,
}

/// A positive rational number `num / den`. Kept exact until the final multiplication so that
/// chains of definitions (mile = 1760 yd, yd = 0.9144 m) add no rounding error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ratio {
    num: u128,
    den: u128,
}

impl Ratio {
    const fn new(num: u64, den: u64) -> Self {
        Self { num: num as u128, den: den as u128 }
    }

    const fn times(self, factor: u64) -> Self {
        Self { num: self.num * factor as u128, den: self.den }
    }

    const fn per(self, divisor: u64) -> Self {
        Self { num: self.num, den: self.den * divisor as u128 }
    }

    /// `self / other`, in lowest terms. The definitions above keep numerators and denominators
    /// below 10^16, so the cross products fit comfortably in a `u128`.
    fn over(self, other: Self) -> Self {
        let num = self.num * other.den;
        let den = self.den * other.num;
        let divisor = gcd(num, den);
        Self { num: num / divisor, den: den / divisor }
    }

    /// `value * num / den`. Multiplying first keeps results exact whenever they can be
    /// (3 ft is 1143/1250 m = 0.9144, not 0.9144000000000001); dividing first is only for
    /// values so large that the intermediate product would overflow.
    fn apply(self, value: f64) -> f64 {
        // Lossless for every ratio the table produces: both terms stay below 2^53.
        let (num, den) = (self.num as f64, self.den as f64);
        let product = value * num;
        if product.is_finite() { product / den } else { value / den * num }
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl TemperatureScale {
    /// Converts the temperature `value` on this scale to the scale `to`.
    ///
    /// The conversion pivots on a temperature that one of the two scales reads as exactly 0
    /// (absolute zero when kelvin is involved, the freezing point of water otherwise), so it is
    /// the familiar formula: °F = °C × 9/5 + 32, K = °C + 273.15, K = (°F + 459.67) × 5/9.
    fn convert(self, value: f64, to: Self) -> f64 {
        let (from_pivot, to_pivot) = if self.absolute_zero == 0.0 || to.absolute_zero == 0.0 {
            (self.absolute_zero, to.absolute_zero)
        } else {
            (self.freezing_point, to.freezing_point)
        };
        let converted = self.degree.over(to.degree).apply(value - from_pivot) + to_pivot;
        // Rounding can put absolute zero a hair below the target scale's absolute zero.
        converted.max(to.absolute_zero)
    }
}

/// The converted value.
#[json]
pub struct Conversion {
    /// The value expressed in `unit`.
    pub value: f64,
    /// The unit converted to (the `to` argument).
    pub unit: Unit,
    /// The unit's symbol, e.g. "km".
    pub symbol: String,
    /// What the unit measures.
    pub category: Category,
}

/// Convert a value between units of length, mass, temperature, volume, speed or data size,
/// using exact definitions: international yard and pound, US customary volumes (`gallon`,
/// `quart`, `pint`, `cup`, `fluid_ounce`, `tablespoon`, `teaspoon`) and imperial ones
/// (`imperial_gallon`, `imperial_pint`, `imperial_fluid_ounce`), 1 knot = 1852 m/h, decimal
/// kilobyte/megabyte/gigabyte (powers of 1000) and binary kibibyte/mebibyte/gibibyte (powers of
/// 1024). Use it instead of converting units by hand. Temperatures are converted as readings
/// (100 celsius = 212 fahrenheit), not as temperature differences. Both units must measure the
/// same quantity. Example: {"value": 26.2, "from": "mile", "to": "kilometer"}.
#[tool(title = "Unit Converter", output_schema, read_only, idempotent, open_world = false)]
pub fn unit_convert(
    /// The amount to convert, in the `from` unit.
    value: f64,
    /// The unit `value` is expressed in.
    from: Unit,
    /// The unit to convert to; must measure the same quantity as `from`.
    to: Unit,
) -> Result<Conversion, ToolError> {
    if !value.is_finite() {
        return Err(ToolError::invalid_arguments(format!("`value` must be a finite number, got {value}")));
    }
    let converted = match (from.definition(), to.definition()) {
        (Definition::Linear(from_factor), Definition::Linear(to_factor)) if from.category() == to.category() => {
            from_factor.over(to_factor).apply(value)
        }
        (Definition::Temperature(from_scale), Definition::Temperature(to_scale)) => {
            if value < from_scale.absolute_zero {
                return Err(ToolError::invalid_arguments(format!(
                    "`value` {} {} is below absolute zero ({} {}); temperatures are converted as readings, not differences",
                    display_number(value),
                    from.symbol(),
                    display_number(from_scale.absolute_zero),
                    from.symbol(),
                )));
            }
            from_scale.convert(value, to_scale)
        }
        _ => return Err(incompatible_units(from, to)),
    };
    if !converted.is_finite() {
        return Err(ToolError::invalid_arguments(format!(
            "`value` {} {} is too large to express in {}: the result exceeds the largest number representable (about 1.8e308)",
            display_number(value),
            from.name(),
            to.name(),
        )));
    }
    Ok(Conversion { value: converted, unit: to, symbol: to.symbol().to_owned(), category: to.category() })
}

/// The error for `from` and `to` measuring different quantities, listing what `from` does
/// convert to so the model can pick a valid `to`.
fn incompatible_units(from: Unit, to: Unit) -> ToolError {
    let (from_category, to_category) = (from.category(), to.category());
    let compatible: Vec<&str> = Unit::ALL
        .iter()
        .filter(|unit| unit.category() == from_category && **unit != from)
        .map(|unit| unit.name())
        .collect();
    ToolError::invalid_arguments(format!(
        "cannot convert `from` {} ({}) to `to` {} ({}): they measure different quantities. {} converts only to other {} units: {}",
        from.name(),
        from_category.name(),
        to.name(),
        to_category.name(),
        from.name(),
        from_category.name(),
        compatible.join(", "),
    ))
}

/// Formats a number for an error message: plain for everyday magnitudes, scientific otherwise
/// (Rust's `Display` would print 1e300 with all 301 digits).
fn display_number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e15).contains(&magnitude) { format!("{value:e}") } else { format!("{value}") }
}

#[cfg(test)]
mod tests;
