//! Multi-scalar multiplication in G1 and G2 on CPU and GPU.
