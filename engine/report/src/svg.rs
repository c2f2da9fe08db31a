//! Hand-written SVG bar charts.
//!
//! No plotting crate: the charts are simple, and writing the markup directly keeps
//! them byte-for-byte deterministic (fixed layout, coordinates with one decimal,
//! series in the report's sorted model order). Scores are on a fixed 0–1 axis so
//! charts of different reports compare at a glance.

use std::fmt::Write as _;

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
];

const LEFT: f64 = 64.0;
const TOP: f64 = 48.0;
const PLOT_H: f64 = 220.0;
const BAR: f64 = 22.0;
const GAP: f64 = 28.0;
const MIN_PLOT_W: f64 = 240.0;
const LEGEND_W: f64 = 200.0;
const LEGEND_ROW: f64 = 18.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A grouped bar chart of scores in 0..=1: one group per label, one bar per series
/// (a missing value draws no bar).
pub(super) fn grouped_bars(
    title: &str,
    groups: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> String {
    let per_group = series.len().max(1) as f64 * BAR + GAP;
    let plot_w = (groups.len() as f64 * per_group).max(MIN_PLOT_W);
    let width = LEFT + plot_w + 24.0 + LEGEND_W;
    let legend_h = TOP + series.len() as f64 * LEGEND_ROW + 16.0;
    let height = (TOP + PLOT_H + 48.0).max(legend_h);
    let bottom = TOP + PLOT_H;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.1}" height="{height:.1}" viewBox="0 0 {width:.1} {height:.1}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, "<title>{}</title>", esc(title));
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{width:.1}" height="{height:.1}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="24.0" font-size="16" text-anchor="middle">{}</text>"#,
        width / 2.0,
        esc(title)
    );
    // Gridlines and the y axis, 0 to 1 by quarters.
    for i in 0..=4 {
        let v = f64::from(i) / 4.0;
        let y = bottom - v * PLOT_H;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/>"##,
            LEFT + plot_w
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{v:.2}</text>"#,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="16.0" y="{:.1}" text-anchor="middle" transform="rotate(-90 16.0 {:.1})">checkpoint score</text>"#,
        TOP + PLOT_H / 2.0,
        TOP + PLOT_H / 2.0
    );
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT:.1}" y1="{bottom:.1}" x2="{:.1}" y2="{bottom:.1}" stroke="#333333"/>"##,
        LEFT + plot_w
    );
    if groups.is_empty() || series.is_empty() {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#666666">no data</text>"##,
            LEFT + plot_w / 2.0,
            TOP + PLOT_H / 2.0
        );
    }
    for (g, label) in groups.iter().enumerate() {
        let x0 = LEFT + g as f64 * per_group + GAP / 2.0;
        for (k, (name, values)) in series.iter().enumerate() {
            let Some(v) = values.get(g).copied().flatten() else {
                continue;
            };
            let h = v.clamp(0.0, 1.0) * PLOT_H;
            let x = x0 + k as f64 * BAR;
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}: {v:.3}</title></rect>"#,
                bottom - h,
                BAR - 2.0,
                PALETTE[k % PALETTE.len()],
                esc(&format!("{name}, {label}"))
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="9" text-anchor="middle">{v:.2}</text>"#,
                x + (BAR - 2.0) / 2.0,
                bottom - h - 3.0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x0 + series.len().max(1) as f64 * BAR / 2.0,
            bottom + 18.0,
            esc(label)
        );
    }
    let lx = LEFT + plot_w + 24.0;
    for (k, (name, _)) in series.iter().enumerate() {
        let y = TOP + k as f64 * LEGEND_ROW;
        let _ = writeln!(
            s,
            r#"<rect x="{lx:.1}" y="{y:.1}" width="12.0" height="12.0" fill="{}"/>"#,
            PALETTE[k % PALETTE.len()]
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 18.0,
            y + 10.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_with_values_and_names_are_escaped() {
        let svg = grouped_bars(
            "t",
            &["2 tasks".into(), "3 tasks".into()],
            &[
                ("a<b".into(), vec![Some(1.0), Some(0.5)]),
                ("c".into(), vec![None, Some(0.0)]),
            ],
        );
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a&lt;b") && !svg.contains("a<b"));
        // Full height for 1.0, half for 0.5, none for the missing value.
        assert!(svg.contains(r##"height="220.0" fill="#0072B2""##), "{svg}");
        assert!(svg.contains(r##"height="110.0" fill="#0072B2""##), "{svg}");
        assert_eq!(svg.matches(r##"fill="#E69F00"><title>"##).count(), 1);
        assert_eq!(
            svg,
            grouped_bars(
                "t",
                &["2 tasks".into(), "3 tasks".into()],
                &[
                    ("a<b".into(), vec![Some(1.0), Some(0.5)]),
                    ("c".into(), vec![None, Some(0.0)])
                ]
            )
        );
    }

    #[test]
    fn empty_chart_says_so() {
        assert!(grouped_bars("t", &[], &[]).contains("no data"));
    }
}
