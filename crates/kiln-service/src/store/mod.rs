//! Where jobs live: every accepted job and its result are written here before anyone is told.
//!
//! [`Store`] is what the service needs of a database; [`SqliteStore`] is the embedded one (a
//! file, nothing to start, one service), [`PostgresStore`] the shared one (several services on
//! one queue, claiming with `FOR UPDATE SKIP LOCKED`). Claims carry a lease that the claiming
//! worker renews while it proves, and a job whose lease expired (its host died) is claimable
//! again.

mod postgres;
mod sqlite;

use std::time::Duration;

use crate::job::{JobId, JobRecord, JobRequest, JobState, Priority};

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// A store's failure (the database's own error, kept as its message and kind).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed an operation.
    #[error("job store {path}: {op} failed: {source}")]
    Database {
        /// The database (its file or URL, without credentials).
        path: String,
        /// What was being done.
        op: &'static str,
        /// The database's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A row holds a value this version cannot read (a newer or damaged database).
    #[error("job store {path}: job {id} has an unreadable {column}: {value:?} (a database of another kiln version?)")]
    Corrupt {
        /// The database.
        path: String,
        /// The job.
        id: JobId,
        /// The column.
        column: &'static str,
        /// What it holds.
        value: String,
    },
    /// The store's lock is poisoned (a thread panicked while holding it).
    #[error("job store {path}: its lock was poisoned by a panic; restart the service")]
    Poisoned {
        /// The database.
        path: String,
    },
}

/// What [`Store::submit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    /// A new job, stored (durably: the transaction committed).
    Accepted(JobId),
    /// The idempotency key names this job, accepted before with the same request.
    Existing(JobId),
    /// The idempotency key names a job with another request: nothing stored.
    KeyConflict(JobId),
    /// The priority's queue already holds `queued` jobs (at least the limit): nothing stored.
    Busy {
        /// Jobs queued at this priority.
        queued: u64,
    },
}

/// What [`Store::cancel`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// The job was queued and is now cancelled.
    Cancelled,
    /// The job was not queued: it keeps this state (a running job finishes).
    Not(JobState),
    /// No such job.
    Unknown,
}

/// How a claimed job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A proof (already verified).
    Proved(Vec<u8>),
    /// No proof: a stable kind and the message.
    Failed {
        /// A stable name of the failure (`deadline_expired`, `prove`, `params`, ...).
        kind: String,
        /// What happened.
        message: String,
    },
}

/// A job's count by state and priority ([`Store::counts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// The state.
    pub state: JobState,
    /// The priority.
    pub priority: Priority,
    /// Jobs in it.
    pub jobs: u64,
}

/// A job database. Every method is one transaction; a method returning `Ok` has committed.
pub trait Store: Send + Sync + 'static {
    /// Stores `request` as a queued job unless its idempotency key is known (then that job is
    /// returned) or `queue_limit` jobs of its priority are already queued (then nothing is
    /// stored and the caller is told how many).
    ///
    /// # Errors
    /// The database failed; nothing was stored.
    fn submit(&self, request: &JobRequest, queue_limit: u64) -> Result<Submitted, StoreError>;

    /// Claims the most urgent claimable job (queued, or running under an expired lease: its
    /// worker's host died) claimed fewer than `max_attempts` times before, for `owner` until
    /// `lease` from now, counting an attempt.
    ///
    /// # Errors
    /// The database failed; nothing was claimed.
    fn claim(&self, owner: &str, lease: Duration, max_attempts: u32) -> Result<Option<JobRecord>, StoreError>;

    /// Extends the leases of every job `owner` is running to `lease` from now; returns how many.
    ///
    /// # Errors
    /// The database failed.
    fn renew(&self, owner: &str, lease: Duration) -> Result<u64, StoreError>;

    /// Records how `job` ended, if `owner` still holds it (a worker whose lease expired and
    /// was taken over records nothing: `Ok(false)`). The record is final afterwards.
    ///
    /// # Errors
    /// The database failed; nothing was recorded (the job stays claimable after its lease).
    fn finish(&self, job: JobId, owner: &str, outcome: &Outcome) -> Result<bool, StoreError>;

    /// Fails every claimable job that was already claimed `max_attempts` times (a job that
    /// keeps killing its host), with kind `abandoned`; returns how many.
    ///
    /// # Errors
    /// The database failed.
    fn abandon(&self, max_attempts: u32) -> Result<u64, StoreError>;

    /// Puts `owner`'s running jobs back in the queue (a worker stopping without finishing).
    ///
    /// # Errors
    /// The database failed.
    fn release(&self, owner: &str) -> Result<u64, StoreError>;

    /// Cancels `job` if it is queued.
    ///
    /// # Errors
    /// The database failed.
    fn cancel(&self, job: JobId) -> Result<Cancelled, StoreError>;

    /// The job's record.
    ///
    /// # Errors
    /// The database failed.
    fn get(&self, job: JobId) -> Result<Option<JobRecord>, StoreError>;

    /// Jobs by state and priority (only the non-empty pairs).
    ///
    /// # Errors
    /// The database failed.
    fn counts(&self) -> Result<Vec<Count>, StoreError>;

    /// A description for logs (the file, or the URL without credentials).
    fn describe(&self) -> String;
}
