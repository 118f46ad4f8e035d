//! How a GPU transform is cut into shared-memory passes, and the layout of the twiddle
//! tables: pure host logic, shared by the launcher (`gpu`) and the CPU emulation of the
//! kernel that tests it without a GPU.

use blstrs::Scalar;
use ff::Field;

use crate::Domain;
use crate::domain::powers;

/// Most butterfly stages one pass does in shared memory (2^27 = 3 passes).
pub(crate) const MAX_STAGES_PER_PASS: u32 = 9;
/// log2 of the most points one block holds in shared memory (`NTT_MAX_LOG_POINTS` of ntt.cu):
/// the plan stays within it (tested), as `PASS_THREADS_LOG` and the radices make it.
#[cfg(test)]
pub(crate) const MAX_LOG_POINTS: u32 = kiln_kernels::ntt::MAX_LOG_POINTS;
/// log2 of the most threads a pass block has (`NTT_PASS_THREADS` of ntt.cu, the kernels' launch
/// bounds): a block holds at most `2^(PASS_THREADS_LOG + round_log)` points.
pub(crate) const PASS_THREADS_LOG: u32 = kiln_kernels::ntt::PASS_THREADS.ilog2();
const _: () = assert!(kiln_kernels::ntt::PASS_THREADS.is_power_of_two());

/// The order of a pass: DIF takes natural order and leaves bit-reversed order, DIT the opposite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Dif,
    Dit,
}

/// Which pass kernel runs: its order, its rounds' radix (`2^round_log`: 8 or 4) and its
/// direction (the inverse transform, ω^-1). One compiled kernel per combination
/// (`ntt_pass_{dif,dit}{8,4}[_inv]`), so each is register-allocated for its own rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PassKernel {
    pub order: Order,
    pub round_log: u32,
    pub inverse: bool,
}

impl PassKernel {
    /// Every pass kernel, in the order `GpuDomain` loads them ([`PassKernel::index`]).
    pub(crate) const ALL: [PassKernel; 8] = [
        PassKernel::new(Order::Dif, 3, false),
        PassKernel::new(Order::Dit, 3, false),
        PassKernel::new(Order::Dif, 2, false),
        PassKernel::new(Order::Dit, 2, false),
        PassKernel::new(Order::Dif, 3, true),
        PassKernel::new(Order::Dit, 3, true),
        PassKernel::new(Order::Dif, 2, true),
        PassKernel::new(Order::Dit, 2, true),
    ];

    const fn new(order: Order, round_log: u32, inverse: bool) -> PassKernel {
        PassKernel { order, round_log, inverse }
    }

    /// The kernel running `pass` in `order` and direction `inverse`.
    pub(crate) fn of(pass: &Pass, order: Order, inverse: bool) -> PassKernel {
        PassKernel { order, round_log: pass.round_log, inverse }
    }

    /// Its position in [`PassKernel::ALL`].
    pub(crate) fn index(self) -> usize {
        4 * usize::from(self.inverse) + 2 * usize::from(self.round_log == 2) + usize::from(self.order == Order::Dit)
    }

    /// The kernel of `ntt.cu` it is.
    pub(crate) fn kernel(self) -> kiln_kernels::Kernel {
        use kiln_kernels::ntt;
        match (self.order, self.round_log, self.inverse) {
            (Order::Dif, 3, false) => ntt::PASS_DIF8,
            (Order::Dit, 3, false) => ntt::PASS_DIT8,
            (Order::Dif, _, false) => ntt::PASS_DIF4,
            (Order::Dit, _, false) => ntt::PASS_DIT4,
            (Order::Dif, 3, true) => ntt::PASS_DIF8_INV,
            (Order::Dit, 3, true) => ntt::PASS_DIT8_INV,
            (Order::Dif, _, true) => ntt::PASS_DIF4_INV,
            (Order::Dit, _, true) => ntt::PASS_DIT4_INV,
        }
    }
}

/// One pass: stages `[l, l + ks)`, `2^log_g` consecutive low indices per block, in rounds of
/// `round_log` stages that a thread does in registers between shared-memory exchanges (radix
/// `2^round_log`: 3 or 2, the kernels `ntt_pass_{dif,dit}8` and `…4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pass {
    pub l: u32,
    pub ks: u32,
    pub log_g: u32,
    pub round_log: u32,
}

