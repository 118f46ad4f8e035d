//! The embedded store: one SQLite file (WAL, fully synchronous commits), held by one service
//! at a time.
//!
//! The connection takes SQLite's exclusive lock on the file when it opens it and keeps it
//! (`locking_mode = EXCLUSIVE`): a second service pointed at the same file is refused at once
//! ("database is locked") instead of proving the same jobs. Since no other process can hold
//! a claim on this file, the jobs that were running when the previous holder died are put
//! back in the queue at open; the leases still matter to the code path a shared store uses.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::{Cancelled, Count, Outcome, Store, StoreError, Submitted};
use crate::job::{JobId, JobRecord, JobRequest, JobState, Priority, from_unix_ms, now_ms, unix_ms};

/// The schema. `completion` numbers the final records in the order they became final.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key  TEXT UNIQUE,
    circuit          TEXT NOT NULL,
    witness          BLOB NOT NULL,
    params_id        TEXT NOT NULL,
    priority         INTEGER NOT NULL,
    deadline_ms      INTEGER,
    state            TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_expires_ms INTEGER,
    proof            BLOB,
    error_kind       TEXT,
    error            TEXT,
    submitted_ms     INTEGER NOT NULL,
    started_ms       INTEGER,
    finished_ms      INTEGER,
    completion       INTEGER UNIQUE,
    finished_by      TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_claim_order ON jobs (state, priority, id);
";

/// The columns [`SqliteStore::record`] reads, in its order.
const COLUMNS: &str = "id, idempotency_key, circuit, witness, params_id, priority, deadline_ms, state, attempts, \
                       proof, error_kind, error, submitted_ms, finished_ms, completion, finished_by";

/// Where the claimable jobs are: queued, or running under an expired lease (`?1`: now).
const CLAIMABLE: &str = "(state = 'queued' OR (state = 'running' AND lease_expires_ms < ?1))";

/// The next completion number (inside a write transaction, so no two records share one).
const NEXT_COMPLETION: &str = "(SELECT COALESCE(MAX(completion), 0) + 1 FROM jobs)";

/// Jobs in one SQLite file.
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish()
    }
}

fn ms_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn lease_end(lease: Duration) -> i64 {
    ms_i64(now_ms().saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX)))
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, takes its exclusive lock, and puts
    /// the jobs a previous holder left running back in the queue.
    ///
    /// # Errors
    /// The file cannot be opened or created, another service holds it, or it is not a kiln
    /// job database.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let describe = path.display().to_string();
        let db = |op| {
            let path = describe.clone();
            move |e: rusqlite::Error| StoreError::Database { path, op, source: Box::new(e) }
        };
        let conn = Connection::open(path).map_err(db("open"))?;
        conn.busy_timeout(Duration::ZERO).map_err(db("set busy timeout"))?;
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE").map_err(db("take the exclusive lock"))?;
        // The WAL with fully synchronous commits: a commit is on disk when it returns.
        let mode: String =
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(db("take the exclusive lock"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %describe, mode, "SQLite did not switch to WAL; commits stay durable");
        }
        conn.pragma_update(None, "synchronous", "FULL").map_err(db("set synchronous"))?;
        conn.execute_batch(SCHEMA).map_err(db("create the schema"))?;
        let store = SqliteStore { path: path.to_path_buf(), conn: Mutex::new(conn) };
        let resumed = store.with(|c| {
            c.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_ms = NULL WHERE state = 'running'",
                [],
            )
            .map_err(db("requeue the jobs left running"))
        })?;
        if resumed > 0 {
            tracing::info!(path = %describe, resumed, "jobs left running by the previous service are queued again");
        }
        Ok(store)
    }

    fn err(&self, op: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| StoreError::Database { path: self.path.display().to_string(), op, source: Box::new(e) }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned { path: self.path.display().to_string() })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        f(&mut *self.lock()?)
    }

    /// A row of [`COLUMNS`] as a record (`Ok(Err)`: a value this version cannot read).
    fn record(&self, row: &Row<'_>) -> rusqlite::Result<Result<JobRecord, StoreError>> {
        let id: i64 = row.get(0)?;
        let id = id as JobId;
        let corrupt =
            |column, value: String| StoreError::Corrupt { path: self.path.display().to_string(), id, column, value };
        let rank: i64 = row.get(5)?;
        let Some(priority) = Priority::from_rank(rank) else { return Ok(Err(corrupt("priority", rank.to_string()))) };
        let state: String = row.get(7)?;
        let Some(state) = JobState::from_name(&state) else { return Ok(Err(corrupt("state", state))) };
        let deadline: Option<i64> = row.get(6)?;
        let attempts: i64 = row.get(8)?;
        let error_kind: Option<String> = row.get(10)?;
        let error: Option<String> = row.get(11)?;
        let submitted: i64 = row.get(12)?;
        let finished: Option<i64> = row.get(13)?;
        let completion: Option<i64> = row.get(14)?;
        Ok(Ok(JobRecord {
            id,
            request: JobRequest {
                idempotency_key: row.get(1)?,
                circuit: row.get(2)?,
                witness: row.get(3)?,
                params_id: row.get(4)?,
                priority,
                deadline: deadline.map(|ms| from_unix_ms(ms.max(0) as u64)),
            },
            state,
            attempts: u32::try_from(attempts.max(0)).unwrap_or(u32::MAX),
            proof: row.get(9)?,
            error: error_kind.map(|k| (k, error.unwrap_or_default())),
            submitted: from_unix_ms(submitted.max(0) as u64),
            finished: finished.map(|ms| from_unix_ms(ms.max(0) as u64)),
            completion: completion.map(|c| c.max(0) as u64),
            finished_by: row.get(15)?,
        }))
    }

    fn get_in(&self, c: &Connection, job: JobId) -> Result<Option<JobRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1");
        let found =
            c.query_row(&sql, [job as i64], |row| self.record(row)).optional().map_err(self.err("read a job"))?;
        found.transpose()
    }
}

