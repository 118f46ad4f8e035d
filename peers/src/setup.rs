//! Parameter files made as `kiln bench` makes its cached ones (the same circuit seed and
//! toxic-waste seed, so the same bytes), on the CPU. On the GPU machine `kiln setup --backend
//! gpu --setup-seed` [`KILN_BENCH_SETUP_SEED`] makes the same file faster.

use std::path::Path;

use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{NoProgress, Parameters, Trapdoor, setup_with_trapdoor};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::PeerError;

/// The toxic-waste seed of `kiln bench`'s parameter cache ("kiln" in ASCII).
pub const KILN_BENCH_SETUP_SEED: u64 = 0x6b69_6c6e;

/// Parameters for `kind` with 2^`log_size` constraints from the trapdoor of `setup_seed`, as
/// kiln's CLI makes them (circuit seed 0: the witness does not enter the setup).
pub fn parameters(kind: Kind, log_size: u32, setup_seed: u64) -> Result<Parameters, PeerError> {
    let circuit = Builtin::new(kind, 1 << log_size, 0);
    let trapdoor = Trapdoor::random(&mut ChaCha20Rng::seed_from_u64(setup_seed));
    Ok(setup_with_trapdoor(circuit, &trapdoor, &NoProgress)?)
}

/// [`parameters`], written to `out` atomically in bellperson's format.
pub fn write(kind: Kind, log_size: u32, setup_seed: u64, out: &Path) -> Result<Parameters, PeerError> {
    let params = parameters(kind, log_size, setup_seed)?;
    params.write_file(out).map_err(|source| PeerError::Write { path: out.to_path_buf(), source })?;
    Ok(params)
}
