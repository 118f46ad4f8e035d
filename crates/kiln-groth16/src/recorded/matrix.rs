//! One R1CS matrix (A, B or C) in a compact row-compressed form, and its product with z.
//!
//! Filecoin partitions have ~2^27 rows of 1–4 terms, most coefficients ONE, so a classic
//! CSR (a u32/u64 row pointer per row plus a 32-byte coefficient per term) would cost more
//! than the witness itself. Instead each matrix is one stream of u32 words:
//!
//! - a term is one word `z_index << 2 | COEFF | LAST`; `LAST` marks the last term of its
//!   row, `COEFF` says that the next word is a coefficient code (the coefficient is not ONE);
//! - a coefficient code indexes the shape's deduplicated coefficient table, whose first two
//!   entries are always −1 and 2 (applied as a subtraction and a doubling, no product);
//! - an empty row is the single word [`EMPTY_ROW`].
//!
//! So a term with coefficient ONE costs 4 bytes, any other 8, and rows carry no pointer.
//! Random access is by block: the word offset of every [`ROWS_PER_BLOCK`]-th row is kept,
//! which is what parallel evaluation needs (one rayon task decodes one block sequentially).

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Rows per block: the unit of parallel evaluation and of random access.
pub(crate) const ROWS_PER_BLOCK: usize = 1024;

/// Bit 0 of a term word: the last term of its row.
const LAST: u32 = 1;
/// Bit 1 of a term word: a coefficient code word follows.
const COEFF: u32 = 2;
/// The one word of a row without terms (z index 2^30 − 1 with both flags: never a term).
const EMPTY_ROW: u32 = u32::MAX;
/// Variables (inputs + aux) the encoding holds: z indices 0 ..= 2^30 − 2.
pub(crate) const MAX_VARIABLES: usize = (1 << 30) - 1;
/// Coefficient code of −1 (applied as a subtraction).
pub(crate) const CODE_MINUS_ONE: u32 = 0;
/// Coefficient code of 2 (applied as a doubling).
pub(crate) const CODE_TWO: u32 = 1;

/// One matrix of a recorded R1CS. See the module documentation for the encoding.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct SparseMatrix {
    words: Vec<u32>,
    /// Word offset of row `k · ROWS_PER_BLOCK`, per block.
    block_starts: Vec<u64>,
    rows: usize,
    terms: usize,
}

impl std::fmt::Debug for SparseMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The streams are millions of words: summarise.
        f.debug_struct("SparseMatrix")
            .field("rows", &self.rows)
            .field("terms", &self.terms)
            .field("words", &self.words.len())
            .finish()
    }
}

/// One term while recording: the variable's provisional index (see [`SparseMatrix::push_row`])
/// and its coefficient code, `None` for ONE.
pub(crate) type Term = (u32, Option<u32>);

/// The term at `pos` of a row (not an [`EMPTY_ROW`] word): its z index, its coefficient code
/// (`None` for ONE) and whether it ends the row; `pos` moves past it. The one decoder of
/// the encoding, shared by evaluation, the transposed product and [`SparseMatrix::rows`].
#[inline(always)]
fn read_term(words: &[u32], pos: &mut usize) -> (usize, Option<u32>, bool) {
    let w = words[*pos];
    *pos += 1;
    let code = if w & COEFF != 0 {
        *pos += 1;
        Some(words[*pos - 1])
    } else {
        None
    };
    ((w >> 2) as usize, code, w & LAST != 0)
}

impl SparseMatrix {
    /// Rows (constraints).
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Terms with a non-zero coefficient, over all rows.
    pub fn num_terms(&self) -> usize {
        self.terms
    }

