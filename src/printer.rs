// SPDX-License-Identifier: GPL-2.0-only
//! The stats lines' output: their format choice and the thread that writes them.

use crate::stats::Output;
use crate::{Opts, SCHEDULER_NAME};
use log::warn;

impl Output {
    pub(crate) fn of(opts: &Opts) -> Self {
        if opts.json {
            Output::Json
        } else if opts.stats_detail {
            Output::Detail
        } else {
            Output::Line
        }
    }
}

/// The stats lines go to stdout from a thread of their own through a short queue, so
/// that a reader who is slow, gone (EPIPE) or stuck never holds up scheduling, the
/// stats socket or the answer to SIGINT/SIGTERM: a failed write stops the printing
/// with one line on stderr, a full queue drops intervals.
pub(crate) struct Printer {
    tx: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    dropped: u64,
}

impl Printer {
    pub(crate) fn new() -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        std::thread::spawn(move || {
            use std::io::Write;
            for buf in rx {
                let mut o = std::io::stdout().lock();
                if let Err(e) = o.write_all(&buf).and_then(|_| o.flush()) {
                    let _ = writeln!(
                        std::io::stderr(),
                        "{SCHEDULER_NAME}: stats output failed ({e}); printing stopped, scheduling goes on"
                    );
                    return;
                }
            }
        });
        Self {
            tx: Some(tx),
            dropped: 0,
        }
    }

    pub(crate) fn send(&mut self, buf: Vec<u8>) {
        use std::sync::mpsc::TrySendError;
        let Some(tx) = &self.tx else { return };
        match tx.try_send(buf) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped += 1;
                if self.dropped == 1 {
                    warn!("{SCHEDULER_NAME}: stats output is blocked; dropping intervals until it drains");
                }
            }
            Err(TrySendError::Disconnected(_)) => self.tx = None,
        }
    }
}
