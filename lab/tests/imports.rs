//! The workspace's one import-circle check: no two modules of a crate (files, or
//! folders) import each other, directly or around a loop. It reads every crate with
//! more than one source file (`ROOTS`), the Redis module's own workspace included.
//!
//! Each file is a node (its module path: `experiments/throughput.rs` is
//! `experiments::throughput`, `penetration/mod.rs` is `penetration`, `lib.rs` the crate
//! root). A file refers to another where its code (comments and strings left out) names
//! a path into that module: `crate::a::b::…`, `super::…`, `self::…`, a child module by
//! its bare name (`use child::Item`), or, in a binary (`main.rs`, `bin/*.rs`), the
//! crate's library by name. A path goes to the longest prefix of it that is a module.
//! Declaring a child (`mod x;`) is not a reference; re-exporting from it
//! (`pub use x::Item`) is.
//!
//! A module and the modules inside it may name each other: that is how a parent
//! declares and re-exports its children, and how a child reaches the crate root's
//! re-exports. Every other reference is lifted to the two siblings under the modules'
//! lowest common ancestor (`a::x` naming `b::y` is `a` naming `b`), and a circle is a
//! cycle among siblings: so a folder is a unit that the rest of its crate uses, and
//! never one that also uses what uses it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file relative to `src`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// `text` without comments, string and char literals (replaced by spaces), so that
/// only code is scanned.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'r' && b.get(i + 1).is_some_and(|&c| c == b'#' || c == b'"') {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            j += 1;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.push(' ');
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3; // 'x'
            out.push(' ');
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            while i < b.len() && b[i] != b'\'' || i == 0 {
                i += 1;
            }
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The identifiers of `s` joined by `::`, from its start: `a::b::{c, d}` → `a::b`.
fn path_at(s: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut rest = s;
    loop {
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        rest = &rest[ident.len()..];
        segments.push(ident);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    segments
}

/// For each byte of `code`, how many inline modules (`mod name { … }`) enclose it.
fn inline_module_depths(code: &str) -> Vec<usize> {
    let b = code.as_bytes();
    let mut depths = vec![0; b.len()];
    let mut braces = 0usize;
    let mut opened: Vec<usize> = Vec::new(); // the brace depth each inline module opened at
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if word_start && code[i..].starts_with("mod ") {
            let rest = code[i + 4..].trim_start();
            let name_len = rest
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .count();
            if rest[name_len..].trim_start().starts_with('{') {
                opened.push(braces);
            }
        }
        match b[i] {
            b'{' => braces += 1,
            b'}' => {
                braces = braces.saturating_sub(1);
                if opened.last() == Some(&braces) {
                    opened.pop();
                }
            }
            _ => {}
        }
        depths[i] = opened.len();
        i += 1;
    }
    depths
}

/// The modules `code` (of the module `here`, with child modules `children`) refers to.
fn references(
    code: &str,
    here: &str,
    children: &BTreeSet<String>,
    library: Option<&str>,
) -> BTreeSet<Vec<String>> {
    let here_path: Vec<String> = if here.is_empty() {
        Vec::new()
    } else {
        here.split("::").map(String::from).collect()
    };
    let mut found = BTreeSet::new();
    let bytes = code.as_bytes();
    let inline = inline_module_depths(code);
    for (i, _) in code.char_indices() {
        // A path starts at a word boundary.
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            continue;
        }
        if i > 1 && &code[i - 2..i] == "::" {
            continue;
        }
        let p = path_at(&code[i..]);
        if p.len() < 2 {
            // `use child::Item` needs two segments; anything shorter names no module.
            if !(p.len() == 1
                && children.contains(&p[0])
                && code[i..].starts_with(&format!("{}::", p[0])))
            {
                continue;
            }
        }
        let absolute: Vec<String> = match p[0].as_str() {
            "crate" => p[1..].to_vec(),
            name if library == Some(name) => p[1..].to_vec(),
            "self" => here_path
                .iter()
                .cloned()
                .chain(p[1..].iter().cloned())
                .collect(),
            "super" => {
                // Inside an inline module (`mod tests { … }`), the first `super`s lead
                // back to this file's module.
                let mut base = here_path.clone();
                let mut rest = &p[..];
                let mut inside = inline[i];
                while rest.first().is_some_and(|s| s == "super") {
                    if inside > 0 {
                        inside -= 1;
                    } else {
                        base.pop();
                    }
                    rest = &rest[1..];
                }
                base.into_iter().chain(rest.iter().cloned()).collect()
            }
            first if children.contains(first) => {
                here_path.iter().cloned().chain(p.iter().cloned()).collect()
            }
            _ => continue,
        };
        found.insert(absolute);
    }
    found
}

/// Each crate with more than one module, as the directory of its sources and the name
/// its binaries use for its library.
const ROOTS: [(&str, &str); 6] = [
    ("core/src", "linebloom"),
    ("lab/src", "linebloom_lab"),
    ("benches/src", "linebloom_benches"),
    ("lab/redis-client/src", "linebloom_redis_client"),
    ("lab/redis-module/src", "linebloom_redis"),
    ("lab/redis-testing/src", "linebloom_redis_testing"),
];

