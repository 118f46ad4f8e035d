//! The kernel launches of every GPU operation, written once as lists: which kernel of
//! `ntt.cu`, on which of the caller's vectors, with which grid, block, shared memory and
//! arguments. `gpu` issues them on a stream; the host emulation tests (`host_emulation`) run
//! the same lists over host memory with the real kernel source, so what they check is the
//! schedule the GPU runs.
//!
//! Orders: a DIF (natural in, bit-reversed out) and one bit reversal make each of the four
//! transforms; the H step chains DIF (iNTT, scaled by `g^i/n`) → DIT (coset NTT) for each of
//! a, b, c, one pointwise launch, then DIF (coset iNTT, scaled by `g^-i/n`) → bit reversal.
//! With c formed on the device ([`Schedule::h_step`] with `c_from_ab`), a is copied into C
//! before its transforms and C is multiplied by b before b's.

use crate::plan::{BITREV_THREADS, Layout, Order, Pass, PassKernel, Scale, ScaleAt, bitrev_tiles, passes};

/// One of the caller's vectors: the transforms use `A` only, the H step all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vector {
    A = 0,
    B = 1,
    C = 2,
}

/// The launch configuration: a 1-D grid of 1-D blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dims {
    pub grid: u32,
    pub block: u32,
    /// Dynamic shared memory.
    pub shared_bytes: u32,
}

impl Dims {
    /// One thread per element in blocks of 1024 (cudarc's `LaunchConfig::for_num_elems`).
    fn for_elems(n: u32) -> Dims {
        Dims { grid: n.div_ceil(1024), block: 1024, shared_bytes: 0 }
    }
}

/// The scalar arguments of `ntt_pass_*` after `a` and `tw`, in the kernel's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PassArgs {
    pub log_n: u32,
    pub l: u32,
    pub ks: u32,
    pub log_g: u32,
    pub roots: u32,
    /// 0: no scale, 1: on load, 2: on store.
    pub scale_at: u32,
    pub scale_mode: u32,
    pub s_lo: u32,
    pub s_hi: u32,
    pub s_lo_bits: u32,
    pub s_bitrev: u32,
}

impl PassArgs {
    /// The arguments as the kernel lists them.
    #[cfg(test)]
    pub(crate) fn array(&self) -> [u32; 11] {
        [
            self.log_n,
            self.l,
            self.ks,
            self.log_g,
            self.roots,
            self.scale_at,
            self.scale_mode,
            self.s_lo,
            self.s_hi,
            self.s_lo_bits,
            self.s_bitrev,
        ]
    }
}

/// One kernel launch. Table offsets are into the domain's twiddle buffer `tw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Launch {
    /// `ntt_twiddles(tw, roots, w_lo, w_hi, w_lo_bits, half_n)`: fills the roots table.
    Twiddles { dims: Dims, roots: u32, w_lo: u32, w_hi: u32, w_lo_bits: u32, half_n: u32 },
    /// `ntt_pass_*(v, tw, args...)`: one pass of `kernel`.
    Pass { v: Vector, kernel: PassKernel, dims: Dims, args: PassArgs },
    /// `ntt_bitrev(v, log_n, b)`.
    Bitrev { v: Vector, dims: Dims, log_n: u32, b: u32 },
    /// `ntt_pointwise(a, b, c, tw, z_inv, n)`: `a = (a·b - c)/Z` on the coset.
    Pointwise { dims: Dims, z_inv: u32, n: u32 },
    /// `to = from`, the whole vector (a device-to-device copy, no kernel).
    Copy { from: Vector, to: Vector },
    /// `ntt_mul(v, by, n)`: `v = v·by` element by element.
    Mul { v: Vector, by: Vector, dims: Dims, n: u32 },
}

impl Launch {
    /// Whether it reads or writes vector `v`.
    pub(crate) fn uses(&self, v: Vector) -> bool {
        match *self {
            Launch::Twiddles { .. } => false,
            Launch::Pass { v: w, .. } | Launch::Bitrev { v: w, .. } => w == v,
            Launch::Pointwise { .. } => true,
            Launch::Copy { from, to } => from == v || to == v,
            Launch::Mul { v: w, by, .. } => w == v || by == v,
        }
    }
}

/// The four transforms of one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transform {
    /// `fft`.
    Forward,
    /// `ifft` (the `1/n` fused into the last pass).
    Inverse,
    /// `coset_fft` (the `g^i` fused into the first pass).
    CosetForward,
    /// `icoset_fft` (the `g^-i/n` fused into the last pass).
    CosetInverse,
}

/// The launches of a domain of `2^log_n` points whose tables are laid out as `layout`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schedule {
    pub log_n: u32,
    pub layout: Layout,
}

impl Schedule {
    pub(crate) fn new(log_n: u32) -> Schedule {
        Schedule { log_n, layout: Layout::new(log_n) }
    }

    /// Filling the roots table from the uploaded host tables (nothing for n = 1).
    pub(crate) fn twiddles(&self) -> Vec<Launch> {
        let l = &self.layout;
        if l.half_n == 0 {
            return Vec::new();
        }
        vec![Launch::Twiddles {
            dims: Dims::for_elems(l.half_n + 1),
            roots: l.roots,
            w_lo: l.w_lo,
            w_hi: l.w_hi,
            w_lo_bits: l.w_lo_bits,
            half_n: l.half_n,
        }]
    }

