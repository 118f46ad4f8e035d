//! `cargo xtask gpu-bundle`: everything the GPU machine needs, in one folder.
//!
//! The GPU machine has the CUDA driver but no Rust: we build release test and bench
//! binaries here (with the kernels for its architecture embedded), strip them, and add
//! a `run.sh` that runs them there.

use xshell::{Shell, cmd};

use crate::{Result, cargo_json, cuda};

const BUNDLE: &str = "bundle";
/// What travels to the GPU machine: `bundle/` as one compressed archive.
const ARCHIVE: &str = "bundle.tar.xz";
/// The archive must fit in the device tool's 64 MiB carry limit with room to spare.
const MAX_BYTES: u64 = 60 << 20;

/// Packages whose test binaries hold GPU tests (those depending on kiln-cuda).
const GPU_PACKAGES: &[&str] = &[
    "kiln-kernels",
    "kiln-cuda",
    "kiln-field",
    "kiln-vram",
    "kiln-lock",
    "kiln-ntt",
    "kiln-msm",
    "kiln-groth16",
    "kiln-sched",
];

pub fn gpu_bundle(sh: &Shell, args: &[String]) -> Result {
    let mut archs = "90".to_string();
    let mut packages: Vec<String> = GPU_PACKAGES.iter().map(|p| p.to_string()).collect();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match (flag.as_str(), rest.next()) {
            ("--archs", Some(value)) => archs = value.clone(),
            ("--packages", Some(value)) => packages = value.split(',').map(str::to_string).collect(),
            _ => return Err("usage: cargo xtask gpu-bundle [--archs 90] [--packages kiln-cuda,kiln-field]".into()),
        }
    }
    let nvcc = cuda::find_nvcc(sh)?;
    let _nvcc = sh.push_env("KILN_NVCC", &nvcc);
    let _require = sh.push_env("KILN_REQUIRE_KERNELS", "1");
    let _archs = sh.push_env("KILN_CUDA_ARCHS", &archs);

    let mut pkgs = Vec::new();
    for p in &packages {
        pkgs.push("-p".to_string());
        pkgs.push(p.clone());
    }
    println!("gpu-bundle: building release test binaries (kernels for sm_{archs})");
    let tests =
        cmd!(sh, "cargo test --release --locked {pkgs...} --no-run --message-format=json-render-diagnostics").read()?;
    println!("gpu-bundle: building the kiln CLI and benches");
    let cli = cmd!(sh, "cargo build --release --locked -p kiln-cli --bins --message-format=json-render-diagnostics")
        .read()?;
    let benches = if packages.len() == GPU_PACKAGES.len() {
        cmd!(sh, "cargo bench --locked -p kiln-benches --no-run --message-format=json-render-diagnostics").read()?
    } else {
        String::new()
    };

    sh.remove_path(BUNDLE)?;
    for dir in ["tests", "bin", "benches", "fatbin"] {
        sh.create_dir(format!("{BUNDLE}/{dir}"))?;
    }
    let mut gpu_tests = 0usize;
    for a in cargo_json::artifacts(&tests)? {
        // Keep only binaries that hold ignored (GPU) tests; listing them needs no GPU.
        let Some(exe) = &a.executable else { continue };
        // bellperson's verifier over saved proofs, for the large runs no test covers.
        if a.kind() == "example" && a.target.name == "bellperson_verify" {
            sh.copy_file(exe, format!("{BUNDLE}/bin/bellperson_verify"))?;
            continue;
        }
        let listed =
            cmd!(sh, "{exe} --list --ignored --format terse").quiet().ignore_stderr().read().unwrap_or_default();
        let count = listed.lines().filter(|l| l.ends_with(": test")).count();
        if count == 0 {
            continue;
        }
        gpu_tests += count;
        let name = format!("{}-{}-{}", a.package(), a.kind(), a.target.name);
        sh.copy_file(exe, format!("{BUNDLE}/tests/{name}"))?;
    }
    for a in cargo_json::artifacts(&cli)?.into_iter().filter(|a| a.kind() == "bin") {
        if let Some(exe) = &a.executable {
            sh.copy_file(exe, format!("{BUNDLE}/bin/{}", a.target.name))?;
        }
    }
    for a in cargo_json::artifacts(&benches)?.into_iter().filter(|a| a.kind() == "bench") {
        if let Some(exe) = &a.executable {
            sh.copy_file(exe, format!("{BUNDLE}/benches/{}", a.target.name))?;
        }
    }
    // The fatbins themselves, for `run.sh sass` (cuobjdump lives on the GPU machine): from the
    // OUT_DIR of the kiln-kernels build the test binaries embed.
    if let Some(out) = cargo_json::out_dir(&tests, "kiln-kernels")? {
        for f in sh.read_dir(&out)?.into_iter().filter(|f| f.extension().is_some_and(|e| e == "fatbin")) {
            sh.copy_file(&f, format!("{BUNDLE}/fatbin/"))?;
        }
    }
    let files: Vec<String> = sh
        .read_dir(BUNDLE)?
        .iter()
        .flat_map(|d| sh.read_dir(d).unwrap_or_default())
        .map(|p| p.display().to_string())
        .collect();
    let to_strip: Vec<&String> = files.iter().filter(|f| !f.ends_with(".fatbin")).collect();
    if !to_strip.is_empty() {
        cmd!(sh, "strip {to_strip...}").run()?;
    }
    sh.write_file(format!("{BUNDLE}/run.sh"), RUN_SH)?;
    for script in ["service.sh", "orchestrator.sh", "partition.sh"] {
        sh.copy_file(format!("benches/{script}"), format!("{BUNDLE}/{script}"))?;
        cmd!(sh, "chmod +x {BUNDLE}/{script}").run()?;
    }
    cmd!(sh, "chmod +x {BUNDLE}/run.sh").run()?;
    let bytes: u64 = files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).sum();
    // Every binary embeds every fatbin (~15 MiB), so the folder is large but repetitive: one
    // solid xz stream with a dictionary larger than a binary stores the kernels about once.
    println!("gpu-bundle: compressing {:.1} MiB into {ARCHIVE} (solid xz, ~1 min)", bytes as f64 / (1 << 20) as f64);
    let _xz = sh.push_env("XZ_OPT", "-9 -T1");
    cmd!(sh, "tar -cJf {ARCHIVE}.tmp {BUNDLE}").run()?;
    std::fs::rename(format!("{ARCHIVE}.tmp"), ARCHIVE)?;
    let archive_bytes = std::fs::metadata(ARCHIVE)?.len();
    println!(
        "gpu-bundle: {} files, {gpu_tests} GPU tests; {ARCHIVE} is {:.1} MiB",
        files.len(),
        archive_bytes as f64 / (1 << 20) as f64
    );
    if archive_bytes > MAX_BYTES {
        return Err(format!("{ARCHIVE} is {} MiB, over the 60 MiB limit", archive_bytes >> 20).into());
    }
    println!(
        "\nOn the GPU machine (device tool `run`), carry [\"{ARCHIVE}\"] and run:\n  \
         set -o pipefail; tar -xJf {ARCHIVE} && bash {BUNDLE}/run.sh all 2>&1 | tee $OUT/gpu.log\n\
         (or `run.sh test`, `run.sh sanitize`, `run.sh bench` alone; KILN_KEEP_GOING=1 to run past failures)"
    );
    Ok(())
}

