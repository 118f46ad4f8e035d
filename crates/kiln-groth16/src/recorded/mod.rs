//! Recorded synthesis: the constraint matrices once per circuit shape, the witness per proof.
//!
//! [`crate::synth::synthesize`] builds and evaluates every linear combination of every
//! constraint on every proof; for porep at 2^20 that alone takes longer than a whole GPU
//! proof. But A, B, C (and the densities) are the same for every proof of one circuit
//! shape. So:
//!
//! 1. once: [`Shape::record`] runs the circuit in setup mode and keeps A, B, C in a
//!    compact row-compressed form ([`SparseMatrix`]: ~4 bytes per term with coefficient
//!    ONE, 8 otherwise, no per-row pointer), with the densities and counts;
//! 2. per proof: [`Shape::witness`] runs the circuit's value closures only (the
//!    `enforce` closures are not called), giving z = (inputs, aux);
//! 3. per proof: [`Shape::evaluate_into`] computes a, b, c = A·z, B·z, C·z as parallel
//!    sparse matrix–vector products straight into the caller's buffers (pinned host
//!    memory for a GPU prover), or [`Shape::evaluate`] returns the [`crate::synth::Assignment`]
//!    that `synthesize` would have.
//!
//! ```
//! use kiln_groth16::circuits::{Builtin, Kind};
//! use kiln_groth16::recorded::Shape;
//!
//! let shape = Shape::record(Builtin::new(Kind::Porep, 1 << 10, 0)).unwrap();
//! for seed in 1..3 {
//!     let circuit = Builtin::new(Kind::Porep, 1 << 10, seed);
//!     let fast = shape.synthesize(circuit).unwrap();
//!     assert_eq!(fast, kiln_groth16::synth::synthesize(circuit).unwrap());
//! }
//! ```
//!
//! A shape fits only circuits whose constraints do not depend on the witness (true of
//! bellpepper circuits in general and of all built-ins). Only the numbers of inputs and aux
//! variables are checked per proof; a witness of another circuit with the same counts
//! gives a, b, c that do not satisfy a·b = c (`ProveOptions::check_satisfied` finds it).

mod matrix;
mod record;
mod shape;
mod witness;

pub use matrix::SparseMatrix;
pub use shape::Shape;
pub use witness::Witness;

#[cfg(test)]
mod tests;
