//! The conformance suite every [`Prover`] passes: written once, run against the CPU prover in
//! CI and against the GPU prover on a GPU machine.
//!
//! For each case it makes parameters with a random trapdoor, builds the prover under test
//! from them, and checks for a batch of circuits with fixed (r, s):
//! - the prover's [`Sums`] equal the reference arithmetic (naive sums over blstrs, the H
//!   polynomial from kiln-ntt's CPU path, which is itself checked against bellperson's);
//! - the proof bytes equal the reference proof's, through plain synthesis and through a
//!   recorded shape (`Prover::sums_recorded`), and every proof verifies.
//!
//! Cases: each built-in circuit, batches of 1 to 4, and circuits whose queries are empty in
//! one way or another (inputs only, aux only, no constraint of its own).

use std::sync::Arc;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use super::{ProveOptions, Prover, Sums, Timings, create_proofs_recorded, create_proofs_with, epilogue};
use crate::circuits::{Builtin, Kind};
use crate::error::Groth16Error;
use crate::params::Parameters;
use crate::recorded::Shape;
use crate::setup::random_setup;
use crate::synth::{Assignment, synthesize};
use crate::verifier::{PreparedVerifyingKey, verify_proof};

/// A circuit with public inputs only: `x_i · x_i = y_i` over inputs.
#[derive(Debug, Clone, Copy)]
pub struct InputsOnly(pub u64);

impl Circuit<Scalar> for InputsOnly {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for i in 0..3u64 {
            let x = Scalar::from(self.0 + i);
            let xv = cs.alloc_input(|| "x", || Ok(x))?;
            let yv = cs.alloc_input(|| "y", || Ok(x.square()))?;
            cs.enforce(|| "x*x=y", |lc| lc + xv, |lc| lc + xv, |lc| lc + yv);
        }
        Ok(())
    }
}

/// A circuit with aux variables only (no public input besides ONE): a squaring chain with a
/// few zeros and ones, so every class of the 0/1/other split is present.
#[derive(Debug, Clone, Copy)]
pub struct AuxOnly(pub u64);

impl Circuit<Scalar> for AuxOnly {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut x = Scalar::from(self.0 + 2);
        let mut xv = cs.alloc(|| "x0", || Ok(x))?;
        for _ in 0..20 {
            let y = x.square();
            let yv = cs.alloc(|| "y", || Ok(y))?;
            cs.enforce(|| "sq", |lc| lc + xv, |lc| lc + xv, |lc| lc + yv);
            (x, xv) = (y, yv);
        }
        for bit in [Scalar::ZERO, Scalar::ONE, Scalar::ONE] {
            let b = cs.alloc(|| "bit", || Ok(bit))?;
            cs.enforce(|| "boolean", |lc| lc + b, |lc| lc + CS::one() - b, |lc| lc);
        }
        Ok(())
    }
}

/// A circuit with no constraint and no variable of its own (only bellperson's input
/// constraint of ONE): every query but H's is (almost) empty.
#[derive(Debug, Clone, Copy)]
pub struct Empty;

impl Circuit<Scalar> for Empty {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, _cs: &mut CS) -> Result<(), SynthesisError> {
        Ok(())
    }
}

/// The sums of one synthesized circuit, by the textbook definition (slow: small circuits).
pub fn reference_sums(params: &Parameters, asg: &Assignment) -> Result<Sums, Groth16Error> {
    fn dot1(bases: &[G1Affine], scalars: impl Iterator<Item = Scalar>) -> G1Projective {
        bases.iter().zip(scalars).fold(G1Projective::identity(), |acc, (b, s)| acc + G1Projective::from(*b) * s)
    }
    fn dot2(bases: &[G2Affine], scalars: impl Iterator<Item = Scalar>) -> G2Projective {
        bases.iter().zip(scalars).fold(G2Projective::identity(), |acc, (b, s)| acc + G2Projective::from(*b) * s)
    }
    // The values set in a density, one by one: a reference apart from the provers' gathers.
    fn dense(values: &[Scalar], density: &kiln_msm::Density) -> Vec<Scalar> {
        density.iter_ones().map(|i| values[i]).collect()
    }
    let domain = kiln_ntt::Domain::for_size(asg.a.len())?;
    let h = kiln_ntt::cpu::h_poly(&domain, asg.a.clone(), asg.b.clone(), asg.c.clone())?;
    let a_scalars: Vec<Scalar> = asg.input.iter().copied().chain(dense(&asg.aux, &asg.a_aux_density)).collect();
    let b_scalars: Vec<Scalar> =
        dense(&asg.input, &asg.b_input_density).into_iter().chain(dense(&asg.aux, &asg.b_aux_density)).collect();
    Ok(Sums {
        a: dot1(&params.a, a_scalars.iter().copied()),
        b_g1: dot1(&params.b_g1, b_scalars.iter().copied()),
        b_g2: dot2(&params.b_g2, b_scalars.iter().copied()),
        h: dot1(&params.h, h.into_iter()),
        l: dot1(&params.l, asg.aux.iter().copied()),
    })
}

