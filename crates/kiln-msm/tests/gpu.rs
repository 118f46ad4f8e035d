//! GPU MSM = CPU MSM on fresh random inputs (G1 and G2), the conformance kit (edge cases of
//! sizes, scalars and bases on every path), the split path's bitmaps, batch forms, device
//! scalars, and the known-discrete-log checks at 2^24 and 2^26.
//! Run on the GPU machine through `cargo xtask gpu-bundle`.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use kiln_cuda::PoolMemory;
use kiln_cuda::testing::{gpu_or_skip, small_sizes};
use kiln_field::DeviceLayout;
use kiln_msm::conformance::{self, check_msm};
use kiln_msm::dlog::{KnownDlog, random_scalars};
use kiln_msm::gpu::{Curve, GpuBases, MsmContext, Scalars};
use kiln_msm::{cpu, split};
use rand::Rng;

fn sizes() -> Vec<usize> {
    let all = [1usize, 2, 3, 100, (1 << 10) + 7, 1 << 16, 1 << 20];
    all.into_iter().filter(|&n| !small_sizes() || n <= 1 << 12).collect()
}

fn seed() -> u64 {
    let s: u64 = rand::random();
    eprintln!("seed {s}");
    s
}

fn g1_bases(n: usize, with_infinity: bool) -> Vec<G1Affine> {
    let mut b = KnownDlog::random(rand::thread_rng()).g1_bases(n);
    if with_infinity {
        for p in b.iter_mut().step_by(5) {
            *p = G1Affine::identity();
        }
    }
    b
}

