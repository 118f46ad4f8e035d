//! GPU fixed-base products = CPU products on fresh random and edge scalars, in G1 and G2,
//! across chunk boundaries. Run on the GPU machine through `cargo xtask gpu-bundle`.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use kiln_cuda::PoolMemory;
use kiln_cuda::testing::gpu_or_skip;
use kiln_msm::gpu::FixedBase;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Edge scalars (0, 1, −1, 2, 2^k around window edges) then random ones: `n` in all.
fn scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    let mut s = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64), -Scalar::from(2u64)];
    for k in [12u64, 13, 25, 26, 63, 64, 247, 254] {
        let p = Scalar::from(2u64).pow_vartime([k]);
        s.extend([p, p - Scalar::ONE, -p]);
    }
    s.extend((s.len()..n).map(|_| Scalar::random(&mut *rng)));
    s.truncate(n);
    s
}

/// 2.5 chunks of 1000 scalars: chunk edges inside the batch, a partial last chunk, and a
/// run of the affine conversion cut by the end of a chunk. Outputs are poisoned by
/// `FixedBase` before each launch, so a point the kernels skip shows up as a mismatch.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn fixed_base_products_equal_cpu_products() {
    let Some(device) = gpu_or_skip("fixed_base_products_equal_cpu_products") else { return };
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let n = 2500;
    let k = scalars(n, &mut rng);

    let g1 = G1Projective::random(&mut rng);
    let mut fb = FixedBase::g1(&device, g1, 1000, &PoolMemory).unwrap();
    let mut got = vec![G1Affine::generator(); n];
    fb.mul_g1(&k, &mut got).unwrap();
    for (i, (p, s)) in got.iter().zip(&k).enumerate() {
        assert_eq!(*p, (g1 * s).to_affine(), "G1 point {i} (seed {seed})");
    }
    assert!(bool::from(got[0].is_identity()), "0 · G is the identity (all-zero affine)");
    // A second call on the same context reuses its buffers.
    let k2 = scalars(37, &mut rng);
    let mut got2 = vec![G1Affine::generator(); 37];
    fb.mul_g1(&k2, &mut got2).unwrap();
    assert!(got2.iter().zip(&k2).all(|(p, s)| *p == (g1 * s).to_affine()), "second call (seed {seed})");

    let g2 = G2Projective::random(&mut rng);
    let mut fb2 = FixedBase::g2(&device, g2, 1000, &PoolMemory).unwrap();
    let mut got = vec![G2Affine::generator(); n];
    fb2.mul_g2(&k, &mut got).unwrap();
    for (i, (p, s)) in got.iter().zip(&k).enumerate() {
        assert_eq!(*p, (g2 * s).to_affine(), "G2 point {i} (seed {seed})");
    }

    // Wrong group and wrong lengths are typed errors, not launches.
    assert!(fb.mul_g2(&k[..1], &mut got[..1]).is_err());
    assert!(fb.mul_g1(&k[..2], &mut vec![G1Affine::identity(); 3]).is_err());
}
