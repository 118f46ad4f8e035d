//! `kiln-peers`: kiln's built-in circuits proved by bellperson 0.27 (CPU, CUDA) and
//! supraseal-c2 on kiln's parameter files, one JSON line per benchmark cell.
//!
//! ```text
//! kiln-peers setup --circuit porep --log-size 12 --out porep-12.params
//! kiln-peers prove --prover bellperson-cpu --params porep-12.params --circuit porep --log-size 12 --batch 10
//! kiln-peers table results.jsonl          # with `kiln bench --json` lines: one Markdown table
//! kiln-peers provers                      # the peers this build holds
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kiln_groth16::circuits::Kind;
use kiln_peers::peer::{CellSpec, Loaded, Prover, run_cell};
use kiln_peers::setup::KILN_BENCH_SETUP_SEED;
use kiln_peers::table::Results;
use kiln_peers::{PeerError, gpu_log};

/// kiln's circuits and parameter files proved by bellperson 0.27 (CPU, CUDA) and supraseal-c2.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write parameters for a built-in circuit as `kiln bench` caches them (CPU setup).
    Setup {
        #[command(flatten)]
        circuit: CircuitArgs,
        /// Where to write them (bellperson's format).
        #[arg(long)]
        out: PathBuf,
        /// Toxic-waste seed (default: `kiln bench`'s, so the file equals kiln's cached one).
        #[arg(long, default_value_t = KILN_BENCH_SETUP_SEED)]
        setup_seed: u64,
    },
    /// Time a peer prover on a batch of circuits and print one JSON line.
    Prove {
        /// The peer prover.
        #[arg(long, value_enum)]
        prover: Prover,
        /// Parameter file (bellperson's format, e.g. from `kiln setup`).
        #[arg(long)]
        params: PathBuf,
        #[command(flatten)]
        circuit: CircuitArgs,
        /// Proofs per run (one `create_random_proof_batch` call), 1 to 1000.
        #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
        batch: usize,
        /// Timed runs (the median is reported), 1 to 1000.
        #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
        repeat: usize,
        /// Seed of the first circuit's witness (circuit i of a batch: seed + i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Show bellperson's info log (e.g. which GPU kernels it instantiated) on stderr.
        #[arg(long)]
        verbose: bool,
    },
    /// One Markdown table from result files (JSON lines of `kiln-peers prove` and `kiln bench --json`).
    Table {
        /// Result files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// The peer provers this build holds, one per line.
    Provers,
}

#[derive(clap::Args)]
struct CircuitArgs {
    /// Built-in circuit: mimc, squaring or porep.
    #[arg(long, default_value = "porep")]
    circuit: Kind,
    /// log2 of the constraint count (the circuit fills a domain of 2^log_size).
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(4..=28))]
    log_size: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Prove { prover, .. } = &cli.command
        && let Err(e) = gpu_switch(*prover)
    {
        eprintln!("kiln-peers: {e}");
        return ExitCode::FAILURE;
    }
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiln-peers: {e}");
            ExitCode::FAILURE
        }
    }
}

/// bellperson reads BELLMAN_NO_GPU on every GPU call: set it for the CPU prover (a `cuda`
/// build would use the GPU otherwise), refuse it for a GPU prover.
fn gpu_switch(prover: Prover) -> Result<(), PeerError> {
    if prover.on_gpu() {
        return match std::env::var("BELLMAN_NO_GPU") {
            Ok(value) if value != "0" => Err(PeerError::GpuDisabledByEnv { prover, value }),
            _ => Ok(()),
        };
    }
    // SAFETY: called from main before any thread is started (clap parses on this thread; the
    // rayon and bellperson pools start later), so nothing reads the environment concurrently.
    unsafe { std::env::set_var("BELLMAN_NO_GPU", "1") };
    Ok(())
}

fn run(command: Command) -> Result<(), PeerError> {
    match command {
        Command::Setup { circuit, out, setup_seed } => {
            let start = std::time::Instant::now();
            let params = kiln_peers::setup::write(circuit.circuit, circuit.log_size, setup_seed, &out)?;
            let line = serde_json::json!({
                "setup": circuit.circuit.name(),
                "log_size": circuit.log_size,
                "out": out.display().to_string(),
                "bytes": params.file_size(),
                "ms": start.elapsed().as_secs_f64() * 1e3,
            });
            println!("{line}");
            Ok(())
        }
        Command::Prove { prover, params, circuit, batch, repeat, seed, verbose } => {
            gpu_log::install(verbose);
            let loaded = Loaded::read(prover, &params)?;
            let spec = CellSpec { kind: circuit.circuit, log_size: circuit.log_size, batch, repeat, seed };
            let cell = run_cell(&loaded, spec)?;
            println!("{}", serde_json::to_string(&cell).expect("a cell serialises"));
            Ok(())
        }
        Command::Table { files } => {
            let mut results = Results::default();
            for f in &files {
                results.add_file(f)?;
            }
            print!("{}", results.markdown());
            Ok(())
        }
        Command::Provers => {
            for p in Prover::built() {
                println!("{p}");
            }
            Ok(())
        }
    }
}
