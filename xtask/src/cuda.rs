//! Finding nvcc (through `kiln-nvcc`, as kiln-kernels does), and installing the pinned CUDA 13.0 compiler from PyPI where none is.

use std::path::PathBuf;

use kiln_nvcc::VENV;
use xshell::{Shell, cmd};

use crate::Result;

/// The wheels that make a working nvcc 13.0 (pin all four: unpinned, pip pulls newer
/// parts that a CUDA 13.0 driver cannot load).
const WHEELS: &[&str] =
    &["nvidia-cuda-nvcc==13.0.88", "nvidia-nvvm==13.0.88", "nvidia-cuda-crt==13.0.88", "nvidia-cuda-runtime==13.0.96"];

/// The nvcc kiln-kernels' build script would use (the same search: `kiln_nvcc::find`), or
/// an error that says what was looked at and how to fix it.
pub fn find_nvcc(sh: &Shell) -> Result<PathBuf> {
    kiln_nvcc::find(&sh.current_dir())
        .map(|nvcc| nvcc.path)
        .map_err(|e| format!("{e}: run `cargo xtask cuda-setup` first").into())
}

/// Makes sure an nvcc of CUDA 13.0 or newer is available; returns its path. Idempotent.
pub fn setup(sh: &Shell) -> Result<PathBuf> {
    match kiln_nvcc::find(&sh.current_dir()) {
        Ok(nvcc) => {
            println!("cuda-setup: using existing CUDA {} toolkit", nvcc.release);
            return Ok(nvcc.path);
        }
        // The user named an nvcc: installing another would hide their mistake.
        Err(e @ kiln_nvcc::FindError::Override { .. }) => return Err(e.into()),
        Err(kiln_nvcc::FindError::NotFound { .. }) => {}
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
    let nvcc =
        kiln_nvcc::venv_nvcc(&sh.current_dir()).ok_or("the nvcc wheels installed but nvcc was not found in them")?;
    let nvcc = kiln_nvcc::check(&nvcc).map_err(|problem| format!("{}: {problem}", nvcc.display()))?;
    println!("cuda-setup: nvcc {} installed; kiln-kernels finds it without further setup", nvcc.release);
    Ok(nvcc.path)
}
