//! Helpers shared by the bench binaries: timing series, medians, result lines.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many samples a series takes: `max`, or fewer once `budget` is spent (at least 10).
pub struct Series {
    pub max: usize,
    pub budget: Duration,
}

impl Series {
    pub fn new(max: usize, budget: Duration) -> Series {
        Series { max, budget }
    }

    /// Runs `f(i)` for i = 0, 1, ... and returns each call's time in microseconds.
    pub fn run(&self, mut f: impl FnMut(usize)) -> Vec<f64> {
        let start = Instant::now();
        let mut out = Vec::with_capacity(self.max);
        for i in 0..self.max {
            let t = Instant::now();
            f(i);
            out.push(t.elapsed().as_secs_f64() * 1e6);
            if i + 1 >= 10 && start.elapsed() > self.budget {
                break;
            }
        }
        out
    }

    /// As [`Series::run`], calling `before(i)` untimed ahead of each timed `f(i)`.
    pub fn run_paired(&self, mut before: impl FnMut(usize), mut f: impl FnMut(usize)) -> Vec<f64> {
        let start = Instant::now();
        let mut out = Vec::with_capacity(self.max);
        for i in 0..self.max {
            before(i);
            let t = Instant::now();
            f(i);
            out.push(t.elapsed().as_secs_f64() * 1e6);
            if i + 1 >= 10 && start.elapsed() > self.budget {
                break;
            }
        }
        out
    }
}

/// `threads` threads each run `work(k)`, which drains nodes and returns how many it
/// finished, until `n` nodes are done: writes per second (two a node).
pub fn threaded_drain(threads: usize, n: usize, work: impl Fn(usize) -> u64 + Sync) -> f64 {
    let t = Instant::now();
    let total: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let work = &work;
                s.spawn(move || work(k))
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    });
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(total, n as u64, "every node drained once");
    2.0 * n as f64 / secs
}

pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The median over pairs of `writes[i] / floors[i] / per`: each write against the floor
/// sample taken just before it (`per` writes a sample).
pub fn pair_ratio(writes: &[f64], floors: &[f64], per: f64) -> f64 {
    median(
        writes
            .iter()
            .zip(floors)
            .map(|(w, f)| w / f / per)
            .collect(),
    )
}

/// One result line on stdout: `system<TAB>key<TAB>value<TAB>note`.
pub fn emit(system: &str, key: &str, value: f64, note: &str) {
    println!("{system}\t{key}\t{value:.3}\t{note}");
}

/// A result that could not be measured, with the reason.
pub fn missing(system: &str, key: &str, why: &str) {
    println!("{system}\t{key}\tNA\t{why}");
}

/// Progress, on stderr.
pub fn note(what: &str) {
    eprintln!("bench: {what}");
}

/// A size as the table labels it: 1k, 10k, 100k, 1M, or the number.
pub fn count(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// `QUICK=1` in the environment.
pub fn quick_env() -> bool {
    std::env::var("QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A field of /proc/self/status in KiB (VmRSS, VmHWM); 0 where there is none.
pub fn vm_kib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0)
}

/// One bare append of a 300-byte line and one `fdatasync` on a file of its own in the
/// measured directory: the physical floor of a durable write. [`Floor::with_overwrite`]
/// also measures, right after it, the same line written over blocks a file already has
/// (its size unchanged) and `fdatasync`: the floor of a journal that writes into its own
/// space.
pub struct Floor {
    file: std::fs::File,
    path: PathBuf,
    line: Vec<u8>,
    samples: Vec<f64>,
    over: Option<(std::fs::File, PathBuf, u64)>,
    over_samples: Vec<f64>,
}

/// The size of the file the overwrite floor writes within.
const OVER_LEN: u64 = 1 << 20;

impl Floor {
    pub fn new(dir: &Path) -> Floor {
        std::fs::create_dir_all(dir).expect("mkdir");
        let path = dir.join("floor.bin");
        let _ = std::fs::remove_file(&path);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("open floor file");
        let mut line = vec![b'x'; 299];
        line.push(b'\n');
        Floor {
            file,
            path,
            line,
            samples: Vec::new(),
            over: None,
            over_samples: Vec::new(),
        }
    }

    /// A floor that also measures a write over already-written blocks.
    pub fn with_overwrite(dir: &Path) -> Floor {
        let mut f = Floor::new(dir);
        let path = dir.join("floor-over.bin");
        std::fs::write(&path, vec![b'x'; OVER_LEN as usize]).expect("write the overwrite file");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open the overwrite file");
        file.sync_all().expect("fsync");
        f.over = Some((file, path, 0));
        f
    }

    pub fn once(&mut self) {
        let t = Instant::now();
        self.file.write_all(&self.line).expect("append");
        self.file.sync_data().expect("fdatasync");
        self.samples.push(t.elapsed().as_secs_f64() * 1e6);
        if let Some((file, _, at)) = &mut self.over {
            use std::os::unix::fs::FileExt;
            let t = Instant::now();
            file.write_all_at(&self.line, *at).expect("overwrite");
            file.sync_data().expect("fdatasync");
            self.over_samples.push(t.elapsed().as_secs_f64() * 1e6);
            *at = (*at + self.line.len() as u64) % (OVER_LEN - self.line.len() as u64);
        }
    }

    /// The overwrite samples so far, in µs, oldest first (none without `with_overwrite`).
    pub fn over_samples(&self) -> &[f64] {
        &self.over_samples
    }

    /// Every sample so far, in µs, oldest first.
    pub fn samples(&self) -> &[f64] {
        &self.samples
    }

    /// The median so far, and the file removed.
    pub fn done(self) -> f64 {
        let _ = std::fs::remove_file(&self.path);
        if let Some((_, path, _)) = &self.over {
            let _ = std::fs::remove_file(path);
        }
        median(self.samples)
    }
}
