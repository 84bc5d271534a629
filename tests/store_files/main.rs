//! The store's files: crashes and SIGKILLs at every point, corruption, hostile files and
//! surroundings, compaction under writers, and `check`.

#[path = "../common/mod.rs"]
mod common;

mod check_live;
mod check_verb;
mod compaction_race;
mod compaction_threshold;
mod corruption;
mod crash;
mod crash_loop;
mod group_commit;
mod histories;
mod history_tail;
mod hostile;
mod layered;
mod powerloss;
mod read_ahead;
mod segments;
mod torture;
