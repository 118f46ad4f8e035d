//! `kiln setup | prove | verify | bench | demo`: Groth16 on the built-in circuits.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ff::Field;
use indicatif::{ProgressBar, ProgressStyle};
use kiln_groth16::atomic::{AtomicFile, write_atomic};
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{
    Check, Groth16Error, Parameters, PreparedVerifyingKey, Progress, Proof, ProofError, ProofReader, ProveOptions,
    Scalar, Shape, Timings, Trapdoor, Witness, create_proofs, gpu_setup, prove_witnesses, setup_with_trapdoor,
    verify_proofs_batch,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::backend::{BackendArgs, DeviceArgs};
use crate::error::CliError;

/// The result of a command.
pub type CmdResult = Result<(), CliError>;

/// Most proofs one `prove` or `verify` run takes (`--count`). Memory does not grow with it
/// (proofs are made and checked in batches); it catches a mistyped count before hours of work.
pub const MAX_COUNT: u64 = 1 << 20;

/// Most repeats of `bench`.
pub const MAX_REPEAT: u64 = 1000;

/// Circuits proved at once by `prove`: memory grows with the batch, never with `--count`.
const PROVE_BATCH: u64 = 8;

/// Proofs read and batch-verified at once by `verify`.
const VERIFY_BATCH: usize = 1024;

/// Which circuit, at which size.
#[derive(clap::Args, Clone, Debug)]
pub struct CircuitArgs {
    /// Built-in circuit: mimc, squaring or porep.
    #[arg(long, default_value = "porep")]
    circuit: Kind,
    /// log2 of the constraint count (the circuit fills a domain of 2^log_size).
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(4..=28))]
    log_size: u32,
    /// Seed of the witness (its public inputs follow from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl CircuitArgs {
    fn circuit(&self) -> Builtin {
        Builtin::new(self.circuit, 1 << self.log_size, self.seed)
    }

    /// Circuit `i` of a batch: seed + i. Seeds are labels, so they wrap around rather than
    /// overflow (`prove` and `verify` agree on the wrapped value).
    fn circuit_at(&self, i: u64) -> Builtin {
        Builtin { seed: self.seed.wrapping_add(i), ..self.circuit() }
    }
}

/// Options of `kiln setup`.
#[derive(clap::Args)]
pub struct SetupArgs {
    #[command(flatten)]
    circuit: CircuitArgs,
    /// Where to write the parameters (bellperson's format).
    #[arg(long)]
    out: PathBuf,
    /// Seed of the toxic waste (random setup: for tests and benchmarks only).
    #[arg(long, default_value_t = 0)]
    setup_seed: u64,
    #[command(flatten)]
    on: DeviceArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kiln prove`.
#[derive(clap::Args)]
pub struct ProveArgs {
    #[command(flatten)]
    circuit: CircuitArgs,
    /// Parameter file.
    #[arg(long)]
    params: PathBuf,
    /// Where to write the proof(s): 192 bytes each, bellperson's format.
    #[arg(long)]
    out: PathBuf,
    /// Number of proofs (seeds seed, seed+1, ...), 1 to 1048576; made in batches, so memory
    /// does not grow with it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_COUNT))]
    count: u64,
    /// Check that the witness satisfies every constraint before proving.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    backend: BackendArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kiln verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    circuit: CircuitArgs,
    /// Parameter file (its verifying key is used).
    #[arg(long)]
    params: PathBuf,
    /// Proof file (192-byte proofs; proof i is for seed + i).
    #[arg(long)]
    proof: PathBuf,
    /// Number of proofs in the proof file (as given to `prove --count`); a file holding
    /// more or fewer is an error. At most count × 192 + 1 bytes of it are read.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_COUNT))]
    count: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kiln bench` and `kiln demo`.
#[derive(clap::Args, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    circuit: CircuitArgs,
    /// Proofs to time (the median is reported), 1 to 1000.
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_REPEAT))]
    repeat: usize,
    #[command(flatten)]
    backend: BackendArgs,
    /// Skip the verification of each proof before it is returned (time the prover alone).
    #[arg(long)]
    no_verify: bool,
    /// `kiln bench` only: prove this many equally shaped circuits (seeds seed, seed + 1, ...)
    /// through the orchestrator (kiln-sched) and report the wall time, proofs per minute and
    /// the prover's busy fraction instead of single-proof phases (`--workers`: how many
    /// prove at once; `--repeat`: rounds of the batch in one process); 0 (default): single
    /// proofs.
    #[arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=MAX_REPEAT))]
    partitions: usize,
    /// Make each witness by the circuit's bellpepper synthesis, one thread, as the peers do
    /// (for side-by-side comparisons), instead of the built-in circuit's own witness
    /// generator (porep's runs on every core).
    #[arg(long)]
    generic_witness: bool,
    /// `bench --partitions`: at most this many threads make witnesses, 1 to 256 (default: 1 for
    /// the built-in circuits' own witness generators, which use every core themselves; one per
    /// core with `--generic-witness`, one thread each). Host memory may lower it (the witnesses
    /// in flight must fit in half of what is available). With a parallel generator one thread
    /// makes each witness on all cores, so the first comes early and the lanes start staggered;
    /// one thread per core makes a batch's witnesses all at once, finishing together
    /// (docs/PERF.md: 1 thread gave 1.3x the proofs a minute of 10 at porep 2^24, 4 workers).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    witness_threads: Option<usize>,
    /// Write the verifying key (`DIR/vk`, bellperson's `VerifyingKey` layout) and the first
    /// round's proofs (`DIR/proofs`, 192 bytes each, proof i for seed + i, as `kiln prove`
    /// writes them) into the existing folder DIR, for a check by another verifier (bellperson's:
    /// `cargo run -p kiln-groth16 --example bellperson_verify`). Both files appear complete or
    /// not at all.
    #[arg(long, value_name = "DIR")]
    save_proofs: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

