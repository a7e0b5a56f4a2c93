// SPDX-License-Identifier: GPL-2.0-only
//! scx_sis: the kernel's select_idle_sibling() wakeup placement as a sched_ext
//! scheduler. This is the loader's CLI, its checks before loading and the restart loop
//! (the scheduler itself: scheduler.rs; topology: topo.rs; stats: stats/).

mod bpf_intf;
mod bpf_skel;
mod control;
mod derived;
mod eevdf;
mod enabled;
mod features;
mod guard;
mod hist;
mod kcompat;
mod libbpf_log;
mod pelt;
mod printer;
mod scheduler;
mod socket;
mod stats;
mod topo;

use anyhow::{bail, Context, Result};
use clap::Parser;
use log::{info, warn};
use scheduler::{verifier_report, Scheduler, StatusFile};
use scx_utils::libbpf_clap_opts::LibbpfOpts;
use stats::Output;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const SCHEDULER_NAME: &str = "scx_sis";

/// The build id, as the scx schedulers print it: version, git hash (`-dirty` with local
/// changes), target triple (`/debug` for a debug build), and the scx_utils version.
pub(crate) fn full_version() -> String {
    let mut v = env!("CARGO_PKG_VERSION").to_string();
    if let Some(sha) = option_env!("SCX_SIS_GIT_SHA").filter(|s| !s.is_empty()) {
        v += &format!("-g{sha}");
    }
    format!(
        "{v} {} (scx_utils {})",
        scx_utils::build_id::full_version("")
            .trim()
            .trim_start_matches('-'),
        *scx_utils::build_id::SCX_CARGO_VERSION
    )
}

#[derive(Debug, Parser)]
#[command(name = SCHEDULER_NAME, version = env!("CARGO_PKG_VERSION"), disable_version_flag = true,
          about = "The kernel's select_idle_sibling() wakeup placement as a sched_ext scheduler")]
struct Opts {
    #[arg(short = 'f', long, default_value = "", help = features::help())]
    features: String,

    /// Print every feature with its default and meaning, then exit.
    #[arg(long)]
    list_features: bool,

    /// The request (EEVDF base slice) in microseconds; default: the kernel's
    /// sysctl_sched_base_slice (debugfs), else 700 us x (1 + ilog2(min(CPUs, 8))).
    #[arg(short = 's', long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    slice_us: Option<u64>,

    /// Print stats every SECS seconds while scheduling.
    #[arg(long, value_name = "SECS")]
    stats: Option<f64>,

    /// Print the stats of a running scx_sis every SECS seconds; loads nothing. With
    /// --pelt: that task's figures every SECS seconds, until it exits.
    #[arg(long, value_name = "SECS")]
    monitor: Option<f64>,

    /// With --stats or --monitor: print each interval as one JSON object.
    #[arg(long)]
    json: bool,

    /// With --stats or --monitor: print the full per-step table each interval.
    #[arg(long, conflicts_with = "json")]
    stats_detail: bool,

    /// At exit, after the readable totals table, log the totals as one JSON line
    /// (`totals {...}`, the fields of --help-stats) for scripts.
    #[arg(long)]
    totals_json: bool,

    /// Change the features of the running scx_sis (e.g. NO_IDLE_CORE); without a
    /// value, print them. Goes through the ctl map pinned at /sys/fs/bpf/scx_sis/ctl.
    #[arg(long, value_name = "FEATURES", num_args = 0..=1, default_missing_value = "")]
    set: Option<String>,

    /// Print a task's PELT signals (load, runnable, util) as the running scx_sis keeps
    /// them, in /proc/PID/sched's format, and exit (with --monitor: again and again).
    #[arg(long, value_name = "PID", value_parser = clap::value_parser!(i32).range(1..))]
    pelt: Option<i32>,

    /// Do not classify decisions against the idle masks (the quality counters stay 0);
    /// for measuring the search cost alone.
    #[arg(long)]
    no_quality: bool,

