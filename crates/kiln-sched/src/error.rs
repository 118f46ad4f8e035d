//! Typed errors. A job's error names the job, so that one failure among many says which.

use std::time::Duration;

use kiln_groth16::Groth16Error;

use crate::job::JobId;

/// Where in the pipeline a job was when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The CPU stage: the circuit's witness generation.
    Witness,
    /// The proving stage: the prover's sums, the epilogue, the verification.
    Prove,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Witness => "witness generation",
            Stage::Prove => "proving",
        })
    }
}

/// Why one job made no proof. Every other job of the batch goes on.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The circuit's witness could not be generated (its synthesis returned an error).
    #[error("job {job}: witness generation failed: {source}")]
    Witness {
        /// The job.
        job: JobId,
        /// What the circuit (or the recorded shape) said.
        #[source]
        source: Groth16Error,
    },
    /// Proving failed: an unsatisfied circuit (with `check_satisfied`), a proof that did not
    /// verify, a shape that does not fit the parameters, or the prover's own error.
    #[error("job {job}: proving on {prover} failed: {source}")]
    Prove {
        /// The job.
        job: JobId,
        /// The prover's name ("cpu", "cuda:0", ...).
        prover: String,
        /// The prover's error.
        #[source]
        source: Groth16Error,
    },
    /// The circuit or the prover panicked; the panic was caught and only this job failed.
    #[error("job {job}: panicked during {stage}: {message}")]
    Panicked {
        /// The job.
        job: JobId,
        /// Where it panicked.
        stage: Stage,
        /// The panic's message (its `&str` or `String` payload).
        message: String,
    },
    /// Cancelled ([`crate::BatchHandle::cancel`]) before it was proved.
    #[error("job {job}: cancelled before {stage}")]
    Cancelled {
        /// The job.
        job: JobId,
        /// The stage it would have entered next.
        stage: Stage,
    },
    /// Its deadline passed before it was proved: no proving time is spent on it.
    #[error("job {job}: deadline passed {late_by:?} before {stage} (not started)")]
    DeadlineExpired {
        /// The job.
        job: JobId,
        /// The stage it would have entered next.
        stage: Stage,
        /// How long ago the deadline passed when the stage looked.
        late_by: Duration,
    },
    /// The pipeline stopped before the job got a result (a stage's thread ended early).
    #[error("job {job}: lost: the scheduler's threads ended before it got a result")]
    Lost {
        /// The job.
        job: JobId,
    },
}

impl JobError {
    /// The job this error belongs to.
    pub fn job(&self) -> JobId {
        match *self {
            JobError::Witness { job, .. }
            | JobError::Prove { job, .. }
            | JobError::Panicked { job, .. }
            | JobError::Cancelled { job, .. }
            | JobError::DeadlineExpired { job, .. }
            | JobError::Lost { job } => job,
        }
    }
}

/// Errors of setting up a scheduler.
#[derive(Debug, thiserror::Error)]
pub enum SchedError {
    /// No prover was given.
    #[error("a scheduler needs at least one prover")]
    NoProvers,
    /// Every prover was retired after its device failed (a sticky CUDA error): nothing can
    /// prove. The errors that retired them were logged and are in the batches' metrics.
    #[error("every prover was retired after a device failure ({retired}): restart the process to use those GPUs again")]
    AllRetired {
        /// The retired provers' names.
        retired: String,
    },
    /// A count that must be at least one was zero.
    #[error("{what} must be at least 1")]
    Zero {
        /// Which setting ("cpu_threads", "queue_depth", "workers").
        what: &'static str,
    },
    /// A stage's thread could not be started.
    #[error("starting the {stage} thread failed: {source}")]
    Spawn {
        /// Which stage.
        stage: Stage,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
