//! Compiles every `kernels/<layer>/*.cu` with nvcc into one fatbin per file and writes
//! `kernels.rs` into `OUT_DIR`: the table of embedded modules (`MODULES`, what ships; the
//! modules marked `// kiln-kernels: testing` go to `TESTING_MODULES`, and are built at all only
//! with the `testing` feature), and typed handles: per layer and file a Rust module with the
//! `MODULE` name, a `Kernel` constant per `extern "C"` kernel and the integer `#define`s
//! (`build/scan.rs` reads them from the sources, so they exist with or without nvcc).
//!
//! nvcc is found by `kiln-nvcc` (the same search and version check as `cargo xtask`):
//! `KILN_NVCC`, `CUDA_HOME`/`CUDA_PATH`, `PATH`, `/usr/local/cuda`, then the toolchain
//! `cargo xtask cuda-setup` installs under `<workspace>/.cuda`; CUDA 13.0 or newer.
//! Without nvcc the build succeeds with one warning and an empty module table, unless
//! `KILN_REQUIRE_KERNELS=1` (set by `cargo xtask ci`), which makes it an error.
//!
//! `KILN_CUDA_ARCHS` (e.g. `90` or `80,86,89,90`) narrows the SASS targets for quick
//! development builds; PTX for the highest listed architecture is always embedded too.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/scan.rs"]
mod scan;

const DEFAULT_ARCHS: &[u32] = &[80, 86, 89, 90];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    // The sources are in this crate's folder (so it packages alone); the workspace is only
    // where `cargo xtask cuda-setup` may have put nvcc.
    let kernels_dir = manifest_dir.join("kernels");
    let workspace = manifest_dir.join("../..");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());

    println!("cargo:rerun-if-changed={}", kernels_dir.display());
    // For `host_emulation::load`: the C++ compiler for the crate's own target.
    for var in ["TARGET", "HOST"] {
        println!("cargo:rustc-env=KILN_KERNELS_{var}={}", env::var(var).unwrap());
    }
    for var in kiln_nvcc::ENV_VARS.iter().chain(&["KILN_CUDA_ARCHS", "KILN_REQUIRE_KERNELS", "KILN_NVCC_FLAGS"]) {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let archs = archs();
    let testing = env::var_os("CARGO_FEATURE_TESTING").is_some();
    let sources: Vec<scan::Source> =
        kernel_sources(&kernels_dir).into_iter().filter(|s| testing || !s.testing).collect();
    let require = env::var("KILN_REQUIRE_KERNELS").is_ok_and(|v| v == "1");

    let mut table = String::new();
    let mut testing_table = String::new();
    let built = match kiln_nvcc::find(&workspace) {
        // A KILN_NVCC that does not work is a mistake to report, not a reason to build without kernels.
        Err(e @ kiln_nvcc::FindError::Override { .. }) => panic!("{e}"),
        Err(e) => {
            if require {
                panic!("KILN_REQUIRE_KERNELS=1 but {e}: run `cargo xtask cuda-setup` or set KILN_NVCC");
            }
            println!(
                "cargo:warning=kiln-kernels: GPU kernels not built: {e} (run `cargo xtask cuda-setup`, then rebuild)"
            );
            false
        }
        Ok(kiln_nvcc::Nvcc { path: nvcc, .. }) => {
            let results: Vec<(&scan::Source, PathBuf)> = std::thread::scope(|s| {
                let handles: Vec<_> = sources
                    .iter()
                    .map(|src| {
                        let out = out_dir.join(format!("{}.fatbin", src.module));
                        let (nvcc, archs, kernels_dir) = (&nvcc, &archs, &kernels_dir);
                        s.spawn(move || {
                            compile(nvcc, kernels_dir, &src.path, &out, archs);
                            (src, out)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().expect("nvcc thread panicked")).collect()
            });
            for (src, out) in results {
                writeln!(
                    if src.testing { &mut testing_table } else { &mut table },
                    "    Module {{ name: {:?}, fatbin: include_bytes!({:?}) }},",
                    src.module,
                    out.display().to_string()
                )
                .unwrap();
            }
            true
        }
    };

    let archs_list = archs.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
    let mut warnings = Vec::new();
    let with_kernels: Vec<(scan::Source, Vec<String>)> =
        sources.iter().map(|s| (s.clone(), scan::kernels_of(&s.path, &kernels_dir))).collect();
    let handles = scan::rust_handles(&with_kernels, &kernels_dir, &mut warnings);
    for w in warnings {
        println!("cargo:warning={w}");
    }
    let generated = format!(
        "/// Whether nvcc compiled the kernels into this build.\n\
         pub const BUILT: bool = {built};\n\
         /// SASS architectures the fatbins hold (compute capability × 10); PTX for the last one is embedded too.\n\
         pub const ARCHS: &[u32] = &[{archs_list}];\n\
         /// Every embedded module that ships, one per `kernels/<layer>/<file>.cu` (see [`Module::name`]).\n\
         pub static MODULES: &[Module] = &[\n{table}];\n\
         /// The testing modules (files marked `// kiln-kernels: testing`): empty without the `testing` feature.\n\
         pub static TESTING_MODULES: &[Module] = &[\n{testing_table}];\n\n\
         {handles}"
    );
    std::fs::write(out_dir.join("kernels.rs"), generated).unwrap();
}

fn archs() -> Vec<u32> {
    match env::var("KILN_CUDA_ARCHS") {
        Ok(list) if !list.trim().is_empty() => {
            let mut archs: Vec<u32> = list
                .split([',', ';', ' '])
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.trim_start_matches("sm_")
                        .parse()
                        .unwrap_or_else(|_| panic!("KILN_CUDA_ARCHS: {s:?} is not an architecture like 90 or sm_90"))
                })
                .collect();
            archs.sort_unstable();
            archs.dedup();
            archs
        }
        _ => DEFAULT_ARCHS.to_vec(),
    }
}

/// Every `.cu` under `kernels/<layer>/`, sorted for a stable table.
fn kernel_sources(kernels_dir: &Path) -> Vec<scan::Source> {
    let mut sources = Vec::new();
    // The kernels ship in this crate's folder: a missing folder is a packaging bug, not "no kernels".
    let layers = std::fs::read_dir(kernels_dir).unwrap_or_else(|e| panic!("{}: {e}", kernels_dir.display()));
    for layer in layers.flatten().filter(|e| e.path().is_dir()) {
        for file in std::fs::read_dir(layer.path()).unwrap().flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "cu") {
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let (layer, file) = (layer.file_name(), path.file_stem().unwrap().to_owned());
                sources.push(scan::Source::new(&layer.to_string_lossy(), &file.to_string_lossy(), path, &text));
            }
        }
    }
    sources.sort();
    sources
}

