//! Many proofs in flight: jobs in, proofs out.
//!
//! A [`Scheduler`] takes batches of equally shaped jobs (one recorded [`kiln_groth16::Shape`],
//! e.g. the ten partitions of one Filecoin proof) and proves them on its provers in two
//! stages:
//!
//! 1. a CPU stage of `cpu_threads` threads generating witnesses ([`Job`]'s circuit run
//!    through the shape), into a **bounded** queue: host memory is bounded by the queue,
//!    not by the number of jobs submitted;
//! 2. a proving stage of one worker per proof a prover works on at once
//!    ([`kiln_groth16::Prover::in_flight`]: a GPU prover's VRAM plan workers, and the proofs
//!    that prepare ahead of them on the host), each proving one witness per call of
//!    [`kiln_groth16::prove_witnesses`]; a GPU prover takes a lane of its kiln-lock policy
//!    per call, so one worker's uploads overlap another's compute without any device-global
//!    call on the proving path (ARCHITECTURE.md §1).
//!
//! Faults stay inside their job ([`JobError`] names it): a synthesis error, an unsatisfied
//! circuit, a proof that does not verify, a panic in the circuit or in the prover. Jobs can
//! be cancelled ([`BatchHandle::cancel`]) and given a deadline ([`Job::with_deadline`]).
//! Each batch reports its [`Metrics`]: per-stage waits, jobs done and failed, the proving
//! stage's busy fraction, each device's busy time ([`DeviceBusy`]: the GPU kept fed or not),
//! the peak queue depth and the peak number of witnesses alive.
#![doc = include_str!("../README.md")]

mod error;
mod job;
mod metrics;
mod scheduler;

pub use error::{JobError, SchedError, Stage};
pub use job::{Job, JobId, Randomness, WitnessFn};
pub use metrics::{BatchMemory, DeviceBusy, Metrics};
pub use scheduler::{BatchHandle, BatchReport, Config, JobOutcome, Scheduler, SharedProver, Workers};
