//! Finding nvcc, and installing the pinned CUDA 13.0 compiler from PyPI where none is.

use std::path::PathBuf;

use xshell::{Shell, cmd};

use crate::Result;

/// The wheels that make a working nvcc 13.0 (pin all four: unpinned, pip pulls newer
/// parts that a CUDA 13.0 driver cannot load).
const WHEELS: &[&str] =
    &["nvidia-cuda-nvcc==13.0.88", "nvidia-nvvm==13.0.88", "nvidia-cuda-crt==13.0.88", "nvidia-cuda-runtime==13.0.96"];

const VENV: &str = ".cuda/venv";

/// `(major, minor)` from `nvcc --version` ("... release 13.0, V13.0.88").
fn nvcc_release(sh: &Shell, nvcc: &PathBuf) -> Option<(u32, u32)> {
    let out = cmd!(sh, "{nvcc} --version").quiet().ignore_stderr().read().ok()?;
    let rel = out.split("release ").nth(1)?;
    let (major, rest) = rel.split_once('.')?;
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((major.trim().parse().ok()?, minor.parse().ok()?))
}

/// nvcc in the order kiln-kernels' build script looks, with the project's own install last.
pub fn find_nvcc(sh: &Shell) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(p) = std::env::var("KILN_NVCC") {
        candidates.push(p.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(d) = std::env::var_os(var) {
            candidates.push(PathBuf::from(d).join("bin/nvcc"));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    candidates.push("/usr/local/cuda/bin/nvcc".into());
    candidates.extend(venv_nvcc(sh));
    candidates.into_iter().find(|p| p.is_file() && nvcc_release(sh, p).is_some_and(|v| v >= (13, 0)))
}

fn venv_nvcc(sh: &Shell) -> Option<PathBuf> {
    let lib = sh.current_dir().join(VENV).join("lib");
    std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/bin/nvcc"))
        .find(|p| p.is_file())
        .map(|p| p.canonicalize().unwrap_or(p))
}

/// Makes sure an nvcc of CUDA 13.0 or newer is available; returns its path. Idempotent.
pub fn setup(sh: &Shell) -> Result<PathBuf> {
    if let Some(nvcc) = find_nvcc(sh) {
        println!("cuda-setup: using existing CUDA toolkit");
        return Ok(nvcc);
    }
    println!("cuda-setup: installing {} into {VENV}", WHEELS.join(" "));
    let python = if cmd!(sh, "python3 --version").quiet().ignore_stdout().ignore_stderr().run().is_ok() {
        "python3"
    } else {
        "python"
    };
    cmd!(sh, "{python} -m venv {VENV}").run()?;
    let pip = format!("{VENV}/bin/pip");
    cmd!(sh, "{pip} install --disable-pip-version-check --quiet {WHEELS...}").run()?;
    let nvcc = venv_nvcc(sh).ok_or("the nvcc wheels installed but nvcc was not found in them")?;
    let release = nvcc_release(sh, &nvcc).ok_or_else(|| format!("{} does not run", nvcc.display()))?;
    println!("cuda-setup: nvcc {}.{} installed; kiln-kernels finds it without further setup", release.0, release.1);
    Ok(nvcc)
}
