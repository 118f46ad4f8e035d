//! The layer rule of ARCHITECTURE.md §2: a crate may depend only on crates above it in the
//! layer table. The table is `[workspace.metadata.layers]` of the root `Cargo.toml`; the
//! dependencies are what `cargo metadata` reports for every workspace member (xtask, tests
//! and benches included): every kind (normal, build, dev), target-specific sections, renamed
//! packages under their real name.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

/// The parts of `cargo metadata --format-version 1 --no-deps` the check reads.
#[derive(Debug, Deserialize)]
struct Metadata {
    /// The workspace members (with `--no-deps`, nothing else).
    packages: Vec<Package>,
    /// `[workspace.metadata]`.
    metadata: WorkspaceMetadata,
}

#[derive(Debug, Deserialize)]
struct WorkspaceMetadata {
    layers: Layers,
}

/// `[workspace.metadata.layers]`.
#[derive(Debug, Deserialize)]
struct Layers {
    /// Layer crates, top first: each may depend only on those before it.
    order: Vec<String>,
    /// Members outside the layers: may depend on any layer; nothing may depend on them.
    tools: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Package {
    name: String,
    dependencies: Vec<Dependency>,
}

#[derive(Debug, Deserialize)]
struct Dependency {
    /// The package's real name (a renamed dependency's key is in `rename`).
    name: String,
    /// `None` for normal, `"dev"` or `"build"`.
    kind: Option<String>,
    rename: Option<String>,
    /// `cfg(...)` or a triple for a `[target.….dependencies]` entry.
    target: Option<String>,
    /// Set for path dependencies.
    path: Option<String>,
}

impl Dependency {
    /// How the manifest declares it, for messages: `kiln-msm (dev, as msm, target cfg(unix))`.
    fn describe(&self) -> String {
        let mut how = vec![self.kind.clone().unwrap_or_else(|| "normal".into())];
        how.extend(self.rename.as_ref().map(|r| format!("as {r}")));
        how.extend(self.target.as_ref().map(|t| format!("target {t}")));
        format!("{} ({})", self.name, how.join(", "))
    }
}

/// Every breach of the layer rule in `meta`, one sentence each.
fn violations(meta: &Metadata) -> Vec<String> {
    let Layers { order, tools } = &meta.metadata.layers;
    let members: BTreeSet<&str> = meta.packages.iter().map(|p| p.name.as_str()).collect();
    let rank = |n: &str| order.iter().position(|o| o == n);
    let is_tool = |n: &str| tools.iter().any(|t| t == n);
    let mut bad = Vec::new();
    for listed in order.iter().chain(tools) {
        if !members.contains(listed.as_str()) {
            bad.push(format!("{listed} is in [workspace.metadata.layers] but is not a workspace member"));
        }
    }
    for package in &meta.packages {
        let name = &package.name;
        let own = rank(name);
        if own.is_none() && !is_tool(name) {
            bad.push(format!("{name} is in neither `order` nor `tools` of [workspace.metadata.layers]"));
            continue;
        }
        // Internal: another workspace member, or any path dependency (a crate kept outside the workspace).
        for dep in package.dependencies.iter().filter(|d| members.contains(d.name.as_str()) || d.path.is_some()) {
            let what = dep.describe();
            match (rank(&dep.name), own) {
                (Some(_), None) => {} // a tool may use any layer
                (Some(r), Some(o)) if r < o => {}
                (Some(_), Some(_)) => bad.push(format!("{name} depends on {what}, which is not above it")),
                (None, _) if is_tool(&dep.name) => bad.push(format!("{name} depends on {what}, a tool")),
                (None, _) => bad.push(format!("{name} depends on {what}, which is not in the layer table")),
            }
        }
    }
    bad
}

fn workspace_metadata() -> Metadata {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON has packages and [workspace.metadata.layers]")
}

#[test]
fn crates_depend_only_on_layers_above_them() {
    let meta = workspace_metadata();
    let Layers { order, tools } = &meta.metadata.layers;
    assert!(order.len() >= 9, "layer table too short: {order:?}");
    assert!(tools.iter().any(|t| t == "xtask"), "xtask is checked too: {tools:?}");
    let bad = violations(&meta);
    assert!(bad.is_empty(), "layer violations:\n{}", bad.join("\n"));
}

/// A synthetic workspace with one breach of each kind the check must see.
#[test]
fn the_check_catches_every_kind_of_breach() {
    let dep = |name: &str, kind: Option<&str>| serde_json::json!({ "name": name, "kind": kind, "rename": null, "target": null, "path": format!("/w/{name}") });
    let meta: Metadata = serde_json::from_value(serde_json::json!({
        "metadata": { "layers": {
            "order": ["kiln-cuda", "kiln-field", "kiln-msm", "kiln-gone"],
            "tools": ["xtask"],
        }},
        "packages": [
            // Fine: a normal and a build dependency above it; down: renamed and target-specific.
            { "name": "kiln-field", "dependencies": [
                dep("kiln-cuda", None),
                dep("kiln-cuda", Some("build")),
                { "name": "kiln-msm", "kind": null, "rename": "msm", "target": "cfg(unix)", "path": "/w/kiln-msm" },
            ]},
            // Down, as a dev-dependency.
            { "name": "kiln-cuda", "dependencies": [dep("kiln-msm", Some("dev"))] },
            // A path crate outside the table; external crates are not checked.
            { "name": "kiln-msm", "dependencies": [
                dep("kiln-nope", Some("build")),
                { "name": "serde", "kind": null, "rename": null, "target": null, "path": null },
            ]},
            // A tool may use any layer; members must be listed.
            { "name": "xtask", "dependencies": [dep("kiln-msm", None)] },
            { "name": "kiln-field-ext", "dependencies": [] },
        ],
    }))
    .unwrap();
    let bad = violations(&meta);
    let expected = [
        "kiln-gone is in [workspace.metadata.layers] but is not a workspace member",
        "kiln-field depends on kiln-msm (normal, as msm, target cfg(unix)), which is not above it",
        "kiln-cuda depends on kiln-msm (dev), which is not above it",
        "kiln-msm depends on kiln-nope (build), which is not in the layer table",
        "kiln-field-ext is in neither `order` nor `tools` of [workspace.metadata.layers]",
    ];
    assert_eq!(bad, expected);
}

#[test]
fn a_tool_as_a_dependency_is_a_breach() {
    let meta: Metadata = serde_json::from_value(serde_json::json!({
        "metadata": { "layers": { "order": ["kiln-cuda"], "tools": ["xtask"] } },
        "packages": [
            { "name": "kiln-cuda", "dependencies": [
                { "name": "xtask", "kind": "dev", "rename": null, "target": null, "path": "/w/xtask" },
            ]},
            { "name": "xtask", "dependencies": [] },
        ],
    }))
    .unwrap();
    assert_eq!(violations(&meta), ["kiln-cuda depends on xtask (dev), a tool"]);
}
