//! The service end to end on the CPU prover (CI): clients over the unix socket and TCP,
//! priorities, backpressure, refusals, restart. Assertions are on results and on the order
//! jobs finished in (the store numbers completions), never on time.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{NoProgress, Parameters, PreparedVerifyingKey, Proof, random_setup, verify_proof};
use kiln_sched::{Config, Workers};
use kiln_service::{
    Address, BuiltinWitness, Circuits, Client, ClientError, ErrorKind, JobId, JobInfo, JobRequest, JobState, Listen,
    ParamsSets, Priority, ProverFactory, Service, ServiceConfig, SqliteStore, Token, cpu_prover_factory,
};
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;

const LOG_SIZE: u32 = 6;
const PARAMS: &str = "porep6";

/// The parameters of porep at 2^6, made once per test binary.
fn params() -> Arc<Parameters> {
    static PARAMS: OnceLock<Arc<Parameters>> = OnceLock::new();
    PARAMS
        .get_or_init(|| {
            let circuit = Builtin::new(Kind::Porep, 1 << LOG_SIZE, 0);
            Arc::new(random_setup(circuit, &mut ChaCha20Rng::seed_from_u64(3), &NoProgress).expect("setup"))
        })
        .clone()
}

fn verifies(proof: &[u8], seed: u64) -> bool {
    let pvk = PreparedVerifyingKey::new(&params().vk);
    let proof = Proof::from_bytes(proof).expect("a 192-byte proof");
    let inputs = Builtin::new(Kind::Porep, 1 << LOG_SIZE, seed).public_inputs();
    verify_proof(&pvk, &proof, &inputs).expect("verification runs")
}

fn request(seed: u64, priority: Priority) -> JobRequest {
    JobRequest {
        circuit: "porep".into(),
        witness: BuiltinWitness { log_size: LOG_SIZE, seed }.encode(),
        params_id: PARAMS.into(),
        priority,
        deadline: None,
        idempotency_key: None,
    }
}