impl Store for SqliteStore {
    fn submit(&self, request: &JobRequest, queue_limit: u64) -> Result<Submitted, StoreError> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(self.err("begin"))?;
            if let Some(key) = &request.idempotency_key {
                let sql = format!("SELECT {COLUMNS} FROM jobs WHERE idempotency_key = ?1");
                let found = tx.query_row(&sql, [key], |row| self.record(row)).optional().map_err(self.err("look up the key"))?;
                if let Some(existing) = found.transpose()? {
                    // Same request (the deadline may be recomputed by a retrying client).
                    let same = JobRequest { deadline: request.deadline, ..existing.request.clone() } == *request;
                    return Ok(if same { Submitted::Existing(existing.id) } else { Submitted::KeyConflict(existing.id) });
                }
            }
            let queued: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND priority = ?1",
                    [request.priority.rank()],
                    |r| r.get(0),
                )
                .map_err(self.err("count the queue"))?;
            let queued = queued.max(0) as u64;
            if queued >= queue_limit {
                return Ok(Submitted::Busy { queued });
            }
            tx.execute(
                "INSERT INTO jobs (idempotency_key, circuit, witness, params_id, priority, deadline_ms, state, submitted_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7)",
                params![
                    request.idempotency_key,
                    request.circuit,
                    request.witness,
                    request.params_id,
                    request.priority.rank(),
                    request.deadline.map(|d| ms_i64(unix_ms(d))),
                    ms_i64(now_ms()),
                ],
            )
            .map_err(self.err("insert the job"))?;
            let id = tx.last_insert_rowid() as JobId;
            tx.commit().map_err(self.err("commit the job"))?;
            Ok(Submitted::Accepted(id))
        })
    }

    fn claim(&self, owner: &str, lease: Duration, max_attempts: u32) -> Result<Option<JobRecord>, StoreError> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(self.err("begin"))?;
            let now = ms_i64(now_ms());
            let next: Option<i64> = tx
                .query_row(
                    &format!("SELECT id FROM jobs WHERE {CLAIMABLE} AND attempts < ?2 ORDER BY priority, id LIMIT 1"),
                    [now, i64::from(max_attempts)],
                    |r| r.get(0),
                )
                .optional()
                .map_err(self.err("find the next job"))?;
            let Some(id) = next else { return Ok(None) };
            tx.execute(
                "UPDATE jobs SET state = 'running', lease_owner = ?2, lease_expires_ms = ?3, attempts = attempts + 1,
                 started_ms = ?4 WHERE id = ?1",
                params![id, owner, lease_end(lease), now],
            )
            .map_err(self.err("claim the job"))?;
            let record = self.get_in(&tx, id as JobId)?;
            tx.commit().map_err(self.err("commit the claim"))?;
            Ok(record)
        })
    }

    fn renew(&self, owner: &str, lease: Duration) -> Result<u64, StoreError> {
        self.with(|c| {
            let n = c
                .execute(
                    "UPDATE jobs SET lease_expires_ms = ?2 WHERE state = 'running' AND lease_owner = ?1",
                    params![owner, lease_end(lease)],
                )
                .map_err(self.err("renew the leases"))?;
            Ok(n as u64)
        })
    }

    fn finish(&self, job: JobId, owner: &str, outcome: &Outcome) -> Result<bool, StoreError> {
        let (state, proof, kind, message) = match outcome {
            Outcome::Proved(proof) => ("done", Some(proof.as_slice()), None, None),
            Outcome::Failed { kind, message } => ("failed", None, Some(kind.as_str()), Some(message.as_str())),
        };
        self.with(|c| {
            let n = c
                .execute(
                    &format!(
                        "UPDATE jobs SET state = ?3, proof = ?4, error_kind = ?5, error = ?6, finished_ms = ?7,
                         completion = {NEXT_COMPLETION}, finished_by = ?2, lease_owner = NULL, lease_expires_ms = NULL
                         WHERE id = ?1 AND state = 'running' AND lease_owner = ?2"
                    ),
                    params![job as i64, owner, state, proof, kind, message, ms_i64(now_ms())],
                )
                .map_err(self.err("record the result"))?;
            Ok(n == 1)
        })
    }

    fn abandon(&self, max_attempts: u32) -> Result<u64, StoreError> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(self.err("begin"))?;
            let ids: Vec<i64> = {
                let mut q = tx
                    .prepare(&format!("SELECT id FROM jobs WHERE {CLAIMABLE} AND attempts >= ?2 ORDER BY id"))
                    .map_err(self.err("find abandoned jobs"))?;
                let rows = q
                    .query_map(params![ms_i64(now_ms()), i64::from(max_attempts)], |r| r.get(0))
                    .map_err(self.err("find abandoned jobs"))?;
                rows.collect::<rusqlite::Result<_>>().map_err(self.err("find abandoned jobs"))?
            };
            let message = format!(
                "claimed {max_attempts} times without a result (its host died or restarted each time); not tried again"
            );
            for &id in &ids {
                tx.execute(
                    &format!(
                        "UPDATE jobs SET state = 'failed', error_kind = 'abandoned', error = ?2, finished_ms = ?3,
                         completion = {NEXT_COMPLETION}, lease_owner = NULL, lease_expires_ms = NULL WHERE id = ?1"
                    ),
                    params![id, message, ms_i64(now_ms())],
                )
                .map_err(self.err("fail an abandoned job"))?;
            }
            tx.commit().map_err(self.err("commit"))?;
            Ok(ids.len() as u64)
        })
    }

    fn release(&self, owner: &str) -> Result<u64, StoreError> {
        self.with(|c| {
            let n = c
                .execute(
                    "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_ms = NULL
                     WHERE state = 'running' AND lease_owner = ?1",
                    [owner],
                )
                .map_err(self.err("release the jobs"))?;
            Ok(n as u64)
        })
    }

    fn cancel(&self, job: JobId) -> Result<Cancelled, StoreError> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(self.err("begin"))?;
            let n = tx
                .execute(
                    &format!(
                        "UPDATE jobs SET state = 'cancelled', error_kind = 'cancelled', error = 'cancelled by a client',
                         finished_ms = ?2, completion = {NEXT_COMPLETION} WHERE id = ?1 AND state = 'queued'"
                    ),
                    params![job as i64, ms_i64(now_ms())],
                )
                .map_err(self.err("cancel the job"))?;
            let result = if n == 1 {
                Cancelled::Cancelled
            } else {
                match self.get_in(&tx, job)? {
                    Some(r) => Cancelled::Not(r.state),
                    None => Cancelled::Unknown,
                }
            };
            tx.commit().map_err(self.err("commit"))?;
            Ok(result)
        })
    }

    fn get(&self, job: JobId) -> Result<Option<JobRecord>, StoreError> {
        self.with(|c| self.get_in(c, job))
    }

    fn counts(&self) -> Result<Vec<Count>, StoreError> {
        self.with(|c| {
            let mut q = c
                .prepare("SELECT state, priority, COUNT(*) FROM jobs GROUP BY state, priority")
                .map_err(self.err("count the jobs"))?;
            let rows = q
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
                .map_err(self.err("count the jobs"))?;
            let mut out = Vec::new();
            for row in rows {
                let (state, rank, n) = row.map_err(self.err("count the jobs"))?;
                // A value this version does not know is left out of the counts, not fatal.
                if let (Some(state), Some(priority)) = (JobState::from_name(&state), Priority::from_rank(rank)) {
                    out.push(Count { state, priority, jobs: n.max(0) as u64 });
                }
            }
            Ok(out)
        })
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(priority: Priority, key: Option<&str>) -> JobRequest {
        JobRequest {
            circuit: "porep".into(),
            witness: vec![6, 1, 0, 0, 0, 0, 0, 0, 0],
            params_id: "p".into(),
            priority,
            deadline: None,
            idempotency_key: key.map(str::to_string),
        }
    }

    #[test]
    fn claims_by_priority_then_age_and_finishes_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("jobs.db")).expect("open");
        let low = store.submit(&request(Priority::Low, None), 10).expect("submit");
        let high = store.submit(&request(Priority::High, None), 10).expect("submit");
        let (Submitted::Accepted(low), Submitted::Accepted(high)) = (low, high) else { panic!("both accepted") };
        let first = store.claim("a", Duration::from_secs(60), 5).expect("claim").expect("a job");
        assert_eq!(first.id, high);
        assert_eq!(first.attempts, 1);
        let second = store.claim("a", Duration::from_secs(60), 5).expect("claim").expect("a job");
        assert_eq!(second.id, low);
        assert!(store.claim("a", Duration::from_secs(60), 5).expect("claim").is_none());
        assert!(store.finish(high, "a", &Outcome::Proved(vec![1; 192])).expect("finish"));
        // A second result for the same job, or one by a worker that does not hold it, is refused.
        assert!(!store.finish(high, "a", &Outcome::Proved(vec![2; 192])).expect("finish"));
        assert!(!store.finish(low, "b", &Outcome::Proved(vec![2; 192])).expect("finish"));
        let done = store.get(high).expect("get").expect("exists");
        assert_eq!((done.state, done.proof, done.completion), (JobState::Done, Some(vec![1; 192]), Some(1)));
    }

    #[test]
    fn idempotency_key_returns_the_first_job_and_refuses_another_request() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("jobs.db")).expect("open");
        let a = store.submit(&request(Priority::Normal, Some("k")), 10).expect("submit");
        let Submitted::Accepted(id) = a else { panic!("accepted") };
        assert_eq!(store.submit(&request(Priority::Normal, Some("k")), 10).expect("submit"), Submitted::Existing(id));
        assert_eq!(store.submit(&request(Priority::Low, Some("k")), 10).expect("submit"), Submitted::KeyConflict(id));
        assert_eq!(store.counts().expect("counts").iter().map(|c| c.jobs).sum::<u64>(), 1);
    }

    #[test]
    fn queue_limit_is_per_priority() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("jobs.db")).expect("open");
        for _ in 0..2 {
            assert!(matches!(store.submit(&request(Priority::Low, None), 2).expect("submit"), Submitted::Accepted(_)));
        }
        assert_eq!(store.submit(&request(Priority::Low, None), 2).expect("submit"), Submitted::Busy { queued: 2 });
        assert!(matches!(store.submit(&request(Priority::High, None), 2).expect("submit"), Submitted::Accepted(_)));
    }

    #[test]
    fn reopening_requeues_running_jobs_and_a_second_opener_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("jobs.db");
        let store = SqliteStore::open(&path).expect("open");
        let Submitted::Accepted(id) = store.submit(&request(Priority::Normal, None), 10).expect("submit") else {
            panic!("accepted")
        };
        store.claim("gone", Duration::from_secs(3600), 5).expect("claim").expect("a job");
        assert!(SqliteStore::open(&path).is_err(), "the file is held by the first store");
        drop(store);
        let store = SqliteStore::open(&path).expect("reopen");
        let again = store.claim("new", Duration::from_secs(60), 5).expect("claim").expect("requeued");
        assert_eq!((again.id, again.attempts), (id, 2));
    }

    #[test]
    fn expired_lease_is_claimable_and_abandon_stops_a_poison_job() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("jobs.db")).expect("open");
        let Submitted::Accepted(id) = store.submit(&request(Priority::Normal, None), 10).expect("submit") else {
            panic!("accepted")
        };
        store.claim("dead", Duration::ZERO, 5).expect("claim").expect("a job");
        std::thread::sleep(Duration::from_millis(5));
        let retaken = store.claim("alive", Duration::ZERO, 5).expect("claim").expect("expired lease");
        assert_eq!((retaken.id, retaken.attempts), (id, 2));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(store.abandon(2).expect("abandon"), 1);
        let r = store.get(id).expect("get").expect("exists");
        assert_eq!((r.state, r.error.map(|e| e.0)), (JobState::Failed, Some("abandoned".to_string())));
        // The dead worker's late result is refused.
        assert!(!store.finish(id, "dead", &Outcome::Proved(vec![0; 192])).expect("finish"));
    }

    #[test]
    fn cancel_only_while_queued() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("jobs.db")).expect("open");
        let Submitted::Accepted(a) = store.submit(&request(Priority::Normal, None), 10).expect("submit") else {
            panic!("accepted")
        };
        let Submitted::Accepted(b) = store.submit(&request(Priority::Normal, None), 10).expect("submit") else {
            panic!("accepted")
        };
        store.claim("w", Duration::from_secs(60), 5).expect("claim").expect("a");
        assert_eq!(store.cancel(a).expect("cancel"), Cancelled::Not(JobState::Running));
        assert_eq!(store.cancel(b).expect("cancel"), Cancelled::Cancelled);
        assert_eq!(store.cancel(b).expect("cancel"), Cancelled::Not(JobState::Cancelled));
        assert_eq!(store.cancel(99).expect("cancel"), Cancelled::Unknown);
    }
}
