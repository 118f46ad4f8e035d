//! The lock policies, as pure state machines behind one trait.
//!
//! A policy only decides *who may enter which section now*; it never blocks. The
//! blocking wrapper for real threads ([`crate::SharedPolicy`]) and the device model
//! ([`crate::model`]) both drive these same state machines, so the simulator tests the
//! code that production threads run, not a copy of it.

use std::collections::BTreeSet;
use std::fmt;

/// A worker's index on one device (0-based).
pub type WorkerId = usize;

/// The sections a worker enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// The short memory phase: staging a partition's inputs onto the device.
    Memory,
    /// The long compute phase: enqueueing NTTs and MSMs.
    Compute,
    /// Exclusive access to the whole device: the only place device-global operations
    /// (synchronize, pool trim, synchronous alloc/free) are allowed under kiln's policy.
    Exclusive,
}

/// How a policy gets a partition's working memory. This is half of what distinguished the
/// designs of ARCHITECTURE.md §1 (the other half is the lock structure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryStrategy {
    /// Per partition, in the memory phase: device synchronize, pool trim, async alloc;
    /// async free after compute. Correct but device-global on the hot path (the original
    /// single-mutex design).
    SyncTrimAllocPerPartition,
    /// Per partition, in the memory phase: pool trim (no synchronize), async alloc; async
    /// free after compute. §1's failed split design.
    TrimAllocPerPartition,
    /// One arena per lane, allocated once under exclusive access; the memory phase only
    /// copies into it on the lane's stream (kiln).
    Arenas,
}

/// Misuse of a lock policy: a bug in the caller, reported instead of deadlocking or
/// silently breaking device isolation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// A device-global operation was attempted without exclusive access to the device.
    #[error(
        "worker {worker} issued a device-global operation ({op}) outside an exclusive section under policy {policy}: \
         device-global calls (synchronize, pool trim, synchronous alloc/free) must go through an ExclusiveGuard"
    )]
    DeviceGlobalOutsideExclusive {
        /// The offending worker.
        worker: WorkerId,
        /// The operation.
        op: &'static str,
        /// The policy's name.
        policy: &'static str,
    },
    /// A worker asked for a section in an order the policy does not allow.
    #[error("worker {worker} cannot enter {section:?} under policy {policy}: {why}")]
    BadOrder {
        /// The offending worker.
        worker: WorkerId,
        /// The section it asked for.
        section: Section,
        /// The policy's name.
        policy: &'static str,
        /// What it should have done.
        why: &'static str,
    },
    /// A worker left a section it did not hold.
    #[error("worker {worker} left {section:?} which it does not hold (policy {policy})")]
    NotHeld {
        /// The offending worker.
        worker: WorkerId,
        /// The section.
        section: Section,
        /// The policy's name.
        policy: &'static str,
    },
    /// A lane policy was built with no lanes.
    #[error("a Lanes policy needs at least one lane: the VRAM plan found room for none (use the streamed plan)")]
    NoLanes,
}