impl Pass {
    /// Points one block holds.
    pub(crate) fn points(&self) -> u32 {
        1 << (self.ks + self.log_g)
    }

    /// `(blocks, threads per block, dynamic shared memory bytes)` of the launch for a
    /// transform of `2^log_n` points: one thread per radix group, 32 bytes per point.
    pub(crate) fn launch_dims(&self, log_n: u32) -> (u32, u32, u32) {
        let blocks = 1u32 << (log_n - self.ks - self.log_g);
        let threads = (self.points() >> self.round_log).max(1);
        (blocks, threads, self.points() * 32)
    }
}

/// The passes of a `2^log_n` transform in ascending stage order (a DIT runs them in this
/// order, a DIF in reverse). Stages are split as evenly as possible over the fewest passes.
pub(crate) fn passes(log_n: u32) -> Vec<Pass> {
    if log_n == 0 {
        return Vec::new();
    }
    let np = log_n.div_ceil(MAX_STAGES_PER_PASS);
    let (base, extra) = (log_n / np, log_n % np);
    let mut l = 0;
    (0..np)
        .map(|i| {
            let ks = base + u32::from(i < extra);
            // Radix 8 for passes of 9 stages (three full rounds), radix 4 (more warps per SM,
            // more rounds) for the rest: each wins where it is used, and uneven plans win
            // nothing (docs/PERF.md, NTT pass plan).
            let round_log = if ks == MAX_STAGES_PER_PASS { 3 } else { 2 };
            // Group low indices only where there are low bits below the pass (l > 0): a warp
            // then reads runs of consecutive elements instead of lone 32-byte ones. As many as
            // the kernel's threads hold (2^round_log points each): 128-thread blocks, 4 warps
            // waiting at each round's barrier instead of 8 (docs/PERF.md, NTT blocks).
            let log_g = (PASS_THREADS_LOG + round_log - ks).min(l);
            let p = Pass { l, ks, log_g, round_log };
            l += ks;
            p
        })
        .collect()
}

/// Offsets (in elements of 32 bytes) of the tables in the one twiddle buffer: small tables
/// computed on the host (`values`), then the table of every root the passes read, `roots`,
/// filled on the device from `w_lo`/`w_hi` (`ntt_twiddles`, modelled by [`Layout::roots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Low bits of a root exponent (< n/2) looked up in the `w_lo` table.
    pub w_lo_bits: u32,
    /// `ω^i`, i < 2^w_lo_bits.
    pub w_lo: u32,
    /// `ω^(i·2^w_lo_bits)`.
    pub w_hi: u32,
    /// Low bits of a coset exponent (< n) looked up in the `g*_lo` tables.
    pub g_lo_bits: u32,
    /// `g^i`.
    pub g_lo: u32,
    /// `g^(i·2^g_lo_bits)`.
    pub g_hi: u32,
    /// `(1/n)·g^(i·2^g_lo_bits)`.
    pub gn_hi: u32,
    /// `g^-i`.
    pub gi_lo: u32,
    /// `(1/n)·g^(-i·2^g_lo_bits)`.
    pub gin_hi: u32,
    /// `1/n`.
    pub n_inv: u32,
    /// `1/(g^n - 1)`.
    pub z_inv: u32,
    /// `ω^x` for every `x <= half_n` (the last is `ω^(n/2) = -1`): the twiddles, and the
    /// inverse's `ω^-x = -ω^(n/2 - x)` for every `x < n/2`, 0 included.
    pub roots: u32,
    /// `n/2` (0 when n = 1).
    pub half_n: u32,
    /// Elements in all (the host tables are the first `roots`).
    pub len: u32,
}