/// A folder with the parameter file and the database.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().expect("temp dir");
        params().write_file(&dir.path().join("porep6.params")).expect("write params");
        Place { dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("jobs.db")
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("kiln.sock")
    }

    async fn client(&self) -> Client {
        Client::connect(&Address::Unix(self.socket())).await.expect("connect")
    }

    fn start(&self, config: ServiceConfig) -> Service {
        self.start_with(config, cpu_prover_factory())
    }

    fn start_with(&self, config: ServiceConfig, factory: ProverFactory) -> Service {
        let store = Arc::new(SqliteStore::open(&self.db()).expect("open the store"));
        let files = BTreeMap::from([(PARAMS.to_string(), self.dir.path().join("porep6.params"))]);
        let sched = Config { cpu_threads: 1, queue_depth: 1, workers: Workers::Fixed(1), ..Config::default() };
        let params = ParamsSets::new(files, factory, sched, kiln_groth16::Check::Full);
        Service::start(store, Circuits::default(), params, config).expect("start the service")
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// Serves `service` on `listen` in the background; returns the bound TCP address (if TCP) and
/// the sender that stops serving.
fn serve(
    rt: &tokio::runtime::Runtime,
    service: &Arc<Service>,
    listen: Listen,
) -> (Option<std::net::SocketAddr>, tokio::sync::oneshot::Sender<()>) {
    let bound = rt.block_on(listen.bind()).expect("bind");
    let addr = bound.tcp_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = service.clone();
    rt.spawn(async move {
        service
            .serve(bound, async {
                let _ = stopped.await;
            })
            .await
            .expect("serve");
    });
    (addr, stop)
}

/// A service started in `place` and served on its unix socket.
fn served(
    place: &Place,
    config: ServiceConfig,
) -> (tokio::runtime::Runtime, Arc<Service>, tokio::sync::oneshot::Sender<()>) {
    let rt = runtime();
    let service = Arc::new(place.start(config));
    let (_, stop) = serve(&rt, &service, Listen::Unix(place.socket()));
    (rt, service, stop)
}

fn config(workers: usize, queue_limit: u64, paused: bool) -> ServiceConfig {
    ServiceConfig { workers, queue_limit, paused, poll: Duration::from_millis(50), ..ServiceConfig::default() }
}

/// Waits for every job; returns their final statuses by id.
async fn wait_all(client: &mut Client, jobs: &[JobId]) -> HashMap<JobId, JobInfo> {
    let mut out = HashMap::new();
    for &job in jobs {
        out.insert(job, client.wait(job).await.expect("wait"));
    }
    out
}

#[test]
fn many_clients_mixed_priorities_every_proof_verifies() {
    let place = Place::new();
    let rt = runtime();
    let service = Arc::new(place.start(config(2, 1000, false)));
    let (_, _stop) = serve(&rt, &service, Listen::Unix(place.socket()));
    let socket = place.socket();
    // Four clients, 25 jobs each, priorities mixed; seeds unique so each proof has its inputs.
    let submitted: Vec<(JobId, u64)> = rt.block_on(async {
        let mut tasks = Vec::new();
        for client_no in 0..4u64 {
            let socket = socket.clone();
            tasks.push(tokio::spawn(async move {
                let mut client = Client::connect(&Address::Unix(socket)).await.expect("connect");
                let mut mine = Vec::new();
                for i in 0..25u64 {
                    let seed = client_no * 1000 + i;
                    let priority = Priority::ALL[(seed % 3) as usize];
                    let (job, created) = client.submit(&request(seed, priority)).await.expect("submit");
                    assert!(created);
                    mine.push((job, seed));
                }
                mine
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("client task"));
        }
        all
    });
    assert_eq!(submitted.len(), 100);
    let finished = rt.block_on(async {
        let mut client = Client::connect(&Address::Unix(socket.clone())).await.expect("connect");
        let ids: Vec<JobId> = submitted.iter().map(|&(j, _)| j).collect();
        wait_all(&mut client, &ids).await
    });
    for &(job, seed) in &submitted {
        let status = &finished[&job];
        assert_eq!(status.state, JobState::Done, "job {job}: {:?}", status.error);
        assert_eq!(status.attempts, 1);
        assert!(verifies(status.proof.as_deref().expect("a proof"), seed), "job {job} (seed {seed}) does not verify");
    }
    // Every completion number once.
    let mut completions: Vec<u64> = finished.values().map(|s| s.completion.expect("final")).collect();
    completions.sort_unstable();
    assert_eq!(completions, (1..=100).collect::<Vec<u64>>());
    // The socket is the owner's alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(place.socket()).expect("socket").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let text = service.metrics_text().expect("metrics");
    let done: u64 =
        Priority::ALL.iter().map(|p| metric(&text, &format!("kiln_jobs{{state=\"done\",priority=\"{p}\"}}"))).sum();
    assert_eq!(done, 100, "{text}");
    assert_eq!(metric(&text, "kiln_queue_depth{priority=\"high\"}"), 0);
    assert!(text.contains("kiln_prover_seconds_total "), "{text}");
    assert_eq!(metric(&text, &format!("kiln_prover_lanes{{params=\"{PARAMS}\",prover=\"cpu\"}}")), 1, "{text}");
    assert!(!text.contains("kiln_device_busy_seconds{"), "the CPU prover has no device: {text}");
    assert_eq!(
        metric(&text, "kiln_proof_seconds_count{priority=\"high\"}"),
        finished.values().filter(|s| s.priority == Priority::High).count() as u64
    );
}

/// The value of the sample `name` (labels included) in Prometheus text, as an integer.
fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().split(' ').next()?.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no sample {name} in:\n{text}")) as u64
}

#[test]
fn priorities_order_the_queue() {
    let place = Place::new();
    let rt = runtime();
    // One worker, started paused: every job is queued before the first is taken.
    let service = Arc::new(place.start(config(1, 1000, true)));
    let mut jobs: Vec<(JobId, Priority)> = Vec::new();
    for seed in 0..24 {
        let priority = [Priority::Low, Priority::Low, Priority::Normal, Priority::High][seed as usize % 4];
        jobs.push((service.submit(&request(seed, priority)).expect("submit").job, priority));
    }
    service.resume();
    let socket = place.socket();
    let (_, _stop) = serve(&rt, &service, Listen::Unix(socket.clone()));
    let finished = rt.block_on(async {
        let mut client = Client::connect(&Address::Unix(socket)).await.expect("connect");
        wait_all(&mut client, &jobs.iter().map(|j| j.0).collect::<Vec<_>>()).await
    });
    let mut order: Vec<(u64, Priority, JobId)> =
        jobs.iter().map(|&(j, p)| (finished[&j].completion.expect("final"), p, j)).collect();
    order.sort();
    let priorities: Vec<Priority> = order.iter().map(|o| o.1).collect();
    let mut sorted = priorities.clone();
    sorted.sort();
    assert_eq!(priorities, sorted, "completion order by priority");
    // Within a priority, oldest first.
    for p in Priority::ALL {
        let ids: Vec<JobId> = order.iter().filter(|o| o.1 == p).map(|o| o.2).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{p}: {ids:?}");
    }
}

#[test]
fn high_priority_jobs_overtake_a_running_batch() {
    let place = Place::new();
    let (rt, _service, _stop) = served(&place, config(1, 1000, false));
    rt.block_on(async {
        let mut client = place.client().await;
        let mut lows = Vec::new();
        for seed in 0..30 {
            lows.push(client.submit(&request(seed, Priority::Low)).await.expect("submit").0);
        }
        // Under load: the first low job is done, the others are queued or running.
        client.wait(lows[0]).await.expect("first low job");
        let mut highs = Vec::new();
        for seed in 100..105 {
            highs.push(client.submit(&request(seed, Priority::High)).await.expect("submit").0);
        }
        // Low jobs final by now were final before the high ones could be taken, or were the
        // one being proved when they arrived (one worker): no other low job may finish first.
        let mut final_by_now = 0;
        for &j in &lows {
            if client.status(j).await.expect("status").state.is_final() {
                final_by_now += 1;
            }
        }
        let finished = wait_all(&mut client, &[lows.clone(), highs.clone()].concat()).await;
        let last_high = highs.iter().map(|j| finished[j].completion.expect("final")).max().expect("five");
        let lows_before = lows.iter().filter(|j| finished[j].completion.expect("final") < last_high).count();
        assert!(
            lows_before <= final_by_now + 1,
            "{lows_before} low jobs finished before the last high one; only {final_by_now} (+1 in flight) could"
        );
        for (&j, s) in &finished {
            assert_eq!(s.state, JobState::Done, "job {j}");
        }
    });
}

#[test]
fn a_full_queue_says_busy_and_when_to_retry() {
    let place = Place::new();
    let (rt, service, _stop) = served(&place, config(1, 3, true));
    rt.block_on(async {
        let mut client = place.client().await;
        let keyed = JobRequest { idempotency_key: Some("first".into()), ..request(0, Priority::Low) };
        let (first, _) = client.submit(&keyed).await.expect("submit");
        for seed in 1..3 {
            client.submit(&request(seed, Priority::Low)).await.expect("submit");
        }
        match client.submit(&request(3, Priority::Low)).await {
            Err(ClientError::Busy { retry_after, message }) => {
                assert!(retry_after > Duration::ZERO);
                assert!(message.contains("retry after"), "{message}");
            }
            other => panic!("expected busy, got {other:?}"),
        }
        // A retried request of an accepted job is answered, full queue or not.
        assert_eq!(client.submit(&keyed).await.expect("retried submit"), (first, false));
        // The limit is per priority.
        let (high, _) = client.submit(&request(4, Priority::High)).await.expect("high is not full");
        service.resume();
        let done = client.wait(high).await.expect("wait");
        assert_eq!(done.state, JobState::Done);
        assert!(verifies(&done.proof.expect("proof"), 4));
        // Room again once the queue drains.
        let finished = client.wait(first).await.expect("wait");
        assert_eq!(finished.state, JobState::Done);
    });
    let text = service.metrics_text().expect("metrics");
    let accepted: u64 = ["queued", "running", "done"]
        .iter()
        .flat_map(|s| Priority::ALL.map(|p| format!("kiln_jobs{{state=\"{s}\",priority=\"{p}\"}}")))
        .map(|name| metric(&text, &name))
        .sum();
    assert_eq!(accepted, 4, "three low and one high job were accepted, the busy one was not");
}

/// A prover with a "device": the CPU prover's sums, each counted as `HOLD` of device time.
struct DeviceLike {
    inner: kiln_groth16::CpuProver,
    proofs: std::sync::atomic::AtomicU32,
}

const HOLD: Duration = Duration::from_millis(250);

impl kiln_groth16::Prover for DeviceLike {
    fn name(&self) -> String {
        "cuda:7".into()
    }
    fn parameters(&self) -> &Parameters {
        self.inner.parameters()
    }
    fn lanes(&self) -> usize {
        3
    }
    fn device_busy(&self) -> Option<Duration> {
        Some(HOLD * self.proofs.load(std::sync::atomic::Ordering::SeqCst))
    }
    fn sums(
        &self,
        assignments: &[kiln_groth16::synth::Assignment],
        t: &mut kiln_groth16::Timings,
    ) -> Result<Vec<kiln_groth16::Sums>, kiln_groth16::Groth16Error> {
        self.proofs.fetch_add(assignments.len() as u32, std::sync::atomic::Ordering::SeqCst);
        self.inner.sums(assignments, t)
    }
}

/// `/metrics` shows each loaded set's provers: their lanes, and a device's busy time (what
/// the prover reports, so its rate is the GPU busy fraction); an evicted set's are gone.
#[test]
fn metrics_show_the_provers_lanes_and_device_busy_time() {
    let place = Place::new();
    let factory: ProverFactory = Arc::new(|params| {
        Ok(Arc::new(DeviceLike { inner: kiln_groth16::CpuProver::new(params), proofs: 0.into() })
            as kiln_sched::SharedProver)
    });
    let rt = runtime();
    let service = Arc::new(place.start_with(config(1, 1000, false), factory));
    let (_, _stop) = serve(&rt, &service, Listen::Unix(place.socket()));
    rt.block_on(async {
        let mut client = place.client().await;
        for seed in 1..=2 {
            let (job, _) = client.submit(&request(seed, Priority::Normal)).await.expect("submit");
            assert_eq!(client.wait(job).await.expect("wait").state, JobState::Done);
        }
    });
    let text = service.metrics_text().expect("metrics");
    let labels = format!("{{params=\"{PARAMS}\",prover=\"cuda:7\"}}");
    assert_eq!(metric(&text, &format!("kiln_prover_lanes{labels}")), 3, "{text}");
    let busy = text.lines().find_map(|l| l.strip_prefix(&format!("kiln_device_busy_seconds{labels} ")));
    let busy: f64 = busy.unwrap_or_else(|| panic!("no device busy line: {text}")).parse().expect("a number");
    assert!((busy - 2.0 * HOLD.as_secs_f64()).abs() < 1e-9, "two proofs: {busy} s");
    assert!(service.evict(PARAMS).expect("evict"));
    let text = service.metrics_text().expect("metrics");
    assert!(!text.contains("kiln_prover_lanes{"), "evicted: {text}");
}

#[test]
fn malformed_requests_get_typed_errors_and_change_nothing() {
    let place = Place::new();
    let (rt, _service, _stop) = served(&place, config(1, 1000, false));
    rt.block_on(async {
        let mut client = place.client().await;
        let good = request(1, Priority::Normal);
        let past = SystemTime::now() - Duration::from_secs(1);
        let cases = [
            (JobRequest { circuit: "groth".into(), ..good.clone() }, ErrorKind::UnknownCircuit),
            (JobRequest { witness: vec![LOG_SIZE as u8; 8], ..good.clone() }, ErrorKind::Witness),
            (JobRequest { witness: vec![0; 10_000], ..good.clone() }, ErrorKind::Witness),
            (
                JobRequest { witness: BuiltinWitness { log_size: 29, seed: 1 }.encode(), ..good.clone() },
                ErrorKind::Witness,
            ),
            (JobRequest { params_id: "nope".into(), ..good.clone() }, ErrorKind::UnknownParams),
            (JobRequest { deadline: Some(past), ..good.clone() }, ErrorKind::Deadline),
            (JobRequest { idempotency_key: Some("k".repeat(300)), ..good.clone() }, ErrorKind::Argument),
        ];
        for (bad, kind) in cases {
            match client.submit(&bad).await {
                Err(e) => assert_eq!(e.kind(), kind, "{e}"),
                Ok(r) => panic!("{bad:?} was accepted: {r:?}"),
            }
        }
        // A priority value no client library would send, through the raw gRPC client.
        let socket = place.socket();
        let channel = tonic::transport::Endpoint::from_static("http://localhost")
            .connect_with_connector(tower::service_fn(move |_| {
                let socket = socket.clone();
                async move {
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                        tokio::net::UnixStream::connect(socket).await?,
                    ))
                }
            }))
            .await
            .expect("connect");
        let mut raw = kiln_service::proto::proving_client::ProvingClient::new(channel);
        let message = kiln_service::proto::SubmitRequest {
            circuit: "porep".into(),
            witness: good.witness.clone(),
            params_id: PARAMS.into(),
            priority: 7,
            deadline_unix_ms: 0,
            idempotency_key: String::new(),
        };
        let refused = raw.submit_proof(message).await.expect_err("priority 7 is refused");
        assert_eq!(ClientError::from(refused).kind(), ErrorKind::Priority);
        // Nothing was stored: the first job accepted now is job 1.
        assert_eq!(client.status(1).await.expect_err("no job yet").kind(), ErrorKind::UnknownJob);
        let (job, _) = client.submit(&good).await.expect("a good request");
        assert_eq!(job, 1);
        // An idempotency key reused for another request is refused.
        let keyed = JobRequest { idempotency_key: Some("k".into()), ..good.clone() };
        client.submit(&keyed).await.expect("keyed");
        let other = JobRequest { witness: BuiltinWitness { log_size: LOG_SIZE, seed: 2 }.encode(), ..keyed };
        assert_eq!(client.submit(&other).await.expect_err("conflict").kind(), ErrorKind::IdempotencyConflict);
        assert_eq!(client.evict("nope").await.expect_err("unknown").kind(), ErrorKind::UnknownParams);
        // A size that is not the parameters': refused at once while the set is loaded (no
        // 2^28 shape is recorded for it) ...
        assert_eq!(client.wait(job).await.expect("wait").state, JobState::Done);
        let huge = JobRequest { witness: BuiltinWitness { log_size: 28, seed: 1 }.encode(), ..good.clone() };
        assert_eq!(client.submit(&huge).await.expect_err("too big").kind(), ErrorKind::ParamsMismatch);
        // ... and failed before any work when it was accepted while the set was not loaded.
        client.evict(PARAMS).await.expect("evict");
        let (bigger, _) = client
            .submit(&JobRequest { witness: BuiltinWitness { log_size: 7, seed: 1 }.encode(), ..good.clone() })
            .await
            .expect("accepted unloaded");
        let failed = client.wait(bigger).await.expect("wait");
        assert_eq!((failed.state, failed.error.map(|e| e.0)), (JobState::Failed, Some("params_mismatch".to_string())));
        assert_eq!(client.cancel(99).await.expect_err("unknown").kind(), ErrorKind::UnknownJob);
    });
}

