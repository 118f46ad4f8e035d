//! Typed errors. Each variant says what went wrong, where, and what to do about it.

use std::path::PathBuf;

/// Why a point read from a file was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointFault {
    /// The bytes are not a valid encoding of a point on the curve (off the curve, a coordinate
    /// not below the field modulus, or inconsistent flag bits).
    NotOnCurve,
    /// On the curve but not in the prime-order subgroup (only detected in checked mode).
    NotInSubgroup,
    /// The point at infinity, which never appears in valid Groth16 parameters or proofs.
    Infinity,
    /// An uncompressed point (parameter files) with the compression flag (0x80 on its first
    /// byte) set. blst would decode its first half as a compressed point and ignore the rest,
    /// so the file would not say what it is read as: malformed, as for blst's `from_uncompressed`.
    CompressionFlag,
    /// An uncompressed point with the sort flag (0x20 on its first byte) set; the flag means
    /// something only in the compressed form, and blst would silently drop it.
    SortFlag,
    /// A compressed point (proofs) without the compression flag (0x80 on its first byte).
    NotCompressed,
}

impl std::fmt::Display for PointFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointFault::NotOnCurve => "not a valid point on the curve",
            PointFault::NotInSubgroup => "not in the prime-order subgroup",
            PointFault::Infinity => "the point at infinity",
            PointFault::CompressionFlag => "uncompressed point with the compression flag (0x80) set on its first byte",
            PointFault::SortFlag => "uncompressed point with the sort flag (0x20) set on its first byte",
            PointFault::NotCompressed => "compressed point without the compression flag (0x80) on its first byte",
        })
    }
}

/// Errors of the parameter file reader.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    /// Inspecting, opening or mapping the file failed.
    #[error("parameters file {path}: {op} failed: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`stat`, `open`, `map`).
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The path is not a regular file (a directory, a FIFO, a pipe, a device). Parameter
    /// files are mapped into memory and their size must be known; a stream is refused before
    /// it is opened, so that a FIFO without a writer cannot block the reader.
    #[error(
        "parameters file {path} is {what}, not a regular file (kiln maps parameter files into memory: pass the \
         file itself, or save the stream to a file first)"
    )]
    NotRegular {
        /// The path given.
        path: PathBuf,
        /// What it is instead (`a directory`, `a FIFO or pipe`, ...).
        what: &'static str,
    },
    /// The file ends inside a fixed-size field (a point or a length).
    #[error(
        "parameters truncated in section {section} at element {index}, byte offset {offset}: need {needed} bytes, \
         {available} left (the file is incomplete: regenerate or re-download it)"
    )]
    Truncated {
        /// Section name (`vk.alpha_g1`, `vk.ic`, `h`, `l`, `a`, `b_g1`, `b_g2`).
        section: &'static str,
        /// Element index inside the section (0 for single points and lengths).
        index: usize,
        /// Byte offset where the field starts.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the file from `offset`.
        available: usize,
    },
    /// A section's length field claims more points than the rest of the file can hold.
    #[error(
        "parameters section {section}: length field at byte offset {offset} says {count} points ({bytes} bytes) but \
         only {available} bytes follow (corrupt or truncated file)"
    )]
    SectionLength {
        /// Section name.
        section: &'static str,
        /// Byte offset of the length field.
        offset: usize,
        /// Points the length field claims.
        count: u64,
        /// Bytes those points need.
        bytes: u64,
        /// Bytes left after the length field.
        available: usize,
    },
    /// A point failed validation.
    #[error("parameters section {section}, element {index}, byte offset {offset}: {fault} (corrupt or forged file)")]
    BadPoint {
        /// Section name.
        section: &'static str,
        /// Element index inside the section.
        index: usize,
        /// Byte offset of the point.
        offset: usize,
        /// What is wrong with it.
        fault: PointFault,
    },
    /// Bytes after the last section.
    #[error("parameters: {count} unexpected bytes after the last section at byte offset {offset} (corrupt file)")]
    TrailingBytes {
        /// Where the extra bytes start.
        offset: usize,
        /// How many there are.
        count: usize,
    },
}

/// Errors of proof decoding.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// Reading proof bytes from a stream failed.
    #[error("reading proof bytes failed: {0}")]
    Io(#[source] std::io::Error),
    /// A stream holds more bytes than the expected proofs need.
    #[error(
        "more than the {expected} bytes that {count} proof(s) need (a longer file holds more proofs than expected, \
         or is not a proof file)"
    )]
    TooLong {
        /// Proofs expected.
        count: usize,
        /// Bytes they need.
        expected: usize,
    },
    /// Proof bytes must be exactly 192 per proof (G1 48 + G2 96 + G1 48, compressed).
    #[error("proof bytes: expected {expected} bytes, got {got}")]
    Length {
        /// Bytes expected.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// One of A, B, C is invalid.
    #[error("proof {proof}, element {element}: {fault}")]
    BadPoint {
        /// Index of the proof in a batch.
        proof: usize,
        /// `a`, `b` or `c`.
        element: &'static str,
        /// What is wrong with it.
        fault: PointFault,
    },
}

