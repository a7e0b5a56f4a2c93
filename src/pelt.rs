// SPDX-License-Identifier: GPL-2.0-only
//! `scx_sis --pelt PID`: a task's PELT signals as the running scx_sis keeps them
//! (src/bpf/pelt.bpf.h), printed as /proc/PID/sched prints fair.c's, so the two can be
//! set side by side. The loader pins the task storage map next to the ctl map; its
//! value starts with the task's `struct sis_sched_avg`, looked up by a pidfd.

use crate::bpf_intf::{self, sis_sched_avg};
use crate::control;
use anyhow::{bail, Context, Result};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

pub const TASKS_PIN: &str = "/sys/fs/bpf/scx_sis/tasks";

fn pidfd(pid: i32) -> Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        bail!("no task {pid}: {}", std::io::Error::last_os_error());
    }
    // SAFETY: the fd was just returned to us and is owned by nobody else
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// The lines of `/proc/PID/sched` that hold the same figures.
pub fn format(a: &sis_sched_avg) -> String {
    let cpu = if a.cpu == u32::MAX {
        "none".to_string()
    } else {
        a.cpu.to_string()
    };
    [
        ("se.avg.load_sum", a.load_sum.to_string()),
        ("se.avg.runnable_sum", a.runnable_sum.to_string()),
        ("se.avg.util_sum", a.util_sum.to_string()),
        ("se.avg.load_avg", a.load_avg.to_string()),
        ("se.avg.runnable_avg", a.runnable_avg.to_string()),
        ("se.avg.util_avg", a.util_avg.to_string()),
        ("se.avg.last_update_time", a.last_update_time.to_string()),
        ("cpu", cpu),
    ]
    .iter()
    .map(|(k, v)| format!("{k:<40} : {v:>20}\n"))
    .collect()
}

/// One read of the task's storage through its pidfd; None once the task has gone.
fn read(map: &MapHandle, pid: i32, fd: &OwnedFd) -> Result<Option<sis_sched_avg>> {
    let key = (std::os::fd::AsRawFd::as_raw_fd(fd)).to_ne_bytes();
    let Some(v) = map
        .lookup(&key, MapFlags::ANY)
        .with_context(|| format!("reading task {pid}'s storage"))?
    else {
        return Ok(None);
    };
    bpf_intf::from_bytes(&v)
        .context("task storage value too short")
        .map(Some)
}

/// Whether the process behind `fd` has exited: a pidfd reads as ready once all its
/// threads have, reaped or not (a zombie keeps its storage until it is reaped).
fn exited(fd: &OwnedFd) -> bool {
    let mut p = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(fd),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no wait
    unsafe { libc::poll(&mut p, 1, 0) == 1 }
}

