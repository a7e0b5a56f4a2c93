// SPDX-License-Identifier: GPL-2.0-only
//! The scheduler: load the BPF object, attach it, run it until it exits, and what it
//! reports meanwhile (stats snapshots, status.json, the kernel's BPF statistics).

use crate::bpf_skel::*;
use crate::printer::Printer;
use crate::stats::{self, Metrics, Output};
use crate::{
    bpf_intf, control, eevdf, enabled, features, guard, kcompat, libbpf_log, socket, topo,
};
use crate::{full_version, Opts, SCHEDULER_NAME};
use anyhow::{Context, Result};
use crossbeam::channel::TryRecvError;
use libbpf_rs::{MapCore, MapFlags, OpenObject};
use log::{info, warn};
use scx_stats::prelude::*;
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report, UserExitInfo};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// In guard::LOCK_DIR: what the running loader has attached (see write_status).
const STATUS_FILE: &str = "status.json";

pub(crate) struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    struct_ops: Option<libbpf_rs::Link>,
    /// 6.19+: the sched_switch hook, attached once the scheduler is enabled
    sched_switch: Option<libbpf_rs::Link>,
    stats_server: StatsServer<(), Metrics>,
    _pin: control::Pin,
    attached: Instant,
    /// stats reads that gave up on a clean copy of some CPU's counters
    torn_reads: std::cell::Cell<u64>,
    /// --totals-json
    totals_json: bool,
    /// The kernel's BPF run-time statistics, on while someone reads them.
    bpf_stats: BpfStats,
    /// status.json's topology and kernel, kept current across CPU hotplug
    view: serde_json::Value,
    features: u64,
    /// the BPF side's hotplug_seq when the topology was last read
    hotplug_seen: u64,
    /// the CPUs that topology has online
    online: Vec<usize>,
}

/// Holds a `bpf_enable_stats(BPF_STATS_RUN_TIME)` descriptor while stats are read (a
/// client, or `--stats`) and closes it when no read came for STATS_IDLE: every BPF
/// program pays two clock reads per run while it is held. The sysctl
/// `kernel.bpf_stats_enabled` is never written; closing the descriptor (or exiting,
/// however) undoes what we did.
struct BpfStats {
    fd: std::cell::RefCell<Option<std::os::fd::OwnedFd>>,
    last_read: std::cell::Cell<Instant>,
    warned: std::cell::Cell<bool>,
    /// --no-bpf-stats: never turn them on (a bench holds them on for everyone alike)
    off: bool,
}

const STATS_IDLE: Duration = Duration::from_secs(10);

impl BpfStats {
    fn new(off: bool) -> Self {
        Self {
            fd: std::cell::RefCell::new(None),
            last_read: std::cell::Cell::new(Instant::now()),
            warned: std::cell::Cell::new(false),
            off,
        }
    }

    /// A read is coming: make sure the statistics are on.
    fn reading(&self) {
        use std::os::fd::FromRawFd;
        self.last_read.set(Instant::now());
        if self.off {
            return;
        }
        let mut fd = self.fd.borrow_mut();
        if fd.is_none() {
            // SAFETY: a plain syscall wrapper; a non-negative result is a new descriptor we own.
            let raw = unsafe {
                libbpf_rs::libbpf_sys::bpf_enable_stats(libbpf_rs::libbpf_sys::BPF_STATS_RUN_TIME)
            };
            if raw >= 0 {
                *fd = Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) });
            } else if !self.warned.replace(true) {
                warn!("{SCHEDULER_NAME}: bpf_enable_stats failed ({raw}); the ns figures stay 0");
            }
        }
    }

    /// Close the descriptor when nobody read for STATS_IDLE.
    fn idle(&self) {
        if self.last_read.get().elapsed() > STATS_IDLE {
            self.fd.borrow_mut().take();
        }
    }
}

