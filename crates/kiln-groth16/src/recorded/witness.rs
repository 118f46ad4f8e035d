//! Witness-only synthesis: the circuit's value closures, and nothing else.
//!
//! Building and evaluating the linear combinations of every constraint is where
//! `synth::synthesize` spends its time (a few heap allocations and a sorted insert per
//! term); with the matrices recorded once in a [`super::Shape`], a proof only needs the
//! assignment. This constraint system drops the `enforce` closures uncalled.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;

use crate::error::Groth16Error;
use crate::synth::run_framed;

/// A circuit's assignment: z = (input, aux), as `synth::synthesize` would compute it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Witness {
    /// Public inputs, ONE first.
    pub input: Vec<Scalar>,
    /// Auxiliary (private) variables.
    pub aux: Vec<Scalar>,
}

impl Witness {
    /// Runs `circuit` for its assignment only (its constraints are not looked at).
    pub fn generate<C: Circuit<Scalar>>(circuit: C) -> Result<Witness, Groth16Error> {
        Self::generate_in(circuit, Vec::new(), Vec::new())
    }

    /// [`Witness::generate`] appending to the given (empty) vectors, so that a caller that
    /// knows the counts (from a recorded shape) or reuses the vectors never reallocates.
    pub(crate) fn generate_in<C: Circuit<Scalar>>(
        circuit: C,
        input: Vec<Scalar>,
        aux: Vec<Scalar>,
    ) -> Result<Witness, Groth16Error> {
        debug_assert!(input.is_empty() && aux.is_empty());
        let mut cs = WitnessCs(Witness { input, aux });
        // The trailing input constraints are no-ops here; framed all the same so that the
        // numbering is the recorder's by construction.
        run_framed(circuit, &mut cs, |cs| cs.0.input.len())?;
        Ok(cs.0)
    }
}

/// The witness-only constraint system.
struct WitnessCs(Witness);

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.0.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.0.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        // The point of this constraint system: the matrices are in the recorded shape.
    }

    crate::synth::ignore_namespaces!();
}
