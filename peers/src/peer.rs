//! The peer provers this build holds, their parameters, and one benchmark cell.
//!
//! bellperson 0.27 is compiled once per binary with one set of features, and its API follows
//! them: with `cuda-supraseal` its prover *is* supraseal-c2 (no CPU or ec-gpu-gen prover is
//! left), and it takes `SuprasealParameters` (read by supraseal's C++ from the file's path)
//! instead of `Parameters`. So a binary holds either bellperson CPU (and with `cuda` its CUDA
//! prover) or supraseal-c2; `cargo xtask peer-bundle` builds one of each.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Instant;

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{PreparedVerifyingKey, verify_proof};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::{PeerError, gpu_log};

/// A peer prover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Prover {
    /// bellperson 0.27 on the CPU.
    BellpersonCpu,
    /// bellperson 0.27 with its CUDA kernels (ec-gpu-gen).
    BellpersonCuda,
    /// supraseal-c2 (sppark kernels) through bellperson's `cuda-supraseal` feature.
    SuprasealC2,
}

impl Prover {
    /// Every peer, in the order the table shows them.
    pub const ALL: [Prover; 3] = [Prover::BellpersonCpu, Prover::BellpersonCuda, Prover::SuprasealC2];

    /// The name on the command line and in the results.
    pub fn name(self) -> &'static str {
        match self {
            Prover::BellpersonCpu => "bellperson-cpu",
            Prover::BellpersonCuda => "bellperson-cuda",
            Prover::SuprasealC2 => "supraseal-c2",
        }
    }

    /// Whether this binary holds the prover.
    pub fn is_built(self) -> bool {
        match self {
            Prover::BellpersonCpu => !cfg!(feature = "supraseal"),
            Prover::BellpersonCuda => cfg!(feature = "cuda") && !cfg!(feature = "supraseal"),
            Prover::SuprasealC2 => cfg!(feature = "supraseal"),
        }
    }

    /// The provers this binary holds.
    pub fn built() -> Vec<Prover> {
        Prover::ALL.into_iter().filter(|p| p.is_built()).collect()
    }

    /// Whether it proves on a GPU.
    pub fn on_gpu(self) -> bool {
        self != Prover::BellpersonCpu
    }

    fn build_hint(self) -> &'static str {
        match self {
            Prover::BellpersonCpu => "a build without the `supraseal` feature holds it",
            Prover::BellpersonCuda => "build with `--features cuda` (and without `supraseal`)",
            Prover::SuprasealC2 => "build with `--features supraseal`",
        }
    }

    /// `Ok` when this binary holds the prover, [`PeerError::NotBuilt`] otherwise.
    pub fn check_built(self) -> Result<(), PeerError> {
        if self.is_built() {
            return Ok(());
        }
        let built: Vec<&str> = Prover::built().into_iter().map(Prover::name).collect();
        Err(PeerError::NotBuilt { prover: self, built: built.join(", "), hint: self.build_hint() })
    }
}

impl std::fmt::Display for Prover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(not(feature = "supraseal"))]
type PeerParameters = bp::Parameters<Bls12>;
#[cfg(feature = "supraseal")]
type PeerParameters = bp::SuprasealParameters<Bls12>;

/// A parameter file loaded for one peer prover, with the verifying key both verifiers take.
pub struct Loaded {
    prover: Prover,
    path: PathBuf,
    params: PeerParameters,
    kiln_vk: PreparedVerifyingKey,
    peer_vk: bp::PreparedVerifyingKey<Bls12>,
    num_inputs: usize,
}

fn open(path: &Path) -> Result<BufReader<File>, PeerError> {
    let file = File::open(path).map_err(|source| PeerError::Io { path: path.to_path_buf(), op: "open", source })?;
    Ok(BufReader::with_capacity(1 << 20, file))
}

impl Loaded {
    /// Reads the parameter file at `path` (bellperson's format, as `kiln setup` writes it) for
    /// `prover`. Points are not subgroup-checked (bellperson's `checked = false`): the files
    /// are the benchmark's own; every proof is verified instead.
    pub fn read(prover: Prover, path: &Path) -> Result<Self, PeerError> {
        prover.check_built()?;
        let peer_params = |source| PeerError::PeerParams { path: path.to_path_buf(), prover, source };
        // The file starts with the verifying key.
        let vk = bp::VerifyingKey::<Bls12>::read(open(path)?).map_err(peer_params)?;
        let mut vk_bytes = Vec::new();
        vk.write(&mut vk_bytes).map_err(peer_params)?;
        let kiln_vk = kiln_groth16::VerifyingKey::from_bytes(&vk_bytes)
            .map_err(|source| PeerError::KilnVerifyingKey { path: path.to_path_buf(), source })?;
        let num_inputs = kiln_vk.num_public_inputs();
        #[cfg(not(feature = "supraseal"))]
        let params = bp::Parameters::read(open(path)?, false).map_err(peer_params)?;
        #[cfg(feature = "supraseal")]
        let params = bp::SuprasealParameters::new(path.to_path_buf()).map_err(peer_params)?;
        Ok(Loaded {
            prover,
            path: path.to_path_buf(),
            params,
            kiln_vk: PreparedVerifyingKey::new(&kiln_vk),
            peer_vk: bp::prepare_verifying_key(&vk),
            num_inputs,
        })
    }

