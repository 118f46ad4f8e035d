//! Radix-2 NTT over BLS12-381 Fr on CPU and GPU, and the Groth16 H step.
