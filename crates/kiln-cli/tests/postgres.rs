//! Two `kiln serve` processes on one Postgres database (issue 21): they share the queue, each
//! job is proved once, and when one is killed (SIGKILL) mid-batch the other finishes its
//! jobs after their leases expire. Needs a server: `.ci/run` starts one (`.ci/postgres`) and
//! runs this with `--ignored` and `KILN_TEST_POSTGRES` set; without it the test fails.
#![cfg(unix)]

use std::collections::HashMap;

use kiln_service::{Address, Client, JobId, JobInfo, JobState, Priority};

mod common;

use common::Scratch;
use common::service::{Server, request, runtime, setup_params, verifies};

/// A new, empty database on the test server; its URL.
fn fresh_database(name: &str) -> String {
    let url = std::env::var("KILN_TEST_POSTGRES")
        .unwrap_or_else(|_| panic!("needs a Postgres server: KILN_TEST_POSTGRES=postgres://... (.ci/postgres)"));
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).expect("connect to KILN_TEST_POSTGRES");
    let db = format!("kiln_cli_{name}_{}", std::process::id());
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {db}")).expect("drop");
    admin.batch_execute(&format!("CREATE DATABASE {db}")).expect("create");
    let (server, _) = url.rsplit_once('/').expect("a URL with a database name");
    format!("{server}/{db}")
}

async fn submit_all(clients: &mut [Client], seeds: std::ops::Range<u64>) -> HashMap<JobId, u64> {
    let mut jobs = HashMap::new();
    for seed in seeds {
        let client = &mut clients[seed as usize % 2];
        let (job, created) = client.submit(&request(seed, Priority::ALL[seed as usize % 3])).await.expect("submit");
        assert!(created);
        jobs.insert(job, seed);
    }
    jobs
}

#[test]
#[ignore = "needs a Postgres server: KILN_TEST_POSTGRES (.ci/run starts one)"]
fn two_services_share_one_postgres_queue_and_survive_a_kill() {
    let url = fresh_database("share");
    let dir = Scratch::new("service-pg");
    let params = setup_params(&dir);
    let sockets = [dir.path("a.sock"), dir.path("b.sock")];
    let arg = |i: usize| sockets[i].to_str().expect("utf-8 path").to_string();
    let a = Server::start(&dir, "a", &url, &["--socket", &arg(0)]);
    let b = Server::start(&dir, "b", &url, &["--socket", &arg(1)]);
    let rt = runtime();
    let check = |jobs: &HashMap<JobId, u64>, finished: &HashMap<JobId, JobInfo>| {
        for (&job, &seed) in jobs {
            let s = &finished[&job];
            assert_eq!(s.state, JobState::Done, "job {job}: {:?}", s.error);
            assert!(verifies(&params, s.proof.as_ref().expect("proof"), seed), "job {job}");
        }
    };

    // Both hosts take jobs from one queue; each job is proved once.
    let (first, finished) = rt.block_on(async {
        let mut clients = Vec::new();
        for s in &sockets {
            clients.push(Client::connect(&Address::Unix(s.clone())).await.expect("connect"));
        }
        let jobs = submit_all(&mut clients, 0..30).await;
        let mut finished = HashMap::new();
        for &job in jobs.keys() {
            // Either host answers for any job.
            finished.insert(job, clients[job as usize % 2].wait(job).await.expect("wait"));
        }
        (jobs, finished)
    });
    check(&first, &finished);
    assert!(finished.values().all(|s| s.attempts == 1), "a job was claimed twice");

    // Host a dies mid-batch; host b finishes everything, a's claimed jobs after their lease.
    let second = rt.block_on(async {
        let mut clients = Vec::new();
        for s in &sockets {
            clients.push(Client::connect(&Address::Unix(s.clone())).await.expect("connect"));
        }
        let jobs = submit_all(&mut clients, 100..130).await;
        let first = *jobs.keys().min().expect("jobs");
        clients[1].wait(first).await.expect("wait");
        jobs
    });
    a.kill();
    let (done_before, finished) = rt.block_on(async {
        let mut client = Client::connect(&Address::Unix(sockets[1].clone())).await.expect("connect");
        let mut done_before = HashMap::new();
        for &job in second.keys() {
            let s = client.status(job).await.expect("status");
            if s.state == JobState::Done {
                done_before.insert(job, (s.proof.clone(), s.completion));
            }
        }
        let mut finished = HashMap::new();
        for &job in second.keys() {
            finished.insert(job, client.wait(job).await.expect("wait"));
        }
        (done_before, finished)
    });
    assert!(done_before.len() < second.len(), "the kill came mid-batch");
    check(&second, &finished);
    for (job, (proof, completion)) in &done_before {
        let s = &finished[job];
        assert_eq!((&s.proof, &s.completion), (proof, completion), "job {job} changed after it was done");
    }
    // One completion number per job over both batches: none finished twice.
    let mut completions: Vec<u64> = Vec::new();
    rt.block_on(async {
        let mut client = Client::connect(&Address::Unix(sockets[1].clone())).await.expect("connect");
        for &job in first.keys().chain(second.keys()) {
            completions.push(client.status(job).await.expect("status").completion.expect("final"));
        }
    });
    let n = completions.len();
    completions.sort_unstable();
    completions.dedup();
    assert_eq!(completions.len(), n, "two jobs share a completion number");
    drop(b);
}
