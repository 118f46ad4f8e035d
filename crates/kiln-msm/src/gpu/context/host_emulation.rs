//! The real bucket kernels of `kernels/msm/g1.cu` on the CPU: `host_emulation.cpp` compiles
//! them with the host C++ compiler and kiln-kernels' `host/cuda_emulation.h` into a library
//! these tests load, then runs accumulate → join heads (every level) → fix-up over host memory,
//! with the launch shapes and level count [`MsmContext::reduce`](super::MsmContext) uses, and
//! compares every bucket with a CPU sum. The sorted lists are built here, not by the sort
//! kernels, so that a window can hold a bucket spanning hundreds of chunks next to buckets of
//! a few entries, buckets starting on and off chunk edges, and empty ones. The sort's
//! histogram and scatter are tested on their own against digits recoded here. No nvcc, no GPU.

use std::sync::OnceLock;

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field as _;
use group::{Curve as _, Group as _};
use kiln_field::DeviceLayout;
use kiln_kernels::msm::{NONE, SIGN};
use rand::{Rng, SeedableRng};

use super::{ACC_BLOCK, grid, grid_of, join_levels};
use crate::gpu::plan::{ONES_THREADS, ones_fold_levels, ones_fold_rest};

type AccumulateFn = unsafe extern "C" fn(
    u32,
    u32,
    u32,
    *const u64,
    *const u32,
    *const u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    *mut u64,
    *mut u64,
    *mut u64,
    *mut u32,
    *mut u32,
) -> i32;
type JoinHeadsFn =
    unsafe extern "C" fn(u32, u32, u32, *const u32, u32, u32, u32, u32, u32, *mut u64, *const u32) -> i32;
type FixupFn =
    unsafe extern "C" fn(u32, u32, u32, *const u32, u32, u32, u32, u32, *mut u64, *const u64, *const u64) -> i32;
type ToJacobianFn = unsafe extern "C" fn(*const u64, u32, *mut u64);
type SumIndexedFn = unsafe extern "C" fn(u32, u32, *const u64, *const u32, *const u32, u32, *mut u64) -> i32;
type FoldFn = unsafe extern "C" fn(u32, u32, *mut u64, u32, u32) -> i32;
type SumGroupsFn = unsafe extern "C" fn(u32, u32, u32, *const u64, *mut u64, u32, u32, u32) -> i32;
type HistogramFn = unsafe extern "C" fn(u32, u32, *const u64, u32, u32, u32, *mut u32) -> i32;
type ScatterFn = unsafe extern "C" fn(u32, u32, u32, *const u64, *const u32, u32, u32, u32, *mut u32, *mut u32) -> i32;

/// The entry points of the compiled `host_emulation.cpp`.
struct Kernels {
    accumulate: AccumulateFn,
    join_heads: JoinHeadsFn,
    fixup: FixupFn,
    to_jacobian: ToJacobianFn,
    sum_indexed: SumIndexedFn,
    fold: FoldFn,
    sum_groups: SumGroupsFn,
    histogram: HistogramFn,
    scatter: ScatterFn,
    _lib: libloading::Library,
}

