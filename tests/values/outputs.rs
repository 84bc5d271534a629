//! An output is kept as the JSON text it was given (white space aside): a number too long
//! for a float, trailing zeros and a negative zero come back as written, and an exponent
//! with its digits (`1e2` as `1e+2`, never `100.0`), in `show`, `log`, the `inputs` of a
//! dependent's claim and the replies of `verbs::call`, on both backends.

use crate::{both, common::actor};
use claimdag::verbs::{self, Ctx};
use serde_json::Value;

/// What `complete --output` is given, and the compact text every door gives back.
const GIVEN: &str = r#"{"id": 123456789012345678901234567890, "e": 1e2, "x": [1.0, -0, 2.50, -7]}"#;
const KEPT: &str = r#"{"id":123456789012345678901234567890,"e":1e+2,"x":[1.0,-0,2.50,-7]}"#;

#[test]
fn an_output_keeps_every_digit_in_show_log_and_inputs() {
    for t in both() {
        let p = t
            .ok(&["upsert", "--summary", "count the rows"])
            .trim()
            .to_string();
        let c = t
            .ok(&["upsert", "--summary", "use the count"])
            .trim()
            .to_string();
        t.ok(&["link", &p, &c]);
        t.ok(&["claim", &p, "--assignee", &actor(1)]);
        t.ok(&[
            "complete", &p, "--status", "done", "--gen", "2", "--output", GIVEN,
        ]);
        let shown = t.ok(&["--json", "show", &p]);
        assert!(shown.contains(&format!("\"output\":{KEPT}")), "{shown}");
        let text = t.ok(&["show", &p]);
        assert!(text.contains(KEPT), "{text}");
        let log = t.ok(&["--json", "log", &p]);
        assert!(log.contains(&format!("\"output\":{KEPT}")), "{log}");
        let log = t.ok(&["log", &p]);
        assert!(log.contains(&format!("output={KEPT}")), "{log}");
        let claimed = t.ok(&["--json", "claim", &c, "--assignee", &actor(2)]);
        assert!(
            claimed.contains(&format!("\"inputs\":{{\"{p}\":{KEPT}}}")),
            "{claimed}"
        );
    }
}

#[test]
fn an_output_keeps_every_digit_through_verbs_call() {
    for t in both() {
        let store = t.open();
        let cx = Ctx::new(&store, "").unwrap();
        let call = |verb: &str, args: &str| {
            let args: Value = serde_json::from_str(args).unwrap();
            verbs::call(&cx, verb, args).unwrap()
        };
        let p = call("upsert", r#"{"summary": "count the rows"}"#).json["id"]
            .as_str()
            .unwrap()
            .to_string();
        let c = call("upsert", r#"{"summary": "use the count"}"#).json["id"]
            .as_str()
            .unwrap()
            .to_string();
        call("link", &format!(r#"{{"parent": "{p}", "child": "{c}"}}"#));
        call(
            "claim",
            &format!(r#"{{"node": "{p}", "assignee": "name:w1"}}"#),
        );
        call(
            "complete",
            &format!(r#"{{"node": "{p}", "status": "done", "gen": 2, "output": {GIVEN}}}"#),
        );
        let shown = call("show", &format!(r#"{{"node": "{p}"}}"#)).json;
        assert_eq!(shown["output"].to_string(), KEPT);
        let log = call("log", &format!(r#"{{"node": "{p}"}}"#)).json;
        let done = log.as_array().unwrap().last().unwrap();
        assert_eq!(done["output"].to_string(), KEPT);
        let got = call(
            "claim",
            &format!(r#"{{"node": "{c}", "assignee": "name:w2"}}"#),
        )
        .json;
        assert_eq!(got["inputs"][&p].to_string(), KEPT);
        // And the reply as the CLI and MCP write it.
        assert!(serde_json::to_string(&got).unwrap().contains(KEPT), "{got}");
    }
}
