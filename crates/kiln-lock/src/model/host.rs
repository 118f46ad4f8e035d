//! The host's CPU cores in simulated time: every CPU activity of a run (a worker's prep,
//! memory-phase and epilogue time, a witness thread's witness) is a task on one [`Host`],
//! shared by every device of the run. Without a [`HostModel`] each task runs on cores of its
//! own (the model before: CPU time never competes); with one, tasks share the host's cores.

use super::Micros;

/// How many cores the host has and how many each kind of CPU activity keeps busy alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostModel {
    /// Cores of the host.
    pub cores: u32,
    /// Cores one witness thread keeps busy (porep's parallel generator: all of them; a
    /// bellpepper synthesis: one).
    pub witness_cores: u32,
    /// Cores one worker's own CPU work keeps busy (its a, b, c evaluation and scalar staging
    /// run on the global thread pool).
    pub lane_cores: u32,
}

/// What a task is, for its share of the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskKind {
    Witness,
    Lane,
}

/// A CPU task started on the [`Host`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TaskId(usize);

struct Task {
    /// Work left, in microseconds at full speed.
    left: f64,
    cores: u32,
}

/// Processor sharing: while the running tasks ask for more cores than the host has, each runs
/// at `cores / demand` of its speed alone.
pub(super) struct Host {
    model: Option<HostModel>,
    now: Micros,
    /// Every task started; `None` once finished.
    tasks: Vec<Option<Task>>,
}

/// Work below this is done (rounding of the shared rates).
const EPSILON: f64 = 1e-6;

impl Host {
    pub(super) fn new(model: Option<HostModel>) -> Host {
        Host { model, now: 0, tasks: Vec::new() }
    }

    /// Starts `work` microseconds (at full speed) of a `kind` task now.
    pub(super) fn start(&mut self, kind: TaskKind, work: Micros) -> TaskId {
        let cores = self.model.map_or(1, |m| match kind {
            TaskKind::Witness => m.witness_cores,
            TaskKind::Lane => m.lane_cores,
        });
        let task = (work > 0).then_some(Task { left: work as f64, cores: cores.max(1) });
        self.tasks.push(task);
        TaskId(self.tasks.len() - 1)
    }

    pub(super) fn is_done(&self, id: TaskId) -> bool {
        self.tasks[id.0].is_none()
    }

    /// The speed of every running task: 1 while the host has the cores they ask for.
    fn speed(&self) -> f64 {
        let Some(m) = self.model else { return 1.0 };
        let demand: u64 = self.tasks.iter().flatten().map(|t| u64::from(t.cores)).sum();
        if demand <= u64::from(m.cores) { 1.0 } else { f64::from(m.cores) / demand as f64 }
    }

    /// When the next running task ends at the current rates.
    pub(super) fn next_completion(&self) -> Option<Micros> {
        let speed = self.speed();
        let left = self.tasks.iter().flatten().map(|t| t.left).min_by(f64::total_cmp)?;
        Some(self.now + ((left / speed) - EPSILON).ceil().max(0.0) as Micros)
    }

    /// Runs the tasks up to time `t`.
    pub(super) fn advance_to(&mut self, t: Micros) {
        let done = t.saturating_sub(self.now) as f64 * self.speed();
        for slot in &mut self.tasks {
            if let Some(task) = slot {
                task.left -= done;
                if task.left <= EPSILON {
                    *slot = None;
                }
            }
        }
        self.now = self.now.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a model every task runs at full speed, however many there are.
    #[test]
    fn without_a_model_tasks_never_compete() {
        let mut h = Host::new(None);
        let ids: Vec<TaskId> = (0..5).map(|_| h.start(TaskKind::Lane, 100)).collect();
        assert_eq!(h.next_completion(), Some(100));
        h.advance_to(99);
        assert!(ids.iter().all(|&id| !h.is_done(id)));
        h.advance_to(100);
        assert!(ids.iter().all(|&id| h.is_done(id)));
        assert_eq!(h.next_completion(), None);
    }

    /// Tasks asking for more cores than the host has share them: a 16-core witness beside an
    /// 8-core lane task on 16 cores each run at 2/3 speed until one ends.
    #[test]
    fn tasks_beyond_the_cores_share_them() {
        let m = HostModel { cores: 16, witness_cores: 16, lane_cores: 8 };
        let mut h = Host::new(Some(m));
        let w = h.start(TaskKind::Witness, 100);
        let l = h.start(TaskKind::Lane, 300);
        assert_eq!(h.next_completion(), Some(150), "100 at 2/3 speed");
        h.advance_to(150);
        assert!(h.is_done(w) && !h.is_done(l));
        // The lane task did 100 of its 300 and now runs alone at full speed.
        assert_eq!(h.next_completion(), Some(350));
        h.advance_to(350);
        assert!(h.is_done(l));
        // Two 8-core tasks fit 16 cores: no slowdown; zero work is done at once.
        let a = h.start(TaskKind::Lane, 50);
        let b = h.start(TaskKind::Lane, 50);
        let nothing = h.start(TaskKind::Witness, 0);
        assert!(h.is_done(nothing));
        assert_eq!(h.next_completion(), Some(400));
        h.advance_to(400);
        assert!(h.is_done(a) && h.is_done(b));
    }
}
