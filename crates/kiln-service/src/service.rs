//! The service: requests checked and stored, workers claiming jobs from the store and proving
//! each through the orchestrator, a lease keeper.
//!
//! A worker claims one job at a time, the most urgent first (priority, then age): a job
//! submitted at a higher priority is the next one any worker takes, and a job being proved is
//! never interrupted (priorities pre-empt at job boundaries). Every result is written to the
//! store before anyone is told, and a result is recorded only by the worker holding the job's
//! claim, so a job is finished once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use ff::Field;
use kiln_groth16::Scalar;
use kiln_sched::{Job, JobError, Randomness};
use rand::rngs::OsRng;
use tracing::{info_span, warn};

use crate::circuit::Circuits;
use crate::error::{RequestError, ServeError, clip};
use crate::job::{JobId, JobRecord, JobRequest, unix_ms};
use crate::metrics::{Metrics, ProverFigures};
use crate::params::ParamsSets;
use crate::store::{Cancelled, Outcome, Store, Submitted};

/// Longest idempotency key, circuit name and parameter set id accepted.
const MAX_NAME: usize = 256;

/// How the service runs its workers and bounds its queues.
#[derive(Debug, Clone, Copy)]
pub struct ServiceConfig {
    /// Queued jobs allowed per priority; a submission beyond it is refused as busy.
    pub queue_limit: u64,
    /// Workers: jobs proved at once by this service (each through the orchestrator).
    pub workers: usize,
    /// How long a claim holds without renewal; the worker renews it every third of this
    /// while it proves. A job whose host died is claimable again after it.
    pub lease: Duration,
    /// A job claimed this many times without a result (it kept killing its host) fails as
    /// `abandoned` instead of being tried again.
    pub max_attempts: u32,
    /// How often an idle worker looks at the store without being woken (jobs of expired
    /// leases, jobs added by other hosts).
    pub poll: Duration,
    /// Longest wait of one `AwaitProof` call.
    pub await_limit: Duration,
    /// Start with the workers paused ([`Service::resume`] starts them).
    pub paused: bool,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            queue_limit: 1000,
            workers: 1,
            lease: Duration::from_secs(60),
            max_attempts: 5,
            poll: Duration::from_millis(500),
            await_limit: Duration::from_secs(60),
            paused: false,
        }
    }
}

/// Wakes idle workers: a generation counter bumped on every submission or resume.
#[derive(Default)]
struct Wake {
    generation: Mutex<u64>,
    changed: Condvar,
}

impl Wake {
    fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        *self.generation.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.changed.notify_all();
    }

    /// Waits until the generation passes `seen` or `timeout` passes.
    fn wait(&self, seen: u64, timeout: Duration) {
        let guard = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.changed.wait_timeout_while(guard, timeout, |g| *g == seen);
    }
}

/// What the workers, the lease keeper and the gRPC handlers share.
pub(crate) struct Shared {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) circuits: Circuits,
    pub(crate) params: ParamsSets,
    pub(crate) config: ServiceConfig,
    pub(crate) metrics: Metrics,
    /// This service instance's name in the store's claims (`pid-random`).
    pub(crate) owner: String,
    wake: Wake,
    paused: AtomicBool,
    stopping: AtomicBool,
    /// Bumped after every result this service stores (`AwaitProof` waits on it).
    pub(crate) finished: tokio::sync::watch::Sender<u64>,
}

/// A running proving service: its workers prove jobs from the store; requests come through
/// its methods (blocking) or its gRPC server ([`Service::serve`]).
pub struct Service {
    pub(crate) shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("store", &self.shared.store.describe())
            .field("circuits", &self.shared.circuits)
            .field("params", &self.shared.params)
            .field("config", &self.shared.config)
            .finish()
    }
}

/// A submission's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// The job.
    pub job: JobId,
    /// False: the idempotency key named a job accepted before (this is it; nothing new was
    /// stored).
    pub created: bool,
}

