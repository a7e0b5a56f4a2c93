// SPDX-License-Identifier: GPL-2.0-only
//! Boot a sched_ext kernel under qemu (TCG), run one command as root in it, and
//! bring back its output and exit status.

pub use crate::faults::{kernel_faults, relevant_lines};
use crate::initramfs::build_initramfs;
pub use crate::initramfs::{shell_join, which};
use crate::kernel::Kernel;
pub use crate::topology::*;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Exit codes for a guest that never reported its command's status.
pub const EXIT_PANIC: i32 = 250;
pub const EXIT_OOPS: i32 = 251;
pub const EXIT_HANG: i32 = 252;
pub const EXIT_TIMEOUT: i32 = 253;
pub const EXIT_NO_BOOT: i32 = 254;

/// How long a guest may stay silent before /init runs: a 64-vCPU guest boots in 12 s
/// on an idle host, 8 vCPUs in 5 s, and a quiet kernel prints next to nothing meanwhile.
/// Longer means qemu stalled; the suite then has time to boot it again.
const BOOT_ALLOWANCE: Duration = Duration::from_secs(90);

/// How long a guest that reported its command's status may take to power off. Its
/// results are complete then; a guest still up after this is killed, and says so.
const POWEROFF_ALLOWANCE: Duration = Duration::from_secs(30);

pub(crate) const MARK_UP: &str = "@@SCX_SIS_GUEST_UP@@";
pub(crate) const MARK_RC: &str = "@@SCX_SIS_RC=";
/// The console line after which a hung guest's NMI dump follows.
pub(crate) const HANG_DUMP: &str = "# hang dump: an NMI on every vCPU (unknown_nmi_panic)";

#[derive(Debug, Clone)]
pub struct VmConfig {
    /// Appended to the kernel command line.
    pub kernel_args: String,
    pub kernel: Kernel,
    pub topology: Topology,
    pub numa: bool,
    /// With `numa`: the SLIT distance between every two nodes (qemu's default is 20).
    pub numa_distance: Option<u32>,
    pub mem_mib: u32,
    /// Extra host binaries for the guest's PATH.
    pub with: Vec<PathBuf>,
    /// Host folders copied into the guest: (host, guest path).
    pub dirs: Vec<(PathBuf, String)>,
    /// Whole run limit.
    pub timeout: Duration,
    /// No console output for this long means the guest hung.
    pub idle_timeout: Duration,
    /// multi-threaded TCG (faster, racy on qemu 7.2; see docs/PLATFORM.md).
    pub tcg_multi: bool,
    /// qemu's -icount shift=0,sleep=off: guest time advances one ns per guest instruction
    /// (idle time skipped), so a BPF program's run-time ns count its instructions.
    pub icount: bool,
    /// Print the guest's console as it comes.
    pub stream: bool,
}

#[derive(Debug)]
pub struct VmResult {
    pub code: i32,
    pub output: String,
    /// Why the guest did not report a status, if it did not.
    pub failure: Option<String>,
    pub boot_secs: f64,
    pub total_secs: f64,
}

/// The CPU model and `-smp` for a topology. One LLC per socket: `-cpu max`, as every
/// guest had on qemu 7.2. Several: each module its own L3 through `smp-cache`, on an
/// Intel model (under TCG `-cpu max` is AMD, whose guests read the L3 split from
/// topoext, which TCG lacks; `max,vendor=GenuineIntel` does not boot) without AVX-512
/// (on Skylake-Server stress-ng's cpu stressor dies of SIGILL under TCG) and with
/// CPUID leaf 0x1f hidden (qemu 10.0.2 aborts encoding it for modules > 1); see
/// docs/PLATFORM.md.
fn cpu_args(t: &Topology) -> Vec<String> {
    let smp = |unit: &str| {
        format!(
            "{},sockets={},{unit}={},cores={},threads={}",
            t.nr_cpus(),
            t.sockets,
            t.llcs,
            t.cores,
            t.threads
        )
    };
    if t.llcs <= 1 {
        return vec!["-cpu".into(), "max".into(), "-smp".into(), smp("dies")];
    }
    [
        "-machine",
        "smp-cache.0.cache=l3,smp-cache.0.topology=module",
        "-cpu",
        "Skylake-Client,-hle,-rtm,-pcid,-tsc-deadline,-invpcid,-xsavec,full-cpuid-auto-level=off,level=0xd",
        "-smp",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([smp("modules")])
    .collect()
}

/// How the guest's CPUs are emulated, as headers and logs name it.
pub fn tcg_mode(cfg: &VmConfig) -> &'static str {
    tcg_mode_of(cfg.tcg_multi, cfg.icount)
}

