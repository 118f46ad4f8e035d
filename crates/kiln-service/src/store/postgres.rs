//! The shared store: one Postgres database, several services (hosts) on one queue.
//!
//! A worker claims a job with `FOR UPDATE SKIP LOCKED` (two hosts never take the same row, and
//! neither waits on the other's claim) under a lease it renews; a host that dies leaves its
//! claims to expire, and any host takes those jobs again. Unlike the SQLite store, nothing is
//! requeued at open: the running jobs may belong to live hosts. Submissions of one priority
//! are serialised with a transaction-scoped advisory lock, so the queue limit holds across
//! hosts.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use postgres::{Client, NoTls, Row};

use super::{Cancelled, Count, Outcome, Store, StoreError, Submitted};
use crate::job::{JobId, JobRecord, JobRequest, JobState, Priority, from_unix_ms, now_ms, unix_ms};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kiln_jobs (
    id               BIGSERIAL PRIMARY KEY,
    idempotency_key  TEXT UNIQUE,
    circuit          TEXT NOT NULL,
    witness          BYTEA NOT NULL,
    params_id        TEXT NOT NULL,
    priority         BIGINT NOT NULL,
    deadline_ms      BIGINT,
    state            TEXT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_expires_ms BIGINT,
    proof            BYTEA,
    error_kind       TEXT,
    error            TEXT,
    submitted_ms     BIGINT NOT NULL,
    started_ms       BIGINT,
    finished_ms      BIGINT,
    completion       BIGINT UNIQUE,
    finished_by      TEXT
);
CREATE INDEX IF NOT EXISTS kiln_jobs_by_claim_order ON kiln_jobs (state, priority, id);
CREATE SEQUENCE IF NOT EXISTS kiln_jobs_completion;
";

/// The columns [`PostgresStore::record`] reads, in its order.
const COLUMNS: &str = "id, idempotency_key, circuit, witness, params_id, priority, deadline_ms, state, attempts, \
                       proof, error_kind, error, submitted_ms, finished_ms, completion, finished_by";

/// Claimable jobs: queued, or running under an expired lease (`$1`: now).
const CLAIMABLE: &str = "(state = 'queued' OR (state = 'running' AND lease_expires_ms < $1))";

/// A key of `pg_advisory_xact_lock` for submissions of one priority (an arbitrary constant
/// that names kiln, plus the rank).
const SUBMIT_LOCK: i64 = 0x6b69_6c6e_0000;

/// Jobs in a Postgres database, shared by every service given its URL.
pub struct PostgresStore {
    url: String,
    shown: String,
    client: Mutex<Client>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("url", &self.shown).finish()
    }
}

/// `url` without its password.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return "postgres://…".into() };
    match rest.split_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

