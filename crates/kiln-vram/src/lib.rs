//! VRAM budget: resident SRS, per-worker arenas, the plan that picks the fallback path.
//!
//! ARCHITECTURE.md §1: decide VRAM once, up front. At start-up, with the device held
//! exclusively ([`kiln_lock::ExclusiveGuard`]):
//! 1. [`measure_free`] drains the device, trims the pool and reads `cuMemGetInfo`;
//! 2. [`Plan::new`] decides how many workers fit and whether the SRS is resident or
//!    streamed from host memory (the planned fallback), and prints why;
//! 3. [`Vram::provision`] makes one allocation for the SRS (if resident) and one [`Arena`]
//!    per worker; workers then sub-allocate [`Reservation`]s by offset, with no driver call.
//!
//! Releasing ([`Vram::release`]) or re-planning takes the device exclusively again.
//! Nothing here allocates, frees or trims on the proving hot path.
//!
//! ```
//! use kiln_vram::{Plan, PlanInput, SrsPlacement};
//! const GIB: u64 = 1 << 30;
//! let plan = Plan::new(PlanInput {
//!     device: "NVIDIA H200".into(),
//!     free_bytes: 139 * GIB,
//!     margin_bytes: 2 * GIB,
//!     srs_bytes: 45 * GIB,
//!     worker_bytes: 16 * GIB,
//!     pieced_worker_bytes: None,
//!     streamed_worker_bytes: 17 * GIB,
//!     workers_wanted: 8,
//! })
//! .unwrap();
//! assert_eq!(plan.srs, SrsPlacement::Resident);
//! assert_eq!(plan.workers, 5); // 8 asked, 5 fit: a smaller plan, not an out-of-memory
//! println!("{plan}");
//! ```

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod arena;
mod plan;

pub use arena::{ALIGN, Arena, Reservation};
pub use plan::{Plan, PlanError, PlanInput, SrsPlacement};

use kiln_cuda::{CudaError, Device};
use kiln_lock::{DeviceGlobalError, ExclusiveGuard, LockPolicy};

/// Everything that can go wrong in kiln-vram. Each variant says what to do.
#[derive(Debug, thiserror::Error)]
pub enum VramError {
    /// No plan fits.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A driver call failed.
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// A device-global call was refused or failed.
    #[error(transparent)]
    DeviceGlobal(#[from] DeviceGlobalError),
    /// An arena's allocation failed (the plan was made from a stale measurement?).
    #[error("allocating arena {arena} of {bytes} B failed: {source} (re-measure and re-plan under exclusive access)")]
    Allocate {
        /// The arena.
        arena: String,
        /// Its size.
        bytes: u64,
        /// The driver's answer.
        source: DeviceGlobalError,
    },
    /// Freeing an arena failed.
    #[error("releasing arena {arena} failed: {source}")]
    Release {
        /// The arena.
        arena: String,
        /// The driver's answer.
        source: DeviceGlobalError,
    },
    /// A reservation does not fit in what the arena has left.
    #[error(
        "arena {arena} ({size} B) cannot reserve {asked} B: the largest free range is {largest_free} B \
         (the per-worker byte count given to the plan is too small)"
    )]
    ArenaFull {
        /// The arena.
        arena: String,
        /// Bytes asked.
        asked: u64,
        /// Largest free range.
        largest_free: u64,
        /// Arena size.
        size: u64,
    },
    /// An arena was released while reservations of it were alive.
    #[error("arena {arena} still has {live} live reservation(s): drop them before releasing it")]
    StillReserved {
        /// The arena.
        arena: String,
        /// How many.
        live: usize,
    },
    /// A size that does not fit in the address space.
    #[error("{bytes} B does not fit in this machine's address space")]
    TooLarge {
        /// The size.
        bytes: u64,
    },
    /// A copy longer than its reservation.
    #[error("copy of {len} values into a reservation of {capacity}")]
    CopyTooLong {
        /// Values copied.
        len: usize,
        /// Values reserved.
        capacity: usize,
    },
}

/// Free device memory as a plan should see it: device drained, pool trimmed to zero
/// (completed frees returned), then `cuMemGetInfo`. Device-global, hence the guard.
pub fn measure_free<P: LockPolicy>(excl: &ExclusiveGuard<P>, device: &Device) -> Result<u64, VramError> {
    excl.synchronize(device)?;
    excl.trim_default_pool(device, 0)?;
    Ok(device.mem_info()?.0 as u64)
}

/// A provisioned plan: the resident SRS allocation (if any) and one arena per worker.
#[derive(Debug)]
pub struct Vram {
    plan: Plan,
    srs: Option<Arena>,
    arenas: Vec<Arena>,
}

impl Vram {
    /// Allocates what `plan` says, once: the SRS (if resident) and `plan.workers` arenas.
    /// On failure, frees what it had allocated and returns the error (never half a plan).
    pub fn provision<P: LockPolicy>(excl: &ExclusiveGuard<P>, device: &Device, plan: Plan) -> Result<Vram, VramError> {
        let mut made: Vec<Arena> = Vec::new();
        let mut build = || -> Result<(), VramError> {
            if plan.srs == SrsPlacement::Resident {
                made.push(Arena::allocate(excl, device, "srs", plan.input.srs_bytes)?);
            }
            for w in 0..plan.workers {
                made.push(Arena::allocate(excl, device, format!("worker {w}"), plan.arena_bytes)?);
            }
            Ok(())
        };
        if let Err(e) = build() {
            for a in made {
                let _ = a.release(excl, device);
            }
            return Err(e);
        }
        let srs = if plan.srs == SrsPlacement::Resident { Some(made.remove(0)) } else { None };
        Ok(Vram { plan, srs, arenas: made })
    }

    /// The plan this was provisioned from.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The resident SRS allocation (sub-allocate h, l, a, b_g1, b_g2 from it), if resident.
    pub fn srs(&self) -> Option<&Arena> {
        self.srs.as_ref()
    }

    /// Worker `w`'s arena (its lane, under [`kiln_lock::Lanes`]).
    pub fn arena(&self, w: usize) -> Option<&Arena> {
        self.arenas.get(w)
    }

    /// All worker arenas.
    pub fn arenas(&self) -> &[Arena] {
        &self.arenas
    }

    /// Frees everything (device-global). Refused while any reservation is alive.
    pub fn release<P: LockPolicy>(self, excl: &ExclusiveGuard<P>, device: &Device) -> Result<(), VramError> {
        let mut first_err = None;
        for a in self.srs.into_iter().chain(self.arenas) {
            if let Err(e) = a.release(excl, device) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod gpu_tests;
