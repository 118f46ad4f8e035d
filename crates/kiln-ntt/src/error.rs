//! The error type of the NTT layer.

/// What can go wrong building a domain or running a transform. Each variant says what to do.
#[derive(Debug, thiserror::Error)]
pub enum NttError {
    /// The domain would be larger than kiln supports (2^28 points).
    #[error(
        "domain of 2^{log_n} points is larger than the supported 2^{max}: split the circuit or use fewer constraints"
    )]
    TooLarge {
        /// The log2 size that was asked for.
        log_n: u32,
        /// The largest supported log2 size.
        max: u32,
    },
    /// A buffer's length is not the domain size the transform expects.
    #[error("{what}: length {got} does not match the domain size {expected}: pass exactly {expected} elements")]
    LengthMismatch {
        /// Which buffer and operation.
        what: &'static str,
        /// The domain size.
        expected: usize,
        /// The length that was passed.
        got: usize,
    },
    /// An input is longer than the domain it is to be padded to.
    #[error("{what}: {len} elements do not fit a domain of {size}: build the domain with Domain::for_size({len})")]
    InputTooLong {
        /// Which input.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The domain size.
        size: usize,
    },
    /// [`crate::gpu::HostInput::ProductOfAB`] given for a or b.
    #[error("{what}: only c can be formed on the device as a∘b; give a and b as host input")]
    MisplacedProduct {
        /// Which input.
        what: &'static str,
    },
    /// A host buffer of `u64` words does not hold a whole number of scalars.
    #[error(transparent)]
    Layout(#[from] kiln_field::LayoutError),
    /// A CUDA call failed on the GPU path.
    #[error(transparent)]
    #[cfg(feature = "cuda")]
    Cuda(#[from] kiln_cuda::CudaError),
}
