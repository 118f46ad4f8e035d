//! Density masks: which variables of a query have a base.

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
    }
}
