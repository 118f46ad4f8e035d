//! The proof reader on arbitrary bytes: no panic; every length and byte pattern.
#![no_main]

use kiln_groth16::{PROOF_BYTES, Proof};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Proof::from_bytes(data);
    let n = data.len() / PROOF_BYTES;
    if let Ok(ps) = Proof::read_many(&data[..n * PROOF_BYTES], n) {
        assert_eq!(ps.len(), n);
    }
});
