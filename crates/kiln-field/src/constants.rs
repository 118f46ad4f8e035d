//! Domain constants, from the file the kernels include: `constants.cuh` (this crate's copy of
//! kiln-kernels' `kernels/field/constants.cuh`, kept byte-equal by `tests/tests/copies.rs`).
//!
//! The header is embedded at compile time and parsed here, so host and device cannot
//! disagree; this crate's tests check every constant against blstrs/ff.
//!
//! ```
//! use ff::PrimeField;
//! use kiln_field::{Scalar, constants};
//! assert_eq!(constants::scalar("FR_ROOT_OF_UNITY"), Some(Scalar::ROOT_OF_UNITY));
//! ```

use blstrs::{Fp, Scalar};

use crate::DeviceLayout;

/// The text of `constants.cuh` (the same bytes as kiln-kernels' `kernels/field/constants.cuh`).
pub const HEADER: &str = include_str!("constants.cuh");

/// Every `#define NAME[_LIMBS] 0x...u, ...` of the header: (name without `_LIMBS`, 32-bit
/// limbs little-endian). A scalar `#define NAME 0x...u` gives one limb.
pub fn all() -> Vec<(&'static str, Vec<u32>)> {
    HEADER
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("#define ")?;
            let (name, value) = rest.split_once(char::is_whitespace)?;
            let name = name.strip_suffix("_LIMBS").unwrap_or(name);
            let limbs: Option<Vec<u32>> = value.split(',').map(parse_u32).collect();
            Some((name, limbs?))
        })
        .collect()
}

fn parse_u32(s: &str) -> Option<u32> {
    let s = s.trim().trim_end_matches('u');
    match s.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The 32-bit limbs of constant `name` (e.g. `"FR_MODULUS"`, `"FP_M0"`), little-endian.
pub fn limbs_u32(name: &str) -> Option<Vec<u32>> {
    all().into_iter().find(|(n, _)| *n == name).map(|(_, l)| l)
}

/// The same limbs as 64-bit words (blst's layout), little-endian; `None` for an odd count.
pub fn limbs_u64(name: &str) -> Option<Vec<u64>> {
    let l = limbs_u32(name)?;
    if l.len() % 2 != 0 {
        return None;
    }
    Some(l.chunks(2).map(|c| u64::from(c[0]) | (u64::from(c[1]) << 32)).collect())
}

/// An 8-limb constant as a [`Scalar`], taking the limbs as blst's internal (Montgomery)
/// words: right for the constants the header documents as "Montgomery form".
pub fn scalar(name: &str) -> Option<Scalar> {
    let w = limbs_u64(name)?;
    if w.len() != Scalar::WORDS {
        return None;
    }
    Scalar::from_u64s(&w).ok()?.into_iter().next()
}

/// A 12-limb constant as an [`Fp`] (internal Montgomery words, like [`scalar`]).
pub fn fp(name: &str) -> Option<Fp> {
    let w = limbs_u64(name)?;
    if w.len() != Fp::WORDS {
        return None;
    }
    Fp::from_u64s(&w).ok()?.into_iter().next()
}
