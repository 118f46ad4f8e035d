//! The parameter reader on arbitrary bytes: no panic, no hang, no allocation driven by a
//! length field alone, and one property: every file the reader accepts re-encodes to exactly
//! the bytes it was read from. A reader that accepts an encoding it does not write (a point
//! with a flag bit blst ignores, a non-canonical coordinate) reads a point the bytes do not
//! spell out, and a proof made from it does not verify (issue 15, item 1).
//!
//! The first byte picks the check mode; a valid small file is a good seed
//! (`kiln setup --circuit mimc --log-size 4 --out fuzz/corpus/params_reader/seed.params`,
//! then prefix it with one byte).
#![no_main]

use kiln_groth16::{Check, Parameters, VerifyingKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let check = if mode & 1 == 0 { Check::Full } else { Check::NoSubgroup };
    if let Ok(params) = Parameters::from_bytes(rest, check) {
        assert!(params.to_bytes() == rest, "accepted parameters do not re-encode to their bytes");
    }
    if let Ok(vk) = VerifyingKey::from_bytes(rest) {
        assert!(vk.to_bytes() == rest, "accepted verifying key does not re-encode to its bytes");
    }
});