/// Compiles and loads the emulation once per test process (the tests share it).
fn kernels() -> &'static Kernels {
    static KERNELS: OnceLock<Kernels> = OnceLock::new();
    KERNELS.get_or_init(|| {
        let source = concat!(env!("CARGO_MANIFEST_DIR"), "/src/gpu/context/host_emulation.cpp");
        let loaded = kiln_kernels::host_emulation::load(std::path::Path::new(source), "kiln_msm_host_emulation")
            .unwrap_or_else(|e| panic!("the host emulation: {e}"));
        // SAFETY: each symbol is an extern "C" function of host_emulation.cpp with the signature
        // of its type; the library stays loaded in `_lib` as long as the pointers live.
        unsafe {
            Kernels {
                accumulate: *loaded.get::<AccumulateFn>(b"kiln_msm_emu_accumulate_g1\0").unwrap(),
                join_heads: *loaded.get::<JoinHeadsFn>(b"kiln_msm_emu_join_heads_g1\0").unwrap(),
                fixup: *loaded.get::<FixupFn>(b"kiln_msm_emu_bucket_fixup_g1\0").unwrap(),
                to_jacobian: *loaded.get::<ToJacobianFn>(b"kiln_msm_emu_xyzz_to_jacobian_g1\0").unwrap(),
                sum_indexed: *loaded.get::<SumIndexedFn>(b"kiln_msm_emu_sum_indexed_g1\0").unwrap(),
                fold: *loaded.get::<FoldFn>(b"kiln_msm_emu_fold_g1\0").unwrap(),
                sum_groups: *loaded.get::<SumGroupsFn>(b"kiln_msm_emu_sum_groups_g1\0").unwrap(),
                histogram: *loaded.get::<HistogramFn>(b"kiln_msm_emu_histogram\0").unwrap(),
                scatter: *loaded.get::<ScatterFn>(b"kiln_msm_emu_scatter_by_window\0").unwrap(),
                _lib: loaded,
            }
        }
    })
}

/// u64 words of one XYZZ point over Fp.
const XYZZ_WORDS: usize = 4 * 6;

/// Windows of sorted entries: `entries[w]` lists bucket by bucket (point index, `SIGN` when
/// negated), `sizes[w][b]` entries in bucket b.
struct Windows {
    sizes: Vec<Vec<u32>>,
    entries: Vec<Vec<u32>>,
}

