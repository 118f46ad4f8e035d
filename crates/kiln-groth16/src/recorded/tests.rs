//! The recorded path against `synth::synthesize`, which is the reference (bellperson's
//! `ProvingAssignment` term for term).

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::{Shape, Witness};
use crate::circuits::{Builtin, Kind};
use crate::error::Groth16Error;
use crate::synth::{synthesize, synthesize_keypair};

/// Records from one seed, evaluates another: the shape must not depend on the witness.
fn assert_matches_synthesize(kind: Kind, constraints: usize, seed: u64) {
    let shape = Shape::record(Builtin::new(kind, constraints, seed.wrapping_add(1000))).unwrap();
    let circuit = Builtin::new(kind, constraints, seed);
    let reference = synthesize(circuit).unwrap();
    let fast = shape.synthesize(circuit).unwrap();
    // Field by field first, for a readable failure; then the whole (densities included).
    assert_eq!(fast.input, reference.input, "{kind} {constraints} {seed}: input");
    assert_eq!(fast.aux, reference.aux, "{kind} {constraints} {seed}: aux");
    assert_eq!(fast.a, reference.a, "{kind} {constraints} {seed}: a");
    assert_eq!(fast.b, reference.b, "{kind} {constraints} {seed}: b");
    assert_eq!(fast.c, reference.c, "{kind} {constraints} {seed}: c");
    assert_eq!(fast, reference, "{kind} {constraints} {seed}: densities");
    assert_eq!(shape.num_constraints(), reference.num_constraints());
}

