//! `cargo xtask peer-bundle`: the peer benchmark (`peers/`, a workspace of its own) built twice
//! for the GPU machine — with bellperson's CUDA prover (feature `cuda`, ec-gpu-gen kernels) and
//! with supraseal-c2 (feature `supraseal`, sppark kernels) — stripped, with `run-peers.sh`, in
//! `peer-bundle.tar.xz`.
//!
//! Those builds call nvcc from build scripts that expect a CUDA toolkit's layout (nvcc.profile
//! reads `targets/x86_64-linux/{include,lib}` next to `bin/`, `include/cccl` for CUB/Thrust,
//! and cuda-driver-sys links `-lcuda`). The pinned PyPI compiler of `cargo xtask cuda-setup`
//! has none of that, so [`toolkit`] lays a folder of that shape around it: the compiler's
//! `bin/` copied (nvcc finds its profile and tools next to its own real path), the headers and
//! libraries linked, CCCL's headers from the `nvidia-cuda-cccl` wheel, and a link-time stub of
//! the driver library (`lib64/stubs/libcuda.so`, soname `libcuda.so.1`, one empty function per
//! driver API name of `cuda.h`): the real driver's `libcuda.so.1` is what the binaries load on
//! the GPU machine; the stub is never shipped.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::{Result, cargo_json, cuda};

const BUNDLE: &str = "peer-bundle";
const ARCHIVE: &str = "peer-bundle.tar.xz";
/// The toolkit-shaped folder, under the workspace's (ignored) `.cuda/`.
const TOOLKIT: &str = ".cuda/peers-toolkit";
/// CCCL's headers (CUB, Thrust, libcu++) of the same CUDA 13.0 as the pinned nvcc.
const CCCL_WHEEL: &str = "nvidia-cuda-cccl==13.0.85";
/// ec-gpu-gen's nvcc arguments: its default targets sm_75/80/86 only; the H200 is sm_90.
const EC_GPU_NVCC_ARGS: &str =
    "--optimize=6 --threads=0 --fatbin --gpu-architecture=sm_90 --generate-code=arch=compute_90,code=sm_90";
/// sppark's build adds sm_80 (+ PTX), sm_75, compute_100 and sm_120; nvcc appends this to
/// every call, so supraseal-c2 also has SASS for the H200.
const SUPRASEAL_NVCC_APPEND: &str = "-gencode arch=compute_90,code=sm_90";
/// The archive and the kiln GPU bundle travel together within the device tool's 64 MiB.
const MAX_BYTES: u64 = 48 << 20;

/// One peer binary: the cargo feature and the name it has in the bundle.
struct Flavour {
    feature: &'static str,
    binary: &'static str,
}

const FLAVOURS: &[Flavour] = &[
    Flavour { feature: "cuda", binary: "kiln-peers-cuda" },
    Flavour { feature: "supraseal", binary: "kiln-peers-supraseal" },
];

const USAGE: &str = "usage: cargo xtask peer-bundle [--only cuda|supraseal]";

