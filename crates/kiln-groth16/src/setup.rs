//! Random ("toxic waste") setup, for tests, demos and benchmarks.
//!
//! Draws the trapdoor from the RNG in bellperson's order (g1, g2, α, β, γ, δ, τ), so the same
//! seeded RNG gives byte-identical parameters from kiln and from bellperson's
//! `generate_random_parameters`. Real deployments use a ceremony, not this.

use bellpepper_core::Circuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group, Wnaf, prime::PrimeCurveAffine};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::error::Groth16Error;
use crate::params::{Parameters, VerifyingKey};
use crate::progress::Progress;
use crate::synth::synthesize_keypair;

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

/// Parameters for `circuit` from a random trapdoor.
pub fn random_setup<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    rng: &mut R,
    progress: &dyn Progress,
) -> Result<Parameters, Groth16Error> {
    setup_with_trapdoor(circuit, &Trapdoor::random(rng), progress)
}

/// Chunk of points per parallel task: large enough to amortise a batch normalisation.
const CHUNK: usize = 1024;

/// Parameters for `circuit` from a given trapdoor.
pub fn setup_with_trapdoor<C: Circuit<Scalar>>(
    circuit: C,
    t: &Trapdoor,
    progress: &dyn Progress,
) -> Result<Parameters, Groth16Error> {
    let ks = synthesize_keypair(circuit)?;
    let domain = kiln_ntt::Domain::for_size(ks.num_constraints)?;
    let m = domain.size();
    let vars = ks.num_inputs + ks.num_aux;

    let gamma_inv = Option::<Scalar>::from(t.gamma.invert()).ok_or(Groth16Error::Degenerate("gamma"))?;
    let delta_inv = Option::<Scalar>::from(t.delta.invert()).ok_or(Groth16Error::Degenerate("delta"))?;

    // Window tables sized like bellperson's (the results do not depend on the window).
    let mut g1_wnaf = Wnaf::new();
    let g1_wnaf = g1_wnaf.base(t.g1, (m - 1) + 3 * vars);
    let mut g2_wnaf = Wnaf::new();
    let g2_wnaf = g2_wnaf.base(t.g2, vars);

    progress.start("setup", ((m - 1) + vars) as u64);

    // Powers of τ over the whole domain.
    let mut powers = vec![Scalar::ZERO; m];
    powers.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut p = t.tau.pow_vartime([(i * CHUNK) as u64]);
        for x in chunk {
            *x = p;
            p *= t.tau;
        }
    });

    // H query: τ^i · t(τ) / δ for i < m − 1, with t(τ) = τ^m − 1.
    let coeff = (t.tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let mut h = vec![G1Affine::identity(); m - 1];
    h.par_chunks_mut(CHUNK).zip(powers.par_chunks(CHUNK)).for_each(|(out, p)| {
        let mut w = g1_wnaf.shared();
        let proj: Vec<G1Projective> = p.iter().take(out.len()).map(|p| w.scalar(&(*p * coeff))).collect();
        G1Projective::batch_normalize(&proj, out);
        progress.inc(out.len() as u64);
    });

    // Lagrange coefficients L_i(τ) from the powers of τ.
    kiln_ntt::cpu::ifft(&domain, &mut powers)?;
    let lagrange = powers;

    let ctx = EvalCtx { lagrange: &lagrange, alpha: t.alpha, beta: t.beta, g1: &g1_wnaf, g2: &g2_wnaf, progress };
    let inputs = ctx.eval(&ks.at_inputs, &ks.bt_inputs, &ks.ct_inputs, gamma_inv);
    let aux = ctx.eval(&ks.at_aux, &ks.bt_aux, &ks.ct_aux, delta_inv);

    // Every aux variable must be constrained, so that L never holds the identity.
    if let Some(i) = aux.ext.iter().position(|p| bool::from(p.is_identity())) {
        return Err(Groth16Error::Unconstrained(i));
    }

    let g1 = t.g1.to_affine();
    let g2 = t.g2.to_affine();
    let vk = VerifyingKey {
        alpha_g1: (g1 * t.alpha).to_affine(),
        beta_g1: (g1 * t.beta).to_affine(),
        beta_g2: (g2 * t.beta).to_affine(),
        gamma_g2: (g2 * t.gamma).to_affine(),
        delta_g1: (g1 * t.delta).to_affine(),
        delta_g2: (g2 * t.delta).to_affine(),
        ic: inputs.ext,
    };
    // A and B keep only the variables whose polynomial is non-zero at τ, inputs first.
    let keep1 = |v: Vec<G1Affine>| v.into_iter().filter(|p| !bool::from(p.is_identity()));
    let keep2 = |v: Vec<G2Affine>| v.into_iter().filter(|p| !bool::from(p.is_identity()));
    Ok(Parameters {
        vk,
        h,
        l: aux.ext,
        a: keep1(inputs.a).chain(keep1(aux.a)).collect(),
        b_g1: keep1(inputs.b_g1).chain(keep1(aux.b_g1)).collect(),
        b_g2: keep2(inputs.b_g2).chain(keep2(aux.b_g2)).collect(),
    })
}

