//! [`Shape`]: the recorded R1CS of one circuit shape, and its evaluation at a witness.

use bellpepper_core::Circuit;
use blstrs::Scalar;
use ff::Field;
use kiln_msm::Density;
use rayon::prelude::*;

use super::matrix::{ROWS_PER_BLOCK, SparseMatrix};
use super::witness::Witness;
use crate::error::Groth16Error;
use crate::synth::Assignment;

/// The R1CS of one circuit shape, recorded once ([`Shape::record`]) and evaluated per proof.
///
/// A, B, C are over z = (inputs, aux), one row per constraint, bellperson's trailing input
/// constraints `input_i · 0 = 0` included, so that [`Shape::evaluate`] of a circuit's
/// [`Witness`] equals [`crate::synth::synthesize`] of it exactly. The densities are
/// properties of the matrices alone (bellperson marks a variable wherever it has a non-zero
/// coefficient), so they are recorded here too.
#[derive(Clone, PartialEq)]
pub struct Shape {
    pub(crate) num_inputs: usize,
    pub(crate) num_aux: usize,
    pub(crate) num_constraints: usize,
    pub(crate) a: SparseMatrix,
    pub(crate) b: SparseMatrix,
    pub(crate) c: SparseMatrix,
    /// Distinct non-ONE coefficients; entries 0 and 1 are −1 and 2.
    pub(crate) coeffs: Vec<Scalar>,
    pub(crate) a_aux_density: Density,
    pub(crate) b_input_density: Density,
    pub(crate) b_aux_density: Density,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shape")
            .field("num_inputs", &self.num_inputs)
            .field("num_aux", &self.num_aux)
            .field("num_constraints", &self.num_constraints)
            .field("a", &self.a)
            .field("b", &self.b)
            .field("c", &self.c)
            .field("coeffs", &self.coeffs.len())
            .field("heap_bytes", &self.heap_bytes())
            .finish()
    }
}

impl Shape {
    /// Public inputs, ONE included.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Auxiliary variables.
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Constraints, the trailing input constraints included (= rows of A, B, C).
    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    /// Matrix A (rows: constraints, columns: z = (inputs, aux)).
    pub fn a(&self) -> &SparseMatrix {
        &self.a
    }

    /// Matrix B.
    pub fn b(&self) -> &SparseMatrix {
        &self.b
    }

    /// Matrix C.
    pub fn c(&self) -> &SparseMatrix {
        &self.c
    }

    /// The coefficient table the matrices' coefficient codes index (0 is −1, 1 is 2).
    pub fn coefficients(&self) -> &[Scalar] {
        &self.coeffs
    }

    /// Aux variables that appear in some A with a non-zero coefficient.
    pub fn a_aux_density(&self) -> &Density {
        &self.a_aux_density
    }

    /// Inputs that appear in some B with a non-zero coefficient.
    pub fn b_input_density(&self) -> &Density {
        &self.b_input_density
    }

    /// Aux variables that appear in some B with a non-zero coefficient.
    pub fn b_aux_density(&self) -> &Density {
        &self.b_aux_density
    }

    /// Heap bytes the shape holds (matrices, coefficient table, densities).
    pub fn heap_bytes(&self) -> usize {
        let density = |d: &Density| size_of_val(d.words());
        self.a.heap_bytes()
            + self.b.heap_bytes()
            + self.c.heap_bytes()
            + self.coeffs.capacity() * size_of::<Scalar>()
            + density(&self.a_aux_density)
            + density(&self.b_input_density)
            + density(&self.b_aux_density)
    }

    /// Runs `circuit` for its witness alone (constraints skipped) and checks that it has
    /// this shape's numbers of inputs and aux variables ([`Groth16Error::ShapeMismatch`]).
    pub fn witness<C: Circuit<Scalar>>(&self, circuit: C) -> Result<Witness, Groth16Error> {
        let w = Witness::generate_in(circuit, Vec::with_capacity(self.num_inputs), Vec::with_capacity(self.num_aux))?;
        self.check_witness(&w.input, &w.aux)?;
        Ok(w)
    }

    /// [`Shape::witness`] into `witness`, reusing its vectors' memory (fresh memory costs
    /// page faults: ~10 ms per 32 MiB, a third of the per-proof time at 2^20).
    pub fn witness_into<C: Circuit<Scalar>>(&self, circuit: C, witness: &mut Witness) -> Result<(), Groth16Error> {
        let mut input = std::mem::take(&mut witness.input);
        let mut aux = std::mem::take(&mut witness.aux);
        input.clear();
        aux.clear();
        input.reserve(self.num_inputs);
        aux.reserve(self.num_aux);
        *witness = Witness::generate_in(circuit, input, aux)?;
        self.check_witness(&witness.input, &witness.aux)
    }

