//! Reads what Rust needs to know about the CUDA sources without a preprocessor: the module a
//! `.cu` file becomes, whether it is a testing module, the `extern "C"` kernels it defines
//! (directly, in the headers it includes, or through a function-like macro such as
//! `MSM_CURVE_KERNELS(g1, ...)`), and its integer `#define`s; then writes them as Rust (typed
//! kernel handles and constants, one Rust module per layer and file).
//!
//! Shared by the build script (`build.rs`) and the crate's unit tests (`src/lib.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The line that marks a `.cu` file as a testing module: built and embedded only with the
/// `testing` feature, never in the table that ships.
pub const TESTING_MARKER: &str = "// kiln-kernels: testing";

/// One `kernels/<layer>/<file>.cu`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Source {
    /// `<layer>` when the file is named after its layer (`ntt/ntt.cu` → `ntt`), else
    /// `<layer>_<file>` (`msm/g1.cu` → `msm_g1`).
    pub module: String,
    pub layer: String,
    pub file: String,
    pub path: PathBuf,
    /// Marked with [`TESTING_MARKER`].
    pub testing: bool,
}

impl Source {
    pub fn new(layer: &str, file: &str, path: PathBuf, text: &str) -> Source {
        let module = if layer == file { layer.to_string() } else { format!("{layer}_{file}") };
        let testing = text.lines().any(|l| l.trim() == TESTING_MARKER);
        Source { module, layer: layer.into(), file: file.into(), path, testing }
    }
}

/// `text` without comments, with `\`-continued lines joined (line count kept for the rest).
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_string = !in_string;
                out.push(c);
            }
            '\\' if in_string => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '/' if !in_string && chars.peek() == Some(&'/') => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            '/' if !in_string && chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            '\\' if chars.peek() == Some(&'\n') => {
                chars.next();
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// A function-like macro.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Macro {
    pub params: Vec<String>,
    pub body: String,
}

/// What one cleaned file holds.
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    /// Object-like `#define NAME value`, in order.
    pub defines: Vec<(String, String)>,
    /// Function-like `#define NAME(params) body`.
    pub macros: BTreeMap<String, Macro>,
    /// `#include "path"` (quoted only: system headers are not ours).
    pub includes: Vec<String>,
    /// Every line that is not a preprocessor directive.
    pub code: String,
}

fn ident_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len())
}

pub fn parse(text: &str) -> Parsed {
    let mut p = Parsed::default();
    for line in clean(text).lines() {
        let t = line.trim_start();
        let Some(directive) = t.strip_prefix('#') else {
            p.code.push_str(line);
            p.code.push('\n');
            continue;
        };
        let directive = directive.trim_start();
        if let Some(rest) = directive.strip_prefix("include") {
            let rest = rest.trim();
            if let Some(path) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                p.includes.push(path.to_string());
            }
        } else if let Some(rest) = directive.strip_prefix("define") {
            let rest = rest.trim_start();
            let n = ident_len(rest);
            let (name, after) = rest.split_at(n);
            if let Some(params) = after.strip_prefix('(') {
                let Some(close) = params.find(')') else { continue };
                let params = params[..close].split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
                let body = params_body(after);
                p.macros.insert(name.to_string(), Macro { params: params.collect(), body });
            } else if !name.is_empty() {
                p.defines.push((name.to_string(), after.trim().to_string()));
            }
        }
    }
    p
}

fn params_body(after: &str) -> String {
    after.find(')').map(|i| after[i + 1..].to_string()).unwrap_or_default()
}

/// The names of the `extern "C" __global__` functions in `code`, as written: an identifier, or
/// identifiers joined by `##` (inside a macro body).
pub fn kernel_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("__global__") {
        let before = rest[..i].trim_end();
        rest = &rest[i + "__global__".len()..];
        if !before.ends_with("extern \"C\"") {
            continue;
        }
        let mut s = rest.trim_start();
        s = s.strip_prefix("void").unwrap_or(s).trim_start();
        if let Some(bounds) = s.strip_prefix("__launch_bounds__") {
            // Skip the balanced parentheses of the launch bounds.
            let mut depth = 0;
            let mut end = bounds.len();
            for (k, c) in bounds.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            s = bounds[end..].trim_start();
        }
        let mut name = String::new();
        loop {
            let n = ident_len(s);
            if n == 0 {
                break;
            }
            name.push_str(&s[..n]);
            s = s[n..].trim_start();
            match s.strip_prefix("##") {
                Some(r) => {
                    name.push_str("##");
                    s = r.trim_start();
                }
                None => break,
            }
        }
        if !name.is_empty() && s.starts_with('(') {
            names.push(name);
        }
    }
    names
}

