//! Synthesis: a bellpepper circuit into what the prover and the setup need.
//!
//! Both constraint systems reproduce bellperson exactly: the constant ONE is input 0, and
//! after the circuit, one constraint `input_i · 0 = 0` per input makes the IC query dense.
//! Any difference here would make proofs and parameters incompatible with bellperson's.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use kiln_msm::Density;

use crate::error::Groth16Error;

/// A synthesized circuit: evaluations of A, B, C per constraint, the assignment, densities.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// ⟨A_j, z⟩ per constraint j (input constraints last).
    pub a: Vec<Scalar>,
    /// ⟨B_j, z⟩ per constraint.
    pub b: Vec<Scalar>,
    /// ⟨C_j, z⟩ per constraint.
    pub c: Vec<Scalar>,
    /// Public inputs, ONE first.
    pub input: Vec<Scalar>,
    /// Auxiliary (private) variables.
    pub aux: Vec<Scalar>,
    /// Aux variables that appear in some A with a non-zero coefficient.
    pub a_aux_density: Density,
    /// Inputs that appear in some B.
    pub b_input_density: Density,
    /// Aux variables that appear in some B.
    pub b_aux_density: Density,
}

impl Assignment {
    /// Number of constraints, including the input constraints.
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }

    /// The first constraint with a·b ≠ c, if any.
    pub fn first_unsatisfied(&self) -> Option<usize> {
        (0..self.a.len()).find(|&j| self.a[j] * self.b[j] != self.c[j])
    }
}

/// Runs the circuit in proving mode (bellperson's `ProvingAssignment`).
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<Assignment, Groth16Error> {
    let mut cs = ProvingCs::default();
    run_framed(circuit, &mut cs, |cs| cs.input.len())?;
    Ok(Assignment {
        a: cs.a,
        b: cs.b,
        c: cs.c,
        input: cs.input,
        aux: cs.aux,
        a_aux_density: Density::new(cs.a_aux),
        b_input_density: Density::new(cs.b_input),
        b_aux_density: Density::new(cs.b_aux),
    })
}

/// Runs `circuit` framed as bellperson frames it: ONE allocated as input 0 first, then the
/// circuit, then one constraint `input_i · 0 = 0` per input (`num_inputs` reads how many
/// there are). Every constraint system of this crate runs circuits through here, so that
/// their variable numbering and constraint lists agree with each other and with bellperson.
pub(crate) fn run_framed<C, CS>(circuit: C, cs: &mut CS, num_inputs: fn(&CS) -> usize) -> Result<(), SynthesisError>
where
    C: Circuit<Scalar>,
    CS: ConstraintSystem<Scalar>,
{
    cs.alloc_input(|| "ONE", || Ok(Scalar::ONE))?;
    circuit.synthesize(cs)?;
    for i in 0..num_inputs(cs) {
        cs.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
    }
    Ok(())
}

/// The namespace methods of a constraint system that ignores names (all of this crate's:
/// names only matter for debugging constraint systems, and building them costs time).
macro_rules! ignore_namespaces {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}
pub(crate) use ignore_namespaces;

#[derive(Default)]
struct ProvingCs {
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    a_aux: Vec<bool>,
    b_input: Vec<bool>,
    b_aux: Vec<bool>,
}

/// ⟨lc, z⟩, marking in the trackers each variable with a non-zero coefficient.
fn eval(
    lc: &LinearCombination<Scalar>,
    input: &[Scalar],
    aux: &[Scalar],
    mut input_density: Option<&mut Vec<bool>>,
    mut aux_density: Option<&mut Vec<bool>>,
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += if *coeff == Scalar::ONE { input[i] } else { input[i] * coeff };
        if let Some(d) = input_density.as_deref_mut() {
            d[i] = true;
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += if *coeff == Scalar::ONE { aux[i] } else { aux[i] * coeff };
        if let Some(d) = aux_density.as_deref_mut() {
            d[i] = true;
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for ProvingCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.a_aux.push(false);
        self.b_aux.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        self.b_input.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        // Inputs are fully dense in A because of the input constraints: no input tracker.
        let va = eval(&a, &self.input, &self.aux, None, Some(&mut self.a_aux));
        let vb = eval(&b, &self.input, &self.aux, Some(&mut self.b_input), Some(&mut self.b_aux));
        let vc = eval(&c, &self.input, &self.aux, None, None);
        self.a.push(va);
        self.b.push(vb);
        self.c.push(vc);
    }

    crate::synth::ignore_namespaces!();
}

/// The circuit's QAP in sparse form, for the setup (bellperson's `KeypairAssembly`):
/// for each variable, the (coefficient, constraint) pairs where it appears in A, B, C.
#[derive(Debug, Default)]
pub struct Keypair {
    /// Public inputs, ONE included.
    pub num_inputs: usize,
    /// Aux variables.
    pub num_aux: usize,
    /// Constraints, input constraints included.
    pub num_constraints: usize,
    /// A terms of each input.
    pub at_inputs: Vec<Vec<(Scalar, usize)>>,
    /// B terms of each input.
    pub bt_inputs: Vec<Vec<(Scalar, usize)>>,
    /// C terms of each input.
    pub ct_inputs: Vec<Vec<(Scalar, usize)>>,
    /// A terms of each aux variable.
    pub at_aux: Vec<Vec<(Scalar, usize)>>,
    /// B terms of each aux variable.
    pub bt_aux: Vec<Vec<(Scalar, usize)>>,
    /// C terms of each aux variable.
    pub ct_aux: Vec<Vec<(Scalar, usize)>>,
}

/// Runs the circuit in setup mode (witness closures are never called).
pub fn synthesize_keypair<C: Circuit<Scalar>>(circuit: C) -> Result<Keypair, Groth16Error> {
    let mut cs = Keypair::default();
    run_framed(circuit, &mut cs, |cs| cs.num_inputs)?;
    Ok(cs)
}

impl ConstraintSystem<Scalar> for Keypair {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_aux += 1;
        self.at_aux.push(vec![]);
        self.bt_aux.push(vec![]);
        self.ct_aux.push(vec![]);
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_inputs += 1;
        self.at_inputs.push(vec![]);
        self.bt_inputs.push(vec![]);
        self.ct_inputs.push(vec![]);
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
        let j = self.num_constraints;
        let record = |lc: LinearCombination<Scalar>,
                      inputs: &mut Vec<Vec<(Scalar, usize)>>,
                      aux: &mut Vec<Vec<(Scalar, usize)>>| {
            for (var, coeff) in lc.iter() {
                match var.get_unchecked() {
                    Index::Input(i) => inputs[i].push((*coeff, j)),
                    Index::Aux(i) => aux[i].push((*coeff, j)),
                }
            }
        };
        record(a(LinearCombination::zero()), &mut self.at_inputs, &mut self.at_aux);
        record(b(LinearCombination::zero()), &mut self.bt_inputs, &mut self.bt_aux);
        record(c(LinearCombination::zero()), &mut self.ct_inputs, &mut self.ct_aux);
        self.num_constraints += 1;
    }

    crate::synth::ignore_namespaces!();
}