#[test]
fn tcp_requires_the_token_and_refuses_before_any_work() {
    let place = Place::new();
    let rt = runtime();
    let service = Arc::new(place.start(config(1, 1000, false)));
    let token_file = place.dir.path().join("token");
    std::fs::write(&token_file, "0123456789abcdef0123456789abcdef\n").expect("token file");
    let token = Token::from_file(&token_file).expect("token");
    let listen = Listen::Tcp { addr: "127.0.0.1:0".parse().expect("addr"), token: token.clone() };
    let (addr, _stop) = serve(&rt, &service, listen);
    let url = format!("http://{}", addr.expect("tcp"));
    rt.block_on(async {
        let wrong = Token::new("fedcba9876543210fedcba9876543210").expect("token");
        let mut intruder = Client::connect_tcp(&url, &wrong).await.expect("connect");
        let refused = intruder.submit(&request(1, Priority::High)).await.expect_err("wrong token");
        assert_eq!(refused.kind(), ErrorKind::Unauthenticated, "{refused}");
        assert_eq!(intruder.metrics().await.expect_err("wrong token").kind(), ErrorKind::Unauthenticated);
        // No token at all (the raw client sends none).
        let channel = tonic::transport::Endpoint::from_shared(url.clone()).expect("url").connect().await.expect("tcp");
        let mut raw = kiln_service::proto::proving_client::ProvingClient::new(channel);
        let status = raw.get_status(kiln_service::proto::JobRef { job_id: 1 }).await.expect_err("no token");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        let mut client = Client::connect_tcp(&url, &token).await.expect("connect");
        assert_eq!(client.status(1).await.expect_err("nothing was stored").kind(), ErrorKind::UnknownJob);
        let (job, _) = client.submit(&request(5, Priority::High)).await.expect("right token");
        assert_eq!(job, 1);
        let done = client.wait(job).await.expect("wait");
        assert!(verifies(&done.proof.expect("proof"), 5));
    });
    assert!(Token::new("short").is_none());
    std::fs::write(&token_file, "has a space in it, so no good").expect("token file");
    assert!(Token::from_file(&token_file).is_err());
}

