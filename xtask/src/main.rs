//! `cargo xtask <task>`: kiln's build tasks. Run `cargo xtask help` for the list.

mod bundle;
mod cuda;
mod sass;

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const HELP: &str = "\
cargo xtask <task>

  cuda-setup   install the pinned CUDA 13.0 compiler (nvcc) from PyPI into .cuda/ (skipped
               when a CUDA 13.0+ toolkit is already installed); prints where nvcc is
  ci           what CI runs: fmt check, clippy -D warnings, kernels compiled by nvcc, all tests
  gpu-bundle   build release GPU test and bench binaries plus the kiln CLI into bundle/ with a
               run.sh, for the GPU machine (options: --archs 90 (default),
               --packages kiln-cuda,kiln-field (default: every crate with GPU tests))
  dist         release build of kiln with kernels for every architecture, stripped, with SHA256SUMS
  sass         sass kernels/<layer>/<file>.cu [function ...]: compile for sm_90 here and print each
               kernel's SASS instruction mix, registers and spills (installs cuobjdump if needed)
";

fn main() -> Result {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sh = Shell::new()?;
    sh.change_dir(workspace_root());
    match args.first().map(String::as_str) {
        Some("cuda-setup") => {
            let nvcc = cuda::setup(&sh)?;
            println!("nvcc: {}", nvcc.display());
            Ok(())
        }
        Some("ci") => ci(&sh),
        Some("gpu-bundle") => bundle::gpu_bundle(&sh, &args[1..]),
        Some("dist") => dist(&sh),
        Some("sass") => sass::sass(&sh, &args[1..]),
        Some("help") | None => {
            print!("{HELP}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task {other:?}\n\n{HELP}").into()),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// fmt, clippy, kernels, tests: exactly what `.ci/run` and the GitHub workflow run.
fn ci(sh: &Shell) -> Result {
    // The kernels must really compile: a missing nvcc fails the build instead of warning.
    let nvcc = cuda::find_nvcc(sh).ok_or("nvcc not found: run `cargo xtask cuda-setup` first")?;
    let _nvcc = sh.push_env("KILN_NVCC", &nvcc);
    let _require = sh.push_env("KILN_REQUIRE_KERNELS", "1");
    println!("== cargo fmt --check");
    cmd!(sh, "cargo fmt --all -- --check").run()?;
    println!("== cargo clippy -D warnings (kernels compiled by {})", nvcc.display());
    cmd!(sh, "cargo clippy --workspace --all-targets --locked -- -D warnings").run()?;
    println!("== cargo test");
    cmd!(sh, "cargo test --workspace --locked").run()?;
    println!("== ci: all green");
    Ok(())
}

/// The release `kiln` binary, kernels for every listed architecture, stripped and checksummed.
fn dist(sh: &Shell) -> Result {
    let nvcc = cuda::find_nvcc(sh).ok_or("nvcc not found: run `cargo xtask cuda-setup` first")?;
    let _nvcc = sh.push_env("KILN_NVCC", &nvcc);
    let _require = sh.push_env("KILN_REQUIRE_KERNELS", "1");
    let _archs = sh.push_env("KILN_CUDA_ARCHS", "80,86,89,90");
    cmd!(sh, "cargo build --release --locked -p kiln-cli --bin kiln").run()?;
    sh.remove_path("dist")?;
    sh.create_dir("dist")?;
    sh.copy_file("target/release/kiln", "dist/kiln")?;
    cmd!(sh, "strip dist/kiln").run()?;
    let sums = cmd!(sh, "sha256sum kiln").quiet().read()?;
    let _dir = sh.push_dir("dist");
    sh.write_file("SHA256SUMS", format!("{sums}\n"))?;
    println!("dist/kiln and dist/SHA256SUMS:\n{sums}");
    Ok(())
}
