//! The CPU prover: kiln-ntt's CPU H step and kiln-msm's CPU MSMs (blst's Pippenger).

use std::sync::Arc;

use super::{Prover, Sums, Timings, timed};
use crate::error::Groth16Error;
use crate::params::Parameters;
use crate::synth::Assignment;

/// Proves on the CPU, anywhere. The reference the GPU prover is checked against.
#[derive(Debug, Clone)]
pub struct CpuProver {
    params: Arc<Parameters>,
}

impl CpuProver {
    /// A prover over `params` (an `Arc` shares them with other provers without a copy).
    pub fn new(params: impl Into<Arc<Parameters>>) -> Self {
        CpuProver { params: params.into() }
    }
}

impl Prover for CpuProver {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn parameters(&self) -> &Parameters {
        &self.params
    }

    fn sums(&self, assignments: &[Assignment], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        assignments.iter().map(|asg| self.sums_one(asg, t)).collect()
    }
}

impl CpuProver {
    fn sums_one(&self, asg: &Assignment, t: &mut Timings) -> Result<Sums, Groth16Error> {
        let p = &*self.params;
        let num_inputs = asg.input.len();
        let h = timed(&mut t.h_poly, || -> Result<_, Groth16Error> {
            let domain = kiln_ntt::Domain::for_size(asg.a.len())?;
            let mut h = kiln_ntt::cpu::h_poly(&domain, asg.a.clone(), asg.b.clone(), asg.c.clone())?;
            h.truncate(domain.size() - 1);
            Ok(h)
        })?;
        let (h_sum, l_sum) = timed(&mut t.msm_h_l, || -> Result<_, Groth16Error> {
            Ok((kiln_msm::cpu::msm_g1(&p.h, &h)?, kiln_msm::cpu::msm_g1(&p.l, &asg.aux)?))
        })?;
        drop(h);
        let b_in = asg.b_input_density.count_ones();
        let (a_sum, b1_sum) = timed(&mut t.msm_a_b_g1, || -> Result<_, Groth16Error> {
            // Inputs are dense in A (input constraints), so A's input part is a plain MSM.
            let a = kiln_msm::cpu::msm_g1(&p.a[..num_inputs], &asg.input)?
                + kiln_msm::cpu::msm_g1_with_density(&p.a[num_inputs..], &asg.a_aux_density, &asg.aux)?;
            let b = kiln_msm::cpu::msm_g1_with_density(&p.b_g1[..b_in], &asg.b_input_density, &asg.input)?
                + kiln_msm::cpu::msm_g1_with_density(&p.b_g1[b_in..], &asg.b_aux_density, &asg.aux)?;
            Ok((a, b))
        })?;
        let b2_sum = timed(&mut t.msm_b_g2, || -> Result<_, Groth16Error> {
            Ok(kiln_msm::cpu::msm_g2_with_density(&p.b_g2[..b_in], &asg.b_input_density, &asg.input)?
                + kiln_msm::cpu::msm_g2_with_density(&p.b_g2[b_in..], &asg.b_aux_density, &asg.aux)?)
        })?;
        Ok(Sums { a: a_sum, b_g1: b1_sum, b_g2: b2_sum, h: h_sum, l: l_sum })
    }
}
