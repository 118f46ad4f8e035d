//! The few fields xtask reads from cargo's `--message-format=json` messages, as typed values.

use serde::Deserialize;

use crate::Result;

/// One line of cargo's JSON output; only the kinds xtask reads are typed.
#[derive(Debug, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
enum Message {
    CompilerArtifact(Artifact),
    BuildScriptExecuted(BuildScript),
    #[serde(other)]
    Other,
}

/// A compiled target (`"reason":"compiler-artifact"`).
#[derive(Debug, Deserialize)]
pub struct Artifact {
    /// Cargo's package id, e.g. `path+file:///…/crates/kiln-field#0.1.0`.
    pub package_id: String,
    /// The target that was compiled.
    pub target: Target,
    /// The binary, for executable targets (bins, tests, benches); `None` for libraries.
    pub executable: Option<String>,
}

/// The target part of an artifact message.
#[derive(Debug, Deserialize)]
pub struct Target {
    /// The target's name (`kiln`, `gpu`, `msm`, …).
    pub name: String,
    /// Its kinds: `lib`, `bin`, `test`, `bench`, `custom-build`, …
    pub kind: Vec<String>,
}

/// A build script's run (`"reason":"build-script-executed"`).
#[derive(Debug, Deserialize)]
pub struct BuildScript {
    /// Cargo's package id of the package whose script ran.
    pub package_id: String,
    /// The script's `OUT_DIR`.
    pub out_dir: String,
}

impl Artifact {
    /// The package's name, from its id.
    pub fn package(&self) -> &str {
        package_name(&self.package_id)
    }

    /// The target's first kind (`bin`, `test`, `bench`, …).
    pub fn kind(&self) -> &str {
        self.target.kind.first().map_or("", String::as_str)
    }
}

/// The package name in a cargo package id: `…/crates/kiln-field#0.1.0` (the name is the last
/// path segment) or `…#kiln-field@0.1.0` / `registry+…#serde@1.0.0` (the name is given).
pub fn package_name(id: &str) -> &str {
    match id.rsplit_once('#') {
        Some((_, fragment)) if fragment.contains('@') => fragment.split('@').next().unwrap_or(fragment),
        Some((url, _)) => url.rsplit('/').next().unwrap_or(url),
        None => id,
    }
}

fn messages(json: &str) -> Result<Vec<Message>> {
    json.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).map_err(|e| format!("cargo's JSON message {l:.120}…: {e}").into()))
        .collect()
}

/// Every compiler artifact in `json` (cargo's output, one message per line).
pub fn artifacts(json: &str) -> Result<Vec<Artifact>> {
    Ok(messages(json)?
        .into_iter()
        .filter_map(|m| match m {
            Message::CompilerArtifact(a) => Some(a),
            _ => None,
        })
        .collect())
}

/// The `OUT_DIR` of package `package`'s build script, as it ran for this build (the last run
/// reported, if cargo reports several).
pub fn out_dir(json: &str, package: &str) -> Result<Option<String>> {
    Ok(messages(json)?.into_iter().rev().find_map(|m| match m {
        Message::BuildScriptExecuted(b) if package_name(&b.package_id) == package => Some(b.out_dir),
        _ => None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Trimmed lines of real `cargo build --message-format=json` output (cargo 1.95).
    const JSON: &str = r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#serde@1.0.228","manifest_path":"/x/serde/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"serde","src_path":"/x/serde/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{},"features":[],"filenames":["/t/libserde.rlib"],"executable":null,"fresh":true}
{"reason":"build-script-executed","package_id":"path+file:///w/crates/kiln-kernels#0.1.0","linked_libs":[],"linked_paths":[],"cfgs":[],"env":[],"out_dir":"/t/release/build/kiln-kernels-abc/out"}
{"reason":"compiler-artifact","package_id":"path+file:///w/crates/kiln-cli#kiln-cli@0.1.0","manifest_path":"/w/crates/kiln-cli/Cargo.toml","target":{"kind":["bin"],"crate_types":["bin"],"name":"kiln","src_path":"/w/crates/kiln-cli/src/main.rs"},"profile":{},"features":[],"filenames":["/t/release/kiln"],"executable":"/t/release/kiln","fresh":false}
{"reason":"compiler-message","package_id":"path+file:///w/crates/kiln-cli#0.1.0","message":{"rendered":"warning: \"quoted\" text"}}
{"reason":"build-finished","success":true}
"#;

    #[test]
    fn artifacts_are_typed() {
        let all = artifacts(JSON).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].package(), all[0].kind(), all[0].executable.as_deref()), ("serde", "lib", None));
        let kiln = &all[1];
        assert_eq!((kiln.package(), kiln.kind(), kiln.target.name.as_str()), ("kiln-cli", "bin", "kiln"));
        assert_eq!(kiln.executable.as_deref(), Some("/t/release/kiln"));
    }

    #[test]
    fn build_script_out_dir() {
        assert_eq!(out_dir(JSON, "kiln-kernels").unwrap().as_deref(), Some("/t/release/build/kiln-kernels-abc/out"));
        assert_eq!(out_dir(JSON, "kiln-cuda").unwrap(), None);
    }

    #[test]
    fn package_names_from_ids() {
        assert_eq!(package_name("path+file:///w/crates/kiln-field#0.1.0"), "kiln-field");
        assert_eq!(package_name("path+file:///w/xtask#xtask@0.1.0"), "xtask");
        assert_eq!(package_name("registry+https://github.com/rust-lang/crates.io-index#blst@0.3.15"), "blst");
    }

    #[test]
    fn a_malformed_line_is_an_error_not_a_skip() {
        assert!(artifacts("{\"reason\":\"compiler-artifact\",\"target\":3}").is_err());
    }
}
