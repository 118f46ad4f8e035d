//! kiln's built-in circuits and parameter files, proved by the peers a Filecoin prover would
//! pick instead of kiln: bellperson 0.27 on the CPU, bellperson with its CUDA kernels (feature
//! `cuda`) and supraseal-c2 (feature `supraseal`), every proof checked by kiln's verifier and
//! by bellperson's.
//!
//! - [`peer`]: which peer provers this build holds, loading a parameter file for them, and
//!   one benchmark cell (a batch of proofs, timed over repeats, verified).
//! - [`setup`]: parameter files made exactly as `kiln bench` makes its cached ones.
//! - [`table`]: one table from the JSON lines of `kiln-peers prove` and `kiln bench --json`.
//! - [`gpu_log`]: bellperson's GPU fallback, which it only logs, made visible.

pub mod error;
pub mod gpu_log;
pub mod peer;
pub mod setup;
pub mod table;

pub use error::PeerError;
