//! [`BusyClock`]: how long at least one of several overlapping activities was running.
//!
//! A GPU prover's lanes prove side by side; the device is busy while any of them is in its
//! compute phase, so its busy time is the union of those intervals, not their sum. The same
//! clock measures a scheduler's proving stage (busy while any worker proves).

use std::sync::Mutex;
use std::time::{Duration, Instant};

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
            i.closed += since.elapsed();
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
}
