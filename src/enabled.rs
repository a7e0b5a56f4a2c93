// SPDX-License-Identifier: GPL-2.0-only
//! When scx_sis was not the enabled scheduler while this loader ran: from the
//! unregistration the loader saw to the next attach. Kept across restarts.
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Gaps {
    first: Option<Instant>,
    open: Option<Instant>,
    closed: Duration,
    restarts: u64,
}

static GAPS: Mutex<Gaps> = Mutex::new(Gaps {
    first: None,
    open: None,
    closed: Duration::ZERO,
    restarts: 0,
});

pub(crate) fn attached() {
    let mut g = GAPS.lock().unwrap();
    let now = Instant::now();
    g.first.get_or_insert(now);
    if let Some(s) = g.open.take() {
        g.closed += now - s;
    }
}

pub(crate) fn detached() {
    let mut g = GAPS.lock().unwrap();
    g.open = Some(Instant::now());
    g.restarts += 1;
}

/// (restarts, seconds not enabled, % of the time since the first attach enabled)
pub(crate) fn figures() -> (u64, f64, f64) {
    let g = GAPS.lock().unwrap();
    let now = Instant::now();
    let gap = g.closed + g.open.map_or(Duration::ZERO, |s| now - s);
    let life = g.first.map_or(Duration::ZERO, |f| now - f).as_secs_f64();
    let pct = if life > 0.0 {
        100.0 * (1.0 - gap.as_secs_f64() / life)
    } else {
        100.0
    };
    (g.restarts, gap.as_secs_f64(), pct)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_restart_counts_its_gap() {
        super::attached();
        std::thread::sleep(std::time::Duration::from_millis(40));
        assert_eq!(super::figures(), (0, 0.0, 100.0));
        super::detached();
        std::thread::sleep(std::time::Duration::from_millis(40));
        super::attached();
        let (restarts, gap, pct) = super::figures();
        assert_eq!(restarts, 1);
        assert!((0.04..0.5).contains(&gap), "gap {gap}");
        assert!(pct < 70.0 && pct > 0.0, "enabled {pct}%");
    }
}
