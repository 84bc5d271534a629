//! Power cuts. A run of commands writes a store under an LD_PRELOAD shim (powerloss/shim.c)
//! that records every write, truncate, rename, unlink and sync the store makes; after each
//! command returns, the harness marks the trace. Then, for every point of the trace, the
//! files a power cut there may leave (powerloss/model.rs: ext4 with data=ordered) are built
//! and opened: the store reads exactly as after the last command that returned, or as after
//! the one in flight (a write is all or nothing), nothing reads as `corrupt`, `check` is
//! clean, and the next claim's generation is above every one in the history.
//!
//! `CLAIMDAG_SOAK=1` (make soak): a longer run and many more drawn file states.

#[path = "powerloss/model.rs"]
mod model;

use super::crash::{history_of, state};
use crate::common::{self, actor, Rng, Store};
use model::{Call, Choice, Cut};
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The journal is compacted past this many bytes: several compactions in a short run.
const COMPACT_MIN_BYTES: &str = "1500";
/// The history file is sealed into a segment past this many bytes, and segments past the
/// last 10 events move to the archive (`history_keep`, set first): several seals and moves.
const SEGMENT_BYTES: &str = "600";

type Files = BTreeMap<String, Option<Vec<u8>>>;
type Reading = (BTreeMap<String, Value>, Vec<String>);

/// The shim, built once per test process with the C compiler.
fn shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/store_files/powerloss/shim.c");
        let out = std::env::temp_dir().join(format!("claimdag-shim-{}.so", std::process::id()));
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let st = std::process::Command::new(&cc)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
            .arg(&out)
            .arg(&src)
            .args(["-ldl", "-lpthread"])
            .status()
            .unwrap_or_else(|e| panic!("{cc}: {e} (the power-loss tests build a C shim)"));
        assert!(st.success(), "building {}", src.display());
        out
    })
}

/// A run of commands recorded under the shim, and what the store read after each.
struct Recording {
    calls: Vec<Call>,
    /// `readings[j]`: the store after the first `j` commands returned.
    readings: Vec<Reading>,
    commands: Vec<String>,
}

/// Runs `steps` on a new store under the shim.
fn record(steps: &[Step]) -> Recording {
    let s = Store::new();
    let trace = s.scratch().join("trace");
    let traced = |args: &[&str]| {
        let mut c = s.command(args);
        c.env("LD_PRELOAD", shim())
            .env("CLAIMDAG_TRACE", &trace)
            .env("CLAIMDAG_TRACE_DIR", &s.dir)
            .env("CLAIMDAG_COMPACT_MIN_BYTES", COMPACT_MIN_BYTES)
            .env("CLAIMDAG_SEGMENT_BYTES", SEGMENT_BYTES);
        common::run_bounded(c, "a traced command")
    };
    let mut made = Made::default();
    let mut readings = vec![(BTreeMap::new(), Vec::new())];
    let mut commands = Vec::new();
    for (j, step) in steps.iter().enumerate() {
        let args = step(&made);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = traced(&argv);
        assert!(r.signal.is_none(), "{argv:?}: {}", r.stderr);
        made.saw(&argv, &r.stdout);
        let mut t = std::fs::OpenOptions::new()
            .append(true)
            .open(&trace)
            .expect("the trace");
        std::io::Write::write_all(&mut t, format!("K {j}\n").as_bytes()).expect("mark");
        readings.push((state(&s), history(&s)));
        commands.push(argv.join(" "));
    }
    let archive = s.dir.join("history").join("archive");
    let moved = std::fs::read_dir(&archive).map_or(0, |d| d.count());
    assert!(moved > 0, "the run sealed and archived no segment");
    let bytes = std::fs::read(&trace).expect("the trace");
    Recording {
        calls: model::parse(&bytes, &s.dir),
        readings,
        commands,
    }
}

/// The ids the run made, in order, and the generation last granted on each.
#[derive(Default)]
struct Made {
    ids: Vec<String>,
    gens: HashMap<String, String>,
}

impl Made {
    fn saw(&mut self, argv: &[&str], out: &str) {
        let out = out.trim();
        if argv[0] == "upsert" {
            self.ids.push(out.to_string());
        } else if let Some(g) = out.strip_prefix("gen=") {
            self.gens.insert(argv[1].to_string(), g.to_string());
        }
    }
}

type Step = Box<dyn Fn(&Made) -> Vec<String>>;

/// A step on the `n`th node made: `{}` stands for its id, `{gen}` for its last grant.
fn on(n: usize, args: &[&str]) -> Step {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    Box::new(move |m| {
        let id = m.ids.get(n).cloned().unwrap_or_default();
        let gen = m.gens.get(&id).cloned().unwrap_or_else(|| "1".into());
        args.iter()
            .map(|a| a.replace("{}", &id).replace("{gen}", &gen))
            .collect()
    })
}

fn step(args: &[&str]) -> Step {
    on(0, args)
}

