//! Groth16 over BLS12-381: parameters, synthesis, CPU and GPU provers, verifier.
