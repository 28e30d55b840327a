//! Benchmark results as a picture: `strata bench --plot FILE.svg` (and `strata plot`, from saved
//! `--json` output) draws, for each device, one horizontal bar per benchmark from 1 to its ratio
//! (strata time / baseline time) on a logarithmic axis: bars to the left of the line at 1 are
//! benchmarks where strata is faster than its baseline, bars to the right where it is slower,
//! and a ratio of 2 is as far from 1 as a ratio of 0.5. Each bar is labelled with its ratio and
//! the baseline it was measured against.

use crate::report::BenchLine;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Pixels per benchmark row.
const ROW: u32 = 24;
/// Chart width in pixels.
const WIDTH: u32 = 1000;

/// Writes the chart of `lines` to `path`, an SVG file (the only format: it needs no fonts on
/// the machine that draws it, and scales). Fails on an empty result list, on another file
/// extension and on a write error, with a message saying which.
pub fn write_svg(path: &Path, lines: &[BenchLine]) -> Result<(), String> {
    check_svg_path(path)?;
    if lines.is_empty() {
        return Err("no benchmark results to plot".into());
    }
    let mut devices: Vec<&str> = Vec::new();
    for l in lines {
        if !devices.contains(&l.device.as_str()) {
            devices.push(&l.device);
        }
    }
    let panels: Vec<Vec<&BenchLine>> = devices
        .iter()
        .map(|d| lines.iter().filter(|l| l.device == *d).collect())
        .collect();
    let height: u32 = panels
        .iter()
        .map(|p| 90 + ROW * p.len() as u32)
        .sum::<u32>()
        .max(200);
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    // Panels stacked vertically, each as tall as its rows.
    let mut rest = root;
    for (device, rows) in devices.iter().zip(&panels) {
        let (panel, below) = rest.split_vertically(90 + ROW * rows.len() as u32);
        draw_panel(&panel, device, rows).map_err(|e| err(&e))?;
        rest = below;
    }
    rest.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Fails unless `path` names an SVG file (the only format charts are written in).
pub fn check_svg_path(path: &Path) -> Result<(), String> {
    if path.extension().and_then(|e| e.to_str()) == Some("svg") {
        Ok(())
    } else {
        Err(format!(
            "charts are written as SVG: name a file ending in .svg, not `{}`",
            path.display()
        ))
    }
}

/// The ratio axis: from a bit below the smallest ratio (or 1) to a bit above the largest.
fn ratio_range(rows: &[&BenchLine]) -> (f64, f64) {
    let finite = rows
        .iter()
        .map(|l| l.ratio)
        .filter(|r| r.is_finite() && *r > 0.0);
    let lo = finite.clone().fold(1.0f64, f64::min);
    let hi = finite.fold(1.0f64, f64::max);
    // Room on the right for the labels of the longest bars.
    (lo / 1.6, hi * 3.0)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    device: &str,
    rows: &[&BenchLine],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (lo, hi) = ratio_range(rows);
    let names: Vec<String> = rows.iter().map(|l| l.bench.clone()).collect();
    // The first benchmark at the top: segment `i` from the bottom shows row `row(i)` (the
    // segmented axis has one more segment, at the top, left empty).
    let row = |i: usize| rows.len().saturating_sub(1 + i);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{device}: strata time / baseline time (left of 1: strata is faster)"),
            ("sans-serif", 20),
        )
        .margin(8)
        .x_label_area_size(45)
        .y_label_area_size(190)
        .build_cartesian_2d((lo..hi).log_scale(), (0..rows.len()).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(TRANSPARENT)
        .y_labels(rows.len())
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if *i < names.len() => names[row(*i)].clone(),
            _ => String::new(),
        })
        .x_desc("ratio (log scale)")
        .label_style(("sans-serif", 15))
        .x_labels(6)
        .x_label_formatter(&|x| {
            let s = format!("{x:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        })
        .draw()?;
    chart.draw_series(rows.iter().enumerate().map(|(k, l)| {
        let i = row(k);
        let r = if l.ratio.is_finite() && l.ratio > 0.0 {
            l.ratio
        } else {
            1.0
        };
        let color = if r <= 1.0 {
            RGBColor(46, 139, 87)
        } else {
            RGBColor(214, 96, 40)
        };
        let mut bar = Rectangle::new(
            [
                (r.min(1.0), SegmentValue::Exact(i)),
                (r.max(1.0), SegmentValue::Exact(i + 1)),
            ],
            color.filled(),
        );
        bar.set_margin(4, 4, 0, 0);
        bar
    }))?;
    chart.draw_series(rows.iter().enumerate().map(|(k, l)| {
        let i = row(k);
        let at = if l.ratio.is_finite() && l.ratio > 1.0 {
            l.ratio
        } else {
            1.0
        };
        Text::new(
            format!(" {:.2} vs {}", l.ratio, l.baseline),
            (at, SegmentValue::CenterOf(i)),
            ("sans-serif", 14)
                .into_font()
                .into_text_style(area)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        )
    }))?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![
            (1.0, SegmentValue::Exact(0)),
            (1.0, SegmentValue::Exact(rows.len())),
        ],
        BLACK.stroke_width(1),
    )))?;
    Ok(())
}