#[test]
fn restart_resumes_queued_jobs_and_keeps_finished_proofs() {
    let place = Place::new();
    // First life: two jobs proved, then paused with eight queued, then stopped.
    let service = place.start(config(1, 1000, false));
    let keyed = |seed| JobRequest { idempotency_key: Some(format!("job-{seed}")), ..request(seed, Priority::Normal) };
    let first: Vec<JobId> = (0..2).map(|s| service.submit(&keyed(s)).expect("submit").job).collect();
    let rt = runtime();
    let (_, stop) = serve(&rt, &Arc::new(service), Listen::Unix(place.socket()));
    let proofs: Vec<Vec<u8>> = rt.block_on(async {
        let mut client = place.client().await;
        let mut proofs = Vec::new();
        for &j in &first {
            proofs.push(client.wait(j).await.expect("wait").proof.expect("proof"));
        }
        proofs
    });
    let _ = stop.send(());
    drop(rt); // the server task and its handle on the service go with the runtime
    let service = place.start(config(1, 1000, true));
    let rest: Vec<JobId> = (2..10).map(|s| service.submit(&keyed(s)).expect("submit").job).collect();
    service.shutdown();

    // Second life: the queued jobs are proved; resubmitting any key returns its job.
    let service = place.start(config(1, 1000, false));
    for seed in 0..10u64 {
        let again = service.submit(&keyed(seed)).expect("resubmit");
        assert!(!again.created, "key job-{seed} made a new job");
        assert_eq!(again.job, [first.clone(), rest.clone()].concat()[seed as usize]);
    }
    let rt = runtime();
    let service = Arc::new(service);
    let (_, _stop) = serve(&rt, &service, Listen::Unix(place.socket()));
    rt.block_on(async {
        let mut client = place.client().await;
        for (i, &j) in first.iter().enumerate() {
            let s = client.status(j).await.expect("status");
            assert_eq!((s.state, s.attempts), (JobState::Done, 1), "job {j} was proved once");
            assert_eq!(s.proof.as_ref(), Some(&proofs[i]), "job {j}'s proof is the first one");
        }
        for (i, &j) in rest.iter().enumerate() {
            let s = client.wait(j).await.expect("wait");
            assert_eq!((s.state, s.attempts), (JobState::Done, 1), "job {j}");
            assert!(verifies(&s.proof.expect("proof"), i as u64 + 2));
        }
    });
}

