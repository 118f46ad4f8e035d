//! Helpers for GPU tests: find a device or skip visibly, or fail under `KILN_REQUIRE_GPU=1`.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]`. Run anyway
//! (`--ignored`) on a machine without a GPU they print `skipped: no CUDA device` and
//! return; with `KILN_REQUIRE_GPU=1` (what the bundle's `run.sh test` sets) they fail.

use std::sync::Arc;

use crate::{CudaError, Device};

/// Whether `KILN_REQUIRE_GPU=1` is set: a missing device is then a failure.
pub fn gpu_required() -> bool {
    std::env::var("KILN_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Whether `KILN_TEST_SMALL=1` is set (the bundle's `run.sh sanitize`): GPU tests then
/// use small sizes, since compute-sanitizer slows kernels down a hundredfold.
pub fn small_sizes() -> bool {
    std::env::var("KILN_TEST_SMALL").is_ok_and(|v| v == "1")
}

/// Device 0 with kernels loadable, or `None` after printing why the test is skipped.
///
/// # Panics
/// Under `KILN_REQUIRE_GPU=1` when there is no usable device: that is the point.
pub fn gpu_or_skip(test: &str) -> Option<Arc<Device>> {
    let usable = Device::open(0).and_then(|d| {
        let (major, minor) = d.compute_capability()?;
        if !kiln_kernels::BUILT {
            return Err(CudaError::KernelsNotBuilt);
        }
        if !kiln_kernels::supports(major, minor) {
            return Err(CudaError::ArchNotBuilt { major, minor, built: kiln_kernels::ARCHS });
        }
        Ok(d)
    });
    match usable {
        Ok(d) => Some(d),
        Err(e) if gpu_required() => panic!("{test}: KILN_REQUIRE_GPU=1 but no usable CUDA device: {e}"),
        Err(e) => {
            // Written to the stderr handle directly: libtest captures `eprintln!` of passing
            // tests, and a skip must be visible.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr().lock(), "{test}: skipped: no CUDA device ({e})");
            None
        }
    }
}
