//! Finding nvcc: the one search and version check that `kiln-kernels`' build script and
//! `cargo xtask` share (so a toolkit one of them accepts, the other does not reject).
//!
//! [`find`] looks, in order, at `KILN_NVCC`, `CUDA_HOME`/`CUDA_PATH` (`bin/nvcc`), every
//! `PATH` entry, `/usr/local/cuda/bin/nvcc`, then the pinned toolchain `cargo xtask
//! cuda-setup` installs under `<workspace>/.cuda/venv`. A candidate counts only if
//! `nvcc --version` runs and reports [`MIN_RELEASE`] or newer. `KILN_NVCC` is not a hint:
//! an unusable one is an error ([`FindError::Override`]), never skipped.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The oldest nvcc kiln's kernels and cudarc bindings (`cuda-13000`) accept.
pub const MIN_RELEASE: Release = Release { major: 13, minor: 0 };

/// The environment variables [`find`] reads (a build script reruns when one changes).
pub const ENV_VARS: &[&str] = &["KILN_NVCC", "CUDA_HOME", "CUDA_PATH", "PATH"];

/// Where `cargo xtask cuda-setup` installs the pinned toolchain, relative to the workspace.
pub const VENV: &str = ".cuda/venv";

/// A CUDA release, as `nvcc --version` reports it ("release 13.0").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    /// e.g. 13.
    pub major: u32,
    /// e.g. 0.
    pub minor: u32,
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A usable nvcc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nvcc {
    /// The executable.
    pub path: PathBuf,
    /// Its CUDA release (at least [`MIN_RELEASE`]).
    pub release: Release,
}

/// Why a candidate nvcc was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// No file there.
    Missing,
    /// `nvcc --version` could not be run or failed (the OS error or exit status).
    DoesNotRun(String),
    /// It ran, but its output names no "release X.Y".
    NoRelease,
    /// Older than [`MIN_RELEASE`].
    TooOld(Release),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing => write!(f, "no such file"),
            Problem::DoesNotRun(why) => write!(f, "`nvcc --version` failed: {why}"),
            Problem::NoRelease => write!(f, "`nvcc --version` names no release"),
            Problem::TooOld(r) => write!(f, "CUDA {r} is older than {MIN_RELEASE}"),
        }
    }
}

/// No usable nvcc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindError {
    /// `KILN_NVCC` names an nvcc that cannot be used.
    Override {
        /// The value of `KILN_NVCC`.
        path: PathBuf,
        /// What is wrong with it.
        problem: Problem,
    },
    /// No candidate works. `rejected`: those that exist but were not taken, and why.
    NotFound {
        /// Existing candidates that failed the check.
        rejected: Vec<(PathBuf, Problem)>,
    },
}

impl fmt::Display for FindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindError::Override { path, problem } => write!(f, "KILN_NVCC={}: {problem}", path.display()),
            FindError::NotFound { rejected } => {
                write!(
                    f,
                    "no nvcc of CUDA {MIN_RELEASE}+ (looked at KILN_NVCC, CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda, {VENV})"
                )?;
                for (path, problem) in rejected {
                    write!(f, "; skipped {}: {problem}", path.display())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for FindError {}

/// `(major, minor)` from `nvcc --version` output ("... release 13.0, V13.0.88").
pub fn parse_release(version_output: &str) -> Option<Release> {
    let rel = version_output.split("release ").nth(1)?;
    let (major, rest) = rel.split_once('.')?;
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(Release { major: major.trim().parse().ok()?, minor: minor.parse().ok()? })
}

/// Whether `path` is an nvcc kiln can use: it runs and is [`MIN_RELEASE`] or newer.
pub fn check(path: &Path) -> Result<Nvcc, Problem> {
    if !path.is_file() {
        return Err(Problem::Missing);
    }
    let out = Command::new(path).arg("--version").output().map_err(|e| Problem::DoesNotRun(e.to_string()))?;
    if !out.status.success() {
        return Err(Problem::DoesNotRun(out.status.to_string()));
    }
    let release = parse_release(&String::from_utf8_lossy(&out.stdout)).ok_or(Problem::NoRelease)?;
    if release < MIN_RELEASE {
        return Err(Problem::TooOld(release));
    }
    Ok(Nvcc { path: path.to_path_buf(), release })
}

/// The nvcc of the pinned toolchain under `<workspace>/.cuda/venv`, if it is installed.
pub fn venv_nvcc(workspace: &Path) -> Option<PathBuf> {
    std::fs::read_dir(workspace.join(VENV).join("lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/bin/nvcc"))
        .find(|p| p.is_file())
        .map(|p| p.canonicalize().unwrap_or(p))
}

/// The places looked at after `KILN_NVCC`, in order.
fn candidates(workspace: &Path) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|d| PathBuf::from(d).join("bin/nvcc"))
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    candidates.push("/usr/local/cuda/bin/nvcc".into());
    candidates.extend(venv_nvcc(workspace));
    candidates
}

/// The nvcc to use (module docs: the order and the check). `workspace` is where `.cuda/`
/// may be: the repository root.
pub fn find(workspace: &Path) -> Result<Nvcc, FindError> {
    if let Some(path) = std::env::var_os("KILN_NVCC") {
        let path = PathBuf::from(path);
        return check(&path).map_err(|problem| FindError::Override { path, problem });
    }
    let mut rejected = Vec::new();
    for path in candidates(workspace) {
        match check(&path) {
            Ok(nvcc) => return Ok(nvcc),
            Err(Problem::Missing) => {}
            Err(problem) if !rejected.iter().any(|(p, _)| p == &path) => rejected.push((path, problem)),
            Err(_) => {}
        }
    }
    Err(FindError::NotFound { rejected })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_from_version_output() {
        let out = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n";
        assert_eq!(parse_release(out), Some(Release { major: 13, minor: 0 }));
        assert_eq!(parse_release("release 12.4, V12.4.131"), Some(Release { major: 12, minor: 4 }));
        assert_eq!(parse_release("release 13.10, V13.10.1"), Some(Release { major: 13, minor: 10 }));
        assert_eq!(parse_release("no version here"), None);
    }

    #[test]
    fn releases_order_numerically() {
        assert!(Release { major: 12, minor: 9 } < MIN_RELEASE);
        assert!(Release { major: 13, minor: 10 } > Release { major: 13, minor: 2 });
    }

    #[test]
    fn a_missing_or_broken_candidate_is_a_problem_not_a_panic() {
        assert_eq!(check(Path::new("/nonexistent/nvcc")), Err(Problem::Missing));
        // A file that is not an executable nvcc (this crate's manifest).
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        assert!(matches!(check(&manifest), Err(Problem::DoesNotRun(_))));
    }

    #[test]
    fn errors_name_the_override_and_the_skipped() {
        let e =
            FindError::Override { path: "/opt/nvcc".into(), problem: Problem::TooOld(Release { major: 12, minor: 4 }) };
        assert_eq!(e.to_string(), "KILN_NVCC=/opt/nvcc: CUDA 12.4 is older than 13.0");
        let e = FindError::NotFound { rejected: vec![("/usr/bin/nvcc".into(), Problem::NoRelease)] };
        assert!(e.to_string().ends_with("; skipped /usr/bin/nvcc: `nvcc --version` names no release"), "{e}");
    }
}
