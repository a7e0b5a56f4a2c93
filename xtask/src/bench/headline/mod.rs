// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask headline --from results`: the primary A/Bs (named in list.rs before their
//! runs), each a ratio paired by round with its 95 % interval, per load and per boot,
//! with the boot-to-boot spread; `--summary` (summary.rs) gives BENCHMARKS.md's first
//! page a line per load; and one SVG per headline.

use super::files::read_csv;
use super::parse::Records;
use super::stats::{paired_ci, Ratio};
use anyhow::{Context, Result};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

mod list;
mod summary;

pub use list::{Headline, Pair, HEADLINES};

/// One folder's records and its conditions (the tables' header, up to the features).
struct Boot {
    records: Records,
    conditions: String,
}

/// One folder's records of `suites` (the first gives the conditions).
fn load_boot(root: &Path, dir: &str, suites: &[&str]) -> Result<Boot> {
    let base = root.join(dir).join(suites[0]);
    let mut records = Records::new();
    for s in suites {
        read_csv(&root.join(dir).join(s).with_extension("csv"), &mut records)?;
    }
    let txt = std::fs::read_to_string(base.with_extension("txt"))
        .with_context(|| format!("reading {}", base.with_extension("txt").display()))?;
    let head = txt.lines().next().unwrap_or("");
    let conditions = head
        .trim_start_matches("# ")
        .split("; EEVDF")
        .next()
        .unwrap_or("")
        .to_string();
    Ok(Boot {
        records,
        conditions,
    })
}

/// The per-run ratios conf / base of `h`'s metric in `suite` at `load`, keyed by run.
fn per_run(r: &Records, h: &Headline, p: &Pair, load: u32) -> BTreeMap<u32, f64> {
    let get = |c: &str| r.get(&(p.suite.into(), c.into(), load, h.metric.into()));
    let (conf, base) = (p.conf, p.base);
    let (Some(a), Some(b)) = (get(conf), get(base)) else {
        return BTreeMap::new();
    };
    a.iter()
        .filter_map(|(k, x)| b.get(k).filter(|y| **y > 0.0).map(|y| (*k, x / y)))
        .collect()
}

/// The headline's ratio at `load` in one boot: n pairs and the paired interval.
fn boot_ratio(r: &Records, h: &Headline, load: u32) -> (usize, Option<Ratio>) {
    let pair = Pair {
        suite: h.suite,
        conf: h.conf,
        base: h.base,
    };
    let num = per_run(r, h, &pair, load);
    let den = match &h.den {
        Some(d) => per_run(r, h, d, load),
        None => num.keys().map(|k| (*k, 1.0)).collect(),
    };
    let n = num.keys().filter(|k| den.contains_key(k)).count();
    (n, paired_ci(&num, &den))
}

fn fmt_ratio(q: &Option<Ratio>) -> String {
    match q {
        Some(q) => format!(
            "{:.3}{} [{:.3},{:.3}]",
            q.ratio,
            if q.significant { " " } else { "~" },
            q.lo,
            q.hi
        ),
        None => "- (no interval)".into(),
    }
}

/// The verdict on `q` against the margin [1/m, m]: the whole interval inside it is "same".
fn equivalence(q: &Ratio, m: f64) -> &'static str {
    if within(q, m) {
        "  same"
    } else {
        "  not shown the same"
    }
}

/// Does `q`'s whole interval lie inside the margin [1/m, m]?
fn within(q: &Ratio, m: f64) -> bool {
    q.lo >= 1.0 / m && q.hi <= m
}

/// One point of a headline's plot: its label, ratio and interval.
type Point = (String, Ratio);

/// One boot's ratio at one load: its folder, the pairs and the paired interval.
pub struct Cell {
    pub dir: &'static str,
    pub n: usize,
    pub q: Option<Ratio>,
}

/// A headline's cells, per load in `h.loads`' order, one per boot.
pub struct Computed {
    pub loads: Vec<(u32, Vec<Cell>)>,
    /// (folder, conditions) of each boot, in `h.dirs`' order.
    pub conditions: Vec<(String, String)>,
}

