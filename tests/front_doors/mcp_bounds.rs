//! `claimdag mcp --actor A --workspace W` over stdio, as an agent's client drives it (one
//! JSON-RPC message a line): the server is bound to W, so a node of another workspace
//! answers `not_found` with the very message of a node that does not exist, for every
//! tool that names a node, and the store does not change. The verb layer holds this for
//! every door (tests/conformance/bound.rs); this is the door an agent really uses.

use crate::common::{actor, Store};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// A running `claimdag mcp` and its lines.
struct Mcp {
    child: Child,
    input: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Mcp {
    fn start(s: &Store, ws: &str, actor: &str) -> Mcp {
        let mut c = s.command(&["--workspace", ws, "mcp", "--actor", actor]);
        c.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = c.spawn().expect("start claimdag mcp");
        let input = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut m = Mcp {
            child,
            input,
            lines,
            next_id: 0,
        };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "0"}});
        m.request("initialize", init);
        m.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.input, "{msg}").expect("write to the server");
        self.input.flush().unwrap();
    }

    /// One request and its answer's `result`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no answer to {method} within 60 s"));
            let msg: Value = serde_json::from_str(&line).expect("a JSON line");
            if msg["id"] == json!(id) {
                return msg["result"].clone();
            }
        }
    }

    /// A tool call: whether it was refused, and its structured content.
    fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        (r["isError"] == json!(true), r["structuredContent"].clone())
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_bound_mcp_server_finds_no_node_of_another_workspace() {
    let s = Store::new();
    let agent = actor(1);
    let mine = s.upsert_ws("w", "a node of the bound workspace", &[]);
    let todo = s.upsert_ws("other", "todo elsewhere", &[]);
    let held = s.upsert_ws("other", "held elsewhere by the agent", &[]);
    let claimed = s.ok_ws("other", &["claim", &held, "--assignee", &agent]);
    let gen: u64 = claimed.trim().trim_start_matches("gen=").parse().unwrap();
    let absent = "abababababababababababababababab";
    let before = s.files();

    let mut m = Mcp::start(&s, "w", &agent);
    for theirs in [&todo, &held] {
        for (theirs_text, absent_text) in [
            (theirs.to_string(), absent.to_string()),
            (
                format!("{}...", &theirs[..8]),
                format!("{}...", &absent[..8]),
            ),
        ] {
            for (tool, args) in [
                ("show", json!({"node": theirs_text})),
                ("log", json!({"node": theirs_text})),
                ("claim", json!({"node": theirs_text})),
                ("renew", json!({"node": theirs_text, "gen": gen})),
                (
                    "complete",
                    json!({"node": theirs_text, "status": "done", "gen": gen}),
                ),
                ("link", json!({"parent": theirs_text, "child": mine})),
                (
                    "upsert",
                    json!({"summary": "a child", "parent": theirs_text}),
                ),
            ] {
                let (refused, body) = m.call(tool, args.clone());
                assert!(refused, "{tool} {args}: {body}");
                assert_eq!(body["code"], "not_found", "{tool} {args}: {body}");
                let absent_args: Value =
                    serde_json::from_str(&args.to_string().replace(&theirs_text, &absent_text))
                        .unwrap();
                let (_, want) = m.call(tool, absent_args);
                let got = body.to_string().replace(theirs.as_str(), absent);
                let got = got.replace(&theirs[..8], &absent[..8]);
                assert_eq!(got, want.to_string(), "{tool} {args}");
            }
        }
    }
    assert_eq!(s.files(), before, "a refused call changed the store");
    // Its own workspace's node is there.
    let (refused, shown) = m.call("show", json!({"node": &mine[..8]}));
    assert!(!refused && shown["id"] == json!(mine), "{shown}");
}
