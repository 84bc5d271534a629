//! `claimdag watch`: the history as it is written, one line per event (JSON lines with
//! `--json`), until interrupted or until its reader goes away.

use crate::error::{Error, Result};
use crate::model::HistoryLine;
use crate::verbs;
use crate::Store;
use std::io::Write;
use std::time::Duration;

/// How often a watch with nothing to print checks that its reader is still there.
const TICK: Duration = Duration::from_secs(1);

pub fn run(store: &Store, args: &verbs::Watch, json: bool) -> Result<i32> {
    let stdout = std::path::Path::new("<stdout>");
    let out = store.watch(args.since, TICK, |lines: &[HistoryLine]| {
        if lines.is_empty() {
            return Ok(reader_is_there());
        }
        let text = if json {
            let mut s = String::new();
            for l in lines {
                s.push_str(&serde_json::to_string(l).unwrap_or_default());
                s.push('\n');
            }
            s
        } else {
            verbs::text::log(lines)
        };
        let mut o = std::io::stdout().lock();
        match o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(Error::io(stdout, &e)),
        }
    });
    out.map(|()| 0)
}

/// False once standard output is a pipe whose reader closed it.
fn reader_is_there() -> bool {
    let mut p = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a zero timeout only asks.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    !(n > 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0)
}