/// Runs one case: parameters for `circuits[0]`'s shape, the prover from `make`, and the checks
/// above for the whole batch.
///
/// # Panics
/// On any difference from the reference, with the case's name.
pub fn check_case<C, P>(name: &str, circuits: Vec<C>, make: &dyn Fn(Arc<Parameters>) -> Result<P, Groth16Error>)
where
    C: Circuit<Scalar> + Clone + Send,
    P: Prover,
{
    let mut rng = ChaCha20Rng::seed_from_u64(0x6b696c6e);
    let params = Arc::new(
        random_setup(circuits[0].clone(), &mut rng, &crate::NoProgress)
            .unwrap_or_else(|e| panic!("{name}: setup: {e}")),
    );
    let prover = make(params.clone()).unwrap_or_else(|e| panic!("{name}: building the prover: {e}"));
    let assignments: Vec<Assignment> =
        circuits.iter().cloned().map(synthesize).collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{name}: {e}"));
    let sums = prover.sums(&assignments, &mut Timings::default()).unwrap_or_else(|e| panic!("{name}: sums: {e}"));
    let r_s: Vec<(Scalar, Scalar)> =
        (0..circuits.len()).map(|_| (Scalar::random(&mut rng), Scalar::random(&mut rng))).collect();
    let shape = Shape::record(circuits[0].clone()).unwrap_or_else(|e| panic!("{name}: recording the shape: {e}"));
    let (recorded, _) = create_proofs_recorded(&prover, Some(&shape), circuits.clone(), &r_s, ProveOptions::default())
        .unwrap_or_else(|e| panic!("{name}: proving through the recorded shape with {}: {e}", prover.name()));
    let (proofs, _) = create_proofs_with(&prover, circuits, &r_s, ProveOptions::default())
        .unwrap_or_else(|e| panic!("{name}: proving with {}: {e}", prover.name()));
    let pvk = PreparedVerifyingKey::new(&params.vk);
    for (i, asg) in assignments.iter().enumerate() {
        let expected = reference_sums(&params, asg).unwrap_or_else(|e| panic!("{name}: reference: {e}"));
        assert_eq!(sums[i], expected, "{name}: circuit {i} of {}: sums of {} differ", assignments.len(), prover.name());
        let reference = epilogue(&params, &expected, r_s[i].0, r_s[i].1);
        assert_eq!(
            proofs[i].to_bytes(),
            reference.to_bytes(),
            "{name}: circuit {i}: proof bytes of {} differ from the reference",
            prover.name()
        );
        assert_eq!(
            recorded[i].to_bytes(),
            reference.to_bytes(),
            "{name}: circuit {i}: proof bytes of {} through the recorded shape differ from the reference",
            prover.name()
        );
        assert!(verify_proof(&pvk, &proofs[i], &asg.input[1..]).unwrap(), "{name}: circuit {i}: proof does not verify");
    }
}

/// The whole suite against the prover `make` builds: built-in circuits of `constraints`
/// constraints in batches of 1 to 4, and the empty-query circuits.
///
/// # Panics
/// On the first case that differs from the reference.
pub fn check_prover<P: Prover>(constraints: usize, make: &dyn Fn(Arc<Parameters>) -> Result<P, Groth16Error>) {
    for kind in Kind::ALL {
        for batch in 1..=4u64 {
            let circuits: Vec<Builtin> =
                (0..batch).map(|seed| Builtin::new(kind, constraints, 100 * batch + seed)).collect();
            check_case(&format!("{kind} 2^{} x{batch}", constraints.ilog2()), circuits, make);
        }
    }
    check_case("inputs only", vec![InputsOnly(3), InputsOnly(7)], make);
    check_case("aux only", vec![AuxOnly(5), AuxOnly(9)], make);
    check_case("empty", vec![Empty, Empty], make);
}