impl Service {
    /// Starts the workers over `store`, proving `circuits` with the parameter sets `params`.
    ///
    /// # Errors
    /// A zero count in `config`, or a worker thread could not be started.
    pub fn start(
        store: Arc<dyn Store>,
        circuits: Circuits,
        params: ParamsSets,
        config: ServiceConfig,
    ) -> Result<Service, ServeError> {
        for (what, zero) in [
            ("workers", config.workers == 0),
            ("queue_limit", config.queue_limit == 0),
            ("max_attempts", config.max_attempts == 0),
            ("lease", config.lease.is_zero()),
        ] {
            if zero {
                return Err(ServeError::Config(format!("{what} must be at least 1")));
            }
        }
        let owner = format!("{}-{:016x}", std::process::id(), rand::random::<u64>());
        let shared = Arc::new(Shared {
            store,
            circuits,
            params,
            config,
            metrics: Metrics::new(config.workers),
            owner,
            wake: Wake::default(),
            paused: AtomicBool::new(config.paused),
            stopping: AtomicBool::new(false),
            finished: tokio::sync::watch::Sender::new(0),
        });
        // Jobs that exhausted their attempts before a restart fail now, not after a lease.
        if let Err(e) = shared.store.abandon(config.max_attempts) {
            warn!("failing abandoned jobs failed: {e}");
        }
        let mut service = Service { shared: shared.clone(), threads: Vec::new() };
        for worker in 0..config.workers {
            let shared = shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("kiln-service-{worker}"))
                .spawn(move || work(&shared, worker))
                .map_err(|source| ServeError::Spawn { worker, source })?;
            service.threads.push(thread);
        }
        let thread = std::thread::Builder::new()
            .name("kiln-service-lease".into())
            .spawn(move || keep_leases(&shared))
            .map_err(|source| ServeError::Spawn { worker: config.workers, source })?;
        service.threads.push(thread);
        tracing::info!(store = %service.shared.store.describe(), owner = %service.shared.owner, workers = config.workers, "service started");
        Ok(service)
    }

    /// A handle on `shared` without threads of its own (the gRPC handlers' view).
    pub(crate) fn view(shared: Arc<Shared>) -> Service {
        Service { shared, threads: Vec::new() }
    }

    /// Stops taking new jobs (jobs being proved finish). Submissions are still accepted.
    pub fn pause(&self) {
        self.shared.paused.store(true, Ordering::SeqCst);
    }

    /// Takes jobs again after [`Service::pause`] (or a paused start).
    pub fn resume(&self) {
        self.shared.paused.store(false, Ordering::SeqCst);
        self.shared.wake.bump();
    }

    /// Checks and stores a job (blocking: one store transaction). The job is durably stored
    /// when this returns `Ok`.
    ///
    /// # Errors
    /// A malformed request, an unknown circuit kind or parameter set, a full queue, a reused
    /// idempotency key, or the store's failure: nothing was stored.
    pub fn submit(&self, request: &JobRequest) -> Result<Accepted, RequestError> {
        let shared = &self.shared;
        check_request(shared, request)?;
        let limit = shared.config.queue_limit;
        let accepted = match shared.store.submit(request, limit)? {
            Submitted::Accepted(job) => Accepted { job, created: true },
            Submitted::Existing(job) => Accepted { job, created: false },
            Submitted::KeyConflict(job) => {
                let key = request.idempotency_key.clone().unwrap_or_default();
                return Err(RequestError::IdempotencyConflict { key, job });
            }
            Submitted::Busy { queued } => {
                let retry_after =
                    shared.metrics.mean_proof().clamp(Duration::from_millis(100), Duration::from_secs(60));
                return Err(RequestError::Busy { priority: request.priority, queued, limit, retry_after });
            }
        };
        if accepted.created {
            tracing::debug!(job = accepted.job, circuit = %request.circuit, priority = %request.priority, "job accepted");
            shared.wake.bump();
        }
        Ok(accepted)
    }

    /// The job's record.
    ///
    /// # Errors
    /// No such job, or the store failed.
    pub fn status(&self, job: JobId) -> Result<JobRecord, RequestError> {
        self.shared.store.get(job)?.ok_or(RequestError::UnknownJob { id: job })
    }

    /// Cancels a queued job: `Ok(true)`; a job already running or finished keeps its course
    /// (`Ok(false)`).
    ///
    /// # Errors
    /// No such job, or the store failed.
    pub fn cancel(&self, job: JobId) -> Result<bool, RequestError> {
        match self.shared.store.cancel(job)? {
            Cancelled::Cancelled => {
                self.shared.finished.send_modify(|n| *n += 1);
                Ok(true)
            }
            Cancelled::Not(_) => Ok(false),
            Cancelled::Unknown => Err(RequestError::UnknownJob { id: job }),
        }
    }

    /// The metrics in Prometheus' text format.
    ///
    /// # Errors
    /// The store failed.
    pub fn metrics_text(&self) -> Result<String, RequestError> {
        let counts = self.shared.store.counts()?;
        let provers: Vec<ProverFigures> = self
            .shared
            .params
            .loaded_sets()
            .into_iter()
            .flat_map(|(id, loaded)| {
                let provers = loaded.scheduler.provers().to_vec();
                provers.into_iter().map(move |p| ProverFigures {
                    params: id.clone(),
                    prover: p.name(),
                    lanes: p.lanes(),
                    device_busy: p.device_busy(),
                })
            })
            .collect();
        Ok(self.shared.metrics.render(&counts, self.shared.params.loaded_count(), &provers))
    }

    /// Loads parameter set `id` now (blocking), if it is not loaded.
    ///
    /// # Errors
    /// Unknown id, or it could not be loaded.
    pub fn preload(&self, id: &str) -> Result<(), RequestError> {
        self.shared.params.get(id)?;
        Ok(())
    }

    /// Drops the loaded parameter set `id`; returns whether it was loaded.
    ///
    /// # Errors
    /// Unknown id.
    pub fn evict(&self, id: &str) -> Result<bool, RequestError> {
        Ok(self.shared.params.evict(id)?)
    }

    /// Whether parameter set `id` is loaded.
    ///
    /// # Errors
    /// Unknown id.
    pub fn is_loaded(&self, id: &str) -> Result<bool, RequestError> {
        Ok(self.shared.params.is_loaded(id)?)
    }

    /// Stops the workers after their current job (a proof under way is finished and stored),
    /// then puts back in the queue any claim of this service left without a result (a result
    /// the store failed to record). Blocks until the workers have stopped.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.wake.bump();
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                tracing::error!("a kiln-service thread panicked");
            }
        }
        // Nothing of ours should be running any more; a claim left by a failed store write
        // goes back to the queue now rather than after its lease.
        if let Err(e) = self.shared.store.release(&self.shared.owner) {
            warn!("releasing this service's claims failed (they expire with their lease): {e}");
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.stop();
        }
    }
}