fn tcg_mode_of(multi: bool, icount: bool) -> &'static str {
    match (multi, icount) {
        (true, _) => "thread=multi",
        (false, true) => "thread=single icount",
        (false, false) => "thread=single",
    }
}

/// The accelerator's arguments: TCG, and qemu's instruction counter where asked for.
fn accel_args(multi: bool, icount: bool) -> Vec<String> {
    let mut a = vec![
        "-accel".to_string(),
        format!("tcg,thread={}", if multi { "multi" } else { "single" }),
    ];
    if icount {
        a.extend(["-icount".into(), "shift=0,sleep=off".into()]);
    }
    a
}

fn qemu_args(cfg: &VmConfig, initrd: &Path, monitor: &Path) -> Vec<String> {
    let t = cfg.topology;
    let mut a = accel_args(cfg.tcg_multi, cfg.icount);
    a.extend(cpu_args(&t));
    if cfg.numa && t.sockets > 1 {
        let per = (cfg.mem_mib / t.sockets).max(256);
        a.push("-m".into());
        a.push(format!("{}M", per * t.sockets));
        let per_node = t.cpus_per_socket();
        for s in 0..t.sockets {
            a.push("-object".into());
            a.push(format!("memory-backend-ram,id=m{s},size={per}M"));
            a.push("-numa".into());
            a.push(format!(
                "node,nodeid={s},cpus={}-{},memdev=m{s}",
                s * per_node,
                (s + 1) * per_node - 1
            ));
        }
        for (src, dst) in (0..t.sockets).flat_map(|i| (0..t.sockets).map(move |j| (i, j))) {
            if let (Some(d), true) = (cfg.numa_distance, src != dst) {
                a.push("-numa".into());
                a.push(format!("dist,src={src},dst={dst},val={d}"));
            }
        }
    } else {
        a.push("-m".into());
        a.push(format!("{}M", cfg.mem_mib));
    }
    let append = format!(
        "console=ttyS0 rdinit=/init loglevel=5 panic=-1 oops=panic unknown_nmi_panic=1 panic_print=0x41 {}",
        cfg.kernel_args
    );
    let monitor = format!("unix:{},server=on,wait=off", monitor.display());
    a.extend(
        [
            "-kernel",
            &cfg.kernel.vmlinuz.to_string_lossy(),
            "-initrd",
            &initrd.to_string_lossy(),
            "-append",
            append.trim_end(),
            "-display",
            "none",
            "-serial",
            "stdio",
            "-monitor",
            &monitor,
            "-no-reboot",
            "-nodefaults",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a
}

/// Console lines kept for the caller but not streamed (bulky per-second JSON).
pub const QUIET_PREFIX: &str = "bench-mon:";

/// Boot the guest, run `cmd` (a shell command line) in it, and report.
pub fn run(cfg: &VmConfig, cmd: &str) -> Result<VmResult> {
    let qemu = which("qemu-system-x86_64")
        .context("qemu-system-x86_64 not found (apt-get install qemu-system-x86)")?;
    check_qemu_for(&cfg.topology)?;
    let work = tempdir("scx-sis-vm")?;
    let initrd = build_initramfs(cfg, cmd, &work)?;
    let monitor = work.join("monitor.sock");
    let start = Instant::now();
    let mut child = Command::new(qemu)
        .args(qemu_args(cfg, &initrd, &monitor))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting qemu")?;
    let (tx, rx) = mpsc::channel::<Option<String>>();
    let out = child.stdout.take().context("qemu stdout")?;
    let err = child.stderr.take().context("qemu stderr")?;
    let tx2 = tx.clone();
    std::thread::spawn(move || pump(out, tx));
    std::thread::spawn(move || pump(err, tx2));

    let mut lines: Vec<String> = Vec::new();
    let mut code = None;
    let mut failure = None;
    let mut boot_secs = 0.0;
    let mut up = false;
    let mut last = Instant::now();
    let mut open = 2;
    while open > 0 {
        let left = cfg.timeout.saturating_sub(start.elapsed());
        let idle = match (code, up) {
            (Some(_), _) => POWEROFF_ALLOWANCE,
            (None, true) => cfg.idle_timeout,
            (None, false) => BOOT_ALLOWANCE,
        };
        let wait = left.min(idle.saturating_sub(last.elapsed()));
        match rx.recv_timeout(wait) {
            Ok(Some(line)) => {
                last = Instant::now();
                let line = line.trim_end_matches('\r').to_string();
                if line.starts_with(MARK_UP) {
                    up = true;
                    boot_secs = start.elapsed().as_secs_f64();
                    continue;
                }
                if let Some(rest) = line.strip_prefix(MARK_RC) {
                    code = rest.trim_end_matches("@@").parse::<i32>().ok();
                    continue;
                }
                if cfg.stream && !line.starts_with(QUIET_PREFIX) {
                    println!("{line}");
                    let _ = std::io::stdout().flush();
                }
                let panic = line.contains("Kernel panic");
                let oops = line.contains("Oops:") || line.contains("BUG: kernel");
                lines.push(line);
                if code.is_none() && (panic || oops) {
                    failure = Some(if panic {
                        (EXIT_PANIC, "guest kernel panic".to_string())
                    } else {
                        (EXIT_OOPS, "guest kernel Oops".to_string())
                    });
                    // Give the console a moment to print the trace.
                    drain(&rx, &mut lines, Duration::from_secs(2), cfg.stream);
                    break;
                }
            }
            Ok(None) => open -= 1,
            Err(_) if code.is_some() => {
                let l = format!(
                    "# the guest reported status {} but did not power off in {}s; stopped",
                    code.unwrap_or_default(),
                    POWEROFF_ALLOWANCE.as_secs()
                );
                if cfg.stream {
                    println!("{l}");
                }
                lines.push(l);
                lines.extend(vcpu_states(&monitor, cfg.stream));
                break;
            }
            Err(_) => {
                failure = Some(if start.elapsed() >= cfg.timeout {
                    (EXIT_TIMEOUT, "guest run exceeded --timeout".to_string())
                } else if up {
                    let last_line = lines.last().cloned().unwrap_or_default();
                    let states = vcpu_states(&monitor, cfg.stream);
                    let why = format!(
                        "guest hung: no console output after boot; last line '{last_line:.120}'; {}",
                        states.last().map_or("", |s| s.trim_start_matches("# "))
                    );
                    lines.extend(states);
                    lines.extend(hang_dump(&monitor, &rx, cfg.stream));
                    (EXIT_HANG, why)
                } else {
                    lines.extend(vcpu_states(&monitor, cfg.stream));
                    (EXIT_NO_BOOT, "guest did not boot: no console output".into())
                });
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&work);
    let total_secs = start.elapsed().as_secs_f64();
    let output = lines.join("\n");
    let (code, failure) = match (code, failure) {
        (Some(c), None) => (c, None),
        (_, Some((c, why))) => (c, Some(why)),
        (None, None) if up => (
            EXIT_NO_BOOT,
            Some("guest stopped before the command finished".into()),
        ),
        (None, None) => (EXIT_NO_BOOT, Some("guest did not boot".into())),
    };
    Ok(VmResult {
        code,
        output,
        failure,
        boot_secs,
        total_secs,
    })
}

/// A hung or stalled guest's vCPUs from qemu's monitor (`info registers -a`, twice, 1 s apart):
/// each one's RIP and HLT, so that a log tells vCPUs spinning from vCPUs asleep.
fn vcpu_states(monitor: &Path, stream: bool) -> Vec<String> {
    (0..2)
        .map(|sample| {
            if sample > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            let line = match monitor_command(monitor, "info registers -a") {
                Ok(text) => format!("# vCPUs at the hang, sample {sample}: {}", vcpu_rips(&text)),
                Err(e) => format!("# vCPUs at the hang: qemu monitor: {e:#}"),
            };
            if stream {
                println!("{line}");
            }
            line
        })
        .collect()
}

/// What a hung guest's kernel says of itself: an NMI on every vCPU, which
/// `unknown_nmi_panic` turns into a panic that prints each CPU's backtrace and every
/// task's state and stack (`panic_print`), read for up to 60 s or until qemu exits.
fn hang_dump(monitor: &Path, rx: &mpsc::Receiver<Option<String>>, stream: bool) -> Vec<String> {
    let mut lines = vec![HANG_DUMP.to_string()];
    if let Err(e) = monitor_command(monitor, "nmi") {
        lines.push(format!("# no hang dump: qemu monitor: {e:#}"));
        return lines;
    }
    drain(rx, &mut lines, Duration::from_secs(60), stream);
    lines
}

/// One human monitor command's output (read until the monitor is quiet for 1 s).
fn monitor_command(monitor: &Path, cmd: &str) -> Result<String> {
    use std::io::Read;
    let mut s = std::os::unix::net::UnixStream::connect(monitor)
        .with_context(|| format!("connecting to {}", monitor.display()))?;
    s.set_read_timeout(Some(Duration::from_secs(1)))
        .context("setting a read timeout")?;
    writeln!(s, "{cmd}").context("writing to the monitor")?;
    let (mut text, mut buf) = (Vec::new(), [0u8; 8192]);
    while let Ok(n @ 1..) = s.read(&mut buf) {
        text.extend_from_slice(&buf[..n]);
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// `info registers -a` in one line: each CPU's RIP and HLT flag (`cpu0 ffffffff81000000
/// HLT=1, cpu1 ...`).
fn vcpu_rips(text: &str) -> String {
    let mut cpus = Vec::new();
    for l in text.lines().map(str::trim) {
        if let Some(n) = l.strip_prefix("CPU#") {
            cpus.push(format!("cpu{}", n.trim()));
        } else if let (Some(rip), Some(last)) = (l.strip_prefix("RIP="), cpus.last_mut()) {
            let hlt = l.split_whitespace().find(|f| f.starts_with("HLT="));
            let addr = rip.split_whitespace().next().unwrap_or("?");
            *last = format!("{last} {addr} {}", hlt.unwrap_or("HLT=?"));
        }
    }
    if cpus.is_empty() {
        "no CPU in the monitor's answer".into()
    } else {
        cpus.join(", ")
    }
}

fn pump(r: impl std::io::Read, tx: mpsc::Sender<Option<String>>) {
    let mut br = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match br.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let s = String::from_utf8_lossy(&buf)
                    .trim_end_matches('\n')
                    .to_string();
                if tx.send(Some(s)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(None);
}

fn drain(rx: &mpsc::Receiver<Option<String>>, lines: &mut Vec<String>, d: Duration, stream: bool) {
    let end = Instant::now() + d;
    while let Ok(Some(l)) = rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
        if stream && !l.starts_with(QUIET_PREFIX) {
            println!("{l}");
        }
        lines.push(l);
    }
}

pub fn tempdir(prefix: &str) -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for i in 0..1000 {
        let p = base.join(format!("{prefix}-{}-{i}", std::process::id()));
        if std::fs::create_dir(&p).is_ok() {
            return Ok(p);
        }
    }
    bail!("cannot create a temporary folder in {}", base.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcpu_rips_one_line() {
        let text = "info registers -a\r\n\r\nCPU#0\r\nRAX=0000000000000000 RBX=0\r\n\
            RIP=ffffffff81e3a1bf RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1\r\n\
            CPU#1\r\nRIP=ffffffff8110c2a0 RFL=00000082 [--S----] CPL=0 II=0 A20=1 SMM=0 HLT=0\r\n(qemu) ";
        assert_eq!(
            vcpu_rips(text),
            "cpu0 ffffffff81e3a1bf HLT=1, cpu1 ffffffff8110c2a0 HLT=0"
        );
        assert_eq!(vcpu_rips("(qemu) "), "no CPU in the monitor's answer");
    }

    #[test]
    fn kernel_faults_found_and_allowed() {
        let warn = "[ 3.1] WARNING: CPU: 2 PID: 1 at kernel/sched/ext.c:123 f+0x1\n[ 3.1] Modules:";
        assert_eq!(kernel_faults(warn).len(), 1);
        let eject = "sched_ext: BPF scheduler \"sis\" disabled (runtime error)\nsched_ext: sis: peek on non-existent DSQ 0x100ff";
        let f = kernel_faults(eject);
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("non-existent DSQ"));
        let deliberate = "sched_ext: BPF scheduler \"sis\" disabled (runtime error)\nsched_ext: sis: deliberate runtime error (--test-runtime-error)";
        assert!(kernel_faults(deliberate).is_empty());
        let stall = "rcu: INFO: rcu_preempt self-detected stall on CPU";
        assert_eq!(kernel_faults(stall).len(), 1);
        assert!(kernel_faults("qemu: warning: TCG doesn't support\nok x").is_empty());
        let old_op =
            "[ 7.2] ops->cpu_acquire/release() are deprecated, use sched_switch TP instead";
        assert_eq!(kernel_faults(old_op).len(), 1);
        let direct = "[ 9.1] sched_ext: sis: Writing directly to p->scx.slice/dsq_vtime is deprecated, use scx_bpf_task_set_slice/dsq_vtime()";
        assert_eq!(kernel_faults(direct).len(), 1);
    }

    #[test]
    fn topology_parses_and_rejects() {
        let t: Topology = "2:4:2".parse().unwrap();
        assert_eq!(t.nr_cpus(), 16);
        assert!("1:4".parse::<Topology>().is_err());
        let d: Topology = "2:2:4:2".parse().unwrap();
        assert_eq!((d.nr_cpus(), d.cpus_per_socket(), d.nr_llcs()), (32, 16, 4));
        assert_eq!(d.to_string(), "2:2:4:2");
        assert_eq!("1:4:2".parse::<Topology>().unwrap().to_string(), "1:4:2");
        assert!("0:4:2".parse::<Topology>().is_err());
        assert!("a:b:c".parse::<Topology>().is_err());
    }

    #[test]
    fn cpu_args_one_l3_per_module() {
        let one = cpu_args(&"1:4:2".parse().unwrap()).join(" ");
        assert_eq!(one, "-cpu max -smp 8,sockets=1,dies=1,cores=4,threads=2");
        let two = cpu_args(&"2:2:4:2".parse().unwrap()).join(" ");
        assert!(
            two.contains("smp-cache.0.cache=l3,smp-cache.0.topology=module")
                && two.contains("level=0xd")
                && two.ends_with("-smp 32,sockets=2,modules=2,cores=4,threads=2"),
            "{two}"
        );
    }

    /// --icount asks qemu for one ns per instruction and says so in every header.
    #[test]
    fn icount_is_asked_for_and_named() {
        let a = accel_args(false, true);
        assert_eq!(
            a,
            [
                "-accel",
                "tcg,thread=single",
                "-icount",
                "shift=0,sleep=off"
            ]
        );
        assert!(!accel_args(false, false).iter().any(|s| s == "-icount"));
        assert_eq!(accel_args(true, false)[1], "tcg,thread=multi");
        assert_eq!(tcg_mode_of(false, true), "thread=single icount");
        assert_eq!(tcg_mode_of(false, false), "thread=single");
        assert_eq!(tcg_mode_of(true, false), "thread=multi");
    }

    #[test]
    fn qemu_version_parsed() {
        let v = "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\nCopyright";
        assert_eq!(parse_qemu_version(v), Some((10, 0)));
        assert_eq!(
            parse_qemu_version("QEMU emulator version 7.2.22 (Debian)"),
            Some((7, 2))
        );
        assert!((7, 2) < QEMU_MIN_LLCS && (10, 0) >= QEMU_MIN_LLCS);
        assert_eq!(parse_qemu_version("no version here"), None);
    }
}
