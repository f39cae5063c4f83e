//! The module graph of the library (`src/`) has no import cycle, between files or between the
//! modules (folders) that hold them, but for the allowances listed in `ALLOWED`; the modules of
//! `src/resources/pairs` import only those listed before them in the map of its `mod.rs`.
//!
//! The edges are the paths in the code that start with `super` or `crate`, in `use`
//! lines or written inline, resolved to the module that defines the item (an item re-exported
//! by a `mod.rs` is followed to its submodule). Comments and `#[cfg(test)]` modules are left
//! out: doc links are not imports, and tests may use any module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path from the crate root, e.g. `["resources", "pairs", "scans"]`.
type Module = Vec<String>;

struct Source {
    /// A `mod.rs` (its module is its folder).
    facade: bool,
    text: String,
}

/// Every `.rs` file of the library crate (`src/`, without the binary's `src/bin`), by module;
/// `lib.rs` is the crate root's facade.
fn read_tree() -> BTreeMap<Module, Source> {
    fn walk(dir: &Path, module: &Module, out: &mut BTreeMap<Module, Source>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).expect("a UTF-8 name").to_string();
            if path.is_dir() {
                if module.is_empty() && name == "bin" {
                    continue;
                }
                let mut m = module.clone();
                m.push(name);
                walk(&path, &m, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let (m, facade) = if stem == "mod" || (module.is_empty() && stem == "lib") {
                    (module.clone(), true)
                } else {
                    ([module.clone(), vec![stem.to_string()]].concat(), false)
                };
                out.insert(m, Source { facade, text });
            }
        }
    }
    let mut out = BTreeMap::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    walk(&dir, &Vec::new(), &mut out);
    assert!(out.len() > 50, "the sources under {} are read", dir.display());
    out
}

