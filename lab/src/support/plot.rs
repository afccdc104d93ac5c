//! Plot helpers over plotters: the embedded DejaVu font (no system fonts needed), the
//! colour and marker of each kernel and contender (from [`crate::contenders::looks`], set once), and
//! line and bar charts written as
//! both `plot.svg` and `plot.png` from data the caller read back from a CSV.

pub use crate::contenders::looks::Marker;
use anyhow::Context;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{SegmentedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::Once;

/// Chart size in pixels.
const SIZE: (u32, u32) = (1100, 680);

/// Registers DejaVu Sans as the font plotters resolves `sans-serif` to.
pub fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
        ] {
            if plotters::style::register_font("sans-serif", style, bytes).is_err() {
                eprintln!("warning: could not register the embedded DejaVu font");
            }
        }
    });
}

/// `a` moved a fraction `t` of the way towards `b`.
fn mix(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let m = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
    RGBColor(m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

/// The colour of a kernel or contender: the same in every plot.
pub fn colour(name: &str) -> RGBColor {
    let rgb = |(r, g, b): (u8, u8, u8)| RGBColor(r, g, b);
    if let Some(s) = crate::contenders::looks::find(name) {
        return rgb(s.colour);
    }
    // A control copy is a lighter shade of its baseline; another shape of a kernel
    // (`avx512 k=7`) a darker one: related at a glance, never the same.
    if let Some(base) = name.strip_suffix("-control") {
        return mix(colour(base), RGBColor(255, 255, 255), 0.55);
    }
    if let Some((base, _)) = name.split_once(" k=") {
        return mix(colour(base), RGBColor(0, 0, 0), 0.45);
    }
    // linebloom-<kernel>, theory curves and the rest: by suffix, else a stable hash.
    if let Some(kernel) = name
        .strip_prefix("linebloom-")
        .and_then(crate::contenders::looks::find)
    {
        return rgb(kernel.colour);
    }
    let h = xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    RGBColor(
        (h & 0x9f) as u8 + 30,
        ((h >> 8) & 0x9f) as u8 + 30,
        ((h >> 16) & 0x9f) as u8 + 30,
    )
}

/// The marker of a kernel or contender: like its [`colour`], the same in every plot, so
/// that two series of close colours still differ at a glance. A control copy and
/// another shape of a kernel (`avx512 k=7`) keep their baseline's marker, as they keep
/// a shade of its colour.
pub fn marker(name: &str) -> Marker {
    const SHAPES: [Marker; 4] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
    ];
    let base = name
        .strip_suffix("-control")
        .or_else(|| name.split_once(" k=").map(|(b, _)| b))
        .unwrap_or(name);
    crate::contenders::looks::find(base)
        .or_else(|| {
            base.strip_prefix("linebloom-")
                .and_then(crate::contenders::looks::find)
        })
        .map(|s| s.marker)
        .unwrap_or(SHAPES[xxhash_rust::xxh3::xxh3_64(base.as_bytes()) as usize % SHAPES.len()])
}

/// Draws `marker` centred on `at`: on a chart (data coordinates) or on the drawing
/// area (pixels), whatever `C` is.
fn draw_marker<DB, C>(
    area: &DrawingArea<DB, C>,
    marker: Marker,
    at: C::From,
    colour: RGBColor,
) -> anyhow::Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    C: plotters::coord::CoordTranslate,
    C::From: Clone,
{
    let style = colour.filled();
    let drawn = match marker {
        Marker::Circle => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 3, style))),
        Marker::Square => {
            area.draw(&(EmptyElement::at(at) + Rectangle::new([(-3, -3), (3, 3)], style)))
        }
        Marker::Triangle => {
            area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), 4, style)))
        }
        Marker::Diamond => area.draw(
            &(EmptyElement::at(at) + Polygon::new(vec![(0, -4), (4, 0), (0, 4), (-4, 0)], style)),
        ),
    };
    drawn.map_err(|e| anyhow::anyhow!("{e}"))
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Style {
    /// Line through points, with markers.
    Measured,
    /// Dashed line (theory, limits).
    Reference,
}

/// One named series of (x, y) points, with optional (low, high) error bars on y.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Colour key (see [`colour`]).
    pub colour_key: String,
    /// Points, sorted by x.
    pub points: Vec<(f64, f64)>,
    /// Error bars on y, parallel to `points`.
    pub errors: Option<Vec<(f64, f64)>>,
    /// Style.
    pub style: Style,
}

