//! Recording: one run of a circuit in setup mode into a [`Shape`].
//!
//! The recorder mirrors [`crate::synth::synthesize`] term for term: ONE is input 0, terms
//! with a zero coefficient are dropped (they add nothing to ⟨row, z⟩ and `synth::eval`
//! marks no density for them), densities are marked exactly where `synth::eval` marks them
//! (A over aux, B over inputs and aux), and the trailing `input_i · 0 = 0` constraints are
//! appended after the circuit. Value closures are never called, so a circuit without a
//! witness (as at setup) records too.

use std::collections::HashMap;

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::{Field, PrimeField};
use kiln_msm::Density;

use super::matrix::{CODE_MINUS_ONE, CODE_TWO, MAX_VARIABLES, SparseMatrix, Term};
use super::shape::Shape;
use crate::error::Groth16Error;
use crate::synth::run_framed;

/// Coefficient codes are u32 (limit checked).
const MAX_COEFFS: usize = u32::MAX as usize;

/// The coefficient table being built: codes 0 and 1 are −1 and 2, then each distinct
/// non-ONE coefficient once, in order of first use.
struct CoeffTable {
    values: Vec<Scalar>,
    codes: HashMap<[u8; 32], u32>,
}

impl CoeffTable {
    fn new() -> Self {
        let values = vec![-Scalar::ONE, Scalar::from(2u64)];
        debug_assert_eq!(values[CODE_MINUS_ONE as usize], -Scalar::ONE);
        debug_assert_eq!(values[CODE_TWO as usize], Scalar::from(2u64));
        let codes = values.iter().enumerate().map(|(k, v)| (v.to_repr(), k as u32)).collect();
        CoeffTable { values, codes }
    }

    /// `None` for ONE (the implicit coefficient), else the code of `coeff`.
    fn code(&mut self, coeff: &Scalar) -> Result<Option<u32>, Groth16Error> {
        if *coeff == Scalar::ONE {
            return Ok(None);
        }
        let repr = coeff.to_repr();
        if let Some(&code) = self.codes.get(&repr) {
            return Ok(Some(code));
        }
        if self.values.len() >= MAX_COEFFS {
            return Err(Groth16Error::ShapeLimit {
                what: "distinct coefficients",
                count: self.values.len() + 1,
                limit: MAX_COEFFS,
            });
        }
        let code = self.values.len() as u32;
        self.values.push(*coeff);
        self.codes.insert(repr, code);
        Ok(Some(code))
    }
}

/// The recording constraint system.
struct Recorder {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    a: SparseMatrix,
    b: SparseMatrix,
    c: SparseMatrix,
    coeffs: CoeffTable,
    a_aux: Vec<bool>,
    b_input: Vec<bool>,
    b_aux: Vec<bool>,
    /// The terms of the row being recorded (reused to avoid an allocation per row).
    scratch: Vec<Term>,
    /// The first fault; once set, the recorder stops recording and `record` returns it
    /// (enforce cannot return an error, and alloc's error type is the circuit's).
    fault: Option<Groth16Error>,
}