impl Windows {
    /// Random entries over `points` points for the given bucket sizes.
    fn new(sizes: Vec<Vec<u32>>, points: u32, rng: &mut impl Rng) -> Windows {
        let entries = sizes
            .iter()
            .map(|s| {
                let total = s.iter().sum::<u32>();
                (0..total).map(|_| rng.gen_range(0..points) | if rng.r#gen() { SIGN } else { 0 }).collect()
            })
            .collect();
        Windows { sizes, entries }
    }

    /// The bucket sums by blstrs, window by window.
    fn expected(&self, bases: &[G1Affine]) -> Vec<G1Projective> {
        let mut out = Vec::new();
        for (sizes, entries) in self.sizes.iter().zip(&self.entries) {
            let mut rest = &entries[..];
            for &size in sizes {
                let (bucket, tail) = rest.split_at(size as usize);
                rest = tail;
                out.push(bucket.iter().fold(G1Projective::identity(), |acc, &e| {
                    let p = G1Projective::from(bases[(e & !SIGN) as usize]);
                    if e & SIGN != 0 { acc - p } else { acc + p }
                }));
            }
        }
        out
    }
}

/// The bucket sums the kernels give for `windows`, cut into chunks of `chunk_len` entries,
/// after `levels` launches of msm_join_heads (None: as many as `MsmContext::reduce` runs).
fn device_buckets(windows: &Windows, bases: &[G1Affine], chunk_len: u32, levels: Option<u32>) -> Vec<G1Projective> {
    let k = kernels();
    let w = windows.sizes.len();
    let nb = windows.sizes[0].len();
    assert!(windows.sizes.iter().all(|s| s.len() == nb));
    // The lists' stride: at most one entry per point and window on the device.
    let n = windows.entries.iter().map(Vec::len).max().unwrap();
    let chunks = n.div_ceil(chunk_len as usize);
    let mut sorted = vec![NONE; w * n];
    let mut offsets = Vec::with_capacity(w * (nb + 1));
    for (win, (sizes, entries)) in windows.sizes.iter().zip(&windows.entries).enumerate() {
        sorted[win * n..win * n + entries.len()].copy_from_slice(entries);
        offsets.push(0u32);
        for &s in sizes {
            offsets.push(offsets.last().unwrap() + s);
        }
    }
    // Poisoned like the device scratch (`take_poisoned`): what the kernels must write, they write.
    let mut buckets = vec![u64::MAX; w * nb * XYZZ_WORDS];
    let mut head = vec![u64::MAX; w * chunks * XYZZ_WORDS];
    let mut tail = vec![u64::MAX; w * chunks * XYZZ_WORDS];
    let mut head_b = vec![u32::MAX - 1; w * chunks];
    let mut tail_b = vec![u32::MAX - 1; w * chunks];
    let bases_words = G1Affine::as_u64s(bases);
    let (n32, nb32, w32, chunks32) = (n as u32, nb as u32, w as u32, chunks as u32);
    let acc = grid_of(chunks, w, ACC_BLOCK);
    let join = grid(chunks, w);
    let fix = grid(nb, w);
    // SAFETY: every pointer is to a host buffer of the size the kernel indexes (w windows of
    // n entries, nb + 1 offsets, chunks partials, nb buckets), as on the device; the arguments
    // are those MsmContext::reduce passes.
    unsafe {
        let rc = (k.accumulate)(
            acc.grid_dim.0,
            acc.grid_dim.1,
            acc.block_dim.0,
            bases_words.as_ptr(),
            sorted.as_ptr(),
            offsets.as_ptr(),
            n32,
            nb32,
            w32,
            chunk_len,
            chunks32,
            buckets.as_mut_ptr(),
            head.as_mut_ptr(),
            tail.as_mut_ptr(),
            head_b.as_mut_ptr(),
            tail_b.as_mut_ptr(),
        );
        assert_eq!(rc, 0, "msm_accumulate");
        for level in 0..levels.unwrap_or(join_levels(chunks32)) {
            let rc = (k.join_heads)(
                join.grid_dim.0,
                join.grid_dim.1,
                join.block_dim.0,
                offsets.as_ptr(),
                nb32,
                w32,
                chunk_len,
                chunks32,
                level,
                head.as_mut_ptr(),
                head_b.as_ptr(),
            );
            assert_eq!(rc, 0, "msm_join_heads level {level}");
        }
        let rc = (k.fixup)(
            fix.grid_dim.0,
            fix.grid_dim.1,
            fix.block_dim.0,
            offsets.as_ptr(),
            nb32,
            w32,
            chunk_len,
            chunks32,
            buckets.as_mut_ptr(),
            head.as_ptr(),
            tail.as_ptr(),
        );
        assert_eq!(rc, 0, "msm_bucket_fixup");
    }
    let mut jacobian = vec![0u64; w * nb * G1Projective::WORDS];
    // SAFETY: `buckets` holds w·nb XYZZ points, `jacobian` room for as many Jacobian ones.
    unsafe { (k.to_jacobian)(buckets.as_ptr(), (w * nb) as u32, jacobian.as_mut_ptr()) };
    G1Projective::from_u64s(&jacobian).unwrap()
}

fn random_bases(count: usize, rng: &mut impl Rng) -> Vec<G1Affine> {
    let points: Vec<G1Projective> = (0..count).map(|_| G1Projective::random(&mut *rng)).collect();
    let mut affine = vec![G1Affine::default(); count];
    G1Projective::batch_normalize(&points, &mut affine);
    affine
}

/// Two windows with chunks of 4 entries: a bucket over 326 chunks starting mid-chunk, one
/// of 256 entries starting on a chunk edge (a run of heads of a power of two), one of 257,
/// buckets of a chunk or less on and off edges, empty buckets, and a second window shorter
/// than the first (chunks past its end).
fn heavy_and_light(rng: &mut impl Rng) -> Windows {
    let first = vec![0, 3, 1301, 5, 0, 3, 256, 257, 1, 4, 8, 3, 0];
    let second = vec![4, 4, 4, 0, 0, 9, 130, 1, 2, 0, 64, 7, 0];
    Windows::new(vec![first, second], 64, rng)
}

#[test]
fn buckets_spanning_many_chunks_match_cpu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let bases = random_bases(64, &mut rng);
    let windows = heavy_and_light(&mut rng);
    let expected = windows.expected(&bases);
    for chunk_len in [4, 5, 32] {
        let got = device_buckets(&windows, &bases, chunk_len, None);
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "chunk_len {chunk_len}, window {}, bucket {}", i / 13, i % 13);
        }
    }
}

