//! The service's figures in Prometheus' text format (OpenMetrics): jobs by state and priority
//! and the queue depth (counted in the store when scraped, so they hold across restarts and
//! hosts), proof and end-to-end latency histograms, the workers' and the prover's busy time,
//! each loaded set's provers (lanes, and a device's busy time), workers, loaded parameter sets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::job::{JobState, Priority};
use crate::store::Count;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
    priority: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PriorityLabels {
    priority: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProverLabels {
    params: String,
    prover: String,
}

/// One prover of a loaded parameter set, as the metrics show it.
#[derive(Debug, Clone)]
pub(crate) struct ProverFigures {
    /// The parameter set's id.
    pub(crate) params: String,
    /// The prover's name ("cpu", "cuda:0").
    pub(crate) prover: String,
    /// Its lanes (a GPU prover's VRAM plan workers).
    pub(crate) lanes: usize,
    /// Its device's busy time since it was built, if it has a device.
    pub(crate) device_busy: Option<Duration>,
}

fn latency_histogram() -> Histogram {
    // 10 ms to ~11 min: a small CPU proof to a 2^27 partition.
    Histogram::new(exponential_buckets(0.01, 2.0, 17))
}

/// The live figures; [`Metrics::render`] writes them out.
pub(crate) struct Metrics {
    registry: Registry,
    jobs: Family<StateLabels, Gauge>,
    queue_depth: Family<PriorityLabels, Gauge>,
    proof_seconds: Family<PriorityLabels, Histogram, fn() -> Histogram>,
    job_seconds: Family<PriorityLabels, Histogram, fn() -> Histogram>,
    proving_seconds: Counter<f64, AtomicU64>,
    prover_seconds: Counter<f64, AtomicU64>,
    workers: Gauge,
    params_loaded: Gauge,
    prover_lanes: Family<ProverLabels, Gauge>,
    device_busy: Family<ProverLabels, Gauge<f64, AtomicU64>>,
    /// Mean proof latency in µs (an exponential moving average), for "retry after" hints.
    mean_proof_us: AtomicU64,
}

impl Metrics {
    pub(crate) fn new(workers: usize) -> Metrics {
        let mut registry = Registry::with_prefix("kiln");
        let jobs = Family::<StateLabels, Gauge>::default();
        registry.register("jobs", "Jobs in the store by state and priority", jobs.clone());
        let queue_depth = Family::<PriorityLabels, Gauge>::default();
        registry.register("queue_depth", "Jobs waiting for a worker, by priority", queue_depth.clone());
        let proof_seconds = Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register(
            "proof_seconds",
            "Claim to stored result of the jobs proved by this service (witness, proof, verification)",
            proof_seconds.clone(),
        );
        let job_seconds = Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register("job_seconds", "Submission to stored result of the jobs finished here", job_seconds.clone());
        let proving_seconds = Counter::<f64, AtomicU64>::default();
        registry.register(
            "proving_seconds",
            "Time the workers spent on jobs (its rate over kiln_workers is the busy fraction)",
            proving_seconds.clone(),
        );
        let prover_seconds = Counter::<f64, AtomicU64>::default();
        registry.register(
            "prover_seconds",
            "Time jobs spent inside the prover (its sums, the epilogue, the verification), summed over jobs; \
             its rate over the prover's lanes is the prover's (on a GPU: the device's) busy fraction",
            prover_seconds.clone(),
        );
        let workers_gauge = Gauge::default();
        workers_gauge.set(i64::try_from(workers).unwrap_or(i64::MAX));
        registry.register("workers", "Proving workers of this service", workers_gauge.clone());
        let params_loaded = Gauge::default();
        registry.register("params_loaded", "Parameter sets loaded", params_loaded.clone());
        let prover_lanes = Family::<ProverLabels, Gauge>::default();
        registry.register(
            "prover_lanes",
            "Proofs a loaded set's prover works on at once (on a GPU: the workers its VRAM plan granted)",
            prover_lanes.clone(),
        );
        let device_busy = Family::<ProverLabels, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "device_busy_seconds",
            "Time the prover's device had a lane in its compute phase since the set was loaded (grows like a \
             counter and restarts when the set is reloaded): its rate is the GPU busy fraction",
            device_busy.clone(),
        );
        Metrics {
            registry,
            jobs,
            queue_depth,
            proof_seconds,
            job_seconds,
            proving_seconds,
            prover_seconds,
            workers: workers_gauge,
            params_loaded,
            prover_lanes,
            device_busy,
            mean_proof_us: AtomicU64::new(0),
        }
    }

    /// Records a job this service finished: `proving` from claim to result, `total` from
    /// submission to result.
    pub(crate) fn job_finished(&self, priority: Priority, proving: Duration, total: Duration) {
        let labels = PriorityLabels { priority: priority.name() };
        self.proof_seconds.get_or_create(&labels).observe(proving.as_secs_f64());
        self.job_seconds.get_or_create(&labels).observe(total.as_secs_f64());
        self.proving_seconds.inc_by(proving.as_secs_f64());
        let us = u64::try_from(proving.as_micros()).unwrap_or(u64::MAX);
        // A racy read-modify-write is fine for a hint.
        let old = self.mean_proof_us.load(Ordering::Relaxed);
        let new = if old == 0 { us } else { (old.saturating_mul(7) / 8).saturating_add(us / 8) };
        self.mean_proof_us.store(new, Ordering::Relaxed);
    }

    /// Adds time a job spent inside the prover (the orchestrator's proving stage).
    pub(crate) fn prover_busy(&self, busy: Duration) {
        self.prover_seconds.inc_by(busy.as_secs_f64());
    }

    /// The mean proof latency so far (zero before the first proof).
    pub(crate) fn mean_proof(&self) -> Duration {
        Duration::from_micros(self.mean_proof_us.load(Ordering::Relaxed))
    }

    /// The text exposition, with the store's `counts`, the number of loaded sets and their
    /// provers.
    pub(crate) fn render(&self, counts: &[Count], params_loaded: usize, provers: &[ProverFigures]) -> String {
        for state in JobState::ALL {
            for priority in Priority::ALL {
                let n = counts.iter().find(|c| c.state == state && c.priority == priority).map_or(0, |c| c.jobs);
                let n = i64::try_from(n).unwrap_or(i64::MAX);
                self.jobs.get_or_create(&StateLabels { state: state.name(), priority: priority.name() }).set(n);
                if state == JobState::Queued {
                    self.queue_depth.get_or_create(&PriorityLabels { priority: priority.name() }).set(n);
                }
            }
        }
        self.params_loaded.set(i64::try_from(params_loaded).unwrap_or(i64::MAX));
        // Only the sets loaded now: an evicted set's provers are gone.
        self.prover_lanes.clear();
        self.device_busy.clear();
        for p in provers {
            let labels = ProverLabels { params: p.params.clone(), prover: p.prover.clone() };
            self.prover_lanes.get_or_create(&labels).set(i64::try_from(p.lanes).unwrap_or(i64::MAX));
            if let Some(busy) = p.device_busy {
                self.device_busy.get_or_create(&labels).set(busy.as_secs_f64());
            }
        }
        let _ = &self.workers;
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
