//! Plans: `import` (keys, refs, archived prerequisites, dep kinds), `archive` and `unarchive`.

#[path = "../common/mod.rs"]
mod common;

mod archive_order;
mod archive_verbs;
mod import_archived_refs;
mod import_dep_both_kinds;
mod import_plan;
mod unarchive_refusals;
