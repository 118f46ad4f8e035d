//! How a GPU transform is cut into shared-memory passes, and the layout of the twiddle
//! tables: pure host logic, from which `launch` builds the launch lists that `gpu` issues
//! and the host emulation tests run.

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
mod tests {
    use super::*;

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