/// A lock policy for workers sharing one device: a non-blocking state machine.
pub trait LockPolicy: fmt::Debug + Send {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// How the memory phase gets its memory under this policy.
    fn memory_strategy(&self) -> MemoryStrategy;
    /// Tries to let `worker` enter `section`: `Ok(true)` entered, `Ok(false)` must wait
    /// (retry after any [`LockPolicy::leave`]), `Err` is misuse.
    fn try_enter(&mut self, worker: WorkerId, section: Section) -> Result<bool, LockError>;
    /// `worker` leaves `section`.
    fn leave(&mut self, worker: WorkerId, section: Section) -> Result<(), LockError>;
    /// Whether `worker` may issue a device-global operation `op` now (the runtime check).
    fn check_device_global(&self, worker: WorkerId, op: &'static str) -> Result<(), LockError>;
    /// The lane (arena and stream index) `worker` holds, for policies that have lanes.
    fn lane_of(&self, _worker: WorkerId) -> Option<usize> {
        None
    }
    /// How many lanes the policy has, for policies that have lanes.
    fn lanes(&self) -> Option<usize> {
        None
    }
}

/// One mutex over memory and compute (and exclusive sections). The memory phase
/// synchronizes the device before trimming, so it is correct, but every partition pays a
/// device-global wait while holding the only lock.
#[derive(Debug, Default)]
pub struct Serial {
    holder: Option<(WorkerId, Section)>,
}

impl Serial {
    /// A free lock.
    pub fn new() -> Self {
        Self::default()
    }
}

impl LockPolicy for Serial {
    fn name(&self) -> &'static str {
        "serial"
    }
    fn memory_strategy(&self) -> MemoryStrategy {
        MemoryStrategy::SyncTrimAllocPerPartition
    }
    fn try_enter(&mut self, worker: WorkerId, section: Section) -> Result<bool, LockError> {
        match (self.holder, section) {
            (None, Section::Memory | Section::Exclusive) => {
                self.holder = Some((worker, section));
                Ok(true)
            }
            (None, Section::Compute) => Err(LockError::BadOrder {
                worker,
                section,
                policy: self.name(),
                why: "the single lock is taken by the memory phase and kept into compute",
            }),
            // Between memory and compute the holder keeps the lock (marked by `Compute`
            // after leaving memory, see `leave`).
            (Some((h, Section::Compute)), Section::Compute) if h == worker => Ok(true),
            (Some((h, _)), _) if h == worker => {
                Err(LockError::BadOrder { worker, section, policy: self.name(), why: "it already holds the lock" })
            }
            (Some(_), _) => Ok(false),
        }
    }
    fn leave(&mut self, worker: WorkerId, section: Section) -> Result<(), LockError> {
        match self.holder {
            // Leaving memory keeps the lock for the compute phase that must follow.
            Some((h, Section::Memory)) if h == worker && section == Section::Memory => {
                self.holder = Some((worker, Section::Compute));
                Ok(())
            }
            Some((h, s)) if h == worker && s == section => {
                self.holder = None;
                Ok(())
            }
            _ => Err(LockError::NotHeld { worker, section, policy: self.name() }),
        }
    }
    fn check_device_global(&self, worker: WorkerId, op: &'static str) -> Result<(), LockError> {
        match self.holder {
            Some((h, Section::Memory | Section::Exclusive)) if h == worker => Ok(()),
            _ => Err(LockError::DeviceGlobalOutsideExclusive { worker, op, policy: self.name() }),
        }
    }
}

/// **Counter-example, do not use**: ARCHITECTURE.md §1's split design. A memory lock and
/// a compute lock, so one worker's memory phase overlaps another's compute, and the memory
/// phase trims the pool. It believes holding the memory lock makes a device-global call
/// safe; it does not, because the trim acts on frees queued behind another worker's
/// kernels. Kept so the device model can show the out-of-memory it causes.
#[derive(Debug, Default)]
pub struct SplitMemoryCompute {
    memory: Option<WorkerId>,
    compute: Option<WorkerId>,
    exclusive: Option<WorkerId>,
}

impl SplitMemoryCompute {
    /// Both locks free.
    pub fn new() -> Self {
        Self::default()
    }
}

impl LockPolicy for SplitMemoryCompute {
    fn name(&self) -> &'static str {
        "split-memory-compute (§1 counter-example)"
    }
    fn memory_strategy(&self) -> MemoryStrategy {
        MemoryStrategy::TrimAllocPerPartition
    }
    fn try_enter(&mut self, worker: WorkerId, section: Section) -> Result<bool, LockError> {
        if self.memory == Some(worker) || self.compute == Some(worker) || self.exclusive == Some(worker) {
            return Err(LockError::BadOrder { worker, section, policy: self.name(), why: "it already holds a lock" });
        }
        let slot = match section {
            Section::Memory => &mut self.memory,
            Section::Compute => &mut self.compute,
            Section::Exclusive => {
                if self.memory.is_none() && self.compute.is_none() && self.exclusive.is_none() {
                    self.exclusive = Some(worker);
                    return Ok(true);
                }
                return Ok(false);
            }
        };
        if slot.is_none() && self.exclusive.is_none() {
            *slot = Some(worker);
            Ok(true)
        } else {
            Ok(false)
        }
    }
    fn leave(&mut self, worker: WorkerId, section: Section) -> Result<(), LockError> {
        let slot = match section {
            Section::Memory => &mut self.memory,
            Section::Compute => &mut self.compute,
            Section::Exclusive => &mut self.exclusive,
        };
        if *slot == Some(worker) {
            *slot = None;
            Ok(())
        } else {
            Err(LockError::NotHeld { worker, section, policy: self.name() })
        }
    }
    fn check_device_global(&self, worker: WorkerId, op: &'static str) -> Result<(), LockError> {
        // The flaw, on purpose: the memory lock is taken as licence for device-global calls.
        if self.memory == Some(worker) || self.exclusive == Some(worker) {
            Ok(())
        } else {
            Err(LockError::DeviceGlobalOutsideExclusive { worker, op, policy: self.name() })
        }
    }
}

