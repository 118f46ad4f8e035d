//! Radix-2 evaluation domains with bellperson's `EvaluationDomain` semantics.

use std::sync::{Arc, OnceLock};

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use crate::NttError;

/// The largest supported domain: 2^28 points.
pub const MAX_LOG_SIZE: u32 = 28;

/// A multiplicative subgroup of Fr of size `n = 2^k` with everything the transforms need:
/// the primitive `n`-th root of unity `ω` (bellperson's choice: `ROOT_OF_UNITY` squared
/// `S - k` times, so results match bit for bit), its inverse, the coset generator `g`
/// (`MULTIPLICATIVE_GENERATOR`, 7), `1/n`, and `1/Z(g) = 1/(g^n - 1)`.
///
/// Cheap to clone (an `Arc`). The CPU twiddle table (`ω^i` for `i < n/2`) is built on
/// first use and shared by all clones.
#[derive(Clone, Debug)]
pub struct Domain {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    log_n: u32,
    omega: Scalar,
    omega_inv: Scalar,
    g: Scalar,
    g_inv: Scalar,
    n_inv: Scalar,
    z_inv: Scalar,
    twiddles: OnceLock<Vec<Scalar>>,
}

impl Domain {
    /// The domain of `2^log_n` points, `log_n` in `0..=28`.
    pub fn new(log_n: u32) -> Result<Domain, NttError> {
        if log_n > MAX_LOG_SIZE {
            return Err(NttError::TooLarge { log_n, max: MAX_LOG_SIZE });
        }
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_n..Scalar::S {
            omega = omega.square();
        }
        let n = 1u64 << log_n;
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        // Unwraps: ω, g and n are non-zero (n < p), and g^n ≠ 1 because g generates the whole group.
        let z = g.pow_vartime([n]) - Scalar::ONE;
        Ok(Domain {
            inner: Arc::new(Inner {
                log_n,
                omega,
                omega_inv: omega.invert().unwrap(),
                g,
                g_inv: g.invert().unwrap(),
                n_inv: Scalar::from(n).invert().unwrap(),
                z_inv: z.invert().unwrap(),
                twiddles: OnceLock::new(),
            }),
        })
    }

    /// The smallest domain with at least `min_n` points (bellperson's rule; 0 and 1 give 2^0).
    pub fn for_size(min_n: usize) -> Result<Domain, NttError> {
        let log_n = min_n.max(1).next_power_of_two().trailing_zeros();
        if min_n > (1usize << MAX_LOG_SIZE) {
            let log_n = usize::BITS - (min_n - 1).leading_zeros();
            return Err(NttError::TooLarge { log_n, max: MAX_LOG_SIZE });
        }
        Domain::new(log_n)
    }

    /// Number of points `n`.
    pub fn size(&self) -> usize {
        1usize << self.inner.log_n
    }

    /// `log2(n)`.
    pub fn log_size(&self) -> u32 {
        self.inner.log_n
    }

    /// The primitive `n`-th root of unity `ω`.
    pub fn omega(&self) -> Scalar {
        self.inner.omega
    }

    /// `ω^-1`.
    pub fn omega_inv(&self) -> Scalar {
        self.inner.omega_inv
    }

    /// The coset generator `g` (Fr's multiplicative generator, 7).
    pub fn generator(&self) -> Scalar {
        self.inner.g
    }

    /// `g^-1`.
    pub fn generator_inv(&self) -> Scalar {
        self.inner.g_inv
    }

    /// `1/n`.
    pub fn size_inv(&self) -> Scalar {
        self.inner.n_inv
    }

    /// `1/Z(g) = 1/(g^n - 1)`: what `divide_by_z_on_coset` multiplies by (Z is constant on the coset).
    pub fn z_on_coset_inv(&self) -> Scalar {
        self.inner.z_inv
    }

    /// `ω^i` for `i < n/2` (empty for `n = 1`), built on first use.
    pub(crate) fn twiddles(&self) -> &[Scalar] {
        self.inner.twiddles.get_or_init(|| powers(self.inner.omega, self.size() / 2))
    }
}

/// `[1, x, x^2, ..., x^(len-1)]`, computed in parallel chunks.
pub(crate) fn powers(x: Scalar, len: usize) -> Vec<Scalar> {
    const CHUNK: usize = 1 << 12;
    let mut out = vec![Scalar::ZERO; len];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut p = x.pow_vartime([(i * CHUNK) as u64]);
        for v in chunk {
            *v = p;
            p *= x;
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_have_the_right_order() {
        for log_n in [0u32, 1, 2, 5, 28] {
            let d = Domain::new(log_n).unwrap();
            assert_eq!(d.omega().pow_vartime([1u64 << log_n]), Scalar::ONE, "log_n {log_n}");
            if log_n > 0 {
                assert_eq!(d.omega().pow_vartime([1u64 << (log_n - 1)]), -Scalar::ONE, "log_n {log_n}");
            }
            assert_eq!(d.omega() * d.omega_inv(), Scalar::ONE);
            assert_eq!(d.size_inv() * Scalar::from(d.size() as u64), Scalar::ONE);
        }
    }

    #[test]
    fn sizes_and_limits() {
        assert!(matches!(Domain::new(29), Err(NttError::TooLarge { log_n: 29, max: 28 })));
        assert_eq!(Domain::for_size(0).unwrap().size(), 1);
        assert_eq!(Domain::for_size(1).unwrap().size(), 1);
        assert_eq!(Domain::for_size(5).unwrap().log_size(), 3);
        assert_eq!(Domain::for_size(8).unwrap().log_size(), 3);
        assert_eq!(Domain::for_size(1 << 28).unwrap().log_size(), 28);
        assert!(matches!(Domain::for_size((1 << 28) + 1), Err(NttError::TooLarge { log_n: 29, .. })));
    }
}
