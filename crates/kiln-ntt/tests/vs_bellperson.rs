//! kiln's CPU path against bellperson's `EvaluationDomain` on fresh random inputs: every
//! direction and the whole H step must match bit for bit.

use bellperson::domain::EvaluationDomain;
use blstrs::Scalar;
use ec_gpu_gen::threadpool::Worker;
use ff::Field;
use kiln_ntt::{Domain, cpu};
use proptest::prelude::*;
use rand::SeedableRng;

fn random(n: usize, seed: u64) -> Vec<Scalar> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| Scalar::random(&mut rng)).collect()
}

fn first_difference(got: &[Scalar], want: &[Scalar]) -> Option<(usize, Scalar, Scalar)> {
    got.iter().zip(want).enumerate().find(|(_, (g, w))| g != w).map(|(i, (g, w))| (i, *g, *w))
}

fn assert_same(got: &[Scalar], want: &[Scalar], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    if let Some((i, g, w)) = first_difference(got, want) {
        panic!("{what}: first difference at index {i}: kiln {g:?}, bellperson {w:?}");
    }
}

type Op = fn(&mut EvaluationDomain<Scalar>, &Worker);
type Ours = fn(&Domain, &mut [Scalar]) -> Result<(), kiln_ntt::NttError>;

fn check_all_directions(log_n: u32, seed: u64) {
    let worker = Worker::new();
    let d = Domain::new(log_n).unwrap();
    let input = random(d.size(), seed);
    let ops: [(&str, Ours, Op); 5] = [
        ("fft", cpu::fft, |e, w| e.fft(w, &mut None).unwrap()),
        ("ifft", cpu::ifft, |e, w| e.ifft(w, &mut None).unwrap()),
        ("coset_fft", cpu::coset_fft, |e, w| e.coset_fft(w, &mut None).unwrap()),
        ("icoset_fft", cpu::icoset_fft, |e, w| e.icoset_fft(w, &mut None).unwrap()),
        ("divide_by_z_on_coset", cpu::divide_by_z_on_coset, |e, w| e.divide_by_z_on_coset(w)),
    ];
    for (name, ours, theirs) in ops {
        let mut got = input.clone();
        ours(&d, &mut got).unwrap();
        let mut e = EvaluationDomain::from_coeffs(input.clone()).unwrap();
        theirs(&mut e, &worker);
        assert_same(&got, e.as_ref(), &format!("{name} at 2^{log_n} (seed {seed})"));
    }
}

/// bellperson's prover H step (groth16/prover/native.rs, `execute_fft`), returning all n coefficients.
fn bellperson_h(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> Vec<Scalar> {
    let worker = Worker::new();
    let mut a = EvaluationDomain::from_coeffs(a).unwrap();
    let mut b = EvaluationDomain::from_coeffs(b).unwrap();
    let mut c = EvaluationDomain::from_coeffs(c).unwrap();
    EvaluationDomain::ifft_many(&mut [&mut a, &mut b, &mut c], &worker, &mut None).unwrap();
    EvaluationDomain::coset_fft_many(&mut [&mut a, &mut b, &mut c], &worker, &mut None).unwrap();
    a.mul_assign(&worker, &b);
    a.sub_assign(&worker, &c);
    a.divide_by_z_on_coset(&worker);
    a.icoset_fft(&worker, &mut None).unwrap();
    a.into_coeffs()
}

#[test]
fn all_directions_match_bellperson() {
    let seed = rand::random();
    for log_n in (0..=14).chain([16, 17]) {
        check_all_directions(log_n, seed);
    }
}

#[test]
fn h_poly_matches_bellperson_prover() {
    let seed: u64 = rand::random();
    // Lengths that are not powers of two, like real circuits (constraints + inputs).
    for len in [1usize, 2, 3, 7, 100, 1000, 4097, 70_000] {
        let (a, b, c) = (random(len, seed), random(len, seed ^ 1), random(len, seed ^ 2));
        let d = Domain::for_size(len).unwrap();
        let got = cpu::h_poly(&d, a.clone(), b.clone(), c.clone()).unwrap();
        assert_same(&got, &bellperson_h(a, b, c), &format!("h_poly len {len} (seed {seed})"));
    }
}

#[test]
fn h_poly_of_a_satisfied_system_has_degree_below_n_minus_1() {
    // When a·b = c on the domain (a satisfied R1CS), a·b - c vanishes on H, so h = (a·b - c)/Z
    // is a polynomial of degree ≤ n - 2: the top coefficient is zero. This is why the prover
    // uses only the first n - 1 coefficients.
    let d = Domain::new(10).unwrap();
    let (a, b) = (random(d.size(), 7), random(d.size(), 8));
    let c: Vec<Scalar> = a.iter().zip(&b).map(|(a, b)| a * b).collect();
    let h = cpu::h_poly(&d, a, b, c).unwrap();
    assert_eq!(h[d.size() - 1], Scalar::ZERO);
    assert!(h.iter().any(|v| !bool::from(v.is_zero())), "h is identically zero: the test proves nothing");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn round_trips_are_identity(log_n in 0u32..=12, seed in any::<u64>()) {
        let d = Domain::new(log_n).unwrap();
        let input = random(d.size(), seed);
        let mut a = input.clone();
        cpu::fft(&d, &mut a).unwrap();
        cpu::ifft(&d, &mut a).unwrap();
        prop_assert!(a == input);
        cpu::coset_fft(&d, &mut a).unwrap();
        cpu::icoset_fft(&d, &mut a).unwrap();
        prop_assert!(a == input);
    }

    #[test]
    fn directions_match_bellperson(log_n in 0u32..=11, seed in any::<u64>()) {
        check_all_directions(log_n, seed);
    }
}