#[test]
fn builtins_match_synthesize() {
    // 3000 and 5000 span several blocks of rows, one of them partial.
    for kind in Kind::ALL {
        for constraints in [16, 17, 100, 1024, 1025, 3000, 5000] {
            for seed in [0, 1, 7] {
                assert_matches_synthesize(kind, constraints, seed);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn builtins_match_synthesize_prop(kind in 0..3usize, constraints in 16..4200usize, seed in any::<u64>()) {
        assert_matches_synthesize(Kind::ALL[kind], constraints, seed);
    }
}

/// The recorded matrices against the keypair assembly (the setup's view of the same R1CS),
/// term by term: catches an index mapping error even where values would hide it.
#[test]
fn matrices_match_keypair() {
    for kind in Kind::ALL {
        let circuit = Builtin::new(kind, 2100, 5);
        let shape = Shape::record(circuit).unwrap();
        let kp = synthesize_keypair(circuit).unwrap();
        assert_eq!(
            (shape.num_inputs(), shape.num_aux(), shape.num_constraints()),
            (kp.num_inputs, kp.num_aux, kp.num_constraints)
        );
        let coeff = |code: Option<u32>| code.map_or(Scalar::ONE, |k| shape.coefficients()[k as usize]);
        for (m, inputs, aux) in [
            (shape.a(), &kp.at_inputs, &kp.at_aux),
            (shape.b(), &kp.bt_inputs, &kp.bt_aux),
            (shape.c(), &kp.ct_inputs, &kp.ct_aux),
        ] {
            // Transpose the recorded rows into the keypair's per-variable columns.
            let mut cols = vec![Vec::new(); kp.num_inputs + kp.num_aux];
            for (j, row) in m.rows().enumerate() {
                for (z, code) in row {
                    cols[z].push((coeff(code), j));
                }
            }
            let expected: Vec<Vec<(Scalar, usize)>> = inputs
                .iter()
                .chain(aux.iter())
                .map(|col| col.iter().copied().filter(|(c, _)| !bool::from(c.is_zero())).collect())
                .collect();
            assert_eq!(cols, expected, "{kind}");
        }
    }
}

/// A hand-made circuit with what the built-ins lack: namespaces, arbitrary coefficients,
/// a variable repeated in one combination, coefficients that are zero (given or cancelled),
/// inputs in B and C, empty combinations, and a variable that only ever has coefficient 0.
#[derive(Clone, Copy)]
struct Mixed {
    seed: u64,
    extra_input: bool,
}

impl Circuit<Scalar> for Mixed {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        // Coefficients are part of the shape: fixed, unlike the witness.
        let k = Scalar::random(ChaCha20Rng::seed_from_u64(0x6b));
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        let three = Scalar::from(3u64);
        let x = cs.alloc(|| "x", || Ok(Scalar::random(&mut rng)))?;
        let pub1 = cs.alloc_input(|| "pub1", || Ok(Scalar::from(5u64)))?;
        let mut ns = cs.namespace(|| "inner");
        let y = ns.alloc(|| "y", || Ok(Scalar::random(&mut rng)))?;
        let ghost = ns.alloc(|| "ghost", || Ok(Scalar::random(&mut rng)))?;
        {
            let mut deeper = ns.namespace(|| "deeper");
            let w = deeper.alloc(|| "w", || Ok(Scalar::random(&mut rng)))?;
            // Repeated variable: x + x + (k, x) is one term (2 + k)·x.
            deeper.enforce(|| "repeat", |lc| lc + x + x + (k, x), |lc| lc + pub1 + (three, y), |lc| lc + w - y);
            // ghost only with coefficient zero (given and cancelled): no density anywhere.
            deeper.enforce(
                || "zeros",
                |lc| lc + (Scalar::ZERO, ghost) + (three, y) - (three, y) + w,
                |lc| lc + (Scalar::ZERO, ghost) + (k, w) + (-k, w) + CS::one(),
                |lc| lc + (Scalar::ZERO, pub1),
            );
        }
        drop(ns);
        let pub2 = cs.alloc_input(|| "pub2", || Ok(Scalar::random(&mut rng)))?;
        // Inputs in A, B and C; ONE with a non-ONE coefficient; an input only in B with
        // a cancelled coefficient (b_input must stay unset for it if nowhere else).
        cs.enforce(|| "inputs", |lc| lc + (k, CS::one()) + pub2, |lc| lc + pub2 - x, |lc| lc + (-Scalar::ONE, pub1));
        cs.enforce(|| "empty", |lc| lc, |lc| lc, |lc| lc);
        cs.enforce(|| "doubling", |lc| lc + (Scalar::from(2u64), y), |lc| lc + CS::one() + CS::one(), |lc| lc);
        if self.extra_input {
            let extra = cs.alloc_input(|| "extra", || Ok(Scalar::ONE))?;
            cs.enforce(|| "extra", |lc| lc + extra, |lc| lc + extra, |lc| lc + extra);
        }
        Ok(())
    }
}

#[test]
fn mixed_circuit_matches_synthesize() {
    for extra_input in [false, true] {
        let shape = Shape::record(Mixed { seed: 0, extra_input }).unwrap();
        for seed in [1, 2, 3] {
            let circuit = Mixed { seed, extra_input };
            let reference = synthesize(circuit).unwrap();
            assert_eq!(shape.synthesize(circuit).unwrap(), reference, "seed {seed}");
            // ghost (aux 2) has only zero coefficients: no density, as in synth::eval.
            assert!(!reference.a_aux_density.get(2) && !reference.b_aux_density.get(2));
        }
    }
}

#[test]
fn evaluate_into_overwrites_caller_buffers() {
    let circuit = Builtin::new(Kind::Mimc, 3000, 4);
    let shape = Shape::record(circuit).unwrap();
    let reference = synthesize(circuit).unwrap();
    let w = shape.witness(circuit).unwrap();
    assert_eq!((&w.input, &w.aux), (&reference.input, &reference.aux));
    assert_eq!(Witness::generate(circuit).unwrap(), w);
    let n = shape.num_constraints();
    // Garbage in the buffers (a reused pinned buffer holds the previous proof's values).
    let (mut a, mut b, mut c) = (vec![Scalar::ONE; n], vec![Scalar::ONE; n], vec![Scalar::ONE; n]);
    shape.evaluate_into(&w.input, &w.aux, &mut a, &mut b, &mut c).unwrap();
    assert_eq!((&a, &b, &c), (&reference.a, &reference.b, &reference.c));
    // a and b alone (the GPU prover's), and c = a∘b in every row of this satisfied system,
    // the padding included: what the GPU prover forms on the device instead of C·z.
    let (mut a2, mut b2) = (vec![Scalar::ONE; n], vec![Scalar::ONE; n]);
    shape.evaluate_ab_into(&w.input, &w.aux, &mut a2, &mut b2).unwrap();
    assert_eq!((&a2, &b2), (&a, &b));
    assert!(a.iter().zip(&b).zip(&c).all(|((x, y), z)| x * y == *z), "c = a∘b row by row");
    let err = shape.evaluate_ab_into(&w.input, &w.aux, &mut a2[1..], &mut b2).unwrap_err();
    assert!(matches!(err, Groth16Error::ShapeMismatch { what: "output a length", .. }), "{err}");

    // witness_into reuses a witness of another seed (the vectors' memory) and overwrites it.
    let mut reused = shape.witness(Builtin::new(Kind::Mimc, 3000, 5)).unwrap();
    shape.witness_into(circuit, &mut reused).unwrap();
    assert_eq!(reused, w);
    let err = shape.witness_into(Builtin::new(Kind::Mimc, 2000, 4), &mut reused).unwrap_err();
    assert!(matches!(err, Groth16Error::ShapeMismatch { what: "number of aux variables", .. }), "{err}");
}

#[test]
fn shape_mismatch_is_a_typed_error() {
    // Squaring: one public input at every size, so only the aux count differs.
    let shape = Shape::record(Builtin::new(Kind::Squaring, 1024, 0)).unwrap();
    match shape.synthesize(Builtin::new(Kind::Squaring, 2048, 0)) {
        Err(Groth16Error::ShapeMismatch { what: "number of aux variables", got, expected }) => {
            assert_eq!(expected, shape.num_aux());
            assert!(got > expected);
        }
        other => panic!("expected an aux mismatch, got {other:?}"),
    }

    let shape = Shape::record(Mixed { seed: 0, extra_input: false }).unwrap();
    let err = shape.synthesize(Mixed { seed: 0, extra_input: true }).unwrap_err();
    assert!(
        matches!(
            err,
            Groth16Error::ShapeMismatch { what: "number of public inputs (ONE included)", got: 4, expected: 3 }
        ),
        "{err}"
    );

    let w = shape.witness(Mixed { seed: 0, extra_input: false }).unwrap();
    let n = shape.num_constraints();
    let mut ok = vec![Scalar::ZERO; n];
    let mut short = vec![Scalar::ZERO; n - 1];
    let err = shape.evaluate_into(&w.input, &w.aux, &mut ok.clone(), &mut short, &mut ok).unwrap_err();
    assert!(matches!(err, Groth16Error::ShapeMismatch { what: "output b length", .. }), "{err}");
    let err = shape.evaluate(Witness { input: w.input.clone(), aux: w.aux[1..].to_vec() }).unwrap_err();
    assert!(matches!(err, Groth16Error::ShapeMismatch { what: "number of aux variables", .. }), "{err}");
    assert!(err.to_string().contains("number of aux variables"), "{err}");
}

/// A constraint on a variable that does not exist yet (`synthesize` would index out of
/// bounds and panic) is a typed error when recording.
#[test]
fn unallocated_variable_is_a_typed_error() {
    struct Bad;
    impl Circuit<Scalar> for Bad {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(Scalar::ONE))?;
            cs.enforce(|| "ok", |lc| lc + x, |lc| lc + x, |lc| lc + x);
            let future = Variable::new_unchecked(Index::Aux(7));
            cs.enforce(|| "bad", |lc: LinearCombination<Scalar>| lc + x, |lc| lc + future, |lc| lc);
            Ok(())
        }
    }
    let err = Shape::record(Bad).unwrap_err();
    assert!(
        matches!(err, Groth16Error::UnallocatedVariable { constraint: 1, kind: "aux", index: 7, allocated: 1 }),
        "{err}"
    );
}

#[test]
fn circuit_errors_pass_through() {
    struct Fails;
    impl Circuit<Scalar> for Fails {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            cs.alloc(|| "x", || Err(SynthesisError::AssignmentMissing))?;
            Err(SynthesisError::Unsatisfiable)
        }
    }
    assert!(matches!(Shape::record(Fails), Err(Groth16Error::Synthesis(SynthesisError::Unsatisfiable))));
    assert!(matches!(Witness::generate(Fails), Err(Groth16Error::Synthesis(SynthesisError::AssignmentMissing))));
}

/// Memory per constraint stays small (the benchmark prints the exact figures).
#[test]
fn shape_is_compact() {
    for (kind, max) in [(Kind::Porep, 40.0), (Kind::Squaring, 16.0)] {
        let shape = Shape::record(Builtin::new(kind, 1 << 14, 0)).unwrap();
        let per = shape.heap_bytes() as f64 / shape.num_constraints() as f64;
        assert!(per <= max, "{kind}: {per:.1} bytes per constraint");
    }
}
