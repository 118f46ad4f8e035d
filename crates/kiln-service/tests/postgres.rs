//! The shared Postgres store: several stores (hosts) on one database. These tests need a
//! server: `.ci/run` starts one (`.ci/postgres`) and runs them with `--ignored` and
//! `KILN_TEST_POSTGRES` set; without the variable they fail, they do not pass empty.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{NoProgress, PreparedVerifyingKey, Proof, random_setup, verify_proof};
use kiln_sched::{Config, Workers};
use kiln_service::{
    BuiltinWitness, Circuits, JobRequest, JobState, Outcome, ParamsSets, PostgresStore, Priority, Service,
    ServiceConfig, Store, Submitted, cpu_prover_factory,
};
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;

const NEEDS: &str = "needs a Postgres server: KILN_TEST_POSTGRES=postgres://... (.ci/postgres starts one)";

/// A new, empty database on the test server; its URL.
fn fresh_database(name: &str) -> String {
    let url = std::env::var("KILN_TEST_POSTGRES").unwrap_or_else(|_| panic!("{NEEDS}"));
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).expect("connect to KILN_TEST_POSTGRES");
    let db = format!("kiln_{name}_{}", std::process::id());
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {db}")).expect("drop");
    admin.batch_execute(&format!("CREATE DATABASE {db}")).expect("create");
    let (server, _) = url.rsplit_once('/').expect("a URL with a database name");
    format!("{server}/{db}")
}

fn request(seed: u64, priority: Priority, key: Option<&str>) -> JobRequest {
    JobRequest {
        circuit: "porep".into(),
        witness: BuiltinWitness { log_size: 6, seed }.encode(),
        params_id: "porep6".into(),
        priority,
        deadline: None,
        idempotency_key: key.map(str::to_string),
    }
}

#[test]
#[ignore = "needs a Postgres server: KILN_TEST_POSTGRES (.ci/run starts one)"]
fn hosts_never_claim_a_job_twice() {
    let url = fresh_database("claims");
    let hosts: Vec<Arc<PostgresStore>> =
        (0..2).map(|_| Arc::new(PostgresStore::connect(&url).expect("connect"))).collect();
    let mut ids = HashSet::new();
    for seed in 0..60 {
        let Submitted::Accepted(id) = hosts[(seed % 2) as usize]
            .submit(&request(seed, Priority::ALL[seed as usize % 3], None), 1000)
            .expect("submit")
        else {
            panic!("accepted")
        };
        ids.insert(id);
    }
    // Four workers on two hosts claim until the queue is empty.
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let store = hosts[w % 2].clone();
            std::thread::spawn(move || {
                let owner = format!("worker-{w}");
                let mut mine = Vec::new();
                while let Some(job) = store.claim(&owner, Duration::from_secs(60), 5).expect("claim") {
                    assert!(store.finish(job.id, &owner, &Outcome::Proved(vec![w as u8; 192])).expect("finish"));
                    mine.push(job.id);
                }
                mine
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for t in threads {
        claimed.extend(t.join().expect("worker"));
    }
    let unique: HashSet<u64> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), unique.len(), "a job was claimed twice");
    assert_eq!(unique, ids);
    let done: u64 =
        hosts[0].counts().expect("counts").iter().filter(|c| c.state == JobState::Done).map(|c| c.jobs).sum();
    assert_eq!(done, 60);
}

#[test]
#[ignore = "needs a Postgres server: KILN_TEST_POSTGRES (.ci/run starts one)"]
fn queue_limit_and_keys_hold_across_hosts() {
    let url = fresh_database("limits");
    let hosts: Vec<Arc<PostgresStore>> =
        (0..2).map(|_| Arc::new(PostgresStore::connect(&url).expect("connect"))).collect();
    let threads: Vec<_> = (0..20u64)
        .map(|seed| {
            let store = hosts[(seed % 2) as usize].clone();
            std::thread::spawn(move || store.submit(&request(seed, Priority::Low, None), 5).expect("submit"))
        })
        .collect();
    let results: Vec<Submitted> = threads.into_iter().map(|t| t.join().expect("submitter")).collect();
    assert_eq!(results.iter().filter(|r| matches!(r, Submitted::Accepted(_))).count(), 5, "{results:?}");
    assert!(results.iter().all(|r| matches!(r, Submitted::Accepted(_) | Submitted::Busy { .. })));
    // One key submitted on both hosts at once: one job.
    let threads: Vec<_> = (0..2)
        .map(|h| {
            let store = hosts[h].clone();
            std::thread::spawn(move || store.submit(&request(99, Priority::High, Some("once")), 5).expect("submit"))
        })
        .collect();
    let mut results: Vec<Submitted> = threads.into_iter().map(|t| t.join().expect("submitter")).collect();
    results.sort_by_key(|r| matches!(r, Submitted::Existing(_)));
    match results.as_slice() {
        [Submitted::Accepted(a), Submitted::Existing(b)] => assert_eq!(a, b),
        other => panic!("expected one accepted and one existing: {other:?}"),
    }
}

