//! Random ("toxic waste") setup, for tests, demos and benchmarks, on the CPU or the GPU.
//!
//! Draws the trapdoor from the RNG in bellperson's order (g1, g2, α, β, γ, δ, τ), so the same
//! seeded RNG gives byte-identical parameters from kiln and from bellperson's
//! `generate_random_parameters`. Real deployments use a ceremony, not this.
//!
//! One recipe ([`build`]) makes the parameters from the QAP evaluated at τ ([`qap::Qap`]); an
//! [`Engine`] does its bulk work, the fixed-base products and one inverse FFT:
//! - [`setup_with_trapdoor`]: the CPU (blst's w-NAF products, kiln-ntt's CPU FFT), with the
//!   QAP from the circuit's keypair synthesis, bellperson's way;
//! - `gpu::gpu_setup` (feature `cuda`): the GPU (kiln-msm's `FixedBase`, kiln-ntt's GPU FFT),
//!   with the QAP from a recorded [`crate::Shape`], which is what makes a 2^27 setup minutes
//!   instead of days. Both give the same bytes for the same trapdoor (tested).

mod cpu;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod qap;

use bellpepper_core::Circuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group, prime::PrimeCurveAffine};
use kiln_ntt::Domain;
use rand_core::RngCore;
use rayon::prelude::*;

use crate::error::Groth16Error;
use crate::params::{Parameters, VerifyingKey};
use crate::progress::Progress;
use crate::synth::synthesize_keypair;
pub(crate) use cpu::CpuEngine;
use qap::Qap;

/// The secrets of a setup. Whoever knows them can forge proofs.
#[derive(Debug, Clone, Copy)]
pub struct Trapdoor {
    /// G1 generator used.
    pub g1: G1Projective,
    /// G2 generator used.
    pub g2: G2Projective,
    /// α.
    pub alpha: Scalar,
    /// β.
    pub beta: Scalar,
    /// γ.
    pub gamma: Scalar,
    /// δ.
    pub delta: Scalar,
    /// τ.
    pub tau: Scalar,
}

impl Trapdoor {
    /// Draws a trapdoor in bellperson's order.
    pub fn random<R: RngCore>(rng: &mut R) -> Self {
        Trapdoor {
            g1: G1Projective::random(&mut *rng),
            g2: G2Projective::random(&mut *rng),
            alpha: Scalar::random(&mut *rng),
            beta: Scalar::random(&mut *rng),
            gamma: Scalar::random(&mut *rng),
            delta: Scalar::random(&mut *rng),
            tau: Scalar::random(&mut *rng),
        }
    }
}

/// Parameters for `circuit` from a random trapdoor, on the CPU.
pub fn random_setup<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    rng: &mut R,
    progress: &dyn Progress,
) -> Result<Parameters, Groth16Error> {
    setup_with_trapdoor(circuit, &Trapdoor::random(rng), progress)
}

/// Parameters for `circuit` from a given trapdoor, on the CPU.
pub fn setup_with_trapdoor<C: Circuit<Scalar>>(
    circuit: C,
    t: &Trapdoor,
    progress: &dyn Progress,
) -> Result<Parameters, Groth16Error> {
    let ks = synthesize_keypair(circuit)?;
    let domain = Domain::for_size(ks.num_constraints)?;
    build(&domain, t, &mut CpuEngine::new(t), progress, |lagrange| Ok(Qap::from_keypair(&ks, lagrange)))
}

/// The bulk work of a setup: fixed-base products of the trapdoor's generators (each
/// reporting its points to `progress`) and the inverse FFT that turns powers of τ into the
/// Lagrange basis at τ.
pub(crate) trait Engine {
    /// `out[i] = scalars[i] · g1` (identity for zero).
    fn g1(&mut self, scalars: &[Scalar], out: &mut [G1Affine], progress: &dyn Progress) -> Result<(), Groth16Error>;
    /// `out[i] = scalars[i] · g2` (identity for zero).
    fn g2(&mut self, scalars: &[Scalar], out: &mut [G2Affine], progress: &dyn Progress) -> Result<(), Groth16Error>;
    /// Evaluations on `domain` → coefficients, in place.
    fn ifft(&mut self, domain: &Domain, values: &mut [Scalar]) -> Result<(), Groth16Error>;
}

/// Points of `scalars · g1` through `engine`, into a new vector.
fn g1s(engine: &mut dyn Engine, scalars: &[Scalar], progress: &dyn Progress) -> Result<Vec<G1Affine>, Groth16Error> {
    let mut out = vec![G1Affine::identity(); scalars.len()];
    engine.g1(scalars, &mut out, progress)?;
    Ok(out)
}

