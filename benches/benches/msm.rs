//! GPU benchmark: msm (filled in by the msm layer).

fn main() {}
