//! The real `kernels/ntt/ntt.cu` on the CPU: `host_emulation.cpp` compiles it with the host
//! C++ compiler and kiln-kernels' `host/cuda_emulation.h` (blocks of threads as fibers with
//! real barriers and shared memory) into a library these tests load, then runs the launch
//! lists of [`crate::launch`], the very schedule `gpu` issues, over host memory and compares
//! every operation with the CPU path. So the pass plan, the launch dimensions and the kernels'
//! index arithmetic, barriers and shared-memory layout are checked in CI without a GPU (the GPU
//! tests, tests/gpu.rs, then check the real device). The emulation also logs every 16-byte
//! shared-memory access of the pass kernels, from which the tests check that no pass has bank
//! conflicts.

use std::ffi::{CString, c_char, c_int};
use std::sync::OnceLock;

use blstrs::Scalar;
use ff::Field;
use kiln_field::DeviceLayout;
use rand::SeedableRng;

use crate::launch::{Launch, Schedule, Transform, Vector};
use crate::plan::passes;
use crate::{Domain, cpu};

type PassFn = unsafe extern "C" fn(*const c_char, u32, u32, u32, *mut u64, *const u64, *const u32, *mut u64) -> c_int;
type BitrevFn = unsafe extern "C" fn(u32, u32, *mut u64, u32, u32) -> c_int;
type TwiddlesFn = unsafe extern "C" fn(u32, u32, *mut u64, u32, u32, u32, u32, u32) -> c_int;
type PointwiseFn = unsafe extern "C" fn(u32, u32, *mut u64, *const u64, *const u64, *const u64, u32, u32) -> c_int;
type MulFn = unsafe extern "C" fn(u32, u32, *mut u64, *const u64, u32) -> c_int;

/// The entry points of the compiled `host_emulation.cpp` (one per kernel of ntt.cu).
struct Kernels {
    pass: PassFn,
    bitrev: BitrevFn,
    twiddles: TwiddlesFn,
    pointwise: PointwiseFn,
    mul: MulFn,
    _lib: libloading::Library,
}

/// Compiles and loads the emulation once per test process (the tests share it).
fn kernels() -> &'static Kernels {
    static KERNELS: OnceLock<Kernels> = OnceLock::new();
    KERNELS.get_or_init(|| {
        let source = concat!(env!("CARGO_MANIFEST_DIR"), "/src/host_emulation.cpp");
        let loaded = kiln_kernels::host_emulation::load(std::path::Path::new(source), "kiln_ntt_host_emulation")
            .unwrap_or_else(|e| panic!("the host emulation: {e}"));
        // SAFETY: each symbol is an extern "C" function of host_emulation.cpp with the signature
        // of its type; the library stays loaded in `_lib` as long as the pointers live.
        unsafe {
            Kernels {
                pass: *loaded.get::<PassFn>(b"kiln_ntt_emu_pass\0").unwrap(),
                bitrev: *loaded.get::<BitrevFn>(b"kiln_ntt_emu_bitrev\0").unwrap(),
                twiddles: *loaded.get::<TwiddlesFn>(b"kiln_ntt_emu_twiddles\0").unwrap(),
                pointwise: *loaded.get::<PointwiseFn>(b"kiln_ntt_emu_pointwise\0").unwrap(),
                mul: *loaded.get::<MulFn>(b"kiln_ntt_emu_mul\0").unwrap(),
                _lib: loaded,
            }
        }
    })
}

/// u64 words per scalar.
const WORDS: usize = <Scalar as DeviceLayout>::WORDS;

/// A domain on the emulated GPU: its twiddle buffer, built as `GpuDomain::new` builds it
/// (the host tables, then the roots by the `ntt_twiddles` kernel), and the bank conflicts
/// its pass launches have met.
struct EmuDomain {
    d: Domain,
    s: Schedule,
    tw: Vec<u64>,
    conflicts: u64,
}