/// kiln's policy: `lanes` lanes (one arena and one stream each, sized by the VRAM plan).
///
/// - A worker holds a lane from entering its memory phase to leaving its compute phase;
///   lanes run concurrently and never issue a device-global call.
/// - A device-global operation needs [`Section::Exclusive`], granted only when no lane is
///   held; while an exclusive request waits, no new lane is handed out (no starvation).
/// - A device-global call outside the exclusive section, or asking for exclusive access
///   while holding a lane (a self-deadlock), is a [`LockError`].
#[derive(Debug)]
pub struct Lanes {
    count: usize,
    free: Vec<usize>,
    held: Vec<(WorkerId, usize)>,
    exclusive: Option<WorkerId>,
    waiting_exclusive: BTreeSet<WorkerId>,
}

impl Lanes {
    /// `lanes` lanes, all free. At least one (the VRAM plan decides how many fit).
    pub fn new(lanes: usize) -> Result<Self, LockError> {
        if lanes == 0 {
            return Err(LockError::NoLanes);
        }
        // Popped from the back: lane 0 is handed out first.
        Ok(Lanes {
            count: lanes,
            free: (0..lanes).rev().collect(),
            held: Vec::new(),
            exclusive: None,
            waiting_exclusive: BTreeSet::new(),
        })
    }

    /// Changes the number of lanes (a re-plan). Only while no lane is held: call it through
    /// [`crate::ExclusiveGuard::set_lanes`].
    pub fn set_lanes(&mut self, lanes: usize) -> Result<(), LockError> {
        if lanes == 0 {
            return Err(LockError::NoLanes);
        }
        if !self.held.is_empty() {
            return Err(LockError::BadOrder {
                worker: self.held[0].0,
                section: Section::Exclusive,
                policy: "kiln lanes",
                why: "lanes can be re-planned only while none is held (under exclusive access)",
            });
        }
        self.count = lanes;
        self.free = (0..lanes).rev().collect();
        Ok(())
    }

    /// How many lanes are held now.
    pub fn busy_lanes(&self) -> usize {
        self.held.len()
    }
}

