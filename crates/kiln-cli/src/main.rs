//! The `kiln` command.

mod backend;
mod cmds;
mod devices;
mod error;
mod host_plan;
mod service;

use std::io::IsTerminal;

use clap::{Parser, Subcommand};

use crate::error::CliError;

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
    /// Run the proving service: jobs over gRPC (unix socket, or TCP with a token), kept in an
    /// SQLite file, proved by priority; stops on SIGINT/SIGTERM.
    Serve(service::ServeArgs),
    /// Submit a job to a running service (built-in circuits: size and seed).
    Submit(service::SubmitArgs),
    /// A job's status (and its proof once done).
    Status(service::JobArgs),
    /// Cancel a queued job.
    Cancel(service::JobArgs),
    /// The service's metrics (Prometheus text).
    Metrics(service::MetricsArgs),
}

impl Command {
    /// Whether `--json` was given: errors are then JSON as well.
    fn json(&self) -> bool {
        match self {
            Command::Devices(a) => a.json,
            Command::Setup(a) => a.json,
            Command::Prove(a) => a.json,
            Command::Verify(a) => a.json,
            Command::Bench(a) | Command::Demo(a) => a.json,
            Command::Serve(_) => false,
            Command::Submit(a) => a.json,
            Command::Status(a) | Command::Cancel(a) => a.json,
            Command::Metrics(a) => a.json,
        }
    }
}

/// Exit status of a command-line usage error (clap's).
const USAGE_EXIT: u8 = 2;

fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    // Logs go to stderr, filtered by RUST_LOG (default: warnings only); colour only for a
    // terminal, and never with NO_COLOR set (https://no-color.org).
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .init();
    let json = cli.command.json();
    let result: Result<(), CliError> = match cli.command {
        Command::Devices(args) => devices::run(&args).map_err(Into::into),
        Command::Setup(args) => cmds::setup(&args),
        Command::Prove(args) => cmds::prove(&args),
        Command::Verify(args) => cmds::verify(&args),
        Command::Bench(args) => cmds::bench(&args),
        Command::Demo(args) => cmds::demo(&args),
        Command::Serve(args) => service::serve(&args),
        Command::Submit(args) => service::submit(&args),
        Command::Status(args) => service::status(&args),
        Command::Cancel(args) => service::cancel(&args),
        Command::Metrics(args) => service::metrics(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // With --json the error goes where the result would have gone: one JSON object
            // on stdout, so that a caller parses one stream whatever happened.
            if json {
                println!("{}", e.to_json());
            } else {
                eprintln!("error: {e}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}

/// A clap error: help and version print as usual; a usage error is JSON when `--json` is
/// among the arguments (the command line did not parse, so that is all there is to go by).
fn usage_error(e: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    let is_usage = !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if is_usage && std::env::args_os().skip(1).any(|a| a == "--json") {
        let message = e.render().to_string();
        let message = message.trim().trim_start_matches("error: ");
        println!("{}", error::error_json(message, "usage"));
        return std::process::ExitCode::from(USAGE_EXIT);
    }
    e.exit()
}
