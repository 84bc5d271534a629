//! The verbs through the real binary, one area a file: SPEC's list of verbs, links, the README
//! walkthrough, workspaces, roles, resources, `config` and `graph`.

#[path = "../common/mod.rs"]
mod common;

mod actor_names;
mod config_verb;
mod console_docs;
mod expired_claims;
mod fence_check;
mod graph_verb;
mod handover_doc;
mod limits;
mod links;
mod resources_claims;
mod resources_upsert;
mod role_word_refusals;
mod roles_picking;
mod serve_doc;
mod spec_verbs;
mod talk_verbs;
mod text_escapes;
mod tokens;
mod walkthrough;
mod workspaces;