/// `h`'s ratios in each of its boots.
pub fn compute(root: &Path, h: &Headline) -> Result<Computed> {
    let den = h.den.as_ref().map(|p| p.suite).filter(|s| *s != h.suite);
    let suites: Vec<&str> = [Some(h.suite), den].into_iter().flatten().collect();
    let boots: Vec<Boot> = h
        .dirs
        .iter()
        .map(|d| load_boot(root, d, &suites))
        .collect::<Result<_>>()?;
    let loads = h
        .loads
        .iter()
        .map(|&l| {
            let cells = h.dirs.iter().zip(&boots).map(|(dir, b)| {
                let (n, q) = boot_ratio(&b.records, h, l);
                Cell { dir, n, q }
            });
            (l, cells.collect())
        })
        .collect();
    let conditions = h.dirs.iter().zip(boots);
    Ok(Computed {
        loads,
        conditions: conditions
            .map(|(d, b)| (d.to_string(), b.conditions))
            .collect(),
    })
}

/// Every headline computed, in `HEADLINES`' order.
pub fn compute_all(root: &Path) -> Result<Vec<Computed>> {
    HEADLINES.iter().map(|h| compute(root, h)).collect()
}

/// One headline's block: per load, each boot's ratio and the spread between boots.
fn block(out: &mut String, h: &Headline, c: &Computed) {
    let what = match h.den {
        Some(_) => h.label.to_string(),
        None => format!("{} / {}, {}", h.conf, h.base, h.label),
    };
    let _ = writeln!(out, "{}\n  {what}", h.title);
    if let Some(m) = h.margin {
        let _ = writeln!(
            out,
            "  same: the interval inside [{:.3},{m:.3}], a margin named before these boots",
            1.0 / m
        );
    }
    let _ = writeln!(
        out,
        "  {:<6} {:<28} {:>2}  ratio [95% CI]",
        "load", "boot", "n"
    );
    for (l, cells) in &c.loads {
        for cell in cells {
            let within = match (h.margin, &cell.q) {
                (Some(m), Some(q)) => equivalence(q, m),
                _ => "",
            };
            let (d, n) = (cell.dir, cell.n);
            let _ = writeln!(
                out,
                "  {l:<6} {d:<28} {n:>2}  {}{within}",
                fmt_ratio(&cell.q)
            );
        }
        let ratios: Vec<f64> = cells.iter().filter_map(|c| c.q.map(|q| q.ratio)).collect();
        if ratios.len() > 1 {
            let (lo, hi) = ratios
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), r| (a.min(*r), b.max(*r)));
            let _ = writeln!(
                out,
                "  {l:<6} {:<28}     highest / lowest boot: {:.3}",
                "boot to boot",
                hi / lo
            );
        }
    }
    out.push('\n');
}

/// The points of a headline's plot: "load bN" and the ratio of each boot that has one.
fn points(c: &Computed) -> Vec<Point> {
    let mut pts = Vec::new();
    for (l, cells) in &c.loads {
        let qs = cells.iter().filter_map(|c| c.q);
        pts.extend(qs.enumerate().map(|(i, q)| (format!("{l} b{}", i + 1), q)));
    }
    pts
}

/// The text of every headline in `all`, with the conditions of each boot once.
fn headlines(all: &[Computed]) -> String {
    let mut out = String::new();
    let mut seen: Vec<&(String, String)> = Vec::new();
    for (h, c) in HEADLINES.iter().zip(all) {
        block(&mut out, h, c);
        for dc in &c.conditions {
            if !seen.iter().any(|(x, _)| *x == dc.0) {
                seen.push(dc);
            }
        }
    }
    out.push_str("conditions of each boot:\n");
    for (d, c) in seen {
        let _ = writeln!(out, "  {d}: {c}");
    }
    out.trim_end().to_string()
}

/// `cargo xtask headline --from ROOT [--summary] [--svg DIR]`.
pub fn print(root: &Path, summary: bool, svg: Option<&Path>) -> Result<i32> {
    let all = compute_all(root)?;
    let text = match summary {
        true => summary::text(&all),
        false => headlines(&all),
    };
    println!("{text}");
    if let Some(dir) = svg {
        write_svgs(&all, dir)?;
    }
    Ok(0)
}

impl Headline {
    /// Its number ("2b" of "2b. ...").
    pub fn id(&self) -> &str {
        self.title.split('.').next().unwrap_or(self.title)
    }

    /// Its plot's file name, from its number ("2b. ..." plots to headline-2b.svg).
    pub fn svg(&self) -> String {
        format!("headline-{}.svg", self.id())
    }
}

/// Each headline's SVG in `dir` (`cargo xtask doc` writes docs/img's).
pub fn print_svgs(root: &Path, dir: &Path) -> Result<()> {
    write_svgs(&compute_all(root)?, dir)
}

/// The SVG of each headline of `all` in `dir`.
fn write_svgs(all: &[Computed], dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (h, c) in HEADLINES.iter().zip(all) {
        plot(h, &points(c), &dir.join(h.svg()))?;
    }
    Ok(())
}

