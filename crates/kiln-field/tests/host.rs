//! CPU tests: device layout round-trips and every constant of kernels/field/constants.cuh
//! against blstrs/ff (fixed checks plus proptest properties on random values).

use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use kiln_field::constants::{self, fp, limbs_u32, limbs_u64, scalar};
use kiln_field::{DeviceLayout, Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, LayoutError, Scalar};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

/// Little-endian bytes → 32-bit limbs.
fn bytes_to_limbs(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// x + k over little-endian 32-bit limbs (the tests add small numbers to m - 1).
fn add_small(limbs: &[u32], k: u32) -> Vec<u32> {
    let mut out = limbs.to_vec();
    let mut carry = u64::from(k);
    for l in &mut out {
        let s = u64::from(*l) + carry;
        *l = s as u32;
        carry = s >> 32;
    }
    out
}

fn sub_small(limbs: &[u32], k: u32) -> Vec<u32> {
    let mut out = limbs.to_vec();
    let mut borrow = i64::from(k);
    for l in &mut out {
        let d = i64::from(*l) - borrow;
        *l = d.rem_euclid(1 << 32) as u32;
        borrow = i64::from(d < 0);
    }
    out
}

fn r_limbs() -> Vec<u32> {
    add_small(&bytes_to_limbs(&(-Scalar::ONE).to_repr()), 1)
}

fn p_limbs() -> Vec<u32> {
    add_small(&bytes_to_limbs(&(-Fp::ONE).to_bytes_le()), 1)
}

#[test]
fn moduli_match_blstrs() {
    let r = limbs_u32("FR_MODULUS").expect("FR_MODULUS in constants.cuh");
    assert_eq!(r, r_limbs(), "FR_MODULUS differs from blstrs' r");
    let hex: String = r.iter().rev().map(|l| format!("{l:08x}")).collect();
    assert_eq!(format!("0x{hex}"), Scalar::MODULUS);
    assert_eq!(limbs_u32("FP_MODULUS").expect("FP_MODULUS"), p_limbs(), "FP_MODULUS differs from blstrs' p");
    assert_eq!(limbs_u32("FR_MODULUS_MINUS_2").unwrap(), sub_small(&r_limbs(), 2));
    assert_eq!(limbs_u32("FP_MODULUS_MINUS_2").unwrap(), sub_small(&p_limbs(), 2));
}

#[test]
fn montgomery_factors_are_right() {
    for (m0, modulus) in [("FR_M0", r_limbs()), ("FP_M0", p_limbs())] {
        let m0v = limbs_u32(m0).unwrap()[0];
        // -m^-1 * m ≡ -1 (mod 2^32)
        assert_eq!(m0v.wrapping_mul(modulus[0]), u32::MAX, "{m0}");
    }
}

#[test]
fn one_and_r2_match_blstrs() {
    assert_eq!(scalar("FR_ONE"), Some(Scalar::ONE));
    assert_eq!(fp("FP_ONE"), Some(Fp::ONE));
    // R2's internal words are R^2; read as a Montgomery value that is R^2/R = R = 2^256 mod r.
    assert_eq!(scalar("FR_R2"), Some(Scalar::from(2u64).pow_vartime([256u64])));
    assert_eq!(fp("FP_R2"), Some(Fp::from(2u64).pow_vartime([384u64])));
    assert_eq!(fp("FP_B_G1"), Some(Fp::from(4u64)));
}

#[test]
fn ntt_constants_match_ff() {
    assert_eq!(scalar("FR_ROOT_OF_UNITY"), Some(Scalar::ROOT_OF_UNITY));
    assert_eq!(scalar("FR_ROOT_OF_UNITY_INV"), Some(Scalar::ROOT_OF_UNITY_INV));
    assert_eq!(scalar("FR_GENERATOR"), Some(Scalar::MULTIPLICATIVE_GENERATOR));
    assert_eq!(scalar("FR_GENERATOR"), Some(Scalar::from(7u64)));
    assert_eq!(scalar("FR_GENERATOR_INV").unwrap() * Scalar::from(7u64), Scalar::ONE);
    assert_eq!(limbs_u32("FR_TWO_ADICITY"), Some(vec![Scalar::S]));
    let root = Scalar::ROOT_OF_UNITY;
    assert_eq!(root.pow_vartime([1u64 << 32]), Scalar::ONE);
    assert_ne!(root.pow_vartime([1u64 << 31]), Scalar::ONE, "the root must be primitive");
}

#[test]
fn every_constant_parses() {
    let all = constants::all();
    assert!(all.len() >= 15, "{all:?}");
    for (name, limbs) in &all {
        assert!(!limbs.is_empty(), "{name}");
        let expected = if name.starts_with("FR_") { 8 } else { 12 };
        assert!(limbs.len() == 1 || limbs.len() == expected, "{name}: {} limbs", limbs.len());
    }
    assert_eq!(limbs_u64("FR_ONE").unwrap(), Scalar::as_u64s(&[Scalar::ONE]));
    assert!(limbs_u64("FR_M0").is_none(), "a single 32-bit limb has no u64 form");
}

#[test]
fn ragged_buffers_are_an_error() {
    let err = Scalar::from_u64s(&[1, 2, 3]).unwrap_err();
    assert_eq!(err, LayoutError::Ragged { len: 3, ty: "fr_t", per: 4 });
    assert!(err.to_string().contains("n * 4"), "{err}");
    assert!(G2Affine::from_u64s(&[]).unwrap().is_empty());
    assert!(Scalar::from_u64s_mut(&mut [1, 2, 3]).is_err());
    assert!(Scalar::from_u64s_ref(&[1, 2, 3]).is_err());
}

#[test]
fn infinity_is_all_zero_words() {
    assert!(G1Affine::as_u64s(&[G1Affine::identity()]).iter().all(|&w| w == 0));
    assert!(G2Affine::as_u64s(&[G2Affine::identity()]).iter().all(|&w| w == 0));
}

fn round_trip<T: DeviceLayout + PartialEq + std::fmt::Debug>(values: &[T]) {
    let w = T::as_u64s(values);
    assert_eq!(w.len(), values.len() * T::WORDS);
    assert_eq!(T::from_u64s(w).unwrap(), values);
    // Written through the in-place view, read back as words: the same words.
    let mut words = vec![0u64; w.len()];
    T::from_u64s_mut(&mut words).unwrap().copy_from_slice(values);
    assert_eq!(words, w);
    // And read through the shared view: the same values.
    assert_eq!(T::from_u64s_ref(&words).unwrap(), values);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn layouts_round_trip(seed in any::<u64>(), n in 0usize..6) {
        let mut rng = StdRng::seed_from_u64(seed);
        round_trip(&(0..n).map(|_| Scalar::random(&mut rng)).collect::<Vec<_>>());
        round_trip(&(0..n).map(|_| Fp::random(&mut rng)).collect::<Vec<_>>());
        round_trip(&(0..n).map(|_| Fp2::random(&mut rng)).collect::<Vec<_>>());
        let g1: Vec<G1Projective> = (0..n).map(|_| <G1Projective as group::Group>::random(&mut rng)).collect();
        let g2: Vec<G2Projective> = (0..n).map(|_| <G2Projective as group::Group>::random(&mut rng)).collect();
        round_trip(&g1);
        round_trip(&g2);
        round_trip(&g1.iter().map(G1Affine::from).collect::<Vec<_>>());
        round_trip(&g2.iter().map(G2Affine::from).collect::<Vec<_>>());
    }

    /// The device words of a Scalar are blst's Montgomery limbs: x·R mod r.
    #[test]
    fn scalar_words_are_montgomery(x in any::<u64>()) {
        let s = Scalar::from(x);
        // internal words of s, read back as a Scalar with ONE's words as the unit: s * ONE = s
        prop_assert_eq!(s * scalar("FR_ONE").unwrap(), s);
        // the words of Scalar::from(x) equal mont_mul(x, R2), i.e. Scalar(words x) * Scalar(words R2)
        let raw = Scalar::from_u64s(&[x, 0, 0, 0]).unwrap()[0];
        prop_assert_eq!(raw * scalar("FR_R2").unwrap(), s);
    }

    /// Same for Fp, with random 64-bit values, and Fp2's layout is (c0, c1).
    #[test]
    fn fp_words_are_montgomery(x in any::<u64>(), y in any::<u64>()) {
        let raw = Fp::from_u64s(&[x, 0, 0, 0, 0, 0]).unwrap()[0];
        prop_assert_eq!(raw * fp("FP_R2").unwrap(), Fp::from(x));
        let z = Fp2::new(Fp::from(x), Fp::from(y));
        let w = Fp2::as_u64s(std::slice::from_ref(&z));
        prop_assert_eq!(w[..6].to_vec(), Fp::as_u64s(&[Fp::from(x)]).to_vec());
        prop_assert_eq!(w[6..].to_vec(), Fp::as_u64s(&[Fp::from(y)]).to_vec());
    }

    /// G1Affine's words are (x, y) and G1Projective's are Jacobian (X, Y, Z) with Z = 1 after
    /// conversion from affine: the layouts the kernels assume.
    #[test]
    fn point_words_are_blst_layout(seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let p = G1Affine::from(<G1Projective as group::Group>::random(&mut rng));
        let w = G1Affine::as_u64s(std::slice::from_ref(&p));
        prop_assert_eq!(w[..6].to_vec(), Fp::as_u64s(&[p.x()]).to_vec());
        prop_assert_eq!(w[6..].to_vec(), Fp::as_u64s(&[p.y()]).to_vec());
        let j = G1Projective::from(p);
        let jw = G1Projective::as_u64s(std::slice::from_ref(&j));
        prop_assert_eq!(jw[12..].to_vec(), Fp::as_u64s(&[Fp::ONE]).to_vec());
    }
}