/// The code without comments and without `#[cfg(test)]` items.
fn code(text: &str) -> String {
    let no_comments: String = text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n");
    let mut out = String::new();
    let mut rest = no_comments.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // Skip the item: up to its `;` or the brace that closes its first block.
        let mut depth = 0;
        let mut end = rest.len();
        for (i, ch) in rest.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The paths starting with `super` or `crate`, expanded over `{…}` groups, as
/// segments (`super` kept as a segment).
fn paths(code: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts =
            |w: &str| bytes[i..].iter().take(w.len()).copied().eq(w.chars()) && (i == 0 || !ident(bytes[i - 1]));
        if starts("super::") || starts("crate::") {
            let (expanded, end) = expand(&bytes, i);
            out.extend(expanded);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// Parses the path at `at`: segments, then optionally a `{…}` group of sub-paths.
fn expand(s: &[char], at: usize) -> (Vec<Vec<String>>, usize) {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut segs = Vec::new();
    let mut i = at;
    loop {
        let start = i;
        while i < s.len() && ident(s[i]) {
            i += 1;
        }
        if i > start {
            segs.push(s[start..i].iter().collect::<String>());
        }
        if i + 1 < s.len() && s[i] == ':' && s[i + 1] == ':' {
            i += 2;
            while i < s.len() && s[i].is_whitespace() {
                i += 1;
            }
            if i < s.len() && s[i] == '{' {
                let mut out = Vec::new();
                i += 1;
                loop {
                    while i < s.len() && (s[i].is_whitespace() || s[i] == ',') {
                        i += 1;
                    }
                    if i >= s.len() || s[i] == '}' {
                        return (out, i + 1);
                    }
                    let (subs, end) = expand(s, i);
                    out.extend(subs.into_iter().map(|sub| [segs.clone(), sub].concat()));
                    // Skip an `as` rename or `*`.
                    i = end;
                    while i < s.len() && s[i] != ',' && s[i] != '}' {
                        i += 1;
                    }
                }
            }
            continue;
        }
        return (vec![segs], i);
    }
}

/// What each `mod.rs` re-exports: item name → the child module it comes from.
fn reexports(files: &BTreeMap<Module, Source>) -> BTreeMap<Module, BTreeMap<String, String>> {
    let mut out: BTreeMap<Module, BTreeMap<String, String>> = BTreeMap::new();
    for (m, src) in files.iter().filter(|(_, s)| s.facade) {
        for line in code(&src.text).split(';') {
            let line = line.trim();
            let Some(path) = line.strip_prefix("pub use ").or_else(|| line.strip_prefix("pub(crate) use ")) else {
                continue;
            };
            let chars: Vec<char> = path.chars().collect();
            for segs in expand(&chars, 0).0 {
                if let (Some(child), Some(item)) = (segs.first(), segs.last()) {
                    out.entry(m.clone()).or_default().insert(item.clone(), child.clone());
                }
            }
        }
    }
    out
}

/// The edges between the modules of `files` (edges leaving the tree are dropped).
fn edges(files: &BTreeMap<Module, Source>) -> BTreeMap<Module, BTreeSet<Module>> {
    let re = reexports(files);
    let is_module = |m: &Module| files.contains_key(m);
    // Follows `item` in `m` through re-exports to the module that defines it.
    let definer = |mut m: Module, item: &str| {
        while let Some(child) = re.get(&m).and_then(|r| r.get(item)) {
            m.push(child.clone());
            if !is_module(&m) {
                m.pop();
                break;
            }
        }
        m
    };
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, src) in files {
        let mut code = code(&src.text);
        if src.facade {
            // A folder's `mod` declarations and re-exports are not imports of its own code.
            code = code
                .split(';')
                .filter(|s| {
                    let t = s.trim();
                    !(t.starts_with("mod ")
                        || t.starts_with("pub mod ")
                        || t.starts_with("pub use ")
                        || t.starts_with("pub(crate) use "))
                        || t.contains("super")
                })
                .collect::<Vec<_>>()
                .join(";");
        }
        let targets = out.entry(m.clone()).or_default();
        for path in paths(&code) {
            let mut at: Module;
            let mut segs = path.as_slice();
            if segs.first().map(String::as_str) == Some("crate") {
                at = Vec::new();
                segs = &segs[1..];
            } else {
                // `super` from a file module is its folder; from a `mod.rs`, the folder above.
                at = m.clone();
                while segs.first().map(String::as_str) == Some("super") {
                    at.pop();
                    segs = &segs[1..];
                }
            }
            // Down through the named modules; the first other name is an item.
            let mut item = None;
            for s in segs {
                let mut next = at.clone();
                next.push(s.clone());
                if is_module(&next) {
                    at = next;
                } else {
                    item = Some(s.clone());
                    break;
                }
            }
            let target = match item {
                Some(i) => definer(at, &i),
                None => at,
            };
            if is_module(&target) && &target != m {
                targets.insert(target);
            }
        }
    }
    out
}

/// A cycle in the graph, as a list of modules, if there is one.
fn cycle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        n: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, u8>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for t in edges.get(n).into_iter().flatten() {
            match state.get(t).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|s| s == t).expect("on the stack");
                    return Some([&stack[from..], &[t.clone()][..]].concat());
                }
                0 => {
                    if let Some(c) = visit(t, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n)
            && let Some(c) = visit(n, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn show(c: &[Module]) -> String {
    c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" → ")
}

fn module(s: &str) -> Module {
    s.split("::").map(String::from).collect()
}

/// The edges between sibling modules that the edges between files make: a file of `a::x`
/// importing a file of `b::y` is an edge `a → b` (a module imports another when any of its files
/// does), at every level of the tree.
fn folder_edges(edges: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (a, targets) in edges {
        for b in targets {
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            // A folder's own files importing its facade, or the facade its files, is no edge
            // between siblings (the file graph holds those).
            if common < a.len() && common < b.len() {
                out.entry(a[..=common].to_vec()).or_default().insert(b[..=common].to_vec());
            }
        }
    }
    out
}

/// Edges between sibling modules that close a cycle and stay for now, each with why. The test
/// fails when one of them is gone, so the list stays true.
const ALLOWED: &[(&str, &str, &str)] = &[
    // The GPU kernels read the numerics posture (`Numerics`: Exact or Fast), defined in
    // `backend.rs` with the backend choice that starts the GPU. Moving `Numerics` to a module of
    // its own would end it; `backend.rs` belongs to the library's API (issue 12's API half).
    ("gpu", "backend", "the kernels read Numerics"),
];

#[test]
fn src_has_no_import_cycle() {
    let files = read_tree();
    let edges = edges(&files);
    // The parser sees the imports it must see (else an empty graph would pass).
    for (from, to) in [
        ("resources::pairs::scans", "resources::pairs::tie_groups"),
        ("resources::pairs::in_memory", "resources::pairs::pair_pass"),
        ("resources::pairs::pair_pass", "resources::density"),
        ("resources::external_sort", "resources::pairs::scans"),
        ("resources::pass", "resources::cross"),
        ("measures::registry", "measures::def"),
        ("measures::tnc", "measures::def"),
        ("measures::l_tnc", "measures::support::ch_btw"),
        ("data::npy", "data::sized"),
        ("certify::prepare", "certify::domain"),
        ("evaluate", "measures::def"),
    ] {
        assert!(
            edges.get(&module(from)).is_some_and(|t| t.contains(&module(to))),
            "{from} → {to} not found: {edges:?}"
        );
    }
    if let Some(c) = cycle(&edges) {
        panic!("import cycle between the files of src/: {}", show(&c));
    }
    let mut folders = folder_edges(&edges);
    assert!(folders[&module("evaluate")].contains(&module("measures")), "{folders:?}");
    for (from, to, why) in ALLOWED {
        let removed = folders.get_mut(&module(from)).is_some_and(|t| t.remove(&module(to)));
        assert!(removed, "the allowed edge {from} → {to} ({why}) is gone: remove it from ALLOWED");
    }
    if let Some(c) = cycle(&folders) {
        panic!("import cycle between the modules of src/: {}", show(&c));
    }
}

/// The check fails on a cycle, whether written in a `use` line, inline, through a `{…}` group
/// or through a folder's re-export.
#[test]
fn a_cycle_is_found() {
    let src = |facade: bool, text: &str| Source { facade, text: text.to_string() };
    let tree = |b: &str| {
        BTreeMap::from([
            (module("r"), src(true, "mod a;\nmod b;\nmod c;\npub use c::Thing;\n")),
            (module("r::a"), src(false, "use super::b::B;\n// use super::c::Thing; (a comment)\n")),
            (module("r::b"), src(false, b)),
            (
                module("r::c"),
                src(false, "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n"),
            ),
        ])
    };
    // Acyclic: a → b → c, and the comment and the test module add no edge.
    let ok = edges(&tree("use super::c::Thing;\n"));
    assert_eq!(ok[&module("r::a")], BTreeSet::from([module("r::b")]));
    assert_eq!(cycle(&ok), None);
    for b in ["use super::a::A;", "fn f() { super::a::f() }", "use super::{c::Thing, a::A};", "use crate::r::a;"] {
        let e = edges(&tree(b));
        assert!(cycle(&e).is_some(), "{b}: {e:?}");
    }
    // Through a re-export: c imports `super::Thing2`, which the folder takes from a.
    let mut t = tree("use super::c::Thing;\n");
    t.insert(module("r"), src(true, "mod a;\nmod b;\nmod c;\npub use a::Thing2;\n"));
    t.insert(module("r::c"), src(false, "use super::Thing2;\npub struct Thing;\n"));
    assert!(cycle(&edges(&t)).is_some());
}

/// Files that import each other's folders without a file cycle still make a module cycle.
#[test]
fn a_cycle_between_folders_is_found() {
    let src = |facade: bool, text: &str| Source { facade, text: text.to_string() };
    let tree = |z: &str| {
        BTreeMap::from([
            (module("r"), src(true, "mod a;\nmod b;\n")),
            (module("r::a"), src(true, "mod x;\nmod w;\n")),
            (module("r::a::x"), src(false, "use crate::r::b::y::Y;\n")),
            (module("r::a::w"), src(false, "pub struct W;\n")),
            (module("r::b"), src(true, "mod y;\nmod z;\n")),
            (module("r::b::y"), src(false, "pub struct Y;\n")),
            (module("r::b::z"), src(false, z)),
        ])
    };
    let ok = edges(&tree("pub struct Z;\n"));
    assert_eq!(cycle(&ok), None);
    assert_eq!(cycle(&folder_edges(&ok)), None);
    let e = edges(&tree("use crate::r::a::w::W;\n"));
    assert_eq!(cycle(&e), None, "no cycle between files");
    assert!(cycle(&folder_edges(&e)).is_some(), "a ↔ b: {:?}", folder_edges(&e));
}

/// The modules of `resources::pairs` import only modules listed before them in the map of
/// `src/resources/pairs/mod.rs`, so the map stays true.
#[test]
fn pairs_follow_their_documented_order() {
    let files = read_tree();
    let map = &files[&module("resources::pairs")].text;
    let order: Vec<String> = map
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect();
    let listed: BTreeSet<&String> = order.iter().collect();
    let on_disk: BTreeSet<&String> = files.keys().filter(|m| m.len() == 3 && m[1] == "pairs").map(|m| &m[2]).collect();
    assert_eq!(listed, on_disk, "the map in pairs/mod.rs lists every file of the folder");
    let rank =
        |m: &Module| (m.len() == 3 && m[1] == "pairs").then(|| order.iter().position(|o| *o == m[2]).expect("listed"));
    for (from, targets) in edges(&files) {
        for to in &targets {
            if let (Some(f), Some(t)) = (rank(&from), rank(to)) {
                assert!(t < f, "{} imports {}, listed after it in pairs/mod.rs", from.join("::"), to.join("::"));
            }
        }
    }
}