impl EmuDomain {
    fn new(log_n: u32) -> EmuDomain {
        let d = Domain::new(log_n).unwrap();
        let s = Schedule::new(log_n);
        let values = s.layout.values(&d);
        // Poisoned like the device buffer (`take_poisoned`): the roots must all be written.
        let mut tw = vec![u64::MAX; s.layout.len as usize * WORDS];
        tw[..values.len() * WORDS].copy_from_slice(Scalar::as_u64s(&values));
        let mut e = EmuDomain { d, s, tw, conflicts: 0 };
        e.run(&s.twiddles(), &mut []);
        e
    }

    /// Runs `launches` with vector `v` in `vectors[v]` (scalars as words).
    fn run(&mut self, launches: &[Launch], vectors: &mut [&mut Vec<u64>]) {
        let k = kernels();
        let n = self.d.size();
        assert!(vectors.iter().all(|v| v.len() == n * WORDS));
        for launch in launches {
            // SAFETY: every pointer is to a buffer of the size the kernel indexes (n scalars, the
            // whole twiddle buffer), as on the device; the arguments are those gpu.rs passes.
            let rc = unsafe {
                match *launch {
                    Launch::Twiddles { dims, roots, w_lo, w_hi, w_lo_bits, half_n } => {
                        (k.twiddles)(dims.grid, dims.block, self.tw.as_mut_ptr(), roots, w_lo, w_hi, w_lo_bits, half_n)
                    }
                    Launch::Pass { v, kernel, dims, args } => {
                        let name = CString::new(kernel.kernel().name).unwrap();
                        let args = args.array();
                        (k.pass)(
                            name.as_ptr(),
                            dims.grid,
                            dims.block,
                            dims.shared_bytes,
                            vectors[v as usize].as_mut_ptr(),
                            self.tw.as_ptr(),
                            args.as_ptr(),
                            &mut self.conflicts,
                        )
                    }
                    Launch::Bitrev { v, dims, log_n, b } => {
                        assert_eq!(dims.shared_bytes, 0);
                        (k.bitrev)(dims.grid, dims.block, vectors[v as usize].as_mut_ptr(), log_n, b)
                    }
                    Launch::Pointwise { dims, z_inv, n } => {
                        let [a, b, c] = vectors else { panic!("pointwise takes a, b, c") };
                        (k.pointwise)(
                            dims.grid,
                            dims.block,
                            a.as_mut_ptr(),
                            b.as_ptr(),
                            c.as_ptr(),
                            self.tw.as_ptr(),
                            z_inv,
                            n,
                        )
                    }
                    Launch::Copy { from, to } => {
                        let src = vectors[from as usize].clone();
                        vectors[to as usize].copy_from_slice(&src);
                        0
                    }
                    Launch::Mul { v, by, dims, n } => {
                        assert_ne!(v, by);
                        let y = vectors[by as usize].as_ptr();
                        (k.mul)(dims.grid, dims.block, vectors[v as usize].as_mut_ptr(), y, n)
                    }
                }
            };
            assert_eq!(
                rc, 0,
                "2^{}: {launch:?} failed in the emulation (1: bad launch, 2: barrier divergence)",
                self.s.log_n
            );
        }
    }

    fn transform(&mut self, t: Transform, x: &[Scalar]) -> Vec<Scalar> {
        let mut a = Scalar::as_u64s(x).to_vec();
        self.run(&self.s.transform(t), &mut [&mut a]);
        Scalar::from_u64s(&a).unwrap()
    }

    /// The H step on a, b and c, or with `c: None` on a, b and c formed on the device as a∘b
    /// (the vector passed for C is then poisoned: nothing may read it before it is written).
    fn h_step(&mut self, a: &[Scalar], b: &[Scalar], c: Option<&[Scalar]>) -> Vec<Scalar> {
        let [mut a, mut b] = [a, b].map(|x| Scalar::as_u64s(x).to_vec());
        let from_ab = c.is_none();
        let mut c = c.map_or_else(|| vec![u64::MAX; a.len()], |c| Scalar::as_u64s(c).to_vec());
        self.run(&self.s.h_step(from_ab), &mut [&mut a, &mut b, &mut c]);
        Scalar::from_u64s(&a).unwrap()
    }
}

