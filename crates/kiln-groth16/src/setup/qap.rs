//! The QAP of a circuit at τ: for every variable z_i, u_i(τ), v_i(τ), w_i(τ), the values at τ
//! of the polynomials interpolating column i of A, B and C over the domain. With the
//! Lagrange basis at τ, L_j(τ), they are the transposed products u = Aᵀ·L, v = Bᵀ·L, w = Cᵀ·L.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::recorded::Shape;
use crate::synth::Keypair;

/// u, v, w at τ for every variable of z = (inputs, aux).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qap {
    /// Public inputs (ONE included): the first entries of u, v, w.
    pub num_inputs: usize,
    /// u_i(τ) = Σ_j A[j][i] · L_j(τ).
    pub u: Vec<Scalar>,
    /// v_i(τ) from B.
    pub v: Vec<Scalar>,
    /// w_i(τ) from C.
    pub w: Vec<Scalar>,
}

impl Qap {
    /// From the column lists of a keypair synthesis (bellperson's way: one list of
    /// (coefficient, constraint) per variable).
    pub fn from_keypair(ks: &Keypair, lagrange: &[Scalar]) -> Qap {
        let at = |cols: &[Vec<(Scalar, usize)>], more: &[Vec<(Scalar, usize)>]| -> Vec<Scalar> {
            let all: Vec<&Vec<(Scalar, usize)>> = cols.iter().chain(more).collect();
            all.par_iter().map(|terms| terms.iter().fold(Scalar::ZERO, |acc, (c, j)| acc + lagrange[*j] * c)).collect()
        };
        Qap {
            num_inputs: ks.num_inputs,
            u: at(&ks.at_inputs, &ks.at_aux),
            v: at(&ks.bt_inputs, &ks.bt_aux),
            w: at(&ks.ct_inputs, &ks.ct_aux),
        }
    }

    /// From a recorded shape's row-compressed matrices (no column lists: at 2^27 constraints
    /// they would cost more than the parameters).
    pub fn from_shape(shape: &Shape, lagrange: &[Scalar]) -> Qap {
        let vars = shape.num_inputs + shape.num_aux;
        let at = |m: &crate::recorded::SparseMatrix| {
            let mut out = vec![Scalar::ZERO; vars];
            m.add_transposed(&lagrange[..m.num_rows()], &shape.coeffs, &mut out);
            out
        };
        Qap { num_inputs: shape.num_inputs, u: at(&shape.a), v: at(&shape.b), w: at(&shape.c) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{Builtin, Kind};
    use crate::synth::synthesize_keypair;
    use rand_chacha::ChaCha20Rng;
    use rand_chacha::rand_core::SeedableRng;

    /// The shape's transposed products equal the keypair's column sums, for every built-in
    /// circuit, at random Lagrange values (what the setup's two paths rely on).
    #[test]
    fn shape_and_keypair_give_the_same_qap() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for kind in Kind::ALL {
            let c = Builtin::new(kind, 300, 5);
            let ks = synthesize_keypair(c).unwrap();
            let shape = Shape::record(c).unwrap();
            assert_eq!(shape.num_constraints(), ks.num_constraints, "{kind}");
            let lagrange: Vec<Scalar> = (0..512).map(|_| Scalar::random(&mut rng)).collect();
            let from_shape = Qap::from_shape(&shape, &lagrange);
            assert_eq!(from_shape, Qap::from_keypair(&ks, &lagrange), "{kind}");
            assert!(from_shape.u.iter().any(|x| !bool::from(x.is_zero())), "{kind}: u all zero");
        }
    }
}
