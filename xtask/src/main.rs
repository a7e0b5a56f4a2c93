// SPDX-License-Identifier: GPL-2.0-only
//! Developer tooling for scx_sis: boot a sched_ext guest, run the test suite.

mod bench;
mod debian;
mod doc;
mod faults;
mod initramfs;
mod kernel;
mod setup;
mod soak;
mod suite;
mod topology;
mod vm;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "scx_sis developer tasks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Boot a sched_ext guest (qemu TCG) and run CMD in it as root.
    Vm(VmOpts),
    /// Run scx_sis for real: natively on a sched_ext host, otherwise in a guest
    /// under a hackbench/tbench workload with live stats.
    Run(RunOpts),
    /// Unit tests plus every VM integration test; ends with `N passed, N failed`.
    Test(TestOpts),
    /// Benchmarks in one guest boot: tbench, tbench-bare, wakeup, latency, hackbench, pipe,
    /// nice, sched-idle, affine, cost, placement; tables, CSV, JSON and SVG under target/bench/.
    Bench(bench::BenchOpts),
    /// Install (as root) or list the Debian packages the project needs.
    Setup,
    /// Regenerate the documents' tables from the code and the committed results (each
    /// block after a `<!-- generated: cargo xtask ... -->` line); --check only compares,
    /// and also fails on an unquoted benchmark figure or a broken relative link.
    Doc {
        #[arg(long)]
        check: bool,
    },
    /// Record the instructions the verifier processes for each BPF program on every
    /// supported kernel line into tests/guest/verifier-baseline.txt (the suite's budget).
    Verifier,
    /// The first minute on your sched_ext machine (as root): scx_sis loads, places a
    /// wakeup on a whole idle core, switches a feature live and unloads cleanly;
    /// `check: PASS` or `check: FAIL`. Runs tests/guest/first_check.sh natively.
    Check,
    /// Print README's kernel table: each supported line, the build the suite tests,
    /// and what scx_sis does without the interfaces that line lacks.
    Kernels,
    /// Print the primary A/Bs from committed results, each paired by round with its
    /// interval, per boot (--summary: a line per load, BENCHMARKS.md's first page); with
    /// --svg, a plot per headline.
    Headline {
        /// The results folder (each headline names its subfolders).
        #[arg(long)]
        from: PathBuf,
        /// One line per headline and load, every boot side by side (the first page).
        #[arg(long)]
        summary: bool,
        /// Write headline-N.svg here.
        #[arg(long)]
        svg: Option<PathBuf>,
    },
    /// Print docs/DESIGN.md's feature table: each feature, its default and meaning
    /// (src/features.rs, through `scx_sis --feature-table`).
    Features,
    /// Print docs/STATS.md's field list: every stats field and its meaning
    /// (src/stats/, through `scx_sis --help-stats`).
    StatsFields,
    /// Long mixed load with CPU hotplug every minute on every shipped kernel (not in CI).
    Soak {
        /// Minutes of load per kernel.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=600))]
        minutes: u32,
        /// Only the shipped kernel with this version (default: every one, side by side).
        #[arg(long)]
        kernel: Option<String>,
        /// `sis` (default) or `eevdf`: the same load on the kernel's own scheduler, as a
        /// baseline for RCU stall reports.
        #[arg(long, default_value = "sis", value_parser = ["sis", "eevdf"])]
        sched: String,
        /// SOCKETS:CORES:THREADS, or SOCKETS:LLCS:CORES:THREADS (as for `vm`).
        #[arg(long, default_value = "1:4:2")]
        topology: vm::Topology,
        /// One NUMA node per socket.
        #[arg(long)]
        numa: bool,
    },
}

#[derive(Args, Clone)]
pub struct GuestOpts {
    /// Guest kernel: a vmlinuz path, a version, or `download` (newest from Debian).
    #[arg(long, env = "SCX_SIS_KERNEL")]
    kernel: Option<String>,
    /// SOCKETS:CORES:THREADS, or SOCKETS:LLCS:CORES:THREADS (LLCS last-level caches per
    /// socket, each of CORES cores; needs qemu 9.2+, e.g. 1:2:4:2 is 16 CPUs in 2 LLCs).
    #[arg(long, default_value = "1:4:2")]
    topology: vm::Topology,
    /// One NUMA node per socket.
    #[arg(long)]
    numa: bool,
    /// With --numa: the distance between every two nodes (qemu's default: 20).
    #[arg(long, requires = "numa", value_parser = clap::value_parser!(u32).range(11..=254))]
    numa_distance: Option<u32>,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(256..))]
    mem: u32,
    /// Extra host binary for the guest's PATH (with its libraries); repeatable.
    #[arg(long = "with")]
    with: Vec<PathBuf>,
    /// Kill the guest after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// A guest silent on its console this long has hung.
    #[arg(long, default_value_t = 180)]
    idle_timeout: u64,
    /// Multi-threaded TCG (faster but racy on qemu 7.2, see docs/PLATFORM.md).
    #[arg(long)]
    tcg_multi: bool,
    /// Count instructions as time (qemu -icount shift=0,sleep=off): one ns of guest time
    /// per guest instruction, so the BPF statistics' ns are instruction counts, free of
    /// the host's speed. Single-threaded TCG only.
    #[arg(long, conflicts_with = "tcg_multi")]
    icount: bool,
    /// Do not build scx_sis first.
    #[arg(long)]
    no_build: bool,
}

