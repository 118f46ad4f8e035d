//! `kiln serve | submit | status | cancel`: the proving service (kiln-service) and its client.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kiln_groth16::Check;
use kiln_sched::{Config, SharedProver, Workers};
use kiln_service::{
    Address, BuiltinWitness, Circuits, Client, JobInfo, JobRequest, Listen, ParamsSets, PostgresStore, Priority,
    ProverFactory, Service, ServiceConfig, SqliteStore, Store, Token,
};
use serde_json::json;

use crate::backend::{BackendArgs, parse_workers};
use crate::cmds::CmdResult;
use crate::error::CliError;

/// The unix socket both sides use unless told otherwise.
const DEFAULT_SOCKET: &str = "kiln.sock";

/// `ID=FILE`: a parameter set's id (1 to 64 of `A-Za-z0-9._-`) and its file.
fn parse_params(s: &str) -> Result<(String, PathBuf), String> {
    let (id, file) =
        s.split_once('=').ok_or_else(|| format!("{s:?}: expected ID=FILE, e.g. porep14=porep14.params"))?;
    let valid =
        !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if !valid {
        return Err(format!("{id:?}: a parameter set id is 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', '-'"));
    }
    if file.is_empty() {
        return Err(format!("{s:?}: the file after '=' is empty"));
    }
    Ok((id.to_string(), PathBuf::from(file)))
}

/// Options of `kiln serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// A parameter set: its id (what jobs name) and its file; repeat for several. Loaded on
    /// first use (or at start with --preload) and kept.
    #[arg(long = "params", value_name = "ID=FILE", value_parser = parse_params, required = true)]
    params: Vec<(String, PathBuf)>,
    /// The job database: an SQLite file (created if missing; one service per file), or a
    /// Postgres URL (postgres://user:password@host:port/db, no TLS) that several services
    /// share as one queue (a password in the URL shows in the process list: prefer a login
    /// that needs none on the database host).
    #[arg(long, default_value = "kiln-jobs.db")]
    db: String,
    /// The unix socket to listen on (mode 0600; no token). Ignored with --tcp.
    #[arg(long, default_value = DEFAULT_SOCKET)]
    socket: PathBuf,
    /// Listen on TCP at this address instead (e.g. 127.0.0.1:7878); needs --token-file. No
    /// TLS: the token and the proofs travel in clear (a trusted network, or a TLS proxy).
    #[arg(long, requires = "token_file")]
    tcp: Option<SocketAddr>,
    /// The bearer token TCP clients must send: a file holding one line of 16 to 1024
    /// printable characters (never given on the command line).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Jobs in progress at once, `auto` or 1 to 64 (each through the orchestrator; at most
    /// the prover's lanes prove at the same time, the others have their witnesses made).
    /// `auto`: the lanes wanted (`--workers`; 1 on the CPU) plus the orchestrator's queue
    /// depth (2), so that the next jobs' witnesses are made while the lanes prove.
    #[arg(long, default_value = "auto", value_parser = parse_workers)]
    concurrent_jobs: Workers,
    /// Queued jobs allowed per priority; beyond it a submission is told to retry later.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    queue_limit: u64,
    /// Seconds a claim holds without renewal (a dead host's jobs are taken again after it).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    lease_secs: u64,
    /// Claims of one job without a result (its host died each time) before it fails as abandoned.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    max_attempts: u32,
    /// Also serve `GET /metrics` (Prometheus text) over plain HTTP at this address (no
    /// token: bind it where only the scraper reaches, e.g. 127.0.0.1:9464).
    #[arg(long)]
    metrics_addr: Option<SocketAddr>,
    /// Load every parameter set at start (else on first use).
    #[arg(long)]
    preload: bool,
    /// How parameter files are checked when loaded: `full` checks every point is in the
    /// prime-order subgroup (about 10 core-seconds per 2^16 constraints: most of a minute at
    /// 2^22 on 16 cores, some 20 minutes at 2^27); `no-subgroup` checks encoding and curve
    /// only, for files you made (`kiln setup`) or whose digest you checked.
    #[arg(long, value_enum, default_value_t = ParamsCheck::Full)]
    params_check: ParamsCheck,
    #[command(flatten)]
    backend: BackendArgs,
}