pub fn peer_bundle(sh: &Shell, args: &[String]) -> Result {
    let flavours: Vec<&Flavour> = match args {
        [] => FLAVOURS.iter().collect(),
        [flag, only] if flag == "--only" => {
            let f = FLAVOURS.iter().find(|f| f.feature == only).ok_or_else(|| format!("{only:?}: {USAGE}"))?;
            vec![f]
        }
        _ => return Err(USAGE.into()),
    };
    let root = sh.current_dir();
    let nvcc = cuda::find_nvcc(sh)?;
    let toolkit = toolkit(sh, &nvcc)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![toolkit.join("bin")];
    paths.extend(std::env::split_paths(&path));
    let _path = sh.push_env("PATH", std::env::join_paths(paths)?);
    let _cuda_path = sh.push_env("CUDA_PATH", &toolkit);
    let _cuda_home = sh.push_env("CUDA_HOME", &toolkit);
    let _cuda_lib = sh.push_env("CUDA_LIBRARY_PATH", &toolkit);
    let _ec_gpu = sh.push_env("EC_GPU_CUDA_NVCC_ARGS", EC_GPU_NVCC_ARGS);
    let _flags = sh.push_env("CARGO_ENCODED_RUSTFLAGS", remap_flags(&root, &toolkit));

    sh.remove_path(BUNDLE)?;
    sh.create_dir(format!("{BUNDLE}/bin"))?;
    let nvcc_append = supraseal_nvcc_append(&cargo_home());
    for f in flavours {
        let feature = f.feature;
        let _append = (feature == "supraseal").then(|| sh.push_env("NVCC_APPEND_FLAGS", &nvcc_append));
        println!("peer-bundle: building kiln-peers --features {feature} (sm_90; ~10 minutes on 2 cores)");
        let json = cmd!(
            sh,
            "cargo build --release --locked --manifest-path peers/Cargo.toml --features {feature} --message-format=json-render-diagnostics"
        )
        .read()?;
        let exe = cargo_json::artifacts(&json)?
            .into_iter()
            .find(|a| a.target.name == "kiln-peers" && a.kind() == "bin")
            .and_then(|a| a.executable)
            .ok_or("cargo built no `kiln-peers` binary (no compiler-artifact message names one)")?;
        let dest = format!("{BUNDLE}/bin/{}", f.binary);
        sh.copy_file(&exe, &dest)?;
        cmd!(sh, "strip {dest}").run()?;
        report_paths(&dest, &[&root, &toolkit, &cargo_home(), &home()])?;
    }
    sh.write_file(format!("{BUNDLE}/run-peers.sh"), sh.read_file("peers/run-peers.sh")?)?;
    cmd!(sh, "chmod +x {BUNDLE}/run-peers.sh").run()?;
    let _xz = sh.push_env("XZ_OPT", "-9 -T1");
    cmd!(sh, "tar -cJf {ARCHIVE}.tmp {BUNDLE}").run()?;
    std::fs::rename(format!("{ARCHIVE}.tmp"), ARCHIVE)?;
    let bytes = std::fs::metadata(ARCHIVE)?.len();
    println!("peer-bundle: {ARCHIVE} is {:.1} MiB", bytes as f64 / (1 << 20) as f64);
    if bytes > MAX_BYTES {
        return Err(format!("{ARCHIVE} is {} MiB, over {} MiB", bytes >> 20, MAX_BYTES >> 20).into());
    }
    println!(
        "\nOn the GPU machine (device tool `run`), with kiln's bundle from `cargo xtask gpu-bundle`, carry \
         [\"bundle.tar.xz\", \"{ARCHIVE}\"] and run:\n  \
         set -o pipefail; tar -xJf bundle.tar.xz && tar -xJf {ARCHIVE} && bash {BUNDLE}/run-peers.sh 2>&1 | tee $OUT/peers.log\n\
         (`bash {BUNDLE}/run-peers.sh help` for the cells and the environment that selects them)"
    );
    Ok(())
}

/// NVCC_APPEND_FLAGS of the supraseal build: sm_90 SASS, and the crate sources' folder written
/// as `/cargo` in the `__FILE__` strings of sppark's host code (gcc's -ffile-prefix-map; nvcc
/// splits this variable at spaces, so a folder with one is left as it is).
fn supraseal_nvcc_append(cargo_home: &Path) -> String {
    let home = cargo_home.display().to_string();
    if home.contains(char::is_whitespace) || home.contains(',') {
        return SUPRASEAL_NVCC_APPEND.to_string();
    }
    format!("{SUPRASEAL_NVCC_APPEND} -Xcompiler -ffile-prefix-map={home}=/cargo")
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME").map(PathBuf::from).unwrap_or_else(|| home().join(".cargo"))
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"))
}

