//! The journal file: its records, and folding them into the snapshot as a compaction does.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// The journal's header line: a journal of only this holds no record.
pub const JOURNAL_HEADER: &[u8] = b"claimdag-journal 1\n";

/// A journal file's bytes without the space reserved after its records (zeros).
pub fn journal_used(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    &bytes[..end]
}

/// The length of `dir/journal` without its reserve (0 when there is none).
pub fn journal_used_len(dir: &Path) -> u64 {
    std::fs::read(dir.join("journal")).map_or(0, |b| journal_used(&b).len() as u64)
}

/// The JSON of every record of a journal file (after its header).
pub fn journal_records(bytes: &[u8]) -> Vec<Value> {
    let bytes = journal_used(bytes);
    assert!(
        bytes.starts_with(JOURNAL_HEADER),
        "journal does not start with its header"
    );
    let mut out = Vec::new();
    for line in bytes[JOURNAL_HEADER.len()..].split(|&c| c == b'\n') {
        if line.is_empty() {
            continue;
        }
        // "#<len:8> <crc:8> <json>"
        assert!(
            line.len() > 19 && line[0] == b'#',
            "malformed journal record: {:?}",
            String::from_utf8_lossy(&line[..line.len().min(40)])
        );
        out.push(serde_json::from_slice(&line[19..]).expect("journal record JSON"));
    }
    out
}

/// See [`super::Store::fold_journal`].
pub fn fold_journal(dir: &Path) {
    let snap_path = dir.join("snapshot.json");
    let snap: Value =
        serde_json::from_slice(&std::fs::read(&snap_path).expect("read snapshot")).expect("JSON");
    let mut order: Vec<String> = Vec::new();
    let mut nodes: HashMap<String, Value> = HashMap::new();
    for n in snap["nodes"].as_array().expect("nodes").iter() {
        let id = n["id"].as_str().expect("id").to_string();
        order.push(id.clone());
        nodes.insert(id, n.clone());
    }
    let mut settings = snap["settings"].clone();
    let mut archived: serde_json::Map<String, Value> =
        snap["archived"].as_object().cloned().unwrap_or_default();
    let mut seq = snap["seq"].as_u64().expect("seq");
    let mut history = Vec::new();
    let mut archive = Vec::new();
    let journal = std::fs::read(dir.join("journal")).expect("read journal");
    for rec in journal_records(&journal) {
        let s = rec["seq"].as_u64().expect("record seq");
        assert_eq!(s, seq + 1, "journal records do not follow the snapshot");
        seq = s;
        for n in rec["nodes"].as_array().into_iter().flatten() {
            let id = n["id"].as_str().expect("id").to_string();
            if !nodes.contains_key(&id) {
                order.push(id.clone());
            }
            archived.remove(&id);
            nodes.insert(id, n.clone());
        }
        for n in rec["archived"].as_array().into_iter().flatten() {
            let id = n["id"].as_str().expect("id").to_string();
            nodes.remove(&id);
            order.retain(|x| *x != id);
            archived.insert(id, json!({"status": n["status"].clone()}));
            archive.push(json!({"seq": seq, "node": n}));
        }
        if !rec["settings"].is_null() {
            settings = rec["settings"].clone();
        }
        for (i, e) in rec["events"].as_array().into_iter().flatten().enumerate() {
            let mut line = serde_json::Map::new();
            line.insert("seq".into(), json!(seq));
            line.insert("i".into(), json!(i));
            for (k, v) in e.as_object().expect("event object") {
                line.insert(k.clone(), v.clone());
            }
            history.push(Value::Object(line));
        }
    }
    let new = json!({
        "format": 1,
        "seq": seq,
        "settings": settings,
        "archived": archived,
        "nodes": order.iter().map(|id| nodes[id].clone()).collect::<Vec<_>>(),
    });
    let append = |name: &str, lines: &[Value]| {
        if lines.is_empty() {
            return;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(name))
            .expect("open side file");
        for l in lines {
            writeln!(f, "{l}").expect("append side file");
        }
    };
    append("history.jsonl", &history);
    append("archive.jsonl", &archive);
    let mut bytes = serde_json::to_vec(&new).expect("serialize");
    bytes.push(b'\n');
    std::fs::write(&snap_path, bytes).expect("write snapshot");
    std::fs::write(dir.join("journal"), JOURNAL_HEADER).expect("cut journal");
}