/// `--params-check`: [`Check`] as a command-line value.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ParamsCheck {
    /// Every point on the curve and in the prime-order subgroup.
    Full,
    /// Encoding and curve only (trusted files).
    NoSubgroup,
}

impl From<ParamsCheck> for Check {
    fn from(c: ParamsCheck) -> Check {
        match c {
            ParamsCheck::Full => Check::Full,
            ParamsCheck::NoSubgroup => Check::NoSubgroup,
        }
    }
}

/// Where the service is, for the client commands.
#[derive(clap::Args, Clone)]
pub struct ConnectArgs {
    /// The service's unix socket.
    #[arg(long, default_value = DEFAULT_SOCKET)]
    socket: PathBuf,
    /// The service's TCP address instead (http://host:port); needs --token-file.
    #[arg(long, requires = "token_file")]
    tcp: Option<String>,
    /// The file holding the bearer token (TCP).
    #[arg(long)]
    token_file: Option<PathBuf>,
}

impl ConnectArgs {
    fn address(&self) -> Result<Address, CliError> {
        Ok(match (&self.tcp, &self.token_file) {
            (Some(url), Some(file)) => Address::Tcp { url: url.clone(), token: Token::from_file(file)? },
            _ => Address::Unix(self.socket.clone()),
        })
    }
}

