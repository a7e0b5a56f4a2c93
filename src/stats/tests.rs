// SPDX-License-Identifier: GPL-2.0-only
/// Every derived figure names counters that exist and has a field to go to.
#[test]
fn derived_figures_are_fields_of_counters() {
    let mut m = super::Metrics::default();
    for d in super::DERIVED {
        for c in d.num.iter().chain(d.den) {
            assert!(m.counter_named(c).is_some(), "{}: no counter {c}", d.name);
        }
        assert!(m.derived_field(d.name).is_some(), "{}: no field", d.name);
    }
}

use super::*;

#[test]
fn delta_subtracts_counters_and_keeps_gauges() {
    let a = Metrics {
        select_cpu: 10,
        target: 4,
        fallback: 6,
        scan_max_ever: 7,
        features: "X".into(),
        ..Default::default()
    };
    let b = Metrics {
        select_cpu: 25,
        target: 9,
        fallback: 16,
        scan_max_ever: 9,
        features: "Y".into(),
        ..Default::default()
    };
    let d = Metrics {
        uptime_s: 7.5,
        ..b.clone()
    }
    .delta(&Metrics {
        uptime_s: 5.0,
        ..a.clone()
    });
    assert_eq!(d.interval_s, 2.5);
    assert_eq!((d.select_cpu, d.target, d.fallback), (15, 5, 10));
    assert_eq!(d.scan_max_ever, 9);
    assert_eq!(d.features, "Y");
    assert_eq!(d.steps().iter().map(|s| s.1).sum::<u64>(), d.select_cpu);
}

/// Every counter must be in delta's list: set each integer field to 7 after and 5
/// before, and every one must come out as 2, except gauges and figures derived again.
#[test]
fn delta_subtracts_every_counter() {
    let with = |v: u64| -> Metrics {
        let mut j = serde_json::to_value(Metrics::default()).unwrap();
        for (_, x) in j.as_object_mut().unwrap().iter_mut() {
            if x.is_u64() {
                *x = v.into();
            }
        }
        serde_json::from_value(j).unwrap()
    };
    let d = serde_json::to_value(with(7).delta(&with(5))).unwrap();
    let not_counters = [
        "scan_max_ever",
        "lat_wakeups",
        "scan_p99",
        "scan_max",
        "restarts",
        "pelt_nr_runnable",
        "pelt_load_avg",
    ];
    for (k, x) in d.as_object().unwrap() {
        if x.is_u64() && !not_counters.contains(&k.as_str()) {
            assert_eq!(
                x.as_u64(),
                Some(2),
                "{k} is not subtracted by Metrics::delta"
            );
        }
    }
}

#[test]
fn from_cpus_sums_and_keeps_the_longest_search() {
    let zero = vec![0u8; std::mem::size_of::<bpf_intf::sis_cpu_stats>()];
    let mut a: bpf_intf::sis_cpu_stats = bpf_intf::from_bytes(&zero).unwrap();
    let mut b = a;
    a.cnt[bpf_intf::sis_stat_STAT_SELECT as usize] = 3;
    b.cnt[bpf_intf::sis_stat_STAT_SELECT as usize] = 4;
    b.cnt[bpf_intf::sis_stat_STAT_PULL as usize] = 2;
    a.lat[1][5] = 1;
    b.lat[1][5] = 2;
    a.scan_max = 9;
    b.scan_max = 4;
    let m = Metrics::from_cpus(&[a, b]);
    assert_eq!((m.select_cpu, m.pulls, m.scan_max_ever), (7, 2, 9));
    assert_eq!(
        m.lat_hist[bpf_intf::hist_consts_NR_LAT_BUCKETS as usize + 5],
        3
    );
}

/// Every index of intf.h's enum sis_stat is decoded into exactly one field.
#[test]
fn every_bpf_counter_has_a_field() {
    let n = bpf_intf::sis_stat_NR_SIS_STATS;
    for i in 0..n {
        let uses = COUNTER_INDEXES.iter().filter(|&&x| x == i).count();
        assert_eq!(uses, 1, "enum sis_stat index {i} is decoded {uses} times");
    }
    assert_eq!(COUNTER_INDEXES.len() as u32, n);
    let mut m = Metrics::default();
    m.set_counters(&(1..=n as u64).collect::<Vec<_>>());
    assert_eq!(m.counter(bpf_intf::sis_stat_STAT_SELECT), m.select_cpu);
    assert_eq!(m.select_cpu, bpf_intf::sis_stat_STAT_SELECT as u64 + 1);
}