/// Which density trackers a matrix marks (those of `synth::synthesize`).
#[derive(Clone, Copy)]
enum Track {
    AAux,
    BInputAux,
    Nothing,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            num_inputs: 0,
            num_aux: 0,
            num_constraints: 0,
            a: SparseMatrix::default(),
            b: SparseMatrix::default(),
            c: SparseMatrix::default(),
            coeffs: CoeffTable::new(),
            a_aux: Vec::new(),
            b_input: Vec::new(),
            b_aux: Vec::new(),
            scratch: Vec::new(),
            fault: None,
        }
    }

    /// Room for one more variable under the encoding's limit.
    fn check_room(&mut self) -> Result<(), SynthesisError> {
        let count = self.num_inputs + self.num_aux + 1;
        if count > MAX_VARIABLES {
            self.fault =
                Some(Groth16Error::ShapeLimit { what: "variables (inputs + aux)", count, limit: MAX_VARIABLES });
            // Any error stops the circuit; `record` reports the fault instead of it.
            return Err(SynthesisError::Unsatisfiable);
        }
        Ok(())
    }

    /// Records one row of one matrix; `Err` is the fault to keep.
    fn row(&mut self, lc: &LinearCombination<Scalar>, which: usize, track: Track) -> Result<(), Groth16Error> {
        let j = self.num_constraints;
        let mut terms = std::mem::take(&mut self.scratch);
        terms.clear();
        for (&i, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            if i >= self.num_inputs {
                return Err(unallocated(j, "input", i, self.num_inputs));
            }
            if let Track::BInputAux = track {
                self.b_input[i] = true;
            }
            // Provisional index of input i (see SparseMatrix::push_row).
            terms.push(((MAX_VARIABLES - 1 - i) as u32, self.coeffs.code(coeff)?));
        }
        for (&i, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            if i >= self.num_aux {
                return Err(unallocated(j, "aux", i, self.num_aux));
            }
            match track {
                Track::AAux => self.a_aux[i] = true,
                Track::BInputAux => self.b_aux[i] = true,
                Track::Nothing => {}
            }
            terms.push((i as u32, self.coeffs.code(coeff)?));
        }
        match which {
            0 => self.a.push_row(&terms),
            1 => self.b.push_row(&terms),
            _ => self.c.push_row(&terms),
        }
        self.scratch = terms;
        Ok(())
    }
}

fn unallocated(constraint: usize, kind: &'static str, index: usize, allocated: usize) -> Groth16Error {
    Groth16Error::UnallocatedVariable { constraint, kind, index, allocated }
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.check_room()?;
        self.num_aux += 1;
        self.a_aux.push(false);
        self.b_aux.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.check_room()?;
        self.num_inputs += 1;
        self.b_input.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        if self.fault.is_some() {
            return;
        }
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        // Inputs are fully dense in A because of the input constraints: no input tracker
        // (as in synth::synthesize).
        let recorded = self
            .row(&a, 0, Track::AAux)
            .and_then(|()| self.row(&b, 1, Track::BInputAux))
            .and_then(|()| self.row(&c, 2, Track::Nothing));
        match recorded {
            Ok(()) => self.num_constraints += 1,
            Err(fault) => self.fault = Some(fault),
        }
    }

    crate::synth::ignore_namespaces!();
}

impl Shape {
    /// Records the R1CS of `circuit` (its shape: matrices, densities, counts) from one run in
    /// setup mode: value closures are not called, so any instance of the shape will do,
    /// with or without a witness.
    ///
    /// Errors: the circuit's own synthesis error; [`Groth16Error::UnallocatedVariable`] for a
    /// constraint naming a variable not allocated yet (where `synth::synthesize` would
    /// panic); [`Groth16Error::ShapeLimit`] beyond 2^30 − 1 variables or 2^32 − 1 distinct
    /// coefficients.
    pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Shape, Groth16Error> {
        let mut cs = Recorder::new();
        let ran = run_framed(circuit, &mut cs, |cs| cs.num_inputs);
        // A fault explains a circuit error that follows from it (check_room's), so it wins.
        if let Some(fault) = cs.fault.take() {
            return Err(fault);
        }
        ran?;
        let Recorder {
            num_inputs, num_aux, num_constraints, mut a, mut b, mut c, coeffs, a_aux, b_input, b_aux, ..
        } = cs;
        for m in [&mut a, &mut b, &mut c] {
            m.finish(num_inputs);
        }
        let mut coeffs = coeffs.values;
        coeffs.shrink_to_fit();
        Ok(Shape {
            num_inputs,
            num_aux,
            num_constraints,
            a,
            b,
            c,
            coeffs,
            a_aux_density: Density::new(a_aux),
            b_input_density: Density::new(b_input),
            b_aux_density: Density::new(b_aux),
        })
    }
}
