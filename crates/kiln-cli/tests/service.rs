//! `kiln serve` as a process (issue 21): killed with SIGKILL mid-batch and restarted, every
//! accepted job completes, none twice; the client commands; TCP and its token.
#![cfg(unix)]

use std::collections::HashMap;
use std::path::Path;

use kiln_service::{Address, Client, JobId, JobState, Priority, SqliteStore, Store};

mod common;

use common::service::{Server, kiln_out, request, runtime, setup_params, verifies};
use common::{Scratch, kiln};

#[test]
fn killed_mid_batch_and_restarted_every_job_completes_once() {
    let dir = Scratch::new("service-kill");
    let params = setup_params(&dir);
    let socket = dir.path("kiln.sock");
    let sock = socket.to_str().expect("utf-8 path").to_string();
    let db = dir.path("jobs.db").display().to_string();
    let server = Server::start(&dir, "first", &db, &["--socket", &sock]);
    let rt = runtime();
    let address = Address::Unix(socket.clone());
    let seeds: Vec<u64> = (0..40).collect();
    let jobs: HashMap<JobId, u64> = rt.block_on(async {
        let mut client = Client::connect(&address).await.expect("connect");
        let mut jobs = HashMap::new();
        for &seed in &seeds {
            let priority = Priority::ALL[seed as usize % 3];
            let (job, created) = client.submit(&request(seed, priority)).await.expect("submit");
            assert!(created);
            jobs.insert(job, seed);
        }
        // Mid-batch: once some jobs are done, the service dies without warning.
        let first = *jobs.keys().min().expect("jobs");
        client.wait(first).await.expect("wait");
        jobs
    });
    server.kill();
    // What the store held when the service died (read with the service down).
    let before: HashMap<JobId, (Vec<u8>, u64)> = {
        let store = SqliteStore::open(&dir.path("jobs.db")).expect("the dead service's lock is gone");
        let mut done = HashMap::new();
        for &job in jobs.keys() {
            let r = store.get(job).expect("read").expect("every accepted job is stored");
            if r.state == JobState::Done {
                done.insert(job, (r.proof.expect("a done job has its proof"), r.completion.expect("final")));
            }
        }
        done
    };
    assert!(!before.is_empty(), "at least the awaited job was done before the kill");
    assert!(before.len() < jobs.len(), "the kill came mid-batch: {} of {} were done", before.len(), jobs.len());

    // The stale socket of the killed service is replaced by the new one.
    let server = Server::start(&dir, "second", &db, &["--socket", &sock]);
    let finished = rt.block_on(async {
        let mut client = Client::connect(&address).await.expect("connect");
        let mut finished = HashMap::new();
        for &job in jobs.keys() {
            finished.insert(job, client.wait(job).await.expect("wait"));
        }
        // A retried submission after the restart names the same job: nothing is proved again.
        for (&job, &seed) in jobs.iter().take(5) {
            let priority = Priority::ALL[seed as usize % 3];
            assert_eq!(client.submit(&request(seed, priority)).await.expect("retry"), (job, false));
        }
        finished
    });
    let mut completions = Vec::new();
    for (&job, &seed) in &jobs {
        let s = &finished[&job];
        assert_eq!(s.state, JobState::Done, "job {job}: {:?}", s.error);
        let proof = s.proof.as_ref().expect("proof");
        assert!(verifies(&params, proof, seed), "job {job} does not verify");
        if let Some((proof_before, completion_before)) = before.get(&job) {
            // Finished before the kill: the same proof, the same completion, one claim.
            assert_eq!((proof, s.completion, s.attempts), (proof_before, Some(*completion_before), 1), "job {job}");
        }
        completions.push(s.completion.expect("final"));
    }
    // One completion per job: none was finished twice.
    completions.sort_unstable();
    assert_eq!(completions, (1..=jobs.len() as u64).collect::<Vec<_>>());
    // SIGTERM: the service stops cleanly and removes its socket.
    let (clean, log) = server.terminate();
    assert!(clean, "kiln serve failed on SIGTERM; log:\n{log}");
    assert!(log.contains("stopping"), "{log}");
    assert!(!socket.exists(), "the socket is removed on a clean stop");
}