impl Layout {
    pub(crate) fn new(log_n: u32) -> Layout {
        let eb = log_n.saturating_sub(1); // root exponents have log_n - 1 bits
        let w_lo_bits = eb.div_ceil(2);
        let (wl, wh) = (1u32 << w_lo_bits, 1u32 << (eb - w_lo_bits));
        let g_lo_bits = log_n.div_ceil(2);
        let (gl, gh) = (1u32 << g_lo_bits, 1u32 << (log_n - g_lo_bits));
        let mut at = 0;
        let mut take = |len: u32| {
            let o = at;
            at += len;
            o
        };
        let (w_lo, w_hi) = (take(wl), take(wh));
        let (g_lo, g_hi, gn_hi, gi_lo, gin_hi) = (take(gl), take(gh), take(gh), take(gl), take(gh));
        let (n_inv, z_inv) = (take(1), take(1));
        let half_n = (1u32 << log_n) >> 1;
        // ω^x for x <= n/2 (none for n = 1).
        let roots = take(if half_n == 0 { 0 } else { half_n + 1 });
        Layout {
            w_lo_bits,
            w_lo,
            w_hi,
            g_lo_bits,
            g_lo,
            g_hi,
            gn_hi,
            gi_lo,
            gin_hi,
            n_inv,
            z_inv,
            roots,
            half_n,
            len: at,
        }
    }

    /// The host-computed tables (everything before `roots`), in layout order.
    pub(crate) fn values(&self, d: &Domain) -> Vec<Scalar> {
        let n = self.roots as usize;
        let mut out = Vec::with_capacity(n);
        let wl = 1usize << self.w_lo_bits;
        let wh = (self.g_lo - self.w_hi) as usize;
        let hi_step = |x: Scalar, bits: u32| x.pow_vartime([1u64 << bits]);
        out.extend(powers(d.omega(), wl));
        out.extend(powers(hi_step(d.omega(), self.w_lo_bits), wh));
        let gl = 1usize << self.g_lo_bits;
        let gh = (self.gn_hi - self.g_hi) as usize;
        let (g, gi, ninv) = (d.generator(), d.generator_inv(), d.size_inv());
        out.extend(powers(g, gl));
        let g_hi = powers(hi_step(g, self.g_lo_bits), gh);
        out.extend(g_hi.iter().copied());
        out.extend(g_hi.iter().map(|v| v * ninv));
        out.extend(powers(gi, gl));
        out.extend(powers(hi_step(gi, self.g_lo_bits), gh).into_iter().map(|v| v * ninv));
        out.push(ninv);
        out.push(d.z_on_coset_inv());
        debug_assert_eq!(out.len(), n);
        out
    }

    /// The `roots` table as `ntt_twiddles` fills it from the host tables `values`.
    #[cfg(test)]
    pub(crate) fn roots(&self, values: &[Scalar]) -> Vec<Scalar> {
        let mask = (1u32 << self.w_lo_bits) - 1;
        let mut out: Vec<Scalar> = (0..self.half_n)
            .map(|x| values[(self.w_hi + (x >> self.w_lo_bits)) as usize] * values[(self.w_lo + (x & mask)) as usize])
            .collect();
        if self.half_n > 0 {
            out.push(-Scalar::ONE);
        }
        out
    }
}

/// How a pass scales the elements it loads or stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    None,
    /// Multiply by the table element at this offset.
    Const(u32),
    /// Multiply by `hi[k >> lo_bits] · lo[k & mask]`, k = index (or its bit reversal).
    Powers {
        lo: u32,
        hi: u32,
        lo_bits: u32,
        bitrev: bool,
    },
}

impl Scale {
    /// `(mode, lo, hi, lo_bits, bitrev)` as the kernel takes them (modes `NTT_SCALE_*` of ntt.cu).
    pub(crate) fn args(&self) -> (u32, u32, u32, u32, u32) {
        use kiln_kernels::ntt::{SCALE_CONST, SCALE_NONE, SCALE_POWERS};
        match *self {
            Scale::None => (SCALE_NONE, 0, 0, 0, 0),
            Scale::Const(at) => (SCALE_CONST, 0, at, 0, 0),
            Scale::Powers { lo, hi, lo_bits, bitrev } => (SCALE_POWERS, lo, hi, lo_bits, u32::from(bitrev)),
        }
    }
}

/// Where in the transform the scale is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScaleAt {
    /// On load in the first pass.
    Load,
    /// On store in the last pass.
    Store,
}

