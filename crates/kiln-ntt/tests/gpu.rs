//! GPU == CPU for every direction and the H step (the conformance kit), the H step from pinned
//! host memory into reused buffers, 2^27 round trips, length errors, on fresh random inputs
//! (GPU machine only).

use std::sync::Arc;

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};
use ff::Field;
use kiln_cuda::testing::{gpu_or_skip, small_sizes};
use kiln_cuda::{CudaResultExt, Device, alloc_pinned, alloc_poisoned, check_stream};
use kiln_field::DeviceLayout;
use kiln_ntt::conformance::{GpuNtt, check_ntt};
use kiln_ntt::gpu::{GpuDomain, HostInput};
use kiln_ntt::{Domain, NttError, cpu};
use rand::SeedableRng;
use rayon::prelude::*;

/// Fresh random scalars, generated in parallel (2^27 of them take a while on one core).
fn random(n: usize) -> Vec<Scalar> {
    let seed: u64 = rand::random();
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(1 << 14).enumerate().for_each(|(i, c)| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for v in c {
            *v = Scalar::random(&mut rng);
        }
    });
    out
}

/// A poisoned device buffer with `v` copied in: a kernel that skips an element leaves poison.
fn upload(stream: &Arc<CudaStream>, v: &[Scalar]) -> CudaSlice<u64> {
    let mut d = alloc_poisoned::<u64>(stream, v.len() * 4).unwrap();
    stream.memcpy_htod(Scalar::as_u64s(v), &mut d).ctx("cuMemcpyHtoDAsync").unwrap();
    d
}

fn download(stream: &Arc<CudaStream>, d: &CudaSlice<u64>) -> Vec<Scalar> {
    check_stream(stream).unwrap();
    Scalar::from_u64s(&stream.clone_dtoh(d).ctx("cuMemcpyDtoH").unwrap()).unwrap()
}