const RUN_SH: &str = r#"#!/usr/bin/env bash
# kiln GPU bundle. Usage: run.sh test | sanitize | bench | service | orchestrator | partition | sass [dir] | all
#   test      every GPU test (--ignored) with KILN_REQUIRE_GPU=1; stops at the first failing
#             binary (KILN_KEEP_GOING=1 runs them all and lists the failing ones)
#   sanitize  the same under compute-sanitizer memcheck, at small sizes (KILN_TEST_SMALL=1)
#   bench     every benchmark binary
#   service   kiln serve against the orchestrator on porep 2^22 (service.sh: LOG, N, Q, CJ, OUT)
#   orchestrator  porep 2^24 x10 at 1..4 workers, then under 24G and 16G budgets
#             (orchestrator.sh: LOG, N, WORKERS, ROUNDS, BUDGETS, OUT)
#   partition porep 2^27: ten partitions through the orchestrator, then one alone, memory
#             sampled, proofs checked by bellperson (partition.sh: LOG, N, WORKERS, RUNS, ARGS, OUT)
#   sass      per-kernel registers/stack/shared memory of every fatbin (cuobjdump), and the
#             SASS of the field/curve bench kernels into sass-field_bench.txt (or $2/...)
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-test}
export KILN_REQUIRE_GPU=1
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

run_tests() { # $1 = label, rest = prefix command
    local label=$1; shift
    local bins=0 passed=0 failed="" log
    log=$(mktemp)
    for t in "$here"/tests/*; do
        echo "== $label $(basename "$t")"
        if "$@" "$t" --ignored --test-threads=1 2>&1 | tee "$log"; then
            bins=$((bins + 1))
        elif [ "${KILN_KEEP_GOING:-0}" = 1 ]; then
            failed="$failed $(basename "$t")"
        else
            echo "SUMMARY $label: FAILED in $(basename "$t") ($passed tests passed before it)"
            return 1
        fi
        passed=$((passed + $(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')))
    done
    if [ -n "$failed" ]; then
        echo "SUMMARY $label: FAILED in$failed ($passed tests passed in all binaries)"
        return 1
    fi
    echo "SUMMARY $label: ok, $passed GPU tests passed in $bins binaries"
}

run_benches() {
    local failed=""
    for b in "$here"/benches/*; do
        [ -e "$b" ] || continue
        echo "== bench $(basename "$b")"
        if ! "$b" --bench; then
            failed="$failed $(basename "$b")"
            [ "${KILN_KEEP_GOING:-0}" = 1 ] || break
        fi
    done
    [ -z "$failed" ] || { echo "SUMMARY bench: FAILED in$failed"; return 1; }
    echo "SUMMARY bench: done"
}

case $mode in
    test) nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader 2>/dev/null
          "$here/bin/kiln" devices; run_tests test ;;
    sanitize) # Tests that provoke API errors on purpose (OOM, missing kernel) are not memory errors.
              KILN_TEST_SMALL=1 run_tests sanitize "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 99 ;;
    bench) run_benches ;;
    service) bash "$here/service.sh" ;;
    orchestrator) bash "$here/orchestrator.sh" ;;
    partition) BELLPERSON_VERIFY=${BELLPERSON_VERIFY:-$here/bin/bellperson_verify} bash "$here/partition.sh" ;;
    sass) cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
          for f in "$here"/fatbin/*.fatbin; do echo "== $(basename "$f")"; "$cuobjdump" --dump-resource-usage "$f"; done
          "$cuobjdump" --dump-sass "$here/fatbin/field_bench.fatbin" > "${2:-.}/sass-field_bench.txt" ;;
    all) "$0" test && "$0" sanitize; s=$?; "$0" bench; exit $s ;;
    *) echo "usage: run.sh test | sanitize | bench | service | orchestrator | partition | sass [dir] | all"; exit 2 ;;
esac
"#;
