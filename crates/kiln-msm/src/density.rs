//! Density masks: which variables of a query have a base.

use rayon::prelude::*;

use crate::MsmError;

/// A bitmap over all `n` variables: bit `i` set means variable `i` has a base in the query
/// (bellperson's `DensityTracker` semantics). Bases are stored only for set bits, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    /// A mask from one flag per variable.
    pub fn new(bits: Vec<bool>) -> Self {
        bits.into_iter().collect()
    }

    /// A mask of `len` variables, all set (a dense query).
    pub fn all(len: usize) -> Self {
        std::iter::repeat_n(true, len).collect()
    }

    /// Appends one variable.
    pub fn push(&mut self, bit: bool) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        if bit {
            self.words[self.len / 64] |= 1 << (self.len % 64);
            self.ones += 1;
        }
        self.len += 1;
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mask covers no variable.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits (= number of bases the query stores).
    pub fn count_ones(&self) -> usize {
        self.ones
    }

    /// Whether variable `i` has a base; `false` past the end.
    pub fn get(&self, i: usize) -> bool {
        i < self.len && (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// The bitmap as 64-bit words, bit `i` in word `i / 64` (bits past `len` are zero).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Indices of the set bits, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let t = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + t)
            })
        })
    }
}

impl Density {
    /// `dst` = the values of `src` at the set bits, in order, gathered in parallel (blocks of
    /// the bitmap, each written at its offset from a prefix count: no index list is built).
    /// `src` has one value per variable, `dst` one per set bit.
    ///
    /// # Errors
    /// [`MsmError::DensityMismatch`] when `src` or `dst` has another length.
    pub fn gather_into<T: Copy + Send + Sync>(&self, src: &[T], dst: &mut [T]) -> Result<(), MsmError> {
        if src.len() != self.len || dst.len() != self.ones {
            return Err(MsmError::DensityMismatch {
                density_len: self.len,
                density_ones: self.ones,
                scalars: src.len(),
                bases: dst.len(),
            });
        }
        // 4096 variables a block: enough work per task, few blocks to count serially.
        const WORDS: usize = 64;
        let blocks = self.words.chunks(WORDS);
        let mut outs = Vec::with_capacity(blocks.len());
        let mut rest = dst;
        for block in blocks {
            let ones = block.iter().map(|w| w.count_ones() as usize).sum();
            let (out, tail) = rest.split_at_mut(ones);
            outs.push(out);
            rest = tail;
        }
        self.words.par_chunks(WORDS).zip(outs).enumerate().for_each(|(b, (block, out))| {
            let mut next = out.iter_mut();
            for (w, &word) in block.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let i = (b * WORDS + w) * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    *next.next().expect("a block's slot per set bit") = src[i];
                }
            }
        });
        Ok(())
    }
}

impl FromIterator<bool> for Density {
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> Self {
        let mut d = Density::default();
        for b in iter {
            d.push(b);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Density;

    proptest! {
        #[test]
        fn density_matches_bools(bits in proptest::collection::vec(any::<bool>(), 0..300)) {
            let d = Density::new(bits.clone());
            prop_assert_eq!(d.len(), bits.len());
            prop_assert_eq!(d.count_ones(), bits.iter().filter(|b| **b).count());
            for (i, b) in bits.iter().enumerate() {
                prop_assert_eq!(d.get(i), *b, "bit {}", i);
            }
            prop_assert!(!d.get(bits.len()));
            let ones: Vec<usize> = d.iter_ones().collect();
            let want: Vec<usize> = bits.iter().enumerate().filter(|(_, b)| **b).map(|(i, _)| i).collect();
            prop_assert_eq!(ones, want);
        }

        #[test]
        fn gather_takes_the_set_bits_in_order(bits in proptest::collection::vec(any::<bool>(), 0..20_000)) {
            let d = Density::new(bits.clone());
            let src: Vec<u32> = (0..bits.len() as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
            let mut dst = vec![u32::MAX; d.count_ones()];
            d.gather_into(&src, &mut dst).unwrap();
            let want: Vec<u32> = d.iter_ones().map(|i| src[i]).collect();
            prop_assert_eq!(dst, want);
        }
    }

    #[test]
    fn gather_refuses_other_lengths() {
        let d = Density::new(vec![true, false, true]);
        let mut two = [0u8; 2];
        assert!(d.gather_into(&[1u8, 2], &mut two).is_err(), "src shorter than the mask");
        let mut three = [0u8; 3];
        assert!(d.gather_into(&[1u8, 2, 3], &mut three).is_err(), "dst longer than the set bits");
        d.gather_into(&[1u8, 2, 3], &mut two).unwrap();
        assert_eq!(two, [1, 3]);
    }
}