impl<'a> Scheduler<'a> {
    /// Load and attach with these features (`-f`'s at first, the running ones after
    /// a restart, so that `--set` changes survive it).
    pub(crate) fn init(
        opts: &Opts,
        features: u64,
        ids: &mut topo::Ids,
        open_object: &'a mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        let (mut skel, view) = load_skel(opts, features, ids, open_object)?;
        control::write(
            &skel.maps.ctl,
            &bpf_intf::sis_ctl {
                features,
                generation: 0,
            },
        )?;
        let pin = control::Pin::create(&mut skel.maps.ctl, &mut skel.maps.task_ctxs)?;
        let struct_ops = Some(scx_ops_attach!(skel, sis_ops).context("attaching scx_sis")?);
        let sched_switch = Self::attach_sched_switch(&skel)?;
        let stats_server = socket::launch()?;
        info!("{SCHEDULER_NAME} scheduler attached");
        enabled::attached();
        Self::write_status(&view, features, true)?;
        let hotplug_seen = Self::hotplug_seq(&skel)?;
        let online = view["online"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_u64())
                    .map(|c| c as usize)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            skel,
            struct_ops,
            sched_switch,
            stats_server,
            _pin: pin,
            attached: Instant::now(),
            torn_reads: std::cell::Cell::new(0),
            totals_json: opts.totals_json,
            bpf_stats: BpfStats::new(opts.no_bpf_stats),
            view,
            features,
            hotplug_seen,
            online,
        })
    }

    /// CPU hotplug events the BPF side has seen (sis_cpu_online/offline).
    fn hotplug_seq(skel: &BpfSkel) -> Result<u64> {
        let b = skel.maps.bss_data.as_ref().context("BPF bss")?;
        // SAFETY: a u64 in the mmapped .bss, written by BPF programs concurrently
        Ok(unsafe { std::ptr::read_volatile(&b.hotplug_seq) })
    }

    /// After a CPU hotplug: read sysfs again and rewrite the BPF side's topology in
    /// place (the kernel kept us loaded, since we have ops.cpu_online/offline).
    fn follow_hotplug(&mut self, ids: &mut topo::Ids) -> Result<()> {
        // the callbacks run before sysfs has caught up (an offline CPU is still listed
        // as online then): also compare the kernel's online list with what we wrote
        let seq = Self::hotplug_seq(&self.skel)?;
        let online = topo::online_cpus()?;
        if seq == self.hotplug_seen && online == self.online {
            return Ok(());
        }
        self.hotplug_seen = seq;
        let start = Instant::now();
        // a read that a whole off-and-on cycle crossed mixes both states (the CPU's
        // siblings without it, itself with them): read again while callbacks ran during it
        let read = |ids: &mut topo::Ids| match topo::SisTopology::read_settled(ids) {
            Ok(t) => Some(t),
            Err(e) => {
                warn!("{SCHEDULER_NAME}: CPU hotplug: topology not read ({e:#}); keeping the last one");
                None
            }
        };
        let Some(mut topo) = read(ids) else {
            return Ok(());
        };
        let mut before = seq;
        for _ in 0..4 {
            let after = Self::hotplug_seq(&self.skel)?;
            if after == before {
                break;
            }
            before = after;
            let Some(t) = read(ids) else {
                return Ok(());
            };
            topo = t;
        }
        let b = self.skel.maps.bss_data.as_mut().context("BPF bss")?;
        topo.write_maps(b);
        self.online = topo.online();
        topo.describe(&mut self.view);
        // callbacks that ran while the read waited count now (an online CPU shows in sysfs
        // before sis_cpu_online runs); hotplug_seen keeps the earlier value, so the next
        // poll reads again in case one came after the read
        self.view["hotplugs"] = Self::hotplug_seq(&self.skel)?.into();
        Self::write_status(&self.view, self.features, false)?;
        info!(
            "{SCHEDULER_NAME}: CPU hotplug: {}, topology rewritten in {:.0} ms",
            topo.view(),
            start.elapsed().as_secs_f64() * 1e3
        );
        Ok(())
    }

    /// The sched_switch hook where this kernel loaded it (6.19+), attached only now that
    /// the scheduler is enabled.
    fn attach_sched_switch(skel: &BpfSkel) -> Result<Option<libbpf_rs::Link>> {
        let prog = &skel.progs.sis_sched_switch;
        if !prog.autoload() {
            return Ok(None);
        }
        let link = prog.attach().context("attaching the sched_switch hook")?;
        Ok(Some(link))
    }

    /// `/run/scx_sis/status.json`, rewritten at every attach (the first and each restart)
    /// and CPU hotplug: what is loaded, for scripts, instead of parsing the log.
    fn write_status(topology: &serde_json::Value, features: u64, attach: bool) -> Result<()> {
        static ATTACHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let attaches = ATTACHES.fetch_add(attach as u64, Ordering::Relaxed) + attach as u64;
        let status = serde_json::json!({
            "version": full_version(),
            "pid": std::process::id(),
            "attaches": attaches,
            "restarts": attaches - 1,
            "features": features::format(features),
            "topology": topology,
        });
        guard::write_atomic(STATUS_FILE, &status.to_string())
    }

    /// Every CPU's counters. A CPU's copy is torn when a select_cpu updated it
    /// while the kernel copied it (seq_done != seq_start, see intf.h); the map is read
    /// again, keeping each CPU's first clean copy, until every CPU has one. After 100
    /// reads a CPU still torn keeps its latest copy (the interval is then off by that
    /// CPU's wakeups in flight) and the read is counted: a stats read never unloads
    /// the scheduler.
    fn stats_snapshot(&self) -> Result<Vec<bpf_intf::sis_cpu_stats>> {
        let mut clean: Vec<Option<bpf_intf::sis_cpu_stats>> = Vec::new();
        let mut last = Vec::new();
        for _ in 0..100 {
            let raw = self
                .skel
                .maps
                .stats
                .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
                .context("reading the stats map")?
                .context("stats map has no entry 0")?;
            clean.resize(raw.len(), None);
            last.clear();
            for (cpu, v) in raw.iter().enumerate() {
                let st: bpf_intf::sis_cpu_stats = bpf_intf::from_bytes(v)
                    .with_context(|| format!("stats map value is {} bytes, too short", v.len()))?;
                if clean[cpu].is_none() && st.seq_done == st.seq_start {
                    clean[cpu] = Some(st);
                }
                last.push(st);
            }
            if clean.iter().all(|c| c.is_some()) {
                return Ok(clean.into_iter().flatten().collect());
            }
        }
        if self.torn_reads.replace(self.torn_reads.get() + 1) == 0 {
            warn!("{SCHEDULER_NAME}: a CPU's counters were torn in 100 reads in a row; using its latest copy");
        }
        Ok(clean
            .into_iter()
            .zip(last)
            .map(|(c, l)| c.unwrap_or(l))
            .collect())
    }

    /// Totals since load: per-CPU counters summed, histograms merged.
    fn metrics(&self) -> Result<Metrics> {
        let mut m = Metrics::from_cpus(&self.stats_snapshot()?);
        let ctl = control::read(&self.skel.maps.ctl)?;
        let (prog_run_ns, prog_run_cnt) = prog_stats(self.skel.progs.sis_select_cpu.as_fd());
        let p = &self.skel.progs;
        let hot = [
            ("select_cpu", p.sis_select_cpu.as_fd()),
            ("enqueue", p.sis_enqueue.as_fd()),
            ("dispatch", p.sis_dispatch.as_fd()),
            ("runnable", p.sis_runnable.as_fd()),
            ("running", p.sis_running.as_fd()),
            ("stopping", p.sis_stopping.as_fd()),
            ("tick", p.sis_tick.as_fd()),
        ];
        let progs = hot
            .into_iter()
            .map(|(name, fd)| {
                let (run_ns, runs) = prog_stats(fd);
                (
                    name.to_string(),
                    stats::ProgStats {
                        run_ns,
                        runs,
                        ..Default::default()
                    },
                )
            })
            .collect();
        m.features = features::format(ctl.features);
        m.features_changed = ctl.generation;
        (m.restarts, m.not_enabled_s, m.enabled_pct) = enabled::figures();
        m.uptime_s = self.attached.elapsed().as_secs_f64();
        (m.pelt_nr_runnable, m.pelt_load_avg) = self.pelt_sums()?;
        m.prog_run_ns = prog_run_ns;
        m.prog_run_cnt = prog_run_cnt;
        m.progs = progs;
        m.finish();
        Ok(m)
    }

    /// The CPUs' PELT sums (runnable count, load_avg), summed, as the BPF side has them now.
    fn pelt_sums(&self) -> Result<(u64, u64)> {
        let b = self.skel.maps.bss_data.as_ref().context("BPF bss")?;
        let n = (self
            .skel
            .maps
            .rodata_data
            .as_ref()
            .context("BPF rodata")?
            .nr_cpu_ids as usize)
            .min(b.cpu_pelts.len());
        Ok(b.cpu_pelts[..n].iter().fold((0, 0), |(r, l), c| {
            // SAFETY: integers in the mmapped .bss, written by BPF programs concurrently
            let (nr, load) = unsafe {
                (
                    std::ptr::read_volatile(&c.nr_runnable),
                    std::ptr::read_volatile(&c.avg.load_avg),
                )
            };
            (r + nr as u64, l + load)
        }))
    }

    /// The features the running scheduler has now (`--set` may have changed them).
    pub(crate) fn live_features(&self) -> Result<u64> {
        Ok(control::read(&self.skel.maps.ctl)?.features)
    }

    fn exited(&mut self) -> bool {
        uei_exited!(&self.skel, uei)
    }

    pub(crate) fn run(
        &mut self,
        shutdown: Arc<AtomicBool>,
        stats_every: Option<Duration>,
        out: Output,
        ids: &mut topo::Ids,
    ) -> Result<UserExitInfo> {
        let (res_ch, req_ch) = self.stats_server.channels();
        let mut printer = Printer::new();
        let mut last_print = Instant::now();
        let mut last_total = self.metrics()?;
        while !shutdown.load(Ordering::Relaxed) && !self.exited() {
            self.follow_hotplug(ids)?;
            // Each client gets totals; its own delta() derives its interval from uptime_s.
            // Poll, then sleep, so this thread holds no CPU between requests.
            match req_ch.try_recv() {
                Ok(()) => {
                    self.bpf_stats.reading();
                    res_ch.send(self.metrics()?)?
                }
                Err(TryRecvError::Empty) => {
                    self.bpf_stats.idle();
                    std::thread::sleep(Duration::from_millis(200))
                }
                Err(e) => Err(e)?,
            }
            if let Some(every) = stats_every {
                self.bpf_stats.reading();
                if last_print.elapsed() >= every {
                    last_print = Instant::now();
                    let cur = self.metrics()?;
                    printer.send(stats::render(&cur.delta(&last_total), out)?);
                    last_total = cur;
                }
            }
        }
        let _ = self.sched_switch.take();
        let _ = self.struct_ops.take();
        self.bpf_stats.fd.borrow_mut().take();
        // Detached: no select_cpu runs any more, so these totals are exact.
        let mut total = self.metrics()?;
        total.interval_s = total.uptime_s;
        let mut table = Vec::new();
        total.format_detail(&mut table)?;
        info!("totals over {:.1}s since attach:", total.uptime_s);
        for line in String::from_utf8_lossy(&table).lines().skip(1) {
            info!("{line}");
        }
        if self.totals_json {
            info!("totals {}", serde_json::to_string(&total)?);
        }
        if self.torn_reads.get() > 0 {
            warn!(
                "{SCHEDULER_NAME}: {} stats reads used a torn copy",
                self.torn_reads.get()
            );
        }
        uei_report!(&self.skel, uei)
    }
}

