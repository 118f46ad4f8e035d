//! BLS12-381 field and curve types (blstrs), their device layout and GPU arithmetic.
