//! Medians and tails of measured durations.

use std::time::Duration;

/// What one approach cost per call.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Latency {
    pub label: String,
    pub median_us: f64,
    pub p99_us: f64,
    pub samples: usize,
}

impl Latency {
    pub fn from_samples(label: &str, mut samples: Vec<Duration>) -> Self {
        assert!(!samples.is_empty(), "{label}: no samples");
        samples.sort();
        let at = |fraction: f64| {
            let index = ((samples.len() - 1) as f64 * fraction).round() as usize;
            samples[index].as_secs_f64() * 1e6
        };
        Self { label: label.to_owned(), median_us: at(0.5), p99_us: at(0.99), samples: samples.len() }
    }
}

/// `a / b`, for "x times faster".
pub fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { f64::INFINITY } else { a / b }
}

/// The median of some figures (the mean of the middle two for an even count).
pub fn median(mut figures: Vec<f64>) -> f64 {
    assert!(!figures.is_empty(), "no figures");
    figures.sort_by(f64::total_cmp);
    let middle = figures.len() / 2;
    if figures.len() % 2 == 1 { figures[middle] } else { (figures[middle - 1] + figures[middle]) / 2.0 }
}
