//! The CPU [`Engine`]: blst's w-NAF fixed-base products in parallel chunks, kiln-ntt's CPU FFT.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::{Curve, Wnaf, WnafGroup};
use kiln_ntt::Domain;
use rayon::prelude::*;

use super::{Engine, Trapdoor};
use crate::error::Groth16Error;
use crate::progress::Progress;

/// Points per parallel task: large enough to amortise a batch normalisation.
const CHUNK: usize = 1024;

/// The CPU engine of a setup with the generators of `t`.
pub(crate) struct CpuEngine {
    g1: G1Projective,
    g2: G2Projective,
}

impl CpuEngine {
    pub(crate) fn new(t: &Trapdoor) -> Self {
        CpuEngine { g1: t.g1, g2: t.g2 }
    }
}

/// `out[i] = scalars[i] · base` with a w-NAF table sized for `scalars.len()` products (the
/// results do not depend on the window).
fn fixed_base<G>(base: G, scalars: &[Scalar], out: &mut [G::AffineRepr], progress: &dyn Progress)
where
    G: Curve<Scalar = Scalar> + WnafGroup + Send + Sync,
    G::AffineRepr: Send,
{
    let mut wnaf = Wnaf::new();
    let table = wnaf.base(base, scalars.len().max(1));
    out.par_chunks_mut(CHUNK).zip(scalars.par_chunks(CHUNK)).for_each(|(out, s)| {
        let mut w = table.shared();
        let proj: Vec<G> = s.iter().map(|k| w.scalar(k)).collect();
        G::batch_normalize(&proj, out);
        progress.inc(out.len() as u64);
    });
}

impl Engine for CpuEngine {
    fn g1(&mut self, scalars: &[Scalar], out: &mut [G1Affine], progress: &dyn Progress) -> Result<(), Groth16Error> {
        fixed_base(self.g1, scalars, out, progress);
        Ok(())
    }

    fn g2(&mut self, scalars: &[Scalar], out: &mut [G2Affine], progress: &dyn Progress) -> Result<(), Groth16Error> {
        fixed_base(self.g2, scalars, out, progress);
        Ok(())
    }

    fn ifft(&mut self, domain: &Domain, values: &mut [Scalar]) -> Result<(), Groth16Error> {
        Ok(kiln_ntt::cpu::ifft(domain, values)?)
    }
}