fn ms_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn lease_end(lease: Duration) -> i64 {
    ms_i64(now_ms().saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX)))
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/db`, no TLS) and creates the
    /// tables if they are missing.
    ///
    /// # Errors
    /// The server cannot be reached or refuses the login or the schema.
    pub fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let shown = redact(url);
        let err = |op| {
            let path = shown.clone();
            move |e: postgres::Error| StoreError::Database { path, op, source: Box::new(e) }
        };
        let mut client = Client::connect(url, NoTls).map_err(err("connect"))?;
        // Concurrent first starts may race on CREATE ... IF NOT EXISTS; one lock orders them.
        let mut tx = client.transaction().map_err(err("begin"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&(SUBMIT_LOCK - 1)]).map_err(err("lock the schema"))?;
        tx.batch_execute(SCHEMA).map_err(err("create the schema"))?;
        tx.commit().map_err(err("create the schema"))?;
        Ok(PostgresStore { url: url.to_string(), shown, client: Mutex::new(client) })
    }

    fn err(&self, op: &'static str) -> impl Fn(postgres::Error) -> StoreError + '_ {
        move |e| StoreError::Database { path: self.shown.clone(), op, source: Box::new(e) }
    }

    /// The connection, reconnected first if the server closed it (a restart of Postgres).
    fn lock(&self) -> Result<MutexGuard<'_, Client>, StoreError> {
        let mut client = self.client.lock().map_err(|_| StoreError::Poisoned { path: self.shown.clone() })?;
        if client.is_closed() {
            *client = Client::connect(&self.url, NoTls).map_err(self.err("reconnect"))?;
        }
        Ok(client)
    }

    fn record(&self, row: &Row) -> Result<JobRecord, StoreError> {
        let get_err = self.err("read a job");
        let id: i64 = row.try_get(0).map_err(&get_err)?;
        let id = id as JobId;
        let corrupt = |column, value: String| StoreError::Corrupt { path: self.shown.clone(), id, column, value };
        let rank: i64 = row.try_get(5).map_err(&get_err)?;
        let priority = Priority::from_rank(rank).ok_or_else(|| corrupt("priority", rank.to_string()))?;
        let state: String = row.try_get(7).map_err(&get_err)?;
        let state = JobState::from_name(&state).ok_or_else(|| corrupt("state", state.clone()))?;
        let deadline: Option<i64> = row.try_get(6).map_err(&get_err)?;
        let attempts: i64 = row.try_get(8).map_err(&get_err)?;
        let error_kind: Option<String> = row.try_get(10).map_err(&get_err)?;
        let error: Option<String> = row.try_get(11).map_err(&get_err)?;
        let submitted: i64 = row.try_get(12).map_err(&get_err)?;
        let finished: Option<i64> = row.try_get(13).map_err(&get_err)?;
        let completion: Option<i64> = row.try_get(14).map_err(&get_err)?;
        Ok(JobRecord {
            id,
            request: JobRequest {
                idempotency_key: row.try_get(1).map_err(&get_err)?,
                circuit: row.try_get(2).map_err(&get_err)?,
                witness: row.try_get(3).map_err(&get_err)?,
                params_id: row.try_get(4).map_err(&get_err)?,
                priority,
                deadline: deadline.map(|ms| from_unix_ms(ms.max(0) as u64)),
            },
            state,
            attempts: u32::try_from(attempts.max(0)).unwrap_or(u32::MAX),
            proof: row.try_get(9).map_err(&get_err)?,
            error: error_kind.map(|k| (k, error.unwrap_or_default())),
            submitted: from_unix_ms(submitted.max(0) as u64),
            finished: finished.map(|ms| from_unix_ms(ms.max(0) as u64)),
            completion: completion.map(|c| c.max(0) as u64),
            finished_by: row.try_get(15).map_err(&get_err)?,
        })
    }

    fn get_with(&self, c: &mut impl postgres::GenericClient, job: JobId) -> Result<Option<JobRecord>, StoreError> {
        let row = c
            .query_opt(&format!("SELECT {COLUMNS} FROM kiln_jobs WHERE id = $1"), &[&(job as i64)])
            .map_err(self.err("read a job"))?;
        row.map(|r| self.record(&r)).transpose()
    }
}

impl Store for PostgresStore {
    fn submit(&self, request: &JobRequest, queue_limit: u64) -> Result<Submitted, StoreError> {
        let mut client = self.lock()?;
        let mut tx = client.transaction().map_err(self.err("begin"))?;
        let rank = request.priority.rank();
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&(SUBMIT_LOCK + rank)]).map_err(self.err("lock the queue"))?;
        if let Some(key) = &request.idempotency_key {
            let row = tx
                .query_opt(&format!("SELECT {COLUMNS} FROM kiln_jobs WHERE idempotency_key = $1"), &[key])
                .map_err(self.err("look up the key"))?;
            if let Some(row) = row {
                let existing = self.record(&row)?;
                let same = JobRequest { deadline: request.deadline, ..existing.request.clone() } == *request;
                return Ok(if same { Submitted::Existing(existing.id) } else { Submitted::KeyConflict(existing.id) });
            }
        }
        let queued: i64 = tx
            .query_one("SELECT COUNT(*) FROM kiln_jobs WHERE state = 'queued' AND priority = $1", &[&rank])
            .and_then(|r| r.try_get(0))
            .map_err(self.err("count the queue"))?;
        let queued = queued.max(0) as u64;
        if queued >= queue_limit {
            return Ok(Submitted::Busy { queued });
        }
        // A key inserted by another host in between (another priority's lock) conflicts here.
        let inserted = tx
            .query_opt(
                "INSERT INTO kiln_jobs (idempotency_key, circuit, witness, params_id, priority, deadline_ms, state, submitted_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id",
                &[
                    &request.idempotency_key,
                    &request.circuit,
                    &request.witness,
                    &request.params_id,
                    &rank,
                    &request.deadline.map(|d| ms_i64(unix_ms(d))),
                    &ms_i64(now_ms()),
                ],
            )
            .map_err(self.err("insert the job"))?;
        let Some(row) = inserted else {
            drop(tx);
            drop(client);
            // The key now exists: answer as for a known key.
            return self.submit(request, u64::MAX);
        };
        let id: i64 = row.try_get(0).map_err(self.err("insert the job"))?;
        tx.commit().map_err(self.err("commit the job"))?;
        Ok(Submitted::Accepted(id as JobId))
    }

    fn claim(&self, owner: &str, lease: Duration, max_attempts: u32) -> Result<Option<JobRecord>, StoreError> {
        let mut client = self.lock()?;
        let now = ms_i64(now_ms());
        let row = client
            .query_opt(
                &format!(
                    "UPDATE kiln_jobs SET state = 'running', lease_owner = $2, lease_expires_ms = $3,
                     attempts = attempts + 1, started_ms = $1
                     WHERE id = (SELECT id FROM kiln_jobs WHERE {CLAIMABLE} AND attempts < $4
                                 ORDER BY priority, id LIMIT 1 FOR UPDATE SKIP LOCKED)
                     RETURNING {COLUMNS}"
                ),
                &[&now, &owner, &lease_end(lease), &i64::from(max_attempts)],
            )
            .map_err(self.err("claim a job"))?;
        row.map(|r| self.record(&r)).transpose()
    }

    fn renew(&self, owner: &str, lease: Duration) -> Result<u64, StoreError> {
        self.lock()?
            .execute(
                "UPDATE kiln_jobs SET lease_expires_ms = $2 WHERE state = 'running' AND lease_owner = $1",
                &[&owner, &lease_end(lease)],
            )
            .map_err(self.err("renew the leases"))
    }

    fn finish(&self, job: JobId, owner: &str, outcome: &Outcome) -> Result<bool, StoreError> {
        let (state, proof, kind, message) = match outcome {
            Outcome::Proved(proof) => ("done", Some(proof.as_slice()), None, None),
            Outcome::Failed { kind, message } => ("failed", None, Some(kind.as_str()), Some(message.as_str())),
        };
        let n = self
            .lock()?
            .execute(
                "UPDATE kiln_jobs SET state = $3, proof = $4, error_kind = $5, error = $6, finished_ms = $7,
                 completion = nextval('kiln_jobs_completion'), finished_by = $2, lease_owner = NULL,
                 lease_expires_ms = NULL
                 WHERE id = $1 AND state = 'running' AND lease_owner = $2",
                &[&(job as i64), &owner, &state, &proof, &kind, &message, &ms_i64(now_ms())],
            )
            .map_err(self.err("record the result"))?;
        Ok(n == 1)
    }

    fn abandon(&self, max_attempts: u32) -> Result<u64, StoreError> {
        let message = format!(
            "claimed {max_attempts} times without a result (its host died or restarted each time); not tried again"
        );
        self.lock()?
            .execute(
                &format!(
                    "UPDATE kiln_jobs SET state = 'failed', error_kind = 'abandoned', error = $3, finished_ms = $1,
                     completion = nextval('kiln_jobs_completion'), lease_owner = NULL, lease_expires_ms = NULL
                     WHERE id IN (SELECT id FROM kiln_jobs WHERE {CLAIMABLE} AND attempts >= $2
                                  ORDER BY id FOR UPDATE SKIP LOCKED)"
                ),
                &[&ms_i64(now_ms()), &i64::from(max_attempts), &message],
            )
            .map_err(self.err("fail abandoned jobs"))
    }

    fn release(&self, owner: &str) -> Result<u64, StoreError> {
        self.lock()?
            .execute(
                "UPDATE kiln_jobs SET state = 'queued', lease_owner = NULL, lease_expires_ms = NULL
                 WHERE state = 'running' AND lease_owner = $1",
                &[&owner],
            )
            .map_err(self.err("release the jobs"))
    }

    fn cancel(&self, job: JobId) -> Result<Cancelled, StoreError> {
        let mut client = self.lock()?;
        let n = client
            .execute(
                "UPDATE kiln_jobs SET state = 'cancelled', error_kind = 'cancelled', error = 'cancelled by a client',
                 finished_ms = $2, completion = nextval('kiln_jobs_completion') WHERE id = $1 AND state = 'queued'",
                &[&(job as i64), &ms_i64(now_ms())],
            )
            .map_err(self.err("cancel the job"))?;
        if n == 1 {
            return Ok(Cancelled::Cancelled);
        }
        Ok(match self.get_with(&mut *client, job)? {
            Some(r) => Cancelled::Not(r.state),
            None => Cancelled::Unknown,
        })
    }

    fn get(&self, job: JobId) -> Result<Option<JobRecord>, StoreError> {
        let mut client = self.lock()?;
        self.get_with(&mut *client, job)
    }

    fn counts(&self) -> Result<Vec<Count>, StoreError> {
        let rows = self
            .lock()?
            .query("SELECT state, priority, COUNT(*) FROM kiln_jobs GROUP BY state, priority", &[])
            .map_err(self.err("count the jobs"))?;
        let mut out = Vec::new();
        for row in rows {
            let state: String = row.try_get(0).map_err(self.err("count the jobs"))?;
            let rank: i64 = row.try_get(1).map_err(self.err("count the jobs"))?;
            let n: i64 = row.try_get(2).map_err(self.err("count the jobs"))?;
            if let (Some(state), Some(priority)) = (JobState::from_name(&state), Priority::from_rank(rank)) {
                out.push(Count { state, priority, jobs: n.max(0) as u64 });
            }
        }
        Ok(out)
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(redact("postgres://kiln:secret@db:5432/jobs"), "postgres://kiln@db:5432/jobs");
        assert_eq!(redact("postgres://db/jobs"), "postgres://db/jobs");
        assert_eq!(redact("host=db password=secret"), "postgres://…");
    }
}