    /// a, b, c = A·z, B·z, C·z for z = (`input`, `aux`), in parallel, into the caller's
    /// slices, each exactly [`Shape::num_constraints`] long.
    ///
    /// Only the counts are checked ([`Groth16Error::ShapeMismatch`]): a witness of another
    /// circuit with the same counts evaluates to garbage (caught by a satisfaction check).
    pub fn evaluate_into(
        &self,
        input: &[Scalar],
        aux: &[Scalar],
        a: &mut [Scalar],
        b: &mut [Scalar],
        c: &mut [Scalar],
    ) -> Result<(), Groth16Error> {
        self.evaluate_rows(input, aux, a, b, Some(c))
    }

    /// a and b alone, as [`Shape::evaluate_into`] computes them: for a GPU prover's pinned
    /// buffers, which forms c = a∘b on the device (c for a satisfied constraint system).
    pub fn evaluate_ab_into(
        &self,
        input: &[Scalar],
        aux: &[Scalar],
        a: &mut [Scalar],
        b: &mut [Scalar],
    ) -> Result<(), Groth16Error> {
        self.evaluate_rows(input, aux, a, b, None)
    }

    fn evaluate_rows(
        &self,
        input: &[Scalar],
        aux: &[Scalar],
        a: &mut [Scalar],
        b: &mut [Scalar],
        c: Option<&mut [Scalar]>,
    ) -> Result<(), Groth16Error> {
        self.check_witness(input, aux)?;
        let c_len = c.as_ref().map_or(self.num_constraints, |c| c.len());
        for (what, len) in [("output a length", a.len()), ("output b length", b.len()), ("output c length", c_len)] {
            check(what, len, self.num_constraints)?;
        }
        // One task per block of rows, all matrices: the rows of A, B and C of one constraint
        // touch the same variables, so z stays in cache across them.
        let mut c_blocks: Vec<Option<&mut [Scalar]>> = match c {
            Some(c) => c.chunks_mut(ROWS_PER_BLOCK).map(Some).collect(),
            None => (0..a.len().div_ceil(ROWS_PER_BLOCK)).map(|_| None).collect(),
        };
        a.par_chunks_mut(ROWS_PER_BLOCK)
            .zip(b.par_chunks_mut(ROWS_PER_BLOCK))
            .zip(c_blocks.par_iter_mut())
            .enumerate()
            .for_each(|(block, ((a, b), c))| {
                self.a.eval_block(block, input, aux, &self.coeffs, a);
                self.b.eval_block(block, input, aux, &self.coeffs, b);
                if let Some(c) = c {
                    self.c.eval_block(block, input, aux, &self.coeffs, c);
                }
            });
        Ok(())
    }

    /// The full [`Assignment`] of `witness`: equal to what [`crate::synth::synthesize`]
    /// returns for the circuit the witness came from.
    pub fn evaluate(&self, witness: Witness) -> Result<Assignment, Groth16Error> {
        self.check_witness(&witness.input, &witness.aux)?;
        // Zero-filled in parallel: the page faults of fresh memory are spread over the cores.
        let zeros = || {
            let mut v = Vec::with_capacity(self.num_constraints);
            v.par_extend(rayon::iter::repeat_n(Scalar::ZERO, self.num_constraints));
            v
        };
        let (mut a, mut b, mut c) = (zeros(), zeros(), zeros());
        self.evaluate_into(&witness.input, &witness.aux, &mut a, &mut b, &mut c)?;
        Ok(Assignment {
            a,
            b,
            c,
            input: witness.input,
            aux: witness.aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        })
    }

    /// [`Shape::witness`] then [`Shape::evaluate`]: the drop-in, faster replacement of
    /// [`crate::synth::synthesize`] for circuits of this shape.
    pub fn synthesize<C: Circuit<Scalar>>(&self, circuit: C) -> Result<Assignment, Groth16Error> {
        self.evaluate(self.witness(circuit)?)
    }

    pub(crate) fn check_witness(&self, input: &[Scalar], aux: &[Scalar]) -> Result<(), Groth16Error> {
        check("number of public inputs (ONE included)", input.len(), self.num_inputs)?;
        check("number of aux variables", aux.len(), self.num_aux)
    }
}

fn check(what: &'static str, got: usize, expected: usize) -> Result<(), Groth16Error> {
    if got == expected { Ok(()) } else { Err(Groth16Error::ShapeMismatch { what, got, expected }) }
}
