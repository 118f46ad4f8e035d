//! Typed errors: why a request was refused (each with a stable [`ErrorKind`] that travels over
//! gRPC in the `kiln-error` metadata entry), why the service could not start, and what a
//! client sees.

use std::path::PathBuf;
use std::time::Duration;

use tonic::metadata::MetadataValue;
use tonic::{Code, Status};

use crate::circuit::PayloadError;
use crate::job::{JobId, Priority};
use crate::params::ParamsLoadError;
use crate::store::StoreError;

/// The metadata entry naming a refusal's [`ErrorKind`].
pub const ERROR_KIND_HEADER: &str = "kiln-error";
/// The metadata entry of a busy refusal: milliseconds to wait before retrying.
pub const RETRY_AFTER_HEADER: &str = "retry-after-ms";

/// The stable class of a refusal, the same on both sides of the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The circuit kind is not registered.
    UnknownCircuit,
    /// The witness payload is malformed for its circuit kind.
    Witness,
    /// The parameter set id is not configured.
    UnknownParams,
    /// The circuit (its size) does not fit the parameter set.
    ParamsMismatch,
    /// The priority is not one of the known values.
    Priority,
    /// The deadline has already passed.
    Deadline,
    /// A field is too long or otherwise unusable (the message names it).
    Argument,
    /// The idempotency key names a job with another request.
    IdempotencyConflict,
    /// The priority's queue is full: retry later.
    Busy,
    /// No job of that id.
    UnknownJob,
    /// The parameter set could not be loaded (preload).
    Params,
    /// The job store failed.
    Store,
    /// A missing or wrong bearer token (TCP).
    Unauthenticated,
    /// Anything else (transport, an unknown kind from a newer server).
    Other,
}

impl ErrorKind {
    const ALL: [ErrorKind; 14] = [
        ErrorKind::UnknownCircuit,
        ErrorKind::Witness,
        ErrorKind::UnknownParams,
        ErrorKind::ParamsMismatch,
        ErrorKind::Priority,
        ErrorKind::Deadline,
        ErrorKind::Argument,
        ErrorKind::IdempotencyConflict,
        ErrorKind::Busy,
        ErrorKind::UnknownJob,
        ErrorKind::Params,
        ErrorKind::Store,
        ErrorKind::Unauthenticated,
        ErrorKind::Other,
    ];