/// Options of `kiln submit`.
#[derive(clap::Args)]
pub struct SubmitArgs {
    /// The circuit kind, as registered in the service (built-in: mimc, squaring, porep).
    #[arg(long, default_value = "porep")]
    circuit: String,
    /// Built-in circuits: log2 of the constraint count (must match the parameter set).
    #[arg(long, value_parser = clap::value_parser!(u32).range(i64::from(BuiltinWitness::MIN_LOG_SIZE)..=i64::from(BuiltinWitness::MAX_LOG_SIZE)))]
    log_size: u32,
    /// Built-in circuits: the witness's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The parameter set's id (as given to `kiln serve --params ID=FILE`).
    #[arg(long)]
    params: String,
    /// high, normal or low.
    #[arg(long, default_value = "normal")]
    priority: Priority,
    /// Fail the job instead of proving it if it has not started this many seconds from now.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    deadline_secs: Option<u64>,
    /// Submitting the same key again returns the first job (safe retries).
    #[arg(long)]
    idempotency_key: Option<String>,
    /// Wait for the job to finish and print its final status.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    connect: ConnectArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kiln status` and `kiln cancel`.
#[derive(clap::Args)]
pub struct JobArgs {
    /// The job's id (as `kiln submit` printed it).
    job: u64,
    /// `status` only: wait until the job has finished.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    connect: ConnectArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kiln metrics`.
#[derive(clap::Args)]
pub struct MetricsArgs {
    #[command(flatten)]
    connect: ConnectArgs,
    /// Accepted for symmetry with the other commands: the output is Prometheus text either way.
    #[arg(long)]
    pub json: bool,
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|source| CliError::Runtime { source })
}

/// `--concurrent-jobs`; `auto`: as many jobs beside the lanes as a batch keeps witnesses
/// queued ahead of its workers.
fn concurrent_jobs(args: &ServeArgs, sched: &Config) -> usize {
    match args.concurrent_jobs {
        Workers::Fixed(n) => n,
        Workers::Auto => args.backend.lanes_wanted() + sched.queue_depth,
    }
}

/// `kiln serve`: runs until SIGINT or SIGTERM, then finishes the jobs being proved and stops.
pub fn serve(args: &ServeArgs) -> CmdResult {
    let listen = match (args.tcp, &args.token_file) {
        (Some(addr), Some(file)) => Listen::Tcp { addr, token: Token::from_file(file)? },
        _ => Listen::Unix(args.socket.clone()),
    };
    let mut files = BTreeMap::new();
    for (id, file) in &args.params {
        if files.insert(id.clone(), file.clone()).is_some() {
            return Err(CliError::Unsupported(format!("--params {id}=...: the id {id:?} is given twice")));
        }
    }
    let store: Arc<dyn Store> = if args.db.starts_with("postgres://") || args.db.starts_with("postgresql://") {
        Arc::new(PostgresStore::connect(&args.db)?)
    } else {
        Arc::new(SqliteStore::open(std::path::Path::new(&args.db))?)
    };
    let backend = args.backend.clone();
    let factory: ProverFactory = Arc::new(move |params| {
        let prover = backend.prover(params, false)?;
        Ok(SharedProver::from(prover))
    });
    let sched = Config::default();
    let workers = concurrent_jobs(args, &sched);
    let params = ParamsSets::new(files, factory, sched, args.params_check.into());
    let config = ServiceConfig {
        queue_limit: args.queue_limit,
        workers,
        lease: Duration::from_secs(args.lease_secs),
        max_attempts: args.max_attempts,
        ..ServiceConfig::default()
    };
    let service = Service::start(store, Circuits::default(), params, config)?;
    if args.preload {
        for (id, file) in &args.params {
            // A large set takes minutes (reading, checking every point, the GPU's upload):
            // say what is happening before the socket appears.
            let check = match args.params_check {
                ParamsCheck::Full => "every point checked; --params-check no-subgroup for trusted files",
                ParamsCheck::NoSubgroup => "subgroup check skipped",
            };
            eprintln!("kiln serve: loading parameter set {id} from {} ({check})", file.display());
            let start = std::time::Instant::now();
            service.preload(id)?;
            eprintln!("kiln serve: parameter set {id} loaded in {:.1} s", start.elapsed().as_secs_f64());
        }
    }
    let rt = runtime()?;
    let served =
        rt.block_on(async {
            let bound = listen.bind().await?;
            match &listen {
                Listen::Unix(path) => eprintln!("kiln serve: listening on unix socket {}", path.display()),
                Listen::Tcp { .. } => {
                    let addr = bound.tcp_addr().map_or_else(|| "?".into(), |a| a.to_string());
                    eprintln!("kiln serve: listening on tcp {addr} (bearer token required)");
                }
            }
            let Some(addr) = args.metrics_addr else { return service.serve(bound, stop_signal()).await };
            let metrics = tokio::net::TcpListener::bind(addr).await.map_err(|source| {
                kiln_service::ServeError::Listen { address: addr.to_string(), op: "bind (--metrics-addr)", source }
            })?;
            let bound_addr = metrics.local_addr().map_or_else(|_| addr.to_string(), |a| a.to_string());
            eprintln!("kiln serve: GET /metrics on http://{bound_addr}/metrics");
            // The metrics server runs until the gRPC server stops (on the signal).
            tokio::select! {
                served = service.serve(bound, stop_signal()) => served,
                metrics = service.serve_metrics(metrics, std::future::pending()) => metrics,
            }
        });
    eprintln!("kiln serve: stopping (jobs being proved finish first)");
    service.shutdown();
    Ok(served?)
}

/// Completes on SIGINT or SIGTERM.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(mut int), Ok(mut term)) => {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
        _ => {
            tracing::error!("cannot watch SIGINT/SIGTERM; stop the service with SIGKILL");
            std::future::pending::<()>().await;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn status_json(s: &JobInfo) -> serde_json::Value {
    let ms = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    json!({
        "job": s.job,
        "state": s.state.name(),
        "priority": s.priority.name(),
        "circuit": s.circuit,
        "params": s.params_id,
        "attempts": s.attempts,
        "proof": s.proof.as_deref().map(hex),
        "error_kind": s.error.as_ref().map(|e| e.0.clone()),
        "error": s.error.as_ref().map(|e| e.1.clone()),
        "submitted_unix_ms": ms(s.submitted),
        "finished_unix_ms": s.finished.map(ms),
        "completion": s.completion,
    })
}

fn print_status(s: &JobInfo, json: bool) {
    if json {
        println!("{}", status_json(s));
        return;
    }
    println!(
        "job {}: {} ({} priority, {} on {}, attempts {})",
        s.job, s.state, s.priority, s.circuit, s.params_id, s.attempts
    );
    if let Some(proof) = &s.proof {
        println!("proof {}", hex(proof));
    }
    if let Some((kind, message)) = &s.error {
        println!("error ({kind}): {message}");
    }
}

/// `kiln submit`.
pub fn submit(args: &SubmitArgs) -> CmdResult {
    let address = args.connect.address()?;
    let request = JobRequest {
        circuit: args.circuit.clone(),
        witness: BuiltinWitness { log_size: args.log_size, seed: args.seed }.encode(),
        params_id: args.params.clone(),
        priority: args.priority,
        deadline: args.deadline_secs.map(|s| SystemTime::now() + Duration::from_secs(s)),
        idempotency_key: args.idempotency_key.clone(),
    };
    runtime()?.block_on(async {
        let mut client = Client::connect(&address).await?;
        let (job, created) = client.submit(&request).await?;
        if args.wait {
            let status = client.wait(job).await?;
            print_status(&status, args.json);
        } else if args.json {
            println!("{}", json!({ "job": job, "created": created }));
        } else if created {
            println!("job {job} accepted");
        } else {
            println!("job {job} (submitted before with this idempotency key)");
        }
        Ok(())
    })
}

/// `kiln status`.
pub fn status(args: &JobArgs) -> CmdResult {
    let address = args.connect.address()?;
    runtime()?.block_on(async {
        let mut client = Client::connect(&address).await?;
        let status = if args.wait { client.wait(args.job).await? } else { client.status(args.job).await? };
        print_status(&status, args.json);
        Ok(())
    })
}

/// `kiln cancel`.
pub fn cancel(args: &JobArgs) -> CmdResult {
    let address = args.connect.address()?;
    runtime()?.block_on(async {
        let mut client = Client::connect(&address).await?;
        let (cancelled, state) = client.cancel(args.job).await?;
        if args.json {
            println!("{}", json!({ "job": args.job, "cancelled": cancelled, "state": state.name() }));
        } else if cancelled {
            println!("job {} cancelled", args.job);
        } else {
            println!("job {} not cancelled: it is {state} (only queued jobs can be)", args.job);
        }
        Ok(())
    })
}

/// `kiln metrics`.
pub fn metrics(args: &MetricsArgs) -> CmdResult {
    let address = args.connect.address()?;
    runtime()?.block_on(async {
        let mut client = Client::connect(&address).await?;
        print!("{}", client.metrics().await?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: super::ServeArgs,
    }

    fn jobs(extra: &[&str]) -> usize {
        let argv = ["serve", "--params", "p=p.params"].iter().chain(extra);
        let serve = Serve::try_parse_from(argv).unwrap_or_else(|e| panic!("{extra:?}: {e}"));
        super::concurrent_jobs(&serve.args, &kiln_sched::Config::default())
    }

    #[test]
    fn concurrent_jobs_default_to_the_lanes_wanted_plus_the_queue_depth() {
        assert_eq!(jobs(&["--backend", "cpu"]), 3, "the CPU prover's one lane + 2");
        assert_eq!(jobs(&["--backend", "gpu"]), 4, "the GPU plan's 2 lanes asked by default + 2");
        assert_eq!(jobs(&["--workers", "3"]), 5);
        assert_eq!(jobs(&["--concurrent-jobs", "7", "--workers", "3"]), 7);
        assert!(Serve::try_parse_from(["serve", "--params", "p=p", "--concurrent-jobs", "0"]).is_err());
    }

    #[test]
    fn parameters_are_fully_checked_unless_told_otherwise() {
        let check = |extra: &[&str]| {
            let argv = ["serve", "--params", "p=p.params"].iter().chain(extra);
            kiln_groth16::Check::from(Serve::try_parse_from(argv).unwrap().args.params_check)
        };
        assert_eq!(check(&[]), kiln_groth16::Check::Full);
        assert_eq!(check(&["--params-check", "no-subgroup"]), kiln_groth16::Check::NoSubgroup);
        assert!(Serve::try_parse_from(["serve", "--params", "p=p", "--params-check", "none"]).is_err());
    }
}
