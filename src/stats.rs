//! Counters exported through scx_stats: totals from BPF, per-interval deltas, the
//! readable line, and `--monitor`.

use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "Active features, as in /sys/kernel/debug/sched/features")]
    pub features: String,
    #[stat(desc = "Seconds covered by this sample")]
    pub interval_s: f64,
    #[stat(desc = "ops.select_cpu calls (wakeups searched)")]
    pub select_cpu: u64,
    #[stat(desc = "Placed on target: the waker's or prev CPU chosen by wake_affine, idle")]
    pub target: u64,
    #[stat(desc = "Placed on prev_cpu, idle and sharing the LLC with target")]
    pub prev: u64,
    #[stat(desc = "Placed on p->recent_used_cpu (RECENT_USED)")]
    pub recent: u64,
    #[stat(desc = "Placed on a CPU whose whole core was idle (IDLE_CORE walk)")]
    pub idle_core: u64,
    #[stat(desc = "Placed on an idle SMT sibling of prev (IDLE_SMT)")]
    pub idle_smt: u64,
    #[stat(desc = "Placed on an idle CPU found by select_idle_cpu")]
    pub idle_cpu: u64,
    #[stat(desc = "Nothing idle found: target returned unclaimed, task queued")]
    pub fallback: u64,
    #[stat(desc = "Idle CPUs lost between the idle test and the claim")]
    pub lost_claims: u64,
    #[stat(desc = "CPUs whose idle state the searches tested")]
    pub scanned: u64,
    #[stat(desc = "select_idle_cpu walks started")]
    pub scan_calls: u64,
    #[stat(desc = "Longest search since start, in CPUs tested")]
    pub scan_max: u64,
    #[stat(desc = "select_idle_cpu walks stopped or skipped by the SIS_UTIL limit")]
    pub sis_util_cut: u64,
    #[stat(desc = "has_idle_cores hint set (0 -> 1) by a core going wholly idle")]
    pub hint_set: u64,
    #[stat(desc = "Core walks under the hint that found an idle core")]
    pub hint_true: u64,
    #[stat(desc = "Core walks under the hint that found none (hint false positive, cleared)")]
    pub hint_false: u64,
    #[stat(desc = "Tasks inserted straight into a claimed CPU's local DSQ")]
    pub direct: u64,
    #[stat(desc = "Tasks queued on an LLC's shared vtime DSQ")]
    pub shared: u64,
    #[stat(desc = "Single-CPU tasks queued on their CPU")]
    pub pinned: u64,
    #[stat(desc = "Tasks a CPU took from another LLC's DSQ")]
    pub steals: u64,
    #[stat(desc = "Wakeups placed on a CPU other than prev_cpu")]
    pub migrations: u64,
    #[stat(desc = "Wakeups placed in another LLC than prev_cpu's")]
    pub migrations_llc: u64,
    #[stat(desc = "Wakeups whose target WAKE_AFFINE moved to the waker's CPU")]
    pub wake_affine: u64,
}

fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

impl Metrics {
    /// The seven placement steps; they sum to `select_cpu` exactly.
    #[cfg(test)]
    pub fn steps(&self) -> [(&'static str, u64); 7] {
        [
            ("target", self.target),
            ("prev", self.prev),
            ("recent", self.recent),
            ("idle_core", self.idle_core),
            ("idle_smt", self.idle_smt),
            ("idle_cpu", self.idle_cpu),
            ("fallback", self.fallback),
        ]
    }

    /// `name=value ...` of every numeric field, for logs and shell tests.
    pub fn key_values(&self) -> String {
        let v = serde_json::to_value(self).unwrap_or_default();
        v.as_object()
            .map(|o| {
                o.iter()
                    .filter(|(_, v)| v.is_number())
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    }

    pub fn delta(&self, b: &Self) -> Self {
        macro_rules! d {
            ($($f:ident),*) => { Self { $($f: self.$f.wrapping_sub(b.$f),)* ..self.clone() } };
        }
        d!(
            select_cpu,
            target,
            prev,
            recent,
            idle_core,
            idle_smt,
            idle_cpu,
            fallback,
            lost_claims,
            scanned,
            scan_calls,
            sis_util_cut,
            hint_set,
            hint_true,
            hint_false,
            direct,
            shared,
            pinned,
            steals,
            migrations,
            migrations_llc,
            wake_affine
        )
    }

    pub fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        let n = self.select_cpu;
        let rate = if self.interval_s > 0.0 {
            n as f64 / self.interval_s
        } else {
            n as f64
        };
        let steps: Vec<String> = [
            ("tgt", self.target),
            ("prev", self.prev),
            ("rec", self.recent),
            ("core", self.idle_core),
            ("smt", self.idle_smt),
            ("cpu", self.idle_cpu),
            ("fb", self.fallback),
        ]
        .iter()
        .map(|(k, v)| format!("{k} {:.0}", pct(*v, n)))
        .collect();
        writeln!(
            w,
            "[scx_sis] wake/s {:>7.0} | % {} | scan {:.1}/{} cut {:.0}% | hint fp {:.0}% | lost {} | q {}/{} steal {} | mig {:.0}% | {}",
            rate,
            steps.join(" "),
            if n > 0 { self.scanned as f64 / n as f64 } else { 0.0 },
            self.scan_max,
            pct(self.sis_util_cut, self.scan_calls),
            pct(self.hint_false, self.hint_true + self.hint_false),
            self.lost_claims,
            self.direct,
            self.shared,
            self.steals,
            pct(self.migrations, n),
            self.features,
        )?;
        Ok(())
    }
}

pub fn server_data() -> StatsServerData<(), Metrics> {
    let open: Box<dyn StatsOpener<(), Metrics>> = Box::new(move |(req_ch, res_ch)| {
        req_ch.send(())?;
        let mut prev = res_ch.recv()?;
        let read: Box<dyn StatsReader<(), Metrics>> = Box::new(move |_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            let cur = res_ch.recv()?;
            let delta = cur.delta(&prev);
            prev = cur;
            delta.to_json()
        });
        Ok(read)
    });
    StatsServerData::new()
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
}

pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>) -> Result<()> {
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |m| m.format(&mut std::io::stdout()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_subtracts_counters_and_keeps_gauges() {
        let a = Metrics {
            select_cpu: 10,
            target: 4,
            fallback: 6,
            scan_max: 7,
            features: "X".into(),
            ..Default::default()
        };
        let b = Metrics {
            select_cpu: 25,
            target: 9,
            fallback: 16,
            scan_max: 9,
            features: "Y".into(),
            ..Default::default()
        };
        let d = b.delta(&a);
        assert_eq!((d.select_cpu, d.target, d.fallback), (15, 5, 10));
        assert_eq!(d.scan_max, 9);
        assert_eq!(d.features, "Y");
        assert_eq!(d.steps().iter().map(|s| s.1).sum::<u64>(), d.select_cpu);
        let kv = d.key_values();
        assert!(
            kv.contains("select_cpu=15") && kv.contains("fallback=10"),
            "{kv}"
        );
        assert!(!kv.contains("features"), "{kv}");
    }

    #[test]
    fn format_is_one_line() {
        let m = Metrics {
            select_cpu: 100,
            idle_core: 50,
            fallback: 50,
            interval_s: 1.0,
            ..Default::default()
        };
        let mut out = Vec::new();
        m.format(&mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(s.lines().count(), 1);
        assert!(s.contains("core 50"), "{s}");
    }
}