/// The checks of a submission that need no store: everything malformed is refused here.
fn check_request(shared: &Shared, request: &JobRequest) -> Result<(), RequestError> {
    for (field, value) in [
        ("circuit", &request.circuit),
        ("params_id", &request.params_id),
        ("idempotency_key", request.idempotency_key.as_ref().unwrap_or(&String::new())),
    ] {
        if value.len() > MAX_NAME {
            let reason = format!("{} bytes long; at most {MAX_NAME} are accepted", value.len());
            return Err(RequestError::Argument { field, reason });
        }
    }
    if request.idempotency_key.as_deref() == Some("") {
        let reason = "empty: give a key or none".into();
        return Err(RequestError::Argument { field: "idempotency_key", reason });
    }
    let Some(kind) = shared.circuits.get(&request.circuit) else {
        return Err(RequestError::UnknownCircuit { name: clip(&request.circuit, 64), known: shared.circuits.names() });
    };
    let instance = kind
        .decode(&request.witness)
        .map_err(|source| RequestError::Witness { circuit: request.circuit.clone(), source })?;
    if !shared.params.knows(&request.params_id) {
        return Err(RequestError::UnknownParams { id: clip(&request.params_id, 64), known: shared.params.ids() });
    }
    // Checked here when the set is loaded (a set is not loaded just to check a request);
    // always checked again before the job's shape is recorded.
    if let Some(loaded) = shared.params.loaded(&request.params_id) {
        instance.check_params(&loaded.params).map_err(|reason| RequestError::ParamsMismatch {
            circuit: request.circuit.clone(),
            params_id: request.params_id.clone(),
            reason,
        })?;
    }
    if let Some(deadline) = request.deadline {
        let now = SystemTime::now();
        if deadline <= now {
            return Err(RequestError::DeadlinePassed { deadline_ms: unix_ms(deadline), now_ms: unix_ms(now) });
        }
    }
    Ok(())
}

/// One worker: claims the most urgent job, proves it, stores the result; idles on the wake.
fn work(shared: &Shared, worker: usize) {
    while !shared.stopping.load(Ordering::SeqCst) {
        let seen = shared.wake.generation();
        if shared.paused.load(Ordering::SeqCst) {
            shared.wake.wait(seen, shared.config.poll);
            continue;
        }
        match shared.store.claim(&shared.owner, shared.config.lease, shared.config.max_attempts) {
            Ok(Some(job)) => run(shared, worker, job),
            Ok(None) => shared.wake.wait(seen, shared.config.poll),
            Err(e) => {
                tracing::error!(worker, "claiming a job failed: {e}");
                shared.wake.wait(seen, shared.config.poll);
            }
        }
    }
}

