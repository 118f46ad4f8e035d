//! `kiln serve`: a proving service that keeps parameters loaded, orders jobs by urgency,
//! refuses what it cannot hold, and loses no job.
//!
//! - Requests over gRPC ([`proto`]: `SubmitProof`, `AwaitProof`, `GetStatus`, `CancelProof`,
//!   `GetMetrics`, `PreloadParams`, `EvictParams`) on a unix socket, or TCP with a bearer
//!   token ([`Listen`], [`Token`]); [`Client`] is the client side.
//! - Jobs ([`JobRequest`]): a registered circuit kind ([`CircuitKind`]; the built-ins are
//!   registered by default, [`BuiltinWitness`] is their payload), its witness payload, a
//!   parameter set by id ([`ParamsSets`]: loaded once, on first use or explicitly, shared), a
//!   [`Priority`], a deadline, an idempotency key. Malformed requests get a typed
//!   [`RequestError`] and change nothing.
//! - Persistence ([`Store`]; [`SqliteStore`] embedded, [`PostgresStore`] shared by several
//!   hosts): every accepted job and its result are committed before the reply; workers claim
//!   jobs under a lease they renew; a restarted service proves the jobs it had.
//! - Backpressure: at most [`ServiceConfig::queue_limit`] queued jobs per priority; beyond
//!   it the refusal says busy and when to retry.
//! - Proving through the orchestrator (`kiln-sched`), one job per worker at a time, the most
//!   urgent first; every proof is verified before it is stored.
//! - Metrics in Prometheus' text format ([`Service::metrics_text`], `GetMetrics`), a
//!   `tracing` span per job.
#![doc = include_str!("../README.md")]

mod circuit;
mod client;
mod error;
mod job;
mod metrics;
mod params;
pub mod proto;
mod server;
mod service;
mod store;

pub use circuit::{BuiltinKind, BuiltinWitness, CircuitInstance, CircuitKind, Circuits, PayloadError};
pub use client::{Address, Client, JobInfo};
pub use error::{ClientError, ERROR_KIND_HEADER, ErrorKind, RETRY_AFTER_HEADER, RequestError, ServeError, TokenError};
pub use job::{JobId, JobRecord, JobRequest, JobState, Priority};
pub use params::{Loaded, ParamsLoadError, ParamsSets, ProverFactory, cpu_prover_factory};
pub use server::{Bound, Listen, Token};
pub use service::{Accepted, Service, ServiceConfig};
pub use store::{Cancelled, Count, Outcome, PostgresStore, SqliteStore, Store, StoreError, Submitted};