#[test]
fn delta_computes_percentiles_per_step() {
    let nb = 32;
    let mut before = Metrics {
        lat_hist: vec![0; LAT_CLASSES.len() * nb],
        scan_hist: vec![0; 65],
        ..Default::default()
    };
    before.lat_hist[3] = 5; // idle_core, [4,8) us, already counted
    let mut after = before.clone();
    after.lat_hist[3] += 10; // idle_core: 10 new wakeups in [4,8) us
    after.lat_hist[4 * nb + 10] = 10; // fallback: 10 in [512,1024) us
    after.scan_hist[2] = 19;
    after.scan_hist[8] = 1;
    after.select_cpu = 20;
    after.lost_claims = 1;
    let d = after.delta(&before);
    assert_eq!(d.lat_wakeups, 20);
    assert_eq!(d.lat_by_step["idle_core"].wakeups, 10);
    assert_eq!(d.lat_by_step["idle_core"].p50_us, 6.0); // rank 5 of 10 in [4,8)
    assert_eq!(d.lat_by_step["fallback"].p99_us, 1024.0);
    assert_eq!(d.lat_p50_us, 8.0); // rank 10: the last idle_core sample
    assert_eq!(d.lat_max_us, 1024.0);
    assert_eq!((d.scan_p99, d.scan_max), (8, 8));
    assert_eq!(d.lost_per_1k, 50.0);
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["lat_by_step"]["fallback"]["wakeups"], 10);
}

#[test]
fn prog_costs_are_per_interval() {
    let prog = |run_ns, runs| ProgStats {
        run_ns,
        runs,
        ..Default::default()
    };
    let before = Metrics {
        select_cpu: 10,
        progs: [
            ("select_cpu".into(), prog(1000, 10)),
            ("running".into(), prog(500, 10)),
        ]
        .into(),
        ..Default::default()
    };
    let after = Metrics {
        select_cpu: 30,
        progs: [
            ("select_cpu".into(), prog(5000, 30)),
            ("running".into(), prog(1500, 30)),
        ]
        .into(),
        ..Default::default()
    };
    let d = after.delta(&before);
    assert_eq!(d.progs["select_cpu"].ns_per_run, 200.0);
    assert_eq!(d.progs["running"].runs, 20);
    // (4000 + 1000) ns of BPF over 20 select_cpu calls
    assert_eq!(d.bpf_ns_per_wakeup, 250.0);
}

#[test]
fn format_is_one_line() {
    let line = |m: &Metrics| {
        let mut out = Vec::new();
        m.format(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let m = Metrics {
        select_cpu: 100,
        idle_core: 50,
        fallback: 50,
        interval_s: 1.0,
        features: crate::features::format(crate::features::kernel_default_mask()),
        ..Default::default()
    };
    let s = line(&m);
    assert_eq!(s.lines().count(), 1);
    assert!(s.contains("core 50"), "{s}");
    assert!(s.trim_end().ends_with("feat default"), "{s}");
    let off = Metrics {
        features: crate::features::format(
            crate::features::parse(
                "NO_IDLE_CORE,NO_SIS_UTIL",
                crate::features::kernel_default_mask(),
            )
            .unwrap(),
        ),
        features_changed: 1,
        ..m
    };
    let s = line(&off);
    assert!(s.contains("feat NO_IDLE_CORE,NO_SIS_UTIL [changed]"), "{s}");
    assert!(s.len() <= 240, "{} chars: {s}", s.len());
    assert!(!s.contains(" kth "), "{s}");
    // an interval with kthread stackings shows them, beside its other steps
    let kth = Metrics {
        kthread: 5,
        fallback: 45,
        features: crate::features::format(crate::features::kernel_default_mask()),
        features_changed: 0,
        ..off
    };
    let s = line(&kth);
    assert!(s.contains("prev 0 kth 5 rec 0"), "{s}");
    assert!(!s.contains(" cur "), "{s}");
    assert!(s.len() <= 240, "{} chars: {s}", s.len());
    // and WF_CURRENT_CPU wakeups, first in fair.c's order
    let cur = Metrics {
        current_cpu: 7,
        ..kth
    };
    let s = line(&cur);
    assert!(s.contains("cur 7 tgt 0 prev 0 kth 5"), "{s}");
    assert!(s.len() <= 240, "{} chars: {s}", s.len());
}
