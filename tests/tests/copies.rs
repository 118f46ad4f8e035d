//! Files kept as byte-equal copies so that each crate builds from its own folder (and can be
//! packaged alone): the copy a crate embeds must match the original the kernels compile.

use std::path::Path;

/// `(original, copy)`, relative to the workspace root.
const COPIES: &[(&str, &str)] =
    &[("crates/kiln-kernels/kernels/field/constants.cuh", "crates/kiln-field/src/constants.cuh")];

#[test]
fn copies_match_their_originals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (original, copy) in COPIES {
        let read = |p: &str| std::fs::read(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(
            read(original) == read(copy),
            "{copy} differs from {original}: edit one, then `cp {original} {copy}` (or the other way)"
        );
    }
}
