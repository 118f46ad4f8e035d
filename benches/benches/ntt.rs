//! GPU benchmark: ntt (filled in by the ntt layer).

fn main() {}
