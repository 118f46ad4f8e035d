//! The errors of the `kiln` commands: each names the file or argument, and has a stable
//! `kind` for `--json` output.

use std::path::PathBuf;

use kiln_cuda::CudaError;
use kiln_groth16::{Groth16Error, ParamsError, ProofError, VerifyError, WriteError};

/// Any error of a `kiln` command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The parameter file could not be read or is malformed.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// An output file could not be written (or was refused).
    #[error(transparent)]
    Output(#[from] WriteError),
    /// The proof file could not be opened or read.
    #[error("proof file {path}: {op} failed: {source}")]
    ProofIo {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The proof file is malformed, or holds another number of proofs than expected.
    #[error("proof file {path}: {source}{hint}")]
    ProofFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: ProofError,
        /// What to do, where the fix is an argument.
        hint: &'static str,
    },
    /// The proof file is a directory.
    #[error("proof file {path} is a directory: pass the file of proofs written by `kiln prove --out`")]
    ProofIsDirectory {
        /// The path given.
        path: PathBuf,
    },
    /// Setup or proving failed (boxed: the prover's error is large, and every command
    /// returns this type).
    #[error(transparent)]
    Prove(Box<Groth16Error>),
    /// Verification could not run (not: a proof did not verify).
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// Proofs were read and checked, and at least one does not verify.
    #[error("{what} did not verify (proofs and parameters, circuit, --log-size or --seed do not belong together)")]
    NotVerified {
        /// Which proofs.
        what: String,
    },
    /// The parameter cache could not be used.
    #[error("parameter cache {path}: {op} failed: {source}")]
    Cache {
        /// The file or folder.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The CUDA driver failed (boxed, as `Prove`).
    #[error(transparent)]
    Cuda(Box<CudaError>),
    /// `--backend gpu` and the GPU cannot prove.
    #[error("--backend gpu: no usable GPU {device}: {reason} (use --backend cpu or auto)")]
    NoGpu {
        /// The device ordinal asked for.
        device: usize,
        /// Why it cannot be used.
        reason: String,
    },
    /// The orchestrator could not start (`kiln bench --partitions`).
    #[error(transparent)]
    Sched(#[from] kiln_sched::SchedError),
    /// A job of the orchestrator made no proof (boxed, as `Prove`).
    #[error(transparent)]
    Job(Box<kiln_sched::JobError>),
    /// An environment variable has a value kiln cannot use (the message names it).
    #[error("{0}")]
    Environment(String),
    /// The proving service could not start or serve (`kiln serve`).
    #[error(transparent)]
    Serve(#[from] kiln_service::ServeError),
    /// The job database could not be used (`kiln serve`).
    #[error(transparent)]
    Store(#[from] kiln_service::StoreError),
    /// A request to the service failed or was refused (`kiln submit | status | cancel`), or a
    /// parameter set could not be preloaded (`kiln serve --preload`).
    #[error(transparent)]
    Client(#[from] kiln_service::ClientError),
    /// `kiln serve --preload`: a parameter set could not be loaded.
    #[error(transparent)]
    Request(#[from] kiln_service::RequestError),
    /// The token file is unusable.
    #[error(transparent)]
    Token(#[from] kiln_service::TokenError),
    /// The async runtime could not start.
    #[error("starting the async runtime failed: {source}")]
    Runtime {
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An option combination kiln does not support (the message says which and what to do).
    #[error("{0}")]
    Unsupported(String),
}

impl From<Groth16Error> for CliError {
    fn from(e: Groth16Error) -> Self {
        CliError::Prove(Box::new(e))
    }
}

impl From<kiln_sched::JobError> for CliError {
    fn from(e: kiln_sched::JobError) -> Self {
        CliError::Job(Box::new(e))
    }
}

impl From<CudaError> for CliError {
    fn from(e: CudaError) -> Self {
        CliError::Cuda(Box::new(e))
    }
}

impl CliError {
    /// A stable name of the error's class for `--json` output.
    pub fn kind(&self) -> &'static str {
        match self {
            CliError::Params(_) => "params",
            CliError::Output(_) => "output",
            CliError::ProofIo { .. } | CliError::ProofFile { .. } | CliError::ProofIsDirectory { .. } => "proof_file",
            CliError::Prove(_) | CliError::Sched(_) | CliError::Job(_) => "prove",
            CliError::Verify(_) => "verify",
            CliError::NotVerified { .. } => "not_verified",
            CliError::Cache { .. } => "cache",
            CliError::Cuda(_) | CliError::NoGpu { .. } => "device",
            CliError::Environment(_) | CliError::Token(_) | CliError::Unsupported(_) => "usage",
            CliError::Serve(_) | CliError::Runtime { .. } => "service",
            CliError::Store(_) => "store",
            // The service's own refusal kinds: busy, unknown_circuit, witness, unauthenticated, ...
            CliError::Client(e) => e.kind().name(),
            CliError::Request(e) => e.kind().name(),
        }
    }

    /// The `--json` form: `{"error": message, "kind": kind}`.
    pub fn to_json(&self) -> serde_json::Value {
        error_json(&self.to_string(), self.kind())
    }
}

/// `{"error": message, "kind": kind}`, the one shape of every `--json` error.
pub fn error_json(message: &str, kind: &str) -> serde_json::Value {
    serde_json::json!({ "error": message, "kind": kind })
}
