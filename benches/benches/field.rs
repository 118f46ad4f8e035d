//! GPU benchmark: field (filled in by the field layer).

fn main() {}
