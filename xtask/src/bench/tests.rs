// SPDX-License-Identifier: GPL-2.0-only
//! The bench's unit tests: parsing, tables, statistics, calibration and targets (the
//! command line's: plan_tests.rs).

use super::ops::ops_table;
use super::targets::targets;
use super::*;

/// A plan of one suite at @loads, the configurations @scheds in order, @runs rounds.
fn plan(name: &str, loads: &[u32], scheds: &[&str], runs: u32) -> Plan {
    Plan {
        suites: vec![(suite(name).unwrap(), loads.to_vec())],
        scheds: scheds.iter().map(|c| c.to_string()).collect(),
        specs: vec![],
        runs,
        secs: 1,
        seed: 1,
        warmup: false,
    }
}

fn seed() -> Records {
    // the 2016 thread's tbench figures: master, and masterx NO_IDLE_CORE
    let out = "\
bench: suite=tbench sched=master run=1 load=1 mb_s=524
bench: suite=tbench sched=master run=2 load=1 mb_s=524
bench: suite=tbench sched=master run=3 load=1 mb_s=523
bench: suite=tbench sched=masterx run=1 load=1 mb_s=500
bench: suite=tbench sched=masterx run=2 load=1 mb_s=520
bench: suite=tbench sched=masterx run=3 load=1 mb_s=510
bench: suite=tbench sched=master run=1 load=128 mb_s=23248
bench: suite=tbench sched=master run=2 load=128 mb_s=23136
bench: suite=tbench sched=master run=3 load=128 mb_s=23133
bench: suite=tbench sched=masterx run=1 load=128 mb_s=11624
bench: suite=tbench sched=masterx run=2 load=128 mb_s=11568
bench: suite=tbench sched=masterx run=3 load=128 mb_s=nan
";
    parse(out)
}

#[test]
fn averages_and_ratios() {
    let r = seed();
    let avg = |c: &str, l| mean(&r[&("tbench".into(), c.into(), l, "mb_s".into())]).unwrap();
    assert!((avg("master", 1) - 523.667).abs() < 0.001);
    assert_eq!(avg("masterx", 1), 510.0);
    // a run that printed nan is left out, not counted as 0
    assert_eq!(avg("masterx", 128), 11596.0);
    let x = ratio(Some(avg("masterx", 128)), Some(avg("master", 128))).unwrap();
    assert!((x - 0.5004).abs() < 0.0001, "{x}");
    assert_eq!(ratio(Some(1.0), Some(0.0)), None);
}

#[test]
fn seed_table_shape() {
    let mut r = seed();
    // scx_sis's counters exist for masterx only (the seed's master had none)
    r.entry(("tbench".into(), "masterx".into(), 128, "scan_mean".into()))
        .or_default()
        .extend([(1, 30.0), (2, 34.0)]);
    let scheds = vec!["master".to_string(), "masterx".to_string()];
    let extras = [("scan_mean", "scan/wakeup")];
    let t = table(
        &r,
        "tbench",
        "mb_s",
        &scheds,
        &[1, 128],
        3,
        Some("masterx"),
        &extras,
    );
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[0].starts_with("master ") && lines[0].ends_with("/masterx scan/wakeup"),
        "{t}"
    );
    let f: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        f,
        ["1", "524", "524", "523", "524", "1.000", "1.027", "-"],
        "{t}"
    );
    let f: Vec<&str> = lines[5].split_whitespace().collect();
    assert_eq!(
        f,
        ["128", "11624", "11568", "-", "11596", "0.500", "1.000", "32"],
        "{t}"
    );
    let s = summary(&r, suite("tbench").unwrap(), &scheds, &[1, 128]);
    assert!(s.lines().nth(2).unwrap().ends_with("0.500?"), "{s}");
}

#[test]
fn targets_report_misses() {
    let out = "\
bench: suite=tbench sched=eevdf run=1 load=1 mb_s=100
bench: suite=tbench sched=eevdf run=1 load=16 mb_s=100
bench: suite=tbench sched=sis run=1 load=1 mb_s=99
bench: suite=tbench sched=sis run=1 load=16 mb_s=90
";
    let r = parse(out);
    let s = vec!["eevdf".to_string(), "sis".to_string()];
    let t = targets(&r, "tbench", &s, &[1, 16], 8);
    assert_eq!(
        t,
        ["target sis: >= 0.98 x eevdf at every client count: MISSED (means) at 16: 0.900"]
    );
}

