//! What a job is to the service: its request, its priority, its state, and its record in the
//! store.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::proto::{WirePriority, WireState};

/// A job's id in the store (unique per database, never reused).
pub type JobId = u64;

/// A job's urgency. Workers take the most urgent queued job first, oldest first within a
/// priority; a job being proved is never interrupted (priorities pre-empt at job boundaries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Priority {
    /// Proofs with a deadline (a WindowPoSt-like proof).
    High,
    /// The default.
    Normal,
    /// Work that can wait (a sealing proof).
    Low,
}

impl Priority {
    /// All priorities, most urgent first.
    pub const ALL: [Priority; 3] = [Priority::High, Priority::Normal, Priority::Low];

    /// 0 for the most urgent: the order workers take jobs in, and the store's column.
    pub fn rank(self) -> i64 {
        match self {
            Priority::High => 0,
            Priority::Normal => 1,
            Priority::Low => 2,
        }
    }

    /// The priority of a rank (the store's column).
    pub fn from_rank(rank: i64) -> Option<Priority> {
        Priority::ALL.into_iter().find(|p| p.rank() == rank)
    }

    /// Its name (metrics labels, the command line).
    pub fn name(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }

    /// The wire value.
    pub fn to_wire(self) -> i32 {
        match self {
            Priority::High => WirePriority::High as i32,
            Priority::Normal => WirePriority::Normal as i32,
            Priority::Low => WirePriority::Low as i32,
        }
    }

    /// The priority of a wire value, if it is one.
    pub fn from_wire(value: i32) -> Option<Priority> {
        Some(match WirePriority::try_from(value).ok()? {
            WirePriority::High => Priority::High,
            WirePriority::Normal => Priority::Normal,
            WirePriority::Low => Priority::Low,
        })
    }
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Priority {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Priority::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown priority {s:?}: choose one of high, normal, low"))
    }
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobState {
    /// Accepted and waiting for a worker.
    Queued,
    /// Claimed by a worker (under a lease that the worker renews while it proves).
    Running,
    /// Proved; the proof verified and is stored.
    Done,
    /// Finished without a proof (`error_kind` and `error` say why).
    Failed,
    /// Cancelled while queued.
    Cancelled,
}

impl JobState {
    /// All states.
    pub const ALL: [JobState; 5] =
        [JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled];

    /// Its name (the store's column, metrics labels, the command line).
    pub fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    /// The state of a name (the store's column).
    pub fn from_name(name: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the job is over (done, failed or cancelled): its record no longer changes.
    pub fn is_final(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed | JobState::Cancelled)
    }

    /// The wire value.
    pub fn to_wire(self) -> i32 {
        (match self {
            JobState::Queued => WireState::Queued,
            JobState::Running => WireState::Running,
            JobState::Done => WireState::Done,
            JobState::Failed => WireState::Failed,
            JobState::Cancelled => WireState::Cancelled,
        }) as i32
    }

    /// The state of a wire value, if it is one.
    pub fn from_wire(value: i32) -> Option<JobState> {
        Some(match WireState::try_from(value).ok()? {
            WireState::Queued => JobState::Queued,
            WireState::Running => JobState::Running,
            WireState::Done => JobState::Done,
            WireState::Failed => JobState::Failed,
            WireState::Cancelled => JobState::Cancelled,
        })
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A job as a client asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRequest {
    /// The circuit kind's registered name (`porep`, `mimc`, `squaring` for the built-ins).
    pub circuit: String,
    /// The witness payload, decoded by the circuit kind ([`crate::CircuitKind::decode`]); for
    /// the built-ins [`crate::BuiltinWitness`].
    pub witness: Vec<u8>,
    /// The parameter set's id, as the service was configured with it.
    pub params_id: String,
    /// How urgent.
    pub priority: Priority,
    /// Not proved after this instant (it fails as `deadline_expired` instead); `None`: no
    /// deadline.
    pub deadline: Option<SystemTime>,
    /// The same key submitted again with the same request returns the first job instead of a
    /// new one (a retried request never proves twice; the deadline may differ), with another
    /// circuit, witness, parameter set or priority it is refused; `None`: no key.
    pub idempotency_key: Option<String>,
}

/// A job as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRecord {
    /// Its id.
    pub id: JobId,
    /// The request.
    pub request: JobRequest,
    /// Where it is.
    pub state: JobState,
    /// Times it was claimed by a worker (more than one: a host died or restarted while proving it).
    pub attempts: u32,
    /// The proof (192 bytes), once done.
    pub proof: Option<Vec<u8>>,
    /// Why it failed: a stable kind (`deadline_expired`, `prove`, `params`, ...) and the message.
    pub error: Option<(String, String)>,
    /// When it was accepted.
    pub submitted: SystemTime,
    /// When it finished.
    pub finished: Option<SystemTime>,
    /// Its place in the order the store's jobs finished (1, 2, ...), once final.
    pub completion: Option<u64>,
    /// The worker that finished it (`host:pid:n`).
    pub finished_by: Option<String>,
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The instant `ms` milliseconds after the Unix epoch.
pub fn from_unix_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}
