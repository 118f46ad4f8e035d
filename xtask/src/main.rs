//! `cargo xtask <task>`: kiln's build tasks. Run `cargo xtask --help` for the list.

mod bundle;
mod cargo_json;
mod cuda;
mod package;
mod peers;
mod sass;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sha2::{Digest, Sha256};
use xshell::{Shell, cmd};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

const HELP: &str = "\
cargo xtask <task>          (cargo xtask --help: this list)

  cuda-setup   install the pinned CUDA 13.0 compiler (nvcc) from PyPI into .cuda/ (skipped
               when a CUDA 13.0+ toolkit is already installed); prints where nvcc is
  ci           what CI runs: fmt check, clippy -D warnings, kernels compiled by nvcc, all tests,
               the CPU-only builds (--no-default-features), every crate packaged on its own
               (cargo package --workspace)
  gpu-bundle   build release GPU test and bench binaries plus the kiln CLI into bundle/ with a
               run.sh, for the GPU machine (options: --archs 90 (default),
               --packages kiln-cuda,kiln-field (default: every crate with GPU tests))
  peer-bundle  build the peer benchmark (peers/: bellperson 0.27 with its CUDA prover, and
               supraseal-c2) for sm_90 into peer-bundle.tar.xz with run-peers.sh, which runs kiln
               and the peers side by side on the GPU machine (option: --only cuda|supraseal);
               lays a CUDA toolkit folder around the cuda-setup nvcc in .cuda/peers-toolkit
  package      cargo package every crate (no verification: they are publish = false), unpack the
               packages into a scratch workspace and cargo check it: no crate reads outside its folder
  dist         release build of kiln with kernels for every architecture, stripped, with SHA256SUMS
  sass         sass <layer>/<file>.cu [function ...] (under crates/kiln-kernels/kernels): compile for
               sm_90 here and print each kernel's SASS instruction mix, registers and spills
               (installs cuobjdump if needed)
";

