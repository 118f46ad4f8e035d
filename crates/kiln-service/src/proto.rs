//! The wire messages of `kiln.v1.Proving`, written as prost structs (no `.proto` file, no
//! protoc); `build.rs` generates the client and server glue around them.
//!
//! The `.proto` equivalent, for clients in other languages:
//!
//! ```text
//! enum Priority { NORMAL = 0; HIGH = 1; LOW = 2; }
//! enum JobState { QUEUED = 0; RUNNING = 1; DONE = 2; FAILED = 3; CANCELLED = 4; }
//! message SubmitRequest { string circuit = 1; bytes witness = 2; string params_id = 3;
//!   Priority priority = 4; uint64 deadline_unix_ms = 5; string idempotency_key = 6; }
//! message SubmitReply { uint64 job_id = 1; bool created = 2; }
//! message JobRef { uint64 job_id = 1; }
//! message AwaitRequest { uint64 job_id = 1; uint64 timeout_ms = 2; }
//! message JobStatus { uint64 job_id = 1; JobState state = 2; Priority priority = 3;
//!   string circuit = 4; string params_id = 5; bytes proof = 6; string error_kind = 7;
//!   string error = 8; uint32 attempts = 9; uint64 submitted_unix_ms = 10;
//!   uint64 finished_unix_ms = 11; uint64 completion = 12; }
//! message CancelReply { bool cancelled = 1; JobState state = 2; }
//! message MetricsRequest {}
//! message MetricsReply { string text = 1; }
//! message ParamsRef { string id = 1; }
//! message ParamsReply { string id = 1; bool loaded = 2; }
//! service Proving { rpc SubmitProof(SubmitRequest) returns (SubmitReply); ... }
//! ```
//!
//! Refusals are gRPC statuses carrying a `kiln-error` metadata entry (a stable kind, see
//! [`crate::ErrorKind`]) and, for a busy service, `retry-after-ms`.
#![allow(missing_docs)] // The fields are documented in the `.proto` text above and on the domain types.

/// A job's urgency on the wire (`NORMAL` is the default, 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum WirePriority {
    Normal = 0,
    High = 1,
    Low = 2,
}

/// A job's state on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum WireState {
    Queued = 0,
    Running = 1,
    Done = 2,
    Failed = 3,
    Cancelled = 4,
}

/// `SubmitProof`'s request.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SubmitRequest {
    #[prost(string, tag = "1")]
    pub circuit: String,
    #[prost(bytes = "vec", tag = "2")]
    pub witness: Vec<u8>,
    #[prost(string, tag = "3")]
    pub params_id: String,
    #[prost(enumeration = "WirePriority", tag = "4")]
    pub priority: i32,
    /// 0: no deadline.
    #[prost(uint64, tag = "5")]
    pub deadline_unix_ms: u64,
    /// Empty: none.
    #[prost(string, tag = "6")]
    pub idempotency_key: String,
}

/// `SubmitProof`'s reply.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SubmitReply {
    #[prost(uint64, tag = "1")]
    pub job_id: u64,
    /// False: the idempotency key named a job accepted before; this is its id.
    #[prost(bool, tag = "2")]
    pub created: bool,
}

/// A job, by id.
#[derive(Clone, PartialEq, prost::Message)]
pub struct JobRef {
    #[prost(uint64, tag = "1")]
    pub job_id: u64,
}

/// `AwaitProof`'s request.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AwaitRequest {
    #[prost(uint64, tag = "1")]
    pub job_id: u64,
    /// How long to wait at most (capped by the server); 0: the server's cap.
    #[prost(uint64, tag = "2")]
    pub timeout_ms: u64,
}

/// A job's status.
#[derive(Clone, PartialEq, prost::Message)]
pub struct JobStatus {
    #[prost(uint64, tag = "1")]
    pub job_id: u64,
    #[prost(enumeration = "WireState", tag = "2")]
    pub state: i32,
    #[prost(enumeration = "WirePriority", tag = "3")]
    pub priority: i32,
    #[prost(string, tag = "4")]
    pub circuit: String,
    #[prost(string, tag = "5")]
    pub params_id: String,
    /// The 192-byte proof (bellperson's format) once done.
    #[prost(bytes = "vec", tag = "6")]
    pub proof: Vec<u8>,
    #[prost(string, tag = "7")]
    pub error_kind: String,
    #[prost(string, tag = "8")]
    pub error: String,
    #[prost(uint32, tag = "9")]
    pub attempts: u32,
    #[prost(uint64, tag = "10")]
    pub submitted_unix_ms: u64,
    #[prost(uint64, tag = "11")]
    pub finished_unix_ms: u64,
    /// The job's place in the order jobs finished (1, 2, ...); 0 while unfinished.
    #[prost(uint64, tag = "12")]
    pub completion: u64,
}

/// `CancelProof`'s reply.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CancelReply {
    #[prost(bool, tag = "1")]
    pub cancelled: bool,
    #[prost(enumeration = "WireState", tag = "2")]
    pub state: i32,
}

/// `GetMetrics`' request (empty).
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricsRequest {}

/// `GetMetrics`' reply.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricsReply {
    #[prost(string, tag = "1")]
    pub text: String,
}

/// A parameter set, by id.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ParamsRef {
    #[prost(string, tag = "1")]
    pub id: String,
}

/// `PreloadParams`' and `EvictParams`' reply.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ParamsReply {
    #[prost(string, tag = "1")]
    pub id: String,
    /// Whether the set is loaded after the call.
    #[prost(bool, tag = "2")]
    pub loaded: bool,
}

#[allow(clippy::all, missing_docs, unused_qualifications)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/kiln.v1.Proving.rs"));
}

pub use generated::{proving_client, proving_server};