    /// Classify only the wakeups of tasks whose comm starts with this prefix (at most
    /// 15 bytes), e.g. a benchmark's threads.
    #[arg(long, value_name = "PREFIX", default_value = "", value_parser = quality_comm)]
    quality_comm: String,

    /// Never turn the kernel's BPF run-time statistics on for a stats read (the `ns`
    /// figures then come only from whoever else holds them on, as the bench does).
    #[arg(long)]
    no_bpf_stats: bool,

    /// Describe every stats field and exit.
    #[arg(long)]
    help_stats: bool,

    /// Size of the debug dump on an error exit, in bytes (0: the kernel's default size).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=(64 << 20)))]
    exit_dump_len: u32,

    /// libbpf debug output (shows the verifier log).
    #[arg(short = 'v', long)]
    verbose: bool,

    /// Print the version and exit.
    #[arg(short = 'V', long)]
    version: bool,

    /// Load the BPF programs without attaching, print the instructions the verifier
    /// processed for each (`verified_insns PROG N`), and exit: the figures
    /// `cargo xtask verifier` records and the suite holds to a budget.
    #[arg(long, hide = true)]
    verifier_report: bool,

    /// Print the kernel interfaces newer than 6.16 that scx_sis uses (name, first line,
    /// what for, what it does without), tab-separated, and exit: README's kernel table.
    #[arg(long, hide = true)]
    kernel_interfaces: bool,

    /// Print the feature table with the table's defaults, not this kernel's, and exit:
    /// docs/DESIGN.md's feature table.
    #[arg(long, hide = true)]
    feature_table: bool,

    /// Load a program the verifier must reject (tests the error path).
    #[arg(long, hide = true)]
    test_verifier_reject: bool,

    /// Make the BPF side raise a runtime error about a second after attaching (tests
    /// that an ejection is reported and exits non-zero).
    #[arg(long, hide = true)]
    test_runtime_error: bool,

    #[clap(flatten, next_help_heading = "Libbpf Options")]
    libbpf: LibbpfOpts,
}

fn quality_comm(s: &str) -> Result<String> {
    if s.len() > 15 {
        bail!(
            "--quality-comm: at most 15 bytes (a task's comm), got {}",
            s.len()
        );
    }
    Ok(s.to_string())
}

