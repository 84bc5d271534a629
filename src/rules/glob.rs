//! Path globs (`path:GLOB` resources, SPEC 13): gitignore-style patterns, always relative to
//! the repository root. `*` is any run of characters but `/`, `?` one character but `/`,
//! `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`) one character of a class (never `/`), `\c`
//! the character `c`; `**` as a whole segment is any number of directories (`**/x`,
//! `a/**/x`) or everything below (`a/**`). A glob claims every path it matches and
//! everything under such a path (a directory claims its contents), so `src` and `src/**`
//! claim the same files.
//!
//! Two globs overlap when some path is claimed by both. That is decided exactly, from the
//! two patterns: each is a small automaton over characters whose transitions are sets of
//! characters (a union of ranges, or its complement), and the two overlap when their
//! product reaches a pair of accepting states along transitions whose sets meet.

use crate::error::{Error, Result};

/// The longest glob, in bytes.
pub const MAX_GLOB_BYTES: usize = 512;

/// A set of characters: those in `ranges`, or with `negated` those outside them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Set {
    ranges: Vec<(char, char)>,
    negated: bool,
}

impl Set {
    fn one(c: char) -> Set {
        Set {
            ranges: vec![(c, c)],
            negated: false,
        }
    }

    /// Every character but `/`.
    fn not_slash() -> Set {
        Set {
            ranges: vec![('/', '/')],
            negated: true,
        }
    }

    /// Every character.
    fn any() -> Set {
        Set {
            ranges: Vec::new(),
            negated: true,
        }
    }

    fn has(&self, c: char) -> bool {
        c != '\0' && self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }

    /// Some character is in every one of `sets`. Each set is constant between the bounds
    /// of its ranges, so a character that starts each piece (a range's low end, the one
    /// after its high end, the first after NUL) stands for the whole piece.
    fn meet(sets: &[&Set]) -> Option<char> {
        let after = |c: char| (c as u32 + 1..=0x10FFFF).find_map(char::from_u32);
        // A letter first, so that a path found reads well.
        let mut candidates = vec!['a', '\u{1}'];
        for &(lo, hi) in sets.iter().flat_map(|s| &s.ranges) {
            candidates.push(lo);
            candidates.extend(after(hi));
        }
        candidates.into_iter().find(|&c| sets.iter().all(|s| s.has(c)))
    }
}

/// One step of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// One character of the set.
    One(Set),
    /// Any run of characters but `/` (`*`).
    Star,
    /// Nothing, or any run ending in `/` (`**/`, `/**/` after its first `/`).
    Dirs,
    /// Any run at all (a trailing `/**`, or `**` alone).
    Rest,
}

/// A parsed glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    tokens: Vec<Token>,
}

impl Glob {
    /// Parses `text` (the part after `path:`); what is wrong is `invalid_input` naming it.
    pub fn parse(text: &str) -> Result<Glob> {
        let bad = |why: &str| Error::invalid(format!("path glob {text:?}: {why}"));
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        if text.len() > MAX_GLOB_BYTES {
            return Err(bad(&format!("it is over {MAX_GLOB_BYTES} bytes")));
        }
        if text.starts_with('/') {
            return Err(bad("it is absolute: globs are relative to the repository root"));
        }
        if text.contains('\0') {
            return Err(bad("it holds a NUL character"));
        }
        let body = text.strip_suffix('/').unwrap_or(text);
        let segments: Vec<&str> = body.split('/').collect();
        if segments.iter().any(|s| s.is_empty()) {
            return Err(bad("it has an empty segment (`//`)"));
        }
        if segments.iter().any(|s| *s == ".." || *s == ".") {
            return Err(bad("it has a `.` or `..` segment"));
        }
        let mut tokens = Vec::new();
        let last = segments.len() - 1;
        for (k, seg) in segments.iter().enumerate() {
            if *seg == "**" {
                tokens.push(if k == last { Token::Rest } else { Token::Dirs });
                continue;
            }
            segment(seg, &mut tokens).map_err(|why| bad(&why))?;
            if k < last {
                tokens.push(Token::One(Set::one('/')));
            }
        }
        Ok(Glob { tokens })
    }

    /// `path` (repository-relative, `/`-separated) is claimed: matched, or under a match.
    pub fn covers(&self, path: &str) -> bool {
        let nfa = Nfa::of(self);
        let mut now = nfa.closure(vec![0]);
        for c in path.chars() {
            let next = now
                .iter()
                .flat_map(|&s| &nfa.edges[s])
                .filter(|(set, _)| set.has(c))
                .map(|&(_, to)| to)
                .collect();
            now = nfa.closure(next);
            if now.is_empty() {
                return false;
            }
        }
        now.iter().any(|&s| nfa.accepting(s))
    }

    /// Some path is claimed by both globs.
    pub fn overlaps(&self, other: &Glob) -> bool {
        self.common_path(other).is_some()
    }

