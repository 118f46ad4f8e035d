//! The `kiln` command.

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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices(args) => devices::run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
