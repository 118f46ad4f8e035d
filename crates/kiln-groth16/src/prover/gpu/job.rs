//! One proof's inputs to the GPU path, from a synthesized [`Assignment`] or a recorded shape.

use blstrs::Scalar;
use kiln_msm::Density;
use rayon::prelude::*;

use crate::error::Groth16Error;
use crate::recorded::{Shape, Witness};
use crate::synth::Assignment;

/// Where a proof's a and b come from (c is formed on the device as a∘b).
pub(super) enum Ab<'a> {
    /// Vectors already evaluated (copied into the pinned buffers).
    Vectors(&'a [Scalar], &'a [Scalar]),
    /// A recorded shape's products, evaluated straight into the pinned buffers.
    Recorded(&'a Shape),
}

/// One proof's inputs to the GPU path.
pub(super) struct Job<'a> {
    pub(super) input: &'a [Scalar],
    pub(super) aux: &'a [Scalar],
    pub(super) ab: Ab<'a>,
    /// The variables with a base in A's aux part, B's input part and B's aux part.
    pub(super) a_aux: &'a Density,
    pub(super) b_input: &'a Density,
    pub(super) b_aux: &'a Density,
}

impl<'a> Job<'a> {
    pub(super) fn assigned(asg: &'a Assignment) -> Job<'a> {
        Job {
            input: &asg.input,
            aux: &asg.aux,
            ab: Ab::Vectors(&asg.a, &asg.b),
            a_aux: &asg.a_aux_density,
            b_input: &asg.b_input_density,
            b_aux: &asg.b_aux_density,
        }
    }

    pub(super) fn recorded(shape: &'a Shape, w: &'a Witness) -> Job<'a> {
        Job {
            input: &w.input,
            aux: &w.aux,
            ab: Ab::Recorded(shape),
            a_aux: shape.a_aux_density(),
            b_input: shape.b_input_density(),
            b_aux: shape.b_aux_density(),
        }
    }
}

/// `dst` = `head` then the values of `src` set in `density` (all of `src` when `None`), in
/// parallel. `dst` is sized for the parameters' query (`what`): a witness of another shape is
/// an error, not a short or overlong write.
pub(super) fn gather_into(
    dst: &mut [Scalar],
    head: impl ExactSizeIterator<Item = Scalar>,
    src: &[Scalar],
    density: Option<&Density>,
    what: &'static str,
) -> Result<(), Groth16Error> {
    let tail = density.map_or(src.len(), Density::count_ones);
    if head.len() + tail != dst.len() {
        return Err(Groth16Error::ParamsMismatch { what, circuit: head.len() + tail, params: dst.len() });
    }
    let (h, rest) = dst.split_at_mut(head.len());
    for (d, v) in h.iter_mut().zip(head) {
        *d = v;
    }
    match density {
        None => {
            const PIECE: usize = 1 << 13;
            rest.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
        }
        Some(density) => density.gather_into(src, rest)?,
    }
    Ok(())
}
