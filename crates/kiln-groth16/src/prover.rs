//! The Groth16 prover, generic over a [`ProverBackend`] that does the heavy steps (the H
//! polynomial and the MSMs). [`CpuBackend`] runs them with kiln-ntt and kiln-msm on the CPU;
//! a GPU backend implements the same trait.
//!
//! The arithmetic is bellperson's (`prover/native.rs`), so for the same parameters, circuit
//! and (r, s) the proof bytes are identical:
//! A = α + Σ a_i·A_i + r·δ, B = β + Σ b_i·B_i + s·δ,
//! C = s·ΣA + r·ΣB_G1 + r·s·δ + s·α + r·β + ΣH + ΣL.

use std::time::{Duration, Instant};

use bellpepper_core::Circuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group, prime::PrimeCurveAffine};
use kiln_msm::Density;
use kiln_ntt::Domain;
use rand_core::RngCore;
use rayon::prelude::*;

use crate::error::Groth16Error;
use crate::params::Parameters;
use crate::proof::Proof;
use crate::synth::{Assignment, synthesize};

/// The heavy steps of a proof. Implementations must give bit-identical results to
/// [`CpuBackend`] (exact arithmetic, so any correct implementation does).
pub trait ProverBackend: Sync {
    /// A short name for logs and reports ("cpu", "cuda:0", ...).
    fn name(&self) -> String;

    /// The H polynomial: `a`, `b`, `c` (one evaluation per constraint) padded to the domain,
    /// ifft, coset fft, (a·b − c)/Z, coset ifft. Returns `domain.size()` coefficients.
    fn h_poly(
        &self,
        domain: &Domain,
        a: Vec<Scalar>,
        b: Vec<Scalar>,
        c: Vec<Scalar>,
    ) -> Result<Vec<Scalar>, Groth16Error>;

    /// `Σ scalars[i]·bases[i]` in G1 (equal lengths).
    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, Groth16Error>;

    /// `Σ_{bit i set} scalars[i]·bases[rank(i)]` in G1 (bellperson's density semantics).
    fn msm_g1_density(
        &self,
        bases: &[G1Affine],
        density: &Density,
        scalars: &[Scalar],
    ) -> Result<G1Projective, Groth16Error>;

    /// The G2 form of [`ProverBackend::msm_g1_density`].
    fn msm_g2_density(
        &self,
        bases: &[G2Affine],
        density: &Density,
        scalars: &[Scalar],
    ) -> Result<G2Projective, Groth16Error>;
}

/// The CPU backend: kiln-ntt's CPU H step and kiln-msm's CPU MSMs.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend;

impl ProverBackend for CpuBackend {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn h_poly(
        &self,
        domain: &Domain,
        a: Vec<Scalar>,
        b: Vec<Scalar>,
        c: Vec<Scalar>,
    ) -> Result<Vec<Scalar>, Groth16Error> {
        Ok(kiln_ntt::cpu::h_poly(domain, a, b, c)?)
    }

    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, Groth16Error> {
        Ok(kiln_msm::cpu::msm_g1(bases, scalars)?)
    }

    fn msm_g1_density(
        &self,
        bases: &[G1Affine],
        density: &Density,
        scalars: &[Scalar],
    ) -> Result<G1Projective, Groth16Error> {
        Ok(kiln_msm::cpu::msm_g1_with_density(bases, density, scalars)?)
    }

    fn msm_g2_density(
        &self,
        bases: &[G2Affine],
        density: &Density,
        scalars: &[Scalar],
    ) -> Result<G2Projective, Groth16Error> {
        Ok(kiln_msm::cpu::msm_g2_with_density(bases, density, scalars)?)
    }
}

/// Options of a proving run.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProveOptions {
    /// Check a·b = c for every constraint before proving and fail with
    /// [`Groth16Error::Unsatisfied`] instead of making a proof. Without it, an unsatisfied
    /// circuit yields a proof that does not verify (as with bellperson).
    pub check_satisfied: bool,
}