/// `scx_sis --pelt PID`, once, or with `--monitor SECS` every SECS until the task exits
/// (one process, so that the reads disturb the task as little as `cat` does).
pub fn show(pid: i32, every: Option<Duration>) -> Result<()> {
    control::running_sis()?;
    let map = MapHandle::from_pinned_path(TASKS_PIN)
        .map_err(|e| control::pin_error(TASKS_PIN, "read the tasks of", e))?;
    // one pidfd for every read: a reused pid is not followed
    let fd = pidfd(pid)?;
    let mut out = std::io::stdout().lock();
    let mut first = true;
    loop {
        if !first && exited(&fd) {
            return Ok(());
        }
        let Some(a) = read(&map, pid, &fd)? else {
            if first {
                bail!("task {pid} is not scheduled by scx_sis");
            }
            return Ok(());
        };
        let sep = if first { "" } else { "\n" };
        first = false;
        // a closed pipe (`| head`) ends with 0 in main(), as --monitor's does
        write!(out, "{sep}{}", format(&a))
            .and_then(|_| out.flush())
            .context("writing to stdout")?;
        match every {
            Some(d) => std::thread::sleep(d),
            None => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    //! pelt.h, the arithmetic the BPF side runs, against PELT's definition computed in
    //! real numbers: y^32 = 1/2, contributions of 1024 ns units summed per 1024-unit
    //! period, each period decayed by y, averages over the series' maximum.
    use super::*;

    extern "C" {
        fn sis_pelt_decay_load(val: u64, n: u64) -> u64;
        fn sis_pelt_table(n: u32) -> u32;
        fn sis_pelt_update(
            now: u64,
            sa: *mut sis_sched_avg,
            load: u64,
            runnable: u64,
            running: i32,
            weight: u64,
        ) -> i32;
    }

    fn zero() -> sis_sched_avg {
        bpf_intf::from_bytes(&[0u8; std::mem::size_of::<sis_sched_avg>()]).unwrap()
    }

    fn y() -> f64 {
        0.5f64.powf(1.0 / 32.0)
    }

    /// The real-number signal: sums and the period position, as accumulate_sum() splits
    /// a segment (d1 closes the old period, full periods, d3 opens the new one).
    #[derive(Default, Clone, Copy)]
    struct Real {
        last: u64,
        pc: u64,
        load: f64,
        runnable: f64,
        util: f64,
    }

    impl Real {
        fn update(&mut self, now: u64, load: f64, runnable: f64, running: bool) {
            if now <= self.last {
                return;
            }
            let delta = (now - self.last) >> 10;
            if delta == 0 {
                return;
            }
            self.last += delta << 10;
            let (runnable, running) = if load == 0.0 {
                (0.0, false)
            } else {
                (runnable, running)
            };
            let total = delta + self.pc;
            let periods = total / 1024;
            let contrib = if periods == 0 {
                delta as f64
            } else {
                let yp = y().powi(periods as i32);
                let d1 = (1024 - self.pc) as f64 * yp;
                let full: f64 = (1..periods).map(|n| 1024.0 * y().powi(n as i32)).sum();
                self.load *= yp;
                self.runnable *= yp;
                self.util *= yp;
                d1 + full + (total % 1024) as f64
            };
            self.pc = total % 1024;
            self.load += load * contrib;
            self.runnable += runnable * contrib * 1024.0;
            if running {
                self.util += contrib * 1024.0;
            }
        }

        /// The averages: each sum over the series' maximum at this point of the period.
        fn avgs(&self, weight: f64) -> (f64, f64, f64) {
            let div = 1024.0 / (1.0 - y()) - 1024.0 + self.pc as f64;
            (
                weight * self.load / div,
                self.runnable / div,
                self.util / div,
            )
        }
    }

    fn near(int: u64, real: f64, what: &str) {
        let tol = 2.0 + real.abs() * 0.005;
        assert!(
            (int as f64 - real).abs() <= tol,
            "{what}: pelt.h {int}, real {real:.1}"
        );
    }

    /// Runs a task `on_us` of every `period_us` for `total_ms`, updating at each edge and
    /// every `tick_us`, and compares both sides at every update.
    fn periodic(on_us: u64, period_us: u64, total_ms: u64, weight: u64) -> sis_sched_avg {
        let mut sa = zero();
        let mut real = Real::default();
        let (mut t, end) = (0u64, total_ms * 1_000_000);
        let mut runs = true;
        let mut next_edge = on_us * 1000;
        while t < end {
            let next = (t + 250_000).min(next_edge);
            let (l, r) = if runs { (1, 1) } else { (0, 0) };
            // SAFETY: sa is a valid, exclusively borrowed sis_sched_avg
            let crossed = unsafe { sis_pelt_update(next, &mut sa, l, r, runs as i32, weight) };
            real.update(next, l as f64, r as f64, runs);
            if crossed != 0 {
                let (load, runnable, util) = real.avgs(weight as f64);
                near(sa.load_avg, load, "load_avg");
                near(sa.runnable_avg, runnable, "runnable_avg");
                near(sa.util_avg, util, "util_avg");
            }
            t = next;
            if t == next_edge {
                runs = !runs;
                next_edge += if runs { on_us } else { period_us - on_us } * 1000;
            }
        }
        sa
    }

    #[test]
    fn the_decay_table_is_sched_pelt_cs() {
        // sched-pelt.c: ((1UL << 32) - 1) * y^i, truncated
        for i in 0..32 {
            let want = ((u32::MAX as f64) * y().powi(i)) as u32;
            // SAFETY: plain function of integers
            assert_eq!(unsafe { sis_pelt_table(i as u32) }, want, "entry {i}");
        }
        // sched-pelt.c's LOAD_AVG_MAX: iterate max = max * y + 1024 in 32.32 fixed point
        let y_inv = ((u32::MAX as f64) * y()) as u64;
        let (mut max, mut last) = (1024u64, 0u64);
        while last != max {
            last = max;
            max = ((max * y_inv) >> 32) + 1024;
        }
        assert_eq!(max, 47742);
        // SAFETY: plain functions of integers
        unsafe {
            // y^0 is (2^32 - 1) / 2^32: one unit short, as in the kernel
            assert_eq!(sis_pelt_decay_load(1 << 20, 32), (1 << 19) - 1);
            assert_eq!(sis_pelt_decay_load(1 << 20, 64), (1 << 18) - 1);
            assert_eq!(sis_pelt_decay_load(u64::MAX, 32 * 64), 0);
            let y3 = (1u64 << 40) as f64 * y().powi(3);
            assert!((sis_pelt_decay_load(1 << 40, 3) as f64 - y3).abs() < 1e-6 * y3);
        }
    }

    #[test]
    fn an_always_running_task_saturates() {
        let a = periodic(1000, 1000, 2000, 1024);
        assert!((1015..=1024).contains(&a.util_avg), "util {}", a.util_avg);
        assert!((1015..=1024).contains(&a.load_avg), "load {}", a.load_avg);
    }

    #[test]
    fn a_periodic_task_tracks_its_duty_cycle() {
        // 25 % and 60 % duty, nice 0 and nice -5 (3121): the averages follow the real series
        let a = periodic(1000, 4000, 1000, 1024);
        assert!((200..=310).contains(&a.util_avg), "util {}", a.util_avg);
        let b = periodic(6000, 10000, 1000, 3121);
        assert!((500..=700).contains(&b.util_avg), "util {}", b.util_avg);
        assert!(b.load_avg > 3121 / 2, "load {}", b.load_avg);
    }

    #[test]
    fn sleep_halves_util_every_32_periods() {
        let mut a = periodic(1000, 1000, 1000, 1024);
        let start = a.util_avg;
        let t0 = a.last_update_time;
        // 32 periods of 1024 us asleep
        // SAFETY: a is a valid, exclusively borrowed sis_sched_avg
        unsafe { sis_pelt_update(t0 + 32 * 1024 * 1024, &mut a, 0, 0, 0, 1024) };
        let half = start as f64 / 2.0;
        assert!(
            (a.util_avg as f64 - half).abs() <= 2.0 + half * 0.01,
            "{start} -> {}",
            a.util_avg
        );
    }

    #[test]
    fn time_going_backwards_is_no_update() {
        let mut a = periodic(1000, 2000, 100, 1024);
        let b = a;
        // SAFETY: a is a valid, exclusively borrowed sis_sched_avg
        assert_eq!(
            unsafe { sis_pelt_update(b.last_update_time - 5000, &mut a, 1, 1, 1, 1024) },
            0
        );
        assert_eq!(a.util_sum, b.util_sum);
        assert_eq!(a.last_update_time, b.last_update_time - 5000);
    }

    #[test]
    fn the_printout_is_proc_pid_scheds() {
        let a = sis_sched_avg {
            util_avg: 512,
            cpu: 3,
            ..zero()
        };
        let s = format(&a);
        assert!(
            s.contains("se.avg.util_avg                          :                  512\n"),
            "{s}"
        );
        assert!(s.ends_with("cpu                                      :                    3\n"));
    }
}
