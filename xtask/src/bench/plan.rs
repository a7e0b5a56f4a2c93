// SPDX-License-Identifier: GPL-2.0-only
//! A bench's plan: the suites and their loads, the configurations (`--sched`), and the
//! shuffled order the guest measures them in.

use super::{Rng, Suite};
use anyhow::{Context, Result};
use std::path::Path;

/// --loads: a comma-separated list of numbers.
pub(super) fn parse_loads(s: &str) -> Result<Vec<u32>> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .with_context(|| format!("--loads: '{x}' is not a number"))
        })
        .collect()
}

/// What one bench boot measures, and in which order (`schedule()`).
pub struct Plan {
    pub suites: Vec<(&'static Suite, Vec<u32>)>,
    /// The configurations' labels, as the tables name them.
    pub scheds: Vec<String>,
    /// What each label runs (same order).
    pub specs: Vec<String>,
    pub runs: u32,
    pub secs: u32,
    /// Seed of the run order.
    pub seed: u64,
    pub warmup: bool,
}

/// Another build of scx_sis, `sis@PATH[:NO_X+Y]`: its PATH and the rest (`:NO_X+Y` or "").
pub fn sis_at(spec: &str) -> Option<(&str, &str)> {
    let rest = spec.strip_prefix("sis@")?;
    Some(rest.find(':').map_or((rest, ""), |i| rest.split_at(i)))
}

/// One configuration of --sched: `LABEL=SPEC` or a bare SPEC (its own label).
pub fn parse_conf(c: &str) -> Result<(String, String)> {
    let (label, spec) = c.split_once('=').unwrap_or((c, c));
    let ok = |x: &str| {
        !x.is_empty()
            && x.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "_-:+.".contains(ch))
    };
    // another build's path is checked as a file, the rest as any spec
    let checked = match sis_at(spec) {
        Some((path, rest)) => {
            anyhow::ensure!(
                label != spec,
                "--sched: '{c}': another build needs a label, e.g. before=sis@{path}"
            );
            anyhow::ensure!(
                Path::new(path).is_file(),
                "--sched: '{c}': '{path}' is not a file (a path has no ':' or ',')"
            );
            format!("sis{rest}")
        }
        None => spec.to_string(),
    };
    anyhow::ensure!(
        ok(label) && ok(&checked),
        "--sched: '{c}' is not [LABEL=]SPEC (letters, digits, _ - : + .)"
    );
    if let Some(f) = spec.strip_prefix("eevdf:") {
        anyhow::ensure!(
            !f.is_empty(),
            "--sched: '{c}': eevdf: needs the kernel's feature names, e.g. eevdf:NO_SIS_UTIL"
        );
    }
    Ok((label.to_string(), spec.to_string()))
}

impl Plan {
    /// The order the guest measures in, one entry per scheduler start: `(run,
    /// configuration index, suite index, loads)`. Run 0 is the warm-up (each
    /// configuration and suite once, at the middle load, discarded). Within every run
    /// the configurations, the suites of each and their loads are shuffled by the seed.
    pub fn schedule(&self) -> Vec<(u32, usize, usize, Vec<u32>)> {
        let mut rng = Rng::new(self.seed);
        let mut out = vec![];
        let first = if self.warmup { 0 } else { 1 };
        for run in first..=self.runs {
            let mut confs: Vec<usize> = (0..self.scheds.len()).collect();
            rng.shuffle(&mut confs);
            for c in confs {
                let mut suites: Vec<usize> = (0..self.suites.len()).collect();
                rng.shuffle(&mut suites);
                for si in suites {
                    let all = &self.suites[si].1;
                    let loads = if run == 0 {
                        all.get(all.len() / 2).map(|&l| vec![l]).unwrap_or_default()
                    } else {
                        let mut l = all.clone();
                        rng.shuffle(&mut l);
                        l
                    };
                    if !loads.is_empty() {
                        out.push((run, c, si, loads));
                    }
                }
            }
        }
        out
    }

    /// bench.sh's arguments: RUNS SECS SCHEDS SCHEDULE.
    pub(super) fn args(&self) -> Vec<String> {
        let (confs, sched) = self.confs_and_schedule();
        vec![self.runs.to_string(), self.secs.to_string(), confs, sched]
    }

    /// The guest command.
    pub(super) fn command(&self) -> String {
        let a = self.args();
        format!("sh /tests/bench.sh {} {} '{}' '{}'", a[0], a[1], a[2], a[3])
    }

    fn confs_and_schedule(&self) -> (String, String) {
        let confs: Vec<String> = self
            .scheds
            .iter()
            .zip(&self.specs)
            .map(|(l, s)| format!("{l}={s}"))
            .collect();
        let sched: Vec<String> = self
            .schedule()
            .iter()
            .map(|(run, c, si, loads)| {
                let l: Vec<String> = loads.iter().map(|x| x.to_string()).collect();
                format!(
                    "{run} {} {} {}",
                    confs[*c],
                    self.suites[*si].0.name,
                    l.join(",")
                )
            })
            .collect();
        (confs.join(","), sched.join(";"))
    }

    /// Rough guest time: every measurement plus a scheduler start and stop.
    pub(super) fn timeout_s(&self) -> u64 {
        let per = self.secs as u64 * 3 + 15;
        let n: u64 = self
            .schedule()
            .iter()
            .map(|(_, _, _, l)| l.len() as u64 + 1)
            .sum();
        300 + per * n
    }
}
