//! Workspaces: `--workspace W` and `$CLAIMDAG_WORKSPACE` namespace ids, lists, `next`,
//! `ready`, claims per actor and the other verbs, so that two workspaces sharing one store
//! never refuse each other.

use crate::common::{self, actor, parse_import, short, Store};
use serde_json::json;

fn listed(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.split("...").next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_workspace_is_part_of_the_id() {
    let s = Store::new();
    let plain = s.upsert("the same summary", &[]);
    let a = s.upsert_ws("alpha", "the same summary", &[]);
    let b_flag = s.upsert_ws("beta", "the same summary", &[]);
    let r = s.run_env(
        &["upsert", "--summary", "the same summary"],
        &[("CLAIMDAG_WORKSPACE", "beta")],
    );
    let b_env = r.ok().trim().to_string();
    assert_eq!(
        b_env, b_flag,
        "$CLAIMDAG_WORKSPACE and --workspace name one workspace"
    );
    let mut all = vec![plain.clone(), a.clone(), b_flag.clone()];
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 3, "same summary, three workspaces, three ids");
    assert_eq!(s.node(&a)["workspace"], "alpha");
    assert_eq!(s.node(&plain)["workspace"], "");
    // --workspace wins over the variable; an empty variable is the default workspace.
    let r = s.run_env(
        &[
            "--workspace",
            "alpha",
            "upsert",
            "--summary",
            "the same summary",
        ],
        &[("CLAIMDAG_WORKSPACE", "beta")],
    );
    assert_eq!(r.ok().trim(), a);
    let r = s.run_env(
        &["upsert", "--summary", "the same summary"],
        &[("CLAIMDAG_WORKSPACE", "")],
    );
    assert_eq!(r.ok().trim(), plain);
    // Upserting again in each workspace finds each node, not another's.
    assert_eq!(s.upsert_ws("alpha", "the same summary", &[]), a);
    assert_eq!(s.ok(&["list", "--all"]).lines().count(), 1);
    // A workspace name outside [A-Za-z0-9_.-] is refused.
    s.refused(
        &["--workspace", "no spaces", "upsert", "--summary", "x"],
        2,
        "workspace",
        "invalid_input",
    );
    s.refused_full(
        &["list"],
        &[("CLAIMDAG_WORKSPACE", "a/b")],
        None,
        2,
        "workspace",
        "invalid_input",
    );
}

