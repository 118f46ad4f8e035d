//! The host memory a batch should take at its peak, predicted from what it holds (`bench
//! --partitions` prints it beside the measured peak): the parameters, the recorded shape, the
//! provers' page-locked buffers and the most witnesses the orchestrator keeps at once.

use kiln_groth16::Shape;

/// What a batch holds in host memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPlan {
    pub params: u64,
    pub shape: u64,
    /// The provers' page-locked buffers (`Prover::pinned_host_bytes`).
    pub pinned: u64,
    /// The most witnesses in memory at once (kiln-sched: queue depth + CPU threads + workers).
    pub witnesses: usize,
    pub witness_bytes: u64,
}

impl HostPlan {
    /// The predicted peak.
    pub fn total(&self) -> u64 {
        self.params + self.shape + self.pinned + self.witnesses as u64 * self.witness_bytes
    }
}

impl std::fmt::Display for HostPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        write!(
            f,
            "{:.2} GiB: parameters {:.2}, shape {:.2}, page-locked {:.2}, up to {} witnesses of {:.2}",
            gib(self.total()),
            gib(self.params),
            gib(self.shape),
            gib(self.pinned),
            self.witnesses,
            gib(self.witness_bytes)
        )
    }
}

/// One witness's bytes (its inputs and aux values).
pub fn witness_bytes(shape: &Shape) -> u64 {
    (shape.num_inputs() + shape.num_aux()) as u64 * 32
}

#[cfg(test)]
mod tests {
    use super::HostPlan;

    /// The tenth session's 2^27 batch on one H100 lane with a spare set: 48.3 GB of
    /// parameters, two 22.5 GB host sets, queue 2 + one witness thread + two workers of
    /// 4.17 GB witnesses (its peak resident set was 119.2 GB, 111.0 GiB; the shape here is a
    /// stand-in).
    #[test]
    fn a_2_27_batch_is_predicted_from_what_it_holds() {
        let plan = HostPlan {
            params: 48_318_395_168,
            shape: 3 << 30,
            pinned: 45_097_088_512,
            witnesses: 5,
            witness_bytes: 4_165_437_088,
        };
        assert_eq!(plan.total(), 48_318_395_168 + (3 << 30) + 45_097_088_512 + 5 * 4_165_437_088);
        let text = plan.to_string();
        assert!(
            text.starts_with("109.40 GiB: parameters 45.00") && text.ends_with("up to 5 witnesses of 3.88"),
            "{text}"
        );
    }
}