/// The references between the modules under `src` (a crate whose binaries call its
/// library `lib_name`), each as (from, to) module paths; the crate root is empty.
fn module_references(src: &Path, lib_name: &str) -> BTreeSet<(Vec<String>, Vec<String>)> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|f| (module_of(f.strip_prefix(src).unwrap()), f.clone()))
        .collect();
    let is_binary = |m: &str| m == "main" || m.starts_with("bin::");
    let split = |m: &str| -> Vec<String> {
        if m.is_empty() {
            Vec::new()
        } else {
            m.split("::").map(String::from).collect()
        }
    };
    let mut found = BTreeSet::new();
    for (module, file) in &modules {
        let binary = is_binary(module);
        let here = if binary { "" } else { module.as_str() };
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|m| !is_binary(m))
            .filter_map(|m| {
                let rest = if here.is_empty() {
                    Some(m.as_str())
                } else {
                    m.strip_prefix(&format!("{here}::"))
                }?;
                (!rest.contains("::") && !rest.is_empty()).then(|| rest.to_string())
            })
            .collect();
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let library = binary.then_some(lib_name);
        for path in references(&code, here, &children, library) {
            // The longest prefix of the path that is a module; the crate root otherwise.
            let target = (0..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|m| modules.contains_key(m) && !is_binary(m))
                .unwrap_or_default();
            if &target != module {
                found.insert((split(module), split(&target)));
            }
        }
    }
    found
}

/// The circles among siblings that `references` make (see the module docs), each as
/// the modules around it.
fn circles(references: &BTreeSet<(Vec<String>, Vec<String>)>) -> Vec<String> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in references {
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        if common == a.len() || common == b.len() {
            continue; // a module and one inside it
        }
        edges
            .entry(a[..=common].join("::"))
            .or_default()
            .insert(b[..=common].join("::"));
    }
    // Depth-first search for a cycle, reporting each one found.
    let mut cycles = Vec::new();
    let mut state: BTreeMap<&str, u8> = BTreeMap::new(); // 1 on the stack, 2 done
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
        cycles: &mut Vec<String>,
    ) {
        state.insert(m, 1);
        stack.push(m);
        for next in edges.get(m).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| *s == next).unwrap();
                    let mut cycle: Vec<&str> = stack[from..].to_vec();
                    cycle.push(next);
                    cycles.push(cycle.join(" -> "));
                }
                Some(_) => {}
                None => visit(next, edges, state, stack, cycles),
            }
        }
        stack.pop();
        state.insert(m, 2);
    }
    for m in edges.keys() {
        if !state.contains_key(m.as_str()) {
            visit(m, &edges, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    cycles
}

#[test]
fn no_crate_has_import_circles() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut found, mut read) = (Vec::new(), 0);
    for (root, lib_name) in ROOTS {
        let references = module_references(&workspace.join(root), lib_name);
        assert!(!references.is_empty(), "{root}: no reference read");
        read += references.len();
        found.extend(
            circles(&references)
                .into_iter()
                .map(|c| format!("{root}: {c}")),
        );
    }
    // The scanner reads the code: hundreds of references between modules.
    assert!(read > 300, "only {read} references read");
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The rule itself: a parent and its child may name each other, siblings may not, and a
/// reference between cousins counts as one between the siblings that hold them.
#[test]
fn circles_are_between_siblings() {
    let path = |m: &str| m.split("::").map(String::from).collect::<Vec<_>>();
    let refs = |pairs: &[(&str, &str)]| -> BTreeSet<_> {
        pairs.iter().map(|(a, b)| (path(a), path(b))).collect()
    };
    assert!(circles(&refs(&[("a", "a::x"), ("a::x", "a")])).is_empty());
    assert!(circles(&refs(&[("a::x", "b"), ("c", "a")])).is_empty());
    assert_eq!(
        circles(&refs(&[("a::x", "b::y"), ("b", "a::z")])),
        ["a -> b -> a"]
    );
    assert_eq!(
        circles(&refs(&[
            ("p::a", "p::b"),
            ("p::b::q", "p::c"),
            ("p::c", "p::a::r")
        ])),
        ["p::a -> p::b -> p::c -> p::a"]
    );
}

/// The scanner itself: comments and strings are not code, and each kind of path
/// resolves to its module.
#[test]
fn the_scanner_reads_paths_not_comments() {
    let code = code_only(
        "use crate::a::b::{C, d}; // crate::hidden::x\nlet s = \"crate::nope::y\"; super::e::F; child::G;\nmod tests { use super::h::I; }",
    );
    let children: BTreeSet<String> = ["child".to_string()].into();
    let refs = references(&code, "x::y", &children, None);
    let names: Vec<String> = refs.iter().map(|p| p.join("::")).collect();
    // `super` inside `mod tests` is this file's module, x::y.
    assert_eq!(
        names,
        ["a::b", "x::e::F", "x::y::child::G", "x::y::h::I"],
        "{code}"
    );
}