#[derive(Args)]
struct VmOpts {
    #[command(flatten)]
    guest: GuestOpts,
    /// The command to run in the guest.
    #[arg(last = true, required = true)]
    cmd: Vec<String>,
}

#[derive(Args)]
struct RunOpts {
    #[command(flatten)]
    guest: GuestOpts,
    /// Seconds of workload in the guest (two halves, before and after the live flip).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(4..=600))]
    secs: u32,
    /// Arguments for scx_sis (e.g. `-- -f NO_IDLE_CORE`).
    #[arg(last = true)]
    args: Vec<String>,
}

#[derive(Args)]
struct TestOpts {
    /// Run only the VM tests whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Guests booted side by side (each single-threaded TCG guest takes one host core).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Skip the host unit tests.
    #[arg(long)]
    no_unit: bool,
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the repo")
        .to_path_buf()
}

pub fn scx_sis_bin() -> PathBuf {
    repo_root().join("target/release/scx_sis")
}

/// `cargo build --release -p scx_sis`, with clang-19 for the BPF part.
pub fn build_scheduler() -> Result<()> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["build", "--release", "-p", "scx_sis"])
        .current_dir(repo_root());
    if std::env::var_os("BPF_CLANG").is_none() && vm::which("clang").is_none() {
        cmd.env("BPF_CLANG", "clang-19");
    }
    let st = cmd.status().context("running cargo build")?;
    anyhow::ensure!(st.success(), "building scx_sis failed");
    Ok(())
}

/// The guest test helper (tests/guest/probe.c), built static so it needs no libraries.
pub fn build_probe() -> Result<PathBuf> {
    let out = repo_root().join("target/sis-probe");
    compile_probe(&out, &["-O2", "-Wall", "-static"])?;
    Ok(out)
}

/// cc the probe's sources (probe.c, trace.c) into `out` with `flags`.
fn compile_probe(out: &std::path::Path, flags: &[&str]) -> Result<()> {
    let src = repo_root().join("tests/guest/probe.c");
    let st = Command::new("cc")
        .args(flags)
        .args(["-pthread", "-o"])
        .arg(out)
        .arg(&src)
        .arg(repo_root().join("tests/guest/trace.c"))
        .status()
        .context("running cc for sis-probe")?;
    anyhow::ensure!(st.success(), "building {} failed", src.display());
    Ok(())
}

impl GuestOpts {
    pub fn config(&self, stream: bool) -> Result<vm::VmConfig> {
        let kernel = kernel::resolve(&repo_root(), self.kernel.as_deref())?;
        let mut with = vec![scx_sis_bin()];
        with.extend(self.with.iter().cloned());
        Ok(vm::VmConfig {
            kernel_args: String::new(),
            kernel,
            topology: self.topology,
            numa: self.numa,
            numa_distance: self.numa_distance,
            mem_mib: self.mem,
            with,
            dirs: vec![(repo_root().join("tests/guest"), "/tests".into())],
            timeout: Duration::from_secs(self.timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            tcg_multi: self.tcg_multi,
            icount: self.icount,
            stream,
        })
    }

    fn prepare(&self) -> Result<vm::VmConfig> {
        setup::ensure()?;
        let cfg = self.config(true)?;
        if !self.no_build {
            build_scheduler()?;
        }
        let mut cfg = cfg;
        cfg.with.push(build_probe()?);
        anyhow::ensure!(
            scx_sis_bin().is_file(),
            "{} is missing: build it or drop --no-build",
            scx_sis_bin().display()
        );
        Ok(cfg)
    }
}

/// Run in a guest, print the failure reason and console tail if it did not finish.
fn vm_exit(cfg: &vm::VmConfig, cmd: &str) -> Result<i32> {
    eprintln!(
        "xtask: kernel {} topology {}{} TCG {} ",
        cfg.kernel.version,
        cfg.topology,
        if cfg.numa { " numa" } else { "" },
        vm::tcg_mode(cfg)
    );
    let r = vm::run(cfg, cmd)?;
    if let Some(why) = &r.failure {
        eprintln!("xtask: {why} (exit {})", r.code);
        eprintln!("{}", vm::relevant_lines(&r.output));
    } else {
        eprintln!(
            "xtask: guest booted in {:.1}s, finished in {:.1}s, exit {}",
            r.boot_secs, r.total_secs, r.code
        );
    }
    Ok(r.code)
}

fn main() {
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Vm(o) => o
            .guest
            .prepare()
            .and_then(|cfg| vm_exit(&cfg, &vm::shell_join(&o.cmd))),
        Cmd::Run(o) => run_cmd(o),
        Cmd::Test(o) => suite::run(o.filter.as_deref(), o.jobs, !o.no_unit),
        Cmd::Setup => setup::ensure().map(|_| 0),
        Cmd::Doc { check } => doc::doc(check),
        Cmd::Verifier => suite::verifier_baseline(),
        Cmd::Kernels => kernel::print_table(),
        Cmd::Headline { from, summary, svg } => {
            bench::headline::print(&repo_root().join(from), summary, svg.as_deref())
        }
        Cmd::Features => doc::print_from_scheduler("--feature-table"),
        Cmd::StatsFields => doc::print_from_scheduler("--help-stats"),
        Cmd::Check => check_cmd(),
        Cmd::Bench(o) => bench::run(o),
        Cmd::Soak {
            minutes,
            kernel,
            sched,
            topology,
            numa,
        } => soak::soak(minutes, kernel.as_deref(), &sched, topology, numa),
    };
    match res {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            std::process::exit(2);
        }
    }
}

