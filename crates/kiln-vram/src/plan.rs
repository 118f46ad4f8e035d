//! The plan: from measured free memory, a margin, the SRS size and one worker's need,
//! decide how many workers run, whether the SRS is resident or streamed, and whether the
//! largest sums run whole or in pieces.

use std::fmt;

const GIB: f64 = (1u64 << 30) as f64;

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / GIB)
}

/// What the planner is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanInput {
    /// The device, for the printed plan (e.g. `NVIDIA H200 (0)`).
    pub device: String,
    /// Free device memory measured at start-up (`cuMemGetInfo`, under exclusive access).
    pub free_bytes: u64,
    /// Kept free for the driver, kernels' stacks and other processes.
    pub margin_bytes: u64,
    /// The proving key's device-side size (kiln-groth16 computes it).
    pub srs_bytes: u64,
    /// One worker's arena when the SRS is resident (from the kiln-ntt / kiln-msm byte
    /// functions: a/b/c plus MSM scratch).
    pub worker_bytes: u64,
    /// One worker's arena when its largest MSMs run in pieces (scratch for a piece, not the
    /// whole query: a little slower), if the caller can run them so and it is smaller than
    /// `worker_bytes`. Chosen only when the resident SRS fits with it and not with `worker_bytes`:
    /// a resident SRS with pieces is much faster than a streamed one.
    pub pieced_worker_bytes: Option<u64>,
    /// One worker's arena when the SRS is streamed from host memory: a/b/c, MSM scratch for a
    /// chunk of bases (not a whole query) and the chunk itself. Usually far below
    /// `worker_bytes`, so the streamed SRS is what lets a small card prove a large circuit.
    pub streamed_worker_bytes: u64,
    /// How many workers the caller would like.
    pub workers_wanted: usize,
}

/// Where the SRS lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrsPlacement {
    /// Allocated once on the device and kept there.
    Resident,
    /// Kept in host memory (the parameters) and streamed through each worker's arena per partition.
    Streamed,
}

/// A decided plan. `Display` prints what fits, what did not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The input it was made from.
    pub input: PlanInput,
    /// Resident or streamed SRS.
    pub srs: SrsPlacement,
    /// Workers (lanes), each with one arena.
    pub workers: usize,
    /// Bytes of each worker's arena.
    pub arena_bytes: u64,
    /// Whether the workers' largest MSMs run in pieces (arenas of
    /// [`PlanInput::pieced_worker_bytes`]).
    pub pieces: bool,
    /// What did not fit, and why, one line each.
    pub did_not_fit: Vec<String>,
}

/// No plan fits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Not even one worker with a streamed SRS fits.
    #[error(
        "no plan fits on {device}: one worker with a streamed SRS needs {need} but only {usable} is usable \
         ({free} free − {margin} margin); free GPU memory (other processes?) or use the CPU prover"
    )]
    NothingFits {
        /// Device name.
        device: String,
        /// Bytes one streamed worker needs, formatted.
        need: String,
        /// Usable bytes, formatted.
        usable: String,
        /// Free bytes, formatted.
        free: String,
        /// Margin, formatted.
        margin: String,
    },
    /// Zero workers were asked for.
    #[error("a plan needs at least one worker (workers_wanted = 0)")]
    NoWorkersWanted,
}