fn interval(secs: f64, what: &str) -> Result<Duration> {
    if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
        bail!("--{what} must be between 0 and 3600 seconds, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Each stats client holds a file descriptor: allow as many as the hard limit, so
/// that many idle clients cannot make accept() fail in a loop.
fn raise_nofile() {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 && rl.rlim_cur < rl.rlim_max {
            rl.rlim_cur = rl.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
        }
    }
}

/// The checks a user gets a one-line answer for before anything is loaded; returns
/// the single-instance lock.
fn preflight() -> Result<guard::Lock> {
    if unsafe { libc::geteuid() } != 0 {
        bail!("{SCHEDULER_NAME} must run as root (it loads a BPF scheduler)");
    }
    if !std::path::Path::new("/sys/kernel/sched_ext").exists() {
        bail!(
            "this kernel ({}) has no sched_ext: /sys/kernel/sched_ext is missing (needs CONFIG_SCHED_CLASS_EXT=y)",
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
        );
    }
    let lock = guard::instance_lock()?;
    // refuse a pin folder someone else prepared before loading anything
    guard::secure_dir(control::PIN_DIR)?;
    let state = std::fs::read_to_string("/sys/kernel/sched_ext/state").unwrap_or_default();
    if state.trim() != "disabled" {
        let ops = std::fs::read_to_string("/sys/kernel/sched_ext/root/ops").unwrap_or_default();
        bail!(
            "another sched_ext scheduler is already loaded ({}, state {}); stop it first",
            if ops.trim().is_empty() {
                "unknown"
            } else {
                ops.trim()
            },
            state.trim()
        );
    }
    Ok(lock)
}

fn init_log(verbose: bool) -> Result<()> {
    let cfg = simplelog::ConfigBuilder::new()
        .set_time_level(simplelog::LevelFilter::Off)
        .set_target_level(simplelog::LevelFilter::Off)
        .set_thread_level(simplelog::LevelFilter::Off)
        .build();
    simplelog::TermLogger::init(
        if verbose {
            simplelog::LevelFilter::Debug
        } else {
            simplelog::LevelFilter::Info
        },
        cfg,
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Never,
    )
    .context("setting up logging")
}

/// Parse the command line; a usage error is one line and exit 2, like every other error.
fn parse_opts() -> Opts {
    match Opts::try_parse() {
        Ok(o) => o,
        Err(e) if e.use_stderr() => {
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid arguments");
            eprintln!(
                "{SCHEDULER_NAME}: {} (see --help)",
                first.trim_start_matches("error: ")
            );
            std::process::exit(2);
        }
        Err(e) => e.exit(),
    }
}

fn real_main() -> Result<()> {
    let opts = parse_opts();
    if opts.version {
        println!("{SCHEDULER_NAME} {}", full_version());
        return Ok(());
    }
    if opts.list_features {
        print!("{}", features::list(features::kernel_default_mask()));
        return Ok(());
    }
    if opts.feature_table {
        print!("{}", features::list(features::default_mask()));
        return Ok(());
    }
    if opts.kernel_interfaces {
        print!("{}", kcompat::table());
        return Ok(());
    }
    if opts.help_stats {
        stats::server_data().describe_meta(&mut std::io::stdout(), None)?;
        return Ok(());
    }
    if let Some(spec) = &opts.set {
        return control::set(spec);
    }
    if let Some(pid) = opts.pelt {
        let every = opts.monitor.map(|s| interval(s, "monitor")).transpose()?;
        return pelt::show(pid, every);
    }
    let mut features = features::parse(&opts.features, features::kernel_default_mask())?;
    let stats_every = opts.stats.map(|s| interval(s, "stats")).transpose()?;
    init_log(opts.verbose)?;

    let shutdown = Arc::new(AtomicBool::new(false));
    let s = shutdown.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))
        .context("installing the SIGINT/SIGTERM handler")?;

    if let Some(secs) = opts.monitor {
        let every = interval(secs, "monitor")?;
        socket::check_access()?;
        return stats::monitor(every, shutdown, Output::of(&opts));
    }
    // Held for the loader's life, restarts included: one scx_sis at a time.
    let _instance = preflight()?;
    // the status file goes with us however real_main returns (before the lock does)
    let _status = StatusFile;
    if opts.verifier_report {
        libbpf_log::capture(opts.verbose);
        return verifier_report(&opts);
    }
    socket::check_path()?;
    raise_nofile();
    libbpf_log::capture(opts.verbose);

    // checks passed: from here on the scheduler loads, so say with which options
    info!(
        "{SCHEDULER_NAME} {} options: {}",
        full_version(),
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    let mut open_object = MaybeUninit::uninit();
    let mut carry: Option<guard::Lock> = None;
    let mut ids = topo::Ids::default();
    loop {
        let mut sched = Scheduler::init(&opts, features, &mut ids, &mut open_object)?;
        // the new ctl map is pinned with the carried features: --set may go on
        drop(carry.take());
        let uei = sched.run(shutdown.clone(), stats_every, Output::of(&opts), &mut ids)?;
        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            enabled::detached();
            warn!("{SCHEDULER_NAME}: the kernel asked for a restart; restarting");
            // carry the live features (--set's) over, with no --set in between
            carry = Some(guard::set_lock()?);
            features = sched.live_features()?;
            continue;
        }
        return Ok(());
    }
}

fn main() {
    if let Err(e) = real_main() {
        // A reader that went away (`scx_sis --monitor 1 | head`) is not an error.
        let broken_pipe = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if broken_pipe {
            std::process::exit(0);
        }
        // One line: the chain of contexts, outermost first.
        eprintln!("{SCHEDULER_NAME}: error: {e:#}");
        std::process::exit(1);
    }
}
