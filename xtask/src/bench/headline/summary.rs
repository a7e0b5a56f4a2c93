// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask headline --from results --summary`: every headline in one line per load,
//! each boot's ratio side by side and what all the boots together show, then the boots
//! and their conditions.

use super::{fmt_ratio, within, Cell, Computed, HEADLINES};
use std::fmt::Write as _;

/// What every boot of a cell row shows together: a difference only where each boot's
/// interval leaves out 1 on the same side, a sameness only where each lies inside the
/// margin named before the boots.
pub fn verdict(cells: &[Cell], margin: Option<f64>) -> &'static str {
    let qs: Vec<_> = cells.iter().filter_map(|c| c.q).collect();
    if qs.is_empty() || qs.len() < cells.len() {
        return "no interval in a boot";
    }
    let above = qs.iter().all(|q| q.significant && q.lo > 1.0);
    let below = qs.iter().all(|q| q.significant && q.hi < 1.0);
    let same = margin.is_some_and(|m| qs.iter().all(|q| within(q, m)));
    match (above, below, same, margin.is_some()) {
        (true, _, true, _) => "above 1, within the margin",
        (_, true, true, _) => "below 1, within the margin",
        (true, _, _, _) => "above 1",
        (_, true, _, _) => "below 1",
        (_, _, true, _) => "the same",
        (_, _, _, true) => "neither shown",
        _ => "not shown",
    }
}

/// A boot's conditions as parts: the seed and the commit, then the rest (guest, kernel,
/// runs, date); another build's path after `;` is left out.
fn split_conditions(c: &str) -> (Vec<&str>, Vec<&str>) {
    let mut own = Vec::new();
    let mut common = Vec::new();
    for part in c.split("; ").next().unwrap_or(c).split(", ") {
        match part.strip_prefix("order --seed ") {
            Some(seed) => own.push(seed),
            None if part.starts_with("at ") => own.push(part),
            None => common.push(part),
        }
    }
    (own, common)
}

/// Each boot's own parts (its seed, commit, and whatever it does not share with every
/// other boot of `conds`), and the parts they all share.
fn boot_parts(conds: &[(String, String)]) -> (Vec<String>, Vec<&str>) {
    let split: Vec<_> = conds.iter().map(|(_, c)| split_conditions(c)).collect();
    let shared: Vec<&str> = split.first().map_or(vec![], |(_, rest)| {
        let in_all = |p: &&str| split.iter().all(|(_, r)| r.contains(p));
        rest.iter().copied().filter(in_all).collect()
    });
    let own = split.iter().map(|(o, rest)| {
        let extra = rest.iter().filter(|p| !shared.contains(p));
        o.iter()
            .chain(extra)
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    });
    (own.collect(), shared)
}

/// The boots, grouped by the headlines that read them, with their conditions once.
fn boots(out: &mut String, all: &[Computed]) {
    let mut groups: Vec<(Vec<&str>, &Computed)> = Vec::new();
    for (h, c) in HEADLINES.iter().zip(all) {
        match groups
            .iter_mut()
            .find(|(_, g)| g.conditions == c.conditions)
        {
            Some((ids, _)) => ids.push(h.id()),
            None => groups.push((vec![h.id()], c)),
        }
    }
    let _ = writeln!(out, "boots (results/FOLDER), then their conditions:");
    for (ids, c) in groups {
        let (own, shared) = boot_parts(&c.conditions);
        let each: Vec<String> = c
            .conditions
            .iter()
            .zip(own)
            .map(|((d, _), o)| format!("{d} (seed {o})"))
            .collect();
        let common = shared.join(", ");
        let _ = writeln!(out, "  {}: {}", ids.join(" "), each.join("; "));
        let _ = writeln!(out, "  {:w$}  {common}", "", w = ids.join(" ").len());
    }
}

/// The summary of every headline.
pub fn text(all: &[Computed]) -> String {
    let mut out = String::new();
    let boots_n = all.iter().map(|c| c.conditions.len()).max().unwrap_or(0);
    let heads: Vec<String> = (1..=boots_n).map(|b| format!("boot {b}")).collect();
    let _ = write!(out, "{:<3} {:<38} {:>4} {:>2}", "", "A/B", "load", "n");
    for h in heads {
        let _ = write!(out, "  {h:<21}");
    }
    let _ = writeln!(out, "  every boot");
    for (h, c) in HEADLINES.iter().zip(all) {
        for (i, (load, cells)) in c.loads.iter().enumerate() {
            let (hid, what) = match i {
                0 => (h.id(), h.short),
                _ => ("", ""),
            };
            let n = cells.iter().map(|c| c.n).min().unwrap_or(0);
            let _ = write!(out, "{hid:<3} {what:<38} {load:>4} {n:>2}");
            for cell in cells {
                let _ = write!(out, "  {:<21}", fmt_ratio(&cell.q));
            }
            let _ = writeln!(out, "  {}", verdict(cells, h.margin));
        }
    }
    let _ = writeln!(out, "margins named before their boots:");
    for h in HEADLINES.iter().filter(|h| h.margin.is_some()) {
        let m = h.margin.unwrap_or(1.0);
        let _ = writeln!(out, "  {}: [{:.3},{m:.3}]", h.id(), 1.0 / m);
    }
    boots(&mut out, all);
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::stats::Ratio;

    fn cell(ratio: f64, lo: f64, hi: f64) -> Cell {
        let q = Ratio {
            ratio,
            lo,
            hi,
            significant: lo > 1.0 || hi < 1.0,
        };
        Cell {
            dir: "b",
            n: 5,
            q: Some(q),
        }
    }

    /// A difference needs every boot on one side of 1; a sameness every boot inside.
    #[test]
    fn verdict_needs_every_boot() {
        let below = [cell(0.8, 0.7, 0.9), cell(0.7, 0.5, 0.98)];
        assert_eq!(verdict(&below, None), "below 1");
        let one = [cell(0.8, 0.7, 0.9), cell(0.8, 0.6, 1.06)];
        assert_eq!(verdict(&one, None), "not shown");
        let split = [cell(1.2, 1.1, 1.3), cell(0.8, 0.7, 0.9)];
        assert_eq!(verdict(&split, None), "not shown");
        let same = [cell(1.05, 1.004, 1.107), cell(1.05, 0.994, 1.118)];
        assert_eq!(verdict(&same, Some(1.2)), "the same");
        assert_eq!(verdict(&same[..1], Some(1.2)), "above 1, within the margin");
        assert_eq!(verdict(&one, Some(1.2)), "neither shown");
        let none = [
            cell(1.0, 0.9, 1.1),
            Cell {
                dir: "b",
                n: 1,
                q: None,
            },
        ];
        assert_eq!(verdict(&none, None), "no interval in a boot");
    }

    #[test]
    fn conditions_split_into_own_and_shared() {
        let c = "1:4:2 guest (8 vCPUs), kernel 7.3.4, 5 run(s) x 3 s, order --seed 175, \
                 2026-12-06, at 6f03b76; before is scx_sis from /tmp/x (v)";
        let (own, common) = split_conditions(c);
        assert_eq!(own, ["175", "at 6f03b76"]);
        assert_eq!(common[0], "1:4:2 guest (8 vCPUs)");
        let two = |d: &str, s: &str| (d.to_string(), format!("g, {s}, order --seed 1, at x"));
        let conds = [two("a", "2026-12-06"), two("b", "2026-12-07")];
        let (own, shared) = boot_parts(&conds);
        assert_eq!(shared, ["g"]);
        assert_eq!(own, ["1, at x, 2026-12-06", "1, at x, 2026-12-07"]);
    }
}
