//! Built-in circuits for tests, demos and benchmarks, each with a size knob: the total
//! number of constraints including bellperson's input constraints is at most `constraints`,
//! so `constraints = 2^k` fills a 2^k domain.
//!
//! - [`Kind::Mimc`]: a MiMC-style permutation chain (x_L, x_R) → ((x_L + c_i)^3 + x_R, x_L),
//!   the hash circuit of bellman's classic example; public input: the image.
//! - [`Kind::Squaring`]: x_{i+1} = x_i², a dense chain; public input: the last value.
//! - [`Kind::Porep`]: boolean-heavy, shaped like Filecoin's PoRep circuit: aux values about
//!   half zero, half one and ~2% other; A dense over aux, B about 25% dense.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Which built-in circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// MiMC chain (a real hash-style circuit).
    Mimc,
    /// Dense squaring chain.
    Squaring,
    /// Filecoin-PoRep-like boolean-heavy circuit.
    Porep,
}

impl Kind {
    /// All kinds.
    pub const ALL: [Kind; 3] = [Kind::Mimc, Kind::Squaring, Kind::Porep];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Mimc => "mimc",
            Kind::Squaring => "squaring",
            Kind::Porep => "porep",
        }
    }
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown circuit {s:?}: choose one of mimc, squaring, porep"))
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Smallest `constraints` a built-in circuit accepts.
pub const MIN_CONSTRAINTS: usize = 16;

/// A built-in circuit instance: kind, size and the seed of its witness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Which circuit.
    pub kind: Kind,
    /// Upper bound on the total constraints (input constraints included), ≥ [`MIN_CONSTRAINTS`].
    pub constraints: usize,
    /// Seed of the witness (and of MiMC's round constants, which are fixed per size).
    pub seed: u64,
}

impl Builtin {
    /// A circuit of `kind` with at most `constraints` constraints (raised to [`MIN_CONSTRAINTS`]).
    pub fn new(kind: Kind, constraints: usize, seed: u64) -> Self {
        Builtin { kind, constraints: constraints.max(MIN_CONSTRAINTS), seed }
    }

    /// The public inputs a proof of this instance verifies against (ONE not included).
    pub fn public_inputs(&self) -> Vec<Scalar> {
        match self.kind {
            Kind::Mimc => vec![mimc_native(self)],
            Kind::Squaring => {
                let (x0, n) = squaring_shape(self);
                vec![(0..n).fold(x0, |x, _| x.square())]
            }
            Kind::Porep => {
                let w = porep_witness(self);
                w.packs.into_iter().chain([w.output]).collect()
            }
        }
    }
}

impl Circuit<Scalar> for Builtin {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self.kind {
            Kind::Mimc => synth_mimc(&self, cs),
            Kind::Squaring => synth_squaring(&self, cs),
            Kind::Porep => synth_porep(&self, cs),
        }
    }
}

// Two input constraints (ONE and the output) and one output-binding constraint.
const OVERHEAD: usize = 3;

fn witness_rng(c: &Builtin) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(c.seed)
}

/// Binds the last value to a fresh public input: `last · ONE = out`.
fn bind_output<CS: ConstraintSystem<Scalar>>(cs: &mut CS, last: Variable, value: Scalar) -> Result<(), SynthesisError> {
    let out = cs.alloc_input(|| "output", || Ok(value))?;
    cs.enforce(|| "bind output", |lc| lc + last, |lc| lc + CS::one(), |lc| lc + out);
    Ok(())
}

// ---- MiMC -----------------------------------------------------------------------------

fn mimc_rounds(c: &Builtin) -> usize {
    (c.constraints - OVERHEAD) / 2
}

fn mimc_constants(rounds: usize) -> Vec<Scalar> {
    // Fixed (not per witness): the constants are part of the circuit.
    let mut rng = ChaCha20Rng::seed_from_u64(0x6d69_6d63);
    (0..rounds).map(|_| Scalar::random(&mut rng)).collect()
}

