//! The PoRep-like built-in circuit: a chain of XORs with boolean keys, packed every
//! [`PACK_EVERY`] steps, shaped like Filecoin's PoRep partition (see [`super::Kind::Porep`]).
//!
//! Besides its bellpepper synthesis, [`witness`] makes its assignment directly and in
//! parallel: a Filecoin prover's circuits generate their witnesses on every core, and a
//! one-thread chain of 2^27 steps would make the CPU stage, not the GPU, set the pace.

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::Rng;
use rayon::prelude::*;

use super::{Builtin, OVERHEAD, bind_output, witness_rng};
use crate::recorded::Witness;

/// Every PACK_EVERY-th chain step also packs the last PACK_BITS bits into one field element.
const PACK_EVERY: usize = 50;
const PACK_BITS: usize = 32;
/// The first packed values are public inputs, as many as a Filecoin PoRep partition has
/// besides ONE and the output (328 inputs in all), or one per 128 constraints in small
/// circuits (there is one pack per ~68 constraints, so enough packs exist).
pub(super) const PUBLIC_PACKS: usize = 326;

pub(super) struct PorepShape {
    pub(super) keys: usize,
    pub(super) chain: usize,
    /// Packs that are public inputs (each costs one trailing input constraint).
    pub(super) public: usize,
}

pub(super) fn porep_shape(c: &Builtin) -> PorepShape {
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

pub(super) struct PorepWitness {
    pub(super) keys: Vec<bool>,
    pub(super) z0: bool,
    /// The public packed values, in chain order.
    pub(super) packs: Vec<Scalar>,
    pub(super) output: Scalar,
}

/// The keys and the chain's first bit, drawn from the witness seed.
fn porep_keys(c: &Builtin, s: &PorepShape) -> (Vec<bool>, bool) {
    let mut rng = witness_rng(c);
    // Keys slightly biased to zero, as Filecoin's aux values are (51% zero, 47% one).
    let keys: Vec<bool> = (0..s.keys).map(|_| rng.gen_bool(0.47)).collect();
    (keys, rng.gen_bool(0.5))
}

pub(super) fn porep_witness(c: &Builtin) -> PorepWitness {
    let s = porep_shape(c);
    let (keys, z0) = porep_keys(c, &s);
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

pub(super) fn synth_porep<CS: ConstraintSystem<Scalar>>(c: &Builtin, cs: &mut CS) -> Result<(), SynthesisError> {
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

/// The assignment [`synth_porep`] makes, computed directly: the keys drawn in order (one
/// random stream), then every chain bit from the keys' prefix parities (bit t is z0 XOR the
/// parity of the t keys XORed in so far: whole cycles of the keys and a prefix), in parallel,
/// and every aux value from those bits by its index. Equal to `Shape::witness` of the circuit
/// (tested), at a fraction of the time on many cores.
pub(super) fn witness(c: &Builtin) -> Witness {
    let s = porep_shape(c);
    let (keys, z0) = porep_keys(c, &s);
    let chain = chain_bits(&keys, z0, s.chain, 1 << 16);
    let packs = s.chain / PACK_EVERY;
    let public = s.public.min(packs);
    // The value of pack p (1-based): the PACK_BITS chain bits ending at step p·PACK_EVERY,
    // oldest in bit 0.
    let pack = |p: usize| {
        let end = p * PACK_EVERY;
        let bits = chain[end + 1 - PACK_BITS..=end].iter().rev().fold(0u64, |acc, &b| acc << 1 | u64::from(b));
        Scalar::from(bits)
    };
    let mut input = Vec::with_capacity(public + 2);
    input.push(Scalar::ONE);
    input.extend((1..=public).map(pack));
    input.push(bit(chain[s.chain]));
    // Aux: the keys, z0, then the chain bits z_1..z_chain, with each private pack (those
    // after the public ones) right after the bit that completes it.
    let len = s.keys + 1 + s.chain + (packs - public);
    let head = s.keys + 1;
    let public_steps = public * PACK_EVERY;
    let value = |i: usize| -> Scalar {
        if i < s.keys {
            return bit(keys[i]);
        }
        if i < head {
            return bit(z0);
        }
        let step = i - head + 1;
        if step <= public_steps {
            return bit(chain[step]);
        }
        // Groups of PACK_EVERY bits and their pack.
        let r = step - public_steps - 1;
        let (group, at) = (r / (PACK_EVERY + 1), r % (PACK_EVERY + 1));
        if at < PACK_EVERY { bit(chain[public_steps + group * PACK_EVERY + at + 1]) } else { pack(public + group + 1) }
    };
    let mut aux = Vec::new();
    (0..len).into_par_iter().with_min_len(1 << 14).map(value).collect_into_vec(&mut aux);
    Witness { input, aux }
}

/// The chain's bits z_0..=z_steps (z_{t+1} = z_t XOR keys[t mod keys]), in parallel pieces
/// of `piece` bits, each started from its prefix parity.
fn chain_bits(keys: &[bool], z0: bool, steps: usize, piece: usize) -> Vec<bool> {
    let n = keys.len();
    // parity[j] = keys[0] ^ .. ^ keys[j-1].
    let mut parity = Vec::with_capacity(n + 1);
    parity.push(false);
    for &k in keys {
        parity.push(parity[parity.len() - 1] ^ k);
    }
    let full = parity[n];
    let at = |t: usize| z0 ^ (full && (t / n) % 2 == 1) ^ parity[t % n];
    let mut bits = vec![false; steps + 1];
    bits.par_chunks_mut(piece).enumerate().for_each(|(i, out)| {
        let start = i * piece;
        let mut z = at(start);
        let mut key = start % n;
        for b in out {
            *b = z;
            z ^= keys[key];
            key = if key + 1 == n { 0 } else { key + 1 };
        }
    });
    bits
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;

    /// Pieces that start anywhere in a cycle of the keys, odd and even cycles alike, give the
    /// chain a sequential walk gives.
    #[test]
    fn chain_bits_in_pieces_equal_the_sequential_chain() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        for n in [1, 2, 5, 7, 64] {
            let keys: Vec<bool> = (0..n).map(|_| rng.gen_bool(0.5)).collect();
            for z0 in [false, true] {
                let mut walk = vec![z0];
                for t in 0..1000 {
                    walk.push(walk[t] ^ keys[t % n]);
                }
                for piece in [1, 3, 7, 64, 5000] {
                    assert_eq!(chain_bits(&keys, z0, 1000, piece), walk, "{n} keys, z0 {z0}, pieces of {piece}");
                }
            }
        }
    }
}