fn assert_same(got: &[Scalar], want: &[Scalar], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).take(4).collect();
    if let Some(&i) = bad.first() {
        let count = (0..got.len()).filter(|&i| got[i] != want[i]).count();
        panic!(
            "{what}: {count} of {} elements differ; first at index {i}: gpu {:?}, cpu {:?} (more at {bad:?})",
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn log_sizes() -> Vec<u32> {
    if small_sizes() { (0..=12).collect() } else { (0..=20).chain([22, 24]).collect() }
}

/// The NTT conformance kit (kiln_ntt::conformance, the CPU path runs it in
/// tests/conformance.rs): every transform and the H step against their definitions at small
/// sizes, against the CPU path, round trips and Horner at every size of `log_sizes`, inputs
/// uploaded into poisoned buffers, padded H-step inputs through the pinned-host path.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_ntt_passes_the_conformance_kit() {
    let Some(device) = gpu_or_skip("gpu_ntt_passes_the_conformance_kit") else { return };
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    check_ntt(&mut GpuNtt::new(&device).unwrap(), &log_sizes(), seed);
}

/// `v` in a pinned (write-combined: the host only writes it) buffer of u64 words.
fn pinned(device: &Device, v: &[Scalar]) -> PinnedHostSlice<u64> {
    let mut p = alloc_pinned::<u64>(device, v.len() * 4, true).unwrap();
    p.as_mut_slice().ctx("pinned as_mut_slice").unwrap().copy_from_slice(Scalar::as_u64s(v));
    p
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_h_step_from_pinned_host_matches_cpu() {
    let Some(device) = gpu_or_skip("gpu_h_step_from_pinned_host_matches_cpu") else { return };
    let (stream, copy_stream) = (device.new_stream().unwrap(), device.new_stream().unwrap());
    let logs: &[u32] = if small_sizes() { &[1, 10] } else { &[1, 16, 20] };
    for &log_n in logs {
        let d = Domain::new(log_n).unwrap();
        let n = d.size();
        let gd = GpuDomain::new(&device, &stream, &d, &kiln_cuda::PoolMemory).unwrap();
        // Poisoned buffers: an element neither copied nor zero-padded shows up as garbage.
        let mut bufs: Vec<CudaSlice<u64>> = (0..3).map(|_| alloc_poisoned::<u64>(&stream, n * 4).unwrap()).collect();
        let [da, db, dc] = &mut bufs[..] else { unreachable!() };
        // Full-length inputs, then shorter ones (zero-padded on the device) into the same
        // buffers: each call must overwrite everything the one before left there. "a first"
        // uploads a first (`upload_input`), as a caller with its input ready early does; the
        // "c = a∘b" cases form c on the device (`ProductOfAB`) in a poisoned buffer.
        let cases = [
            ("full", n, n, n, false, false),
            ("padded", n - 1, n / 2, 1, false, false),
            ("a first", n / 2, n, n - 1, true, false),
            ("c = a∘b", n, n, 0, false, true),
            ("c = a∘b, a first, padded", n - 1, n / 2, 0, true, true),
        ];
        for (name, la, lb, lc, a_first, c_from_ab) in cases {
            let (a, b) = (random(la), random(lb));
            let c = if c_from_ab {
                (0..n).map(|i| a.get(i).zip(b.get(i)).map_or(Scalar::ZERO, |(x, y)| x * y)).collect()
            } else {
                random(lc)
            };
            let (pa, pb, pc) = (pinned(&device, &a), pinned(&device, &b), pinned(&device, &c));
            let a_in = if a_first {
                HostInput::Uploaded(gd.upload_input(&stream, &copy_stream, &pa, da).unwrap())
            } else {
                HostInput::Pinned(&pa)
            };
            let c_in = if c_from_ab {
                kiln_cuda::poison(&stream, dc).unwrap();
                HostInput::ProductOfAB
            } else {
                HostInput::Pinned(&pc)
            };
            let input = [a_in, HostInput::Pinned(&pb), c_in];
            gd.h_step_from_host(&stream, &copy_stream, input, [&mut *da, &mut *db, &mut *dc]).unwrap();
            let got = download(&stream, da);
            let want = cpu::h_poly(&d, a, b, c).unwrap();
            assert_same(&got, &want, &format!("h_step_from_host ({name}: {la}, {lb}, {lc} of {n}) at 2^{log_n}"));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_large_round_trip_and_horner() {
    let Some(device) = gpu_or_skip("gpu_large_round_trip_and_horner") else { return };
    let log_n = if small_sizes() { 12 } else { 27 };
    let stream = device.new_stream().unwrap();
    let d = Domain::new(log_n).unwrap();
    let gd = GpuDomain::new(&device, &stream, &d, &kiln_cuda::PoolMemory).unwrap();
    let input = random(d.size());
    let mut buf = upload(&stream, &input);
    gd.forward(&stream, &mut buf).unwrap();
    let evals = download(&stream, &buf);
    let n = d.size();
    for k in [0usize, 1, 2, 12_345 % n, n / 2 + 1, n - 1] {
        let want = cpu::evaluate(&input, d.omega().pow_vartime([k as u64]));
        assert_eq!(evals[k], want, "forward 2^{log_n}: evaluation {k} differs from Horner at ω^{k}");
    }
    gd.inverse(&stream, &mut buf).unwrap();
    let back = download(&stream, &buf);
    assert_same(&back, &input, &format!("inverse(forward(x)) at 2^{log_n}"));
    gd.coset_forward(&stream, &mut buf).unwrap();
    let coset = download(&stream, &buf);
    for k in [0usize, 3, n - 2] {
        let want = cpu::evaluate(&input, d.generator() * d.omega().pow_vartime([k as u64]));
        assert_eq!(coset[k], want, "coset_forward 2^{log_n}: evaluation {k} differs from Horner at g·ω^{k}");
    }
    gd.coset_inverse(&stream, &mut buf).unwrap();
    assert_same(&download(&stream, &buf), &input, &format!("coset_inverse(coset_forward(x)) at 2^{log_n}"));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_rejects_wrong_lengths() {
    let Some(device) = gpu_or_skip("gpu_rejects_wrong_lengths") else { return };
    let stream = device.new_stream().unwrap();
    let d = Domain::new(4).unwrap();
    let gd = GpuDomain::new(&device, &stream, &d, &kiln_cuda::PoolMemory).unwrap();
    let mut short = upload(&stream, &random(15));
    let err = gd.forward(&stream, &mut short).unwrap_err();
    assert!(matches!(err, NttError::LengthMismatch { expected: 16, got: 15, .. }), "{err}");
    let (mut a, mut b) = (upload(&stream, &random(16)), upload(&stream, &random(16)));
    let err = gd.h_step(&stream, &mut a, &mut b, &mut short).unwrap_err();
    assert!(matches!(err, NttError::LengthMismatch { .. }), "{err}");
    let copy_stream = device.new_stream().unwrap();
    let mut c = upload(&stream, &random(16));
    let (ok, long) = (pinned(&device, &random(16)), pinned(&device, &random(17)));
    let pinned3 = |x, y, z| [HostInput::Pinned(x), HostInput::Pinned(y), HostInput::Pinned(z)];
    let err =
        gd.h_step_from_host(&stream, &copy_stream, pinned3(&ok, &ok, &long), [&mut a, &mut b, &mut c]).unwrap_err();
    assert!(matches!(err, NttError::InputTooLong { len: 17, size: 16, .. }), "{err}");
    let ragged = alloc_pinned::<u64>(&device, 4 * 3 + 1, true).unwrap();
    let err =
        gd.h_step_from_host(&stream, &copy_stream, pinned3(&ragged, &ok, &ok), [&mut a, &mut b, &mut c]).unwrap_err();
    assert!(matches!(err, NttError::Layout(_)), "{err}");
    let err =
        gd.h_step_from_host(&stream, &copy_stream, pinned3(&ok, &ok, &ok), [&mut a, &mut b, &mut short]).unwrap_err();
    assert!(matches!(err, NttError::LengthMismatch { .. }), "{err}");
    let err = gd.upload_input(&stream, &copy_stream, &long, &mut a).unwrap_err();
    assert!(matches!(err, NttError::InputTooLong { len: 17, size: 16, .. }), "{err}");
    // Only c can be formed from the other two.
    let input = [HostInput::ProductOfAB, HostInput::Pinned(&ok), HostInput::Pinned(&ok)];
    let err = gd.h_step_from_host(&stream, &copy_stream, input, [&mut a, &mut b, &mut c]).unwrap_err();
    assert!(matches!(err, NttError::MisplacedProduct { .. }), "{err}");
}