/// `cargo xtask check`: refuses in one line (exit 2) without sched_ext, before building.
fn check_cmd() -> Result<i32> {
    if !Path::new("/sys/kernel/sched_ext").exists() {
        eprintln!("xtask check: this kernel has no sched_ext (/sys/kernel/sched_ext is missing): nothing to check here; `cargo xtask run` shows the guest demo");
        return Ok(2);
    }
    // a user's machine: build what the check runs, install nothing
    build_scheduler()?;
    let probe = build_probe()?;
    let dirs = [
        scx_sis_bin().parent().map(Path::to_path_buf),
        probe.parent().map(Path::to_path_buf),
    ];
    let mut path: Vec<PathBuf> = dirs.into_iter().flatten().collect();
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let st = Command::new("sh")
        .arg(repo_root().join("tests/guest/first_check.sh"))
        .env("PATH", std::env::join_paths(path).context("joining PATH")?)
        .status()
        .context("running tests/guest/first_check.sh")?;
    Ok(st.code().unwrap_or(1))
}

fn run_cmd(o: RunOpts) -> Result<i32> {
    let native = Path::new("/sys/kernel/sched_ext").exists();
    if native {
        setup::ensure()?;
        build_scheduler()?;
        let st = Command::new(scx_sis_bin())
            .args(["--stats", "1"])
            .args(&o.args)
            .status()
            .context("starting scx_sis")?;
        return Ok(st.code().unwrap_or(1));
    }
    eprintln!("xtask: this kernel has no sched_ext: running scx_sis in a guest");
    let cfg = o.guest.prepare()?;
    let args = vm::shell_join(&o.args);
    let script = format!("sh /tests/demo.sh {} {}", o.secs, args);
    vm_exit(&cfg, &script)
}

#[cfg(test)]
mod probe_tests {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::process::Command;

    /// What each wakeup of tests/guest/testdata/trace-decision.txt should give.
    const EXPECTED: [(&str, &str); 18] = [
        ("q_wakeups", "2"),
        ("no_decision", "2"),
        ("wakings", "4"),
        ("dropped_events", "0"),
        ("snapshot_at_decision", "2"),
        ("idle_core_existed", "0"),
        ("missed_idle_core_per_1k", "0.0"),
        ("idle_cpu_existed", "2"),
        ("missed_idle_cpu_per_1k", "500.0"),
        ("stacked_per_1k", "500.0"),
        ("wakeups", "2"),
        ("lat_p99_us", "500.0"),
        ("lat_idle_cpu_n", "1"),
        ("lat_idle_cpu_p99_us", "100.0"),
        ("lat_busy_cpu_n", "1"),
        ("lat_busy_cpu_p99_us", "500.0"),
        ("lat_tail_idle_cpu_pct", "0.0"),
        ("lat_over_250us_per_1k", "500.00"),
    ];

    /// A fresh sis-probe in a temporary folder (the caller removes it); not
    /// build_probe(): a running suite's guests may be reading target/sis-probe.
    fn probe() -> (PathBuf, PathBuf) {
        let dir = crate::vm::tempdir("xtask-probe-test").expect("tempdir");
        let bin = dir.join("sis-probe");
        crate::compile_probe(&bin, &["-O1"]).expect("building sis-probe");
        (dir, bin)
    }