fn g2_bases(n: usize, with_infinity: bool) -> Vec<G2Affine> {
    let mut b = KnownDlog::random(rand::thread_rng()).g2_bases(n);
    if with_infinity {
        for p in b.iter_mut().step_by(5) {
            *p = G2Affine::identity();
        }
    }
    b
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g1_gpu_matches_cpu_random() {
    let Some(device) = gpu_or_skip("g1_gpu_matches_cpu_random") else { return };
    let sizes = sizes();
    let mut ctx = MsmContext::new(&device, Curve::G1, *sizes.last().unwrap(), &PoolMemory).unwrap();
    for n in sizes {
        let bases = g1_bases(n, false);
        let gb = GpuBases::g1(&device, &bases, &PoolMemory).unwrap();
        let s = seed();
        let scalars = random_scalars(n, s);
        let got = ctx.msm_g1(&gb, Scalars::Host(&scalars)).unwrap();
        let want = cpu::msm_g1(&bases, &scalars).unwrap();
        assert_eq!(got, want, "G1 n = {n}, seed {s}: GPU {got:?} != CPU {want:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g2_gpu_matches_cpu_random() {
    let Some(device) = gpu_or_skip("g2_gpu_matches_cpu_random") else { return };
    let sizes = sizes();
    let mut ctx = MsmContext::new(&device, Curve::G2, *sizes.last().unwrap(), &PoolMemory).unwrap();
    for n in sizes {
        let bases = g2_bases(n, false);
        let gb = GpuBases::g2(&device, &bases, &PoolMemory).unwrap();
        let s = seed();
        let scalars = random_scalars(n, s);
        let got = ctx.msm_g2(&gb, Scalars::Host(&scalars)).unwrap();
        let want = cpu::msm_g2(&bases, &scalars).unwrap();
        assert_eq!(got, want, "G2 n = {n}, seed {s}: GPU {got:?} != CPU {want:?}");
    }
}

/// The MSM conformance kit (kiln_msm::conformance, the CPU MSM runs it in
/// tests/conformance.rs): every size class, scalar class and kind of base set, the plain,
/// multi (device scalars at an offset) and split paths in G1 and G2, with the contexts'
/// scratch poisoned before every call.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_msm_passes_the_conformance_kit() {
    let Some(device) = gpu_or_skip("gpu_msm_passes_the_conformance_kit") else { return };
    let large: &[usize] = if small_sizes() { &[(1 << 12) + 1] } else { &[(1 << 12) + 1, 1 << 16, (1 << 18) + 3] };
    let capacity = large.iter().copied().chain([conformance::SWEEP_MAX]).max().unwrap();
    let mut gpu = conformance::GpuMsm::new(&device, capacity).unwrap();
    check_msm(&mut gpu, large, seed());
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn split_path_matches_cpu() {
    let Some(device) = gpu_or_skip("split_path_matches_cpu") else { return };
    let n = if small_sizes() { 1 << 12 } else { 1 << 16 };
    let mut rng = rand::thread_rng();
    let b1 = g1_bases(n, true);
    let b1b = g1_bases(n, false);
    let b2 = g2_bases(n, false);
    let (g1, g1b, g2) = (
        GpuBases::g1(&device, &b1, &PoolMemory).unwrap(),
        GpuBases::g1(&device, &b1b, &PoolMemory).unwrap(),
        GpuBases::g2(&device, &b2, &PoolMemory).unwrap(),
    );
    let mut c1 = MsmContext::new(&device, Curve::G1, n, &PoolMemory).unwrap();
    let mut c2 = MsmContext::new(&device, Curve::G2, n, &PoolMemory).unwrap();
    // Filecoin-like (51% zero, 47% one, 2% other), all 0/1, and no 0/1 at all.
    let dists: [(&str, u32, u32); 3] = [("filecoin", 51, 98), ("only 0/1", 50, 100), ("no 0/1", 0, 0)];
    for (name, z, o) in dists {
        let scalars: Vec<Scalar> = (0..n)
            .map(|_| {
                let x = rng.gen_range(0..100);
                if x < z {
                    Scalar::ZERO
                } else if x < o {
                    Scalar::ONE
                } else {
                    Scalar::random(&mut rng)
                }
            })
            .collect();
        let cpu_split = split::ScalarSplit::classify(&scalars).unwrap();
        let sp1 = c1.split(Scalars::Host(&scalars)).unwrap();
        assert_eq!(sp1.ones, cpu_split.ones.count_ones(), "{name}: ones");
        assert_eq!(sp1.others, cpu_split.others.len(), "{name}: others");
        let (zbits, obits) = c1.split_bitmaps(&sp1).unwrap();
        for i in 0..n {
            assert_eq!((zbits[i / 32] >> (i % 32)) & 1 == 1, cpu_split.zeros.get(i), "{name}: zero bit {i}");
            assert_eq!((obits[i / 32] >> (i % 32)) & 1 == 1, cpu_split.ones.get(i), "{name}: one bit {i}");
        }
        // One split shared by two G1 base sets.
        assert_eq!(c1.msm_g1_split(&g1, &sp1).unwrap(), cpu::msm_g1(&b1, &scalars).unwrap(), "{name}: G1 split");
        assert_eq!(c1.msm_g1_split(&g1b, &sp1).unwrap(), cpu::msm_g1(&b1b, &scalars).unwrap(), "{name}: G1 split b");
        let sp2 = c2.split(Scalars::Host(&scalars)).unwrap();
        assert_eq!(c2.msm_g2_split(&g2, &sp2).unwrap(), cpu::msm_g2(&b2, &scalars).unwrap(), "{name}: G2 split");
        // A stale split is refused, not silently misused.
        let _newer = c1.split(Scalars::Host(&scalars)).unwrap();
        assert!(c1.msm_g1_split(&g1, &sp1).is_err(), "{name}: stale split accepted");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn batch_multi_and_device_scalars() {
    let Some(device) = gpu_or_skip("batch_multi_and_device_scalars") else { return };
    let n = if small_sizes() { 1000 } else { 1 << 14 };
    let (ba, bb) = (g1_bases(n, false), g1_bases(n, true));
    let (ga, gb) = (GpuBases::g1(&device, &ba, &PoolMemory).unwrap(), GpuBases::g1(&device, &bb, &PoolMemory).unwrap());
    let mut ctx = MsmContext::new(&device, Curve::G1, n, &PoolMemory).unwrap();
    let (s1, s2) = (random_scalars(n, seed()), random_scalars(n, seed()));
    let got = ctx.msm_g1_batch(&ga, &[Scalars::Host(&s1), Scalars::Host(&s2)]).unwrap();
    assert_eq!(got, vec![cpu::msm_g1(&ba, &s1).unwrap(), cpu::msm_g1(&ba, &s2).unwrap()], "batch");
    let got = ctx.msm_g1_multi(&[&ga, &gb], Scalars::Host(&s1)).unwrap();
    assert_eq!(got, vec![cpu::msm_g1(&ba, &s1).unwrap(), cpu::msm_g1(&bb, &s1).unwrap()], "multi bases");
    let dev = ctx.stream().clone_htod(Scalar::as_u64s(&s2)).unwrap();
    let got = ctx.msm_g1(&ga, Scalars::Device(&dev, n)).unwrap();
    assert_eq!(got, cpu::msm_g1(&ba, &s2).unwrap(), "device scalars");
    // Pinned scalars: queued without waiting; rewriting the buffer waits for the copy, so a
    // split and then a sum over the rewritten buffer see each their own scalars.
    let mut pinned = kiln_cuda::alloc_pinned::<u64>(&device, 4 * n, false).unwrap();
    pinned.as_mut_slice().unwrap().copy_from_slice(Scalar::as_u64s(&s1));
    let split = ctx.split(Scalars::Pinned(&pinned)).unwrap();
    pinned.as_mut_slice().unwrap().copy_from_slice(Scalar::as_u64s(&s2));
    assert_eq!(ctx.msm_g1_split(&ga, &split).unwrap(), cpu::msm_g1(&ba, &s1).unwrap(), "split of pinned scalars");
    let got = ctx.msm_g1(&ga, Scalars::Pinned(&pinned)).unwrap();
    assert_eq!(got, cpu::msm_g1(&ba, &s2).unwrap(), "pinned scalars");
    let ragged = kiln_cuda::alloc_pinned::<u64>(&device, 4 * n + 3, false).unwrap();
    assert!(ctx.msm_g1(&ga, Scalars::Pinned(&ragged)).is_err(), "pinned words that are not whole scalars accepted");
    // Errors, not panics, on bad input.
    assert!(ctx.msm_g1(&ga, Scalars::Host(&s1[..n - 1])).is_err(), "length mismatch accepted");
    let big = g1_bases(n + 1, false);
    let gbig = GpuBases::g1(&device, &big, &PoolMemory).unwrap();
    assert!(ctx.msm_g1(&gbig, Scalars::Host(&random_scalars(n + 1, 1))).is_err(), "over capacity accepted");
    let g2b = GpuBases::g2(&device, &g2_bases(4, false), &PoolMemory).unwrap();
    assert!(ctx.msm_g2(&g2b, Scalars::Host(&s1[..4])).is_err(), "G2 bases in a G1 context accepted");
}

fn known_dlog_g1(log_n: u32) {
    let n = 1usize << log_n;
    let Some(device) = gpu_or_skip("known_dlog_g1") else { return };
    if small_sizes() {
        eprintln!("known_dlog_g1 2^{log_n}: skipped under KILN_TEST_SMALL");
        return;
    }
    let dl = KnownDlog::random(rand::thread_rng());
    let bases = dl.g1_bases(n);
    let gb = GpuBases::g1(&device, &bases, &PoolMemory).unwrap();
    drop(bases);
    let mut ctx = MsmContext::new(&device, Curve::G1, n, &PoolMemory).unwrap();
    let scalars = random_scalars(n, seed());
    let got = ctx.msm_g1(&gb, Scalars::Host(&scalars)).unwrap();
    let want: G1Projective = dl.expected_g1(&scalars);
    assert_eq!(got, want, "G1 2^{log_n} known-dlog check");
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g1_known_dlog_2_24() {
    known_dlog_g1(24);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g1_known_dlog_2_26() {
    known_dlog_g1(26);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g2_known_dlog_2_20() {
    let Some(device) = gpu_or_skip("g2_known_dlog_2_20") else { return };
    let n = if small_sizes() { 1 << 12 } else { 1 << 20 };
    let dl = KnownDlog::random(rand::thread_rng());
    let gb = GpuBases::g2(&device, &dl.g2_bases(n), &PoolMemory).unwrap();
    let mut ctx = MsmContext::new(&device, Curve::G2, n, &PoolMemory).unwrap();
    let scalars = random_scalars(n, seed());
    let got: G2Projective = ctx.msm_g2(&gb, Scalars::Host(&scalars)).unwrap();
    assert_eq!(got, dl.expected_g2(&scalars), "G2 2^20 known-dlog check");
}