    /// Its stable name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::UnknownCircuit => "unknown_circuit",
            ErrorKind::Witness => "witness",
            ErrorKind::UnknownParams => "unknown_params",
            ErrorKind::ParamsMismatch => "params_mismatch",
            ErrorKind::Priority => "priority",
            ErrorKind::Deadline => "deadline",
            ErrorKind::Argument => "argument",
            ErrorKind::IdempotencyConflict => "idempotency_conflict",
            ErrorKind::Busy => "busy",
            ErrorKind::UnknownJob => "unknown_job",
            ErrorKind::Params => "params",
            ErrorKind::Store => "store",
            ErrorKind::Unauthenticated => "unauthenticated",
            ErrorKind::Other => "other",
        }
    }

    /// The kind of a name ([`ErrorKind::Other`] for a name this version does not know).
    pub fn from_name(name: &str) -> ErrorKind {
        ErrorKind::ALL.into_iter().find(|k| k.name() == name).unwrap_or(ErrorKind::Other)
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the service refused a request. Nothing was stored or changed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// `circuit` names no registered circuit kind.
    #[error("circuit {name:?} is not registered: the service proves {known}")]
    UnknownCircuit {
        /// The name given (at most 64 characters of it).
        name: String,
        /// The registered names.
        known: String,
    },
    /// `witness` is malformed for the circuit kind.
    #[error("witness for circuit {circuit:?}: {source}")]
    Witness {
        /// The circuit kind.
        circuit: String,
        /// What is wrong.
        #[source]
        source: PayloadError,
    },
    /// `params_id` names no configured parameter set.
    #[error("params_id {id:?} is not configured: the service has {known}")]
    UnknownParams {
        /// The id given (at most 64 characters of it).
        id: String,
        /// The configured ids.
        known: String,
    },
    /// The circuit does not fit the parameter set (checked when the set is loaded).
    #[error("circuit {circuit:?} does not fit parameter set {params_id:?}: {reason}")]
    ParamsMismatch {
        /// The circuit kind.
        circuit: String,
        /// The parameter set.
        params_id: String,
        /// What does not fit.
        reason: String,
    },
    /// `priority` is not a known value.
    #[error("priority {value} is unknown: use 0 (normal), 1 (high) or 2 (low)")]
    Priority {
        /// The value given.
        value: i32,
    },
    /// `deadline_unix_ms` is already past.
    #[error("deadline_unix_ms {deadline_ms} has already passed (now {now_ms}): give a later deadline or none (0)")]
    DeadlinePassed {
        /// The deadline given.
        deadline_ms: u64,
        /// The server's clock.
        now_ms: u64,
    },
    /// A field is unusable.
    #[error("{field}: {reason}")]
    Argument {
        /// The field.
        field: &'static str,
        /// What is wrong and what to do.
        reason: String,
    },
    /// The idempotency key was used for another request.
    #[error("idempotency_key {key:?} was used for job {job} with another request: use a new key for a new job")]
    IdempotencyConflict {
        /// The key.
        key: String,
        /// The job it names.
        job: JobId,
    },
    /// The queue of this priority is full.
    #[error("busy: {queued} {priority}-priority jobs are queued (the limit is {limit}); retry after {retry_after:?}")]
    Busy {
        /// The priority.
        priority: Priority,
        /// Jobs queued at it.
        queued: u64,
        /// The limit per priority.
        limit: u64,
        /// When a slot is likely free (an estimate: about one proof's time).
        retry_after: Duration,
    },
    /// No job of that id.
    #[error("job {id} does not exist")]
    UnknownJob {
        /// The id asked for.
        id: JobId,
    },
    /// A parameter set could not be loaded or evicted.
    #[error(transparent)]
    Params(#[from] ParamsLoadError),
    /// The job store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RequestError {
    /// Its stable class.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RequestError::UnknownCircuit { .. } => ErrorKind::UnknownCircuit,
            RequestError::Witness { .. } => ErrorKind::Witness,
            RequestError::UnknownParams { .. } => ErrorKind::UnknownParams,
            RequestError::ParamsMismatch { .. } => ErrorKind::ParamsMismatch,
            RequestError::Priority { .. } => ErrorKind::Priority,
            RequestError::DeadlinePassed { .. } => ErrorKind::Deadline,
            RequestError::Argument { .. } => ErrorKind::Argument,
            RequestError::IdempotencyConflict { .. } => ErrorKind::IdempotencyConflict,
            RequestError::Busy { .. } => ErrorKind::Busy,
            RequestError::UnknownJob { .. } => ErrorKind::UnknownJob,
            RequestError::Params(ParamsLoadError::Unknown { .. }) => ErrorKind::UnknownParams,
            RequestError::Params(_) => ErrorKind::Params,
            RequestError::Store(_) => ErrorKind::Store,
        }
    }
}

impl From<RequestError> for Status {
    fn from(e: RequestError) -> Status {
        let kind = e.kind();
        let code = match kind {
            ErrorKind::UnknownCircuit
            | ErrorKind::Witness
            | ErrorKind::ParamsMismatch
            | ErrorKind::Priority
            | ErrorKind::Deadline
            | ErrorKind::Argument => Code::InvalidArgument,
            ErrorKind::UnknownParams | ErrorKind::UnknownJob => Code::NotFound,
            ErrorKind::IdempotencyConflict => Code::AlreadyExists,
            ErrorKind::Busy => Code::ResourceExhausted,
            ErrorKind::Params => Code::FailedPrecondition,
            ErrorKind::Store | ErrorKind::Other => Code::Internal,
            ErrorKind::Unauthenticated => Code::Unauthenticated,
        };
        let mut status = Status::new(code, e.to_string());
        status.metadata_mut().insert(ERROR_KIND_HEADER, MetadataValue::from_static(kind.name()));
        if let RequestError::Busy { retry_after, .. } = e {
            let ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX);
            status.metadata_mut().insert(RETRY_AFTER_HEADER, MetadataValue::from(ms));
        }
        status
    }
}

