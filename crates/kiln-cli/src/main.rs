//! The `kiln` command.

mod backend;
mod cmds;
mod devices;

use clap::{Parser, Subcommand};

/// kiln: Groth16 over BLS12-381 on NVIDIA GPUs, with a CPU path that works everywhere.
#[derive(Parser)]
#[command(name = "kiln", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List CUDA devices: name, compute capability, SMs, memory, whether kiln's kernels run there.
    Devices(devices::Args),
    /// Random (toxic-waste) setup of a built-in circuit: writes bellperson-format parameters.
    Setup(cmds::SetupArgs),
    /// Prove a built-in circuit with given parameters; writes 192-byte proofs atomically.
    Prove(cmds::ProveArgs),
    /// Verify proofs of a built-in circuit against a parameter file's verifying key.
    Verify(cmds::VerifyArgs),
    /// Time proofs of a built-in circuit (parameters cached), median per phase.
    Bench(cmds::BenchArgs),
    /// The quick tour: cached parameters, a proof on the best backend, verification, timings.
    Demo(cmds::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr, filtered by RUST_LOG (default: warnings only).
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let result: cmds::CmdResult = match cli.command {
        Command::Devices(args) => devices::run(&args).map_err(Into::into),
        Command::Setup(args) => cmds::setup(&args),
        Command::Prove(args) => cmds::prove(&args),
        Command::Verify(args) => cmds::verify(&args),
        Command::Bench(args) => cmds::bench(&args),
        Command::Demo(args) => cmds::demo(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
