//! kiln's CUDA C++ kernels, compiled at build time and embedded as fatbins.
//!
//! This crate does one thing: its build script runs nvcc over `kernels/<layer>/*.cu`
//! (one fatbin per file) and this library hands out the bytes. Loading them onto a
//! device is `kiln-cuda`'s job.
//!
//! ```
//! if kiln_kernels::BUILT {
//!     let smoke = kiln_kernels::module("smoke_smoke").expect("the smoke kernel is always built");
//!     assert!(!smoke.fatbin.is_empty());
//! } else {
//!     // Built without nvcc: say so and how to fix it.
//!     eprintln!("{}", kiln_kernels::NOT_BUILT_HINT);
//! }
//! ```

/// One embedded kernel module: the fatbin nvcc made from `kernels/<layer>/<file>.cu`.
#[derive(Debug, Clone, Copy)]
pub struct Module {
    /// `<layer>_<file>`, e.g. `field_tests` for `kernels/field/tests.cu`.
    pub name: &'static str,
    /// The fatbin image (SASS for [`ARCHS`], PTX for the newest), ready for `cuModuleLoadData`.
    pub fatbin: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// What to tell a user whose build has no kernels.
pub const NOT_BUILT_HINT: &str = "kiln was built without its GPU kernels (nvcc was not found at build time): \
run `cargo xtask cuda-setup` (or install CUDA 13.0+), then rebuild";

/// The embedded module called `name`, if the kernels were built.
pub fn module(name: &str) -> Option<&'static Module> {
    MODULES.iter().find(|m| m.name == name)
}

/// Whether this build can run on a device of compute capability `major.minor`: SASS for
/// that exact architecture, or PTX the driver can compile for a newer one.
pub fn supports(major: u32, minor: u32) -> bool {
    let cc = major * 10 + minor;
    BUILT && (ARCHS.contains(&cc) || ARCHS.last().is_some_and(|&ptx| cc > ptx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_build_state() {
        if BUILT {
            // Every .cu under kernels/ is in the table, with a non-empty image.
            let expected = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/smoke")).unwrap().count();
            assert!(expected >= 1);
            assert!(module("smoke_smoke").is_some_and(|m| m.fatbin.len() > 64));
            assert!(MODULES.iter().all(|m| !m.fatbin.is_empty()));
        } else {
            assert!(MODULES.is_empty());
            assert!(!supports(9, 0));
        }
    }

    #[test]
    fn ptx_covers_newer_archs_only() {
        if BUILT {
            let top = *ARCHS.last().unwrap();
            assert!(supports(top / 10, top % 10));
            assert!(supports(12, 0), "PTX of the newest arch JIT-compiles on newer GPUs");
            assert!(!supports(7, 0), "no SASS or PTX for Volta");
        }
    }
}
