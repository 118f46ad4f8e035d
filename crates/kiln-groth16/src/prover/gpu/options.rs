//! What a user sets for the GPU prover, and what the plan decided.

use blstrs::Scalar;

use super::GIB;

/// How the GPU prover is set up.
#[derive(Debug, Clone)]
pub struct GpuOptions {
    /// CUDA ordinal of the device.
    pub device: usize,
    /// Workers (lanes) wanted; the plan may give fewer. Each proves one circuit at a time.
    pub workers: usize,
    /// Device bytes the plan may use at most (below what is free): forces the streamed path
    /// on a large card, for tests. `None`: everything free. `KILN_VRAM_BUDGET` (bytes, or with
    /// a `G`/`GiB` suffix) sets it from the environment in [`GpuOptions::from_env`].
    pub vram_budget: Option<u64>,
    /// Bytes kept free for the driver, kernel stacks and other processes.
    pub margin_bytes: u64,
    /// Bases per chunk when the SRS is streamed from host memory.
    pub stream_chunk: usize,
    /// Proofs that may do their host work (scalars staged, a and b evaluated) while every lane
    /// is busy, each in a set of page-locked buffers of its own beside the lanes' (about
    /// 32 × (2n + aux + |A| + |B|) bytes: 17 GiB at 2^27); their device work then starts at
    /// once. `None`: one, if the host has room (see the prover's log), else none.
    pub prepare_ahead: Option<usize>,
    /// Test hook, off by default: a proof whose first public input (after ONE) equals this
    /// value fails with a real CUDA error, a kernel launch the driver refuses (see
    /// `fault.rs`), so that tests can show one job's launch failure leaves the others and
    /// the prover intact.
    #[doc(hidden)]
    pub fail_launch_on_input: Option<Scalar>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            device: 0,
            workers: 2,
            vram_budget: None,
            margin_bytes: GIB,
            stream_chunk: 1 << 20,
            prepare_ahead: None,
            fail_launch_on_input: None,
        }
    }
}

impl GpuOptions {
    /// The defaults, with `KILN_VRAM_BUDGET` applied when set.
    ///
    /// # Errors
    /// A value that is not a byte count (e.g. `24G`, `24GiB`, `25769803776`).
    pub fn from_env() -> Result<Self, String> {
        let mut o = GpuOptions::default();
        if let Ok(v) = std::env::var("KILN_VRAM_BUDGET") {
            o.vram_budget = Some(parse_bytes(&v).map_err(|e| format!("KILN_VRAM_BUDGET: {e}"))?);
        }
        Ok(o)
    }
}

/// `24G`, `24GiB`, `512M`, `25769803776` → bytes (binary units).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.trim_end_matches("iB").trim_end_matches('B') {
        x if x.ends_with('G') => (&x[..x.len() - 1], GIB),
        x if x.ends_with('M') => (&x[..x.len() - 1], 1 << 20),
        x if x.ends_with('K') => (&x[..x.len() - 1], 1 << 10),
        x => (x, 1),
    };
    let n: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a byte count (e.g. 24G, 512M, 1073741824)"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("{s:?}: a byte count must be positive"));
    }
    Ok((n * mul as f64) as u64)
}

/// Where the SRS lives, as the plan decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrsMode {
    /// Uploaded once at start-up and kept on the device.
    Resident,
    /// Kept in host memory and streamed through each worker's chunk buffers per proof.
    Streamed,
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn byte_counts_parse_in_binary_units() {
        assert_eq!(parse_bytes("24G"), Ok(24 << 30));
        assert_eq!(parse_bytes("24GiB"), Ok(24 << 30));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("512MB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.5G"), Ok(3 << 29));
        assert_eq!(parse_bytes(" 1073741824 "), Ok(1 << 30));
        for bad in ["", "G", "-1G", "0", "ten", "NaN"] {
            assert!(parse_bytes(bad).is_err(), "{bad:?} accepted");
        }
    }
}
