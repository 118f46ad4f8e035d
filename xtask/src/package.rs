//! `cargo xtask package`: every workspace crate packaged on its own, and the packages built
//! from what they hold and nothing else.
//!
//! The crates are `publish = false`, so `cargo package` cannot verify them itself (it would
//! look the local dependencies up on crates.io). Instead: package all of them without
//! verification, unpack the `.crate` files into a scratch workspace whose `[patch.crates-io]`
//! points each internal dependency at its unpacked package, and `cargo check` that. A crate
//! that reads a file outside its own folder at build time (`include_str!("../../…")`, a build
//! script reading `../../kernels`) fails here.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Deserialize;
use xshell::{Shell, cmd};

use crate::Result;

/// The parts of `cargo metadata --no-deps` used here.
#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    target_directory: PathBuf,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    version: String,
}

/// The scratch workspace's manifest: every unpacked crate a member and a patch.
fn scratch_manifest(dirs: &[(String, String)]) -> String {
    let mut members = String::new();
    let mut patches = String::new();
    for (name, dir) in dirs {
        writeln!(members, "    {dir:?},").unwrap();
        writeln!(patches, "{name} = {{ path = {dir:?} }}").unwrap();
    }
    format!(
        "# Written by `cargo xtask package`: the packaged crates, built from their own files.\n\
         [workspace]\nresolver = \"3\"\nmembers = [\n{members}]\n\n[patch.crates-io]\n{patches}"
    )
}

pub fn package(sh: &Shell) -> Result {
    let json = cmd!(sh, "cargo metadata --format-version 1 --no-deps --locked").quiet().read()?;
    let meta: Metadata = serde_json::from_str(&json)?;
    println!("== cargo package --workspace ({} crates)", meta.packages.len());
    cmd!(sh, "cargo package --workspace --no-verify --exclude-lockfile --allow-dirty --quiet").run()?;

    let packaged = meta.target_directory.join("package");
    let scratch = packaged.join("kiln-workspace");
    sh.remove_path(&scratch)?;
    sh.create_dir(&scratch)?;
    let mut dirs = Vec::new();
    for p in &meta.packages {
        let dir = format!("{}-{}", p.name, p.version);
        let crate_file = packaged.join(format!("{dir}.crate"));
        cmd!(sh, "tar -xzf {crate_file} -C {scratch}").quiet().run()?;
        dirs.push((p.name.clone(), dir));
    }
    sh.write_file(scratch.join("Cargo.toml"), scratch_manifest(&dirs))?;
    // The workspace's resolution, so the check builds what CI tested.
    sh.copy_file("Cargo.lock", scratch.join("Cargo.lock"))?;
    println!("== cargo check of the unpacked packages ({})", scratch.display());
    let _dir = sh.push_dir(&scratch);
    // What is checked is where the files come from, not which GPUs they run on: one arch keeps nvcc short.
    let _archs = std::env::var_os("KILN_CUDA_ARCHS").is_none().then(|| sh.push_env("KILN_CUDA_ARCHS", "90"));
    cmd!(sh, "cargo check --workspace --quiet").run()?;
    println!("== package: every crate builds from its own package");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_workspace_patches_every_crate() {
        let dirs = [("kiln-nvcc".to_string(), "kiln-nvcc-0.1.0".to_string())];
        let manifest = scratch_manifest(&dirs);
        assert!(manifest.contains("members = [\n    \"kiln-nvcc-0.1.0\",\n]"), "{manifest}");
        assert!(manifest.contains("[patch.crates-io]\nkiln-nvcc = { path = \"kiln-nvcc-0.1.0\" }"), "{manifest}");
    }
}
