//! The two charts in docs/src/benchmarks.md, as PNG: latency by approach and throughput by
//! concurrency. Text is drawn with a system TrueType font (DejaVu Sans).

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::Throughput;
use crate::stats::Latency;

const FONTS: [&str; 2] = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"];

/// Writes `latency.png` and `throughput.png` into `dir`.
pub fn write(latencies: &[Latency], throughput: &[Throughput], dir: &Path) -> Result<Vec<PathBuf>, String> {
    register_font()?;
    std::fs::create_dir_all(dir).map_err(|err| format!("create {}: {err}", dir.display()))?;
    let latency_png = dir.join("latency.png");
    let throughput_png = dir.join("throughput.png");
    latency_chart(latencies, &latency_png).map_err(|err| format!("draw {}: {err}", latency_png.display()))?;
    throughput_chart(throughput, &throughput_png).map_err(|err| format!("draw {}: {err}", throughput_png.display()))?;
    Ok(vec![latency_png, throughput_png])
}

fn register_font() -> Result<(), String> {
    let file = FONTS.iter().find(|file| Path::new(file).is_file()).ok_or_else(|| {
        format!("no DejaVu Sans font for the charts' text (looked for {FONTS:?}): install fonts-dejavu-core")
    })?;
    let bytes = std::fs::read(file).map_err(|err| format!("read {file}: {err}"))?;
    // plotters keeps registered fonts for the life of the process.
    plotters::style::register_font("sans-serif", FontStyle::Normal, Vec::leak(bytes))
        .map_err(|_| format!("{file} is not a font plotters can read"))
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Horizontal bars of the median per call, log scale, one bar per approach, the first on top.
fn latency_chart(latencies: &[Latency], file: &Path) -> DrawResult {
    let rows = latencies.len();
    let labels: Vec<String> = latencies.iter().map(|latency| latency.label.replace('`', "")).collect();
    let root = BitMapBackend::new(file, (1200, 90 + 42 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let slowest = latencies.iter().map(|latency| latency.median_us).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption("Median time per call (µs, log scale; shorter is faster)", ("sans-serif", 22))
        .margin(12)
        .margin_right(40)
        .x_label_area_size(40)
        .y_label_area_size(500)
        // An integer range is inclusive here: rows segments are 0..=rows - 1.
        .build_cartesian_2d((0.1f64..slowest * 8.0).log_scale(), (0..rows - 1).into_segmented())?;
    // Row 0 is drawn at the top: segment `rows - 1 - row`.
    let segment = |row: usize| rows - 1 - row;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows)
        .y_label_formatter(&|value| match value {
            SegmentValue::CenterOf(index) if *index < rows => labels[rows - 1 - index].clone(),
            _ => String::new(),
        })
        .x_desc("µs per call")
        .x_label_formatter(&|us| format!("{us}"))
        .label_style(("sans-serif", 15))
        .draw()?;
    for (row, latency) in latencies.iter().enumerate() {
        let color =
            if latency.label.starts_with("toolcell") { RGBColor(0x1f, 0x77, 0xb4) } else { RGBColor(0x9a, 0x9a, 0x9a) };
        let mut bar = Rectangle::new(
            [(0.1, SegmentValue::Exact(segment(row))), (latency.median_us, SegmentValue::Exact(segment(row) + 1))],
            color.filled(),
        );
        bar.set_margin(6, 6, 0, 0);
        chart.draw_series(std::iter::once(bar))?;
        chart.draw_series(std::iter::once(Text::new(
            micros(latency.median_us),
            (latency.median_us * 1.15, SegmentValue::CenterOf(segment(row))),
            TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
    }
    root.present()?;
    Ok(())
}

fn micros(us: f64) -> String {
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.1} µs") }
}

/// Calls per second against concurrent callers, one line per allocator; the callers evenly
/// spaced (1, 2, 8, 64).
fn throughput_chart(throughput: &[Throughput], file: &Path) -> DrawResult {
    let points = throughput.len();
    let root = BitMapBackend::new(file, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let fastest = throughput.iter().map(|row| row.pooling.max(row.on_demand)).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption("Throughput of `add`: calls per second by concurrent callers", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d((0..points - 1).into_segmented(), 0f64..fastest * 1.15)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("concurrent callers")
        .y_desc("calls/s")
        .x_labels(points)
        .x_label_formatter(&|value| match value {
            SegmentValue::CenterOf(index) if *index < points => throughput[*index].callers.to_string(),
            _ => String::new(),
        })
        .y_label_formatter(&|rate| format!("{:.0}k", rate / 1000.0))
        .label_style(("sans-serif", 15))
        .draw()?;
    let line = |rate: fn(&Throughput) -> f64| -> Vec<(SegmentValue<usize>, f64)> {
        throughput.iter().enumerate().map(|(index, row)| (SegmentValue::CenterOf(index), rate(row))).collect()
    };
    let series = [
        ("pooling (default)", RGBColor(0x1f, 0x77, 0xb4), line(|row| row.pooling)),
        ("on-demand", RGBColor(0xff, 0x7f, 0x0e), line(|row| row.on_demand)),
    ];
    for (label, color, points) in series {
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(3)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
        chart.draw_series(points.into_iter().map(|point| Circle::new(point, 5, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::MiddleRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    root.present()?;
    Ok(())
}
