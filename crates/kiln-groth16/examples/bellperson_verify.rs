//! Verifies proofs of a built-in circuit with bellperson's verifier, from the files `kiln
//! bench --save-proofs DIR` writes: `DIR/vk` (bellperson's `VerifyingKey` layout) and
//! `DIR/proofs` (192 bytes each, proof i for seed + i). The public inputs are recomputed
//! from the circuit, its size and the seeds, as `kiln verify` does.
//!
//! ```sh
//! cargo run --release -p kiln-groth16 --example bellperson_verify -- DIR porep 27 1 10
//! #                                                   folder kind log2 seed count
//! ```
//!
//! Exits 0 when every proof verifies, 1 when one does not, 2 on a usage or file error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bellperson::groth16 as bp;
use blstrs::Bls12;
use kiln_groth16::PROOF_BYTES;
use kiln_groth16::circuits::{Builtin, Kind};

const USAGE: &str = "usage: bellperson_verify DIR KIND LOG_SIZE SEED COUNT (the files of kiln bench --save-proofs DIR)";

struct Args {
    dir: PathBuf,
    kind: Kind,
    log_size: u32,
    seed: u64,
    count: usize,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let [dir, kind, log_size, seed, count] = args else { return Err(USAGE.into()) };
    let number = |what: &str, v: &str| format!("{what} {v:?} is not a number; {USAGE}");
    let log_size: u32 = log_size.parse().map_err(|_| number("LOG_SIZE", log_size))?;
    if !(4..=28).contains(&log_size) {
        return Err(format!("LOG_SIZE {log_size} is outside 4..=28 (as kiln's --log-size)"));
    }
    Ok(Args {
        dir: PathBuf::from(dir),
        kind: kind.parse().map_err(|e| format!("KIND {kind:?}: {e}"))?,
        log_size,
        seed: seed.parse().map_err(|_| number("SEED", seed))?,
        count: count.parse().map_err(|_| number("COUNT", count))?,
    })
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// How many of the proofs verify, and their count.
fn run(a: &Args) -> Result<(usize, usize), String> {
    let vk_path = a.dir.join("vk");
    let vk = bp::VerifyingKey::<Bls12>::read(&read(&vk_path)?[..])
        .map_err(|e| format!("{}: not a verifying key: {e}", vk_path.display()))?;
    let pvk = bp::prepare_verifying_key(&vk);
    let proofs_path = a.dir.join("proofs");
    let bytes = read(&proofs_path)?;
    if bytes.len() != a.count * PROOF_BYTES {
        return Err(format!(
            "{}: {} bytes, expected {} proofs of {PROOF_BYTES} (pass the COUNT the bench proved)",
            proofs_path.display(),
            bytes.len(),
            a.count
        ));
    }
    let mut good = 0;
    for (i, chunk) in bytes.chunks_exact(PROOF_BYTES).enumerate() {
        let proof =
            bp::Proof::<Bls12>::read(chunk).map_err(|e| format!("{}: proof {i}: {e}", proofs_path.display()))?;
        let circuit = Builtin::new(a.kind, 1 << a.log_size, a.seed.wrapping_add(i as u64));
        let inputs = circuit.public_inputs();
        let ok = bp::verify_proof(&pvk, &proof, &inputs[..]).map_err(|e| format!("proof {i}: {e}"))?;
        println!("proof {i} (seed {}): {}", circuit.seed, if ok { "verifies" } else { "DOES NOT VERIFY" });
        good += usize::from(ok);
    }
    Ok((good, a.count))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args).and_then(|a| run(&a)) {
        Ok((good, all)) if good == all => {
            println!("bellperson: all {all} proofs verify");
            ExitCode::SUCCESS
        }
        Ok((good, all)) => {
            println!("bellperson: {} of {all} proofs do not verify", all - good);
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