impl Plan {
    /// Decides the plan. Resident SRS when it fits with at least one worker (the fast path),
    /// with whole-size MSMs if one such worker fits, else with MSMs in pieces if one such
    /// worker fits; else the streamed SRS (the planned fallback); as many workers as fit, at
    /// most the wanted number; an error only when not one streamed worker fits.
    pub fn new(input: PlanInput) -> Result<Plan, PlanError> {
        if input.workers_wanted == 0 {
            return Err(PlanError::NoWorkersWanted);
        }
        let usable = input.free_bytes.saturating_sub(input.margin_bytes);
        let mut did_not_fit = Vec::new();
        let fit = |room: u64, each: u64| room.checked_div(each).map_or(input.workers_wanted, |n| n as usize);

        let resident_room = usable.checked_sub(input.srs_bytes);
        let resident_workers = resident_room.map_or(0, |room| fit(room, input.worker_bytes));
        let pieced = input.pieced_worker_bytes.filter(|&b| b < input.worker_bytes);
        let pieced_workers = pieced.map_or(0, |each| resident_room.map_or(0, |room| fit(room, each)));
        let (srs, arena_bytes, can, pieces) = if resident_workers >= 1 {
            (SrsPlacement::Resident, input.worker_bytes, resident_workers, false)
        } else if let (Some(each), true) = (pieced, pieced_workers >= 1) {
            did_not_fit.push(format!(
                "whole-size MSMs: SRS {} + one worker {} = {} > usable {}; the largest MSMs run in pieces \
                 instead (one worker {})",
                gib(input.srs_bytes),
                gib(input.worker_bytes),
                gib(input.srs_bytes.saturating_add(input.worker_bytes)),
                gib(usable),
                gib(each)
            ));
            (SrsPlacement::Resident, each, pieced_workers, true)
        } else {
            let smallest = pieced.unwrap_or(input.worker_bytes);
            did_not_fit.push(format!(
                "resident SRS: SRS {} + one worker {} = {} > usable {}; SRS streamed from host memory instead",
                gib(input.srs_bytes),
                gib(smallest),
                gib(input.srs_bytes.saturating_add(smallest)),
                gib(usable)
            ));
            let each = input.streamed_worker_bytes;
            let n = fit(usable, each);
            if n == 0 {
                return Err(PlanError::NothingFits {
                    device: input.device.clone(),
                    need: gib(each),
                    usable: gib(usable),
                    free: gib(input.free_bytes),
                    margin: gib(input.margin_bytes),
                });
            }
            (SrsPlacement::Streamed, each, n, false)
        };
        let workers = can.min(input.workers_wanted);
        if workers < input.workers_wanted {
            let room = match srs {
                SrsPlacement::Resident => usable - input.srs_bytes,
                SrsPlacement::Streamed => usable,
            };
            did_not_fit.push(format!(
                "workers: {} wanted, {} fit: each needs {}, {} left after the SRS, {} left after {} arenas",
                input.workers_wanted,
                workers,
                gib(arena_bytes),
                gib(room),
                gib(room - arena_bytes * workers as u64),
                workers
            ));
        }
        Ok(Plan { input, srs, workers, arena_bytes, pieces, did_not_fit })
    }

    /// Bytes the plan allocates on the device: the resident SRS (if any) plus every arena.
    pub fn device_bytes(&self) -> u64 {
        let srs = if self.srs == SrsPlacement::Resident { self.input.srs_bytes } else { 0 };
        srs + self.arena_bytes * self.workers as u64
    }