fn random(n: usize, rng: &mut impl rand_core::RngCore) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// Every operation on `2^log_n` random points against the CPU path.
fn check_all(log_n: u32, transforms: &[Transform]) {
    let mut e = EmuDomain::new(log_n);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(u64::from(log_n));
    let n = e.d.size();
    let d = e.d.clone();
    for &t in transforms {
        let x = random(n, &mut rng);
        let mut want = x.clone();
        match t {
            Transform::Forward => cpu::fft(&d, &mut want),
            Transform::Inverse => cpu::ifft(&d, &mut want),
            Transform::CosetForward => cpu::coset_fft(&d, &mut want),
            Transform::CosetInverse => cpu::icoset_fft(&d, &mut want),
        }
        .unwrap();
        assert!(e.transform(t, &x) == want, "{t:?} 2^{log_n}");
    }
    let (a, b, c) = (random(n, &mut rng), random(n, &mut rng), random(n, &mut rng));
    let want = cpu::h_poly(&d, a.clone(), b.clone(), c.clone()).unwrap();
    assert!(e.h_step(&a, &b, Some(&c)) == want, "h step 2^{log_n}");
    // c formed as a∘b (a satisfied system's c): the CPU's H step on that c.
    let ab: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let want = cpu::h_poly(&d, a.clone(), b.clone(), ab).unwrap();
    assert!(e.h_step(&a, &b, None) == want, "h step with c = a∘b 2^{log_n}");
    assert_eq!(e.conflicts, 0, "2^{log_n}: shared-memory bank conflicts in the passes");
}

const ALL: [Transform; 4] = [Transform::Forward, Transform::Inverse, Transform::CosetForward, Transform::CosetInverse];

#[test]
fn every_operation_matches_cpu_at_small_sizes() {
    for log_n in 0..=13 {
        check_all(log_n, &ALL);
    }
}

/// Two 9-stage passes (radix 8, the plan of the large sizes) and a full-size bit reversal.
#[test]
fn forward_and_h_step_match_cpu_at_2_18() {
    check_all(18, &[Transform::Forward]);
}

/// `ntt_bitrev` is the bit reversal, where the tiles shrink (b < 4), odd and even middle widths.
#[test]
fn bitrev_kernel_is_the_bit_reversal() {
    for log_n in 0..=13 {
        let mut e = EmuDomain::new(log_n);
        let n = 1u32 << log_n;
        let mut a = Scalar::as_u64s(&(0..u64::from(n)).map(Scalar::from).collect::<Vec<_>>()).to_vec();
        e.run(&e.s.bit_reverse(Vector::A), &mut [&mut a]);
        let got = Scalar::from_u64s(&a).unwrap();
        for (i, x) in got.iter().enumerate() {
            let rev = if log_n == 0 { 0 } else { (i as u32).reverse_bits() >> (32 - log_n) };
            assert_eq!(*x, Scalar::from(u64::from(rev)), "2^{log_n} index {i}");
        }
    }
}

/// A pass's shared-memory accesses depend only on its shape (stages, grouped low indices,
/// radix), so the sizes emulated here and in the tests above (up to 2^18, every shape of
/// every plan up to 2^27) show that no pass of any plan has bank conflicts (16-byte accesses,
/// quarter warps, as modelled by `kiln_emu::bank_conflicts`), in both orders.
#[test]
fn passes_are_free_of_bank_conflicts() {
    let shape = |log_n: u32| passes(log_n).into_iter().map(|p| (p.ks, p.log_g, p.round_log)).collect::<Vec<_>>();
    let emulated: Vec<_> = (1..=18).flat_map(shape).collect();
    for log_n in 19..=crate::MAX_LOG_SIZE {
        for s in shape(log_n) {
            assert!(emulated.contains(&s), "2^{log_n}: pass shape {s:?} is not emulated");
        }
    }
    // The sizes the tests above leave out.
    for log_n in 14..=17 {
        let mut e = EmuDomain::new(log_n);
        let mut a = vec![0u64; e.d.size() * WORDS];
        let launches = [e.s.dif(Vector::A, false, None), e.s.dit(Vector::A, true)].concat();
        e.run(&launches, &mut [&mut a]);
        assert_eq!(e.conflicts, 0, "2^{log_n}: shared-memory bank conflicts in the passes");
    }
}
