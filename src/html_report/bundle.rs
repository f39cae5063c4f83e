//! The report's script: the page's view modules (web/plots.js, web/views/*.js) inlined into one
//! classic script. Each module's body runs in its own function scope and hands its exports to
//! the modules after it (`const { a, b } = (() => { …; return { a, b }; })();`), with its
//! `import` lines dropped and its `export` keywords removed, so the page and the report run
//! the same code. The modules follow three rules, checked here and by the unit tests: imports
//! are one line each (`import { a, b } from './x.js';`) of names an earlier module exports,
//! exports are declarations (`export function`, `export class`, `export const`), and no module
//! contains `</script`.

/// The modules in dependency order: (path under web/, source).
pub const MODULES: &[(&str, &str)] = &[
    ("plots.js", include_str!("../../web/plots.js")),
    ("views/colour.js", include_str!("../../web/views/colour.js")),
    ("views/canvas.js", include_str!("../../web/views/canvas.js")),
    ("views/model.js", include_str!("../../web/views/model.js")),
    ("views/checkviz.js", include_str!("../../web/views/checkviz.js")),
    ("views/reliability.js", include_str!("../../web/views/reliability.js")),
    ("views/lens.js", include_str!("../../web/views/lens.js")),
    ("views/shepard.js", include_str!("../../web/views/shepard.js")),
    ("views/coranking.js", include_str!("../../web/views/coranking.js")),
    ("views/compare.js", include_str!("../../web/views/compare.js")),
    ("views/mount.js", include_str!("../../web/views/mount.js")),
    ("views/report.js", include_str!("../../web/views/report.js")),
];

/// The views' stylesheet, inlined with the report's own.
pub const VIEWS_CSS: &str = include_str!("../../web/views/views.css");

/// What a module exports, or the line that breaks the rules.
fn exports(path: &str, src: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for line in src.lines() {
        let Some(rest) = line.strip_prefix("export ") else { continue };
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        let name = ["function ", "class ", "const ", "let "]
            .iter()
            .find_map(|kw| rest.strip_prefix(kw))
            .map(|r| r.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).next().unwrap_or(""))
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("{path}: an export that is not a declaration: {line}"))?;
        names.push(name.to_string());
    }
    Ok(names)
}

/// The names a module imports, from which module, or the line that breaks the rules.
fn imports(path: &str, src: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for line in src.lines().filter(|l| l.starts_with("import ")) {
        let bad = || format!("{path}: an import that is not `import {{ a, b }} from './x.js';`: {line}");
        let body = line.strip_prefix("import {").ok_or_else(bad)?;
        let (names, from) = body.split_once("} from '").ok_or_else(bad)?;
        let from = from.strip_suffix("';").ok_or_else(bad)?;
        // Resolve `./x.js` and `../x.js` against the importing module's folder (under web/).
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let target = if let Some(up) = from.strip_prefix("../") {
            up.to_string()
        } else if let Some(here) = from.strip_prefix("./") {
            if dir.is_empty() { here.to_string() } else { format!("{dir}/{here}") }
        } else {
            return Err(bad());
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name.contains(' ') {
                return Err(bad());
            }
            out.push((name.to_string(), target.clone()));
        }
    }
    Ok(out)
}

/// The modules as one script (without a call of `startReport`), or why they break the rules.
pub fn bundle() -> Result<String, String> {
    let mut out = String::new();
    let mut exported: Vec<(String, String)> = Vec::new();
    for (path, src) in MODULES {
        if src.contains("</script") {
            return Err(format!("{path}: contains </script"));
        }
        for (name, from) in imports(path, src)? {
            if !exported.iter().any(|(n, m)| *n == name && *m == from) {
                return Err(format!("{path}: imports {name} from {from}, which no earlier module exports"));
            }
        }
        let names = exports(path, src)?;
        let body: String = src
            .lines()
            .filter(|l| !l.starts_with("import "))
            .map(|l| l.strip_prefix("export ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        let list = names.join(", ");
        out.push_str(&format!(
            "// ---- {path}\nconst {{ {list} }} = (() => {{\n{body}\nreturn {{ {list} }};\n}})();\n"
        ));
        exported.extend(names.into_iter().map(|n| (n, path.to_string())));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_modules_follow_the_bundle_rules() {
        let b = bundle().unwrap();
        assert!(b.contains("startReport"));
        assert!(!b.contains("\nimport "), "no import line survives");
        assert!(!b.contains("\nexport "), "no export keyword survives");
    }

    #[test]
    fn a_broken_rule_is_named() {
        assert!(exports("x.js", "export default 3;").unwrap_err().contains("not a declaration"));
        assert!(imports("x.js", "import * as m from './y.js';").unwrap_err().contains("x.js"));
        assert_eq!(
            imports("views/a.js", "import { p, q } from '../plots.js';\nimport { r } from './b.js';").unwrap(),
            vec![("p".into(), "plots.js".into()), ("q".into(), "plots.js".into()), ("r".into(), "views/b.js".into())]
        );
    }
}
