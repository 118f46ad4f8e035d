//! Progress reporting for long steps (setup, proving), decoupled from any terminal library.

/// Receives progress of a long step. Implementations must be cheap and thread-safe: `inc`
/// is called from worker threads.
pub trait Progress: Sync {
    /// A step named `phase` starts, with `total` units of work.
    fn start(&self, phase: &str, total: u64);
    /// `n` more units are done.
    fn inc(&self, n: u64);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: u64) {}
    fn inc(&self, _: u64) {}
}