#[test]
fn client_commands_and_the_tcp_token() {
    let dir = Scratch::new("service-cli");
    let params = setup_params(&dir);
    let token = dir.path("token");
    std::fs::write(&token, "a3f1c9e2b7d40a5f6e8c1b2d3a4f5e6d\n").expect("token");
    let wrong = dir.path("wrong");
    std::fs::write(&wrong, "00000000000000000000000000000000\n").expect("token");
    let token_arg = token.to_str().expect("utf-8 path");
    let db = dir.path("jobs.db").display().to_string();
    let extra = ["--tcp", "127.0.0.1:0", "--token-file", token_arg, "--metrics-addr", "127.0.0.1:0"];
    let server = Server::start(&dir, "tcp", &db, &extra);
    let log = server.wait_for("GET /metrics on");
    let addr = log
        .lines()
        .find_map(|l| l.split("listening on tcp ").nth(1)?.split_whitespace().next())
        .expect("the bound address is printed");
    let url = format!("http://{addr}");
    let connect =
        |file: &Path| vec!["--tcp".to_string(), url.clone(), "--token-file".into(), file.display().to_string()];

    let submit = |extra: &[&str], file: &Path| {
        let mut args: Vec<String> =
            ["submit", "--log-size", "6", "--params", "porep6", "--json"].iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(connect(file));
        kiln().args(&args).output().expect("kiln runs")
    };
    // A wrong token: refused, and nothing was stored.
    let out = submit(&["--seed", "3"], &wrong);
    assert!(!out.status.success());
    let refusal: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON error");
    assert_eq!(refusal["kind"], "unauthenticated", "{refusal}");
    // Malformed: an unknown circuit and an unknown parameter set, typed.
    let out = submit(&["--circuit", "groth"], &token);
    let refusal: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON error");
    assert_eq!(refusal["kind"], "unknown_circuit", "{refusal}");
    let mut args = connect(&token);
    args.splice(0..0, ["submit", "--log-size", "6", "--params", "nope", "--json"].map(String::from));
    let out = kiln().args(&args).output().expect("kiln runs");
    let refusal: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON error");
    assert_eq!(refusal["kind"], "unknown_params", "{refusal}");
    // The token is never an argument.
    let out = kiln_out(&["submit", "--log-size", "6", "--params", "porep6", "--token", "secret"]);
    assert_eq!(out.status.code(), Some(2), "clap refuses --token");

    // Submit and wait: the first accepted job is job 1 (the refusals stored nothing).
    let out = submit(&["--seed", "3", "--priority", "high", "--wait", "--idempotency-key", "k3"], &token);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON status");
    assert_eq!((status["job"].as_u64(), status["state"].as_str()), (Some(1), Some("done")), "{status}");
    let proof = hex_decode(status["proof"].as_str().expect("proof"));
    assert!(verifies(&params, &proof, 3));
    // `status` reads it back; `cancel` of a done job says so.
    let mut args = connect(&token);
    args.splice(0..0, ["status", "1", "--json"].map(String::from));
    let out = kiln().args(&args).output().expect("kiln runs");
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON status");
    assert_eq!(again["proof"], status["proof"]);
    let mut args = connect(&token);
    args.splice(0..0, ["cancel", "1", "--json"].map(String::from));
    let out = kiln().args(&args).output().expect("kiln runs");
    let cancel: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!((cancel["cancelled"].as_bool(), cancel["state"].as_str()), (Some(false), Some("done")));
    let mut args = connect(&token);
    args.insert(0, "metrics".into());
    let out = kiln().args(&args).output().expect("kiln runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kiln_jobs{state=\"done\",priority=\"high\"} 1"), "{text}");
    // The same over plain HTTP, as Prometheus scrapes it.
    let url =
        log.lines().find_map(|l| l.split("GET /metrics on http://").nth(1)).expect("the metrics address is printed");
    let http_addr = url.trim_end_matches("/metrics");
    let answer = {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(http_addr).expect("connect");
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read");
        answer
    };
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("kiln_jobs{state=\"done\",priority=\"high\"} 1"),
        "{answer}"
    );

    // A second service on the same database is refused (one service per SQLite file).
    let out = kiln()
        .args(["serve", "--backend", "cpu", "--params", "p=x", "--db"])
        .arg(dir.path("jobs.db"))
        .args(["--socket", dir.path("other.sock").to_str().expect("utf-8 path")])
        .output()
        .expect("kiln runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("locked"), "{}", String::from_utf8_lossy(&out.stderr));
    drop(server);
}

fn hex_decode(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}
