//! `--backend auto|cpu|gpu`: which prover a command builds, and the GPU prover's options.

use std::sync::Arc;

use kiln_groth16::{CpuProver, GpuOptions, GpuProver, Parameters, Prover};

use crate::error::CliError;

/// Which prover to use.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The GPU when one is present and this build's kernels run on it, else the CPU.
    Auto,
    /// The CPU prover (works everywhere).
    Cpu,
    /// The GPU prover; an error when no usable GPU is present.
    Gpu,
}

/// Prover options shared by `prove`, `bench` and `demo`.
#[derive(clap::Args, Clone, Debug)]
pub struct BackendArgs {
    /// Prover backend.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// GPU: the CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Workers: on the GPU the lanes wanted of the VRAM plan (it may give fewer; `auto`: 2);
    /// with `bench --partitions` also the orchestrator's proving workers (`auto`: one per
    /// lane granted, 1 on the CPU). `auto` or 1 to 64.
    #[arg(long, default_value = "auto", value_parser = parse_workers)]
    workers: kiln_sched::Workers,
    /// GPU: device memory the plan may use at most, e.g. 24G (default: all that is free;
    /// also KILN_VRAM_BUDGET). A budget below the SRS's size selects the streamed SRS.
    #[arg(long, value_parser = kiln_groth16::parse_bytes)]
    vram_budget: Option<u64>,
}

/// `auto` or 1..=64.
fn parse_workers(s: &str) -> Result<kiln_sched::Workers, String> {
    if s == "auto" {
        return Ok(kiln_sched::Workers::Auto);
    }
    match s.parse::<usize>() {
        Ok(n @ 1..=64) => Ok(kiln_sched::Workers::Fixed(n)),
        _ => Err(format!("{s:?}: expected `auto` or a number of workers from 1 to 64")),
    }
}

impl BackendArgs {
    /// `--workers` for the orchestrator.
    pub fn workers(&self) -> kiln_sched::Workers {
        self.workers
    }

    /// Builds the prover over `params`. `quiet` silences the note saying which backend runs.
    pub fn prover(&self, params: Arc<Parameters>, quiet: bool) -> Result<Box<dyn Prover + Send + Sync>, CliError> {
        let usable = || -> Result<(), String> {
            let d = kiln_cuda::Device::open(self.device).map_err(|e| e.to_string())?;
            let info = d.info().map_err(|e| e.to_string())?;
            if !kiln_kernels::BUILT {
                return Err(kiln_kernels::NOT_BUILT_HINT.to_string());
            }
            if !info.kernels_supported {
                return Err(format!(
                    "{} (sm_{}{}) is not among this build's architectures",
                    info.name, info.major, info.minor
                ));
            }
            Ok(())
        };
        let gpu = match self.backend {
            Backend::Cpu => false,
            Backend::Gpu => {
                usable().map_err(|reason| CliError::NoGpu { device: self.device, reason })?;
                true
            }
            Backend::Auto => match usable() {
                Ok(()) => true,
                Err(e) => {
                    if !quiet {
                        eprintln!("note: proving on the CPU ({e})");
                    }
                    false
                }
            },
        };
        if !gpu {
            return Ok(Box::new(CpuProver::new(params)));
        }
        let mut options = GpuOptions::from_env().map_err(CliError::Environment)?;
        options.device = self.device;
        if let kiln_sched::Workers::Fixed(n) = self.workers {
            options.workers = n;
        }
        if self.vram_budget.is_some() {
            options.vram_budget = self.vram_budget;
        }
        let prover = GpuProver::new(params, &options)?;
        if !quiet {
            eprintln!(
                "note: proving on GPU {} ({:?} SRS, {} worker(s))",
                self.device,
                prover.srs_mode(),
                prover.plan().workers
            );
        }
        Ok(Box::new(prover))
    }
}
