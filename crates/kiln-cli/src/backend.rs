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

/// Where a command computes: `--backend` and `--device` (shared by `setup` and the provers).
#[derive(clap::Args, Clone, Debug)]
pub struct DeviceArgs {
    /// Backend: `auto` takes the GPU when one is usable.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// GPU: the CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
}

impl DeviceArgs {
    /// The GPU to use, or `None` for the CPU: `gpu` without a usable GPU is an error, `auto`
    /// falls back to the CPU and says why (unless `quiet`).
    pub fn gpu(&self, quiet: bool) -> Result<Option<Arc<kiln_cuda::Device>>, CliError> {
        let usable = || -> Result<Arc<kiln_cuda::Device>, String> {
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
            Ok(d)
        };
        match self.backend {
            Backend::Cpu => Ok(None),
            Backend::Gpu => usable().map(Some).map_err(|reason| CliError::NoGpu { device: self.device, reason }),
            Backend::Auto => match usable() {
                Ok(d) => Ok(Some(d)),
                Err(e) => {
                    if !quiet {
                        eprintln!("note: running on the CPU ({e})");
                    }
                    Ok(None)
                }
            },
        }
    }
}

/// Prover options shared by `prove`, `bench` and `demo`.
#[derive(clap::Args, Clone, Debug)]
pub struct BackendArgs {
    #[command(flatten)]
    pub on: DeviceArgs,
    /// Workers: on the GPU the lanes wanted of the VRAM plan (it may give fewer; `auto`: 2);
    /// with `bench --partitions` also the orchestrator's proving workers (`auto`: one per
    /// lane granted, 1 on the CPU). `auto` or 1 to 64.
    #[arg(long, default_value = "auto", value_parser = parse_workers)]
    workers: kiln_sched::Workers,
    /// GPU: device memory the plan may use at most, e.g. 24G (default: all that is free;
    /// also KILN_VRAM_BUDGET). A budget below the SRS's size selects the streamed SRS.
    #[arg(long, value_parser = kiln_groth16::parse_bytes)]
    vram_budget: Option<u64>,
    /// GPU: proofs that may do their host work (scalars, a and b) while every lane is busy,
    /// each in page-locked buffers of its own (21 GiB at 2^27); default: one if the host has
    /// room, else none. 0 turns it off.
    #[arg(long)]
    prepare_ahead: Option<usize>,
    /// `bench --partitions`: the GPUs to prove on, `all` or a list such as `0,1` (one prover
    /// each, work spread over their lanes); default: `--device` alone.
    #[arg(long, value_parser = parse_devices)]
    devices: Option<Devices>,
}

/// `--devices`: every GPU, or the listed ordinals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    /// Every CUDA device of the machine.
    All,
    /// These ordinals, in order.
    List(Vec<usize>),
}

/// `all` or a comma-separated list of distinct device ordinals (at most 64).
fn parse_devices(s: &str) -> Result<Devices, String> {
    if s == "all" {
        return Ok(Devices::All);
    }
    let mut list = Vec::new();
    for part in s.split(',') {
        let d: usize = part
            .trim()
            .parse()
            .map_err(|_| format!("{part:?} in {s:?}: expected `all` or device numbers such as 0,1"))?;
        if list.contains(&d) {
            return Err(format!("device {d} is listed twice in {s:?}"));
        }
        if d >= 64 {
            return Err(format!("device {d}: at most 64 devices"));
        }
        list.push(d);
    }
    Ok(Devices::List(list))
}

/// `auto` or 1..=64.
pub fn parse_workers(s: &str) -> Result<kiln_sched::Workers, String> {
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

    /// The proofs this backend works on at once as asked: the CPU prover one, the GPU
    /// prover the lanes `--workers` wants of its plan (the plan may grant fewer).
    pub fn lanes_wanted(&self) -> usize {
        match (self.on.backend, self.workers) {
            (Backend::Cpu, _) => 1,
            (_, kiln_sched::Workers::Fixed(n)) => n,
            (_, kiln_sched::Workers::Auto) => GpuOptions::default().workers,
        }
    }

    /// Builds the prover over `params`. `quiet` silences the note saying which backend runs.
    pub fn prover(&self, params: Arc<Parameters>, quiet: bool) -> Result<Box<dyn Prover + Send + Sync>, CliError> {
        let gpu = self.on.gpu(quiet)?.is_some();
        if !gpu {
            return Ok(Box::new(CpuProver::new(params)));
        }
        Ok(Box::new(self.gpu_prover(params, self.on.device, quiet)?))
    }

    /// The provers of `bench --partitions`: with `--devices`, one GPU prover per listed
    /// device (each with the SRS resident if its plan says so); otherwise [`Self::prover`].
    pub fn provers(&self, params: Arc<Parameters>, quiet: bool) -> Result<Vec<kiln_sched::SharedProver>, CliError> {
        self.check_devices()?;
        let Some(list) = &self.devices else { return Ok(vec![self.prover(params, quiet)?.into()]) };
        let ordinals: Vec<usize> = match list {
            Devices::All => (0..kiln_cuda::device_count()
                .map_err(|e| CliError::NoGpu { device: 0, reason: e.to_string() })?)
                .collect(),
            Devices::List(v) => v.clone(),
        };
        if ordinals.is_empty() {
            return Err(CliError::NoGpu { device: 0, reason: "no CUDA device found (--devices all)".into() });
        }
        let mut out: Vec<kiln_sched::SharedProver> = Vec::with_capacity(ordinals.len());
        for d in ordinals {
            let on = DeviceArgs { backend: Backend::Gpu, device: d };
            on.gpu(quiet)?;
            out.push(Arc::new(self.gpu_prover(params.clone(), d, quiet)?));
        }
        Ok(out)
    }

    /// `--devices` with `--backend cpu` is refused (before any work).
    pub fn check_devices(&self) -> Result<(), CliError> {
        if self.devices.is_some() && self.on.backend == Backend::Cpu {
            return Err(CliError::Unsupported("--devices picks GPUs: it needs --backend gpu or auto".into()));
        }
        Ok(())
    }

    fn gpu_prover(&self, params: Arc<Parameters>, device: usize, quiet: bool) -> Result<GpuProver, CliError> {
        let mut options = GpuOptions::from_env().map_err(CliError::Environment)?;
        options.device = device;
        if let kiln_sched::Workers::Fixed(n) = self.workers {
            options.workers = n;
        }
        if self.vram_budget.is_some() {
            options.vram_budget = self.vram_budget;
        }
        if self.prepare_ahead.is_some() {
            options.prepare_ahead = self.prepare_ahead;
        }
        let prover = GpuProver::new(params, &options)?;
        if !quiet {
            eprintln!(
                "note: proving on GPU {device} ({:?} SRS, {} worker(s), {} proof(s) may prepare ahead in page-locked \
                 host memory of their own)",
                prover.srs_mode(),
                prover.plan().workers,
                prover.in_flight() - prover.lanes()
            );
            eprintln!("{}", prover.plan());
        }
        Ok(prover)
    }
}
