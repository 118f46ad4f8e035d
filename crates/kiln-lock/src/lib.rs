//! Lock policy for workers sharing a GPU, and the device model it is tested against.
//!
//! See the crate README for the design. In short:
//! - [`LockPolicy`] is a non-blocking state machine; [`Serial`], [`SplitMemoryCompute`]
//!   (ARCHITECTURE.md §1's failed design, kept as a counter-example) and [`Lanes`] (kiln's)
//!   implement it.
//! - [`SharedPolicy`] runs a policy for real threads (Mutex + Condvar) and hands out guards;
//!   device-global operations exist only on [`ExclusiveGuard`].
//! - [`model`] is a deterministic discrete-event model of a device (stream-ordered memory
//!   pool, streams, engines, device-global operations) that runs the *same* policy state
//!   machines over scenarios and reports makespan, GPU busy fraction, peak memory, OOMs and
//!   stalls.
//!
//! ```
//! use kiln_lock::model::{run, Scenario};
//! use kiln_lock::SplitMemoryCompute;
//!
//! let scenario = Scenario::section1(24); // §1: three 12 GiB workers on a 24 GiB card
//! let split = run(&scenario, SplitMemoryCompute::new()).unwrap();
//! let kiln = run(&scenario, scenario.kiln_lanes().unwrap()).unwrap();
//! assert!(split.ooms > 0 && kiln.ooms == 0);
//! ```

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod model;
mod policy;
mod shared;

#[cfg(test)]
mod premise;

pub use policy::{Lanes, LockError, LockPolicy, MemoryStrategy, Section, Serial, SplitMemoryCompute, WorkerId};
pub use shared::{ComputeGuard, DeviceGlobalError, ExclusiveGuard, MemoryGuard, SharedPolicy, default_pool};
