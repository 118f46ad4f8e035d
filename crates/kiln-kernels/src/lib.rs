//! kiln's CUDA C++ kernels, compiled at build time and embedded as fatbins.
//!
//! This crate does one thing: its build script runs nvcc over `kernels/<layer>/*.cu`
//! (one fatbin per file) and this library hands out the bytes, with typed handles to name
//! them. Loading them onto a device is `kiln-cuda`'s job.
//!
//! - Modules: one per file, named `<layer>_<file>`, or `<layer>` for a file named after its
//!   layer (`ntt/ntt.cu` is `ntt`). [`MODULES`] is what ships; files marked
//!   `// kiln-kernels: testing` (test entry points, benchmarks) are built only with the
//!   `testing` feature, into [`TESTING_MODULES`]. [`module`] finds either.
//! - Handles, generated from the sources: a Rust module per layer (and per file, unless the
//!   file is named after its layer) holding `MODULE`, a [`Kernel`] per `extern "C"` kernel,
//!   named without the layer prefix and file suffix the path already says
//!   (`msm_accumulate_g1` is [`msm::g1::ACCUMULATE`]), and the integer `#define`s of its
//!   headers and file, the one source of the constants Rust shares with the kernels
//!   ([`msm::ACC_BLOCK`] is `MSM_ACC_BLOCK`).
//!
//! ```
//! assert_eq!(kiln_kernels::smoke::MUL_ADD_U64.module, "smoke");
//! if kiln_kernels::BUILT {
//!     let smoke = kiln_kernels::module("smoke").expect("the smoke kernel is always built");
//!     assert!(!smoke.fatbin.is_empty());
//! } else {
//!     // Built without nvcc: say so and how to fix it.
//!     eprintln!("{}", kiln_kernels::NOT_BUILT_HINT);
//! }
//! ```

/// One embedded kernel module: the fatbin nvcc made from `kernels/<layer>/<file>.cu`.
#[derive(Debug, Clone, Copy)]
pub struct Module {
    /// `<layer>_<file>`, e.g. `msm_g1` for `kernels/msm/g1.cu`, or `<layer>` when the file is
    /// named after its layer (`ntt` for `kernels/ntt/ntt.cu`).
    pub name: &'static str,
    /// The fatbin image (SASS for [`ARCHS`], PTX for the newest), ready for `cuModuleLoadData`.
    pub fatbin: &'static [u8],
}

/// A kernel of an embedded module, as the generated handles name it (`kiln_cuda` loads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kernel {
    /// The module's name ([`Module::name`]).
    pub module: &'static str,
    /// The kernel's `extern "C"` name.
    pub name: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The folder of the kernel sources (`kernels/`, holding `<layer>/*.cu`, their headers and
/// `host/cuda_emulation.h`), for the tests of other crates that compile a kernel file with the
/// host C++ compiler (kiln-ntt's host emulation): the sources ship in this crate's folder, so
/// no crate reads another's folder by a relative path.
pub const SOURCE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels");

#[cfg(feature = "host-emulation")]
pub mod host_emulation;

/// What to tell a user whose build has no kernels.
pub const NOT_BUILT_HINT: &str = "kiln was built without its GPU kernels (nvcc was not found at build time): \
run `cargo xtask cuda-setup` (or install CUDA 13.0+), then rebuild";

/// The embedded module called `name` (shipping or, with the `testing` feature, testing), if
/// the kernels were built.
pub fn module(name: &str) -> Option<&'static Module> {
    MODULES.iter().chain(TESTING_MODULES).find(|m| m.name == name)
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
            assert!(module("smoke").is_some_and(|m| m.fatbin.len() > 64));
            assert!(MODULES.iter().all(|m| !m.fatbin.is_empty()));
            // What ships holds no testing module; the testing table only with the feature.
            assert!(MODULES.iter().all(|m| !m.name.ends_with("_tests") && !m.name.ends_with("_bench")), "{MODULES:?}");
            assert_eq!(TESTING_MODULES.is_empty(), !cfg!(feature = "testing"));
            // Every generated handle names a module of the tables.
            for k in [smoke::MUL_ADD_U64, msm::sort::HISTOGRAM, msm::g1::ACCUMULATE, msm::g2::ACCUMULATE, ntt::BITREV] {
                assert!(module(k.module).is_some(), "{k:?}");
            }
        } else {
            assert!(MODULES.is_empty() && TESTING_MODULES.is_empty());
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

    #[test]
    fn handles_and_constants_come_from_the_sources() {
        assert_eq!(msm::g1::ACCUMULATE, Kernel { module: "msm_g1", name: "msm_accumulate_g1" });
        assert_eq!(msm::g2::SUM_INDEXED.name, "msm_sum_indexed_g2");
        assert_eq!(msm::sort::GATHER_SCALARS, Kernel { module: "msm_sort", name: "msm_gather_scalars" });
        assert_eq!(ntt::PASS_DIT4_INV, Kernel { module: "ntt", name: "ntt_pass_dit4_inv" });
        assert_eq!(ntt::MODULE, "ntt");
        assert_eq!(msm::ACC_BLOCK, 128);
        assert_eq!(ntt::BITREV_THREADS, 2 << (2 * ntt::BITREV_TILE_LOG));
    }
}

