//! Kernels on the CPU, for tests: [`load`] compiles a C++ file that includes kernel sources
//! through `host/cuda_emulation.h` (CUDA's keywords, blocks of threads as fibers with real
//! barriers and shared memory) with the host C++ compiler into a shared library and loads it.
//! The file exports `extern "C"` entry points that launch the kernels over host memory; the
//! tests of kiln-ntt and kiln-msm call them with the launch shapes the GPU path uses and
//! compare with the CPU. No nvcc, no GPU: CI runs them.

use std::path::{Path, PathBuf};

/// Compiles `source` (a `.cpp` file; `#include` paths are relative to [`crate::SOURCE_DIR`])
/// into a shared library named after `stem` and this process, loads it, and removes the file
/// (the loaded library stays mapped). Optimised: the kernels' field arithmetic is unusably
/// slow without.
///
/// # Errors
/// The C++ compiler cannot be run or fails (its messages are on stderr), or the library does
/// not load.
pub fn load(source: &Path, stem: &str) -> Result<libloading::Library, String> {
    let out = PathBuf::from(env!("OUT_DIR"));
    // One file per process: test binaries of other feature sets may build at the same time.
    let lib = out.join(format!("{stem}_{}.so", std::process::id()));
    let mut cmd = cc::Build::new()
        .cpp(true)
        .target(env!("KILN_KERNELS_TARGET"))
        .host(env!("KILN_KERNELS_HOST"))
        .opt_level(2)
        .debug(false)
        .warnings(false)
        .cargo_metadata(false)
        .out_dir(&out)
        .try_get_compiler()
        .map_err(|e| format!("no host C++ compiler: {e}"))?
        .to_command();
    cmd.args(["-std=c++17", "-shared", "-fPIC", "-pthread", "-Wno-unknown-pragmas", "-I", crate::SOURCE_DIR])
        .arg(source)
        .arg("-o")
        .arg(&lib);
    let status = cmd.status().map_err(|e| format!("cannot run the C++ compiler ({cmd:?}): {e}"))?;
    if !status.success() {
        return Err(format!("the C++ compiler failed on {} (see its output above)", source.display()));
    }
    // SAFETY: the library was built just now from the caller's source; its initialisers only
    // set up globals.
    let loaded = unsafe { libloading::Library::new(&lib) }.map_err(|e| format!("load {}: {e}", lib.display()));
    let _ = std::fs::remove_file(&lib);
    loaded
}
