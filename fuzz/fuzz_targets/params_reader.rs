//! The parameter reader on arbitrary bytes: no panic, no hang, no allocation driven by a
//! length field alone. The first byte picks the check mode; a valid small file is a good
//! seed (`kiln setup --log-size 4 --out fuzz/corpus/params_reader/seed.params`).
#![no_main]

use kiln_groth16::{Check, Parameters, VerifyingKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let check = if mode & 1 == 0 { Check::Full } else { Check::NoSubgroup };
    let _ = Parameters::from_bytes(rest, check);
    let _ = VerifyingKey::from_bytes(rest);
});