    /// A shortest path both globs claim, if there is one. A path is not empty, has no
    /// empty segment and no `/` at either end: the search walks the two automatons and a
    /// third that reads only such paths (`after_slash`: at the start, or after a `/`),
    /// breadth first, each step on a character all three allow.
    pub fn common_path(&self, other: &Glob) -> Option<String> {
        type State = (usize, usize, bool);
        let (a, b) = (Nfa::of(self), Nfa::of(other));
        // Each state reached, with the state and character it was reached from.
        let mut from: std::collections::HashMap<State, Option<(State, char)>> = Default::default();
        let mut todo = std::collections::VecDeque::new();
        let pairs = |xs: Vec<usize>, ys: Vec<usize>, after_slash: bool| {
            let mut out = Vec::new();
            for &x in &xs {
                out.extend(ys.iter().map(|&y| (x, y, after_slash)));
            }
            out
        };
        for s in pairs(a.closure(vec![0]), b.closure(vec![0]), true) {
            from.insert(s, None);
            todo.push_back(s);
        }
        let (slash, not_slash) = (Set::one('/'), Set::not_slash());
        while let Some(s @ (x, y, after_slash)) = todo.pop_front() {
            if !after_slash && a.accepting(x) && b.accepting(y) {
                let mut path = Vec::new();
                let mut at = s;
                while let Some(Some((prev, c))) = from.get(&at) {
                    path.push(*c);
                    at = *prev;
                }
                return Some(path.into_iter().rev().collect());
            }
            for (sa, xa) in &a.edges[x] {
                for (sb, yb) in &b.edges[y] {
                    let steps = [
                        (!after_slash).then(|| Set::meet(&[sa, sb, &slash])).flatten(),
                        Set::meet(&[sa, sb, &not_slash]),
                    ];
                    for c in steps.into_iter().flatten() {
                        let next = pairs(a.closure(vec![*xa]), b.closure(vec![*yb]), c == '/');
                        for n in next {
                            if let std::collections::hash_map::Entry::Vacant(e) = from.entry(n) {
                                e.insert(Some((s, c)));
                                todo.push_back(n);
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

/// The tokens of one segment (no `/` in it) but `**`.
fn segment(seg: &str, out: &mut Vec<Token>) -> std::result::Result<(), String> {
    let mut chars = seg.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                out.push(Token::Star);
            }
            '?' => out.push(Token::One(Set::not_slash())),
            '\\' => match chars.next() {
                Some(e) => out.push(Token::One(Set::one(e))),
                None => return Err("it ends with a lone `\\`".into()),
            },
            '[' => out.push(Token::One(class(&mut chars)?)),
            c => out.push(Token::One(Set::one(c))),
        }
    }
    Ok(())
}

/// A `[...]` class, its `[` read: never `/`.
fn class(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> std::result::Result<Set, String> {
    let negated = matches!(chars.peek(), Some('!' | '^'));
    if negated {
        chars.next();
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = match chars.next() {
            None => return Err("a `[` class is not closed with `]`".into()),
            Some(']') if !first => break,
            Some('\\') => chars.next().ok_or("a class ends with a lone `\\`")?,
            Some(c) => c,
        };
        first = false;
        let hi = if chars.peek() == Some(&'-') {
            let mut ahead = chars.clone();
            ahead.next();
            match ahead.next() {
                Some(']') | None => c,
                Some(h) => {
                    chars.next();
                    chars.next();
                    if h < c {
                        return Err(format!("the class range {c}-{h} runs backwards"));
                    }
                    h
                }
            }
        } else {
            c
        };
        ranges.push((c, hi));
    }
    // A class never matches `/`: a negated one leaves it out with the others; a plain one
    // with `/` in a range matches the rest of that range.
    if negated {
        ranges.push(('/', '/'));
        return Ok(Set { ranges, negated });
    }
    let mut kept = Vec::new();
    for (lo, hi) in ranges {
        if lo <= '/' && '/' <= hi {
            if lo < '/' {
                kept.push((lo, '.'));
            }
            if hi > '/' {
                kept.push(('0', hi));
            }
        } else {
            kept.push((lo, hi));
        }
    }
    Ok(Set {
        ranges: kept,
        negated: false,
    })
}

/// A glob as an automaton: state `i` is before token `i`; the last state accepts, and from
/// it `/` then anything reaches the state `rest`, which accepts too (a match covers what is
/// under it).
struct Nfa {
    edges: Vec<Vec<(Set, usize)>>,
    eps: Vec<Vec<usize>>,
    end: usize,
    rest: usize,
}

impl Nfa {
    fn of(g: &Glob) -> Nfa {
        let n = g.tokens.len();
        // States 0..=n: before each token, and the end; n+1: under a match; n+2: inside a
        // `Dirs` run (after at least one character, before its closing `/`).
        let (end, rest) = (n, n + 1);
        let mut edges: Vec<Vec<(Set, usize)>> = vec![Vec::new(); n + 2];
        let mut eps: Vec<Vec<usize>> = vec![Vec::new(); n + 2];
        for (i, t) in g.tokens.iter().enumerate() {
            match t {
                Token::One(set) => edges[i].push((set.clone(), i + 1)),
                Token::Star => {
                    edges[i].push((Set::not_slash(), i));
                    eps[i].push(i + 1);
                }
                Token::Rest => {
                    edges[i].push((Set::any(), i));
                    eps[i].push(i + 1);
                }
                Token::Dirs => {
                    // Nothing, or anything then `/`: a state of its own for "inside".
                    eps[i].push(i + 1);
                    let inside = edges.len();
                    edges.push(vec![(Set::any(), inside), (Set::one('/'), i + 1)]);
                    eps.push(Vec::new());
                    edges[i].push((Set::any(), inside));
                    edges[i].push((Set::one('/'), i + 1));
                }
            }
        }
        edges[end].push((Set::one('/'), rest));
        edges[rest].push((Set::any(), rest));
        Nfa {
            edges,
            eps,
            end,
            rest,
        }
    }

    fn accepting(&self, s: usize) -> bool {
        s == self.end || s == self.rest
    }

    /// `from` and every state reached from it without reading a character.
    fn closure(&self, from: Vec<usize>) -> Vec<usize> {
        let mut all = from;
        let mut k = 0;
        while k < all.len() {
            for &t in &self.eps[all[k]] {
                if !all.contains(&t) {
                    all.push(t);
                }
            }
            k += 1;
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(t: &str) -> Glob {
        Glob::parse(t).unwrap()
    }

    #[test]
    fn globs_cover_what_gitignore_would_match_and_what_is_under_it() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("src/*.rs", &["src/a.rs", "src/b.rs/x"], &["src/x/a.rs", "a.rs", "src/a.rsx"]),
            ("src/**/*.rs", &["src/a.rs", "src/x/y/a.rs"], &["src/a.c", "lib/a.rs"]),
            ("**/Cargo.toml", &["Cargo.toml", "a/b/Cargo.toml"], &["a/Cargo.tomlx"]),
            ("docs/**", &["docs/a", "docs/x/y"], &["docsx", "doc"]),
            ("docs", &["docs", "docs/a/b"], &["docsx"]),
            ("docs/", &["docs", "docs/a"], &["docsx"]),
            ("a?c", &["abc", "a.c"], &["a/c", "ac"]),
            ("[!a-c]x", &["dx", "Zx"], &["ax", "/x", "bx"]),
            ("[a-c]x", &["ax", "cx"], &["dx"]),
            ("\\*x", &["*x"], &["ax"]),
            ("a/**/b", &["a/b", "a/x/b", "a/x/y/b"], &["ab", "a/xb"]),
        ];
        for (glob, yes, no) in cases {
            for p in *yes {
                assert!(g(glob).covers(p), "{glob} should cover {p}");
            }
            for p in *no {
                assert!(!g(glob).covers(p), "{glob} should not cover {p}");
            }
        }
    }

    #[test]
    fn overlap_is_decided_from_the_patterns() {
        let yes = [
            ("src/*.rs", "src/main.rs"),
            ("src/**", "src/a/b.rs"),
            ("**/*.rs", "docs/x.rs"),
            ("src", "src/**/*.toml"),
            ("a/*/c", "a/b/*"),
            ("[a-c]*", "b?"),
            ("[!a]x", "[!b]x"),
            ("*.rs", "main.*"),
        ];
        let no = [
            ("src/*.rs", "src/x/main.rs"),
            ("*.rs", "*.toml"),
            ("docs/**", "src/**"),
            ("[a-c]x", "[d-f]x"),
            ("a/*", "b/*"),
            ("?", "ab"),
            ("[!a]", "a/b"),
        ];
        for (a, b) in yes {
            assert!(g(a).overlaps(&g(b)) && g(b).overlaps(&g(a)), "{a} and {b} overlap");
        }
        for (a, b) in no {
            assert!(!g(a).overlaps(&g(b)) && !g(b).overlaps(&g(a)), "{a} and {b} do not");
        }
    }

    #[test]
    fn bad_globs_are_refused_naming_what_is_wrong() {
        for (t, says) in [
            ("", "empty"),
            ("/etc/passwd", "absolute"),
            ("a/../b", "`..`"),
            ("a//b", "empty segment"),
            ("[abc", "not closed"),
            ("[z-a]", "backwards"),
            ("a\\", "lone"),
        ] {
            let e = Glob::parse(t).unwrap_err().to_string();
            assert!(e.contains(says), "{t:?}: {e}");
        }
    }
}
