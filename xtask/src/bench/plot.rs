// SPDX-License-Identifier: GPL-2.0-only
//! One SVG per bench suite: its first metric against the load, a line per configuration.

use super::parse::{mean, Records};
use super::suites::Suite;
use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::path::Path;

/// An x-axis formatter for points at 0, 1, 2, ...: the label of the point at x, or
/// nothing between points.
pub fn index_labels(labels: Vec<String>) -> impl Fn(&f64) -> String {
    move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
            labels[i as usize].clone()
        } else {
            String::new()
        }
    }
}

pub fn svg(
    r: &Records,
    s: &Suite,
    scheds: &[String],
    loads: &[u32],
    header: &str,
    path: &Path,
) -> Result<()> {
    let metric = &s.metrics[0];
    // load points are evenly spaced (they usually double): x is the point's index
    let series: Vec<(&String, Vec<(f64, f64)>)> = scheds
        .iter()
        .map(|c| {
            let pts = loads
                .iter()
                .enumerate()
                .filter_map(|(i, &l)| {
                    let v = r.get(&(s.name.into(), c.clone(), l, metric.key.into()))?;
                    Some((i as f64, mean(v)?))
                })
                .collect();
            (c, pts)
        })
        .collect();
    let ymax = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.15;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| anyhow!("plotting {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let title = format!("{}: {}", s.name, metric.label);
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.3f64..(loads.len() as f64 - 0.7).max(0.7), 0.0f64..ymax)
        .map_err(|e| err(&e))?;
    let label_of = index_labels(loads.iter().map(u32::to_string).collect());
    chart
        .configure_mesh()
        .x_desc(format!("{} ({header})", s.load))
        .y_desc(format!(
            "{} ({} is better)",
            metric.label,
            if metric.higher_is_better {
                "higher"
            } else {
                "lower"
            }
        ))
        .x_labels(loads.len().max(2))
        .x_label_formatter(&label_of)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
