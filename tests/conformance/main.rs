//! The conformance suite: the scenarios that define SPEC section 3 (every verb, every
//! refusal and its code, the fence, expiry, attempts, resources, workspaces, import,
//! archive), written once against `Store` and run for every backend: `embedded::*` on a
//! directory, `postgres::*` on a real PostgreSQL server (tests/common/pg.rs). A new backend
//! adds one `every_scenario!` line and inherits all of them.

mod actors;
mod bound;
mod decisions;
mod gates;
mod limits;
#[path = "../common/pg.rs"]
mod pg;
mod scenarios;
mod spaces;
mod talk;

use claimdag::Store;

/// A fresh, empty store of each backend.
pub struct Fresh {
    pub store: Store,
    _keep: Option<tempfile::TempDir>,
}

pub fn embedded() -> Fresh {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = Store::open(Some(&tmp.path().join("store"))).expect("open");
    Fresh {
        store,
        _keep: Some(tmp),
    }
}

/// A store in a fresh schema of the test PostgreSQL server.
pub fn postgres() -> Fresh {
    let url = pg::fresh_url();
    let store = Store::open(Some(std::path::Path::new(&url))).expect("open");
    Fresh { store, _keep: None }
}

/// A store in a fresh schema of the test PostgreSQL server, whose every request of the
/// fleet's hot path is left for the workspace's leader and decided by it (combined writes),
/// as under contention.
pub fn postgres_combined() -> Fresh {
    let fresh = postgres();
    fresh.store.always_combine();
    fresh
}

/// One `#[test]` per scenario for `backend`: `embedded::fence`, ...
macro_rules! scenarios {
    ($backend:ident: $($scenario:ident),* ; talk: $($talk:ident),* ;
     spaces: $($spaces:ident),* ; bound: $($bound:ident),* ;
     actors: $($actors:ident),* ; limits: $($limits:ident),* ;
     gates: $($gates:ident),* ; decisions: $($decisions:ident),* $(,)?) => {
        mod $backend {
            $(
                #[test]
                fn $scenario() {
                    let fresh = super::$backend();
                    crate::scenarios::$scenario(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $talk() {
                    let fresh = super::$backend();
                    crate::talk::$talk(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $spaces() {
                    let fresh = super::$backend();
                    crate::spaces::$spaces(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $bound() {
                    let fresh = super::$backend();
                    crate::bound::$bound(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $actors() {
                    let fresh = super::$backend();
                    crate::actors::$actors(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $limits() {
                    let fresh = super::$backend();
                    crate::limits::$limits(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $gates() {
                    let fresh = super::$backend();
                    crate::gates::$gates(&fresh.store);
                }
            )*
            $(
                #[test]
                fn $decisions() {
                    let fresh = super::$backend();
                    crate::decisions::$decisions(&fresh.store);
                }
            )*
        }
    };
}

/// Every scenario, for one backend.
macro_rules! every_scenario {
    ($backend:ident) => {
        scenarios!($backend:
            upsert_creates_once_and_merges,
            links_refuse_cycles_unknown_nodes_and_claimed_or_finished_children,
            claims_need_a_ready_node_at_its_generation,
            already_claimed_names_the_holder_and_generation,
            max_held_limits_claims_per_actor_and_names_them,
            overlapping_resources_exclude_each_other,
            the_attempt_cap_survives_hand_backs,
            the_fence_refuses_a_handed_back_holder,
            an_expired_claim_is_handed_back_by_the_next_write,
            reclaim_hands_back_quiet_claims,
            release_and_reopen_move_the_generation,
            complete_needs_a_terminal_status_and_the_holder,
            workspaces_never_refuse_each_other,
            import_is_atomic_and_idempotent,
            archive_and_unarchive_keep_the_generation,
            claim_next_picks_by_critical_path_priority_role_and_age,
            claim_next_resumes_an_actors_claim,
            every_transition_is_in_the_history,
            a_lead_acting_for_a_worker_is_recorded_beside_it,
            refused_calls_change_nothing,
            settings_are_one_write_each;
            talk:
            a_checkpoint_survives_hand_backs_and_reaches_the_next_holder,
            a_cancel_request_reaches_the_holder_and_moves_no_generation,
            outputs_flow_to_dependents_even_archived,
            complete_many_is_all_or_nothing,
            talk_limits_refuse_and_change_nothing,
            a_lease_carries_checkpoints_and_learns_a_cancel,
            claim_next_many_grants_in_pick_order_within_the_rules;
            spaces:
            a_write_hands_back_only_its_own_workspaces_expired_claims,
            batches_and_named_archives_stay_in_one_workspace;
            bound:
            a_bound_door_finds_no_node_of_another_workspace;
            actors:
            names_are_kept_once_with_the_last_note_given,
            names_reach_every_view_and_refusal_through_the_verbs,
            a_refused_call_keeps_no_name;
            limits:
            a_pool_grants_its_slots_in_a_batch_and_frees_them_at_hand_back,
            a_full_window_refuses_and_globs_share_by_mode;
            gates:
            a_gate_is_never_claimed_and_is_decided_once_at_its_generation,
            racing_approvers_land_one_decision,
            a_parked_node_is_never_granted_until_retried;
            decisions:
            an_epic_is_never_claimed_and_follows_its_children,
            a_deadline_is_recorded_once_and_can_ask_the_holder_to_stop,
            spend_past_the_budget_asks_the_holder_to_stop_in_that_renewal,
        );
    };
}

every_scenario!(embedded);
every_scenario!(postgres);
every_scenario!(postgres_combined);