/// Open the BPF object, write the topology and options into it, and load it (the
/// verifier runs here); nothing is attached yet.
fn load_skel<'a>(
    opts: &Opts,
    features: u64,
    ids: &mut topo::Ids,
    open_object: &'a mut MaybeUninit<OpenObject>,
) -> Result<(BpfSkel<'a>, serde_json::Value)> {
    // settled: not mid-hotplug (else the last read is taken, and reread after attach)
    let mut settled = true;
    let topo = topo::SisTopology::read_settled(ids)
        .or_else(|e| {
            warn!("{SCHEDULER_NAME}: {e:#}; reading the topology as it is");
            settled = false;
            topo::SisTopology::read(ids)
        })
        .context("reading the CPU topology")?;
    let (release, _) = kcompat::release()?;
    let have = kcompat::probe()?;
    let lacks: Vec<&str> = kcompat::CAPS
        .iter()
        .zip(&have)
        .filter(|(_, h)| !**h)
        .map(|(c, _)| c.name)
        .collect();
    let mut view = serde_json::json!({
        "kernel": release,
        "kernel_lacks": lacks,
        "hotplugs": 0,
    });
    topo.describe(&mut view);
    if !settled {
        // no CPU list matches this: the first poll after attach reads it again
        view["online"] = serde_json::json!([]);
    }
    info!(
        "{SCHEDULER_NAME} {}: {}, SMT {}; features {}",
        full_version(),
        topo.view(),
        if topo.smt { "on" } else { "off" },
        features::format(features)
    );
    info!("{}", kcompat::describe(&release, &have));

    // libbpf's verbosity is set by libbpf_log::capture(), not obj_builder.debug().
    let builder = BpfSkelBuilder::default();
    let open_opts = opts.libbpf.clone().into_bpf_open_opts();
    let mut skel = scx_ops_open!(builder, open_object, sis_ops, open_opts)
        .context("opening the BPF scheduler")?;
    skel.struct_ops.sis_ops_mut().exit_dump_len = opts.exit_dump_len;
    // No hotplug_seq check at enable (scx_utils sets it at open): a CPU hotplug during
    // the load would fail the attach, and one every second or so keeps failing every
    // reload. We follow hotplug ourselves (follow_hotplug compares sysfs with what was
    // written), so a change between the topology read and the attach is caught after.
    skel.struct_ops.sis_ops_mut().hotplug_seq = 0;
    // Let a wakeup to an idle CPU be queued to that CPU (TTWU_QUEUE), as fair
    // tasks' are, instead of the waker locking the remote runqueue; 0 on kernels
    // without the flag.
    skel.struct_ops.sis_ops_mut().flags |= *scx_utils::compat::SCX_OPS_ALLOW_QUEUED_WAKEUP;
    // 6.19+ deprecates ops.cpu_release: its re-enqueue moves to the sched_switch tracepoint
    if have[kcompat::REENQ_ANYWHERE] {
        skel.struct_ops.sis_ops_mut().cpu_release = std::ptr::null_mut();
        skel.progs.sis_sched_switch.set_autoload(true);
        // attached after the struct_ops (attach_sched_switch): its idle-CPU kfuncs are
        // a runtime error until the kernel has enabled built-in idle tracking
        skel.progs.sis_sched_switch.set_autoattach(false);
    }

    topo.write_maps(skel.maps.bss_data.as_mut().context("BPF bss")?);
    let ro = skel.maps.rodata_data.as_mut().context("BPF rodata")?;
    topo.write_rodata(ro);
    ro.slice_ns = opts
        .slice_us
        .map_or_else(|| eevdf::base_slice_ns(topo.online().len()), |us| us * 1000);
    ro.normalized_slice_ns = eevdf::NORMALIZED_BASE_SLICE_NS;
    ro.tick_ns = eevdf::tick_ns(&release);
    ro.requeue_preempted = !have[kcompat::REENQ_ANYWHERE];
    ro.test_verifier_reject = opts.test_verifier_reject;
    ro.test_runtime_error = opts.test_runtime_error;
    ro.quality = !opts.no_quality;
    let comm = opts.quality_comm.as_bytes();
    for (dst, &b) in ro.quality_comm.iter_mut().zip(comm) {
        *dst = b as _;
    }
    ro.quality_comm_len = comm.len() as u32;

    Ok((
        scx_ops_load!(skel, sis_ops, uei).map_err(verifier_hint)?,
        view,
    ))
}