/// One headline's ratios with their intervals as error bars, and the line at 1.
fn plot(h: &Headline, pts: &[Point], path: &Path) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plotting {}: {e}", path.display());
    let hi = pts.iter().map(|p| p.1.hi).fold(1.0f64, f64::max) * 1.1;
    let lo = pts.iter().map(|p| p.1.lo).fold(1.0f64, f64::min) * 0.9;
    let root = SVGBackend::new(path, (640, 360)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n = pts.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(h.title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..hi)
        .map_err(|e| err(&e))?;
    let label_of = super::plot::index_labels(pts.iter().map(|p| p.0.clone()).collect());
    chart
        .configure_mesh()
        .x_desc("load, boot")
        .y_desc("ratio, 95 % CI")
        .x_labels(n.max(2))
        .x_label_formatter(&label_of)
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            [(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
            BLACK.mix(0.4),
        ))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(pts.iter().enumerate().map(|(i, p)| {
            ErrorBar::new_vertical(i as f64, p.1.lo, p.1.ratio, p.1.hi, BLUE.filled(), 8)
        }))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(rows: &[(&str, u32, f64)]) -> Records {
        let mut r = Records::new();
        for (c, run, v) in rows {
            r.entry(("tbench".into(), c.to_string(), 8, "mb_s".into()))
                .or_default()
                .insert(*run, *v);
        }
        r
    }

    /// The ratio of ratios pairs all four configurations by run.
    #[test]
    fn ratio_of_ratios_by_run() {
        let h = &HEADLINES[HEADLINES.len() - 1];
        assert!(h.den.is_some());
        let r = rec(&[
            ("eevdf", 1, 100.0),
            ("eevdf", 2, 120.0),
            ("eevdf", 3, 90.0),
            ("eevdf:NO_SIS_UTIL", 1, 80.0),
            ("eevdf:NO_SIS_UTIL", 2, 97.0),
            ("eevdf:NO_SIS_UTIL", 3, 71.0),
            ("sis", 1, 50.0),
            ("sis", 2, 60.0),
            ("sis", 3, 40.0),
            ("sis:NO_SIS_UTIL", 1, 50.0),
            ("sis:NO_SIS_UTIL", 2, 61.0),
            ("sis:NO_SIS_UTIL", 3, 39.0),
        ]);
        let (n, q) = boot_ratio(&r, h, 8);
        let q = q.unwrap();
        assert_eq!(n, 3);
        // the kernel's switch costs 0.8 of its throughput, ours nothing
        assert!((q.ratio - 0.8).abs() < 0.01 && q.significant, "{q:?}");
    }

    /// Only an interval wholly inside the margin is called the same.
    #[test]
    fn equivalence_needs_the_whole_interval() {
        let q = |lo, hi| Ratio {
            ratio: 1.0,
            lo,
            hi,
            significant: false,
        };
        assert_eq!(equivalence(&q(0.85, 1.2), 1.25), "  same");
        assert_eq!(equivalence(&q(0.79, 1.2), 1.25), "  not shown the same");
        assert_eq!(equivalence(&q(0.85, 1.26), 1.25), "  not shown the same");
        let h = HEADLINES
            .iter()
            .find(|h| h.title.starts_with("6."))
            .unwrap();
        assert_eq!(h.margin, Some(1.25));
    }

    /// A denominator from another suite pairs that suite's runs by round.
    #[test]
    fn ratio_of_ratios_across_suites() {
        let h = HEADLINES
            .iter()
            .find(|h| h.title.starts_with("2c."))
            .unwrap();
        let mut r = Records::new();
        let rows = [
            ("wakeup", "sis", [60.0, 68.0, 70.0]),
            ("wakeup", "eevdf", [40.0, 44.0, 48.0]),
            ("latency", "sis", [50.0, 40.0, 45.0]),
            ("latency", "eevdf", [50.0, 40.0, 45.0]),
        ];
        for (s, c, v) in rows {
            for (run, x) in v.iter().enumerate() {
                r.entry((s.into(), c.into(), 4, "probe_p99_us".into()))
                    .or_default()
                    .insert(run as u32 + 1, *x);
            }
        }
        let (n, q) = boot_ratio(&r, h, 4);
        let q = q.unwrap();
        // about 1.5 under the instruments, 1 bare: they inflate the A/B by half
        assert_eq!(n, 3);
        assert!(
            (q.ratio - 1.5).abs() < 0.05 && q.lo < 1.5 && q.hi > 1.5,
            "{q:?}"
        );
    }
}