    /// One of the four transforms of vector A, natural order in and out.
    pub(crate) fn transform(&self, t: Transform) -> Vec<Launch> {
        let l = &self.layout;
        let mut out = match t {
            Transform::Forward => self.dif(Vector::A, false, None),
            Transform::Inverse => self.dif(Vector::A, true, Some((ScaleAt::Store, Scale::Const(l.n_inv)))),
            Transform::CosetForward => {
                let g = Scale::Powers { lo: l.g_lo, hi: l.g_hi, lo_bits: l.g_lo_bits, bitrev: false };
                self.dif(Vector::A, false, Some((ScaleAt::Load, g)))
            }
            Transform::CosetInverse => self.dif(Vector::A, true, Some((ScaleAt::Store, self.icoset_scale()))),
        };
        out.extend(self.bit_reverse(Vector::A));
        out
    }

    /// The Groth16 H step: a, b, c (evaluations, natural order) → h in A; B and C are work space.
    /// With `c_from_ab`, C's input is not read: it is formed as a∘b first (a copied into C
    /// before a's transforms, multiplied by b before b's), which is c for a satisfied
    /// constraint system (c_i = a_i·b_i).
    pub(crate) fn h_step(&self, c_from_ab: bool) -> Vec<Launch> {
        let l = &self.layout;
        // iNTT then coset distribution, fused: coefficient i (at bit-reversed position) × g^i/n.
        let to_coset = Scale::Powers { lo: l.g_lo, hi: l.gn_hi, lo_bits: l.g_lo_bits, bitrev: true };
        let n = 1u32 << self.log_n;
        let mut out = Vec::new();
        for v in [Vector::A, Vector::B, Vector::C] {
            match v {
                Vector::A if c_from_ab => out.push(Launch::Copy { from: Vector::A, to: Vector::C }),
                Vector::B if c_from_ab => {
                    out.push(Launch::Mul { v: Vector::C, by: Vector::B, dims: Dims::for_elems(n), n })
                }
                _ => {}
            }
            out.extend(self.dif(v, true, Some((ScaleAt::Store, to_coset))));
            out.extend(self.dit(v, false));
        }
        out.push(Launch::Pointwise { dims: Dims::for_elems(n), z_inv: l.z_inv, n });
        out.extend(self.dif(Vector::A, true, Some((ScaleAt::Store, self.icoset_scale()))));
        out.extend(self.bit_reverse(Vector::A));
        out
    }

    fn icoset_scale(&self) -> Scale {
        let l = &self.layout;
        // The DIF leaves element k (coefficient index) at position bitrev(k).
        Scale::Powers { lo: l.gi_lo, hi: l.gin_hi, lo_bits: l.g_lo_bits, bitrev: true }
    }

    /// DIF passes (natural in, bit-reversed out), with ω^-1 when `inverse`.
    pub(crate) fn dif(&self, v: Vector, inverse: bool, scale: Option<(ScaleAt, Scale)>) -> Vec<Launch> {
        let mut ps = passes(self.log_n);
        ps.reverse();
        self.passes(v, &ps, Order::Dif, inverse, scale)
    }

    /// DIT passes (bit-reversed in, natural out), with ω^-1 when `inverse`.
    pub(crate) fn dit(&self, v: Vector, inverse: bool) -> Vec<Launch> {
        self.passes(v, &passes(self.log_n), Order::Dit, inverse, None)
    }

    fn passes(
        &self,
        v: Vector,
        ps: &[Pass],
        order: Order,
        inverse: bool,
        scale: Option<(ScaleAt, Scale)>,
    ) -> Vec<Launch> {
        let last = ps.len().saturating_sub(1);
        ps.iter()
            .enumerate()
            .map(|(i, p)| {
                let (scale_at, s) = match scale {
                    Some((ScaleAt::Load, s)) if i == 0 => (1, s),
                    Some((ScaleAt::Store, s)) if i == last => (2, s),
                    _ => (0, Scale::None),
                };
                let (scale_mode, s_lo, s_hi, s_lo_bits, s_bitrev) = s.args();
                let (grid, block, shared_bytes) = p.launch_dims(self.log_n);
                Launch::Pass {
                    v,
                    kernel: PassKernel::of(p, order, inverse),
                    dims: Dims { grid, block, shared_bytes },
                    args: PassArgs {
                        log_n: self.log_n,
                        l: p.l,
                        ks: p.ks,
                        log_g: p.log_g,
                        roots: self.layout.roots,
                        scale_at,
                        scale_mode,
                        s_lo,
                        s_hi,
                        s_lo_bits,
                        s_bitrev,
                    },
                }
            })
            .collect()
    }

    /// The bit-reversal permutation (nothing for n = 1).
    pub(crate) fn bit_reverse(&self, v: Vector) -> Vec<Launch> {
        if self.log_n == 0 {
            return Vec::new();
        }
        let (grid, b) = bitrev_tiles(self.log_n);
        vec![Launch::Bitrev { v, dims: Dims { grid, block: BITREV_THREADS, shared_bytes: 0 }, log_n: self.log_n, b }]
    }
}