/// `--verifier-report`: every program's verified instruction count, one line each.
pub(crate) fn verifier_report(opts: &Opts) -> Result<()> {
    use libbpf_rs::skel::Skel;
    let mut open_object = MaybeUninit::uninit();
    let (skel, _) = load_skel(
        opts,
        features::default_mask(),
        &mut topo::Ids::default(),
        &mut open_object,
    )?;
    // a program this kernel does not use (cpu_release or sched_switch) is not loaded
    for prog in skel.object().progs().filter(|p| p.autoload()) {
        let name = prog.name().to_string_lossy().to_string();
        let (_, _, insns) = prog_info(prog.as_fd());
        println!("verified_insns {} {insns}", name.trim_start_matches("sis_"));
    }
    Ok(())
}

/// (ns, runs) of a program from the kernel's BPF stats (on while BpfStats holds them).
fn prog_stats(fd: std::os::fd::BorrowedFd) -> (u64, u64) {
    let (ns, cnt, _) = prog_info(fd);
    (ns, cnt)
}

/// The kernel's statistics of one program: run ns, runs, verified instructions.
fn prog_info(fd: std::os::fd::BorrowedFd) -> (u64, u64, u32) {
    use std::os::fd::AsRawFd;
    // SAFETY: bpf_prog_info is plain old data; the kernel fills at most `len` bytes.
    let mut info: libbpf_rs::libbpf_sys::bpf_prog_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of_val(&info) as u32;
    let r = unsafe {
        libbpf_rs::libbpf_sys::bpf_prog_get_info_by_fd(fd.as_raw_fd(), &mut info, &mut len)
    };
    if r == 0 {
        (info.run_time_ns, info.run_cnt, info.verified_insns)
    } else {
        (0, 0, 0)
    }
}

