//! SVG plots of the report (plotters, SVG backend only). Each function renders into a string
//! and writes it atomically.
//!
//! * [`measured_vs_predicted`] — bars per matrix, measured beside predicted (004 Figs. 13–16);
//! * [`error_cdf`] — cumulative distribution of the difference rate, one line per configuration;
//! * [`ranking_shares`] — share of matrices per slowdown bucket, one stacked bar per model
//!   (002 Fig. 2);
//! * [`speedups`] — speed-up over the best cuSPARSE algorithm per matrix (log scale), one bar
//!   per contender.
//!
//! Times and speed-ups span orders of magnitude, so their axes are logarithmic.

use crate::{Error, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;
use std::path::Path;

/// Bar colours, in series order.
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

fn plot_err(what: &str) -> impl Fn(String) -> Error + '_ {
    move |e| Error::Invalid(format!("plot {what}: {e}"))
}

/// Render with `draw` on a `w × h` SVG and write it to `path` atomically.
fn render<F>(path: &Path, w: u32, h: u32, draw: F) -> Result<()>
where
    F: FnOnce(&DrawingArea<SVGBackend, Shift>) -> std::result::Result<(), String>,
{
    let name = path.display().to_string();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| e.to_string())
            .map_err(plot_err(&name))?;
        draw(&root).map_err(plot_err(&name))?;
        root.present()
            .map_err(|e| e.to_string())
            .map_err(plot_err(&name))?;
    }
    crate::util::write_atomic(path, |w| w.write_all(svg.as_bytes()))
}

/// The series legend at `pos`, on a translucent white box with a black border (every chart).
fn legend<'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    pos: SeriesLabelPosition,
) -> std::result::Result<(), String> {
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// A log axis range covering `values` (positive ones), padded by a factor of 1.5 each side.
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.1, 10.0);
    }
    if lo == hi {
        return (lo / 2.0, hi * 2.0);
    }
    (lo / 1.5, hi * 1.5)
}

/// Write `names[i]` under the centre of category `i` (x from `i` to `i + 1`) of `chart`, below
/// the x axis at `y_axis`: rotated a quarter turn when `rotate` (many long names), else
/// horizontal. (plotters' own tick labels fall between categories on a continuous axis.)
fn category_labels<Y: Ranged<ValueType = f64>>(
    root: &DrawingArea<SVGBackend, Shift>,
    chart: &ChartContext<SVGBackend, Cartesian2d<RangedCoordf64, Y>>,
    names: &[String],
    y_axis: f64,
    rotate: bool,
) -> std::result::Result<(), String> {
    for (i, name) in names.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y_axis));
        let style = ("sans-serif", 11).into_font();
        let text = if rotate {
            Text::new(
                name.clone(),
                (px - 5, py + 8),
                style.transform(FontTransform::Rotate90),
            )
        } else {
            Text::new(
                name.clone(),
                (px, py + 8),
                style
                    .into_text_style(root)
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            )
        };
        root.draw(&text).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Width for `n` categories of `bars` bars each.
fn width_for(n: usize, bars: usize) -> u32 {
    (160 + n * (bars * 7 + 6)).clamp(640, 6000) as u32
}