#[test]
#[ignore = "needs a Postgres server: KILN_TEST_POSTGRES (.ci/run starts one)"]
fn a_dead_hosts_claim_expires_and_is_taken_over() {
    let url = fresh_database("lease");
    let dead = PostgresStore::connect(&url).expect("connect");
    let alive = PostgresStore::connect(&url).expect("connect");
    let Submitted::Accepted(id) = dead.submit(&request(1, Priority::Normal, None), 10).expect("submit") else {
        panic!("accepted")
    };
    dead.claim("dead", Duration::from_millis(1), 5).expect("claim").expect("a job");
    std::thread::sleep(Duration::from_millis(10));
    let taken = alive.claim("alive", Duration::from_secs(60), 5).expect("claim").expect("the expired claim");
    assert_eq!((taken.id, taken.attempts), (id, 2));
    assert!(!dead.finish(id, "dead", &Outcome::Proved(vec![0; 192])).expect("finish"), "the dead host's late result");
    assert!(alive.finish(id, "alive", &Outcome::Proved(vec![1; 192])).expect("finish"));
    let r = alive.get(id).expect("get").expect("exists");
    assert_eq!((r.state, r.proof, r.finished_by.as_deref()), (JobState::Done, Some(vec![1; 192]), Some("alive")));
}

#[test]
#[ignore = "needs a Postgres server: KILN_TEST_POSTGRES (.ci/run starts one)"]
fn two_services_share_one_queue_and_prove_each_job_once() {
    let url = fresh_database("services");
    let dir = tempfile::tempdir().expect("temp dir");
    let params_file = dir.path().join("porep6.params");
    let params = random_setup(Builtin::new(Kind::Porep, 1 << 6, 0), &mut ChaCha20Rng::seed_from_u64(5), &NoProgress)
        .expect("setup");
    params.write_file(&params_file).expect("write");
    let config = ServiceConfig { workers: 2, poll: Duration::from_millis(20), ..ServiceConfig::default() };
    let services: Vec<Service> = (0..2)
        .map(|_| {
            let store = Arc::new(PostgresStore::connect(&url).expect("connect"));
            let files = BTreeMap::from([("porep6".to_string(), params_file.clone())]);
            let sched = Config { cpu_threads: 1, queue_depth: 1, workers: Workers::Fixed(1), ..Config::default() };
            let sets = ParamsSets::new(files, cpu_prover_factory(), sched, kiln_groth16::Check::Full);
            Service::start(store, Circuits::default(), sets, config).expect("start")
        })
        .collect();
    let jobs: Vec<(u64, u64)> = (0..40u64)
        .map(|seed| {
            (
                services[(seed % 2) as usize]
                    .submit(&request(seed, Priority::ALL[seed as usize % 3], None))
                    .expect("submit")
                    .job,
                seed,
            )
        })
        .collect();
    let start = Instant::now();
    let pvk = PreparedVerifyingKey::new(&params.vk);
    let mut completions = HashSet::new();
    for &(job, seed) in &jobs {
        let record = loop {
            let r = services[0].status(job).expect("status");
            if r.state.is_final() {
                break r;
            }
            assert!(start.elapsed() < Duration::from_secs(300), "hang guard: job {job} never finished");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!((record.state, record.attempts), (JobState::Done, 1), "job {job}: {:?}", record.error);
        let proof = Proof::from_bytes(&record.proof.expect("proof")).expect("192 bytes");
        let inputs = Builtin::new(Kind::Porep, 1 << 6, seed).public_inputs();
        assert!(verify_proof(&pvk, &proof, &inputs).expect("verification runs"), "job {job}");
        assert!(completions.insert(record.completion.expect("final")), "job {job} shares a completion number");
    }
    for s in services {
        s.shutdown();
    }
}