fn mimc_start(c: &Builtin) -> (Scalar, Scalar) {
    let mut rng = witness_rng(c);
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

fn mimc_native(c: &Builtin) -> Scalar {
    let (mut xl, mut xr) = mimc_start(c);
    for k in mimc_constants(mimc_rounds(c)) {
        let t = xl + k;
        let new_xl = t.square() * t + xr;
        xr = xl;
        xl = new_xl;
    }
    xl
}

fn synth_mimc<CS: ConstraintSystem<Scalar>>(c: &Builtin, cs: &mut CS) -> Result<(), SynthesisError> {
    let (mut xl_val, mut xr_val) = mimc_start(c);
    let mut xl = cs.alloc(|| "xl", || Ok(xl_val))?;
    let mut xr = cs.alloc(|| "xr", || Ok(xr_val))?;
    for (i, k) in mimc_constants(mimc_rounds(c)).into_iter().enumerate() {
        let t_val = xl_val + k;
        let sq_val = t_val.square();
        let sq = cs.alloc(|| format!("sq {i}"), || Ok(sq_val))?;
        let t_lc = |lc: LinearCombination<Scalar>| lc + xl + (k, CS::one());
        cs.enforce(|| format!("square {i}"), t_lc, t_lc, |lc| lc + sq);
        let new_val = sq_val * t_val + xr_val;
        let new_xl = cs.alloc(|| format!("xl {i}"), || Ok(new_val))?;
        cs.enforce(|| format!("cube {i}"), |lc| lc + sq, t_lc, |lc| lc + new_xl - xr);
        xr = xl;
        xr_val = xl_val;
        xl = new_xl;
        xl_val = new_val;
    }
    // xr from the first round may be unused if there are no rounds: always bind both.
    if mimc_rounds(c) == 0 {
        cs.enforce(|| "use xr", |lc| lc + xr, |lc| lc, |lc| lc);
    }
    bind_output(cs, xl, xl_val)
}

// ---- Squaring chain -------------------------------------------------------------------

fn squaring_shape(c: &Builtin) -> (Scalar, usize) {
    (Scalar::random(&mut witness_rng(c)), c.constraints - OVERHEAD)
}

fn synth_squaring<CS: ConstraintSystem<Scalar>>(c: &Builtin, cs: &mut CS) -> Result<(), SynthesisError> {
    let (mut val, n) = squaring_shape(c);
    let mut x = cs.alloc(|| "x0", || Ok(val))?;
    for i in 0..n {
        let next_val = val.square();
        let next = cs.alloc(|| format!("x{}", i + 1), || Ok(next_val))?;
        cs.enforce(|| format!("square {i}"), |lc| lc + x, |lc| lc + x, |lc| lc + next);
        x = next;
        val = next_val;
    }
    bind_output(cs, x, val)
}

// ---- PoRep-like -----------------------------------------------------------------------

/// Every PACK_EVERY-th chain step also packs the last PACK_BITS bits into one field element.
const PACK_EVERY: usize = 50;
const PACK_BITS: usize = 32;
/// The first packed values are public inputs, as many as a Filecoin PoRep partition has
/// besides ONE and the output (328 inputs in all), or one per 128 constraints in small
/// circuits (there is one pack per ~68 constraints, so enough packs exist).
const PUBLIC_PACKS: usize = 326;

struct PorepShape {
    keys: usize,
    chain: usize,
    /// Packs that are public inputs (each costs one trailing input constraint).
    public: usize,
}

fn porep_shape(c: &Builtin) -> PorepShape {
    let body = c.constraints - OVERHEAD;
    let public = PUBLIC_PACKS.min(body / 128);
    let body = body - public;
    // One booleanity constraint per key, one XOR per chain step, one packing per
    // PACK_EVERY steps: keys ≈ 1/4 of the aux variables gives B ≈ 25% dense.
    let keys = (body / 4).max(1);
    let rest = body - keys;
    let chain = rest * PACK_EVERY / (PACK_EVERY + 1);
    PorepShape { keys, chain, public }
}

struct PorepWitness {
    keys: Vec<bool>,
    z0: bool,
    /// The public packed values, in chain order.
    packs: Vec<Scalar>,
    output: Scalar,
}

fn porep_witness(c: &Builtin) -> PorepWitness {
    let s = porep_shape(c);
    let mut rng = witness_rng(c);
    // Keys slightly biased to zero, as Filecoin's aux values are (51% zero, 47% one).
    let keys: Vec<bool> = (0..s.keys).map(|_| rng.gen_bool(0.47)).collect();
    let z0 = rng.gen_bool(0.5);
    // The last PACK_BITS chain bits as an integer, oldest in bit 0: what a pack holds.
    let mut window = 0u32;
    let mut packs = Vec::with_capacity(s.public);
    let mut last = z0;
    for i in 0..s.chain {
        last ^= keys[i % s.keys];
        window = window >> 1 | (last as u32) << (PACK_BITS - 1);
        if (i + 1) % PACK_EVERY == 0 && packs.len() < s.public {
            packs.push(Scalar::from(u64::from(window)));
        }
    }
    PorepWitness { keys, z0, packs, output: Scalar::from(last as u64) }
}

/// A bit as a field element the way bellpepper's `AllocatedBit` makes it (a select, not
/// `Scalar::from`, which converts into Montgomery form: a product per bit that would make
/// this circuit's witness generation slower than real boolean-heavy circuits').
fn bit(b: bool) -> Scalar {
    if b { Scalar::ONE } else { Scalar::ZERO }
}

fn synth_porep<CS: ConstraintSystem<Scalar>>(c: &Builtin, cs: &mut CS) -> Result<(), SynthesisError> {
    let s = porep_shape(c);
    let w = porep_witness(c);
    let mut keys = Vec::with_capacity(s.keys);
    for (i, &k) in w.keys.iter().enumerate() {
        let v = cs.alloc(|| format!("key {i}"), || Ok(bit(k)))?;
        // k · (1 − k) = 0
        cs.enforce(|| format!("key {i} boolean"), |lc| lc + v, |lc| lc + CS::one() - v, |lc| lc);
        keys.push(v);
    }
    let two = Scalar::from(2u64);
    let mut z_val = w.z0;
    let mut z = cs.alloc(|| "z0", || Ok(bit(z_val)))?;
    // The last PACK_BITS chain bits, oldest first (a ring: the chain is millions long).
    let mut recent: std::collections::VecDeque<(Variable, bool)> = std::collections::VecDeque::with_capacity(PACK_BITS);
    for i in 0..s.chain {
        let (k, k_val) = (keys[i % s.keys], w.keys[i % s.keys]);
        let next_val = z_val ^ k_val;
        let next = cs.alloc(|| format!("z{}", i + 1), || Ok(bit(next_val)))?;
        // XOR: (2z) · k = z + k − next
        cs.enforce(|| format!("xor {i}"), |lc| lc + (two, z), |lc| lc + k, |lc| lc + z + k - next);
        if recent.len() == PACK_BITS {
            recent.pop_front();
        }
        recent.push_back((next, next_val));
        z = next;
        z_val = next_val;
        if (i + 1) % PACK_EVERY == 0 {
            // The packed value is computed for the witness; the linear combination only inside
            // the enforce closure, which a witness-only synthesis (recorded shapes) never calls.
            let packed_val = recent.iter().rev().fold(Scalar::ZERO, |acc, &(_, b)| acc.double() + bit(b));
            let packed = if (i + 1) / PACK_EVERY <= s.public {
                cs.alloc_input(|| format!("packed {i}"), || Ok(packed_val))?
            } else {
                cs.alloc(|| format!("packed {i}"), || Ok(packed_val))?
            };
            cs.enforce(
                || format!("pack {i}"),
                |l| l + packed,
                |l| l + CS::one(),
                |_| {
                    let mut coeff = Scalar::ONE;
                    let mut lc = LinearCombination::zero();
                    for &(v, _) in recent.iter() {
                        lc = lc + (coeff, v);
                        coeff = coeff.double();
                    }
                    lc
                },
            );
        }
    }
    bind_output(cs, z, w.output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::synthesize;

    #[test]
    fn builtins_are_satisfied_and_fit_their_size() {
        for kind in Kind::ALL {
            for constraints in [16, 100, 1 << 10] {
                let c = Builtin::new(kind, constraints, 7);
                let asg = synthesize(c).unwrap();
                assert!(asg.num_constraints() <= constraints, "{kind} {constraints}: {}", asg.num_constraints());
                assert!(
                    asg.num_constraints() + 60 >= constraints,
                    "{kind} {constraints}: only {}",
                    asg.num_constraints()
                );
                assert_eq!(asg.first_unsatisfied(), None, "{kind} {constraints}");
                assert_eq!(asg.input[1..], c.public_inputs()[..], "{kind} {constraints}: public inputs");
            }
        }
    }

    #[test]
    fn porep_statistics_match_filecoin() {
        let asg = synthesize(Builtin::new(Kind::Porep, 1 << 14, 3)).unwrap();
        let n = asg.aux.len() as f64;
        let zero = asg.aux.iter().filter(|x| bool::from(x.is_zero())).count() as f64 / n;
        let one = asg.aux.iter().filter(|x| **x == Scalar::ONE).count() as f64 / n;
        let a = asg.a_aux_density.count_ones() as f64 / n;
        let b = asg.b_aux_density.count_ones() as f64 / n;
        assert!((0.44..0.56).contains(&zero), "zero fraction {zero}");
        assert!((0.42..0.54).contains(&one), "one fraction {one}");
        assert!(1.0 - zero - one < 0.04, "other fraction {}", 1.0 - zero - one);
        assert!(a > 0.99, "A density {a}");
        assert!((0.22..0.28).contains(&b), "B density {b}");
        assert_eq!(asg.input.len(), 1 + (((1 << 14) - OVERHEAD) / 128) + 1, "ONE, the public packs, the output");
    }

    #[test]
    fn porep_has_filecoins_input_count_when_large() {
        let c = Builtin::new(Kind::Porep, 1 << 17, 1);
        assert_eq!(porep_shape(&c).public, PUBLIC_PACKS);
        let asg = synthesize(c).unwrap();
        assert_eq!(asg.input.len(), 328, "ONE, 326 packs, the output");
        assert_eq!(asg.input[1..], c.public_inputs()[..]);
        assert_eq!(asg.first_unsatisfied(), None);
    }
}