    /// `sis-probe trace replay` of @trace (the text) on the made-up topology @topo.
    fn replay(trace: &str, topo: &str) -> (String, HashMap<String, String>) {
        let (dir, bin) = probe();
        let file = dir.join("trace.txt");
        std::fs::write(&file, trace).expect("writing the trace");
        let out = Command::new(&bin)
            .args(["trace", "replay"])
            .arg(&file)
            .args(["sis-worker", topo])
            .output()
            .expect("running sis-probe trace replay");
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let kv = crate::bench::parse::kv(&text)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (text, kv)
    }

    fn test_trace() -> String {
        let path = crate::repo_root().join("tests/guest/testdata/trace-decision.txt");
        std::fs::read_to_string(path).expect("reading the test trace")
    }

    /// The tracer replayed on a made-up trace (tests/guest/testdata/trace-decision.txt
    /// says what each wakeup is for): the idle snapshot is the decision's, not
    /// sched_waking's; a wakeup with no decision probe is no_decision; another task's
    /// decision on the same CPU is not taken for a waiting one; each wait is split by
    /// its CPU's state at sched_wakeup.
    #[test]
    fn tracer_judges_at_the_decision() {
        let (text, kv) = replay(&test_trace(), "8:8:2");
        for (k, v) in EXPECTED {
            assert_eq!(kv.get(k).map(String::as_str), Some(v), "{k} in {text}");
        }
    }

    /// Every subcommand a guest script runs is in the probe's one table, which its usage
    /// prints: a script calling one that does not exist fails here, not in a guest.
    #[test]
    fn scripts_use_only_listed_subcommands() {
        let (dir, bin) = probe();
        let out = Command::new(&bin).output().expect("running sis-probe");
        let _ = std::fs::remove_dir_all(&dir);
        let usage = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{usage}");
        let listed: Vec<&str> = usage
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert!(listed.len() > 20, "{usage}");
        let dir = crate::repo_root().join("tests/guest");
        for e in std::fs::read_dir(&dir).expect("reading tests/guest") {
            let path = e.expect("dir entry").path();
            if path.extension().and_then(|x| x.to_str()) != Some("sh") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("reading a script");
            for w in text.split("sis-probe ").skip(1) {
                let name: String = w.chars().take_while(|c| c.is_ascii_lowercase()).collect();
                if name.is_empty() || PROSE.contains(&name.as_str()) {
                    continue;
                }
                assert!(
                    listed.contains(&name.as_str()),
                    "{}: sis-probe {name} is not a subcommand",
                    path.display()
                );
            }
        }
    }

    /// Words that follow "sis-probe " in the scripts' comments and messages.
    const PROSE: [&str; 3] = ["on", "must", "hackbench"];

    /// bpfstats names each struct_ops program after its op whatever the scheduler's
    /// prefix, also when the kernel cut the name at 15 characters.
    #[test]
    fn bpfstats_names_the_op() {
        let cases = [
            ("sis_select_cpu", "select_cpu"),
            ("cosmos_select_c", "select_cpu"),
            ("sis_update_idle", "update_idle"),
            ("sis_init_task", "init_task"),
            ("sis_init", "init"),
            ("cosmos_init_tas", "init_task"),
            ("rusty_cpu_relea", "cpu_release"),
            ("bpfland_exit", "exit"),
            ("sis_exit_task", "exit_task"),
            ("a_b_dispatch", "dispatch"),
            ("sis_frobnicate", "other"),
        ];
        let (dir, bin) = probe();
        let out = Command::new(&bin)
            .arg("opname")
            .args(cases.iter().map(|c| c.0))
            .output()
            .expect("running sis-probe opname");
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let kv = crate::bench::parse::kv(&text);
        for (name, op) in cases {
            assert_eq!(kv.get(name), Some(&op), "{name} in {text}");
        }
    }

    /// The same trace moved to CPUs 1000-1007 of a 1024-CPU machine (beyond any fixed
    /// table the tracer once had): the same judgement, no event dropped.
    #[test]
    fn tracer_takes_any_cpu_number() {
        let moved: String = test_trace()
            .lines()
            .map(|l| {
                let mut l = l
                    .replace("[00", "[100")
                    .replace("target_cpu=00", "target_cpu=100");
                if l.contains("sis_decide_") {
                    l = l.replace(" cpu=", " cpu=100");
                }
                l + "\n"
            })
            .collect();
        assert!(moved.contains("[1005]") && moved.contains("cpu=1006"));
        let (text, kv) = replay(&moved, "1024:8:2");
        for (k, v) in EXPECTED {
            assert_eq!(kv.get(k).map(String::as_str), Some(v), "{k} in {text}");
        }
        assert_eq!(kv.get("unpaired").map(String::as_str), Some("0"), "{text}");
    }
}
