//! Hands the target and host triples to the host emulation tests
//! (src/gpu/context/host_emulation.rs), which drive the C++ compiler through the `cc` crate at
//! test time: only a build script knows them. Compiles nothing, so normal builds pay nothing
//! for the tests.

fn main() {
    for var in ["TARGET", "HOST"] {
        println!("cargo:rustc-env=KILN_MSM_{var}={}", std::env::var(var).unwrap());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