/// One task named on the command line.
#[derive(Debug, PartialEq, Eq)]
enum Task<'a> {
    Help,
    CudaSetup,
    Ci,
    GpuBundle(&'a [String]),
    PeerBundle(&'a [String]),
    Dist,
    Package,
    Sass(&'a [String]),
}

/// The task `args` (the words after `cargo xtask`) name; the error is one line for the user.
fn parse(args: &[String]) -> std::result::Result<Task<'_>, String> {
    let (first, rest) = match args.split_first() {
        None => return Ok(Task::Help),
        Some((first, rest)) => (first.as_str(), rest),
    };
    let no_options = |task| if rest.is_empty() { Ok(task) } else { Err(format!("{first} takes no arguments")) };
    match first {
        "help" | "--help" | "-h" => Ok(Task::Help),
        "cuda-setup" => no_options(Task::CudaSetup),
        "ci" => no_options(Task::Ci),
        "dist" => no_options(Task::Dist),
        "package" => no_options(Task::Package),
        "gpu-bundle" => Ok(Task::GpuBundle(rest)),
        "peer-bundle" => Ok(Task::PeerBundle(rest)),
        "sass" => Ok(Task::Sass(rest)),
        other => Err(format!("unknown task `{other}` (`cargo xtask --help` lists them)")),
    }
}

/// Errors are printed as text (no Debug quoting) and exit with status 1.
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result {
    let task = parse(args)?;
    if task == Task::Help {
        print!("{HELP}");
        return Ok(());
    }
    let sh = Shell::new()?;
    sh.change_dir(workspace_root());
    match task {
        Task::Help => unreachable!("handled above"),
        Task::CudaSetup => {
            let nvcc = cuda::setup(&sh)?;
            println!("nvcc: {}", nvcc.display());
            Ok(())
        }
        Task::Ci => ci(&sh),
        Task::GpuBundle(rest) => bundle::gpu_bundle(&sh, rest),
        Task::PeerBundle(rest) => peers::peer_bundle(&sh, rest),
        Task::Dist => dist(&sh),
        Task::Package => package::package(&sh),
        Task::Sass(rest) => sass::sass(&sh, rest),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// fmt, clippy, kernels, tests, packaging: exactly what `.ci/run` and the GitHub workflow run.
fn ci(sh: &Shell) -> Result {
    // The kernels must really compile: a missing nvcc fails the build instead of warning.
    let nvcc = cuda::find_nvcc(sh)?;
    let _nvcc = sh.push_env("KILN_NVCC", &nvcc);
    let _require = sh.push_env("KILN_REQUIRE_KERNELS", "1");
    println!("== cargo fmt --check");
    cmd!(sh, "cargo fmt --all -- --check").run()?;
    println!("== cargo clippy -D warnings (kernels compiled by {})", nvcc.display());
    cmd!(sh, "cargo clippy --workspace --all-targets --locked -- -D warnings").run()?;
    println!("== cargo test");
    cmd!(sh, "cargo test --workspace --locked").run()?;
    cpu_only(sh)?;
    package::package(sh)?;
    println!("== ci: all green");
    Ok(())
}

/// Crates with a `cuda` feature build and test without it, with nothing of CUDA in their
/// dependency tree (a downstream project that wants only the CPU path needs no toolkit).
fn cpu_only(sh: &Shell) -> Result {
    println!("== CPU-only builds (--no-default-features)");
    for krate in ["kiln-msm", "kiln-ntt", "kiln-field", "kiln-groth16", "kiln-sched", "kiln-service"] {
        let tree =
            cmd!(sh, "cargo tree --locked -p {krate} --no-default-features -e normal,build --prefix none").read()?;
        if let Some(line) = tree.lines().find(|l| l.starts_with("cudarc ") || l.starts_with("kiln-kernels ")) {
            return Err(format!("{krate} without its cuda feature still depends on {line}").into());
        }
    }
    // The layers up to the prover are tested without it; the orchestrator and the service are
    // checked (their tests are the workspace's, with the feature on).
    cmd!(sh, "cargo test --locked -p kiln-msm -p kiln-ntt -p kiln-field -p kiln-groth16 --no-default-features")
        .run()?;
    cmd!(sh, "cargo check --locked -p kiln-sched -p kiln-service --no-default-features --all-targets").run()?;
    Ok(())
}

/// The release `kiln` binary, kernels for every listed architecture, stripped and checksummed.
fn dist(sh: &Shell) -> Result {
    let nvcc = cuda::find_nvcc(sh)?;
    let _nvcc = sh.push_env("KILN_NVCC", &nvcc);
    let _require = sh.push_env("KILN_REQUIRE_KERNELS", "1");
    let _archs = sh.push_env("KILN_CUDA_ARCHS", "80,86,89,90");
    let json =
        cmd!(sh, "cargo build --release --locked -p kiln-cli --bin kiln --message-format=json-render-diagnostics")
            .read()?;
    // Where cargo put the binary (it honours CARGO_TARGET_DIR and friends; `target/` may be wrong).
    let kiln = cargo_json::artifacts(&json)?
        .into_iter()
        .find(|a| a.target.name == "kiln" && a.target.kind.iter().any(|k| k == "bin"))
        .and_then(|a| a.executable)
        .ok_or("cargo built no `kiln` binary (no compiler-artifact message names one)")?;
    sh.remove_path("dist")?;
    sh.create_dir("dist")?;
    sh.copy_file(&kiln, "dist/kiln")?;
    cmd!(sh, "strip dist/kiln").run()?;
    let sums = sha256sums_line("kiln", &sh.read_binary_file("dist/kiln")?);
    sh.write_file("dist/SHA256SUMS", &sums)?;
    print!("dist/kiln and dist/SHA256SUMS:\n{sums}");
    Ok(())
}

/// One line of a `SHA256SUMS` file, as `sha256sum` writes it and `sha256sum -c` reads it
/// (run from the folder that holds `name`).
fn sha256sums_line(name: &str, bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}  {name}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn help_is_a_task_that_succeeds() {
        for args in ["", "help", "--help", "-h"] {
            assert_eq!(parse(&words(args)), Ok(Task::Help), "{args:?}");
            assert!(run(&words(args)).is_ok(), "{args:?}");
        }
    }

    #[test]
    fn tasks_and_their_arguments() {
        assert_eq!(parse(&words("ci")), Ok(Task::Ci));
        assert_eq!(parse(&words("dist")), Ok(Task::Dist));
        assert_eq!(parse(&words("package")), Ok(Task::Package));
        assert_eq!(parse(&words("cuda-setup")), Ok(Task::CudaSetup));
        let bundle = words("gpu-bundle --archs 90");
        assert_eq!(parse(&bundle), Ok(Task::GpuBundle(&bundle[1..])));
        let peers = words("peer-bundle --only cuda");
        assert_eq!(parse(&peers), Ok(Task::PeerBundle(&peers[1..])));
        let sass = words("sass field/bench.cu bench_fp_mul");
        assert_eq!(parse(&sass), Ok(Task::Sass(&sass[1..])));
    }

    #[test]
    fn errors_read_as_text() {
        let err = parse(&words("frobnicate")).unwrap_err();
        assert_eq!(err, "unknown task `frobnicate` (`cargo xtask --help` lists them)");
        assert_eq!(parse(&words("ci --fast")).unwrap_err(), "ci takes no arguments");
        // What main prints: Display, not Debug (no quotes, no escaped newlines).
        let shown = run(&words("frobnicate")).unwrap_err().to_string();
        assert!(!shown.contains('"') && !shown.contains("\\n"), "{shown}");
    }

    #[test]
    fn sha256sums_line_is_what_sha256sum_writes() {
        // `printf abc | sha256sum`
        assert_eq!(
            sha256sums_line("kiln", b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  kiln\n"
        );
    }
}