/// Every kind of write, refusals among them, with leases long enough not to run out while
/// the file states are checked. `rounds` repeats the claim cycle.
fn workload(rounds: usize) -> Vec<Step> {
    let (a, b) = (actor(1), actor(2));
    let mut steps: Vec<Step> = vec![
        Box::new(|_| ["config", "history_keep", "10"].map(String::from).to_vec()),
        Box::new(|_| {
            ["upsert", "--summary", "parse the manifest"]
                .map(String::from)
                .to_vec()
        }),
        Box::new(|_| {
            ["upsert", "--summary", "build the index"]
                .map(String::from)
                .to_vec()
        }),
        Box::new(|_| {
            ["upsert", "--summary", "query the index"]
                .map(String::from)
                .to_vec()
        }),
        Box::new(|m| vec!["link".into(), m.ids[1].clone(), m.ids[2].clone()]),
        Box::new(|_| ["config", "max_held", "3"].map(String::from).to_vec()),
    ];
    for r in 0..rounds {
        let summary = format!("round {r}");
        steps.push(Box::new(move |_| {
            vec!["upsert".into(), "--summary".into(), summary.clone()]
        }));
        steps.push(step(&["claim-next", "--assignee", &a, "--ttl", "1h"]));
        steps.push(on(0, &["claim", "{}", "--assignee", &b, "--ttl", "1h"]));
        steps.push(on(
            0,
            &[
                "renew", "{}", "--actor", &b, "--gen", "{gen}", "--ttl", "2h",
            ],
        ));
        // Refused: a stale generation changes nothing.
        steps.push(on(0, &["complete", "{}", "--status", "done", "--gen", "1"]));
        steps.push(on(0, &["release", "{}", "--actor", &b, "--gen", "{gen}"]));
        steps.push(on(1, &["claim", "{}", "--assignee", &a, "--ttl", "1h"]));
        steps.push(on(
            1,
            &["complete", "{}", "--status", "done", "--gen", "{gen}"],
        ));
        steps.push(on(1, &["reopen", "{}"]));
        steps.push(step(&["reclaim", "--lease", "0"]));
    }
    steps
}

/// The whole history (`log --all`: the archived segments too) without times.
fn history(s: &Store) -> Vec<String> {
    history_of(s, &["log", "--all"])
}

/// What a file state reads as, through the command: its reading, or what was wrong.
fn open_state(files: &Files) -> Result<Reading, String> {
    let s = Store::new();
    for (name, data) in files {
        let p = if name.is_empty() {
            s.dir.clone()
        } else {
            s.dir.join(name)
        };
        match data {
            None => std::fs::create_dir_all(&p).expect("directory"),
            Some(d) => std::fs::write(&p, d).expect("file"),
        }
    }
    let check = s.run(&["check"]);
    if check.code != Some(0) || !check.stdout.starts_with("ok") {
        return Err(format!("check: {} {}", check.stdout, check.stderr));
    }
    let listed = s.run(&["--json", "list", "--all"]);
    if listed.code != Some(0) {
        return Err(format!("list: {}", listed.stderr));
    }
    let reading = (state(&s), history(&s));
    next_generation_is_new(&s)?;
    Ok(reading)
}

/// A claim on the recovered store is granted a generation above every one its node had.
fn next_generation_is_new(s: &Store) -> Result<(), String> {
    let r = s.run(&[
        "--json",
        "claim-next",
        "--assignee",
        &actor(9),
        "--ttl",
        "1h",
    ]);
    if r.code == Some(1) {
        return Ok(()); // nothing ready
    }
    if r.code != Some(0) {
        return Err(format!("claim-next after the cut: {}", r.stderr));
    }
    let got = r.json();
    let node = got["id"].as_str().unwrap_or_default().to_string();
    let gen = got["generation"].as_u64().unwrap_or(0);
    // The grant is the node's last event; every event before it is at a lower generation
    // (a grant at `gen` before it would be the same generation granted twice).
    let log = s.json(&["log", &node]);
    let events = log.as_array().cloned().unwrap_or_default();
    let Some((last, earlier)) = events.split_last() else {
        return Err(format!(
            "claim-next granted {gen} on {node}, which has no history"
        ));
    };
    if last["verb"] != "claim" || last["generation"] != gen {
        return Err(format!(
            "the grant of {gen} is not {node}'s last event: {last}"
        ));
    }
    let before = earlier
        .iter()
        .filter_map(|e| e["generation"].as_u64())
        .max()
        .unwrap_or(0);
    if gen <= before {
        return Err(format!(
            "claim-next granted {gen}, the history already had {before}"
        ));
    }
    Ok(())
}