impl BenchArgs {
    /// Refuses a `--save-proofs` that is not a folder before any work (a 2^27 run would
    /// otherwise fail only at its end).
    fn check_save_dir(&self) -> Result<(), CliError> {
        match &self.save_proofs {
            Some(dir) if !dir.is_dir() => Err(CliError::Unsupported(format!(
                "--save-proofs {}: not an existing folder (create it first)",
                dir.display()
            ))),
            _ => Ok(()),
        }
    }

    /// Writes `vk` and `proofs` into the `--save-proofs` folder, if one was given.
    fn save_proofs(&self, vk: &kiln_groth16::VerifyingKey, proofs: &[Proof]) -> Result<(), CliError> {
        let Some(dir) = &self.save_proofs else { return Ok(()) };
        write_atomic(&dir.join("vk"), &[], |w| vk.write(w))?;
        write_atomic(&dir.join("proofs"), &[], |w| proofs.iter().try_for_each(|p| w.write_all(&p.to_bytes())))?;
        Ok(())
    }

    /// Circuit `c`'s witness through `shape`, the way `--generic-witness` says.
    fn witness(&self, c: Builtin, shape: &Shape) -> Result<Witness, Groth16Error> {
        if self.generic_witness { shape.witness(c) } else { c.witness(shape) }
    }

    /// A job of the orchestrator proving circuit `c`, its witness made as [`BenchArgs::witness`].
    fn job(&self, c: Builtin, randomness: kiln_sched::Randomness) -> kiln_sched::Job {
        let generic = self.generic_witness;
        let witness = move |shape: &Shape| if generic { shape.witness(c) } else { c.witness(shape) };
        kiln_sched::Job::from_witness_fn(Box::new(witness), randomness)
    }

    /// How witnesses are made, for reports.
    fn witness_kind(&self) -> &'static str {
        if self.generic_witness { "generic" } else { "direct" }
    }
}

/// Progress bars on stderr (hidden when stderr is not a terminal or with --json).
struct Bar {
    bar: ProgressBar,
}