impl Series {
    /// A dashed reference line at height `y` from `x.0` to `x.1`: a bound or a target.
    pub fn horizontal(name: &str, colour_key: &str, x: (f64, f64), y: f64) -> Series {
        Series {
            name: name.into(),
            colour_key: colour_key.into(),
            points: vec![(x.0, y), (x.1, y)],
            errors: None,
            style: Style::Reference,
        }
    }
}

/// A line chart's frame.
pub struct LineChart<'a> {
    /// Title.
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// Log-scaled x.
    pub log_x: bool,
    /// x is a size in bytes: ticks at powers of two, labelled `16 KiB`, `1 GiB`.
    pub x_bytes: bool,
    /// Log-scaled y.
    pub log_y: bool,
    /// Where the legend goes.
    pub legend: Legend,
    /// Shaded spans of x, each labelled at the top (phases of a run); usually none.
    pub bands: &'a [Band],
}

impl<'a> LineChart<'a> {
    /// A frame with linear axes, no bands, and the legend beside the plot (off the data
    /// whatever it does).
    pub fn new(title: &'a str, x_label: &'a str, y_label: &'a str) -> Self {
        LineChart {
            title,
            x_label,
            y_label,
            log_x: false,
            x_bytes: false,
            log_y: false,
            legend: Legend::Outside,
            bands: &[],
        }
    }

    /// With a log-scaled x axis.
    pub fn log_x(self) -> Self {
        LineChart {
            log_x: true,
            ..self
        }
    }

    /// With x a size in bytes on a log axis (ticks at powers of two, labelled in
    /// KiB, MiB and GiB).
    pub fn x_bytes(self) -> Self {
        LineChart {
            log_x: true,
            x_bytes: true,
            ..self
        }
    }

    /// With a log-scaled y axis.
    pub fn log_y(self) -> Self {
        LineChart {
            log_y: true,
            ..self
        }
    }

    /// With these shaded spans of x.
    pub fn bands(self, bands: &'a [Band]) -> Self {
        LineChart { bands, ..self }
    }
}

/// Where a line chart's legend goes.
#[derive(Clone, Debug)]
pub enum Legend {
    /// In a corner of the plot (pick the emptiest corner of the data). The lab's own
    /// charts all use [`Legend::Outside`], so no legend ever covers data.
    Inside(SeriesLabelPosition),
    /// In a column right of the plot, off the data whatever it does (for charts with
    /// many series crossing everywhere).
    Outside,
}

/// Width in pixels of the legend column of [`Legend::Outside`] for these labels: about
/// 7.3 pixels a character at the legend's 14-pixel font, plus the line sample.
fn legend_width(names: &[String]) -> u32 {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    (longest as f64 * 7.3) as u32 + 48
}

/// A shaded span of a chart's x axis with a label: one phase of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    /// Where it starts on the x axis.
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// What it is, written at its top.
    pub label: String,
}

/// The axis ticks a reader wants: labelled (bold) and grid-only (light) positions.
struct Ticks {
    bold: Vec<f64>,
    light: Vec<f64>,
}

/// Ticks for a log axis over `lo..hi`: 1-2-5 in each decade where that gives at most
/// 10 labels, else the decades (every second or more on wide ranges); grid lines at
/// every integer multiple within each decade. Every label is a round number, and none
/// crowd (plotters' own log ticks put 900 and 1000 side by side and left a range below
/// 100 unlabelled).
fn log_ticks(lo: f64, hi: f64) -> Ticks {
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades = || (first..=last).map(|e| 10f64.powi(e));
    let within = |v: &f64| *v >= lo && *v <= hi;
    let one_two_five: Vec<f64> = decades()
        .flat_map(|d| [d, 2.0 * d, 5.0 * d])
        .filter(within)
        .collect();
    let bold = if (2..=10).contains(&one_two_five.len()) {
        one_two_five
    } else {
        let every = ((last - first) as usize / 10).max(1);
        decades().step_by(every).filter(within).collect()
    };
    let light = decades()
        .flat_map(|d| (1..10).map(move |m| m as f64 * d))
        .filter(within)
        .collect();
    Ticks { bold, light }
}