/// The source scanner of the build script, tested on small inputs (the build script uses
/// the writing half, which the tests reach only through the generated handles).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../build/scan.rs"]
mod scan;

#[cfg(test)]
mod scan_tests {
    use std::collections::BTreeMap;

    use super::scan::*;

    #[test]
    fn module_names_do_not_stutter_and_testing_is_marked() {
        let s = Source::new("ntt", "ntt", "ntt/ntt.cu".into(), "");
        assert_eq!((s.module.as_str(), s.testing), ("ntt", false));
        let s = Source::new("field", "tests", "field/tests.cu".into(), "// kiln-kernels: testing\n#include <x>\n");
        assert_eq!((s.module.as_str(), s.testing), ("field_tests", true));
    }

    #[test]
    fn kernels_direct_and_through_macros() {
        let text = r#"
            // extern "C" __global__ void commented_out(int x) {}
            #define MAKE(SUFFIX, F, N)                                   \
                extern "C" __global__ void __launch_bounds__(N, 2) k_##SUFFIX(int* a) { } \
                extern "C" __global__ void j_##SUFFIX##_x(int* a) { }
            #define PASS(NAME, R) extern "C" __global__ void NAME(int r) { f<R>(r); }
            extern "C" __global__ void
            plain(const int* a) {}
            __global__ void not_extern(int a) {}
            MAKE(g1, FpOps, 3)
            MAKE(g2, Fp2Ops, 1)
            PASS(p_dif8, 3)
        "#;
        let p = parse(text);
        let mut names = kernel_names(&p.code);
        for (name, m) in &p.macros {
            for t in kernel_names(&m.body) {
                for args in invocations(&p.code, name) {
                    names.push(expand(&t, m, &args));
                }
            }
        }
        names.sort();
        assert_eq!(names, ["j_g1_x", "j_g2_x", "k_g1", "k_g2", "p_dif8", "plain"]);
    }

    #[test]
    fn kernels_of_a_real_file_through_its_header_macro() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let names = kernels_of(&dir.join("msm/g2.cu"), &dir);
        let want = [
            "accumulate",
            "bucket_fixup",
            "bucket_reduce",
            "combine",
            "fold",
            "join_heads",
            "sum_groups",
            "sum_indexed",
        ];
        assert_eq!(names, want.map(|k| format!("msm_{k}_g2")));
    }

    #[test]
    fn constants_and_names() {
        let known: BTreeMap<String, String> = [("T_LOG".to_string(), "LOG".to_string())].into();
        assert_eq!(rust_value("128", &known).as_deref(), Some("128"));
        assert_eq!(rust_value("0xffffffffu", &known).as_deref(), Some("0xffffffff"));
        assert_eq!(rust_value("(2 << (2 * T_LOG))", &known).as_deref(), Some("(2 << (2 * LOG))"));
        assert_eq!(rust_value("1u, 2u", &known), None);
        assert_eq!(rust_value("OTHER + 1", &known), None);
        assert_eq!(rust_const("msm_accumulate_g1", "msm", Some("g1")), "ACCUMULATE");
        assert_eq!(rust_const("ntt_pass_dif8", "ntt", Some("ntt")), "PASS_DIF8");
        assert_eq!(rust_const("MSM_ACC_BLOCK", "msm", None), "ACC_BLOCK");
        assert_eq!(rust_const("fr_op", "field", Some("tests")), "FR_OP");
        assert_eq!(rust_const("msm_2x", "msm", Some("g1")), "MSM_2X");
        assert_eq!(rust_const("msm_g1", "msm", Some("g1")), "G1");
    }
}