/// Wall-clock time per phase, summed over the circuits of a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Running the circuits.
    pub synthesis: Duration,
    /// The H polynomial (NTTs).
    pub h_poly: Duration,
    /// The H and L MSMs (G1, dense).
    pub msm_h_l: Duration,
    /// The A and B_G1 MSMs (G1, with density).
    pub msm_a_b_g1: Duration,
    /// The B_G2 MSM.
    pub msm_b_g2: Duration,
    /// Assembling A, B, C.
    pub epilogue: Duration,
}

impl Timings {
    /// Sum of all phases.
    pub fn total(&self) -> Duration {
        self.synthesis + self.h_poly + self.msm_h_l + self.msm_a_b_g1 + self.msm_b_g2 + self.epilogue
    }

    /// (name, duration) per phase, in order.
    pub fn phases(&self) -> [(&'static str, Duration); 6] {
        [
            ("synthesis", self.synthesis),
            ("h_poly (NTT)", self.h_poly),
            ("msm H + L", self.msm_h_l),
            ("msm A + B_G1", self.msm_a_b_g1),
            ("msm B_G2", self.msm_b_g2),
            ("epilogue", self.epilogue),
        ]
    }
}

/// Proves one circuit with fresh r and s from `rng`.
pub fn create_proof<C, B, R>(backend: &B, params: &Parameters, circuit: C, rng: &mut R) -> Result<Proof, Groth16Error>
where
    C: Circuit<Scalar> + Send,
    B: ProverBackend + ?Sized,
    R: RngCore,
{
    let (mut proofs, _) = create_proofs(backend, params, vec![circuit], rng, ProveOptions::default())?;
    Ok(proofs.remove(0))
}

/// Proves a batch of equally shaped circuits, with fresh r and s per circuit from `rng`
/// (drawn r then s, per circuit, like bellperson's `create_random_proof_batch`).
pub fn create_proofs<C, B, R>(
    backend: &B,
    params: &Parameters,
    circuits: Vec<C>,
    rng: &mut R,
    options: ProveOptions,
) -> Result<(Vec<Proof>, Timings), Groth16Error>
where
    C: Circuit<Scalar> + Send,
    B: ProverBackend + ?Sized,
    R: RngCore,
{
    let r_s: Vec<(Scalar, Scalar)> =
        (0..circuits.len()).map(|_| (Scalar::random(&mut *rng), Scalar::random(&mut *rng))).collect();
    create_proofs_with(backend, params, circuits, &r_s, options)
}

/// Proves a batch with the given (r, s) per circuit (for tests and cross-checks).
pub fn create_proofs_with<C, B>(
    backend: &B,
    params: &Parameters,
    circuits: Vec<C>,
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
) -> Result<(Vec<Proof>, Timings), Groth16Error>
where
    C: Circuit<Scalar> + Send,
    B: ProverBackend + ?Sized,
{
    if r_s.len() != circuits.len() {
        return Err(Groth16Error::Randomness { got: r_s.len(), circuits: circuits.len() });
    }
    let mut t = Timings::default();
    let start = Instant::now();
    let assignments: Vec<Assignment> = circuits.into_par_iter().map(synthesize).collect::<Result<_, _>>()?;
    t.synthesis = start.elapsed();
    tracing::debug!(circuits = assignments.len(), elapsed = ?t.synthesis, "synthesis done");

    check_shapes(&assignments, params)?;
    if options.check_satisfied {
        for (i, asg) in assignments.iter().enumerate() {
            if let Some(j) = asg.first_unsatisfied() {
                return Err(Groth16Error::Unsatisfied { circuit: i, constraint: j });
            }
        }
    }
    assignments
        .into_iter()
        .zip(r_s)
        .map(|(asg, &(r, s))| prove_one(backend, params, asg, r, s, &mut t))
        .collect::<Result<Vec<_>, _>>()
        .map(|proofs| (proofs, t))
}

/// Checks that the circuits fit the parameters and each other, before any heavy work.
fn check_shapes(assignments: &[Assignment], params: &Parameters) -> Result<(), Groth16Error> {
    let Some(first) = assignments.first() else { return Ok(()) };
    let shape = |a: &Assignment| {
        [
            ("constraints", a.num_constraints()),
            ("public inputs", a.input.len()),
            ("aux variables", a.aux.len()),
            ("A aux density", a.a_aux_density.count_ones()),
            ("B input density", a.b_input_density.count_ones()),
            ("B aux density", a.b_aux_density.count_ones()),
        ]
    };
    let expected = shape(first);
    for (index, asg) in assignments.iter().enumerate().skip(1) {
        for ((what, got), (_, exp)) in shape(asg).into_iter().zip(expected) {
            if got != exp {
                return Err(Groth16Error::BatchShape { index, what, got, expected: exp });
            }
        }
    }
    let domain = Domain::for_size(first.num_constraints())?;
    let checks = [
        ("H query length (domain size − 1)", domain.size() - 1, params.h.len()),
        ("number of public inputs incl. ONE (IC query)", first.input.len(), params.vk.ic.len()),
        ("number of aux variables (L query)", first.aux.len(), params.l.len()),
        ("A query length", first.input.len() + first.a_aux_density.count_ones(), params.a.len()),
        ("B_G1 query length", first.b_input_density.count_ones() + first.b_aux_density.count_ones(), params.b_g1.len()),
        ("B_G2 query length", first.b_input_density.count_ones() + first.b_aux_density.count_ones(), params.b_g2.len()),
    ];
    for (what, circuit, params) in checks {
        if circuit != params {
            return Err(Groth16Error::ParamsMismatch { what, circuit, params });
        }
    }
    if bool::from(params.vk.delta_g1.is_identity() | params.vk.delta_g2.is_identity()) {
        return Err(Groth16Error::Degenerate("delta"));
    }
    Ok(())
}

fn prove_one<B: ProverBackend + ?Sized>(
    backend: &B,
    params: &Parameters,
    asg: Assignment,
    r: Scalar,
    s: Scalar,
    t: &mut Timings,
) -> Result<Proof, Groth16Error> {
    let Assignment { a, b, c, input, aux, a_aux_density, b_input_density, b_aux_density } = asg;
    let vk = &params.vk;
    let num_inputs = input.len();

    let start = Instant::now();
    let domain = Domain::for_size(a.len())?;
    let mut h = backend.h_poly(&domain, a, b, c)?;
    h.truncate(domain.size() - 1);
    t.h_poly += start.elapsed();

    let start = Instant::now();
    let h_sum = backend.msm_g1(&params.h, &h)?;
    drop(h);
    let l_sum = backend.msm_g1(&params.l, &aux)?;
    t.msm_h_l += start.elapsed();

    let start = Instant::now();
    // Inputs are dense in A (input constraints), so A's input part is a plain MSM.
    let a_sum = backend.msm_g1(&params.a[..num_inputs], &input)?
        + backend.msm_g1_density(&params.a[num_inputs..], &a_aux_density, &aux)?;
    let b_in = b_input_density.count_ones();
    // B in G1 only matters through r·ΣB; skip it when r = 0 (as bellperson does without zk).
    let b1_sum = if bool::from(r.is_zero()) {
        G1Projective::identity()
    } else {
        backend.msm_g1_density(&params.b_g1[..b_in], &b_input_density, &input)?
            + backend.msm_g1_density(&params.b_g1[b_in..], &b_aux_density, &aux)?
    };
    t.msm_a_b_g1 += start.elapsed();

    let start = Instant::now();
    let b2_sum = backend.msm_g2_density(&params.b_g2[..b_in], &b_input_density, &input)?
        + backend.msm_g2_density(&params.b_g2[b_in..], &b_aux_density, &aux)?;
    t.msm_b_g2 += start.elapsed();

    let start = Instant::now();
    let delta_g1 = G1Projective::from(vk.delta_g1);
    let g_a = delta_g1 * r + vk.alpha_g1 + a_sum;
    let g_b = G2Projective::from(vk.delta_g2) * s + vk.beta_g2 + b2_sum;
    let g_c = a_sum * s
        + b1_sum * r
        + delta_g1 * (r * s)
        + G1Projective::from(vk.alpha_g1) * s
        + G1Projective::from(vk.beta_g1) * r
        + h_sum
        + l_sum;
    let proof = Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() };
    t.epilogue += start.elapsed();
    Ok(proof)
}
