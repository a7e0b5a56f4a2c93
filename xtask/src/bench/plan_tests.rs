// SPDX-License-Identifier: GPL-2.0-only
//! The bench's unit tests of its command line: configurations, presets, loads, help
//! and the build a result names.

use super::builds::build_id;
use super::*;

#[test]
fn confs_and_presets() {
    assert_eq!(
        parse_conf("masterx=sis:NO_SIS_UTIL").unwrap(),
        ("masterx".into(), "sis:NO_SIS_UTIL".into())
    );
    assert_eq!(
        parse_conf("eevdf:NO_WA_IDLE").unwrap(),
        ("eevdf:NO_WA_IDLE".into(), "eevdf:NO_WA_IDLE".into())
    );
    assert!(parse_conf("eevdf:")
        .unwrap_err()
        .to_string()
        .contains("feature names"));
    assert!(parse_conf("a b").is_err());
    // another build: a file, a label, features after its path
    let me = std::env::current_exe().unwrap();
    let at = format!("before=sis@{}:NO_IDLE_CORE", me.display());
    assert_eq!(parse_conf(&at).unwrap().1, at["before=".len()..]);
    assert_eq!(
        sis_at(&at["before=".len()..]),
        Some((me.to_str().unwrap(), ":NO_IDLE_CORE"))
    );
    assert!(parse_conf(&format!("sis@{}", me.display()))
        .unwrap_err()
        .to_string()
        .contains("needs a label"));
    assert!(parse_conf("b=sis@/no/such/scx_sis")
        .unwrap_err()
        .to_string()
        .contains("'/no/such/scx_sis' is not a file"));
    assert!(parse_conf("b=sis@").is_err());
    assert!(parse_conf("b=sis@/tmp").is_err());
    assert!(parse_conf(&format!("b=sis@{}:NO X", me.display())).is_err());
    // the header names another build by the id it prints; anything else is refused
    let dir = std::env::temp_dir().join(format!("sis-build-id-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = |name: &str, body: &str| {
        use std::os::unix::fs::PermissionsExt;
        let f = dir.join(name);
        std::fs::write(&f, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        f
    };
    let good = script(
        "good",
        "echo 'scx_sis 0.1.0-gabc1234 x86_64 (scx_utils 1.1.4)'",
    );
    assert_eq!(
        build_id(&good).unwrap(),
        "0.1.0-gabc1234 x86_64 (scx_utils 1.1.4)"
    );
    let other = script("other", "echo 'scx_cosmos 1.0'");
    assert!(build_id(&other)
        .unwrap_err()
        .to_string()
        .contains("not an scx_sis build (--version printed 'scx_cosmos 1.0')"));
    assert!(build_id(&script("fails", "echo 'scx_sis 1'; exit 1")).is_err());
    // one line: only the first line of what another program prints
    let many = script("many", "echo 'true 9.1'; echo 'Copyright'");
    let e = build_id(&many).unwrap_err().to_string();
    assert!(e.ends_with("(--version printed 'true 9.1')"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let seed = preset("seed").unwrap();
    assert_eq!((seed.loads)("tbench", 16), [1, 2, 4, 8, 16, 32, 64]);
    let labels: Vec<String> = SEED_SCHED
        .split(',')
        .map(|c| parse_conf(c).unwrap().0)
        .collect();
    assert_eq!(
        labels,
        [
            "eevdf",
            "masterx",
            "masterx:NO_IDLE_CORE",
            "SIS_AVG_CPU",
            "SIS_PROP",
            "SIS_UTIL"
        ]
    );
    assert_eq!(seed.vs, Some("masterx"));
    assert_eq!((preset("calibrate").unwrap().loads)("placement", 8), [4, 8]);
    assert!(preset("tbench").is_none());
    let mut r = Records::new();
    let key = |m: &str| ("placement".to_string(), "sis".to_string(), 8, m.to_string());
    r.entry(key("lost_events"))
        .or_default()
        .extend([(1, 0.0), (2, 37.0)]);
    r.entry(key("wakeups")).or_default().insert(2, 37.0);
    let marks = lost_marks(&r, "placement");
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!(marks[0].contains("sis at 8, run 2: the trace lost 37 events"));
    assert!(lost_marks(&r, "wakeup").is_empty());
    // two runs' histograms pooled: 100 wakeups, floors 3 (x60), 20 (x39), 200 (x1)
    let hk = |b: u32| key(&format!("{HIST_PREFIX}{b}"));
    r.entry(hk(3)).or_default().extend([(1, 30.0), (2, 30.0)]);
    r.entry(hk(20)).or_default().extend([(1, 19.0), (2, 20.0)]);
    r.entry(hk(200)).or_default().insert(2, 1.0);
    assert_eq!(pooled(&r, "placement", "sis", 8), Some((100, 3, 20, 20)));
    assert_eq!(pooled(&r, "placement", "sis", 4), None);
    let llc = preset("llc").unwrap();
    assert_eq!((llc.topology, llc.min_llcs), ("1:2:4:2", 2));
    assert_eq!((llc.loads)("tbench", 16), [8, 16, 32]);
    // every configuration of a preset is in one of the pairs it shows
    for p in [CALIBRATE_SCHED, LLC_SCHED] {
        let scheds: Vec<String> = p.split(',').map(String::from).collect();
        let pairs = calibration_pairs(&scheds);
        for c in &scheds {
            assert!(
                pairs.iter().any(|(_, k, s)| k.on == c
                    || k.off == c
                    || s.as_ref().is_some_and(|s| s.on == c || s.off == c)),
                "{c} is in no calibration pair"
            );
        }
    }
    // the committed vtime-era runs keep their pair; new runs get the same-name one
    let old: Vec<String> = ["eevdf", "eevdf:NO_WA_IDLE", "sis", "sis:NO_WAKE_AFFINE"]
        .map(String::from)
        .into();
    let names: Vec<&str> = calibration_pairs(&old).iter().map(|c| c.0).collect();
    assert_eq!(names, ["WA_IDLE (kernel) / WAKE_AFFINE (scx_sis)"]);
}

#[test]
fn default_load_ranges() {
    assert_eq!(default_loads("tbench", 8), [1, 2, 4, 8, 16]);
    assert_eq!(default_loads("wakeup", 8), [2, 4, 8, 16]);
    assert_eq!(default_loads("cost", 8), [0, 4, 8]);
    assert!(suite("nope").unwrap_err().to_string().contains("tbench"));
}

/// `--help` names every suite, as the code declares them.
#[test]
fn help_names_every_suite() {
    use clap::{Args, CommandFactory};
    let cmd = BenchOpts::augment_args(clap::Command::new("bench"));
    let help = cmd
        .get_arguments()
        .find(|a| a.get_id() == "suite")
        .and_then(|a| a.get_help())
        .map(|h| h.to_string())
        .unwrap();
    let cli = crate::Cli::command();
    let top = cli
        .find_subcommand("bench")
        .and_then(|c| c.get_about())
        .map(|h| h.to_string())
        .unwrap();
    for s in suites::SUITES {
        assert!(help.contains(s.name), "bench --help lacks suite {}", s.name);
        assert!(top.contains(s.name), "xtask --help lacks suite {}", s.name);
    }
}

#[test]
fn results_name_their_commit() {
    // the checkout is a git work tree here and in CI: a hash, and a word if it was edited
    let c = commit();
    let hash = c
        .strip_suffix(" with changes")
        .or_else(|| c.strip_suffix(", changes unknown"))
        .unwrap_or(&c);
    assert!(
        hash.len() >= 7 && hash.chars().all(|ch| ch.is_ascii_hexdigit()),
        "not a commit: {c}"
    );
}

/// A calibration metric is one of its suite's tables, so a renamed metric cannot
/// silently drop out of the calibration table.
#[test]
fn calibration_metrics_are_the_suites() {
    for s in SUITES {
        assert!(!s.calibrate.is_empty(), "{}", s.name);
        for k in s.calibrate {
            assert!(s.metrics.iter().any(|m| m.key == *k), "{}: {k}", s.name);
        }
    }
}