impl Bar {
    fn new(hidden: bool) -> Self {
        let bar = if hidden { ProgressBar::hidden() } else { ProgressBar::new(0) };
        bar.set_style(
            ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Bar { bar }
    }
}

impl Progress for Bar {
    fn start(&self, phase: &str, total: u64) {
        self.bar.set_message(phase.to_string());
        self.bar.set_length(total);
        self.bar.set_position(0);
    }
    fn inc(&self, n: u64) {
        self.bar.inc(n);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Threads of the witness stage: up to `cores`, but with `held` more witnesses in memory at
/// once (queued and being proved) no more than half the host memory available now holds: a
/// 2^27 witness is ~4 GiB, and sixteen of them beside 45 GiB of parameters do not fit.
fn witness_threads(shape: &Shape, cores: usize, held: usize) -> usize {
    let witness = crate::host_plan::witness_bytes(shape);
    let Some(available) = kiln_cuda::host::available_bytes() else { return cores };
    let fit = (available / 2 / witness.max(1)) as usize;
    fit.saturating_sub(held).clamp(1, cores.max(1))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// One line on a device's memory: what the VRAM plan reserved and what is in use on it.
fn print_device_memory(reserved: u64, in_use: &str, total: u64) {
    println!(
        "          memory {:.2} GiB reserved by the VRAM plan; in use on the device {in_use} of {:.2} GiB",
        gib(reserved),
        gib(total)
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parameters for `c` from the trapdoor drawn from `setup_seed`: on `gpu` when given (from
/// the recorded `shape`, recorded here if not given), else on the CPU. The same seed gives
/// the same bytes either way.
fn setup_params(
    c: Builtin,
    setup_seed: u64,
    hidden: bool,
    gpu: Option<&Arc<kiln_cuda::Device>>,
    shape: Option<&Shape>,
) -> Result<Parameters, CliError> {
    let bar = Bar::new(hidden);
    let trapdoor = Trapdoor::random(&mut ChaCha20Rng::seed_from_u64(setup_seed));
    Ok(match gpu {
        Some(device) => match shape {
            Some(shape) => gpu_setup(shape, &trapdoor, device, &bar)?,
            None => gpu_setup(&Shape::record(c)?, &trapdoor, device, &bar)?,
        },
        None => setup_with_trapdoor(c, &trapdoor, &bar)?,
    })
}

/// `kiln setup`.
pub fn setup(args: &SetupArgs) -> CmdResult {
    let c = args.circuit.circuit();
    // A bad output path is reported before the setup's work, not after.
    check_output(&args.out, &[])?;
    let start = Instant::now();
    let gpu = args.on.gpu(args.json)?;
    let params = setup_params(c, args.setup_seed, args.json, gpu.as_ref(), None)?;
    params.write_file(&args.out)?;
    let t = start.elapsed();
    if args.json {
        let out = json!({
            "circuit": c.kind.to_string(),
            "log_size": args.circuit.log_size,
            "params": args.out.display().to_string(),
            "bytes": params.file_size(),
            "setup_ms": ms(t),
        });
        println!("{out}");
    } else {
        println!("wrote {} ({} bytes) in {:.2} s", args.out.display(), params.file_size(), t.as_secs_f64());
    }
    Ok(())
}

/// Fails now if `out` could not be written later (refused kind of file, one of `inputs`,
/// a folder that does not exist or cannot be written); creates and removes a temporary file.
fn check_output(out: &Path, inputs: &[&Path]) -> Result<(), CliError> {
    drop(AtomicFile::create(out, inputs)?);
    Ok(())
}

/// `kiln prove`: proofs in batches of [`PROVE_BATCH`], each verified by the prover before it
/// is returned, streamed into the output file, which appears (atomically) only when all are
/// made.
pub fn prove(args: &ProveArgs) -> CmdResult {
    // The output is checked (not a device, not the parameters) before minutes of proving.
    let mut out = AtomicFile::create(&args.out, &[&args.params])?;
    let params = Parameters::read(&args.params, Check::Full)?;
    let backend = args.backend.prover(params.into(), args.json)?;
    let mut rng = rand::rngs::OsRng;
    let mut total: Option<Timings> = None;
    let mut done = 0;
    while done < args.count {
        let n = (args.count - done).min(PROVE_BATCH);
        let circuits: Vec<Builtin> = (done..done + n).map(|i| args.circuit.circuit_at(i)).collect();
        let (proofs, timings) = create_proofs(
            backend.as_ref(),
            circuits,
            &mut rng,
            ProveOptions { check_satisfied: args.check, verify: true },
        )?;
        for p in &proofs {
            out.write_bytes(&p.to_bytes())?;
        }
        total = Some(match total {
            Some(t) => add_timings(&t, &timings),
            None => timings,
        });
        done += n;
    }
    out.commit()?;
    let total = total.expect("--count is at least 1");
    if args.json {
        let out = json!({
            "proofs": args.count,
            "out": args.out.display().to_string(),
            "backend": backend.name(),
            "timings_ms": timings_json(&total),
        });
        println!("{out}");
    } else {
        println!("wrote {} proof(s) to {} ({} backend)", args.count, args.out.display(), backend.name());
        print_timings(&total);
    }
    Ok(())
}

/// Phase times of two runs added.
fn add_timings(a: &Timings, b: &Timings) -> Timings {
    Timings {
        synthesis: a.synthesis + b.synthesis,
        prepare: a.prepare + b.prepare,
        h_poly: a.h_poly + b.h_poly,
        msm_h_l: a.msm_h_l + b.msm_h_l,
        msm_a_b_g1: a.msm_a_b_g1 + b.msm_a_b_g1,
        msm_b_g2: a.msm_b_g2 + b.msm_b_g2,
        epilogue: a.epilogue + b.epilogue,
        verify: a.verify + b.verify,
        on_gpu: a.on_gpu || b.on_gpu,
    }
}

/// `kiln verify`: reads exactly `--count` proofs (at most that many bytes plus one, so a
/// stream like `/dev/zero` costs nothing), verifies them in batches. Exits with an error when
/// a proof does not verify.
pub fn verify(args: &VerifyArgs) -> CmdResult {
    let params = Parameters::read(&args.params, Check::Full)?;
    let pvk = PreparedVerifyingKey::new(&params.vk);
    let path = &args.proof;
    let io = |op| move |source| CliError::ProofIo { path: path.clone(), op, source };
    // A directory opens fine on Unix and fails only at the first read, with a vaguer message.
    if std::fs::metadata(path).map_err(io("stat"))?.is_dir() {
        return Err(CliError::ProofIsDirectory { path: path.clone() });
    }
    let file = std::fs::File::open(path).map_err(io("open"))?;
    let count = usize::try_from(args.count).expect("--count is at most MAX_COUNT");
    let mut reader = ProofReader::new(std::io::BufReader::new(file), count);
    let mut all_ok = true;
    let mut done = 0u64;
    loop {
        let proofs = reader.next_chunk(VERIFY_BATCH).map_err(|source| {
            let hint = match source {
                ProofError::Length { .. } | ProofError::TooLong { .. } => {
                    " (pass --count with the number of proofs the file holds, as given to `kiln prove --count`)"
                }
                _ => "",
            };
            CliError::ProofFile { path: path.clone(), source, hint }
        })?;
        if proofs.is_empty() {
            break;
        }
        let inputs: Vec<_> =
            (done..done + proofs.len() as u64).map(|i| args.circuit.circuit_at(i).public_inputs()).collect();
        all_ok &= verify_proofs_batch(&pvk, &proofs, &inputs, &mut rand::rngs::OsRng)?;
        done += proofs.len() as u64;
    }
    if args.json {
        println!("{}", json!({ "proofs": done, "verified": all_ok }));
    } else {
        println!("{done} proof(s): {}", if all_ok { "verified" } else { "INVALID" });
    }
    if all_ok { Ok(()) } else { Err(CliError::NotVerified { what: format!("the proofs in {}", path.display()) }) }
}

/// Where cached demo parameters live: $KILN_CACHE, else ~/.cache/kiln, else ./.kiln-cache.
fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("KILN_CACHE") {
        return PathBuf::from(d);
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("kiln"),
        None => PathBuf::from(".kiln-cache"),
    }
}

fn file_digest(path: &Path) -> std::io::Result<(u64, String)> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok((0, hex(&Sha256::digest([]))));
    }
    // SAFETY: read-only map of a file kiln replaces only by atomic rename.
    let map = unsafe { memmap2::Mmap::map(&file) }?;
    Ok((len, hex(&Sha256::digest(&map[..]))))
}

/// Sizes above this many constraints (log 2) are set up in memory for each run and not
/// cached: a 2^27 circuit's parameters are ~45 GiB, which take longer to write, hash and read
/// back than the GPU takes to make them.
const CACHE_MAX_LOG: u32 = 24;

/// Parameters for `c` (with its recorded `shape`), made on `gpu` when given: from the cache
/// when the file matches its recorded size and SHA-256, otherwise (missing or corrupt) made
/// again and recorded. Returns (params, was_cached, setup time).
fn cached_params(
    c: Builtin,
    log_size: u32,
    hidden: bool,
    gpu: Option<&Arc<kiln_cuda::Device>>,
    shape: &Shape,
) -> Result<(Parameters, bool, Duration), CliError> {
    // A fixed setup seed: the cache holds the same parameters whoever made them, on either backend.
    let setup = || setup_params(Builtin { seed: 0, ..c }, 0x6b696c6e, hidden, gpu, Some(shape));
    if log_size > CACHE_MAX_LOG {
        let start = Instant::now();
        let params = setup()?;
        if !hidden {
            eprintln!("note: 2^{log_size} parameters made in memory, not cached (above 2^{CACHE_MAX_LOG})");
        }
        return Ok((params, false, start.elapsed()));
    }
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|source| CliError::Cache {
        path: dir.clone(),
        op: "create folder",
        source,
    })?;
    let path = dir.join(format!("{}-2^{log_size}.params", c.kind));
    let sum_path = dir.join(format!("{}-2^{log_size}.params.sha256", c.kind));
    let start = Instant::now();
    if let (Ok(recorded), Ok(actual)) = (std::fs::read_to_string(&sum_path), file_digest(&path)) {
        if recorded.trim() == format!("{} {}", actual.1, actual.0) {
            match Parameters::read(&path, Check::NoSubgroup) {
                Ok(p) => return Ok((p, true, start.elapsed())),
                Err(e) => tracing::warn!("cached parameters unreadable ({e}): making them again"),
            }
        } else {
            tracing::warn!(path = %path.display(), "cached parameters fail the integrity check: making them again");
        }
    }
    let params = setup()?;
    params.write_file(&path)?;
    let (len, digest) =
        file_digest(&path).map_err(|source| CliError::Cache { path: path.clone(), op: "read back", source })?;
    write_atomic(&sum_path, &[], |w| writeln!(w, "{digest} {len}"))?;
    Ok((params, false, start.elapsed()))
}

struct RunReport {
    /// Recording the circuit's shape (its constraint matrices), once per run.
    record_ms: f64,
    /// Peak resident host memory of the process after the run, if the OS says.
    peak_rss: Option<u64>,
    /// The prover's device memory after the run (`None` on the CPU).
    device_memory: Option<kiln_groth16::DeviceMemoryUse>,
    params_ms: f64,
    /// Where the parameters were made: "gpu", "cpu" (or loaded from the cache).
    setup_on: &'static str,
    cached: bool,
    timings: Vec<Timings>,
    /// Wall time of each proof, circuit to verified proof bytes (phases overlap on the GPU).
    walls: Vec<Duration>,
    verify: Duration,
    verified: bool,
    proof: Proof,
    backend: String,
}

fn run_bench(args: &BenchArgs) -> Result<RunReport, CliError> {
    args.check_save_dir()?;
    let c = args.circuit.circuit();
    // The circuit's constraint matrices are recorded once, like the parameters: per proof,
    // synthesis is then witness generation and sparse products. A GPU setup reads them too.
    let record = Instant::now();
    let shape = kiln_groth16::Shape::record(c)?;
    let record = record.elapsed();
    let gpu = args.backend.on.gpu(args.json)?;
    let (params, cached, params_time) = cached_params(c, args.circuit.log_size, args.json, gpu.as_ref(), &shape)?;
    let params = std::sync::Arc::new(params);
    let backend = args.backend.prover(params.clone(), args.json)?;
    let mut rng = rand::rngs::OsRng;
    let mut timings = Vec::new();
    let mut walls = Vec::new();
    let mut proof = None;
    let options = ProveOptions { verify: !args.no_verify, ..ProveOptions::default() };
    for _ in 0..args.repeat {
        let start = Instant::now();
        let r_s = [(Scalar::random(&mut rng), Scalar::random(&mut rng))];
        let witness = args.witness(c, &shape)?;
        let mut t = Timings { synthesis: start.elapsed(), ..Timings::default() };
        let p = prove_witnesses(backend.as_ref(), &shape, &[witness], &r_s, options, &mut t)?;
        walls.push(start.elapsed());
        timings.push(t);
        proof = Some(p[0]);
    }
    let proof = proof.expect("--repeat is at least 1");
    let start = Instant::now();
    let pvk = PreparedVerifyingKey::new(&params.vk);
    let verified = kiln_groth16::verify_proof(&pvk, &proof, &c.public_inputs())?;
    args.save_proofs(&params.vk, &[proof])?;
    Ok(RunReport {
        record_ms: ms(record),
        peak_rss: kiln_cuda::host::peak_resident_bytes(),
        device_memory: backend.device_memory(),
        params_ms: ms(params_time),
        setup_on: if gpu.is_some() { "gpu" } else { "cpu" },
        cached,
        timings,
        walls,
        verify: start.elapsed(),
        verified,
        proof,
        backend: backend.name(),
    })
}

/// The per-phase median over repeats.
fn median_timings(all: &[Timings]) -> Timings {
    let med = |f: fn(&Timings) -> Duration| {
        let mut v: Vec<Duration> = all.iter().map(f).collect();
        v.sort();
        v[v.len() / 2]
    };
    Timings {
        synthesis: med(|t| t.synthesis),
        prepare: med(|t| t.prepare),
        h_poly: med(|t| t.h_poly),
        msm_h_l: med(|t| t.msm_h_l),
        msm_a_b_g1: med(|t| t.msm_a_b_g1),
        msm_b_g2: med(|t| t.msm_b_g2),
        epilogue: med(|t| t.epilogue),
        verify: med(|t| t.verify),
        on_gpu: all.iter().any(|t| t.on_gpu),
    }
}

fn timings_json(t: &Timings) -> serde_json::Value {
    let mut phases: serde_json::Map<String, serde_json::Value> =
        t.phases().iter().map(|(n, _, d)| (n.to_string(), json!(ms(*d)))).collect();
    phases.insert("total".into(), json!(ms(t.total())));
    phases.into()
}

fn print_timings(t: &Timings) {
    println!("{:<16} {:<5} {:>10}", "phase", "on", "ms");
    for (name, unit, d) in t.phases() {
        println!("{name:<16} {unit:<5} {:>10.1}", ms(d));
    }
    println!("{:<16} {:<5} {:>10.1}", "total", "", ms(t.total()));
}

/// `kiln bench`: median per-phase proving time over repeats, or with `--partitions` a batch
/// through the orchestrator.
pub fn bench(args: &BenchArgs) -> CmdResult {
    if args.partitions > 0 {
        return bench_partitions(args);
    }
    let r = run_bench(args)?;
    report(args, &r, false)
}

/// `kiln demo`: cached parameters, one proof on the best backend, verification, timings.
pub fn demo(args: &BenchArgs) -> CmdResult {
    let args = BenchArgs { repeat: 1, ..args.clone() };
    let r = run_bench(&args)?;
    report(&args, &r, true)
}

/// `kiln bench --partitions N`: N equally shaped circuits (one recorded shape) through
/// kiln-sched's CPU witness stage and proving workers, `--repeat` rounds in one process (the
/// prover and its VRAM plan made once); every proof verified.
fn bench_partitions(args: &BenchArgs) -> CmdResult {
    args.backend.check_devices()?;
    args.check_save_dir()?;
    let c = &args.circuit;
    let record = Instant::now();
    let shape = std::sync::Arc::new(kiln_groth16::Shape::record(c.circuit())?);
    let record = record.elapsed();
    let gpu = args.backend.on.gpu(args.json)?;
    let (params, cached, setup) = cached_params(c.circuit(), c.log_size, args.json, gpu.as_ref(), &shape)?;
    let params = std::sync::Arc::new(params);
    let provers = args.backend.provers(params.clone(), args.json)?;
    let prover = provers[0].clone();
    let backend = provers.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ");
    let in_flight: usize = provers.iter().map(|p| p.in_flight()).sum();
    let options = ProveOptions { verify: !args.no_verify, ..ProveOptions::default() };
    // On the GPU a worker proves on a lane of the VRAM plan, or prepares ahead of the lanes in
    // a spare host set: more workers than that would only queue.
    let workers = match args.backend.workers() {
        kiln_sched::Workers::Fixed(n) if prover.on_gpu() && n > prover.in_flight() => {
            if !args.json {
                eprintln!(
                    "note: {n} workers asked, the VRAM plan granted {} lanes and {} proofs prepare ahead: {} workers",
                    prover.lanes(),
                    prover.in_flight() - prover.lanes(),
                    prover.in_flight()
                );
            }
            kiln_sched::Workers::Fixed(prover.in_flight())
        }
        w => w,
    };
    let defaults = kiln_sched::Config::default();
    let worker_count = match workers {
        kiln_sched::Workers::Fixed(n) => n,
        kiln_sched::Workers::Auto => in_flight.max(1),
    };
    let asked = args.witness_threads.unwrap_or(if args.generic_witness { defaults.cpu_threads } else { 1 });
    let cpu_threads = witness_threads(&shape, asked, defaults.queue_depth + worker_count);
    let config = kiln_sched::Config { workers, options, cpu_threads, ..defaults };
    let host_plan = crate::host_plan::HostPlan {
        params: params.heap_bytes(),
        shape: shape.heap_bytes() as u64,
        pinned: provers.iter().map(|p| p.pinned_host_bytes()).sum(),
        witnesses: config.queue_depth + cpu_threads + worker_count,
        witness_bytes: crate::host_plan::witness_bytes(&shape),
    };
    let scheduler = kiln_sched::Scheduler::new(provers, config)?;
    if !args.json {
        println!(
            "circuit   {} with 2^{} constraints, backend {}, {} witness",
            c.circuit,
            c.log_size,
            backend,
            args.witness_kind()
        );
        println!("shape     recorded in {:.1} ms", ms(record));
        let made = if gpu.is_some() { "set up on the gpu" } else { "set up on the cpu" };
        println!("params    {} in {:.1} ms", if cached { "loaded from cache" } else { made }, ms(setup));
        println!("host      predicted peak {host_plan}");
    }
    let mut seeds = rand::rngs::OsRng;
    for round in 1..=args.repeat {
        let jobs = (0..args.partitions as u64)
            .map(|i| {
                let (r, s) = (Scalar::random(&mut seeds), Scalar::random(&mut seeds));
                args.job(c.circuit_at(i), kiln_sched::Randomness::Given(r, s))
            })
            .collect();
        let report = scheduler.run(shape.clone(), jobs)?;
        let m = report.metrics.clone();
        let proofs = report.into_proofs()?;
        if round == 1 {
            args.save_proofs(&params.vk, &proofs)?;
        }
        if args.json {
            let out = json!({
                "circuit": c.circuit.to_string(),
                "log_size": c.log_size,
                "backend": backend,
                "round": round,
                "record_ms": ms(record),
                "params_ms": ms(setup),
                "params_cached": cached,
                "partitions": proofs.len(),
                "workers": m.workers,
                "cpu_threads": m.cpu_threads,
                "queue_depth": m.queue_depth,
                "wall_ms": ms(m.wall),
                "proofs_per_minute": m.proofs_per_minute(),
                "witness": args.witness_kind(),
                "busy_fraction": m.busy_fraction(),
                "fill_ms": ms(m.fill),
                "device_busy_fraction": m.device_busy_fraction(),
                "device_busy_after_fill": m.device_busy_after_fill(),
                "devices": m.devices.iter().map(|d| json!({
                    "name": d.name,
                    "busy_ms": ms(d.busy),
                    "idle_before_first_ms": d.idle_edges.map(|e| ms(e.before_first)),
                    "idle_after_last_ms": d.idle_edges.map(|e| ms(e.after_last)),
                    "memory_reserved_bytes": d.memory.map(|m| m.end.reserved),
                    "memory_in_use_start_bytes": d.memory.map(|m| m.start.in_use),
                    "memory_in_use_end_bytes": d.memory.map(|m| m.end.in_use),
                    "memory_total_bytes": d.memory.map(|m| m.end.total),
                })).collect::<Vec<_>>(),
                "retired": m.retired,
                "jobs_moved": m.jobs_moved,
                "queue_wait_ms": ms(m.queue_wait),
                "feed_wait_ms": ms(m.feed_wait),
                "backpressure_wait_ms": ms(m.backpressure_wait),
                "starved_wait_ms": ms(m.starved_wait),
                "peak_queue_depth": m.peak_queue_depth,
                "peak_witnesses": m.peak_witnesses,
                "peak_rss_bytes": kiln_cuda::host::peak_resident_bytes(),
                "host_predicted_bytes": host_plan.total(),
                "prove_ms": timings_json(&m.timings),
                "verified": !args.no_verify,
            });
            println!("{out}");
            continue;
        }
        println!("== round {round} of {}", args.repeat);
        println!(
            "batch     {} partitions, {} proving workers, {} CPU threads, queue depth {}",
            proofs.len(),
            m.workers,
            m.cpu_threads,
            m.queue_depth
        );
        println!("wall      {:.1} ms: {:.1} proofs/minute", ms(m.wall), m.proofs_per_minute());
        println!("busy      {:.1}% of the wall time at least one worker was proving", 100.0 * m.busy_fraction());
        for d in &m.devices {
            let after = m.wall.saturating_sub(m.fill);
            println!(
                "device    {} busy {:.1} ms: {:.1}% of the wall time, {:.1}% after the {:.1} ms fill (first witness)",
                d.name,
                ms(d.busy),
                100.0 * d.busy.as_secs_f64() / m.wall.as_secs_f64().max(f64::MIN_POSITIVE),
                100.0 * d.busy.as_secs_f64() / after.as_secs_f64().max(f64::MIN_POSITIVE),
                ms(m.fill)
            );
            if let Some(e) = d.idle_edges {
                println!(
                    "          idle {:.1} ms before its first compute phase, {:.1} ms after its last",
                    ms(e.before_first),
                    ms(e.after_last)
                );
            }
            if let Some(mem) = d.memory {
                let in_use = format!(
                    "{:.2} GiB at the batch's start, {:.2} at its end",
                    gib(mem.start.in_use),
                    gib(mem.end.in_use)
                );
                print_device_memory(mem.end.reserved, &in_use, mem.end.total);
            }
        }
        if !m.retired.is_empty() {
            println!(
                "retired   {} (device lost); {} job(s) moved to the provers left",
                m.retired.join(", "),
                m.jobs_moved
            );
        }
        println!(
            "waits     queue {:.1} ms, backpressure {:.1} ms, workers starved {:.1} ms (summed); peak queue {}, \
             peak witnesses {}",
            ms(m.queue_wait),
            ms(m.backpressure_wait),
            ms(m.starved_wait),
            m.peak_queue_depth,
            m.peak_witnesses
        );
        println!("phases summed over the batch:");
        print_timings(&m.timings);
        println!("verify    {}", if args.no_verify { "skipped (--no-verify)" } else { "every proof VERIFIED" });
        if let Some(rss) = kiln_cuda::host::peak_resident_bytes() {
            println!("memory    peak resident {:.2} GiB (host), predicted {:.2}", gib(rss), gib(host_plan.total()));
        }
    }
    Ok(())
}

fn report(args: &BenchArgs, r: &RunReport, demo: bool) -> CmdResult {
    let t = median_timings(&r.timings);
    let mut walls = r.walls.clone();
    walls.sort();
    let wall = walls[walls.len() / 2];
    let c = &args.circuit;
    if args.json {
        let out = json!({
            "circuit": c.circuit.to_string(),
            "log_size": c.log_size,
            "backend": r.backend,
            "record_ms": r.record_ms,
            "params_cached": r.cached,
            "params_ms": r.params_ms,
            "setup_on": r.setup_on,
            "peak_rss_bytes": r.peak_rss,
            "memory_reserved_bytes": r.device_memory.map(|m| m.reserved),
            "memory_in_use_bytes": r.device_memory.map(|m| m.in_use),
            "memory_total_bytes": r.device_memory.map(|m| m.total),
            "repeats": r.timings.len(),
            "witness": args.witness_kind(),
            "prove_ms": timings_json(&t),
            "wall_ms": ms(wall),
            "wall_min_ms": ms(walls[0]),
            "wall_max_ms": ms(walls[walls.len() - 1]),
            "verify_ms": ms(r.verify),
            "verified": r.verified,
            "proof": hex(&r.proof.to_bytes()),
        });
        println!("{out}");
    } else {
        println!(
            "circuit   {} with 2^{} constraints, backend {}, {} witness",
            c.circuit,
            c.log_size,
            r.backend,
            args.witness_kind()
        );
        println!("shape     recorded in {:.1} ms (constraint matrices, once per run)", r.record_ms);
        if r.cached {
            println!("params    loaded from cache (integrity checked) in {:.1} ms", r.params_ms);
        } else {
            println!("params    set up on the {} in {:.1} ms", r.setup_on, r.params_ms);
        }
        if demo {
            println!("proof     {}", hex(&r.proof.to_bytes()));
        } else {
            println!("median of {} proofs:", r.timings.len());
        }
        print_timings(&t);
        println!(
            "wall      {:.1} ms median (min {:.1}, max {:.1}): circuit to verified proof bytes",
            ms(wall),
            ms(walls[0]),
            ms(walls[walls.len() - 1])
        );
        println!("verify    {:.1} ms: {}", ms(r.verify), if r.verified { "VERIFIED" } else { "FAILED" });
        if let Some(rss) = r.peak_rss {
            println!("memory    peak resident {:.2} GiB (host)", gib(rss));
        }
        if let Some(m) = r.device_memory {
            print_device_memory(m.reserved, &format!("{:.2} GiB after the proofs", gib(m.in_use)), m.total);
        }
    }
    if r.verified { Ok(()) } else { Err(CliError::NotVerified { what: "the proof just made".into() }) }
}
