//! One proof's inputs to the GPU path, from a synthesized [`Assignment`] or a recorded shape.

use blstrs::Scalar;
use kiln_msm::Density;
use rayon::prelude::*;

use crate::error::Groth16Error;
use crate::recorded::{Shape, Witness};
use crate::synth::Assignment;

/// The positions of the set bits of the A and B densities (over aux, and B's over inputs):
/// the gathers of a proof's A and B scalars run in parallel over them.
#[derive(Clone)]
pub(super) struct DenseIndex {
    pub(super) a_aux: Vec<u32>,
    pub(super) b_input: Vec<u32>,
    pub(super) b_aux: Vec<u32>,
}

impl DenseIndex {
    pub(super) fn of(a_aux: &Density, b_input: &Density, b_aux: &Density) -> DenseIndex {
        let idx = |d: &Density| d.iter_ones().map(|i| i as u32).collect();
        DenseIndex { a_aux: idx(a_aux), b_input: idx(b_input), b_aux: idx(b_aux) }
    }
}

/// Where a proof's a, b, c come from.
pub(super) enum Abc<'a> {
    /// Vectors already evaluated (copied into the pinned buffers).
    Vectors(&'a [Scalar], &'a [Scalar], &'a [Scalar]),
    /// A recorded shape's products, evaluated straight into the pinned buffers.
    Recorded(&'a Shape),
}

/// One proof's inputs to the GPU path.
pub(super) struct Job<'a> {
    pub(super) input: &'a [Scalar],
    pub(super) aux: &'a [Scalar],
    pub(super) abc: Abc<'a>,
    pub(super) dense: std::borrow::Cow<'a, DenseIndex>,
}

impl<'a> Job<'a> {
    pub(super) fn assigned(asg: &'a Assignment) -> Job<'a> {
        Job {
            input: &asg.input,
            aux: &asg.aux,
            abc: Abc::Vectors(&asg.a, &asg.b, &asg.c),
            dense: std::borrow::Cow::Owned(DenseIndex::of(
                &asg.a_aux_density,
                &asg.b_input_density,
                &asg.b_aux_density,
            )),
        }
    }

    pub(super) fn recorded(shape: &'a Shape, w: &'a Witness, dense: &'a DenseIndex) -> Job<'a> {
        Job { input: &w.input, aux: &w.aux, abc: Abc::Recorded(shape), dense: std::borrow::Cow::Borrowed(dense) }
    }
}

/// `dst` = `head` then `src[i]` for each index of `idx` (all of `src` when `None`), in
/// parallel. `dst` is sized for the parameters' query (`what`): a witness of another shape is
/// an error, not a short or overlong write.
pub(super) fn gather_into(
    dst: &mut [Scalar],
    head: impl ExactSizeIterator<Item = Scalar>,
    src: &[Scalar],
    idx: Option<&[u32]>,
    what: &'static str,
) -> Result<(), Groth16Error> {
    let tail = idx.map_or(src.len(), <[u32]>::len);
    if head.len() + tail != dst.len() {
        return Err(Groth16Error::ParamsMismatch { what, circuit: head.len() + tail, params: dst.len() });
    }
    let (h, rest) = dst.split_at_mut(head.len());
    for (d, v) in h.iter_mut().zip(head) {
        *d = v;
    }
    const PIECE: usize = 1 << 13;
    match idx {
        None => rest.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s)),
        Some(idx) => rest.par_chunks_mut(PIECE).zip(idx.par_chunks(PIECE)).for_each(|(d, ix)| {
            for (d, &i) in d.iter_mut().zip(ix) {
                *d = src[i as usize];
            }
        }),
    }
    Ok(())
}