/// `template` (identifiers joined by `##`) with each parameter replaced by its argument.
pub fn expand(template: &str, m: &Macro, args: &[String]) -> String {
    template
        .split("##")
        .map(|part| match m.params.iter().position(|p| p == part) {
            Some(i) => args.get(i).map(String::as_str).unwrap_or(part),
            None => part,
        })
        .collect()
}

/// The argument lists of every invocation `name(...)` in `code` (top-level commas split them).
pub fn invocations(code: &str, name: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find(name) {
        let start = at + i;
        at = start + name.len();
        let before_ok = code[..start].chars().next_back().is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        let after = code[at..].trim_start();
        if !before_ok || !after.starts_with('(') {
            continue;
        }
        let (mut depth, mut args, mut cur) = (0, Vec::new(), String::new());
        for c in after.chars() {
            match c {
                '(' => {
                    depth += 1;
                    if depth > 1 {
                        cur.push(c);
                    }
                }
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push(cur.trim().to_string());
                        break;
                    }
                    cur.push(c);
                }
                ',' if depth == 1 => args.push(std::mem::take(&mut cur).trim().to_string()),
                _ => cur.push(c),
            }
        }
        out.push(args);
    }
    out
}

/// The kernels a `.cu` file defines: its own and its included headers' (transitively,
/// resolved under `kernels_dir`), direct or through their function-like macros.
pub fn kernels_of(path: &Path, kernels_dir: &Path) -> Vec<String> {
    let mut files: Vec<Parsed> = Vec::new();
    let mut todo = vec![path.to_path_buf()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p.clone()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let parsed = parse(&text);
        todo.extend(parsed.includes.iter().map(|inc| kernels_dir.join(inc)));
        files.push(parsed);
    }
    let macros: BTreeMap<&String, &Macro> = files.iter().flat_map(|f| &f.macros).collect();
    let mut names = Vec::new();
    for f in &files {
        names.extend(kernel_names(&f.code).into_iter().filter(|n| !n.contains("##")));
        for (name, m) in &macros {
            let templates = kernel_names(&m.body);
            if templates.is_empty() {
                continue;
            }
            for args in invocations(&f.code, name) {
                names.extend(templates.iter().map(|t| expand(t, m, &args)));
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// The Rust value of a `#define`'s value: integer literals, names of constants already known
/// (`known`: C name → Rust name) and `( ) + - * / << >> | &`; `None` for anything else.
pub fn rust_value(value: &str, known: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::new();
    let mut s = value.trim();
    if s.is_empty() {
        return None;
    }
    while !s.is_empty() {
        let c = s.chars().next()?;
        if c.is_whitespace() {
            s = s.trim_start();
            out.push(' ');
        } else if c.is_ascii_digit() {
            let n = ident_len(s);
            let lit = s[..n].trim_end_matches(['u', 'U', 'l', 'L']);
            let ok = match lit.strip_prefix("0x").or_else(|| lit.strip_prefix("0X")) {
                Some(hex) => !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()),
                None => lit.chars().all(|c| c.is_ascii_digit()),
            };
            if !ok {
                return None;
            }
            out.push_str(lit);
            s = &s[n..];
        } else if c.is_ascii_alphabetic() || c == '_' {
            let n = ident_len(s);
            out.push_str(known.get(&s[..n])?);
            s = &s[n..];
        } else if let Some(op) =
            ["<<", ">>", "(", ")", "+", "-", "*", "/", "|", "&"].iter().find(|op| s.starts_with(**op))
        {
            out.push_str(op);
            s = &s[op.len()..];
        } else {
            return None;
        }
    }
    Some(out.trim().to_string())
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false", "fn", "for", "gen",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct",
    "trait", "true", "try", "type", "unsafe", "use", "where", "while", "yield", "abstract", "become", "box", "do",
    "final", "macro", "override", "priv", "typeof", "unsized", "virtual",
];

/// `name` as a Rust module name (a raw identifier where it is a keyword).
pub fn rust_mod(name: &str) -> String {
    if KEYWORDS.contains(&name) { format!("r#{name}") } else { name.to_string() }
}

/// The Rust name of a C name in a layer (and file): upper case, without the `<LAYER>_` prefix
/// nor the `_<FILE>` suffix that the Rust path already says (`msm_accumulate_g1` in
/// `msm::g1` → `ACCUMULATE`), unless nothing, or no identifier, would be left.
pub fn rust_const(c_name: &str, layer: &str, file: Option<&str>) -> String {
    let upper = c_name.to_ascii_uppercase();
    let mut name = upper.as_str();
    let prefix = format!("{}_", layer.to_ascii_uppercase());
    if let Some(rest) = name.strip_prefix(&prefix) {
        name = rest;
    }
    if let Some(file) = file.filter(|f| *f != layer) {
        let suffix = format!("_{}", file.to_ascii_uppercase());
        if let Some(rest) = name.strip_suffix(&suffix) {
            name = rest;
        }
    }
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) { upper } else { name.to_string() }
}

/// Constants of one scope: `#define`s whose value [`rust_value`] can write, as Rust items.
fn constants(
    defines: &[(String, String)],
    layer: &str,
    file: Option<&str>,
    known: &mut BTreeMap<String, String>,
    items: &mut BTreeMap<String, String>,
    warnings: &mut Vec<String>,
) {
    for (c_name, value) in defines {
        let Some(v) = rust_value(value, known) else { continue };
        let name = rust_const(c_name, layer, file);
        // u32 unless a literal needs more: every constant shared today is a u32.
        let ty = if v.parse::<u64>().is_ok_and(|x| x > u64::from(u32::MAX)) { "u64" } else { "u32" };
        let item =
            format!("    /// `{c_name}` ({value}).\n    #[allow(unused_parens)]\n    pub const {name}: {ty} = {v};\n");
        if items.insert(name.clone(), item).is_some() {
            warnings.push(format!("kiln-kernels: {layer}: two constants named {name}; the later ({c_name}) wins"));
        }
        known.insert(c_name.clone(), name);
    }
}

/// The Rust text of the handles and constants of `sources` (each with its kernels).
pub fn rust_handles(sources: &[(Source, Vec<String>)], kernels_dir: &Path, warnings: &mut Vec<String>) -> String {
    let mut layers: BTreeMap<&str, Vec<&(Source, Vec<String>)>> = BTreeMap::new();
    for s in sources {
        layers.entry(&s.0.layer).or_default().push(s);
    }
    let mut out = String::new();
    for (layer, files) in layers {
        // Layer constants: the #defines of the layer's headers.
        let mut known = BTreeMap::new();
        let mut layer_items = BTreeMap::new();
        let mut headers: Vec<PathBuf> = std::fs::read_dir(kernels_dir.join(layer))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "cuh"))
            .collect();
        headers.sort();
        for h in headers {
            let parsed = parse(&std::fs::read_to_string(&h).unwrap_or_default());
            constants(&parsed.defines, layer, None, &mut known, &mut layer_items, warnings);
        }
        writeln!(out, "/// Kernels and constants of `kernels/{layer}/`.\npub mod {} {{", rust_mod(layer)).unwrap();
        writeln!(out, "    #[allow(unused_imports)]\n    use super::Kernel;").unwrap();
        for item in layer_items.values() {
            out.push_str(item);
        }
        for (source, kernels) in files {
            let flat = source.file == source.layer;
            let mut items = BTreeMap::new();
            let mut file_known = known.clone();
            let parsed = parse(&std::fs::read_to_string(&source.path).unwrap_or_default());
            constants(&parsed.defines, layer, Some(&source.file), &mut file_known, &mut items, warnings);
            for k in kernels {
                let name = rust_const(k, layer, Some(&source.file));
                let item = format!(
                    "    /// Kernel `{k}` of module `{m}`.\n    pub const {name}: Kernel = Kernel {{ module: MODULE, name: {k:?} }};\n",
                    m = source.module
                );
                if items.insert(name.clone(), item).is_some() {
                    warnings.push(format!("kiln-kernels: {}: two items named {name}; kernel {k} wins", source.module));
                }
            }
            let module_item = format!(
                "    /// The embedded module `{m}` (`kernels/{layer}/{f}.cu`).\n    pub const MODULE: &str = {m:?};\n",
                m = source.module,
                f = source.file
            );
            if flat {
                // One Rust module for the layer and its file: the layer's constants come first.
                items.retain(|name, _| {
                    let clash = layer_items.contains_key(name);
                    if clash {
                        warnings.push(format!("kiln-kernels: {}: {name} is already a layer constant", source.module));
                    }
                    !clash
                });
            }
            let indent = if flat { "" } else { "    " };
            if !flat {
                writeln!(
                    out,
                    "    /// Kernels and constants of `kernels/{layer}/{}.cu` (module `{}`).\n    pub mod {} {{\n        #[allow(unused_imports)]\n        use super::*;",
                    source.file,
                    source.module,
                    rust_mod(&source.file)
                )
                .unwrap();
            }
            for item in std::iter::once(&module_item).chain(items.values()) {
                for line in item.lines() {
                    writeln!(out, "{indent}{line}").unwrap();
                }
            }
            if !flat {
                writeln!(out, "    }}").unwrap();
            }
        }
        writeln!(out, "}}").unwrap();
    }
    out
}