#[test]
fn random_bucket_sizes_match_cpu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    let bases = random_bases(32, &mut rng);
    for _ in 0..4 {
        let sizes = (0..3)
            .map(|_| {
                (0..16)
                    .map(|_| match rng.gen_range(0..8) {
                        0 => 0,
                        1 => rng.gen_range(100..700),
                        _ => rng.gen_range(1..12),
                    })
                    .collect()
            })
            .collect();
        let windows = Windows::new(sizes, 32, &mut rng);
        let chunk_len = rng.gen_range(2..9);
        assert_eq!(
            device_buckets(&windows, &bases, chunk_len, None),
            windows.expected(&bases),
            "chunk_len {chunk_len}"
        );
    }
}

/// The test above sees a join that stops short: one level fewer leaves the heavy bucket with
/// a head unjoined.
#[test]
fn one_level_fewer_misses_heads() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let bases = random_bases(64, &mut rng);
    let windows = heavy_and_light(&mut rng);
    let n = windows.entries.iter().map(Vec::len).max().unwrap();
    let levels = join_levels(n.div_ceil(4) as u32);
    assert_ne!(device_buckets(&windows, &bases, 4, Some(levels - 1)), windows.expected(&bases));
}

#[test]
fn join_levels_cover_the_longest_run_of_heads() {
    assert_eq!(join_levels(1), 0);
    assert_eq!(join_levels(2), 1);
    assert_eq!(join_levels(3), 2);
    assert_eq!(join_levels(4), 2);
    assert_eq!(join_levels(5), 3);
    for chunks in 2..2000u32 {
        // A bucket has at most chunks - 1 heads; the levels must reach over them all.
        assert!(1u64 << join_levels(chunks) >= u64::from(chunks - 1));
    }
}

/// Σ bases[idx[k]] as the split path sums its ones (`split_raw`): msm_sum_indexed over
/// `ONES_THREADS` threads, the msm_fold levels of `ones_fold_levels` (all, or all but the last
/// when `skip_last`: a planted bug), then msm_sum_groups over the `ones_fold_rest` partials.
fn device_ones_sum(bases: &[G1Affine], idx: &[u32], skip_last: bool) -> G1Projective {
    let k = kernels();
    let mut partials = vec![u64::MAX; ONES_THREADS * XYZZ_WORDS];
    let mut sum = vec![u64::MAX; XYZZ_WORDS];
    let count = [idx.len() as u32];
    let mut levels: Vec<(usize, usize)> = ones_fold_levels().collect();
    if skip_last {
        levels.pop();
    }
    let rest = ones_fold_rest();
    let bases_words = G1Affine::as_u64s(bases);
    let cfg = grid(ONES_THREADS, 1);
    // SAFETY: host buffers of the sizes the kernels index (ONES_THREADS partials, one sum, the
    // idx list of `count` entries into `bases`), the arguments split_raw passes.
    unsafe {
        let rc = (k.sum_indexed)(
            cfg.grid_dim.0,
            cfg.block_dim.0,
            bases_words.as_ptr(),
            idx.as_ptr(),
            count.as_ptr(),
            ONES_THREADS as u32,
            partials.as_mut_ptr(),
        );
        assert_eq!(rc, 0, "msm_sum_indexed");
        for (len, fan) in levels {
            let cfg = grid(fan, 1);
            let rc = (k.fold)(cfg.grid_dim.0, cfg.block_dim.0, partials.as_mut_ptr(), len as u32, fan as u32);
            assert_eq!(rc, 0, "msm_fold {len} -> {fan}");
        }
        let one = grid(1, 1);
        let rc = (k.sum_groups)(
            one.grid_dim.0,
            one.grid_dim.1,
            one.block_dim.0,
            partials.as_ptr(),
            sum.as_mut_ptr(),
            rest as u32,
            1,
            1,
        );
        assert_eq!(rc, 0, "msm_sum_groups");
    }
    let mut jacobian = vec![0u64; G1Projective::WORDS];
    // SAFETY: `sum` holds one XYZZ point, `jacobian` room for one Jacobian point.
    unsafe { (k.to_jacobian)(sum.as_ptr(), 1, jacobian.as_mut_ptr()) };
    G1Projective::from_u64s(&jacobian).unwrap()[0]
}