/// Ticks for a log axis of bytes over `lo..hi`: grid lines at every power of two,
/// labels at every 1st, 2nd, 5th or 10th power so that there are at most 10.
fn byte_ticks(lo: f64, hi: f64) -> Ticks {
    let exponents: Vec<i32> = (lo.log2().ceil() as i32..=hi.log2().floor() as i32).collect();
    let step = [1, 2, 5, 10, 20]
        .into_iter()
        .find(|step| exponents.iter().filter(|e| *e % step == 0).count() <= 10)
        .unwrap_or(20);
    let power = |e: &i32| 2f64.powi(*e);
    Ticks {
        bold: exponents
            .iter()
            .filter(|e| *e % step == 0)
            .map(power)
            .collect(),
        light: exponents.iter().map(power).collect(),
    }
}

/// A size in bytes as a reader writes it: `512 B`, `16 KiB`, `1.5 MiB`, `1 GiB`.
pub fn bytes_label(v: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = v;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{} {}", human(value), units[unit])
}

/// Ticks for a linear axis over `lo..hi`: a step of 1, 2 or 5 times a power of ten,
/// about 8 labels; whole numbers only when the data are whole numbers (threads, not
/// 0.1 threads).
fn linear_ticks(lo: f64, hi: f64, whole: bool) -> Ticks {
    let raw = ((hi - lo) / 8.0).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    let step = if whole { step.max(1.0).round() } else { step };
    let multiples = |step: f64| {
        let start = (lo / step).ceil() as i64;
        let end = (hi / step).floor() as i64;
        (start..=end).map(move |i| i as f64 * step)
    };
    let light_step = if whole && step < 5.0 {
        step
    } else {
        step / 5.0
    };
    Ticks {
        bold: multiples(step).collect(),
        light: multiples(light_step).collect(),
    }
}

/// A linear axis with our own ticks. plotters' `WithKeyPoints` over an `f64` range loses
/// its label formatting, so this is the linear coordinate itself, mapped as plotters
/// maps `RangedCoordf64`.
struct Linear {
    lo: f64,
    hi: f64,
    ticks: Ticks,
}

impl plotters::coord::ranged1d::Ranged for Linear {
    type ValueType = f64;
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        if self.hi == self.lo {
            return (limit.1 - limit.0) / 2;
        }
        let t = (v - self.lo) / (self.hi - self.lo);
        limit.0 + ((limit.1 - limit.0) as f64 * t + 1e-3).floor() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.ticks.light.clone()
        } else {
            self.ticks.bold.clone()
        }
    }
}

/// A linear axis over `lo..hi` with these ticks.
fn linear_axis(lo: f64, hi: f64, ticks: &Ticks) -> Linear {
    Linear {
        lo,
        hi,
        ticks: Ticks {
            bold: ticks.bold.clone(),
            light: ticks.light.clone(),
        },
    }
}

/// A log axis over `lo..hi` with these ticks.
fn log_axis(
    lo: f64,
    hi: f64,
    ticks: &Ticks,
) -> plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>> {
    use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
    (lo..hi)
        .log_scale()
        .with_key_points(ticks.bold.clone())
        .with_light_points(ticks.light.clone())
}

/// Ticks for an axis of `values` over `lo..hi`.
fn ticks(lo: f64, hi: f64, log: bool, mut values: impl Iterator<Item = f64>) -> Ticks {
    if log {
        log_ticks(lo, hi)
    } else {
        linear_ticks(lo, hi, values.all(|v| v.fract() == 0.0))
    }
}

/// Legend names, with a note where a line lies exactly on an earlier one and so hides
/// it (`linebloom` under `linebloom-atomic`: the same filter, the same points), naming
/// the earlier one by its colour key (its contender).
fn legend_names(series: &[Series]) -> Vec<String> {
    series
        .iter()
        .enumerate()
        .map(
            |(i, s)| match series[..i].iter().find(|t| t.points == s.points) {
                Some(twin) if !s.points.is_empty() => {
                    format!("{} (on {})", s.name, twin.colour_key)
                }
                _ => s.name.clone(),
            },
        )
        .collect()
}