/// The first `n` characters of `s` (an untrusted string echoed in a message).
pub(crate) fn clip(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Why a bearer token file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file could not be read.
    #[error("token file {path}: {op} failed: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The token is shorter than 16 or longer than 1024 characters, or holds characters other
    /// than printable ASCII (it travels in an HTTP header).
    #[error(
        "token file {path}: the token must be 16 to 1024 printable ASCII characters without spaces (one line), \
         e.g. `openssl rand -hex 32 > {path}`"
    )]
    Malformed {
        /// The file.
        path: PathBuf,
    },
}

/// Why the service could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The socket could not be bound or prepared.
    #[error("listening on {address}: {op} failed: {source}")]
    Listen {
        /// The socket path or TCP address.
        address: String,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A unix socket path is in use by a live server (or is not a socket).
    #[error("unix socket {path}: {reason}")]
    SocketInUse {
        /// The path.
        path: PathBuf,
        /// Why it cannot be used.
        reason: &'static str,
    },
    /// The gRPC server failed.
    #[error("serving gRPC failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A worker thread could not be started.
    #[error("starting worker thread {worker} failed: {source}")]
    Spawn {
        /// The worker.
        worker: usize,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The configuration is unusable (the message names the setting).
    #[error("{0}")]
    Config(String),
}

/// What a client call ended with, when not with its answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The service could not be reached.
    #[error("connecting to the service at {address}: {source} (is `kiln serve` running there?)")]
    Connect {
        /// Where.
        address: String,
        /// The transport's error.
        #[source]
        source: tonic::transport::Error,
    },
    /// The address is not usable.
    #[error("service address {address:?}: {reason}")]
    Address {
        /// The address given.
        address: String,
        /// Why.
        reason: String,
    },
    /// The service is busy: retry after this long.
    #[error("{message}")]
    Busy {
        /// The server's message.
        message: String,
        /// How long to wait before retrying.
        retry_after: Duration,
    },
    /// The service refused the request (nothing changed).
    #[error("{kind}: {message}")]
    Refused {
        /// The refusal's class.
        kind: ErrorKind,
        /// The server's message.
        message: String,
    },
    /// The call failed in transport or in a way the server did not classify.
    #[error("the call failed: {0}")]
    Status(Box<Status>),
    /// The server answered with a value this client cannot read (another version?).
    #[error("the server's answer has an unknown {field} value {value}")]
    Unreadable {
        /// The field.
        field: &'static str,
        /// Its value.
        value: i32,
    },
    /// The token could not be read.
    #[error(transparent)]
    Token(#[from] TokenError),
}

impl ClientError {
    /// The refusal's class ([`ErrorKind::Busy`] for busy, [`ErrorKind::Other`] for transport).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ClientError::Busy { .. } => ErrorKind::Busy,
            ClientError::Refused { kind, .. } => *kind,
            _ => ErrorKind::Other,
        }
    }
}

impl From<Status> for ClientError {
    fn from(s: Status) -> ClientError {
        let kind = s.metadata().get(ERROR_KIND_HEADER).and_then(|v| v.to_str().ok()).map(ErrorKind::from_name);
        let kind = match (kind, s.code()) {
            (Some(k), _) => k,
            (None, Code::Unauthenticated) => ErrorKind::Unauthenticated,
            (None, _) => return ClientError::Status(Box::new(s)),
        };
        let message = s.message().to_string();
        if kind == ErrorKind::Busy {
            let ms = s.metadata().get(RETRY_AFTER_HEADER).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
            return ClientError::Busy { message, retry_after: Duration::from_millis(ms.unwrap_or(1000)) };
        }
        ClientError::Refused { kind, message }
    }
}
