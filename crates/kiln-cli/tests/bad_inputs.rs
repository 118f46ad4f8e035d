//! The `kiln` binary under hostile or careless use (issue 15): each test reproduces one
//! report against the built binary.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod common;

use common::{Scratch, kiln};

const PROOF_BYTES: usize = 192;

/// The circuit every test uses: small enough to prove in well under a second.
const CIRCUIT: [&str; 4] = ["--circuit", "mimc", "--log-size", "4"];

/// Runs `cmd` to the end. A hang guard, not a timing test: a command that has not finished
/// after `limit` is killed and the test fails, instead of the suite hanging.
fn run(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("kiln starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("kiln did not finish (blocked?); stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn kiln_run(args: &[&str]) -> Output {
    run(kiln().args(args), Duration::from_secs(300))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Fails unless `o` is a failure (not a panic) whose stderr contains every one of `needles`.
fn expect_error(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "expected a failure, got {:?}; stderr: {err}", o.status);
    assert!(!err.contains("panicked"), "panic: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

/// Parameters and two proofs (seeds 1 and 2) made once for all tests, in a folder that lives
/// as long as the test process.
struct Fixture {
    params: PathBuf,
    proofs: Vec<u8>,
}

fn fixture() -> &'static Fixture {
    static CELL: OnceLock<Fixture> = OnceLock::new();
    CELL.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kiln-cli-fixture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let params = dir.join("mimc.params");
        let o = kiln_run(&[&["setup"][..], &CIRCUIT, &["--out", s(&params)]].concat());
        assert!(o.status.success(), "setup: {}", stderr(&o));
        let proof = dir.join("two.proof");
        let o = prove(&params, &proof, &["--count", "2"]);
        assert!(o.status.success(), "prove: {}", stderr(&o));
        Fixture { params, proofs: std::fs::read(&proof).unwrap() }
    })
}

fn prove(params: &Path, out: &Path, extra: &[&str]) -> Output {
    kiln_run(&[&["prove"][..], &CIRCUIT, &["--params", s(params), "--out", s(out)], extra].concat())
}

fn verify(params: &Path, proof: &Path, extra: &[&str]) -> Output {
    kiln_run(&[&["verify"][..], &CIRCUIT, &["--params", s(params), "--proof", s(proof)], extra].concat())
}

/// Item 1: with bit 0x80 on the first point, `prove` wrote a proof that did not verify and
/// exited 0, and `verify` said "verification failed" instead of naming the point.
#[test]
fn a_flagged_point_is_named_by_prove_and_verify() {
    let f = fixture();
    let dir = Scratch::new("flagged");
    let mut bytes = std::fs::read(&f.params).unwrap();
    bytes[0] |= 0x80;
    let bad = dir.path("flagged.params");
    std::fs::write(&bad, &bytes).unwrap();
    let out = dir.path("out.proof");
    let o = prove(&bad, &out, &[]);
    expect_error(&o, &["vk.alpha_g1", "byte offset 0", "compression flag"]);
    assert!(!out.exists(), "a proof was written from bad parameters");
    let proof = dir.path("one.proof");
    std::fs::write(&proof, &f.proofs[..PROOF_BYTES]).unwrap();
    let o = verify(&bad, &proof, &[]);
    expect_error(&o, &["vk.alpha_g1", "compression flag"]);
    assert!(!stderr(&o).contains("did not verify"), "{}", stderr(&o));
}

/// Item 3: `--out` equal to `--params` (or a link to it) replaced the parameters with a
/// proof; `--out /dev/null` replaced the device as root.
#[test]
fn prove_refuses_outputs_that_are_inputs_or_devices() {
    let f = fixture();
    let dir = Scratch::new("same");
    let params = dir.path("p.params");
    std::fs::copy(&f.params, &params).unwrap();
    let link = dir.path("link.proof");
    std::os::unix::fs::symlink(&params, &link).unwrap();
    for out in [&params, &link] {
        let o = prove(&params, out, &[]);
        expect_error(&o, &["is the same file as the input", s(&params)]);
    }
    assert_eq!(std::fs::read(&params).unwrap(), std::fs::read(&f.params).unwrap(), "parameters changed");
    let o = prove(&params, Path::new("/dev/null"), &[]);
    expect_error(&o, &["/dev/null", "a character device", "regular file or a new path"]);
    let o = kiln_run(&[&["setup"][..], &CIRCUIT, &["--out", "/dev/null"]].concat());
    expect_error(&o, &["/dev/null", "a character device"]);
}

/// Item 4: `--count 18446744073709551615` panicked, `--count 1000000000` aborted on a 24 GB
/// allocation, `--count 0` wrote an empty file, `--repeat 0` ran once.
#[test]
fn counts_are_checked_before_any_work() {
    let f = fixture();
    let dir = Scratch::new("count");
    let out = dir.path("out.proof");
    for count in ["18446744073709551615", "1000000000", "1048577", "0"] {
        let o = prove(&f.params, &out, &["--count", count]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--count {count}: {:?}: {err}", o.status);
        assert!(err.contains("--count") && !err.contains("panicked"), "--count {count}: {err}");
        assert!(!out.exists(), "--count {count} wrote a file");
    }
    let o = verify(&f.params, &out, &["--count", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    for repeat in ["0", "1001"] {
        let o = kiln_run(&[&["bench"][..], &CIRCUIT, &["--repeat", repeat]].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--repeat {repeat}: {err}");
        assert!(err.contains("--repeat"), "--repeat {repeat}: {err}");
    }
}

/// `bench --partitions` runs a batch through the orchestrator; its worker count is checked
/// before any work.
#[test]
fn bench_partitions_go_through_the_orchestrator() {
    for workers in ["0", "65", "many"] {
        let o = kiln_run(&[&["bench"][..], &CIRCUIT, &["--partitions", "2", "--workers", workers]].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--workers {workers}: {err}");
        assert!(err.contains("--workers") && !err.contains("panicked"), "--workers {workers}: {err}");
    }
    for threads in ["0", "257", "all"] {
        let o = kiln_run(&[&["bench"][..], &CIRCUIT, &["--partitions", "2", "--witness-threads", threads]].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--witness-threads {threads}: {err}");
        assert!(err.contains("--witness-threads") && !err.contains("panicked"), "--witness-threads {threads}: {err}");
    }
    for devices in ["0,0", "x", "0,64"] {
        let o = kiln_run(&[&["bench"][..], &CIRCUIT, &["--partitions", "2", "--devices", devices]].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--devices {devices}: {err}");
        assert!(err.contains("--devices") && !err.contains("panicked"), "--devices {devices}: {err}");
    }
    let o = kiln_run(&[&["bench", "--backend", "cpu", "--partitions", "2", "--devices", "0"][..], &CIRCUIT].concat());
    assert!(!o.status.success() && stderr(&o).contains("--devices picks GPUs"), "{}", stderr(&o));
    // Two rounds of the batch in one process: one JSON object per round.
    let args = [
        "bench",
        "--backend",
        "cpu",
        "--partitions",
        "3",
        "--workers",
        "2",
        "--witness-threads",
        "1",
        "--repeat",
        "2",
        "--json",
    ];
    let o = kiln_run(&[&args[..], &CIRCUIT].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let rounds: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    for (i, v) in rounds.iter().enumerate() {
        assert_eq!(v["round"].as_u64(), Some(i as u64 + 1), "{v}");
        assert_eq!((v["partitions"].as_u64(), v["workers"].as_u64()), (Some(3), Some(2)), "{v}");
        assert_eq!(v["cpu_threads"].as_u64(), Some(1), "--witness-threads 1: {v}");
        assert_eq!(v["verified"], true, "{v}");
        let busy = v["busy_fraction"].as_f64().unwrap();
        assert!(busy > 0.0 && busy <= 1.0, "{v}");
    }
}

/// `bench --save-proofs DIR` writes the verifying key and the proofs (proof i for seed + i)
/// for another verifier, on the single-proof path and through the orchestrator; a DIR that is
/// not a folder is refused before any work.
#[test]
fn bench_saves_its_proofs_for_another_verifier() {
    use kiln_groth16::circuits::{Builtin, Kind};
    use kiln_groth16::{Proof, VerifyingKey, verify};

    let dir = Scratch::new("saved");
    let missing = dir.path("missing");
    let o = kiln_run(
        &[&["bench", "--backend", "cpu", "--repeat", "1", "--save-proofs", s(&missing)][..], &CIRCUIT].concat(),
    );
    expect_error(&o, &["--save-proofs", "not an existing folder"]);
    assert!(!missing.exists());
    for (partitions, count) in [("0", 1), ("3", 3)] {
        let out = dir.path(&format!("partitions-{partitions}"));
        std::fs::create_dir(&out).unwrap();
        let args = ["bench", "--backend", "cpu", "--repeat", "1", "--seed", "7", "--partitions", partitions];
        let o = kiln_run(&[&args[..], &CIRCUIT, &["--save-proofs", s(&out)]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let vk = VerifyingKey::from_bytes(&std::fs::read(out.join("vk")).unwrap()).expect("a verifying key");
        let proofs = Proof::read_many(&std::fs::read(out.join("proofs")).unwrap(), count).expect("the proofs");
        for (i, proof) in proofs.iter().enumerate() {
            let inputs = |seed: u64| Builtin::new(Kind::Mimc, 1 << 4, seed).public_inputs();
            assert!(verify(&vk, proof, &inputs(7 + i as u64)).unwrap(), "--partitions {partitions}: proof {i}");
            assert!(
                !verify(&vk, proof, &inputs(8 + i as u64)).unwrap(),
                "--partitions {partitions}: proof {i}, seed + 1"
            );
        }
    }
}

/// Item 4: proofs are made in batches and streamed to the output: more proofs than one
/// batch come out in order (proof i for seed + i) and verify.
#[test]
fn more_proofs_than_a_batch_are_streamed_in_order() {
    let f = fixture();
    let dir = Scratch::new("stream");
    let out = dir.path("nine.proof");
    let o = prove(&f.params, &out, &["--count", "9", "--seed", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 9 * PROOF_BYTES as u64);
    let o = verify(&f.params, &out, &["--count", "9", "--seed", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Shifted seeds: the order matters.
    let o = verify(&f.params, &out, &["--count", "9", "--seed", "6"]);
    expect_error(&o, &["did not verify"]);
}

/// Item 5: `verify --proof /dev/zero` read until it ran out of memory; a file with more
/// proofs than expected was read whole.
#[test]
fn verify_reads_only_the_expected_proofs() {
    let f = fixture();
    let dir = Scratch::new("verify-len");
    let o = run(
        kiln().args([&["verify"][..], &CIRCUIT, &["--params", s(&f.params), "--proof", "/dev/zero"]].concat()),
        Duration::from_secs(120),
    );
    expect_error(&o, &["proof file /dev/zero", "proof 0"]);
    let two = dir.path("two.proof");
    std::fs::write(&two, &f.proofs).unwrap();
    let o = verify(&f.params, &two, &[]);
    expect_error(&o, &["more than the 192 bytes that 1 proof(s) need", "--count"]);
    let o = verify(&f.params, &two, &["--count", "3"]);
    expect_error(&o, &["expected 576 bytes, got 384", "--count"]);
    let o = verify(&f.params, &two, &["--count", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = verify(&f.params, &dir.0, &[]);
    expect_error(&o, &["is a directory"]);
}

/// Item 6: output errors did not name the path; `--out .` said "Device or resource busy";
/// a pipe or `/dev/zero` as `--params` was "truncated … regenerate or re-download it"; a
/// directory was "No such device"; a FIFO without a writer blocked forever.
#[test]
fn errors_name_the_path_and_what_it_is() {
    let f = fixture();
    let dir = Scratch::new("messages");
    let missing = dir.path("no/such/folder/out.proof");
    let o = prove(&f.params, &missing, &[]);
    expect_error(&o, &[s(&missing), "create a temporary file", "No such file"]);
    let o = prove(&f.params, Path::new("."), &[]);
    expect_error(&o, &["output .", "a directory"]);
    let out = dir.path("out.proof");
    for (params, what) in [(Path::new("/dev/zero"), "a character device"), (dir.0.as_path(), "a directory")] {
        let o = prove(params, &out, &[]);
        expect_error(&o, &[s(params), what, "not a regular file"]);
        assert!(!stderr(&o).contains("truncated") && !stderr(&o).contains("No such device"), "{}", stderr(&o));
    }
    let fifo = dir.path("params.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = run(
        kiln().args([&["prove"][..], &CIRCUIT, &["--params", s(&fifo), "--out", s(&out)]].concat()),
        Duration::from_secs(120),
    );
    expect_error(&o, &[s(&fifo), "a FIFO or pipe"]);
    // A pipe: the parameters on stdin.
    let mut child = kiln()
        .args([&["prove"][..], &CIRCUIT, &["--params", "/dev/stdin", "--out", s(&out)]].concat())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let o = child.wait_with_output().unwrap();
    expect_error(&o, &["/dev/stdin", "a FIFO or pipe"]);
    assert!(!out.exists());
}

/// Item 8: `prove --json` printed errors as plain text.
#[test]
fn json_mode_prints_errors_as_json() {
    let dir = Scratch::new("json");
    let missing = dir.path("missing.params");
    let o = prove(&missing, &dir.path("out.proof"), &["--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("stdout is one JSON object");
    assert_eq!(v["kind"], "params");
    assert!(v["error"].as_str().unwrap().contains(s(&missing)), "{v}");
    // A usage error too, when --json is on the command line.
    let o = kiln_run(&[&["prove"][..], &CIRCUIT, &["--params", "p", "--out", "o", "--count", "0", "--json"]].concat());
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("stdout is one JSON object");
    assert_eq!(v["kind"], "usage");
    assert!(v["error"].as_str().unwrap().contains("--count"), "{v}");
}

/// Item 8: JSON was built with `format!`, so a path with a quote or a backslash made
/// invalid JSON.
#[test]
fn json_output_survives_odd_paths() {
    let f = fixture();
    let dir = Scratch::new("json-path");
    let out = dir.path("a \"quoted\" \\ name.proof");
    let o = prove(&f.params, &out, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("stdout is one JSON object");
    assert_eq!(v["out"], s(&out));
    assert_eq!(v["proofs"], 1);
}

/// Item 8: warnings carried colour escapes when stderr was not a terminal.
#[test]
fn warnings_have_no_colour_escapes_off_a_terminal() {
    let cache = Scratch::new("cache");
    std::fs::write(cache.path("mimc-2^4.params"), b"not parameters").unwrap();
    std::fs::write(cache.path("mimc-2^4.params.sha256"), b"0000 14\n").unwrap();
    let o = run(kiln().env("KILN_CACHE", &cache.0).args([&["demo"][..], &CIRCUIT].concat()), Duration::from_secs(300));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("integrity check"), "the warning this test looks at is gone: {err}");
    assert!(!err.contains('\u{1b}'), "colour escapes on a non-terminal stderr: {err:?}");
}