struct Evaluated {
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
    b_g2: Vec<G2Affine>,
    ext: Vec<G1Affine>,
}

type G1Table<'a> = Wnaf<usize, &'a [G1Projective], &'a mut Vec<i64>>;
type G2Table<'a> = Wnaf<usize, &'a [G2Projective], &'a mut Vec<i64>>;

struct EvalCtx<'a> {
    lagrange: &'a [Scalar],
    alpha: Scalar,
    beta: Scalar,
    g1: &'a G1Table<'a>,
    g2: &'a G2Table<'a>,
    progress: &'a dyn Progress,
}

impl EvalCtx<'_> {
    /// For each variable: A = u(τ)·g1, B = v(τ)·g1 and ·g2 (identity where zero), and
    /// ext = (β·u(τ) + α·v(τ) + w(τ))·inv·g1.
    fn eval(
        &self,
        at: &[Vec<(Scalar, usize)>],
        bt: &[Vec<(Scalar, usize)>],
        ct: &[Vec<(Scalar, usize)>],
        inv: Scalar,
    ) -> Evaluated {
        let n = at.len();
        let mut out = Evaluated {
            a: vec![G1Affine::identity(); n],
            b_g1: vec![G1Affine::identity(); n],
            b_g2: vec![G2Affine::identity(); n],
            ext: vec![G1Affine::identity(); n],
        };
        let at_tau =
            |terms: &[(Scalar, usize)]| terms.iter().fold(Scalar::ZERO, |acc, (c, j)| acc + self.lagrange[*j] * c);
        out.a
            .par_chunks_mut(CHUNK)
            .zip(out.b_g1.par_chunks_mut(CHUNK))
            .zip(out.b_g2.par_chunks_mut(CHUNK))
            .zip(out.ext.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(ci, (((a_out, b1_out), b2_out), ext_out))| {
                let mut w1 = self.g1.shared();
                let mut w2 = self.g2.shared();
                let len = a_out.len();
                let mut a = vec![G1Projective::identity(); len];
                let mut b1 = vec![G1Projective::identity(); len];
                let mut b2 = vec![G2Projective::identity(); len];
                let mut ext = vec![G1Projective::identity(); len];
                for k in 0..len {
                    let i = ci * CHUNK + k;
                    let u = at_tau(&at[i]);
                    let v = at_tau(&bt[i]);
                    let w = at_tau(&ct[i]);
                    if !bool::from(u.is_zero()) {
                        a[k] = w1.scalar(&u);
                    }
                    if !bool::from(v.is_zero()) {
                        b1[k] = w1.scalar(&v);
                        b2[k] = w2.scalar(&v);
                    }
                    ext[k] = w1.scalar(&((u * self.beta + v * self.alpha + w) * inv));
                }
                G1Projective::batch_normalize(&a, a_out);
                G1Projective::batch_normalize(&b1, b1_out);
                G2Projective::batch_normalize(&b2, b2_out);
                G1Projective::batch_normalize(&ext, ext_out);
                self.progress.inc(len as u64);
            });
        out
    }
}