/// The JSON's ratio and interval of a configuration are against the first one's runs
/// of the same cell: masterx / master at 1 client, 510 / 523.667.
#[test]
fn json_ratio_against_the_baseline() {
    let r = seed();
    let plan = plan("tbench", &[1, 128], &["master", "masterx"], 3);
    let dir = std::env::temp_dir().join(format!("scx_sis-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tbench.json");
    write_json(&r, plan.suites[0].0, &plan, "h", 8, &path).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let row = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["sched"] == "masterx" && x["load"] == 1)
        .unwrap();
    let want = 510.0 / (1571.0 / 3.0);
    assert!(
        (row["ratio"].as_f64().unwrap() - want).abs() < 1e-9,
        "{row}"
    );
    let key = |c: &str| ("tbench".to_string(), c.to_string(), 1, "mb_s".to_string());
    let q = ratio_ci(
        &cell(&r[&key("masterx")]).unwrap(),
        &cell(&r[&key("master")]).unwrap(),
    )
    .unwrap();
    assert_eq!(row["ratio_ci95"], serde_json::json!([q.lo, q.hi]), "{row}");
    assert_eq!(row["ratio_significant"], q.significant, "{row}");
}

#[test]
fn csv_round_trip() {
    let r = seed();
    let dir = std::env::temp_dir().join(format!("scx_sis-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tbench.csv");
    write_csv(&r, "tbench", &path).unwrap();
    let mut back = Records::new();
    assert_eq!(read_csv(&path, &mut back).unwrap(), 3);
    assert_eq!(back, r);
    std::fs::write(&path, "suite,sched,load,run,metric,value\ntbench,x,1\n").unwrap();
    assert!(read_csv(&path, &mut back)
        .unwrap_err()
        .to_string()
        .contains("bad row"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cost_target_against_cosmos() {
    let out = "\
bench: suite=cost sched=sis run=1 load=0 bpf_all_ns_per_select=20000
bench: suite=cost sched=scx_cosmos run=1 load=0 bpf_all_ns_per_select=16000
bench: suite=cost sched=sis run=1 load=8 bpf_all_ns_per_select=15000
bench: suite=cost sched=scx_cosmos run=1 load=8 bpf_all_ns_per_select=16000
";
    let r = parse(out);
    let s = vec!["sis".to_string(), "scx_cosmos".to_string()];
    let t = targets(&r, "cost", &s, &[0, 8], 8);
    assert!(
        t.contains(&"target sis: all BPF ns per select_cpu <= scx_cosmos's at every load: MISSED (means) at 0: 1.25".to_string()),
        "{t:?}"
    );
}

#[test]
fn ops_table_splits_the_time_by_op() {
    // two runs of scx_cosmos (no update_idle) and one of sis; init counts as other
    let out = "\
bench: suite=cost sched=sis run=1 load=0 bpf_all_ns_per_select=9000 op_select_cpu_ns=7000 op_select_cpu_runs_per_1k=1000 op_dispatch_ns=1500 op_init_ns=500
bench: suite=cost sched=scx_cosmos run=1 load=0 op_select_cpu_ns=5000 op_dispatch_ns=3000
bench: suite=cost sched=scx_cosmos run=2 load=0 op_select_cpu_ns=6000 op_dispatch_ns=2000
";
    let r = parse(out);
    let s = vec![
        "sis".to_string(),
        "scx_cosmos".to_string(),
        "eevdf".to_string(),
    ];
    let t = ops_table(&r, "cost", &s, &[0]);
    let row = |name: &str| -> Vec<String> {
        t.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row in {t}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // sched load select_cpu enqueue dispatch runnable running stopping tick update_idle other all
    assert_eq!(
        row("sis")[1..],
        ["0", "7000", "-", "1500", "-", "-", "-", "-", "-", "500", "9000"]
    );
    assert_eq!(row("scx_cosmos")[2..5], ["5500", "-", "2500"]);
    assert_eq!(row("scx_cosmos").last().map(String::as_str), Some("8000"));
    assert!(!t.contains("eevdf"), "EEVDF has no BPF: {t}");
    assert!(ops_table(&r, "wakeup", &s, &[0]).is_empty());
}

#[test]
fn monitor_samples_are_summed() {
    let out = r#"bench-mon: suite=cost sched=sis run=1 load=0 {"prog_run_ns":1000,"prog_run_cnt":10,"scanned":5,"select_cpu":10,"scan_max":3}
bench-mon: suite=cost sched=sis run=1 load=0 {"prog_run_ns":3000,"prog_run_cnt":10,"scanned":15,"select_cpu":10,"scan_max":7}
bench-mon: suite=placement sched=sis run=2 load=4 {"q_wakeups":200,"q_missed_core":50}
bench-mon: suite=wakeup sched=sis run=1 load=2 {"select_cpu":10,"progs":{"running":{"run_ns":300,"runs":3},"select_cpu":{"run_ns":700,"runs":10}}}
"#;
    let r = parse(out);
    let get = |s: &str, l, m: &str, run| r[&(s.into(), "sis".into(), l, m.into())][&run];
    assert_eq!(get("cost", 0, "select_ns", 1), 200.0);
    assert_eq!(get("cost", 0, "scan_mean", 1), 1.0);
    assert_eq!(get("cost", 0, "scan_max", 1), 7.0);
    assert_eq!(get("placement", 4, "sis_missed_idle_core_per_1k", 2), 250.0);
    assert_eq!(get("wakeup", 2, "bpf_running_ns", 1), 100.0);
    assert_eq!(get("wakeup", 2, "bpf_select_cpu_ns", 1), 70.0);
    // (300 + 700) ns of BPF over 10 select_cpu calls
    assert_eq!(get("wakeup", 2, "bpf_ns_per_wakeup", 1), 100.0);
}

#[test]
fn stats_table_shape() {
    let r = seed();
    let scheds = vec!["master".to_string(), "masterx".to_string()];
    let t = stats_table(&r, "tbench", "mb_s", &scheds, &[1, 128], None, &[]);
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[0].starts_with("master ") && lines[0].contains("/master [95% CI]"),
        "{t}"
    );
    let f: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(f[..6], ["1", "3", "524", "0.58", "523", "524"], "{t}");
    assert_eq!(f[6], "1.000", "{t}");
    // masterx at 1 client: 510 +- 10 against 523.7 +- 0.6: the interval includes 1
    let f: Vec<&str> = lines[4].split_whitespace().collect();
    assert_eq!(f[..3], ["1", "3", "510"], "{t}");
    assert_eq!(f[6], "0.974~", "{t}");
    // at 128: two runs of about half master's: significant, no ~
    let f: Vec<&str> = lines[5].split_whitespace().collect();
    assert_eq!(f[..2], ["128", "2"], "{t}");
    assert_eq!(f[6], "0.500", "{t}");
}

#[test]
fn calibration_pairs_kernel_and_sis() {
    let out = "\
bench: suite=tbench sched=eevdf run=1 load=8 mb_s=200
bench: suite=tbench sched=eevdf:NO_SIS_UTIL run=1 load=8 mb_s=180
bench: suite=tbench sched=sis run=1 load=8 mb_s=100
bench: suite=tbench sched=sis:NO_SIS_UTIL run=1 load=8 mb_s=95
";
    let r = parse(out);
    let plan = plan("tbench", &[8], &[], 1);
    let scheds: Vec<String> = CALIBRATE_SCHED.split(',').map(String::from).collect();
    let t = calibration(&r, &plan, &calibration_pairs(&scheds));
    let row = t
        .lines()
        .skip_while(|l| !l.starts_with("### SIS_UTIL"))
        .find(|l| l.starts_with("tbench mb_s"))
        .unwrap();
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        f[2..],
        ["8", "200", "180", "0.900?", "100", "95", "0.950?", "0.947?"],
        "{t}"
    );
}

#[test]
fn schedule_is_shuffled_seeded_and_complete() {
    let plan = |seed| Plan {
        suites: vec![
            (suite("tbench").unwrap(), vec![1, 2, 4]),
            (suite("wakeup").unwrap(), vec![2, 4]),
        ],
        scheds: vec!["a".into(), "b".into(), "c".into()],
        specs: vec!["eevdf".into(), "sis".into(), "sis:NO_IDLE_CORE".into()],
        runs: 5,
        secs: 1,
        seed,
        warmup: true,
    };
    let s = plan(42).schedule();
    assert_eq!(s, plan(42).schedule());
    assert_ne!(s, plan(43).schedule());
    // warm-up: every configuration and suite once, at the middle load
    let warm: Vec<_> = s.iter().filter(|e| e.0 == 0).collect();
    assert_eq!(warm.len(), 6);
    assert!(warm.iter().all(|e| e.3 == [if e.2 == 0 { 2 } else { 4 }]));
    // every run measures every configuration, suite and load exactly once
    for run in 1..=5 {
        for c in 0..3 {
            for (si, loads) in [(0, vec![1, 2, 4]), (1, vec![2, 4])] {
                let e: Vec<_> = s
                    .iter()
                    .filter(|e| e.0 == run && e.1 == c && e.2 == si)
                    .collect();
                assert_eq!(e.len(), 1);
                let mut l = e[0].3.clone();
                l.sort();
                assert_eq!(l, loads);
            }
        }
    }
    // the first configuration is not always first
    let firsts: std::collections::BTreeSet<usize> = (1..=5)
        .map(|r| s.iter().find(|e| e.0 == r).unwrap().1)
        .collect();
    assert!(firsts.len() > 1, "{s:?}");
    let cmd = plan(42).command();
    assert!(
        cmd.starts_with("sh /tests/bench.sh 5 1 'a=eevdf,b=sis,c=sis:NO_IDLE_CORE' '0 "),
        "{cmd}"
    );
}

/// The op lists kept apart (sis-probe's names of sched_ext's ops, the cost table's
/// columns, the programs scx_sis reports per op) agree: every column and every program
/// scx_sis reports is an op the probe can name, and each reported program has a column.
#[test]
fn op_lists_agree() {
    let root = crate::repo_root();
    let probe = std::fs::read_to_string(root.join("tests/guest/probe.c")).unwrap();
    let start = probe.find("scx_ops[] = {").expect("scx_ops in probe.c");
    let end = start + probe[start..].find("};").unwrap();
    let named: Vec<&str> = probe[start..end].split('"').skip(1).step_by(2).collect();
    assert!(named.len() > 20, "{named:?}");
    for op in super::ops::OPS {
        assert!(
            named.contains(&op),
            "cost column {op} is not a sched_ext op the probe names"
        );
    }
    let sched = std::fs::read_to_string(root.join("src/scheduler.rs")).unwrap();
    let reported: Vec<&str> = sched
        .split("(\"")
        .skip(1)
        .filter_map(|t| t.split_once("\", p.sis_").map(|(n, _)| n))
        .collect();
    assert!(reported.len() >= 7, "{reported:?}");
    for op in reported {
        assert!(
            super::ops::OPS.contains(&op),
            "scx_sis reports {op}, which has no cost column"
        );
    }
}

/// The miss rate over the wakeups that had an idle core: 225 per 1000 of 7148 wakeups,
/// 5400 of which had one, is 298 per 1000 of those.
#[test]
fn conditional_miss_rate() {
    let out = "bench: suite=placement sched=sis run=1 load=8 q_wakeups=7148 missed_idle_core_per_1k=225 idle_core_existed=5400 missed_idle_cpu_per_1k=2 idle_cpu_existed=0\n";
    let r = parse(out);
    let v = r[&(
        "placement".into(),
        "sis".into(),
        8,
        "missed_given_core_per_1k".into(),
    )][&1];
    assert!((v - 297.83).abs() < 0.01, "{v}");
    let none = (
        "placement".into(),
        "sis".into(),
        8,
        "missed_given_cpu_per_1k".into(),
    );
    assert!(!r.contains_key(&none), "no idle CPU existed: no rate");
}

/// scx_sis's own idle-CPU mean never overwrites the tracer's figure of that name.
#[test]
fn own_counts_keep_their_names() {
    let out = r#"bench: suite=placement sched=sis run=1 load=8 idle_cpus_mean=4.48
bench-mon: suite=placement sched=sis run=1 load=8 {"q_wakeups":100,"q_nr_idle":450,"q_missed_core":5}
"#;
    let r = parse(out);
    let get = |m: &str| r[&("placement".into(), "sis".into(), 8, m.into())][&1];
    assert_eq!(get("idle_cpus_mean"), 4.48);
    assert_eq!(get("sis_idle_cpus_mean"), 4.5);
    assert_eq!(get("sis_missed_idle_core_per_1k"), 50.0);
}

/// kernel/sis pairs all four configurations by round: a kernel switch that costs 0.8
/// against one that costs nothing is a difference, with its interval.
#[test]
fn calibration_ratio_of_ratios_by_round() {
    let mut out = String::new();
    for (run, k, s) in [(1, 100.0, 50.0), (2, 120.0, 61.0), (3, 90.0, 40.0)] {
        out += &format!(
            "bench: suite=tbench sched=eevdf run={run} load=8 mb_s={k}\n\
             bench: suite=tbench sched=eevdf:NO_WA_WEIGHT run={run} load=8 mb_s={}\n\
             bench: suite=tbench sched=sis run={run} load=8 mb_s={s}\n\
             bench: suite=tbench sched=sis:NO_WA_WEIGHT run={run} load=8 mb_s={}\n",
            k * (0.8 + 0.01 * run as f64),
            s * (1.0 - 0.01 * run as f64),
        );
    }
    let r = parse(&out);
    let plan = plan("tbench", &[8], &[], 3);
    let scheds: Vec<String> = LLC_SCHED.split(',').map(String::from).collect();
    let t = calibration(&r, &plan, &calibration_pairs(&scheds));
    let row = t
        .lines()
        .skip_while(|l| !l.starts_with("### WA_WEIGHT"))
        .find(|l| l.starts_with("tbench mb_s"))
        .unwrap();
    let f: Vec<&str> = row.split_whitespace().collect();
    let rr = f[f.len() - 2];
    let ratio: f64 = rr.parse().unwrap_or(0.0);
    assert!((ratio - 0.83).abs() < 0.01 && !rr.ends_with('~'), "{t}");
}

/// `--part SUITE:KEY+KEY` prints those metrics' tables alone, and names a key the
/// suite does not table.
#[test]
fn part_prints_the_named_metrics_only() {
    let r = parse(
        "\
bench: suite=wakeup sched=sis run=1 load=8 lat_p99_us=600 lat_over_250us_per_1k=15 lat_p50_us=20
bench: suite=wakeup sched=eevdf run=1 load=8 lat_p99_us=200 lat_over_250us_per_1k=9 lat_p50_us=12
",
    );
    let plan = plan("wakeup", &[8], &["sis", "eevdf"], 1);
    let s = plan.suites[0].0;
    let keys = ["lat_over_250us_per_1k", "lat_p99_us"];
    let text = metric_tables(&r, &plan, s, &[8], None, &keys, false).unwrap();
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(heads.len(), 2, "{text}");
    // the suite's order, not the keys'
    assert!(heads[0].contains("p99 us (trace)"), "{text}");
    assert!(heads[1].contains("250 us or more"), "{text}");
    assert!(
        !text.contains("summary") && !text.contains("\n\n\n"),
        "{text}"
    );
    let err = metric_tables(&r, &plan, s, &[8], None, &["mb_s"], false).unwrap_err();
    assert!(
        err.to_string().starts_with("mb_s: not a metric of wakeup"),
        "{err}"
    );
}

/// `--part cost:op_NAME_ns` prints one op's table, with its ratios; an op no run has is refused.
#[test]
fn part_prints_an_op_table() {
    let r = parse(
        "\
bench: suite=cost sched=before run=1 load=0 bpf_all_ns_per_select=9000 op_stopping_ns=2000 op_runnable_ns=3000
bench: suite=cost sched=sis run=1 load=0 bpf_all_ns_per_select=8000 op_stopping_ns=1000 op_runnable_ns=3000
",
    );
    let plan = plan("cost", &[0], &["before", "sis"], 1);
    let s = plan.suites[0].0;
    let keys = ["op_stopping_ns", "bpf_all_ns_per_select"];
    let text = metric_tables(&r, &plan, s, &[0], None, &keys, true).unwrap();
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(heads.len(), 2, "{text}");
    // the suite's own tables first, then the ops'
    assert!(
        heads[0].contains("all the scheduler's BPF programs"),
        "{text}"
    );
    assert!(
        heads[1].contains("ns of stopping per select_cpu call"),
        "{text}"
    );
    let stopping = text.split("## cost: ns of stopping").nth(1).unwrap();
    assert!(stopping.contains("0.500"), "{text}");
    assert!(!stopping.contains("3000"), "{text}");
    let err = metric_tables(&r, &plan, s, &[0], None, &["op_tick_ns"], false).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("op_tick_ns: not a metric of cost"),
        "{err}"
    );
}

/// `--vs` naming the first configuration prints its ratio column once, not twice.
#[test]
fn vs_the_first_configuration_is_one_column() {
    let r = seed();
    let plan = plan("tbench", &[1], &["master", "masterx"], 3);
    let s = plan.suites[0].0;
    let t = metric_tables(&r, &plan, s, &[1], Some("master"), &["mb_s"], false).unwrap();
    assert_eq!(t.matches("/master [95% CI]").count(), 2, "{t}");
    let t = metric_tables(&r, &plan, s, &[1], Some("masterx"), &["mb_s"], false).unwrap();
    assert_eq!(t.matches("/masterx [95% CI]").count(), 2, "{t}");
    assert_eq!(t.matches("/master [95% CI]").count(), 2, "{t}");
    // the seed layout too: one /master column in each of the two headers
    let t = metric_tables(&r, &plan, s, &[1], Some("master"), &["mb_s"], true).unwrap();
    assert_eq!(t.matches("/master").count(), 2, "{t}");
}
