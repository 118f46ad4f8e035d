//! [`BusyClock`]: how long at least one of several overlapping activities was running.
//!
//! A GPU prover's lanes prove side by side; the device is busy while a thread of any of them
//! waits on its kernels and copies, so its busy time is the union of those intervals, not
//! their sum. The same
//! clock measures a scheduler's proving stage (busy while any worker proves).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Closed busy intervals a clock remembers for [`BusyClock::idle_edges`] (a batch of proofs
/// closes at most one per proof; older ones are forgotten).
const HISTORY: usize = 4096;

/// The union of overlapping intervals, as a running total: counts from the first activity
/// entering to the last one leaving, so two side by side count once.
///
/// ```
/// use kiln_groth16::BusyClock;
///
/// let clock = BusyClock::default();
/// let a = clock.enter();
/// let b = clock.enter(); // overlaps a: counted once
/// drop(a);
/// drop(b);
/// assert!(clock.total() > std::time::Duration::ZERO);
/// ```
#[derive(Debug, Default)]
pub struct BusyClock(Mutex<Intervals>);

#[derive(Debug, Default)]
struct Intervals {
    /// Activities running now.
    active: usize,
    /// When the current busy interval began (`active > 0`).
    since: Option<Instant>,
    /// Closed busy intervals, summed.
    closed: Duration,
    /// The last [`HISTORY`] closed intervals, oldest first.
    recent: VecDeque<(Instant, Instant)>,
    /// Whether older intervals were forgotten.
    forgot: bool,
}

/// How long a span of time waited for its first busy instant and after its last one
/// ([`BusyClock::idle_edges`]): the idle ends of a batch, apart from the gaps inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleEdges {
    /// From the span's start to its first busy instant (the whole span when never busy).
    pub before_first: Duration,
    /// From its last busy instant to the span's end (the whole span when never busy).
    pub after_last: Duration,
}

impl BusyClock {
    /// An activity starts; it ends when the span is dropped.
    pub fn enter(&self) -> BusySpan<'_> {
        let mut i = self.lock();
        if i.active == 0 {
            i.since = Some(Instant::now());
        }
        i.active += 1;
        BusySpan(self)
    }

    /// Busy time so far, the current interval included up to now.
    pub fn total(&self) -> Duration {
        let i = self.lock();
        i.closed + i.since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// The idle ends of the span `from..to` (`to` at most now): `None` when the clock no
    /// longer remembers the intervals back to `from`.
    pub fn idle_edges(&self, from: Instant, to: Instant) -> Option<IdleEdges> {
        let i = self.lock();
        if i.forgot && i.recent.front().is_none_or(|&(start, _)| start > from) {
            return None;
        }
        let open = i.since.map(|s| (s, Instant::now()));
        let mut inside = i.recent.iter().copied().chain(open).filter(|&(start, end)| start < to && end > from);
        let span = to.saturating_duration_since(from);
        let Some(first) = inside.next() else { return Some(IdleEdges { before_first: span, after_last: span }) };
        let last = inside.next_back().unwrap_or(first);
        Some(IdleEdges {
            before_first: first.0.saturating_duration_since(from),
            after_last: to.saturating_duration_since(last.1),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Intervals> {
        // The counters stay consistent whatever panicked while holding them (plain adds).
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One running activity of a [`BusyClock`]; dropping it ends the activity.
#[derive(Debug)]
#[must_use = "the activity ends when the span is dropped"]
pub struct BusySpan<'a>(&'a BusyClock);

impl Drop for BusySpan<'_> {
    fn drop(&mut self) {
        let mut i = self.0.lock();
        i.active -= 1;
        if i.active == 0
            && let Some(since) = i.since.take()
        {
            let now = Instant::now();
            i.closed += now.saturating_duration_since(since);
            if i.recent.len() == HISTORY {
                i.recent.pop_front();
                i.forgot = true;
            }
            i.recent.push_back((since, now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_spans_count_once_and_gaps_not_at_all() {
        let clock = BusyClock::default();
        let pause = Duration::from_millis(30);
        let start = Instant::now();
        let a = clock.enter();
        std::thread::sleep(pause);
        let b = clock.enter();
        std::thread::sleep(pause);
        drop(a);
        std::thread::sleep(pause);
        drop(b);
        let first = start.elapsed();
        // A gap: nothing running, nothing counted.
        std::thread::sleep(pause);
        let after_gap = clock.total();
        assert!(after_gap <= first, "{after_gap:?} counted beyond the busy interval {first:?}");
        assert!(after_gap >= 3 * pause, "{after_gap:?}: the overlapped interval lost time");
        // A second interval adds on, and an open one counts up to now.
        let c = clock.enter();
        std::thread::sleep(pause);
        assert!(clock.total() >= after_gap + pause);
        drop(c);
        let done = clock.total();
        std::thread::sleep(pause);
        assert_eq!(clock.total(), done, "idle time was counted");
    }

    #[test]
    fn idle_edges_are_the_waits_before_the_first_and_after_the_last_interval() {
        let clock = BusyClock::default();
        let pause = Duration::from_millis(5);
        let from = Instant::now();
        std::thread::sleep(pause);
        let edges = clock.idle_edges(from, Instant::now()).unwrap();
        assert_eq!(edges.before_first, edges.after_last, "never busy: both are the whole span");
        // Two instants of work, bracketed by readings of the clock's own time source.
        let a0 = Instant::now();
        drop(clock.enter());
        let a1 = Instant::now();
        std::thread::sleep(pause);
        let b0 = Instant::now();
        drop(clock.enter());
        let b1 = Instant::now();
        std::thread::sleep(pause);
        let to = Instant::now();
        let e = clock.idle_edges(from, to).unwrap();
        assert!(e.before_first >= a0 - from && e.before_first <= a1 - from, "{e:?}");
        assert!(e.after_last >= to - b1 && e.after_last <= to - b0, "{e:?}");
        // A span from after the first interval: its first busy instant is the second one.
        let later = clock.idle_edges(a1, to).unwrap();
        assert!(later.before_first >= b0 - a1 && later.before_first <= b1 - a1, "{later:?}");
        // An open interval ends now: nothing is idle after it.
        let running = clock.enter();
        assert_eq!(clock.idle_edges(from, Instant::now()).unwrap().after_last, Duration::ZERO);
        drop(running);
    }

    #[test]
    fn forgotten_history_gives_no_edges() {
        let clock = BusyClock::default();
        let from = Instant::now();
        for _ in 0..=HISTORY {
            drop(clock.enter());
        }
        assert!(clock.idle_edges(from, Instant::now()).is_none(), "the first interval was forgotten");
        let later = Instant::now();
        drop(clock.enter());
        assert!(clock.idle_edges(later, Instant::now()).is_some());
    }
}