/// A tick label a reader takes in at a glance: three significant digits at most, no
/// float noise (`1e-4`, not `9.999999999999999e-5`; `1e6`, not `1000000.0`).
pub fn human(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        let (mantissa, exponent) = s.split_once('e').expect("exponent format");
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-9);
        ((lo - pad).min(0.0_f64.max(lo - pad)), hi + pad)
    }
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    frame: &LineChart,
    series: &[Series],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.errors.iter().flatten().flat_map(|e| [e.0, e.1]))
    });
    let (x0, x1) = range(xs.clone(), frame.log_x);
    let (x0, x1) = frame
        .bands
        .iter()
        .fold((x0, x1), |(a, b), band| (a.min(band.from), b.max(band.to)));
    let (y0, y1) = range(ys.clone(), frame.log_y);
    let x_ticks = if frame.x_bytes {
        byte_ticks(x0, x1)
    } else {
        ticks(x0, x1, frame.log_x, xs)
    };
    let x_label = |v: &f64| {
        if frame.x_bytes {
            bytes_label(*v)
        } else {
            human(*v)
        }
    };
    let y_ticks = ticks(y0, y1, frame.log_y, ys);
    let names = legend_names(series);
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(frame.x_label)
                .y_desc(frame.y_label)
                .x_label_formatter(&x_label)
                .y_label_formatter(&|v| human(*v))
                .label_style(("sans-serif", 16))
                .axis_desc_style(("sans-serif", 18))
                .draw()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for (i, band) in frame.bands.iter().enumerate() {
                let shade = if i % 2 == 0 { 0.05 } else { 0.12 };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(band.from, y0), (band.to, y1)],
                        BLACK.mix(shade).filled(),
                    )))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                let label_y = if frame.log_y {
                    y1 / 1.25
                } else {
                    y1 - (y1 - y0) * 0.04
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        band.label.clone(),
                        ((band.from + band.to) / 2.0, label_y),
                        ("sans-serif", 14).into_font().color(&BLACK).pos(
                            plotters::style::text_anchor::Pos::new(
                                plotters::style::text_anchor::HPos::Center,
                                plotters::style::text_anchor::VPos::Top,
                            ),
                        ),
                    )))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            for (s, name) in series.iter().zip(&names) {
                let c = colour(&s.colour_key);
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1.is_finite() && (!frame.log_y || p.1 > 0.0))
                    .collect();
                match s.style {
                    Style::Measured => {
                        chart
                            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                            .map_err(|e| anyhow::anyhow!("{e}"))?
                            .label(name.clone())
                            .legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                            });
                        let shape = marker(&s.colour_key);
                        for &p in &pts {
                            draw_marker(chart.plotting_area(), shape, p, c)?;
                        }
                    }
                    Style::Reference => {
                        chart
                            .draw_series(DashedLineSeries::new(
                                pts.clone(),
                                6,
                                4,
                                c.stroke_width(2),
                            ))
                            .map_err(|e| anyhow::anyhow!("{e}"))?
                            .label(name.clone())
                            .legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(1))
                            });
                    }
                }
                if let Some(errs) = &s.errors {
                    let bars = s.points.iter().zip(errs).filter(|(p, e)| {
                        p.0.is_finite()
                            && e.0.is_finite()
                            && e.1.is_finite()
                            && (!frame.log_y || e.0 > 0.0)
                    });
                    chart
                        .draw_series(bars.map(|(p, e)| {
                            ErrorBar::new_vertical(p.0, e.0, p.1, e.1, c.stroke_width(1), 6)
                        }))
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                }
            }
            if let Legend::Inside(corner) = &frame.legend {
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 14))
                    .position(corner.clone())
                    .draw()
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
        }};
    }
    let mut b = ChartBuilder::on(root);
    b.caption(frame.title, ("sans-serif", 24))
        .margin(16)
        .margin_right(match frame.legend {
            Legend::Inside(_) => 16,
            Legend::Outside => 16 + legend_width(&names),
        })
        .x_label_area_size(50)
        .y_label_area_size(80);
    let x_lin = || linear_axis(x0, x1, &x_ticks);
    let x_log = || log_axis(x0, x1, &x_ticks);
    let y_lin = || linear_axis(y0, y1, &y_ticks);
    let y_log = || log_axis(y0, y1, &y_ticks);
    match (frame.log_x, frame.log_y) {
        (true, true) => body!(
            b.build_cartesian_2d(x_log(), y_log())
                .map_err(|e| anyhow::anyhow!("{e}"))?
        ),
        (true, false) => body!(
            b.build_cartesian_2d(x_log(), y_lin())
                .map_err(|e| anyhow::anyhow!("{e}"))?
        ),
        (false, true) => body!(
            b.build_cartesian_2d(x_lin(), y_log())
                .map_err(|e| anyhow::anyhow!("{e}"))?
        ),
        (false, false) => body!(
            b.build_cartesian_2d(x_lin(), y_lin())
                .map_err(|e| anyhow::anyhow!("{e}"))?
        ),
    }
    if let Legend::Outside = frame.legend {
        draw_outside_legend(root, series, &names)?;
    }
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// The legend of [`Legend::Outside`]: a column at the right edge of the image, in the
/// margin the chart left for it (plotters clips its own legend to the plot).
fn draw_outside_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    series: &[Series],
    names: &[String],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let x = SIZE.0 as i32 - legend_width(names) as i32;
    for (i, (s, name)) in series.iter().zip(names).enumerate() {
        let y = 60 + 20 * i as i32;
        let c = colour(&s.colour_key);
        let sample = match s.style {
            Style::Measured => PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(2)),
            Style::Reference => PathElement::new(vec![(x, y), (x + 8, y)], c.stroke_width(2)),
        };
        root.draw(&sample).map_err(|e| anyhow::anyhow!("{e}"))?;
        if s.style == Style::Measured {
            draw_marker(root, marker(&s.colour_key), (x + 11, y), c)?;
        }
        if s.style == Style::Reference {
            root.draw(&PathElement::new(
                vec![(x + 14, y), (x + 22, y)],
                c.stroke_width(2),
            ))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        root.draw(&Text::new(
            name.clone(),
            (x + 30, y - 8),
            ("sans-serif", 14).into_font().color(&BLACK),
        ))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}

