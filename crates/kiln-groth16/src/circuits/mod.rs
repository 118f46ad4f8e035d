//! Built-in circuits for tests, demos and benchmarks, each with a size knob: the total
//! number of constraints including bellperson's input constraints is at most `constraints`,
//! so `constraints = 2^k` fills a 2^k domain.
//!
//! - [`Kind::Mimc`]: a MiMC-style permutation chain (x_L, x_R) → ((x_L + c_i)^3 + x_R, x_L),
//!   the hash circuit of bellman's classic example; public input: the image.
//! - [`Kind::Squaring`]: x_{i+1} = x_i², a dense chain; public input: the last value.
//! - [`Kind::Porep`]: boolean-heavy, shaped like Filecoin's PoRep circuit: aux values about
//!   half zero, half one and ~2% other; A dense over aux, B about 25% dense (`porep.rs`).
//!
//! [`Builtin::witness`] is how a prover should make their witnesses (porep's in parallel).

mod porep;

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::error::Groth16Error;
use crate::recorded::{Shape, Witness};
use porep::{porep_witness, synth_porep};

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

impl Builtin {
    /// Its witness for `shape` (the shape recorded from an instance of the same kind and
    /// size): [`Shape::witness`] of the circuit, except for porep, whose assignment is made
    /// directly and in parallel (equal, and many times faster on many cores: the circuit
    /// code of a real prover parallelises its witness too).
    ///
    /// # Errors
    /// The shape is of another circuit ([`Groth16Error::ShapeMismatch`]), or the circuit's
    /// own synthesis error.
    pub fn witness(&self, shape: &Shape) -> Result<Witness, Groth16Error> {
        match self.kind {
            Kind::Porep => {
                let w = porep::witness(self);
                shape.check_witness(&w.input, &w.aux)?;
                Ok(w)
            }
            Kind::Mimc | Kind::Squaring => shape.witness(*self),
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

#[cfg(test)]
mod tests {
    use super::porep::{PUBLIC_PACKS, porep_shape};
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

    /// porep's direct witness equals the one its synthesis makes, at sizes with and without
    /// private packs, a chain that ends mid-group, and one key cycle or many; other kinds
    /// and a wrong shape go through the shape's checks.
    #[test]
    fn builtin_witness_equals_the_synthesized_one() {
        for constraints in [16, 100, 1 << 10, (1 << 14) + 37, 1 << 17] {
            for seed in [1, 2] {
                let c = Builtin::new(Kind::Porep, constraints, seed);
                let shape = Shape::record(c).unwrap();
                assert_eq!(c.witness(&shape).unwrap(), shape.witness(c).unwrap(), "porep {constraints} seed {seed}");
            }
        }
        let squaring = Builtin::new(Kind::Squaring, 1 << 8, 3);
        let shape = Shape::record(squaring).unwrap();
        assert_eq!(squaring.witness(&shape).unwrap(), shape.witness(squaring).unwrap());
        let porep = Builtin::new(Kind::Porep, 1 << 9, 3);
        assert!(matches!(porep.witness(&shape), Err(Groth16Error::ShapeMismatch { .. })));
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