/// Errors of writing an output file (proofs, parameters) with [`crate::atomic`].
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file system operation failed.
    #[error("output {path}: {op} failed: {source}")]
    Io {
        /// The path the operation was on (the output, its folder or its temporary file).
        path: PathBuf,
        /// What was being done (`stat`, `create temporary file`, `write`, `sync`, `rename`, ...).
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The output exists and is not a regular file (or a symlink to one). Replacing it would
    /// turn a device node, a FIFO or a directory into a regular file.
    #[error("output {path} is {what}: kiln writes only to a regular file or a new path (choose another output path)")]
    NotRegular {
        /// The output path.
        path: PathBuf,
        /// What it is (`a directory`, `a character device`, `a symlink to a directory`, ...).
        what: String,
    },
    /// The output is one of the inputs (the same file, also through a hard or symbolic link):
    /// writing would destroy the input.
    #[error(
        "output {path} is the same file as the input {input}: writing it would destroy the input (choose another \
         output path)"
    )]
    SameAsInput {
        /// The output path.
        path: PathBuf,
        /// The input it is the same file as.
        input: PathBuf,
    },
}

/// Errors of synthesis, setup and proving.
#[derive(Debug, thiserror::Error)]
pub enum Groth16Error {
    /// The circuit's `synthesize` failed.
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] bellpepper_core::SynthesisError),
    /// The circuit does not fit the parameters (more constraints, other variables or densities).
    #[error(
        "circuit does not match the parameters: {what} is {circuit} for the circuit but {params} in the parameters \
         (the parameters were made for another circuit or size: run setup for this one)"
    )]
    ParamsMismatch {
        /// Which quantity differs.
        what: &'static str,
        /// The circuit's value.
        circuit: usize,
        /// The parameters' value.
        params: usize,
    },
    /// The circuits of one batch must have the same shape.
    #[error("batch circuit {index} differs from circuit 0 in {what} ({got} vs {expected}): batch only equal circuits")]
    BatchShape {
        /// The offending circuit.
        index: usize,
        /// Which quantity differs.
        what: &'static str,
        /// Its value in circuit `index`.
        got: usize,
        /// Its value in circuit 0.
        expected: usize,
    },
    /// The witness does not satisfy constraint `constraint` (found by the satisfaction check).
    #[error(
        "circuit {circuit} is not satisfied: constraint {constraint} has a·b ≠ c (fix the witness; no proof was made)"
    )]
    Unsatisfied {
        /// Index of the circuit in the batch.
        circuit: usize,
        /// First unsatisfied constraint (including bellperson's trailing input constraints).
        constraint: usize,
    },
    /// More constraints than the field's two-adicity allows.
    #[error("{constraints} constraints need a domain of 2^{log_n}, beyond BLS12-381 Fr's 2^32")]
    TooLarge {
        /// Constraints, including input constraints.
        constraints: usize,
        /// log2 of the domain needed.
        log_n: u32,
    },
    /// Given randomness vectors have the wrong length.
    #[error("randomness: {got} (r, s) pairs for {circuits} circuits")]
    Randomness {
        /// Pairs given.
        got: usize,
        /// Circuits in the batch.
        circuits: usize,
    },
    /// A trapdoor was zero during setup (or delta is the identity in the parameters).
    #[error("setup: {0} is zero or the identity (use a proper random source)")]
    Degenerate(&'static str),
    /// A variable appears in no constraint, so its L element would be the identity.
    #[error("setup: aux variable {0} is unconstrained (every variable must appear in some constraint)")]
    Unconstrained(usize),
    /// A witness or an output buffer does not fit the recorded shape it is evaluated against
    /// ([`crate::recorded::Shape`]).
    #[error(
        "recorded shape mismatch: {what} is {got} but the recorded shape has {expected} (the witness comes from \
         another circuit or size, or the buffer is sized for one: record this circuit's shape)"
    )]
    ShapeMismatch {
        /// Which quantity differs.
        what: &'static str,
        /// The witness's (or buffer's) value.
        got: usize,
        /// The recorded shape's value.
        expected: usize,
    },
    /// Recording a circuit's shape hit a limit of the compact encoding.
    #[error("recording the circuit's shape: {what} reached {count}, beyond the compact encoding's limit of {limit}")]
    ShapeLimit {
        /// Which quantity overflowed.
        what: &'static str,
        /// Its value.
        count: usize,
        /// The largest value the encoding holds.
        limit: usize,
    },
    /// A constraint names a variable that was not allocated (yet) when it was enforced.
    #[error(
        "constraint {constraint} uses {kind} variable {index}, but only {allocated} {kind} variables were allocated \
         at that point (a bug in the circuit)"
    )]
    UnallocatedVariable {
        /// The constraint.
        constraint: usize,
        /// `input` or `aux`.
        kind: &'static str,
        /// The variable's index.
        index: usize,
        /// Variables of that kind allocated when the constraint was enforced.
        allocated: usize,
    },
    /// The H step failed.
    #[error("H step: {0}")]
    Ntt(#[from] kiln_ntt::NttError),
    /// An MSM failed.
    #[error("MSM: {0}")]
    Msm(#[from] kiln_msm::MsmError),
    /// A proof failed verification before it was handed out: the parameters do not belong to
    /// the verifying key, the circuit's densities differ from the setup's, or the device
    /// computed wrongly. No proof of the batch is returned.
    #[error(
        "proof {circuit} made by {prover} does not verify: the parameters are inconsistent (a corrupt or foreign \
         parameter file, or a circuit whose shape differs from the one they were made for) or the device computed \
         wrongly (run `kiln prove --backend cpu` to tell which); no proof was returned"
    )]
    ProofRejected {
        /// Index of the circuit in the batch.
        circuit: usize,
        /// The prover's name ("cpu", "cuda:0", ...).
        prover: String,
    },
    /// A verification failed to run (wrong number of public inputs).
    #[error("verifying the new proof: {0}")]
    Verify(#[from] VerifyError),
    /// The GPU prover could not start or failed on the device.
    #[cfg(feature = "cuda")]
    #[error("GPU prover: {0}")]
    Cuda(#[from] kiln_cuda::CudaError),
    /// No VRAM plan fits on the device.
    #[cfg(feature = "cuda")]
    #[error("GPU prover: {0}")]
    Plan(Box<kiln_vram::PlanError>),
    /// The VRAM plan's provisioning failed.
    #[cfg(feature = "cuda")]
    #[error("GPU prover: {0}")]
    Vram(Box<kiln_vram::VramError>),
    /// The device's lock policy refused an operation (a bug in the caller's phase order).
    #[cfg(feature = "cuda")]
    #[error("GPU prover: {0}")]
    Lock(#[from] kiln_lock::LockError),
}

/// Errors of verification (a proof that does not verify is `Ok(false)`, not an error).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    /// The verifying key expects `expected` public inputs (not counting the constant ONE).
    #[error("verifying key expects {expected} public inputs, got {got}")]
    InputCount {
        /// Inputs the key was made for.
        expected: usize,
        /// Inputs given.
        got: usize,
    },
    /// Batch verification of proofs and input sets of different lengths.
    #[error("batch: {proofs} proofs but {inputs} input sets")]
    BatchLength {
        /// Proofs given.
        proofs: usize,
        /// Input sets given.
        inputs: usize,
    },
}

impl Groth16Error {
    /// Whether the device that made this error is lost to this process: a sticky CUDA error
    /// (a kernel fault), directly or from the NTT or MSM layer. Its prover proves nothing more;
    /// a scheduler retires it and goes on with the others. Always `false` without `cuda`.
    pub fn is_device_lost(&self) -> bool {
        #[cfg(feature = "cuda")]
        {
            let cuda = match self {
                Groth16Error::Cuda(e) => Some(e),
                Groth16Error::Msm(kiln_msm::MsmError::Cuda(e)) => Some(e),
                Groth16Error::Ntt(kiln_ntt::NttError::Cuda(e)) => Some(e),
                _ => None,
            };
            cuda.is_some_and(kiln_cuda::CudaError::is_sticky)
        }
        #[cfg(not(feature = "cuda"))]
        false
    }
}

// Boxed: the plan's messages are long, and every Result of the crate carries the error's size.
#[cfg(feature = "cuda")]
impl From<kiln_vram::PlanError> for Groth16Error {
    fn from(e: kiln_vram::PlanError) -> Self {
        Groth16Error::Plan(Box::new(e))
    }
}

#[cfg(feature = "cuda")]
impl From<kiln_vram::VramError> for Groth16Error {
    fn from(e: kiln_vram::VramError) -> Self {
        Groth16Error::Vram(Box::new(e))
    }
}