/// The ways to draw from one cut: the least and the most it may keep, every prefix of its
/// metadata with none and with all of its writes over, and `draws` random ones (sectors of
/// writes over kept or lost one by one among them).
fn choices(cut: &Cut, draws: usize, rng: &mut Rng) -> Vec<Choice> {
    let all = |n: usize| vec![None; n];
    let none = |n: usize| vec![Some(BTreeSet::new()); n];
    let mut out = Vec::new();
    for k in cut.must_meta..=cut.meta_len() {
        out.push(Choice {
            meta: k,
            overs: none(cut.over_len()),
        });
        out.push(Choice {
            meta: k,
            overs: all(cut.over_len()),
        });
    }
    for _ in 0..draws {
        let span = (cut.meta_len() - cut.must_meta + 1) as u64;
        let meta = cut.must_meta + rng.below(span) as usize;
        let overs = (0..cut.over_len())
            .map(|i| match rng.below(3) {
                _ if cut.must_over(i) => None,
                0 => None,
                1 => Some(BTreeSet::new()),
                _ => Some((0..cut.sectors(i)).filter(|_| rng.below(2) == 0).collect()),
            })
            .collect();
        out.push(Choice { meta, overs });
    }
    out
}

fn digest(files: &Files) -> u64 {
    let mut h = DefaultHasher::new();
    files.hash(&mut h);
    h.finish()
}

/// What [`explore`] went through: cut points, distinct file states opened, and the file
/// states with a rename not yet durable and with a new file's entry not yet durable.
struct Explored {
    cuts: usize,
    states: usize,
    renames_lost: usize,
    entries_lost: usize,
}

/// Every cut of `rec`, `draws` random file states each beside the fixed ones.
fn explore(rec: &Recording, draws: usize, rng: &mut Rng) -> Explored {
    let mut seen: HashMap<u64, Result<Reading, String>> = HashMap::new();
    let (mut renames_lost, mut entries_lost) = (0, 0);
    for at in 0..=rec.calls.len() {
        let cut = model::cut(&rec.calls, at);
        for choice in choices(&cut, draws, rng) {
            let (rename, entry) = cut.drops_entries(&choice);
            renames_lost += usize::from(rename);
            entries_lost += usize::from(entry);
            let files = cut.files(&choice);
            let read = seen
                .entry(digest(&files))
                .or_insert_with(|| open_state(&files));
            let j = cut.acked;
            let doing = rec.commands.get(j).map(String::as_str).unwrap_or("nothing");
            let what = format!(
                "a cut after trace record {at} (after {j} commands returned, during `{doing}`), \
                 keeping {} of {} metadata changes",
                choice.meta,
                cut.meta_len()
            );
            let got = read.as_ref().unwrap_or_else(|e| panic!("{what}: {e}"));
            let ok = *got == rec.readings[j] || rec.readings.get(j + 1) == Some(got);
            assert!(
                ok,
                "{what}: the store reads neither as after the last command that returned nor \
                 as after the one in flight\nnodes: {:?}\nhistory: {} events (expected {} or {})",
                got.0.keys().collect::<Vec<_>>(),
                got.1.len(),
                rec.readings[j].1.len(),
                rec.readings.get(j + 1).map_or(0, |r| r.1.len())
            );
        }
    }
    Explored {
        cuts: rec.calls.len() + 1,
        states: seen.len(),
        renames_lost,
        entries_lost,
    }
}

fn soak() -> bool {
    std::env::var_os("CLAIMDAG_SOAK").is_some()
}

#[test]
fn power_cuts_at_every_point_of_a_run_lose_nothing_acknowledged() {
    let (rounds, draws) = if soak() { (12, 40) } else { (3, 2) };
    let rec = record(&workload(rounds));
    let syncs = rec
        .calls
        .iter()
        .filter(|c| matches!(c, Call::Sync { .. }))
        .count();
    let renames = rec
        .calls
        .iter()
        .filter(|c| matches!(c, Call::Rename { .. }))
        .count();
    assert!(
        renames >= 3,
        "the run compacted too rarely to test renames: {renames}"
    );
    // Records go into space the journal reserved beforehand: writes over bytes the file
    // has, which a cut keeps or loses sector by sector.
    let overs = model::cut(&rec.calls, rec.calls.len()).records_over();
    assert!(
        overs >= rec.commands.len() / 2,
        "only {overs} records written over reserved space in {} commands",
        rec.commands.len()
    );
    let mut rng = Rng::from_env("power cuts");
    let e = explore(&rec, draws, &mut rng);
    eprintln!(
        "power cuts: {} commands, {} recorded calls ({syncs} syncs, {renames} renames, \
         {overs} records into reserved space), \
         {} cut points, {} distinct file states opened; {} states lost a rename, {} a new \
         file's entry",
        rec.commands.len(),
        rec.calls.len(),
        e.cuts,
        e.states,
        e.renames_lost,
        e.entries_lost
    );
    // The directory-entry cases were among them.
    assert!(
        e.renames_lost > 0,
        "no file state had a rename not yet durable"
    );
    assert!(
        e.entries_lost > 0,
        "no file state had a new file's entry not yet durable"
    );
}