/// log2 of the side of a bit-reversal tile (`NTT_BITREV_TILE_LOG` of ntt.cu): rows of 16
/// consecutive points, 512 bytes.
pub(crate) const BITREV_TILE_LOG: u32 = kiln_kernels::ntt::BITREV_TILE_LOG;
/// Threads of an `ntt_bitrev` block (`NTT_BITREV_THREADS`): one per 16-byte unit of a tile.
pub(crate) const BITREV_THREADS: u32 = kiln_kernels::ntt::BITREV_THREADS;

/// `(blocks, b)` of the `ntt_bitrev` launch for `2^log_n` points: tiles of `2^b × 2^b` points,
/// one block per tile (those whose tile maps onto a lower one do nothing).
pub(crate) fn bitrev_tiles(log_n: u32) -> (u32, u32) {
    let b = BITREV_TILE_LOG.min(log_n / 2);
    (1 << (log_n - 2 * b), b)
}

#[cfg(test)]
/// The element `k` the kernel's `bitrev(i, log_n)` maps `i` to.
pub(crate) fn bitrev(i: u32, log_n: u32) -> u32 {
    if log_n == 0 { 0 } else { i.reverse_bits() >> (32 - log_n) }
}

/// A line-by-line CPU model of the `ntt_pass_*` and `ntt_bitrev` kernels (same index
/// arithmetic, same tables), so the pass plan and the indexing are tested without a GPU.
#[cfg(test)]
pub(crate) mod emulate {
    use super::*;

    /// The kernel's shared-memory swizzle of 16-byte units (`swizzle` in ntt.cu).
    pub(crate) fn swizzle(u: u32) -> u32 {
        u ^ (((u >> 3) ^ (u >> 4) ^ (u >> 5)) & 7)
    }

    /// A shared array as the kernel lays it out: `units` 16-byte units, element `e` in units
    /// `swizzle(2e)` and `swizzle(2e + 1)`. Indexing panics where the kernel would overrun.
    struct Shared(Vec<[u64; 2]>);

    impl Shared {
        fn new(units: usize) -> Shared {
            Shared(vec![[u64::MAX; 2]; units])
        }
        fn st(&mut self, e: u32, v: Scalar) {
            let w = kiln_field::DeviceLayout::as_u64s(std::slice::from_ref(&v));
            self.0[swizzle(2 * e) as usize] = [w[0], w[1]];
            self.0[swizzle(2 * e + 1) as usize] = [w[2], w[3]];
        }
        fn ld(&self, e: u32) -> Scalar {
            let (x, y) = (self.0[swizzle(2 * e) as usize], self.0[swizzle(2 * e + 1) as usize]);
            <Scalar as kiln_field::DeviceLayout>::from_u64s(&[x[0], x[1], y[0], y[1]]).expect("4 words")[0]
        }
    }

    fn scale_factor(tw: &[Scalar], s: Scale, k: u32) -> Scalar {
        let (mode, lo, hi, lo_bits, _) = s.args();
        if mode == 1 {
            return tw[hi as usize];
        }
        tw[(hi + (k >> lo_bits)) as usize] * tw[(lo + (k & ((1u32 << lo_bits) - 1))) as usize]
    }

