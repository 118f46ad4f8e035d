//! `cargo xtask sass <layer>/<file>.cu [function ...]`: compile one kernel file for sm_90 here (no GPU
//! needed) and print, per kernel, the SASS instruction mix and ptxas' register, stack and spill
//! counts. The quick loop for kernel tuning: e.g. an Fp product that shows IMAD.HI.U32 and
//! IADD3.X instead of IMAD.WIDE.U32.X has lost its paired carry chains (kiln-field's README).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::{Result, cuda};

/// cuobjdump (and nvdisasm, which it runs) are not in the nvcc wheels; these are the oldest
/// CUDA 13 ones on PyPI (they read sm_90 cubins from nvcc 13.0 fine).
const SASS_WHEELS: &[&str] = &["nvidia-cuda-cuobjdump==13.2.51", "nvidia-cuda-nvdisasm==13.2.51"];

/// The kernel sources (kiln-kernels compiles them; `-I` root of every `#include`).
const KERNELS: &str = "crates/kiln-kernels/kernels";

/// `file` as given (relative to the workspace root, or absolute), else relative to [`KERNELS`]:
/// `field/bench.cu` and `crates/kiln-kernels/kernels/field/bench.cu` name the same file.
fn kernel_file(root: &Path, file: &str) -> Result<PathBuf> {
    [root.join(file), root.join(KERNELS).join(file)]
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| format!("no kernel file {file} (looked in the workspace root and in {KERNELS})").into())
}

/// The ptxas lines and SASS mix of one kernel.
#[derive(Default)]
struct Kernel {
    resources: Vec<String>,
    ops: BTreeMap<String, usize>,
}

pub fn sass(sh: &Shell, args: &[String]) -> Result {
    let (file, filters) = args.split_first().ok_or("usage: cargo xtask sass <layer>/<file>.cu [function ...]")?;
    let file = kernel_file(&sh.current_dir(), file)?;
    let nvcc = cuda::find_nvcc(sh)?;
    let cuobjdump = find_cuobjdump(sh, &nvcc)?;
    let stem = file.file_stem().and_then(|s| s.to_str()).ok_or("expected a .cu file")?;
    let out_dir = sh.current_dir().join("target/sass");
    sh.create_dir(&out_dir)?;
    let cubin = out_dir.join(format!("{stem}.cubin"));
    let ptxas = cmd!(sh, "{nvcc} --cubin -std=c++17 -O3 -arch=sm_90 -I {KERNELS} -Xptxas -v -o {cubin} {file}")
        .quiet()
        .read_stderr()?;
    // cuobjdump runs nvdisasm, found through PATH: the one beside it first.
    let bin = cuobjdump.parent().map(Path::to_path_buf).unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )?;
    let dump = cmd!(sh, "{cuobjdump} --dump-sass {cubin}").env("PATH", path).quiet().read()?;
    sh.write_file(out_dir.join(format!("{stem}.sass")), &dump)?;

    let mut kernels: BTreeMap<String, Kernel> = BTreeMap::new();
    // ptxas -v: "Compiling entry function 'name' for 'sm_90'" then its resource lines.
    let mut current = None;
    for line in ptxas.lines() {
        if let Some(name) = line.split("entry function '").nth(1).and_then(|s| s.split('\'').next()) {
            current = Some(name.to_string());
        } else if let Some(name) = &current
            && (line.contains("registers") || line.contains("stack frame"))
        {
            let info = line.split("info    : ").last().unwrap_or(line).trim().to_string();
            kernels.entry(name.clone()).or_default().resources.push(info);
        }
    }
    // cuobjdump: "Function : name", then "/*0a30*/  @P0 IMAD.WIDE.U32.X R2, ..." lines.
    let mut current = None;
    for line in dump.lines() {
        if let Some(name) = line.split("Function : ").nth(1) {
            current = Some(name.trim().to_string());
        } else if let (Some(name), Some(op)) = (&current, opcode(line)) {
            *kernels.entry(name.clone()).or_default().ops.entry(op).or_default() += 1;
        }
    }
    for (name, k) in kernels.iter().filter(|(n, _)| filters.is_empty() || filters.iter().any(|f| n.contains(f))) {
        let total: usize = k.ops.values().sum();
        let mut ops: Vec<_> = k.ops.iter().collect();
        ops.sort_by(|a, b| b.1.cmp(a.1));
        let top: Vec<String> = ops.iter().take(12).map(|(op, n)| format!("{op} {n}")).collect();
        println!("{name}: {total} instructions; {}", k.resources.join("; "));
        println!("    {}", top.join(", "));
    }
    println!("(SASS in {})", out_dir.join(format!("{stem}.sass")).display());
    Ok(())
}

/// The opcode of a SASS line (`/*0a30*/  @!P0 IMAD.WIDE.U32.X R2, ...`), without its predicate.
fn opcode(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("/*")?;
    let (addr, rest) = rest.split_once("*/")?;
    if !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let mut op = words.next()?;
    if op.starts_with('@') {
        op = words.next()?;
    }
    let op = op.trim_end_matches(';');
    op.starts_with(|c: char| c.is_ascii_uppercase()).then(|| op.to_string())
}

/// cuobjdump next to nvcc (a full toolkit), else installed from PyPI into the project's venv.
fn find_cuobjdump(sh: &Shell, nvcc: &Path) -> Result<PathBuf> {
    let beside = nvcc.with_file_name("cuobjdump");
    if beside.is_file() && nvcc.with_file_name("nvdisasm").is_file() {
        return Ok(beside);
    }
    let pip = sh.current_dir().join(".cuda/venv/bin/pip");
    if !pip.is_file() {
        return Err(
            "no cuobjdump next to nvcc and no .cuda/venv to install it into: run `cargo xtask cuda-setup`".into()
        );
    }
    println!("sass: installing {} into .cuda/venv", SASS_WHEELS.join(" "));
    cmd!(sh, "{pip} install --disable-pip-version-check --quiet {SASS_WHEELS...}").run()?;
    let lib = sh.current_dir().join(".cuda/venv/lib");
    std::fs::read_dir(lib)?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/bin/cuobjdump"))
        .find(|p| p.is_file())
        .ok_or_else(|| "the cuobjdump wheel installed but cuobjdump was not found in it".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_files_resolve_from_the_kernels_folder_or_the_root() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let short = kernel_file(&root, "field/bench.cu").unwrap();
        let long = kernel_file(&root, "crates/kiln-kernels/kernels/field/bench.cu").unwrap();
        assert_eq!(short.canonicalize().unwrap(), long.canonicalize().unwrap());
        assert!(kernel_file(&root, "field/nope.cu").unwrap_err().to_string().contains("no kernel file"));
    }
}