/// Draws a line chart into `dir/plot.svg` and `dir/plot.png`.
pub fn line_chart(dir: &Path, frame: &LineChart, series: &[Series]) -> anyhow::Result<()> {
    line_chart_as(dir, "plot", frame, series)
}

/// Draws a line chart into `dir/<stem>.svg` and `dir/<stem>.png`.
pub fn line_chart_as(
    dir: &Path,
    stem: &str,
    frame: &LineChart,
    series: &[Series],
) -> anyhow::Result<()> {
    register_font();
    let svg = dir.join(format!("{stem}.svg"));
    draw_lines(
        &SVGBackend::new(&svg, SIZE).into_drawing_area(),
        frame,
        series,
    )
    .with_context(|| format!("drawing {}", svg.display()))?;
    let png = dir.join(format!("{stem}.png"));
    draw_lines(
        &BitMapBackend::new(&png, SIZE).into_drawing_area(),
        frame,
        series,
    )
    .with_context(|| format!("drawing {}", png.display()))?;
    Ok(())
}

/// The y axis of a bar chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarScale {
    /// From zero, linear.
    Linear,
    /// Logarithmic, for values that span orders of magnitude; bars start at the axis
    /// floor, and every bar keeps its value printed on top.
    Log,
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    bars: &[(String, String, f64)],
    scale: BarScale,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    // The legend gets its own column right of the plot, so it never covers a bar.
    let (plot_area, legend_area) = root.split_horizontally(root.dim_in_pixel().0 * 4 / 5);
    let mut builder = ChartBuilder::on(&plot_area);
    builder
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(80);
    let x = (0..bars.len()).into_segmented();
    let values = bars.iter().map(|b| b.2).filter(|v| v.is_finite());
    match scale {
        BarScale::Linear => {
            let top = values.fold(0.0, f64::max) * 1.15 + 1e-9;
            let mut chart = builder
                .build_cartesian_2d(x, 0.0..top)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            fill_bars(&mut chart, &plot_area, y_label, bars, 0.0, |v| {
                v + top * 0.02
            })?;
        }
        BarScale::Log => {
            let (lo, hi) = range(values, true);
            let mut chart = builder
                .build_cartesian_2d(x, (lo..hi * 1.5).log_scale())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            fill_bars(&mut chart, &plot_area, y_label, bars, lo, |v| v * 1.08)?;
        }
    }
    // Colour keys in order of first appearance: one legend entry each.
    let mut keys: Vec<&str> = Vec::new();
    for b in bars {
        if !keys.contains(&b.1.as_str()) {
            keys.push(&b.1);
        }
    }
    for (row, &key) in keys.iter().enumerate() {
        let y = 70 + 26 * row as i32;
        legend_area
            .draw(&Rectangle::new(
                [(8, y - 7), (26, y + 7)],
                colour(key).filled(),
            ))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        legend_area
            .draw(&Text::new(
                key.to_string(),
                (32, y - 8),
                ("sans-serif", 15).into_font().color(&BLACK),
            ))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// The runs of bars that share a label (bars grouped by case), as `start..end` bar
/// indices in order.
fn groups(bars: &[(String, String, f64)]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, bar) in bars.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if bars[run.0].0 == bar.0 => run.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    runs
}