#[test]
fn lists_next_and_ready_see_one_workspace() {
    let s = Store::new();
    let d = s.upsert("default work", &[]);
    let a1 = s.upsert_ws("alpha", "alpha work", &[]);
    let a2 = s.upsert_ws("alpha", "more alpha work", &["--estimate", "4"]);
    let b = s.upsert_ws("beta", "beta work", &[]);
    assert_eq!(listed(&s.ok(&["list"])), vec![d[..8].to_string()]);
    assert_eq!(
        listed(&s.ok_ws("alpha", &["list"])),
        vec![a1[..8].to_string(), a2[..8].to_string()]
    );
    let r = s.run_env(&["list", "--all"], &[("CLAIMDAG_WORKSPACE", "beta")]);
    assert_eq!(
        r.ok(),
        format!("{}  ready  task  gen=1  beta work\n", short(&b))
    );
    assert_eq!(s.ok(&["next"]).trim(), d);
    assert_eq!(s.ok_ws("alpha", &["next"]).trim(), a2);
    assert_eq!(s.ok_ws("beta", &["next"]).trim(), b);
    let r = s.run_ws("gamma", &["next"]);
    assert_eq!(r.code, Some(1), "an empty workspace has nothing next");
    assert_eq!(r.stdout, "");
    let ready = s.json(&["--workspace", "alpha", "ready"]);
    let ids: Vec<&str> = ready
        .as_array()
        .expect("array")
        .iter()
        .map(|p| p["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [a2.as_str(), a1.as_str()]);
    // claim-next takes from its own workspace only.
    let out = s.ok_ws("beta", &["claim-next", "--assignee", &actor(1)]);
    assert_eq!(out, format!("{b}  gen=2\n"));
    let r = s.run_ws("beta", &["claim-next", "--assignee", &actor(2)]);
    assert_eq!(r.code, Some(1));
    assert_eq!(s.node(&d)["status"], "todo");
}

#[test]
fn one_actor_may_hold_one_claim_in_each_workspace() {
    let s = Store::new();
    let a1 = s.upsert_ws("alpha", "first alpha task", &[]);
    let a2 = s.upsert_ws("alpha", "second alpha task", &[]);
    let b1 = s.upsert_ws("beta", "first beta task", &[]);
    let me = actor(7);
    assert_eq!(
        common::parse_gen(&s.ok_ws("alpha", &["claim", &a1, "--assignee", &me])),
        2
    );
    assert_eq!(
        common::parse_gen(&s.ok_ws("beta", &["claim", &b1, "--assignee", &me])),
        2
    );
    let r = s.run_ws("alpha", &["claim", &a2, "--assignee", &me]);
    r.refused(4, "already holds");
    let r = s.run_ws("alpha", &["claim-next", "--assignee", &me]);
    r.refused(4, "already holds");
    assert_eq!(s.node(&a2)["status"], "todo");
    assert_eq!(s.node(&a1)["holder"], me.as_str());
    assert_eq!(s.node(&b1)["holder"], me.as_str());
    let held = s.json(&["--workspace", "alpha", "list", "--holder", &me]);
    assert_eq!(held.as_array().map(|a| a.len()), Some(1));
}

#[test]
fn two_workspaces_in_one_store_never_refuse_each_other() {
    let s = Store::new();
    let plan = json!({"nodes": [
        {"key": "base", "summary": "shared base", "resources": ["src/"]},
        {"key": "top", "summary": "on top", "deps": ["base"]}
    ]});
    let text = plan.to_string().into_bytes();
    let ra = s.run_full(
        &["--workspace", "alpha", "import", "-"],
        &[],
        Some(text.clone()),
        common::LIMIT,
    );
    let rb = s.run_full(
        &["import", "-"],
        &[("CLAIMDAG_WORKSPACE", "beta")],
        Some(text),
        common::LIMIT,
    );
    let a = parse_import(ra.ok());
    let b = parse_import(rb.ok());
    for ((ia, _), (ib, _)) in a.iter().zip(&b) {
        assert_ne!(
            ia, ib,
            "the same plan in two workspaces makes distinct nodes"
        );
    }
    let me = actor(3);
    // The same actor, the same resource, the same summaries: both claims stand.
    let ga = common::parse_gen(&s.ok_ws("alpha", &["claim", &a[0].0, "--assignee", &me]));
    let gb = common::parse_gen(&s.ok_ws("beta", &["claim", &b[0].0, "--assignee", &me]));
    // Reclaiming every claim of alpha leaves beta's alone.
    let out = s.ok_ws("alpha", &["reclaim", "--lease", "0"]);
    assert_eq!(out, format!("{}  todo  gen={}\n", short(&a[0].0), ga + 1));
    assert_eq!(s.node(&b[0].0)["status"], "claimed");
    // Finishing beta's base readies beta's top only; archiving in beta leaves alpha alone.
    s.ok_ws(
        "beta",
        &[
            "complete",
            &b[0].0,
            "--status",
            "done",
            "--gen",
            &gb.to_string(),
        ],
    );
    assert_eq!(s.display(&b[1].0), "ready");
    assert_eq!(s.display(&a[1].0), "todo");
    let ga = common::parse_gen(&s.ok_ws("alpha", &["claim", &a[0].0, "--assignee", &me]));
    s.ok_ws(
        "alpha",
        &[
            "complete",
            &a[0].0,
            "--status",
            "done",
            "--gen",
            &ga.to_string(),
        ],
    );
    assert_eq!(s.ok_ws("beta", &["archive"]), "archived 1\n");
    assert_eq!(s.node(&a[0].0)["archived"], false);
    assert_eq!(s.node(&b[0].0)["archived"], true);
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

/// Links never cross workspaces, whichever path adds them: `link`, and `import` naming an
/// existing node of another workspace as a prerequisite, live or archived. So a cycle can
/// never close across two workspaces.
#[test]
fn no_path_links_across_workspaces() {
    let s = Store::new();
    let x = s.upsert_ws("b", "x", &[]);
    let plan_in_a = json!({"nodes": [{"key": "y", "summary": "y", "deps": [x]}]});
    let r = s.run_full(
        &["--workspace", "a", "import", "-"],
        &[],
        Some(plan_in_a.to_string().into_bytes()),
        std::time::Duration::from_secs(20),
    );
    r.refused(2, "across workspaces");
    assert!(
        r.stderr.contains("\"y\""),
        "names the plan key: {}",
        r.stderr
    );
    let y = s.upsert_ws("a", "y", &[]);
    s.refused(
        &["--workspace", "a", "link", &x, &y],
        2,
        "across workspaces",
        "invalid_input",
    );
    // The reverse import, which closed the cycle before, is refused as well.
    let plan_in_b = json!({"nodes": [{"key": "x", "summary": "x", "deps": [y]}]});
    let before = s.files();
    let r = s.run_full(
        &["--workspace", "b", "import", "-"],
        &[],
        Some(plan_in_b.to_string().into_bytes()),
        std::time::Duration::from_secs(20),
    );
    r.refused(2, "across workspaces");
    assert_eq!(before, s.files(), "a refused import writes nothing");
    assert_eq!(s.run(&["check"]).code, Some(0));
}

#[test]
fn a_finished_and_archived_node_stays_in_its_workspace() {
    let s = Store::new();
    let x = s.upsert_ws("b", "x", &[]);
    let y = s.upsert_ws("a", "y", &[]);
    let plan_in_a = json!({"nodes": [{"key": "y", "summary": "y", "deps": [x]}]});
    s.finish_ws("b", &x);
    s.ok_ws("b", &["archive", &x]);
    for fold in [false, true] {
        if fold {
            // A snapshot of the older format keeps only the status of an archived node.
            s.fold_journal();
        }
        s.refused(
            &["--workspace", "a", "link", &x, &y],
            2,
            "across workspaces",
            "invalid_input",
        );
        let r = s.run_full(
            &["--workspace", "a", "import", "-"],
            &[],
            Some(plan_in_a.to_string().into_bytes()),
            std::time::Duration::from_secs(20),
        );
        r.refused(2, "across workspaces");
    }
    assert_eq!(s.run(&["check"]).code, Some(0));
}