    /// What `PassArgs` carries in the kernel.
    struct Args<'a> {
        roots: &'a [Scalar],
        log_n: u32,
        l: u32,
        log_g: u32,
        lo_base: u32,
        hi_base: u32,
        inverse: bool,
    }

    impl Args<'_> {
        /// The kernel's `global_index`.
        fn global_index(&self, e: u32) -> u32 {
            self.hi_base + ((e >> self.log_g) << self.l) + self.lo_base + (e & ((1 << self.log_g) - 1))
        }
    }

    /// The pass's global data and scaling (the kernel's `a`, `tw` and scale arguments).
    struct Io<'a> {
        a: &'a mut [Scalar],
        tw: &'a [Scalar],
        scale: Option<(ScaleAt, Scale)>,
    }

    impl Io<'_> {
        /// The kernel's `scaled`.
        fn scaled(&self, at: ScaleAt, idx: u32, log_n: u32, v: Scalar) -> Scalar {
            match self.scale {
                Some((when, s)) if when == at => {
                    let bitrev_flag = s.args().4 != 0;
                    v * scale_factor(self.tw, s, if bitrev_flag { bitrev(idx, log_n) } else { idx })
                }
                _ => v,
            }
        }
    }

    /// The kernel's `twiddle`: `ω^x`, or `ω^(n/2-x)` (= `-ω^-x`) for the inverse.
    fn twiddle(p: &Args, r: u32, lo: u32, t: u32) -> Scalar {
        let x = ((r << p.l) | lo) << (p.log_n - 1 - p.l - t);
        p.roots[if p.inverse { p.roots.len() as u32 - 1 - x } else { x } as usize]
    }

    /// The kernel's `butterfly`: the inverse folds the sign of its negated twiddle.
    fn butterfly(dit: bool, inverse: bool, x: &mut Scalar, y: &mut Scalar, w: Scalar) {
        if dit {
            let u = *y * w;
            let (s, d) = (*x + u, *x - u);
            (*x, *y) = if inverse { (d, s) } else { (s, d) };
        } else {
            let s = *x + *y;
            let d = if inverse { *y - *x } else { *x - *y };
            (*x, *y) = (s, d * w);
        }
    }

    /// The first point of group `q` in a round whose bits start at `p0` of the local index
    /// (`base` in the kernel's `radix_round`); point `k` of the group is `base + (k << p0)`.
    pub(crate) fn group_base(q: u32, p0: u32, rk: u32) -> u32 {
        ((q >> p0) << (p0 + rk)) | (q & ((1 << p0) - 1))
    }

    /// The kernel's `unit_butterfly`: twiddle 1, either order.
    fn unit_butterfly(x: &mut Scalar, y: &mut Scalar) {
        (*x, *y) = (*x + *y, *x - *y);
    }

    /// The kernel's `radix_round` (all threads' groups in turn); `unit_m0` is its `UNIT_M0`.
    fn radix_round(sh: &mut Shared, p: &Args, pts: u32, (t_lo, rk): (u32, u32), dit: bool, unit_m0: bool) {
        let radix = 1u32 << rk;
        let p0 = t_lo + p.log_g;
        for q in 0..(pts >> rk) {
            let base = group_base(q, p0, rk);
            let mut v: Vec<Scalar> = (0..radix).map(|k| sh.ld(base + (k << p0))).collect();
            let lo = p.lo_base | (base & ((1 << p.log_g) - 1));
            let r_base = (base >> p.log_g) & ((1 << t_lo) - 1);
            for s in 0..rk {
                let b = if dit { s } else { rk - 1 - s };
                for m in 0..(1u32 << b) {
                    let tw =
                        if m == 0 && unit_m0 { None } else { Some(twiddle(p, r_base | (m << t_lo), lo, t_lo + b)) };
                    let mut k0 = m;
                    while k0 < radix {
                        let (lo_half, hi_half) = v.split_at_mut((k0 + (1 << b)) as usize);
                        let (x, y) = (&mut lo_half[k0 as usize], &mut hi_half[0]);
                        match tw {
                            Some(w) => butterfly(dit, p.inverse, x, y, w),
                            None => unit_butterfly(x, y),
                        }
                        k0 += 2 << b;
                    }
                }
            }
            for (k, x) in v.into_iter().enumerate() {
                sh.st(base + ((k as u32) << p0), x);
            }
        }
    }

    /// One launch of `ntt_pass_*` (the kernel of `p.round_log`): `roots` is the layout's roots table (`Layout::roots`).
    pub(crate) fn pass(
        a: &mut [Scalar],
        tw: &[Scalar],
        roots: &[Scalar],
        log_n: u32,
        p: Pass,
        (dit, inverse): (bool, bool),
        scale: Option<(ScaleAt, Scale)>,
    ) {
        let Pass { l, ks, log_g, round_log } = p;
        let (blocks, _, shared_bytes) = p.launch_dims(log_n);
        let pts = p.points();
        let io = Io { a, tw, scale };
        for blk in 0..blocks {
            let lo_blocks_log = l - log_g;
            let lo_base = (blk & ((1u32 << lo_blocks_log) - 1)) << log_g;
            let hi_base = (blk >> lo_blocks_log) << (l + ks);
            // The dynamic shared array: 32 bytes (2 units) per point.
            let mut sh = Shared::new((shared_bytes / 16) as usize);
            let args = Args { roots, log_n, l, log_g, lo_base, hi_base, inverse };
            for e in 0..pts {
                let idx = args.global_index(e);
                sh.st(e, io.scaled(ScaleAt::Load, idx, log_n, io.a[idx as usize]));
            }
            let count = ks.div_ceil(round_log);
            for i in 0..count {
                let r = if dit { i } else { count - 1 - i };
                let t_lo = r * round_log;
                let rk = (ks - t_lo).min(round_log);
                radix_round(&mut sh, &args, pts, (t_lo, rk), dit, l == 0 && t_lo == 0);
            }
            for e in 0..pts {
                let idx = args.global_index(e);
                io.a[idx as usize] = io.scaled(ScaleAt::Store, idx, log_n, sh.ld(e));
            }
        }
    }

    /// The kernel's `ntt_bitrev` (all blocks in turn: each touches only its own pair of tiles).
    pub(crate) fn bitrev_permute(a: &mut [Scalar], log_n: u32) {
        let (blocks, b) = bitrev_tiles(log_n);
        let mid = log_n - 2 * b;
        let point = |h: u32, m: u32, l: u32| ((h << (mid + b)) | (m << b) | l) as usize;
        for m in 0..blocks {
            let m_rev = bitrev(m, mid);
            if m > m_rev {
                continue;
            }
            let side = 1u32 << b;
            let tiles: Vec<[Scalar; 2]> = (0..side * side)
                .map(|e| {
                    let (h, l) = (e >> b, e & (side - 1));
                    [a[point(h, m, l)], a[point(h, m_rev, l)]]
                })
                .collect();
            for e in 0..side * side {
                let (h, l) = (e >> b, e & (side - 1));
                let src = ((bitrev(l, b) << b) | bitrev(h, b)) as usize;
                a[point(h, m_rev, l)] = tiles[src][0];
                if m != m_rev {
                    a[point(h, m, l)] = tiles[src][1];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::emulate::{bitrev_permute, pass};
    use super::*;
    use crate::cpu;
    use rand::SeedableRng;

    /// The GPU sequences of `gpu.rs`, run through the kernel model.
    struct Model {
        d: Domain,
        l: Layout,
        tw: Vec<Scalar>,
        roots: Vec<Scalar>,
    }

    impl Model {
        fn new(log_n: u32) -> Model {
            let d = Domain::new(log_n).unwrap();
            let l = Layout::new(log_n);
            let tw = l.values(&d);
            assert_eq!(tw.len(), l.roots as usize);
            let roots = l.roots(&tw);
            assert_eq!(tw.len() + roots.len(), l.len as usize);
            Model { d, l, tw, roots }
        }
        fn run(&self, a: &mut [Scalar], dit: bool, inverse: bool, scale: Option<(ScaleAt, Scale)>) {
            let log_n = self.d.log_size();
            let mut ps = passes(log_n);
            if !dit {
                ps.reverse();
            }
            let last = ps.len().saturating_sub(1);
            for (i, p) in ps.iter().enumerate() {
                let s = match scale {
                    Some((ScaleAt::Load, _)) if i == 0 => scale,
                    Some((ScaleAt::Store, _)) if i == last => scale,
                    _ => None,
                };
                pass(a, &self.tw, &self.roots, log_n, *p, (dit, inverse), s);
            }
        }
        fn br(&self, a: &mut [Scalar]) {
            if self.d.log_size() > 0 {
                bitrev_permute(a, self.d.log_size());
            }
        }
        fn icoset(&self) -> Scale {
            Scale::Powers { lo: self.l.gi_lo, hi: self.l.gin_hi, lo_bits: self.l.g_lo_bits, bitrev: true }
        }
    }

    fn random(n: usize, rng: &mut impl rand_core::RngCore) -> Vec<Scalar> {
        (0..n).map(|_| Scalar::random(&mut *rng)).collect()
    }

    #[test]
    fn plan_is_valid_for_every_size() {
        for log_n in 0..=crate::MAX_LOG_SIZE {
            let ps = passes(log_n);
            assert_eq!(ps.iter().map(|p| p.ks).sum::<u32>(), log_n);
            let mut l = 0;
            for p in &ps {
                assert_eq!(p.l, l);
                assert!(p.ks >= 1 && p.ks <= MAX_STAGES_PER_PASS && p.ks + p.log_g <= MAX_LOG_POINTS);
                assert!(p.log_g <= p.l);
                // A kernel of the pass's radix exists, and the launch stays within its bounds
                // (`__launch_bounds__(NTT_PASS_THREADS, ..)`).
                assert!(p.round_log == 2 || p.round_log == 3, "{p:?}");
                assert!(p.launch_dims(log_n).1 <= 1 << PASS_THREADS_LOG, "{p:?}");
                l += p.ks;
            }
            if log_n == 27 {
                assert_eq!(ps.len(), 3);
            }
            // The host tables stay small; the roots table is the rest.
            let lay = Layout::new(log_n);
            assert!(lay.roots < 1 << 18, "host tables at 2^{log_n}: {} elements", lay.roots);
            assert_eq!(lay.len - lay.roots, if log_n == 0 { 0 } else { (1u32 << log_n) / 2 + 1 });
        }
    }

    #[test]
    fn swizzle_is_a_permutation_of_each_shared_array() {
        // Two units per point, for every block size a pass uses.
        for units in (1..=MAX_LOG_POINTS).map(|log_p| 2u32 << log_p) {
            let mut seen = vec![false; units as usize];
            for u in 0..units {
                let p = super::emulate::swizzle(u) as usize;
                assert!(p < units as usize && !seen[p], "unit {u} -> {p} of {units}");
                seen[p] = true;
            }
        }
    }

    /// Shared-memory bank model of the passes: a warp's 16-byte (LDS.128/STS.128) access is
    /// served 8 threads at a time, one wavefront per distinct 16-byte bank group hit most
    /// often. Every round (radix 8 or 4, as planned) and the load and store loops (thread t,
    /// point t + i·threads) of every pass plan up to 2^27 must need exactly one wavefront per 8
    /// threads (no conflicts).
    #[test]
    fn passes_are_free_of_bank_conflicts() {
        let conflict_free = |es: &[u32]| {
            (0..2).all(|unit| {
                let mut hits = [0u32; 8];
                es.iter().for_each(|e| hits[(super::emulate::swizzle(2 * e + unit) & 7) as usize] += 1);
                hits.iter().all(|&h| h <= 1)
            })
        };
        for log_n in 3..=27 {
            for p in passes(log_n) {
                let pts = p.points();
                let threads = p.launch_dims(log_n).1;
                for i in 0..pts / threads {
                    for t0 in (0..threads).step_by(8) {
                        let es: Vec<u32> = (t0..(t0 + 8).min(threads)).map(|t| t + i * threads).collect();
                        assert!(conflict_free(&es), "2^{log_n} {p:?} load/store loop: points {es:?}");
                    }
                }
                for r in 0..p.ks.div_ceil(p.round_log) {
                    let t_lo = r * p.round_log;
                    let rk = (p.ks - t_lo).min(p.round_log);
                    let p0 = t_lo + p.log_g;
                    let groups = pts >> rk;
                    for k in 0..1u32 << rk {
                        for q0 in (0..groups).step_by(8) {
                            let es: Vec<u32> = (q0..(q0 + 8).min(groups))
                                .map(|q| super::emulate::group_base(q, p0, rk) + (k << p0))
                                .collect();
                            assert!(conflict_free(&es), "2^{log_n} {p:?} round {r} k {k}: points {es:?}");
                        }
                    }
                }
            }
        }
    }

    /// The tiled permutation of `ntt_bitrev` (its model) is the bit reversal, for every size
    /// where the tiles shrink (b < 3) and beyond, odd and even middle widths.
    #[test]
    fn tiled_bit_reversal_is_the_bit_reversal() {
        for log_n in 0..=13 {
            let n = 1usize << log_n;
            let mut a: Vec<Scalar> = (0..n as u64).map(Scalar::from).collect();
            bitrev_permute(&mut a, log_n);
            for (i, x) in a.iter().enumerate() {
                assert_eq!(*x, Scalar::from(u64::from(bitrev(i as u32, log_n))), "2^{log_n} index {i}");
            }
        }
    }

    #[test]
    fn kernel_model_matches_cpu_for_all_directions() {
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        for log_n in (0..=13).chain([15]) {
            let m = Model::new(log_n);
            let n = m.d.size();
            let input = random(n, &mut rng);
            let l = m.l;

            let mut got = input.clone();
            m.run(&mut got, false, false, None);
            m.br(&mut got);
            let mut want = input.clone();
            cpu::fft(&m.d, &mut want).unwrap();
            assert!(got == want, "forward 2^{log_n}");

            let mut got = input.clone();
            m.run(&mut got, false, true, Some((ScaleAt::Store, Scale::Const(l.n_inv))));
            m.br(&mut got);
            let mut want = input.clone();
            cpu::ifft(&m.d, &mut want).unwrap();
            assert!(got == want, "inverse 2^{log_n}");

            let mut got = input.clone();
            let g = Scale::Powers { lo: l.g_lo, hi: l.g_hi, lo_bits: l.g_lo_bits, bitrev: false };
            m.run(&mut got, false, false, Some((ScaleAt::Load, g)));
            m.br(&mut got);
            let mut want = input.clone();
            cpu::coset_fft(&m.d, &mut want).unwrap();
            assert!(got == want, "coset forward 2^{log_n}");

            let mut got = input.clone();
            m.run(&mut got, false, true, Some((ScaleAt::Store, m.icoset())));
            m.br(&mut got);
            let mut want = input.clone();
            cpu::icoset_fft(&m.d, &mut want).unwrap();
            assert!(got == want, "coset inverse 2^{log_n}");

            // DIT with bit-reversed input = forward.
            let mut got = input.clone();
            m.br(&mut got);
            m.run(&mut got, true, false, None);
            let mut want = input.clone();
            cpu::fft(&m.d, &mut want).unwrap();
            assert!(got == want, "dit forward 2^{log_n}");
        }
    }

    #[test]
    fn kernel_model_h_step_matches_cpu() {
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        for log_n in (0..=12).chain([14]) {
            let m = Model::new(log_n);
            let n = m.d.size();
            let (a, b, c) = (random(n, &mut rng), random(n, &mut rng), random(n, &mut rng));
            let want = cpu::h_poly(&m.d, a.clone(), b.clone(), c.clone()).unwrap();
            let l = m.l;
            let to_coset = Scale::Powers { lo: l.g_lo, hi: l.gn_hi, lo_bits: l.g_lo_bits, bitrev: true };
            let mut v = [a, b, c];
            for x in &mut v {
                m.run(x, false, true, Some((ScaleAt::Store, to_coset)));
                m.run(x, true, false, None);
            }
            let z = m.tw[l.z_inv as usize];
            let [mut a, b, c] = v;
            for i in 0..n {
                a[i] = (a[i] * b[i] - c[i]) * z;
            }
            m.run(&mut a, false, true, Some((ScaleAt::Store, m.icoset())));
            m.br(&mut a);
            assert!(a == want, "h step 2^{log_n}");
        }
    }

    /// The kernel table is a bijection: each combination at its own index, under its own name.
    #[test]
    fn pass_kernels_are_indexed_and_named_one_to_one() {
        let mut names = std::collections::HashSet::new();
        for (i, k) in PassKernel::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{k:?}");
            let order = if k.order == Order::Dit { "dit" } else { "dif" };
            let radix = 1 << k.round_log;
            let inv = if k.inverse { "_inv" } else { "" };
            assert_eq!(k.kernel().name, format!("ntt_pass_{order}{radix}{inv}"));
            assert!(names.insert(k.kernel().name));
        }
        for log_n in 1..=27 {
            for p in passes(log_n) {
                for inverse in [false, true] {
                    for order in [Order::Dif, Order::Dit] {
                        let k = PassKernel::of(&p, order, inverse);
                        assert_eq!(PassKernel::ALL[k.index()], k, "2^{log_n} {p:?}");
                    }
                }
            }
        }
    }
}