impl LockPolicy for Lanes {
    fn name(&self) -> &'static str {
        "kiln lanes"
    }
    fn memory_strategy(&self) -> MemoryStrategy {
        MemoryStrategy::Arenas
    }
    fn try_enter(&mut self, worker: WorkerId, section: Section) -> Result<bool, LockError> {
        let holds = self.lane_of(worker).is_some();
        if self.exclusive == Some(worker) {
            return Err(LockError::BadOrder {
                worker,
                section,
                policy: self.name(),
                why: "it holds exclusive access; leave it first",
            });
        }
        match section {
            Section::Memory => {
                if holds {
                    return Err(LockError::BadOrder {
                        worker,
                        section,
                        policy: self.name(),
                        why: "it already holds a lane (memory → compute → leave compute)",
                    });
                }
                if self.exclusive.is_some() || !self.waiting_exclusive.is_empty() {
                    return Ok(false);
                }
                match self.free.pop() {
                    Some(lane) => {
                        self.held.push((worker, lane));
                        Ok(true)
                    }
                    None => Ok(false),
                }
            }
            Section::Compute => {
                if holds {
                    Ok(true)
                } else {
                    Err(LockError::BadOrder {
                        worker,
                        section,
                        policy: self.name(),
                        why: "compute runs in the lane taken by the memory phase",
                    })
                }
            }
            Section::Exclusive => {
                if holds {
                    return Err(LockError::BadOrder {
                        worker,
                        section,
                        policy: self.name(),
                        why: "it holds a lane: waiting for all lanes to drain would deadlock on itself",
                    });
                }
                if self.exclusive.is_none() && self.held.is_empty() {
                    self.waiting_exclusive.remove(&worker);
                    self.exclusive = Some(worker);
                    Ok(true)
                } else {
                    self.waiting_exclusive.insert(worker);
                    Ok(false)
                }
            }
        }
    }
    fn leave(&mut self, worker: WorkerId, section: Section) -> Result<(), LockError> {
        let not_held = LockError::NotHeld { worker, section, policy: self.name() };
        match section {
            Section::Memory => self.lane_of(worker).map(|_| ()).ok_or(not_held),
            Section::Compute => {
                let i = self.held.iter().position(|&(w, _)| w == worker).ok_or(not_held)?;
                let (_, lane) = self.held.swap_remove(i);
                self.free.push(lane);
                Ok(())
            }
            Section::Exclusive => {
                if self.exclusive == Some(worker) {
                    self.exclusive = None;
                    Ok(())
                } else {
                    Err(not_held)
                }
            }
        }
    }
    fn check_device_global(&self, worker: WorkerId, op: &'static str) -> Result<(), LockError> {
        if self.exclusive == Some(worker) {
            Ok(())
        } else {
            Err(LockError::DeviceGlobalOutsideExclusive { worker, op, policy: self.name() })
        }
    }
    fn lane_of(&self, worker: WorkerId) -> Option<usize> {
        self.held.iter().find(|&&(w, _)| w == worker).map(|&(_, l)| l)
    }
    fn lanes(&self) -> Option<usize> {
        Some(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_reject_device_global_from_a_lane() {
        let mut p = Lanes::new(2).unwrap();
        assert!(p.try_enter(0, Section::Memory).unwrap());
        let err = p.check_device_global(0, "cuMemPoolTrimTo").unwrap_err();
        assert!(matches!(err, LockError::DeviceGlobalOutsideExclusive { worker: 0, .. }), "{err}");
        assert!(p.try_enter(0, Section::Exclusive).is_err(), "exclusive from inside a lane must be refused");
    }

    #[test]
    fn lanes_exclusive_waits_for_drain_and_blocks_new_lanes() {
        let mut p = Lanes::new(2).unwrap();
        assert!(p.try_enter(0, Section::Memory).unwrap());
        assert!(!p.try_enter(2, Section::Exclusive).unwrap(), "a lane is held");
        assert!(!p.try_enter(1, Section::Memory).unwrap(), "an exclusive request is waiting: no new lane");
        p.leave(0, Section::Memory).unwrap();
        assert!(p.try_enter(0, Section::Compute).unwrap());
        p.leave(0, Section::Compute).unwrap();
        assert!(p.try_enter(2, Section::Exclusive).unwrap());
        p.check_device_global(2, "cuCtxSynchronize").unwrap();
        p.leave(2, Section::Exclusive).unwrap();
        assert!(p.try_enter(1, Section::Memory).unwrap());
        assert_eq!(p.lane_of(1), Some(0));
    }

    #[test]
    fn lanes_hand_out_at_most_their_count() {
        let mut p = Lanes::new(2).unwrap();
        assert!(p.try_enter(0, Section::Memory).unwrap());
        assert!(p.try_enter(1, Section::Memory).unwrap());
        assert!(!p.try_enter(2, Section::Memory).unwrap());
        assert_ne!(p.lane_of(0), p.lane_of(1));
        assert!(Lanes::new(0).is_err());
    }

    #[test]
    fn serial_keeps_the_lock_from_memory_to_compute() {
        let mut p = Serial::new();
        assert!(p.try_enter(0, Section::Memory).unwrap());
        p.leave(0, Section::Memory).unwrap();
        assert!(!p.try_enter(1, Section::Memory).unwrap());
        assert!(p.try_enter(0, Section::Compute).unwrap());
        p.leave(0, Section::Compute).unwrap();
        assert!(p.try_enter(1, Section::Memory).unwrap());
    }

    #[test]
    fn split_lets_memory_overlap_compute_and_allows_its_trim() {
        let mut p = SplitMemoryCompute::new();
        assert!(p.try_enter(0, Section::Compute).unwrap());
        assert!(p.try_enter(1, Section::Memory).unwrap());
        // The §1 flaw: the check passes although worker 0 is computing.
        p.check_device_global(1, "cuMemPoolTrimTo").unwrap();
    }
}
