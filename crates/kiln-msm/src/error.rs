//! The one error type of kiln-msm.

/// What can go wrong in an MSM. Each variant says what the caller must fix.
#[derive(Debug, thiserror::Error)]
pub enum MsmError {
    /// `bases` and `scalars` must have the same length.
    #[error("msm: {bases} bases but {scalars} scalars (pass one scalar per base)")]
    LengthMismatch {
        /// Number of bases given.
        bases: usize,
        /// Number of scalars given.
        scalars: usize,
    },
    /// With a density mask: one scalar per variable and one base per set bit.
    #[error(
        "msm with density: density covers {density_len} variables with {density_ones} set, but got {scalars} scalars \
         and {bases} bases (need scalars == density.len() and bases == density.count_ones())"
    )]
    DensityMismatch {
        /// `density.len()`.
        density_len: usize,
        /// `density.count_ones()`.
        density_ones: usize,
        /// Number of scalars given.
        scalars: usize,
        /// Number of bases given.
        bases: usize,
    },
    /// The call needs more elements than a GPU plan was built for.
    #[error("msm: {n} points exceed this context's capacity of {capacity} (build a larger MsmContext)")]
    TooLarge {
        /// Points asked for.
        n: usize,
        /// Points the context was planned for.
        capacity: usize,
    },
    /// A device-side argument does not fit (caller bug), e.g. a device slice of the wrong length.
    #[error("msm: invalid argument: {0}")]
    InvalidArgument(String),
    /// Device words that are not whole values of the type asked for (kiln-field's layout).
    #[error(transparent)]
    Layout(#[from] kiln_field::LayoutError),
    /// The CUDA runtime failed.
    #[error(transparent)]
    #[cfg(feature = "cuda")]
    Cuda(#[from] kiln_cuda::CudaError),
}