/// Newest modification time of `src` and every header under `kernels/` (any header may be
/// included by any kernel; a header change recompiles everything, a `.cu` change only itself).
fn newest_input(kernels_dir: &Path, src: &Path) -> std::time::SystemTime {
    fn walk(dir: &Path, newest: &mut std::time::SystemTime) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, newest);
            } else if p.extension().is_some_and(|x| x == "cuh" || x == "h") {
                if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                    *newest = (*newest).max(t);
                }
            }
        }
    }
    let mut newest = std::fs::metadata(src).and_then(|m| m.modified()).unwrap_or(std::time::SystemTime::now());
    walk(kernels_dir, &mut newest);
    newest
}

fn compile(nvcc: &Path, kernels_dir: &Path, src: &Path, out: &Path, archs: &[u32]) {
    let mut cmd = Command::new(nvcc);
    cmd.arg("--fatbin").arg("-std=c++17").arg("-O3").arg("--threads=0").arg("-I").arg(kernels_dir);
    for &a in archs {
        cmd.arg(format!("-gencode=arch=compute_{a},code=sm_{a}"));
    }
    let top = archs.last().copied().unwrap_or(90);
    cmd.arg(format!("-gencode=arch=compute_{top},code=compute_{top}"));
    if let Ok(extra) = env::var("KILN_NVCC_FLAGS") {
        cmd.args(extra.split_whitespace());
    }
    cmd.arg("-o").arg(out).arg(src);
    // Skip nvcc when this exact command already produced an up-to-date fatbin.
    let stamp = out.with_extension("cmd");
    let command_line = format!("{cmd:?}");
    let fresh =
        std::fs::metadata(out).and_then(|m| m.modified()).is_ok_and(|built| built > newest_input(kernels_dir, src))
            && std::fs::read_to_string(&stamp).is_ok_and(|s| s == command_line);
    if fresh {
        return;
    }
    let output = cmd.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", nvcc.display()));
    if !output.status.success() {
        panic!(
            "nvcc failed on {}:\n{}\n{}",
            src.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    std::fs::write(&stamp, command_line).unwrap();
}