/// rustc flags that write the machine's folders as neutral prefixes into what it compiles
/// (panic locations, debug info): the workspace, cargo's home (crate sources), the toolkit.
fn remap_flags(root: &Path, toolkit: &Path) -> String {
    let cargo_home = cargo_home();
    let mut flags: Vec<String> = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .ok()
        .filter(|f| !f.is_empty())
        .map(|f| f.split('\x1f').map(String::from).collect())
        .unwrap_or_default();
    // The toolkit lies under the workspace: most specific first (rustc takes the last match,
    // so it is listed last).
    for (from, to) in [(cargo_home.as_path(), "/cargo"), (root, "/kiln"), (toolkit, "/cuda")] {
        flags.push(format!("--remap-path-prefix={}={to}", from.display()));
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        flags.push(format!("--remap-path-prefix={}=/target", PathBuf::from(target).display()));
    }
    flags.join("\x1f")
}

/// Says which of `paths` still appear in the binary `file` (C++ objects compiled by nvcc keep
/// `__FILE__` strings; rustc's remapping does not reach them).
fn report_paths(file: &str, paths: &[&Path]) -> Result {
    let bytes = std::fs::read(file)?;
    for p in paths {
        let needle = p.display().to_string();
        let count = bytes.windows(needle.len()).filter(|w| *w == needle.as_bytes()).count();
        if count > 0 {
            println!("peer-bundle: warning: {file} still names {needle} {count} times");
        }
    }
    Ok(())
}

/// The toolkit-shaped folder around `nvcc` (see the module docs); made once, remade when
/// `nvcc` changes. A real toolkit (one with `targets/x86_64-linux/include/cccl`) is used as it is.
pub fn toolkit(sh: &Shell, nvcc: &Path) -> Result<PathBuf> {
    let cuda = nvcc.parent().and_then(Path::parent).ok_or_else(|| format!("{}: no toolkit folder", nvcc.display()))?;
    if cuda.join("targets/x86_64-linux/include/cccl").is_dir() && cuda.join("lib64/stubs/libcuda.so").is_file() {
        return Ok(cuda.to_path_buf());
    }
    for needed in ["bin/nvcc.profile", "include/cuda.h", "lib", "nvvm"] {
        if !cuda.join(needed).exists() {
            return Err(
                format!("{}: no {needed}: not the pip layout of `cargo xtask cuda-setup`", cuda.display()).into()
            );
        }
    }
    let dir = sh.current_dir().join(TOOLKIT);
    let marker = dir.join("made-from");
    let made_from = format!("{}\n{CCCL_WHEEL}\n", cuda.display());
    if sh.read_file(&marker).ok().as_deref() == Some(made_from.as_str()) {
        return Ok(dir);
    }
    println!("peer-bundle: laying a CUDA toolkit folder around {} in {TOOLKIT}", nvcc.display());
    sh.remove_path(&dir)?;
    let target = dir.join("targets/x86_64-linux");
    for sub in ["include", "lib/stubs"] {
        sh.create_dir(target.join(sub))?;
    }
    // nvcc reads nvcc.profile beside its real path and finds ptxas, cudafe++ etc. there: copied.
    let bin = cuda.join("bin");
    cmd!(sh, "cp -a {bin} {dir}/bin").run()?;
    symlink(&cuda.join("nvvm"), &dir.join("nvvm"))?;
    symlink(&cuda.join("lib"), &dir.join("lib"))?;
    for entry in sh.read_dir(cuda.join("include"))? {
        symlink(&entry, &target.join("include").join(entry.file_name().ok_or("a header without a name")?))?;
    }
    for entry in sh.read_dir(cuda.join("lib"))? {
        symlink(&entry, &target.join("lib").join(entry.file_name().ok_or("a library without a name")?))?;
    }
    // `-lcudart` for a shared runtime needs the unversioned name.
    if let Some(cudart) = sh
        .read_dir(cuda.join("lib"))?
        .into_iter()
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libcudart.so.")))
    {
        symlink(&cudart, &target.join("lib/libcudart.so"))?;
    }
    symlink(Path::new("targets/x86_64-linux/include"), &dir.join("include"))?;
    symlink(Path::new("targets/x86_64-linux/lib"), &dir.join("lib64"))?;

    // CCCL from its wheel (a zip): downloaded with pip, unpacked with Python's zipfile.
    let wheels = dir.join("wheels");
    cmd!(sh, "python3 -m pip download --disable-pip-version-check --quiet --no-deps -d {wheels} {CCCL_WHEEL}").run()?;
    let wheel = sh
        .read_dir(&wheels)?
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| format!("pip downloaded no wheel of {CCCL_WHEEL} into {}", wheels.display()))?;
    let unpacked = dir.join("cccl");
    cmd!(sh, "python3 -m zipfile -e {wheel} {unpacked}").run()?;
    let cccl = unpacked.join("nvidia/cu13/include/cccl");
    if !cccl.is_dir() {
        return Err(format!("{CCCL_WHEEL} has no nvidia/cu13/include/cccl").into());
    }
    symlink(&cccl, &target.join("include/cccl"))?;

    // The driver-API stub: every `cu[A-Z]…` name of cuda.h (the versioned `_v2` names too:
    // they appear in its #defines) as an empty function.
    let header = sh.read_file(cuda.join("include/cuda.h"))?;
    let stub_c = dir.join("libcuda-stub.c");
    sh.write_file(&stub_c, stub_source(&header))?;
    let stub = target.join("lib/stubs/libcuda.so");
    cmd!(sh, "cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o {stub} {stub_c}").run()?;
    sh.write_file(&marker, made_from)?;
    Ok(dir)
}

