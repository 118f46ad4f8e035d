//! The proof reader on arbitrary bytes: no panic, every length and byte pattern, and one
//! property: every proof the reader accepts re-encodes to exactly the bytes it was read from
//! (the same property as `params_reader`). The stream reader must agree with the slice reader
//! and never read past the proofs it was asked for plus one byte.
#![no_main]

use kiln_groth16::{PROOF_BYTES, Proof};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Proof::from_bytes(data) {
        assert!(p.to_bytes()[..] == data[..], "accepted proof does not re-encode to its bytes");
    }
    let n = data.len() / PROOF_BYTES;
    let whole = &data[..n * PROOF_BYTES];
    let from_slice = Proof::read_many(whole, n);
    if let Ok(ps) = &from_slice {
        assert_eq!(ps.len(), n);
        let bytes: Vec<u8> = ps.iter().flat_map(|p| p.to_bytes()).collect();
        assert!(bytes == whole, "accepted proofs do not re-encode to their bytes");
    }
    // The stream reader on the whole input: accepts exactly when the slice reader does on
    // the same bytes (a remainder makes it too long), and reads at most n proofs + 1 byte.
    let mut stream = data;
    let from_stream = Proof::read_from(&mut stream, n);
    assert!(data.len() - stream.len() <= n * PROOF_BYTES + 1, "read past the proofs asked for");
    match (&from_slice, &from_stream) {
        (Ok(a), Ok(b)) => assert!(a == b && data.len() == whole.len()),
        (Ok(_), Err(_)) => assert!(data.len() > whole.len(), "stream reader refused what the slice reader read"),
        (Err(_), Ok(_)) => panic!("stream reader accepted what the slice reader refused"),
        (Err(_), Err(_)) => {}
    }
});
