//! The random verbs a worker runs, one method each, and the odds of each.

use super::Worker;
use crate::common;
use crate::torture::{labels, summary, Success, POOL};
use serde_json::Value;

impl Worker<'_> {
    /// One random verb.
    pub(super) fn step(&mut self) {
        match self.rng.below(100) {
            0..=9 => self.upsert(),
            10..=13 => self.link(),
            14..=27 => self.claim_next(),
            28..=35 => self.claim(),
            36..=47 => self.renew(),
            48..=55 => self.release(),
            56..=71 => self.complete(),
            72..=73 => self.cancel(),
            74..=79 => self.reclaim(),
            80..=86 => self.reopen(),
            87..=89 => self.archive(),
            90..=92 => self.unarchive(),
            93..=95 => self.check(),
            96..=97 => self.show(),
            _ => self.list(),
        }
    }

    /// An upsert of a pool node, sometimes with a priority; every sixth carries labels.
    fn upsert(&mut self) {
        let i = self.rng.below(POOL as u64) as usize;
        let sum = summary(i);
        let labels = labels(i);
        let prio = self.rng.below(3).to_string();
        let mut args = vec!["upsert", "--summary", sum.as_str()];
        for l in &labels {
            args.push("--label");
            args.push(l);
        }
        if self.rng.below(3) == 0 {
            args.extend(["--priority", prio.as_str()]);
        }
        let k = Self::kill_log("upsert", Some(&self.ids[i]), None);
        if let Some((_, out, _, span)) = self.run(&args, &[0], k) {
            assert_eq!(out.trim(), self.ids[i], "upsert printed another id");
            self.successes
                .push((Success::Upsert(out.trim().to_string()), span));
        }
    }

    /// A link between two pool nodes, mostly forward; a backward one may close a cycle.
    fn link(&mut self) {
        let a = self.rng.below(POOL as u64) as usize;
        let b = self.rng.below(POOL as u64) as usize;
        // Mostly forward links (lower index first); some backward ones close cycles.
        let (pi, ci) = if self.rng.below(5) == 0 {
            (a.max(b), a.min(b))
        } else {
            (a.min(b), a.max(b))
        };
        let (p, c) = (self.ids[pi].clone(), self.ids[ci].clone());
        let soft = self.rng.below(3) == 0;
        let mut args = vec!["link", p.as_str(), c.as_str()];
        if soft {
            args.insert(1, "--soft");
        }
        let mut k = Self::kill_log("link", Some(&c), None);
        k.other = Some(p.clone());
        if let Some((code, _, err, span)) = self.run(&args, &[0, 2, 3, 4], k) {
            match code {
                0 => self.successes.push((Success::Link { p, c }, span)),
                2 => {
                    assert!(err.contains("cycle"), "{args:?}: {err}");
                    self.cycles.push((p, c));
                }
                _ => {}
            }
        }
    }

    /// `claim-next` with a long or a short lease.
    fn claim_next(&mut self) {
        let me = self.me.clone();
        let ttl = self.ttl();
        let args = ["claim-next", "--assignee", &me, "--ttl", ttl];
        let k = Self::kill_log("claim-next", None, None);
        if let Some((code, out, _, span)) = self.run(&args, &[0, 1], k) {
            if code == 0 {
                let id = out.split_whitespace().next().expect("id").to_string();
                let gen = common::parse_gen(&out);
                self.held.insert(id.clone(), gen);
                self.successes.push((Success::Grant { id, gen }, span));
            } else {
                assert_eq!(out, "", "claim-next with nothing ready printed");
            }
        }
    }

    /// `claim` of a pool node, half the time at a guessed `--gen`.
    fn claim(&mut self) {
        let me = self.me.clone();
        let id = self.node();
        let ttl = self.ttl();
        let gen = (self.rng.below(2) == 0).then(|| 1 + self.rng.below(6));
        let gs = gen.map(|g| g.to_string()).unwrap_or_default();
        let mut args = vec!["claim", id.as_str(), "--assignee", &me, "--ttl", ttl];
        if gen.is_some() {
            args.extend(["--gen", gs.as_str()]);
        }
        let k = Self::kill_log("claim", Some(&id), gen);
        if let Some((code, out, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
            if code == 0 {
                let g = common::parse_gen(&out);
                if let Some(given) = gen {
                    assert_eq!(g, given + 1, "claim --gen {given} granted {g}");
                }
                self.held.insert(id.clone(), g);
                self.successes.push((Success::Grant { id, gen: g }, span));
            }
        }
    }

    /// `renew` of a held (or a random) node, mostly with `--gen`.
    fn renew(&mut self) {
        let me = self.me.clone();
        let (id, g) = self.held_or_random();
        let with_gen = self.rng.below(10) != 0;
        let gs = g.to_string();
        let ttl = self.ttl();
        let mut args = vec!["renew", id.as_str(), "--actor", &me];
        if with_gen {
            args.extend(["--gen", gs.as_str()]);
        }
        if self.rng.below(2) == 0 {
            args.extend(["--ttl", ttl]);
        }
        let gen = with_gen.then_some(g);
        let k = Self::kill_log("renew", Some(&id), gen);
        if let Some((code, _, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
            if code == 0 {
                self.successes.push((Success::Renew { id, gen }, span));
            } else {
                self.held.remove(&id);
            }
        }
    }

    /// `release` of a held (or a random) node.
    fn release(&mut self) {
        let me = self.me.clone();
        let (id, g) = self.held_or_random();
        let gs = g.to_string();
        let args = ["release", id.as_str(), "--actor", &me, "--gen", &gs];
        let k = Self::kill_log("release", Some(&id), Some(g));
        if let Some((code, out, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
            self.held.remove(&id);
            if code == 0 {
                let ng = common::parse_gen(&out);
                assert_eq!(ng, g + 1, "release at {g} printed gen={ng}");
                self.successes
                    .push((Success::Release { id, gen: ng }, span));
            }
        }
    }

    /// `complete` of a held (or a random) node: done, failed or cancelled.
    fn complete(&mut self) {
        let me = self.me.clone();
        let (id, g) = self.held_or_random();
        let status = match self.rng.below(10) {
            0..=6 => "done",
            7..=8 => "failed",
            _ => "cancelled",
        };
        let gs = g.to_string();
        let args = [
            "complete",
            id.as_str(),
            "--status",
            status,
            "--gen",
            &gs,
            "--actor",
            &me,
        ];
        let mut k = Self::kill_log("complete", Some(&id), Some(g));
        k.other = Some(status.to_string());
        if let Some((code, _, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
            self.held.remove(&id);
            if code == 0 {
                let status = status.to_string();
                self.successes
                    .push((Success::Complete { id, gen: g, status }, span));
            }
        }
    }

    /// A cancel of a node without a claim, at a guessed generation.
    fn cancel(&mut self) {
        // Cancel a todo node without a claim, at a guessed generation.
        let id = self.node();
        let g = 1 + self.rng.below(6);
        let gs = g.to_string();
        let args = [
            "complete",
            id.as_str(),
            "--status",
            "cancelled",
            "--gen",
            &gs,
        ];
        let k = Self::kill_log("cancel", Some(&id), Some(g));
        if let Some((0, _, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
            self.successes.push((Success::Cancel { id, gen: g }, span));
        }
    }

    /// `reclaim`, with or without a `--lease`; logs every hand-back it printed.
    fn reclaim(&mut self) {
        let lease = ["0", "2s"][self.rng.below(2) as usize];
        let mut args = vec!["--json", "reclaim"];
        if self.rng.below(3) != 0 {
            args.extend(["--lease", lease]);
        }
        let k = Self::kill_log("reclaim", None, None);
        if let Some((_, out, _, span)) = self.run(&args, &[0], k) {
            let v: Value = serde_json::from_str(&out).expect("reclaim json");
            for h in v.as_array().expect("array") {
                let id = h["id"].as_str().expect("id").to_string();
                let gen = h["generation"].as_u64().expect("generation");
                self.successes.push((Success::HandedBack { id, gen }, span));
            }
        }
    }

    /// `reopen` of a pool node.
    fn reopen(&mut self) {
        let id = self.node();
        let k = Self::kill_log("reopen", Some(&id), None);
        if let Some((0, out, _, span)) = self.run(&["reopen", &id], &[0, 2, 3], k) {
            let gen = common::parse_gen(&out);
            self.successes.push((Success::Reopen { id, gen }, span));
        }
    }

    /// `archive` of a pool node.
    fn archive(&mut self) {
        let id = self.node();
        let k = Self::kill_log("archive", Some(&id), None);
        if let Some((0, out, _, span)) = self.run(&["archive", &id], &[0, 2, 3], k) {
            assert!(out.starts_with("archived "), "{out}");
            self.successes.push((Success::Archive(id), span));
        }
    }

    /// `unarchive` of a pool node.
    fn unarchive(&mut self) {
        let id = self.node();
        let k = Self::kill_log("unarchive", Some(&id), None);
        if let Some((0, _, _, span)) = self.run(&["unarchive", &id], &[0, 2, 3], k) {
            self.successes.push((Success::Unarchive(id), span));
        }
    }

    /// `check` while the other workers write.
    fn check(&mut self) {
        let k = Self::kill_log("read", None, None);
        if let Some((_, out, _, _)) = self.run(&["check"], &[0], k) {
            assert!(out.starts_with("ok"), "check while writers run: {out}");
        }
    }

    /// `show` of a pool node.
    fn show(&mut self) {
        let id = self.node();
        let k = Self::kill_log("read", None, None);
        self.run(&["show", &id], &[0, 3], k);
    }

    /// `list --all`.
    fn list(&mut self) {
        let k = Self::kill_log("read", None, None);
        self.run(&["list", "--all"], &[0], k);
    }
}