/// Grouped bars over categories on a log y axis: `series[k] = (label, value per category)`.
fn grouped_log_bars(
    root: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<Option<f64>>)],
    reference_line: Option<f64>,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let n = categories.len().max(1);
    let all = series.iter().flat_map(|s| s.1.iter().flatten().copied());
    let (lo, hi) = log_range(all.chain(reference_line));
    // Headroom above the tallest bar for the legend.
    let hi = hi * 6.0;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(150)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, (lo..hi).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_desc)
        .draw()
        .map_err(e)?;
    category_labels(root, &chart, categories, lo, true)?;
    let k = series.len().max(1) as f64;
    let slot = 0.8 / k;
    // Bars grow from the reference line (speed-ups: up for faster, down for slower), else from
    // the bottom of the axis.
    let base = reference_line.unwrap_or(lo);
    for (si, (label, vals)) in series.iter().enumerate() {
        let c = color(si);
        let rects = vals.iter().enumerate().filter_map(|(i, v)| {
            let v = (*v)?;
            (v.is_finite() && v > 0.0).then(|| {
                let x0 = i as f64 + 0.1 + si as f64 * slot;
                Rectangle::new([(x0, base), (x0 + slot, v)], c.filled())
            })
        });
        chart
            .draw_series(rects)
            .map_err(e)?
            .label(label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    if let Some(r) = reference_line {
        chart
            .draw_series(LineSeries::new(
                [(0.0, r), (n as f64, r)],
                BLACK.stroke_width(1),
            ))
            .map_err(e)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    Ok(())
}

/// Measured and predicted time per matrix (004 Figs. 13–16).
pub fn measured_vs_predicted(
    path: &Path,
    title: &str,
    matrices: &[String],
    measured: &[f64],
    predicted: &[f64],
) -> Result<()> {
    let series = vec![
        (
            "measured".to_string(),
            measured.iter().map(|&v| Some(v)).collect(),
        ),
        (
            "predicted".to_string(),
            predicted.iter().map(|&v| Some(v)).collect(),
        ),
    ];
    render(path, width_for(matrices.len(), 2), 560, |root| {
        grouped_log_bars(root, title, "seconds (log)", matrices, &series, None)
    })
}

/// Speed-up over the best cuSPARSE algorithm per matrix, one bar per contender, with a line at 1.
pub fn speedups(
    path: &Path,
    title: &str,
    matrices: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> Result<()> {
    render(path, width_for(matrices.len(), series.len()), 560, |root| {
        grouped_log_bars(
            root,
            title,
            "speed-up vs best cuSPARSE (log)",
            matrices,
            series,
            Some(1.0),
        )
    })
}

/// Cumulative distribution of difference rates (in %), one line per series, on a log x axis
/// (rates below 0.1 % are drawn at 0.1 %).
pub fn error_cdf(path: &Path, title: &str, series: &[(String, Vec<f64>)]) -> Result<()> {
    const FLOOR: f64 = 0.1;
    render(path, 800, 520, |root| {
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        let all = series
            .iter()
            .flat_map(|s| s.1.iter().map(|r| (r * 100.0).max(FLOOR)));
        let (_, hi) = log_range(all);
        let hi = hi.max(20.0);
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((FLOOR..hi).log_scale(), 0f64..1.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("difference rate |predicted − measured| / measured, % (log)")
            .y_desc("share of matrices")
            .draw()
            .map_err(e)?;
        for (si, (label, rates)) in series.iter().enumerate() {
            let mut d: Vec<f64> = rates.iter().map(|r| (r * 100.0).max(FLOOR)).collect();
            d.sort_by(f64::total_cmp);
            let n = d.len() as f64;
            // A staircase: at each sorted rate the share steps up by 1/n.
            let mut pts = vec![(FLOOR, 0.0)];
            for (i, &x) in d.iter().enumerate() {
                pts.push((x, i as f64 / n));
                pts.push((x, (i + 1) as f64 / n));
            }
            pts.push((hi, 1.0));
            let c = color(si);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
        }
        for mark in [5.0, 10.0, 20.0] {
            if mark < hi {
                chart
                    .draw_series(LineSeries::new(
                        [(mark, 0.0), (mark, 1.0)],
                        BLACK.mix(0.3).stroke_width(1),
                    ))
                    .map_err(e)?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// One stacked bar per label: shares of matrices whose pick is within 5 %, 5–20 %, > 20 % of
/// the best (002 Fig. 2). `rows[k] = (label, [below 5, 5–20, above 20] counts)`.
pub fn ranking_shares(path: &Path, title: &str, rows: &[(String, [usize; 3])]) -> Result<()> {
    let w = (200 + rows.len() * 140).clamp(640, 3000) as u32;
    render(path, w, 480, |root| {
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        let n = rows.len().max(1);
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            // Up to 125 % so that the legend sits above the bars.
            .build_cartesian_2d(0f64..n as f64, 0f64..125.0)
            .map_err(e)?;
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|y| {
                if *y <= 100.0 {
                    format!("{y:.0}")
                } else {
                    String::new()
                }
            })
            .y_desc("share of matrices, %")
            .draw()
            .map_err(e)?;
        category_labels(root, &chart, &labels, 0.0, false)?;
        let names = ["< 5 % slower", "5–20 % slower", "> 20 % slower"];
        let colors = [
            RGBColor(44, 160, 44),
            RGBColor(255, 187, 60),
            RGBColor(214, 39, 40),
        ];
        for (b, (name, c)) in names.iter().zip(colors).enumerate() {
            let rects = rows.iter().enumerate().map(move |(i, (_, counts))| {
                let total: usize = counts.iter().sum();
                let share = |k: usize| 100.0 * counts[k] as f64 / total.max(1) as f64;
                let base: f64 = (0..b).map(share).sum();
                let x0 = i as f64 + 0.25;
                Rectangle::new([(x0, base), (x0 + 0.5, base + share(b))], c.filled())
            });
            chart
                .draw_series(rects)
                .map_err(e)?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_svg_documents() {
        let dir = tempfile::tempdir().unwrap();
        let m: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let p = dir.path().join("bars.svg");
        measured_vs_predicted(&p, "t", &m, &[1e-5, 2e-5, 3e-4], &[1.1e-5, 1.5e-5, 4e-4]).unwrap();
        let p2 = dir.path().join("cdf.svg");
        error_cdf(&p2, "t", &[("ell".into(), vec![0.0, 0.02, 0.3])]).unwrap();
        let p3 = dir.path().join("rank.svg");
        ranking_shares(&p3, "t", &[("analytical f64".into(), [3, 1, 0])]).unwrap();
        let p4 = dir.path().join("speed.svg");
        speedups(
            &p4,
            "t",
            &m,
            &[("best ours".into(), vec![Some(1.2), None, Some(0.7)])],
        )
        .unwrap();
        for p in [p, p2, p3, p4] {
            let s = std::fs::read_to_string(&p).unwrap();
            assert!(s.starts_with("<svg"), "{}", &s[..40.min(s.len())]);
            assert!(s.trim_end().ends_with("</svg>"));
        }
    }
}