fn symlink(original: &Path, link: &Path) -> Result {
    std::os::unix::fs::symlink(original, link)
        .map_err(|e| format!("symlink {} -> {}: {e}", link.display(), original.display()).into())
}

/// C source defining one empty function per driver API name in `header` (identifiers
/// `cu` + an upper-case letter + word characters), each once, in order of appearance.
fn stub_source(header: &str) -> String {
    let mut names: Vec<&str> = Vec::new();
    let bytes = header.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if word(bytes[i]) {
            let start = i;
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            let ident = &header[start..i];
            if ident.len() > 2
                && ident.starts_with("cu")
                && ident.as_bytes()[2].is_ascii_uppercase()
                && !names.contains(&ident)
            {
                names.push(ident);
            }
        } else {
            i += 1;
        }
    }
    let mut c = String::from(
        "/* Link-time stub of the CUDA driver API, generated from cuda.h by `cargo xtask peer-bundle`. */\n",
    );
    for n in names {
        c += &format!("void {n}(void) {{}}\n");
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stub_names_every_driver_call_once() {
        let header = "#define cuMemAlloc cuMemAlloc_v2\nCUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t n);\n\
                      CUresult CUDAAPI cuInit(unsigned int Flags); typedef int cuuint32_t; cudaError_t x;";
        assert_eq!(
            stub_source(header).lines().skip(1).collect::<Vec<_>>(),
            ["void cuMemAlloc(void) {}", "void cuMemAlloc_v2(void) {}", "void cuInit(void) {}"]
        );
    }

    #[test]
    fn supraseal_flags_remap_the_crate_sources() {
        assert_eq!(
            supraseal_nvcc_append(Path::new("/h/.cargo")),
            "-gencode arch=compute_90,code=sm_90 -Xcompiler -ffile-prefix-map=/h/.cargo=/cargo"
        );
        assert_eq!(supraseal_nvcc_append(Path::new("/my home/.cargo")), SUPRASEAL_NVCC_APPEND);
    }

    #[test]
    fn remapping_keeps_existing_flags() {
        let flags = remap_flags(Path::new("/w"), Path::new("/w/.cuda/peers-toolkit"));
        let parts: Vec<&str> = flags.split('\x1f').collect();
        assert!(parts.contains(&"--remap-path-prefix=/w=/kiln"), "{parts:?}");
        assert!(parts.contains(&"--remap-path-prefix=/w/.cuda/peers-toolkit=/cuda"), "{parts:?}");
    }
}