    /// Heap bytes held (the word stream and block offsets, at their capacity).
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * size_of::<u32>() + self.block_starts.capacity() * size_of::<u64>()
    }

    /// Appends a row. Term indices are provisional (aux `j` as `j`, input `i` as
    /// `MAX_VARIABLES − 1 − i`) until [`SparseMatrix::finish`] maps them into z, because
    /// the number of inputs is only known once the circuit has run. The caller has checked
    /// that indices are below [`MAX_VARIABLES`] and that no coefficient is zero.
    pub(crate) fn push_row(&mut self, terms: &[Term]) {
        if self.rows % ROWS_PER_BLOCK == 0 {
            self.block_starts.push(self.words.len() as u64);
        }
        self.rows += 1;
        self.terms += terms.len();
        if terms.is_empty() {
            self.words.push(EMPTY_ROW);
            return;
        }
        for (k, &(index, code)) in terms.iter().enumerate() {
            debug_assert!((index as usize) < MAX_VARIABLES);
            let last = if k + 1 == terms.len() { LAST } else { 0 };
            match code {
                None => self.words.push(index << 2 | last),
                Some(code) => {
                    self.words.push(index << 2 | COEFF | last);
                    self.words.push(code);
                }
            }
        }
    }

    /// Maps the provisional indices into z = (inputs, aux) and trims the buffers.
    pub(crate) fn finish(&mut self, num_inputs: usize) {
        // record() checked num_inputs + num_aux <= MAX_VARIABLES, so the two provisional
        // ranges (aux from 0 up, inputs from the top down) cannot overlap.
        let top = (MAX_VARIABLES - 1) as u32;
        let first_input = top + 1 - num_inputs as u32;
        let shift = num_inputs as u32;
        let mut pos = 0;
        while pos < self.words.len() {
            let w = self.words[pos];
            if w == EMPTY_ROW {
                pos += 1;
                continue;
            }
            let p = w >> 2;
            let z = if p >= first_input { top - p } else { p + shift };
            self.words[pos] = z << 2 | (w & (COEFF | LAST));
            pos += if w & COEFF != 0 { 2 } else { 1 };
        }
        self.words.shrink_to_fit();
        self.block_starts.shrink_to_fit();
    }

    /// ⟨row, z⟩ for the rows of block `block`, into `out` (one element per row of the block).
    /// `input.len()` splits z into inputs and aux; `coeffs` is the shape's coefficient table.
    /// Inputs were checked against the shape, so indexing cannot fail on a finished matrix.
    pub(crate) fn eval_block(
        &self,
        block: usize,
        input: &[Scalar],
        aux: &[Scalar],
        coeffs: &[Scalar],
        out: &mut [Scalar],
    ) {
        let words = &self.words[self.block_starts[block] as usize..];
        let num_inputs = input.len();
        let mut pos = 0;
        // Reads the term at `pos`: (coefficient code or None for ONE, z value, last in row).
        let term = |pos: &mut usize| {
            let (i, code, last) = read_term(words, pos);
            // Inputs are few (hundreds at most): this branch is almost always "aux".
            let x = if i < num_inputs { input[i] } else { aux[i - num_inputs] };
            (code, x, last)
        };
        for o in out.iter_mut() {
            if words[pos] == EMPTY_ROW {
                pos += 1;
                *o = Scalar::ZERO;
                continue;
            }
            // The first term is assigned, not added to zero: rows have 1–4 terms, so this
            // saves a third of the additions.
            let (code, x, mut last) = term(&mut pos);
            let mut acc = match code {
                None => x,
                Some(CODE_MINUS_ONE) => -x,
                Some(CODE_TWO) => x.double(),
                Some(k) => x * coeffs[k as usize],
            };
            while !last {
                let (code, x, l) = term(&mut pos);
                match code {
                    None => acc += x,
                    Some(CODE_MINUS_ONE) => acc -= x,
                    Some(CODE_TWO) => acc += x.double(),
                    Some(k) => acc += x * coeffs[k as usize],
                }
                last = l;
            }
            *o = acc;
        }
    }

    /// `out[i] += Σ_rows M[row][i] · weights[row]`: the transposed product Mᵀ·weights, over
    /// z indices (`out.len()` variables, `weights.len()` rows). The setup's QAP at τ.
    ///
    /// Parallel without atomics or a transposed copy: each task owns a range of `out` and
    /// decodes the whole stream, keeping the terms that fall in its range. Decoding is cheap
    /// next to the products, and the memory used is `out` alone.
    pub(crate) fn add_transposed(&self, weights: &[Scalar], coeffs: &[Scalar], out: &mut [Scalar]) {
        assert_eq!(weights.len(), self.rows, "one weight per row");
        let per = out.len().div_ceil(rayon::current_num_threads()).max(1);
        out.par_chunks_mut(per).enumerate().for_each(|(k, part)| {
            let range = k * per..k * per + part.len();
            let mut pos = 0;
            for &weight in weights {
                if self.words[pos] == EMPTY_ROW {
                    pos += 1;
                    continue;
                }
                loop {
                    let (z, code, last) = read_term(&self.words, &mut pos);
                    if range.contains(&z) {
                        let slot = &mut part[z - range.start];
                        match code {
                            None => *slot += weight,
                            Some(CODE_MINUS_ONE) => *slot -= weight,
                            Some(CODE_TWO) => *slot += weight.double(),
                            Some(c) => *slot += weight * coeffs[c as usize],
                        }
                    }
                    if last {
                        break;
                    }
                }
            }
        });
    }

    /// The terms of every row as (z index, coefficient code), for tests and other consumers
    /// (a GPU evaluator re-encoding the matrix, say). Sequential: a full decode.
    pub fn rows(&self) -> impl Iterator<Item = Vec<(usize, Option<u32>)>> + '_ {
        let mut pos = 0;
        (0..self.rows).map(move |_| {
            let mut row = Vec::new();
            if self.words[pos] == EMPTY_ROW {
                pos += 1;
                return row;
            }
            loop {
                let (z, code, last) = read_term(&self.words, &mut pos);
                row.push((z, code));
                if last {
                    return row;
                }
            }
        })
    }
}
