//! The 0/1/other path: classify scalars on the device, then sum the bases whose scalar is 1
//! by batch addition and run the MSM over the compacted tail only.

use blstrs::{G1Projective, G2Projective};
use kiln_cuda::cudarc::driver::PushKernelArg;
use kiln_cuda::{CudaResultExt, check_stream};

use super::{MsmContext, NULL, grid, mark, point, scalar_view, u32_of};
use crate::MsmError;
use crate::gpu::Curve;
use crate::gpu::bases::{GpuBases, Scalars};
use crate::gpu::plan::{ONES_THREADS, ones_fold_levels, ones_fold_rest};

/// A device-side 0/1/other split of one scalar vector (see [`crate::split`]); lives in the
/// context that made it and is invalidated by that context's next `split` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuSplit {
    /// Number of scalars classified.
    pub n: usize,
    /// How many are 1.
    pub ones: usize,
    /// How many are neither 0 nor 1 (the tail).
    pub others: usize,
    id: u64,
}

impl MsmContext {
    /// Classifies `scalars` into 0 / 1 / other on the device (bitmaps, compacted index lists
    /// and the compacted tail scalars), for [`Self::msm_g1_split`] / [`Self::msm_g2_split`] over
    /// any number of base sets. One small device→host copy (the two counts).
    pub fn split(&mut self, scalars: Scalars<'_>) -> Result<GpuSplit, MsmError> {
        let n = scalars.len();
        self.check_n(n)?;
        self.split_id += 1;
        if n == 0 {
            return Ok(GpuSplit { n, ones: 0, others: 0, id: self.split_id });
        }
        let staged = self.stage(scalars)?;
        let n32 = u32_of(n, "n")?;
        self.stream.memset_zeros(&mut *self.split_counts).ctx("cuMemsetD8Async(split counts)")?;
        let sv = scalar_view(&staged, &self.scalars, n);
        launch!(self, classify, grid(n, 1), "msm_classify";
            &sv, &n32, &mut *self.zero_bits, &mut *self.one_bits, &mut *self.ones_idx, &mut *self.others_idx,
            &mut *self.split_counts);
        let counts = self.stream.clone_dtoh(&*self.split_counts).ctx("cuMemcpyDtoH(split counts)")?;
        check_stream(&self.stream)?;
        let (ones, others) = (counts[0] as usize, counts[1] as usize);
        if ones + others > n {
            return Err(MsmError::InvalidArgument(format!("split counts {ones} + {others} > {n}: kernel bug")));
        }
        let others_count = self.split_counts.slice(1..2);
        launch!(self, gather, grid(others, 1), "msm_gather_scalars";
            &sv, &*self.others_idx, &others_count, &mut *self.tail_scalars);
        Ok(GpuSplit { n, ones, others, id: self.split_id })
    }

    /// The device bitmaps of the last split: `(zeros, ones)`, one bit per scalar, 32 per word.
    pub fn split_bitmaps(&self, split: &GpuSplit) -> Result<(Vec<u32>, Vec<u32>), MsmError> {
        self.check_split(split)?;
        let words = split.n.div_ceil(32);
        let z = self.stream.clone_dtoh(&self.zero_bits.slice(0..words)).ctx("cuMemcpyDtoH(zero bits)")?;
        let o = self.stream.clone_dtoh(&self.one_bits.slice(0..words)).ctx("cuMemcpyDtoH(one bits)")?;
        check_stream(&self.stream)?;
        Ok((z, o))
    }

    fn check_split(&self, split: &GpuSplit) -> Result<(), MsmError> {
        if split.id != self.split_id {
            return Err(MsmError::InvalidArgument(
                "this GpuSplit was made by another context or overwritten by a later split: split again".into(),
            ));
        }
        Ok(())
    }

    fn split_raw(&mut self, bases: &GpuBases, split: &GpuSplit) -> Result<Vec<u64>, MsmError> {
        self.check_split(split)?;
        self.check_bases(bases, self.curve)?;
        if bases.n != split.n {
            return Err(MsmError::LengthMismatch { bases: bases.n, scalars: split.n });
        }
        if split.ones == 0 && split.others == 0 {
            // Every scalar is 0 (or there is none): the identity. Not left to the kernels: an
            // empty split never wrote the device counts they would read.
            return Ok(vec![0; self.curve.jacobian_bytes() / 8]);
        }
        // The ones: partial sums over ONES_THREADS threads, folded as a tree to a few, summed.
        let (p, one) = (ONES_THREADS as u32, 1u32);
        launch!(self, sum_indexed, grid(ONES_THREADS, 1), "msm_sum_indexed";
            &*bases.buf, &*self.ones_idx, &*self.split_counts, &p, &mut *self.ones_partials);
        for (len, fan) in ones_fold_levels() {
            let (len, fan) = (u32_of(len, "fold len")?, u32_of(fan, "fold fan")?);
            launch!(self, fold, grid(fan as usize, 1), "msm_fold"; &mut *self.ones_partials, &len, &fan);
        }
        let rest = u32_of(ones_fold_rest(), "fold rest")?;
        launch!(self, sum_groups, grid(1, 1), "msm_sum_groups";
            &*self.ones_partials, &mut *self.ones_sum, &rest, &one, &one);
        if split.others == 0 {
            // Only the ones: combine one "window" holding their sum.
            launch!(self, combine, grid(1, 1), "msm_combine"; &*self.ones_sum, &one, &one, &NULL, &mut *self.out);
            return self.result();
        }
        let plan = self.plan(split.others);
        self.sort(&plan, None)?;
        self.reduce(&plan, bases, true)
    }

    /// Σ scalars[i]·bases[i] in G1 through a split: batch sum of the bases whose scalar is 1
    /// plus the MSM of the compacted tail (bases gathered by index, never copied).
    pub fn msm_g1_split(&mut self, bases: &GpuBases, split: &GpuSplit) -> Result<G1Projective, MsmError> {
        self.check_bases(bases, Curve::G1)?;
        point(&self.split_raw(bases, split)?)
    }

    /// The G2 form of [`Self::msm_g1_split`].
    pub fn msm_g2_split(&mut self, bases: &GpuBases, split: &GpuSplit) -> Result<G2Projective, MsmError> {
        self.check_bases(bases, Curve::G2)?;
        point(&self.split_raw(bases, split)?)
    }
}