/// A load error: print the tail of the verifier log libbpf captured, if any.
fn verifier_hint(e: anyhow::Error) -> anyhow::Error {
    // a packaging fault of the kernel build (Debian's 7.1 line), not of scx_sis: one line
    let bad = scx_utils::compat::malformed_scx_kfuncs();
    if let Some(first) = bad.first() {
        // the root cause first; libbpf's own error (its last line) after it
        let root = e.root_cause().to_string();
        return anyhow::anyhow!(
            "this kernel's BTF was generated with pahole older than 1.26: {} sched_ext kfuncs \
             ({first}, ...) have malformed prototypes, so no sched_ext scheduler loads on \
             this build; boot a kernel built with pahole 1.26 or newer ({})",
            bad.len(),
            root.lines().last().unwrap_or("")
        );
    }
    let tail = libbpf_log::verifier_tail(15);
    if tail.is_empty() {
        return e;
    }
    eprintln!("{SCHEDULER_NAME}: verifier log (last lines):");
    for l in &tail {
        eprintln!("  {l}");
    }
    e.context("the BPF verifier rejected scx_sis (log above; -v prints all of it)")
}

/// Removes the status file when the loader that wrote it returns.
pub(crate) struct StatusFile;

impl Drop for StatusFile {
    fn drop(&mut self) {
        guard::remove(STATUS_FILE);
    }
}
