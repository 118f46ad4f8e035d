//! bellperson decides between the GPU and the CPU at run time: when it cannot use the GPU
//! (no device, a kernel that does not load, a lock it cannot take) it logs a warning and proves
//! on the CPU. A benchmark of its CUDA prover must not report those CPU times as GPU times, so
//! this logger keeps the warnings bellperson's GPU module logs; [`take_gpu_warnings`] hands
//! them to the cell, which fails when a GPU prover produced any.

use std::sync::Mutex;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Log targets (module paths) whose warnings mean the GPU was not used: bellperson's GPU
/// locks and kernels, ec-gpu-gen's kernels, rust-gpu-tools' device discovery.
const GPU_TARGETS: &[&str] = &["bellperson::gpu", "ec_gpu_gen", "rust_gpu_tools"];

static GPU_WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let target = record.target();
        if record.level() <= Level::Warn && GPU_TARGETS.iter().any(|t| target.starts_with(t)) {
            let mut kept = GPU_WARNINGS.lock().unwrap_or_else(|e| e.into_inner());
            kept.push(format!("{target}: {}", record.args()));
        }
        eprintln!("[{} {target}] {}", record.level(), record.args());
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Installs the logger (warnings and errors; `verbose`: info too, e.g. bellperson's "GPU
/// Multiexp kernel instantiated!"). A second call changes nothing.
pub fn install(verbose: bool) {
    // Err only when a logger is already installed: then that one stays, and so does its level.
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(if verbose { LevelFilter::Info } else { LevelFilter::Warn });
    }
}

/// The GPU warnings logged since the last call, oldest first, each once (bellperson repeats
/// its fallback warning per kernel it tried), with how often it came when more than once.
pub fn take_gpu_warnings() -> Vec<String> {
    let all = std::mem::take(&mut *GPU_WARNINGS.lock().unwrap_or_else(|e| e.into_inner()));
    let mut unique: Vec<(String, usize)> = Vec::new();
    for w in all {
        match unique.iter_mut().find(|(u, _)| *u == w) {
            Some((_, n)) => *n += 1,
            None => unique.push((w, 1)),
        }
    }
    unique.into_iter().map(|(w, n)| if n > 1 { format!("{w} ({n} times)") } else { w }).collect()
}