/// The ones' sum through the fold tree equals blstrs' sum: more ones than threads (threads
/// with two additions and with one), fewer (most threads add nothing), and none.
#[test]
fn ones_sum_through_the_fold_tree_matches_cpu() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let bases = random_bases(257, &mut rng);
    for count in [ONES_THREADS + 4321, 1000, 1, 0] {
        let idx: Vec<u32> = (0..count).map(|_| rng.gen_range(0..bases.len() as u32)).collect();
        let want = idx.iter().fold(G1Projective::identity(), |acc, &i| acc + bases[i as usize]);
        assert_eq!(device_ones_sum(&bases, &idx, false), want, "{count} ones");
    }
}

/// The test above sees a tree that stops short: without the last fold level, the final sum
/// over `ones_fold_rest` partials misses the others.
#[test]
fn one_fold_level_fewer_misses_partials() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let bases = random_bases(64, &mut rng);
    let idx: Vec<u32> = (0..ONES_THREADS as u32).map(|i| i % 64).collect();
    let want = idx.iter().fold(G1Projective::identity(), |acc, &i| acc + bases[i as usize]);
    assert_eq!(device_ones_sum(&bases, &idx, false), want);
    assert_ne!(device_ones_sum(&bases, &idx, true), want);
}

#[test]
fn fold_levels_end_at_a_few_partials() {
    let levels: Vec<_> = ones_fold_levels().collect();
    assert_eq!(levels.first().map(|l| l.0), Some(ONES_THREADS));
    for pair in levels.windows(2) {
        assert_eq!(pair[0].1, pair[1].0, "each level folds what the last one left");
    }
    assert!(ones_fold_rest() <= 16 && ones_fold_rest() >= 1);
}

/// The signed c-bit digits of `k`, window by window, as (bucket, negative) or None for a zero
/// digit: the recoding msm.cuh describes (v = bits + carry; above 2^(c-1) the digit is v − 2^c
/// and carries one), written again from that description.
fn reference_digits(k: &Scalar, c: u32, windows: u32) -> Vec<Option<(u32, bool)>> {
    let bytes = k.to_bytes_le();
    let bit = |i: u32| if i >= 256 { 0 } else { u32::from((bytes[(i / 8) as usize] >> (i % 8)) & 1) };
    let half = 1u32 << (c - 1);
    let mut carry = 0;
    (0..windows)
        .map(|w| {
            let v = (0..c).map(|j| bit(w * c + j) << j).sum::<u32>() + carry;
            carry = u32::from(v > half);
            if v > half {
                let mag = (1u32 << c) - v;
                (mag != 0).then(|| (mag - 1, true))
            } else {
                (v != 0).then(|| (v - 1, false))
            }
        })
        .collect()
}