/// Proves one claimed job and stores its result.
fn run(shared: &Shared, worker: usize, job: JobRecord) {
    let span = info_span!("job", id = job.id, circuit = %job.request.circuit, params = %job.request.params_id,
        priority = %job.request.priority, attempt = job.attempts, worker);
    let _entered = span.enter();
    let start = Instant::now();
    let outcome = prove(shared, &job);
    let proving = start.elapsed();
    match &outcome {
        Outcome::Proved(_) => tracing::info!(took = ?proving, "proved"),
        Outcome::Failed { kind, message } => tracing::warn!(kind, took = ?proving, "failed: {message}"),
    }
    match shared.store.finish(job.id, &shared.owner, &outcome) {
        Ok(true) => {
            let total = SystemTime::now().duration_since(job.submitted).unwrap_or_default();
            shared.metrics.job_finished(job.request.priority, proving, total);
        }
        Ok(false) => warn!("the job's claim was lost (its lease expired and another worker took it): result dropped"),
        Err(e) => tracing::error!("storing the result failed (the job runs again after its lease): {e}"),
    }
    shared.finished.send_modify(|n| *n += 1);
}

/// The job's outcome: its proof (verified by the prover before it is returned), or why not.
fn prove(shared: &Shared, job: &JobRecord) -> Outcome {
    let failed = |kind: &str, message: String| Outcome::Failed { kind: kind.to_string(), message };
    let request = &job.request;
    let Some(kind) = shared.circuits.get(&request.circuit) else {
        let message = format!("circuit {:?} is not registered in this service", request.circuit);
        return failed("unknown_circuit", message);
    };
    let instance = match kind.decode(&request.witness) {
        Ok(i) => i,
        Err(e) => return failed("witness", e.to_string()),
    };
    let loaded = match shared.params.get(&request.params_id) {
        Ok(l) => l,
        Err(e) => return failed("params", e.to_string()),
    };
    if let Err(reason) = instance.check_params(&loaded.params) {
        return failed("params_mismatch", reason);
    }
    let key = format!("{}/{}", request.circuit, instance.shape_key());
    let shape = match loaded.shape(&key, || instance.record_shape()) {
        Ok(s) => s,
        Err(e) => return failed("shape", format!("recording the circuit's shape failed: {e}")),
    };
    // Fresh (r, s) from the OS for every attempt: a proof's randomness must not be guessable.
    let randomness = Randomness::Given(Scalar::random(OsRng), Scalar::random(OsRng));
    let mut sched_job = Job::from_witness_fn(Box::new(move |shape| instance.witness(shape)), randomness);
    if let Some(deadline) = request.deadline {
        // Past already: the orchestrator fails it before any work.
        let left = deadline.duration_since(SystemTime::now()).unwrap_or_default();
        sched_job = sched_job.with_deadline(Instant::now() + left);
    }
    let report = match loaded.scheduler.run(shape, vec![sched_job]) {
        Ok(r) => r,
        Err(e) => return failed("scheduler", e.to_string()),
    };
    shared.metrics.prover_busy(report.metrics.proving_busy);
    match report.outcomes.into_iter().next().map(|o| o.result) {
        Some(Ok(proof)) => Outcome::Proved(proof.to_bytes().to_vec()),
        Some(Err(e)) => {
            let (kind, message) = describe_job_error(&e);
            failed(kind, message)
        }
        None => failed("lost", "the orchestrator returned no outcome".into()),
    }
}

/// A stable kind and a message for an orchestrator error (without the orchestrator's own job
/// number, which means nothing to a client).
fn describe_job_error(e: &JobError) -> (&'static str, String) {
    match e {
        JobError::Witness { source, .. } => ("witness", format!("witness generation failed: {source}")),
        JobError::Prove { prover, source, .. } => ("prove", format!("proving on {prover} failed: {source}")),
        JobError::Panicked { stage, message, .. } => ("panicked", format!("panicked during {stage}: {message}")),
        JobError::Cancelled { stage, .. } => ("cancelled", format!("cancelled before {stage}")),
        JobError::DeadlineExpired { stage, late_by, .. } => {
            ("deadline_expired", format!("the deadline passed {late_by:?} before {stage}; nothing was proved"))
        }
        JobError::Lost { .. } => ("lost", "the orchestrator's threads ended before the job got a result".into()),
    }
}

/// Renews this service's claims every third of the lease, and fails jobs claimed too often.
fn keep_leases(shared: &Shared) {
    let period = shared.config.lease / 3;
    let mut last = Instant::now();
    while !shared.stopping.load(Ordering::SeqCst) {
        let seen = shared.wake.generation();
        shared.wake.wait(seen, period.min(shared.config.poll));
        if last.elapsed() < period {
            continue;
        }
        last = Instant::now();
        if let Err(e) = shared.store.renew(&shared.owner, shared.config.lease) {
            tracing::error!("renewing this service's leases failed: {e}");
        }
        match shared.store.abandon(shared.config.max_attempts) {
            Ok(0) => {}
            Ok(n) => warn!(jobs = n, "jobs claimed too often without a result failed as abandoned"),
            Err(e) => tracing::error!("failing abandoned jobs failed: {e}"),
        }
    }
}