/// The mesh, the bars from `floor`, each bar's value at `label_at(value)` and each
/// group's label centred below it (drawn on `area`, the chart's whole area), on a chart
/// of either y scale.
fn fill_bars<DB, Y>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<SegmentedCoord<plotters::coord::types::RangedCoordusize>, Y>,
    >,
    area: &DrawingArea<DB, Shift>,
    y_label: &str,
    bars: &[(String, String, f64)],
    floor: f64,
    label_at: impl Fn(f64) -> f64,
) -> anyhow::Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    // The bars' labels are drawn below, once per group, centred under it.
    chart
        .configure_mesh()
        .y_desc(y_label)
        .x_labels(bars.len())
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|v| human(*v))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 18))
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (start, end) in groups(bars) {
        let (left, bottom) = chart.backend_coord(&(SegmentValue::Exact(start), floor));
        let (right, _) = chart.backend_coord(&(SegmentValue::Exact(end), floor));
        let (x0, y0) = area.get_base_pixel();
        let style = ("sans-serif", 15)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        area.draw(&Text::new(
            bars[start].0.clone(),
            ((left + right) / 2 - x0, bottom + 10 - y0),
            style,
        ))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    // Bars with a value (a missing number draws nothing, and says so in its table).
    let drawn = || bars.iter().enumerate().filter(|(_, b)| b.2.is_finite());
    chart
        .draw_series(drawn().map(|(i, b)| {
            let mut r = Rectangle::new(
                [
                    (SegmentValue::Exact(i), floor),
                    (SegmentValue::Exact(i + 1), b.2),
                ],
                colour(&b.1).filled(),
            );
            r.set_margin(0, 0, 4, 4);
            r
        }))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .draw_series(drawn().map(|(i, b)| {
            Text::new(
                if b.2.fract() == 0.0 {
                    format!("{:.0}", b.2)
                } else {
                    format!("{:.1}", b.2)
                },
                (SegmentValue::CenterOf(i), label_at(b.2)),
                ("sans-serif", 13)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            )
        }))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// Draws a bar chart (label, colour key, value) into `dir/plot.svg` and `dir/plot.png`
/// on a linear axis; the legend names each colour key, so labels need only say what
/// differs within one.
pub fn bar_chart(
    dir: &Path,
    title: &str,
    y_label: &str,
    bars: &[(String, String, f64)],
) -> anyhow::Result<()> {
    bar_chart_scaled(dir, title, y_label, bars, BarScale::Linear)
}

/// [`bar_chart`] with the y axis of choice.
pub fn bar_chart_scaled(
    dir: &Path,
    title: &str,
    y_label: &str,
    bars: &[(String, String, f64)],
    scale: BarScale,
) -> anyhow::Result<()> {
    register_font();
    let svg = dir.join("plot.svg");
    draw_bars(
        &SVGBackend::new(&svg, SIZE).into_drawing_area(),
        title,
        y_label,
        bars,
        scale,
    )
    .with_context(|| format!("drawing {}", svg.display()))?;
    let png = dir.join("plot.png");
    draw_bars(
        &BitMapBackend::new(&png, SIZE).into_drawing_area(),
        title,
        y_label,
        bars,
        scale,
    )
    .with_context(|| format!("drawing {}", png.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn bar_groups_are_runs_of_one_label() {
        use super::groups;
        let bar = |label: &str| (label.to_string(), "key".to_string(), 1.0);
        let bars = [bar("a"), bar("a"), bar("b"), bar("a")];
        assert_eq!(groups(&bars), [(0, 2), (2, 3), (3, 4)]);
        assert!(groups(&[]).is_empty());
    }

    #[test]
    fn markers_are_fixed_and_neighbours_differ() {
        use super::marker;
        // A control copy, another shape of a kernel, and linebloom-<kernel> look like
        // their baseline.
        assert_eq!(marker("sbbf-rs-safe-control"), marker("sbbf-rs-safe"));
        assert_eq!(marker("avx512 k=7"), marker("avx512"));
        assert_eq!(marker("linebloom-avx2"), marker("avx2"));
        // Neighbours in a list of contenders (which share plots) never share a marker.
        for list in crate::contenders::looks::ALL {
            for pair in list.windows(2) {
                assert_ne!(marker(pair[0].name), marker(pair[1].name), "{pair:?}");
            }
        }
        assert_eq!(marker("anything else"), marker("anything else"));
    }

    #[test]
    fn byte_ticks_are_powers_of_two_in_kib_mib_gib() {
        use super::{byte_ticks, bytes_label};
        assert_eq!(bytes_label(512.0), "512 B");
        assert_eq!(bytes_label(16.0 * 1024.0), "16 KiB");
        assert_eq!(bytes_label(1536.0 * 1024.0), "1.5 MiB");
        assert_eq!(bytes_label(f64::from(1u32 << 30)), "1 GiB");
        // 16 KiB to 1 GiB: 17 powers of two, every second one labelled.
        let t = byte_ticks(10_000.0, 1.7e9);
        assert_eq!(t.light.len(), 17);
        assert_eq!(t.bold.len(), 9);
        assert_eq!(t.bold[0], 16384.0);
        assert!(t.bold.iter().all(|v| v.log2().fract() == 0.0));
    }

    #[test]
    fn tick_labels_are_human() {
        use super::human;
        let cases = [
            (9.999999999999999e-5, "1e-4"),
            (1e-4, "1e-4"),
            (2.5e-5, "2.5e-5"),
            (0.01, "0.01"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (10.0, "10"),
            (1234.6, "1235"),
            (1_000_000.0, "1e6"),
            (0.0, "0"),
        ];
        for (v, want) in cases {
            assert_eq!(human(v), want, "{v}");
        }
    }

    #[test]
    fn log_ticks_label_round_numbers_without_crowding() {
        use super::log_ticks;
        // The penetration chart's range: plotters labelled 900 next to 1000 and
        // nothing below 100.
        let t = log_ticks(25.0, 1500.0);
        assert_eq!(t.bold, vec![50.0, 100.0, 200.0, 500.0, 1000.0]);
        assert!(t.light.contains(&30.0) && t.light.contains(&900.0));
        // Many decades: decades only, at most about 10 labels.
        let wide = log_ticks(1e-7, 1.0);
        assert_eq!(wide.bold.len(), 8);
        assert!(log_ticks(1e-300, 1e300).bold.len() <= 11);
    }

    #[test]
    fn whole_number_data_get_whole_number_ticks() {
        use super::{linear_ticks, ticks};
        // Threads 1 and 2: no 0.1-thread ticks.
        let t = ticks(0.95, 2.05, false, [1.0, 2.0].into_iter());
        assert_eq!(t.bold, vec![1.0, 2.0]);
        assert!(t.light.iter().all(|v| v.fract() == 0.0));
        let f = linear_ticks(0.97, 1.05, false);
        assert!((4..=9).contains(&f.bold.len()), "{:?}", f.bold);
        assert!(
            f.bold
                .iter()
                .all(|v| ((v * 100.0).round() - v * 100.0).abs() < 1e-9)
        );
    }

    #[test]
    fn a_hidden_line_is_named_in_the_legend() {
        use super::{Series, Style, legend_names};
        let line = |name: &str, y: f64| Series {
            name: name.into(),
            colour_key: name.into(),
            points: vec![(1.0, y), (2.0, y)],
            errors: None,
            style: Style::Measured,
        };
        let names = legend_names(&[
            line("linebloom", 1.0),
            line("linebloom-atomic", 1.0),
            line("fastbloom", 2.0),
        ]);
        assert_eq!(
            names,
            ["linebloom", "linebloom-atomic (on linebloom)", "fastbloom"]
        );
    }
}
