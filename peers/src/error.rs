//! The benchmark's errors: each names the file, prover or cell it is about and keeps the
//! underlying error as a value.

use std::path::PathBuf;

use kiln_groth16::circuits::Kind;

use crate::peer::Prover;

/// Why a peer benchmark step failed.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// A file could not be opened or read.
    #[error("{path}: {op}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done ("open", "read").
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// bellperson (or supraseal-c2) rejected the parameter file.
    #[error("{path}: {prover} cannot read the parameters: {source}")]
    PeerParams {
        /// The parameter file.
        path: PathBuf,
        /// Who read it.
        prover: Prover,
        /// bellperson's error.
        #[source]
        source: std::io::Error,
    },
    /// kiln rejected the verifying key bellperson read from the file.
    #[error("{path}: kiln cannot read the verifying key: {source}")]
    KilnVerifyingKey {
        /// The parameter file.
        path: PathBuf,
        /// kiln's error.
        #[source]
        source: kiln_groth16::ParamsError,
    },
    /// The parameter file's verifying key takes another number of public inputs than the circuit.
    #[error(
        "{path}: the parameters take {params_inputs} public inputs, {circuit} with 2^{log_size} constraints has \
         {circuit_inputs}: parameters made for another circuit?"
    )]
    WrongParameters {
        /// The parameter file.
        path: PathBuf,
        /// The circuit.
        circuit: Kind,
        /// Its log2 size.
        log_size: u32,
        /// Public inputs (ONE not counted) the key takes.
        params_inputs: usize,
        /// Public inputs the circuit has.
        circuit_inputs: usize,
    },
    /// The prover asked for is not compiled into this binary.
    #[error("{prover} is not in this build of kiln-peers (it holds: {built}); {hint}")]
    NotBuilt {
        /// The prover asked for.
        prover: Prover,
        /// The provers this build holds, comma-separated.
        built: String,
        /// Which feature builds it.
        hint: &'static str,
    },
    /// BELLMAN_NO_GPU forbids the GPU a GPU prover was asked for.
    #[error("{prover} asked for, but BELLMAN_NO_GPU={value} turns bellperson's GPU off: unset it")]
    GpuDisabledByEnv {
        /// The prover asked for.
        prover: Prover,
        /// The variable's value.
        value: String,
    },
    /// The prover failed (synthesis or proving).
    #[error("{prover} on {circuit} 2^{log_size}, batch of {batch}: {source}")]
    Prove {
        /// The prover.
        prover: Prover,
        /// The circuit.
        circuit: Kind,
        /// Its log2 size.
        log_size: u32,
        /// Proofs in the batch.
        batch: usize,
        /// bellperson's error.
        #[source]
        source: bellperson::SynthesisError,
    },
    /// bellperson did not use the GPU and proved on the CPU instead (it only logs that).
    #[error("{prover} did not run on the GPU: bellperson fell back to the CPU; it said: {warnings}")]
    GpuFallback {
        /// The prover.
        prover: Prover,
        /// bellperson's warnings, `; `-separated.
        warnings: String,
    },
    /// A proof did not verify.
    #[error("proof {index} of {prover} on {circuit} 2^{log_size} does not verify with {verifier}'s verifier")]
    Rejected {
        /// The prover.
        prover: Prover,
        /// The circuit.
        circuit: Kind,
        /// Its log2 size.
        log_size: u32,
        /// Which proof of the batch.
        index: usize,
        /// `kiln` or `bellperson`.
        verifier: &'static str,
    },
    /// kiln's verifier could not take the proof or the inputs.
    #[error("kiln's verifier: {0}")]
    KilnVerify(#[from] kiln_groth16::VerifyError),
    /// bellperson's verifier could not take the proof or the inputs.
    #[error("bellperson's verifier: {0}")]
    PeerVerify(#[source] bellperson::SynthesisError),
    /// A proof bellperson wrote was not a proof to kiln.
    #[error("a proof of {prover} is not a proof to kiln: {source}")]
    ProofBytes {
        /// The prover.
        prover: Prover,
        /// kiln's error.
        #[source]
        source: kiln_groth16::ProofError,
    },
    /// kiln's setup failed.
    #[error("setup: {0}")]
    Setup(#[from] kiln_groth16::Groth16Error),
    /// Writing the parameter file failed.
    #[error("{path}: {source}")]
    Write {
        /// The parameter file.
        path: PathBuf,
        /// kiln's error.
        #[source]
        source: kiln_groth16::WriteError,
    },
    /// A line of a results file is not a result line of kiln-peers or `kiln bench --json`.
    #[error("{path} line {line}: not a result of kiln-peers or `kiln bench --json`: {source}")]
    ResultLine {
        /// The results file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
}