#[test]
fn cancel_deadline_and_params_lifecycle() {
    let place = Place::new();
    let (rt, service, _stop) = served(&place, config(1, 1000, true));
    rt.block_on(async {
        let mut client = place.client().await;
        let (a, _) = client.submit(&request(1, Priority::Normal)).await.expect("submit");
        let (b, _) = client.submit(&request(2, Priority::Normal)).await.expect("submit");
        let soon = SystemTime::now() + Duration::from_millis(200);
        let (late, _) =
            client.submit(&JobRequest { deadline: Some(soon), ..request(3, Priority::High) }).await.expect("submit");
        assert_eq!(client.cancel(b).await.expect("cancel"), (true, JobState::Cancelled));
        // The deadline passes while the service is paused.
        while SystemTime::now() <= soon {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!service.is_loaded(PARAMS).expect("known"));
        client.preload(PARAMS).await.expect("preload");
        assert!(service.is_loaded(PARAMS).expect("known"));
        client.evict(PARAMS).await.expect("evict");
        assert!(!service.is_loaded(PARAMS).expect("known"));
        service.resume();
        let done = client.wait(a).await.expect("wait");
        assert_eq!(done.state, JobState::Done);
        assert!(verifies(&done.proof.expect("proof"), 1));
        // Loaded again on first use.
        assert!(service.is_loaded(PARAMS).expect("known"));
        let expired = client.wait(late).await.expect("wait");
        assert_eq!(expired.state, JobState::Failed);
        assert_eq!(expired.error.expect("error").0, "deadline_expired");
        assert_eq!(client.status(b).await.expect("status").state, JobState::Cancelled);
        assert_eq!(client.cancel(a).await.expect("cancel"), (false, JobState::Done));
    });
}

/// One plain HTTP/1.1 request; the whole answer.
fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer
}

#[test]
fn metrics_over_http() {
    let place = Place::new();
    let (rt, service, _stop) = served(&place, config(1, 1000, false));
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
    let addr = listener.local_addr().expect("addr");
    let metrics = service.clone();
    rt.spawn(async move { metrics.serve_metrics(listener, std::future::pending()).await });
    let job = rt.block_on(async {
        let mut client = place.client().await;
        let (job, _) = client.submit(&request(9, Priority::Low)).await.expect("submit");
        client.wait(job).await.expect("wait")
    });
    assert_eq!(job.state, JobState::Done);
    let answer = http_get(addr, "/metrics");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("application/openmetrics-text"), "{answer}");
    assert_eq!(
        metric(answer.split("\r\n\r\n").nth(1).expect("a body"), "kiln_jobs{state=\"done\",priority=\"low\"}"),
        1
    );
    assert!(http_get(addr, "/").starts_with("HTTP/1.1 404"));
}