    /// Public inputs (ONE not counted) the verifying key takes.
    pub fn num_public_inputs(&self) -> usize {
        self.num_inputs
    }

    fn prove(
        &self,
        circuits: Vec<Builtin>,
        rng: &mut ChaCha20Rng,
    ) -> Result<Vec<bp::Proof<Bls12>>, bellperson::SynthesisError> {
        bp::create_random_proof_batch(circuits, &self.params, rng)
    }
}

/// One cell of the table: what was proved, by whom, and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The peer prover.
    pub prover: Prover,
    /// The built-in circuit.
    pub circuit: String,
    /// log2 of its constraint count.
    pub log_size: u32,
    /// Proofs per run (one call of `create_random_proof_batch`).
    pub batch: usize,
    /// Median wall time of a run, circuits to proofs (synthesis included, verification not).
    pub median_ms: f64,
    /// Fastest run.
    pub min_ms: f64,
    /// Slowest run.
    pub max_ms: f64,
    /// Timed runs.
    pub runs: usize,
    /// Every run's time, in order.
    pub runs_ms: Vec<f64>,
    /// Every proof of every run verified with kiln's and bellperson's verifiers (always true
    /// in a line that was printed: a rejected proof is an error).
    pub verified: bool,
    /// The parameter file.
    pub params: String,
}

/// What one cell proves.
#[derive(Debug, Clone, Copy)]
pub struct CellSpec {
    /// The built-in circuit.
    pub kind: Kind,
    /// log2 of its constraint count.
    pub log_size: u32,
    /// Proofs per run: circuits of seeds `seed`, `seed + 1`, ….
    pub batch: usize,
    /// Timed runs (the median is reported).
    pub repeat: usize,
    /// Seed of the first circuit's witness.
    pub seed: u64,
}

/// Proves `spec.batch` circuits `spec.repeat` times with the loaded prover, verifies every
/// proof with kiln's verifier and bellperson's, and returns the timings. A GPU prover that
/// fell back to the CPU is an error, not a slow result.
pub fn run_cell(loaded: &Loaded, spec: CellSpec) -> Result<Cell, PeerError> {
    let CellSpec { kind, log_size, batch, repeat, seed } = spec;
    let prover = loaded.prover;
    let circuits: Vec<Builtin> =
        (0..batch as u64).map(|i| Builtin::new(kind, 1 << log_size, seed.wrapping_add(i))).collect();
    let inputs: Vec<Vec<Scalar>> = circuits.iter().map(Builtin::public_inputs).collect();
    if let Some(first) = inputs.first()
        && first.len() != loaded.num_inputs
    {
        return Err(PeerError::WrongParameters {
            path: loaded.path.clone(),
            circuit: kind,
            log_size,
            params_inputs: loaded.num_inputs,
            circuit_inputs: first.len(),
        });
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x7065_6572);
    let mut runs_ms = Vec::with_capacity(repeat);
    gpu_log::take_gpu_warnings();
    for _ in 0..repeat {
        let start = Instant::now();
        let proofs = loaded.prove(circuits.clone(), &mut rng).map_err(|source| PeerError::Prove {
            prover,
            circuit: kind,
            log_size,
            batch,
            source,
        })?;
        runs_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let warnings = gpu_log::take_gpu_warnings();
        if prover.on_gpu() && !warnings.is_empty() {
            return Err(PeerError::GpuFallback { prover, warnings: warnings.join("; ") });
        }
        verify_all(loaded, kind, log_size, &proofs, &inputs)?;
    }
    let mut sorted = runs_ms.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(Cell {
        prover,
        circuit: kind.name().to_string(),
        log_size,
        batch,
        median_ms: median(&sorted),
        min_ms: sorted.first().copied().unwrap_or(f64::NAN),
        max_ms: sorted.last().copied().unwrap_or(f64::NAN),
        runs: runs_ms.len(),
        runs_ms,
        verified: true,
        params: loaded.path.display().to_string(),
    })
}

/// The median of sorted values (the mean of the middle two for an even count); NaN when empty.
pub fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn verify_all(
    loaded: &Loaded,
    kind: Kind,
    log_size: u32,
    proofs: &[bp::Proof<Bls12>],
    inputs: &[Vec<Scalar>],
) -> Result<(), PeerError> {
    let prover = loaded.prover;
    let rejected = |index, verifier| PeerError::Rejected { prover, circuit: kind, log_size, index, verifier };
    for (index, (proof, inputs)) in proofs.iter().zip(inputs).enumerate() {
        let mut bytes = Vec::with_capacity(kiln_groth16::PROOF_BYTES);
        proof.write(&mut bytes).map_err(|e| PeerError::PeerVerify(e.into()))?;
        let ours =
            kiln_groth16::Proof::from_bytes(&bytes).map_err(|source| PeerError::ProofBytes { prover, source })?;
        if !verify_proof(&loaded.kiln_vk, &ours, inputs)? {
            return Err(rejected(index, "kiln"));
        }
        if !bp::verify_proof(&loaded.peer_vk, proof, inputs).map_err(PeerError::PeerVerify)? {
            return Err(rejected(index, "bellperson"));
        }
    }
    if proofs.len() != inputs.len() {
        return Err(PeerError::Rejected { prover, circuit: kind, log_size, index: proofs.len(), verifier: "kiln" });
    }
    Ok(())
}
