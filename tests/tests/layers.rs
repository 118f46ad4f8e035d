//! The layer rule of ARCHITECTURE.md §2: a crate may depend only on crates above it in
//! the layer table. The table's order is the order of the internal crates in the root
//! `Cargo.toml`'s `[workspace.dependencies]`; this test reads every crate's manifest and
//! fails on a dependency (normal or build) that points down or sideways.

use std::path::Path;

/// Internal crates in layer order, read from the root manifest.
fn layer_order(root: &str) -> Vec<String> {
    let start = root.find("[workspace.dependencies]").expect("root manifest has [workspace.dependencies]");
    root[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split_once('=').map(|(name, rest)| (name.trim(), rest)))
        .filter(|(name, rest)| name.starts_with("kiln-") && rest.contains("path"))
        .map(|(name, _)| name.to_string())
        .collect()
}

/// `kiln-*` names in a manifest's `[dependencies]` and `[build-dependencies]` sections.
fn internal_deps(manifest: &str) -> Vec<String> {
    let mut deps = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]" || line == "[build-dependencies]";
            continue;
        }
        if in_deps {
            if let Some(name) = line.split(['=', '.']).next().map(str::trim) {
                if name.starts_with("kiln-") {
                    deps.push(name.to_string());
                }
            }
        }
    }
    deps
}

fn violations(order: &[String], crates: &[(String, String)]) -> Vec<String> {
    let rank = |n: &str| order.iter().position(|o| o == n);
    let mut bad = Vec::new();
    for (name, manifest) in crates {
        let Some(own) = rank(name) else {
            bad.push(format!("{name} is not in the layer table (root Cargo.toml [workspace.dependencies])"));
            continue;
        };
        for dep in internal_deps(manifest) {
            match rank(&dep) {
                Some(r) if r < own => {}
                Some(_) => bad.push(format!("{name} depends on {dep}, which is not above it in the layer table")),
                None => bad.push(format!("{name} depends on {dep}, which is not in the layer table")),
            }
        }
    }
    bad
}

#[test]
fn crates_depend_only_on_layers_above_them() {
    let root_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let order = layer_order(&std::fs::read_to_string(root_dir.join("Cargo.toml")).unwrap());
    assert!(order.len() >= 8, "layer table too short: {order:?}");
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(root_dir.join("crates")).unwrap().flatten() {
        let manifest = std::fs::read_to_string(entry.path().join("Cargo.toml")).unwrap();
        crates.push((entry.file_name().to_string_lossy().into_owned(), manifest));
    }
    let bad = violations(&order, &crates);
    assert!(bad.is_empty(), "layer violations:\n{}", bad.join("\n"));
}

#[test]
fn the_check_catches_a_downward_dependency() {
    let order: Vec<String> = ["kiln-cuda", "kiln-field", "kiln-msm"].map(String::from).to_vec();
    let crates = vec![
        ("kiln-field".to_string(), "[dependencies]\nkiln-cuda.workspace = true\n".to_string()),
        ("kiln-cuda".to_string(), "[dependencies]\nkiln-msm = { path = \"../kiln-msm\" }\n".to_string()),
        (
            "kiln-msm".to_string(),
            "[dev-dependencies]\nkiln-cuda.workspace = true\n[build-dependencies]\nkiln-nope.workspace = true\n"
                .to_string(),
        ),
    ];
    let bad = violations(&order, &crates);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].contains("kiln-cuda depends on kiln-msm"));
    assert!(bad[1].contains("kiln-nope"));
}
