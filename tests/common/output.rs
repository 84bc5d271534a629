//! Reading what the binary prints: ids, generations, `import` lines, actors as it names them.

/// The actor `printf '%032x' n` names.
pub fn actor(n: u64) -> String {
    format!("{n:032x}")
}

/// The first 8 characters of an id and `...`, as `list` prints it.
pub fn short(id: &str) -> String {
    format!("{}...", &id[..8])
}

/// True for 32 lowercase hex characters.
pub fn is_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// Reads `gen=<g>` (with or without an id before it).
pub fn parse_gen(out: &str) -> u64 {
    let g = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("gen="))
        .unwrap_or_else(|| panic!("no gen= in {out:?}"));
    g.parse()
        .unwrap_or_else(|_| panic!("bad generation in {out:?}"))
}

/// Parses `import` output: `<32 hex>  <key>` lines.
pub fn parse_import(out: &str) -> Vec<(String, String)> {
    out.lines()
        .map(|l| {
            let (id, key) = l
                .split_once("  ")
                .unwrap_or_else(|| panic!("import line {l:?} is not \"<id>  <key>\""));
            assert!(is_id(id), "import line {l:?} does not start with an id");
            (id.to_string(), key.to_string())
        })
        .collect()
}

/// The id printed for `key` in parsed import output.
pub fn id_of<'a>(pairs: &'a [(String, String)], key: &str) -> &'a str {
    pairs
        .iter()
        .find(|(_, k)| k == key)
        .map(|(id, _)| id.as_str())
        .unwrap_or_else(|| panic!("no key {key:?} in import output {pairs:?}"))
}
