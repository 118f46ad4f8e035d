//! A job: how to get one circuit's witness, its randomness, and an optional deadline.

use std::time::Instant;

use bellpepper_core::Circuit;
use ff::Field;
use kiln_groth16::{Groth16Error, Scalar, Shape, Witness};
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;

/// A job's id, unique within its [`crate::Scheduler`] (handed out at submission).
pub type JobId = u64;

/// Makes one circuit's witness through the batch's recorded shape (on the CPU stage).
pub type WitnessFn = Box<dyn FnOnce(&Shape) -> Result<Witness, Groth16Error> + Send + 'static>;

/// The proof's randomness (r, s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Randomness {
    /// These r and s (tests, cross-checks, reproducible proofs).
    Given(Scalar, Scalar),
    /// r then s drawn from ChaCha20 seeded with this value (like `create_proofs` draws them
    /// from its RNG). Only for tests and benchmarks: a seed others can guess makes r and s
    /// guessable, and with them the witness leaks from the proof.
    Seed(u64),
}

impl Randomness {
    /// The (r, s) this stands for.
    pub fn resolve(&self) -> (Scalar, Scalar) {
        match *self {
            Randomness::Given(r, s) => (r, s),
            Randomness::Seed(seed) => {
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                let r = Scalar::random(&mut rng);
                (r, Scalar::random(&mut rng))
            }
        }
    }
}

/// One proof to make: its witness generator, its (r, s) and an optional deadline.
pub struct Job {
    pub(crate) witness: WitnessFn,
    pub(crate) randomness: Randomness,
    pub(crate) deadline: Option<Instant>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("randomness", &self.randomness).field("deadline", &self.deadline).finish()
    }
}

impl Job {
    /// A job proving `circuit`: its witness is generated through the batch's shape
    /// ([`Shape::witness`]), so the circuit must have that shape.
    pub fn new<C: Circuit<Scalar> + Send + 'static>(circuit: C, randomness: Randomness) -> Job {
        Job::from_witness_fn(Box::new(move |shape: &Shape| shape.witness(circuit)), randomness)
    }

    /// A job whose witness comes from `witness` (any generator: a circuit run some other way,
    /// a witness read from disk). It runs on the CPU stage.
    pub fn from_witness_fn(witness: WitnessFn, randomness: Randomness) -> Job {
        Job { witness, randomness, deadline: None }
    }

    /// Fails the job with [`crate::JobError::DeadlineExpired`] instead of proving it if
    /// `deadline` has passed when a stage picks it up. Proving already started is not
    /// interrupted: a prover cannot be stopped halfway without leaving its lane unknown.
    pub fn with_deadline(mut self, deadline: Instant) -> Job {
        self.deadline = Some(deadline);
        self
    }
}