    /// Usable bytes: free minus margin.
    pub fn usable_bytes(&self) -> u64 {
        self.input.free_bytes.saturating_sub(self.input.margin_bytes)
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.input;
        writeln!(f, "VRAM plan for {}", i.device)?;
        writeln!(
            f,
            "  free {}, margin {}, usable {}",
            gib(i.free_bytes),
            gib(i.margin_bytes),
            gib(self.usable_bytes())
        )?;
        match self.srs {
            SrsPlacement::Resident => writeln!(f, "  SRS {}: resident", gib(i.srs_bytes))?,
            SrsPlacement::Streamed => writeln!(f, "  SRS {}: streamed from host memory", gib(i.srs_bytes))?,
        }
        writeln!(
            f,
            "  workers {} of {} wanted, one arena of {} each{}",
            self.workers,
            i.workers_wanted,
            gib(self.arena_bytes),
            if self.pieces { ", the largest MSMs in pieces" } else { "" }
        )?;
        writeln!(
            f,
            "  device total {}, {} left unplanned",
            gib(self.device_bytes()),
            gib(self.usable_bytes() - self.device_bytes())
        )?;
        if self.did_not_fit.is_empty() {
            writeln!(f, "  everything asked for fits")?;
        }
        for why in &self.did_not_fit {
            writeln!(f, "  did not fit: {why}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const G: u64 = 1 << 30;

    fn input(free_gib: u64, wanted: usize) -> PlanInput {
        PlanInput {
            device: "test card".into(),
            free_bytes: free_gib * G,
            margin_bytes: 2 * G,
            srs_bytes: 45 * G,
            worker_bytes: 16 * G,
            pieced_worker_bytes: None,
            streamed_worker_bytes: 17 * G,
            workers_wanted: wanted,
        }
    }

    /// An 80 GB card at 2^27: the SRS (45) and a whole-size worker (36) do not fit in 75.5
    /// usable; a pieced worker (28) does, so the SRS stays resident; a smaller card streams.
    #[test]
    fn pieces_keep_the_srs_resident_where_a_whole_worker_does_not_fit() {
        let at_2_27 = |free: u64| PlanInput {
            srs_bytes: 45 * G,
            worker_bytes: 36 * G,
            pieced_worker_bytes: Some(28 * G),
            ..input(free, 2)
        };
        let p = Plan::new(at_2_27(78)).unwrap();
        assert_eq!((p.srs, p.workers, p.pieces, p.arena_bytes), (SrsPlacement::Resident, 1, true, 28 * G), "{p}");
        assert!(p.to_string().contains("in pieces"), "{p}");
        assert!(p.did_not_fit.iter().any(|l| l.contains("whole-size MSMs")), "{p}");
        // Whole-size workers are kept wherever one fits, even if pieces would fit more.
        let p = Plan::new(at_2_27(139)).unwrap();
        assert_eq!((p.srs, p.workers, p.pieces), (SrsPlacement::Resident, 2, false), "{p}");
        let p = Plan::new(at_2_27(70)).unwrap();
        assert_eq!((p.srs, p.pieces), (SrsPlacement::Streamed, false), "{p}");
        // A pieced worker no smaller than a whole one is never chosen.
        let p = Plan::new(PlanInput { pieced_worker_bytes: Some(36 * G), ..at_2_27(78) }).unwrap();
        assert_eq!((p.srs, p.pieces), (SrsPlacement::Streamed, false), "{p}");
    }

    #[test]
    fn h200_holds_the_srs_and_four_workers_and_refuses_eight() {
        let p = Plan::new(input(139, 4)).unwrap();
        assert_eq!((p.srs, p.workers), (SrsPlacement::Resident, 4), "{p}");
        assert!(p.did_not_fit.is_empty());
        let p = Plan::new(input(139, 8)).unwrap();
        assert_eq!(p.workers, (139 - 2 - 45) as usize / 16, "{p}");
        assert!(p.to_string().contains("8 wanted"), "{p}");
    }

    #[test]
    fn consumer_card_streams_the_srs() {
        let p = Plan::new(input(24, 3)).unwrap();
        assert_eq!((p.srs, p.workers), (SrsPlacement::Streamed, 1), "{p}");
        assert!(p.to_string().contains("streamed"), "{p}");
        assert!(p.did_not_fit.iter().any(|l| l.contains("resident SRS")));
    }

    #[test]
    fn too_small_is_an_error_that_says_why() {
        let err = Plan::new(input(12, 1)).unwrap_err();
        assert!(err.to_string().contains("no plan fits"), "{err}");
        assert_eq!(Plan::new(input(139, 0)).unwrap_err(), PlanError::NoWorkersWanted);
    }

    proptest! {
        /// The plan never exceeds the usable memory, never gives more workers than wanted,
        /// takes as many as fit, and streams only when resident does not fit.
        #[test]
        fn plans_fit_and_are_maximal(
            free in 0u64..200, margin in 0u64..8, srs in 0u64..80, worker in 1u64..40, streamed in 1u64..44, wanted in 1usize..10,
            pieced in proptest::option::of(1u64..40)
        ) {
            let inp = PlanInput {
                device: "d".into(), free_bytes: free * G, margin_bytes: margin * G, srs_bytes: srs * G,
                worker_bytes: worker * G, pieced_worker_bytes: pieced.map(|p| p * G), streamed_worker_bytes: streamed * G,
                workers_wanted: wanted,
            };
            let usable = (free * G).saturating_sub(margin * G);
            match Plan::new(inp.clone()) {
                Ok(p) => {
                    prop_assert!(p.workers >= 1 && p.workers <= wanted);
                    prop_assert!(p.device_bytes() <= usable, "{}", p);
                    if p.workers < wanted {
                        prop_assert!(p.device_bytes() + p.arena_bytes > usable, "one more worker fits:\n{}", p);
                    }
                    let smallest = pieced.map_or(worker, |p| p.min(worker)) * G;
                    if p.srs == SrsPlacement::Streamed {
                        prop_assert!(srs * G + smallest > usable);
                    }
                    // Pieces only where a whole worker does not fit and a pieced one does.
                    prop_assert_eq!(p.pieces, srs * G + worker * G > usable && srs * G + smallest <= usable);
                    prop_assert_eq!(p.arena_bytes, if p.pieces { smallest } else if p.srs == SrsPlacement::Streamed {
                        streamed * G } else { worker * G });
                }
                Err(_) => prop_assert!(srs * G + worker * G > usable && streamed * G > usable),
            }
        }
    }
}