/// The counting sort's histogram and window-by-window scatter (msm.cuh, as sort.cu's kernels run
/// them, with `MsmContext::sort`'s launch shapes) against the reference digits: every window's counts, and each bucket
/// holding exactly the points (mapped as the split's tail maps them) whose digit it is, signed.
/// Window sizes with many carries (3), windows across limbs (13), on limb halves (16) and 2^24's (20); scalars
/// random and at the carry edges (0, 1, −1, 2^(c−1), 2^(c−1) + 1, 2^c − 1).
#[test]
fn sort_buckets_every_digit() {
    let seed: u64 = rand::random();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let k = kernels();
    for c in [3u32, 13, 16, 20] {
        let windows = 256u32.div_ceil(c);
        let nb = 1usize << (c - 1);
        let mut scalars: Vec<Scalar> = (0..300).map(|_| Scalar::random(&mut rng)).collect();
        let edges = [0, 1, 1u64 << (c - 1), (1u64 << (c - 1)) + 1, (1u64 << c) - 1];
        scalars.extend(edges.iter().map(|&e| Scalar::from(e)));
        scalars.push(-Scalar::ONE);
        let n = scalars.len();
        let digits: Vec<_> = scalars.iter().map(|s| reference_digits(s, c, windows)).collect();
        // The reference is a recoding of the scalar: Σ ±(b + 1)·2^(c·w) gives it back.
        for (s, d) in scalars.iter().zip(&digits) {
            let back = d.iter().enumerate().fold(Scalar::ZERO, |acc, (w, d)| {
                let Some((b, neg)) = *d else { return acc };
                let v = Scalar::from(u64::from(b) + 1) * Scalar::from(2u64).pow_vartime([u64::from(c) * w as u64]);
                if neg { acc - v } else { acc + v }
            });
            assert_eq!(back, *s, "reference digits of {s:?}, c = {c}");
        }
        let map: Vec<u32> = (0..n as u32).map(|i| 3 * i + 1).collect();
        let words = Scalar::as_u64s(&scalars);
        // The launch shapes MsmContext::sort uses: a thread per scalar, then per (scalar, window).
        let (by_scalar, cfg) = (grid(n, 1), grid(n, windows as usize));
        let (n32, w32) = (n as u32, windows);
        let mut counts = vec![0u32; windows as usize * nb];
        // SAFETY: words holds n scalars (4 words each), counts windows × nb counters, as the
        // device buffers MsmContext::sort passes.
        let rc = unsafe {
            (k.histogram)(by_scalar.grid_dim.0, by_scalar.block_dim.0, words.as_ptr(), n32, c, w32, counts.as_mut_ptr())
        };
        assert_eq!(rc, 0, "histogram launch");
        // (window × nb + bucket, entry) for every non-zero digit.
        let mut want_counts = vec![0u32; windows as usize * nb];
        let mut want = Vec::new();
        for (i, d) in digits.iter().enumerate() {
            for (w, d) in d.iter().enumerate() {
                if let Some((b, neg)) = *d {
                    want_counts[w * nb + b as usize] += 1;
                    want.push((w * nb + b as usize, map[i] | if neg { SIGN } else { 0 }));
                }
            }
        }
        want.sort_unstable();
        assert_eq!(counts, want_counts, "c = {c}, seed {seed}: counts");
        // The scan (msm_scan's output, here on the host): offsets and cursors per window.
        let mut offsets = vec![0u32; windows as usize * (nb + 1)];
        for w in 0..windows as usize {
            for b in 0..nb {
                offsets[w * (nb + 1) + b + 1] = offsets[w * (nb + 1) + b] + counts[w * nb + b];
            }
        }
        let mut cursor: Vec<u32> = (0..windows as usize * nb).map(|i| offsets[i / nb * (nb + 1) + i % nb]).collect();
        let mut sorted = vec![NONE; windows as usize * n];
        // SAFETY: as above; map holds n indices, cursor windows × nb, sorted windows × n entries.
        let rc = unsafe {
            (k.scatter)(
                cfg.grid_dim.0,
                cfg.grid_dim.1,
                cfg.block_dim.0,
                words.as_ptr(),
                map.as_ptr(),
                n32,
                c,
                w32,
                cursor.as_mut_ptr(),
                sorted.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0, "scatter launch");
        let mut got = Vec::new();
        for w in 0..windows as usize {
            let off = &offsets[w * (nb + 1)..(w + 1) * (nb + 1)];
            for b in (0..nb).filter(|&b| off[b] < off[b + 1]) {
                let list = &sorted[w * n + off[b] as usize..w * n + off[b + 1] as usize];
                got.extend(list.iter().map(|&e| (w * nb + b, e)));
            }
            assert!(sorted[w * n + off[nb] as usize..(w + 1) * n].iter().all(|&e| e == NONE), "c = {c}: past the end");
        }
        got.sort_unstable();
        assert_eq!(got, want, "c = {c}, seed {seed}: the buckets' entries");
    }
}
