//! What the service tests share: a `kiln serve` child, parameters, requests.

use std::path::PathBuf;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{Check, Parameters, PreparedVerifyingKey, Proof, verify_proof};
use kiln_service::{BuiltinWitness, JobRequest, Priority};

use super::{Scratch, kiln};

pub const LOG_SIZE: u32 = 6;

pub fn kiln_out(args: &[&str]) -> Output {
    kiln().args(args).output().expect("kiln runs")
}

/// A `kiln serve` child, killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    pub fn start(dir: &Scratch, name: &str, db: &str, extra: &[&str]) -> Server {
        let log = dir.path(&format!("{name}.log"));
        let params = format!("porep6={}", dir.path("porep6.params").display());
        let child = kiln()
            .args(["serve", "--backend", "cpu", "--params", &params, "--db"])
            .arg(db)
            .args(["--concurrent-jobs", "1", "--lease-secs", "2"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("kiln serve starts");
        let server = Server { child, log };
        server.wait_for("listening on");
        server
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log says `what` (a hang guard, not a timing test: it fails after two
    /// minutes instead of hanging the suite).
    pub fn wait_for(&self, what: &str) -> String {
        let start = Instant::now();
        loop {
            let log = self.log();
            if log.contains(what) {
                return log;
            }
            assert!(start.elapsed() < Duration::from_secs(120), "kiln serve never said {what:?}; log:\n{log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and waits for the exit (hang guard: two minutes); returns whether the
    /// service exited successfully, and its log.
    pub fn terminate(mut self) -> (bool, String) {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        assert!(sent.success(), "kill -TERM {pid}");
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(120), "kiln serve ignored SIGTERM; log:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        };
        (status.success(), self.log())
    }

    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn setup_params(dir: &Scratch) -> Parameters {
    let out = kiln_out(&[
        "setup",
        "--circuit",
        "porep",
        "--log-size",
        &LOG_SIZE.to_string(),
        "--out",
        dir.path("porep6.params").to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success(), "setup: {}", String::from_utf8_lossy(&out.stderr));
    Parameters::read(&dir.path("porep6.params"), Check::Full).expect("params")
}

pub fn verifies(params: &Parameters, proof: &[u8], seed: u64) -> bool {
    let pvk = PreparedVerifyingKey::new(&params.vk);
    let inputs = Builtin::new(Kind::Porep, 1 << LOG_SIZE, seed).public_inputs();
    verify_proof(&pvk, &Proof::from_bytes(proof).expect("192 bytes"), &inputs).expect("verification runs")
}

pub fn request(seed: u64, priority: Priority) -> JobRequest {
    JobRequest {
        circuit: "porep".into(),
        witness: BuiltinWitness { log_size: LOG_SIZE, seed }.encode(),
        params_id: "porep6".into(),
        priority,
        deadline: None,
        idempotency_key: Some(format!("seed-{seed}")),
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}