/// The non-zero values of `values`, in order (the A and B queries keep only the variables
/// whose polynomial is non-zero at τ: bellperson drops the identity points they would give).
fn non_zero(values: &[Scalar]) -> Vec<Scalar> {
    values.iter().copied().filter(|x| !bool::from(x.is_zero())).collect()
}

/// τ^i for i < n, in parallel chunks.
fn powers_of(tau: Scalar, n: usize) -> Vec<Scalar> {
    const CHUNK: usize = 1 << 14;
    let mut powers = vec![Scalar::ZERO; n];
    powers.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut p = tau.pow_vartime([(i * CHUNK) as u64]);
        for x in chunk {
            *x = p;
            p *= tau;
        }
    });
    powers
}

/// The parameters of a circuit over `domain` from the trapdoor: H from the powers of τ, then
/// `qap(lagrange)` gives u, v, w at τ per variable and the other queries follow from them.
pub(crate) fn build(
    domain: &Domain,
    t: &Trapdoor,
    engine: &mut dyn Engine,
    progress: &dyn Progress,
    qap: impl FnOnce(&[Scalar]) -> Result<Qap, Groth16Error>,
) -> Result<Parameters, Groth16Error> {
    let m = domain.size();
    let clock = std::time::Instant::now();
    // Phase times at info level: a 2^27 setup runs for minutes, and where they go matters.
    let phase = |name: &str| tracing::info!(phase = name, elapsed_ms = clock.elapsed().as_millis() as u64, "setup");
    let gamma_inv = Option::<Scalar>::from(t.gamma.invert()).ok_or(Groth16Error::Degenerate("gamma"))?;
    let delta_inv = Option::<Scalar>::from(t.delta.invert()).ok_or(Groth16Error::Degenerate("delta"))?;

    // H query: τ^i · t(τ) / δ for i < m − 1, with t(τ) = τ^m − 1.
    let mut powers = powers_of(t.tau, m);
    let coeff = (t.tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let h_scalars: Vec<Scalar> = powers[..m - 1].par_iter().map(|p| *p * coeff).collect();
    progress.start("setup: H", h_scalars.len() as u64);
    phase("powers of tau");
    let h = g1s(engine, &h_scalars, progress)?;
    drop(h_scalars);
    phase("H query");

    // Lagrange coefficients L_j(τ) from the powers of τ, then the QAP at τ.
    engine.ifft(domain, &mut powers)?;
    phase("inverse FFT");
    let qap = qap(&powers)?;
    drop(powers);
    phase("QAP at tau");
    let n = qap.num_inputs;

    // ext_i = (β·u_i + α·v_i + w_i) / γ for inputs (the IC), / δ for aux (L).
    let ext = |range: std::ops::Range<usize>, inv: Scalar| -> Vec<Scalar> {
        range.into_par_iter().map(|i| (qap.u[i] * t.beta + qap.v[i] * t.alpha + qap.w[i]) * inv).collect()
    };
    let ic_scalars = ext(0..n, gamma_inv);
    let l_scalars = ext(n..qap.u.len(), delta_inv);
    // Every aux variable must be constrained, so that L never holds the identity.
    if let Some(i) = l_scalars.iter().position(|x| bool::from(x.is_zero())) {
        return Err(Groth16Error::Unconstrained(i));
    }
    let a_scalars = non_zero(&qap.u);
    let b_scalars = non_zero(&qap.v);
    drop(qap);
    let g1_points = ic_scalars.len() + l_scalars.len() + a_scalars.len() + b_scalars.len();
    progress.start("setup: queries", (g1_points + b_scalars.len()) as u64);
    let ic = g1s(engine, &ic_scalars, progress)?;
    let l = g1s(engine, &l_scalars, progress)?;
    drop(l_scalars);
    let a = g1s(engine, &a_scalars, progress)?;
    drop(a_scalars);
    let b_g1 = g1s(engine, &b_scalars, progress)?;
    let mut b_g2 = vec![G2Affine::identity(); b_scalars.len()];
    engine.g2(&b_scalars, &mut b_g2, progress)?;
    phase("IC, L, A, B queries");

    let g1 = t.g1.to_affine();
    let g2 = t.g2.to_affine();
    let vk = VerifyingKey {
        alpha_g1: (g1 * t.alpha).to_affine(),
        beta_g1: (g1 * t.beta).to_affine(),
        beta_g2: (g2 * t.beta).to_affine(),
        gamma_g2: (g2 * t.gamma).to_affine(),
        delta_g1: (g1 * t.delta).to_affine(),
        delta_g2: (g2 * t.delta).to_affine(),
        ic,
    };
    Ok(Parameters { vk, h, l, a, b_g1, b_g2 })
}
