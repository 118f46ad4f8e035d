//! Shared pieces of kiln's GPU benchmarks: repeat-and-median timing and the report table
//! (ARCHITECTURE.md §5: op, size, median ms over repeats, the floor, the ratio).
//!
//! Benchmarks report; they assert nothing about speed. Each bench binary checks its
//! result once against the CPU before timing, so a fast wrong kernel cannot report.

/// Median of `samples` (milliseconds). Panics on an empty slice (a bench bug).
pub fn median(samples: &mut [f64]) -> f64 {
    assert!(!samples.is_empty(), "median of no samples");
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 { samples[mid] } else { (samples[mid - 1] + samples[mid]) / 2.0 }
}

/// Runs `f` `warmup` times untimed, then `runs` times; returns the median of what `f`
/// returns (each call times itself, e.g. with `kiln_cuda::StreamTimer`, and returns ms).
pub fn median_of<E>(warmup: usize, runs: usize, mut f: impl FnMut() -> Result<f64, E>) -> Result<f64, E> {
    for _ in 0..warmup {
        f()?;
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        samples.push(f()?);
    }
    Ok(median(&mut samples))
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Row {
    /// The operation, e.g. `ntt forward`.
    pub op: String,
    /// The size, e.g. `2^24`.
    pub size: String,
    /// Median milliseconds.
    pub median_ms: f64,
    /// How many timed runs the median is over.
    pub runs: usize,
    /// The floor in milliseconds (ARCHITECTURE.md §6), if one is defined.
    pub floor_ms: Option<f64>,
    /// Free-form: a rate, the bar, scratch bytes.
    pub note: String,
}

/// Prints the table (and the device it ran on) in one block, easy to quote in a note.
pub fn print_table(title: &str, rows: &[Row]) {
    let device = kiln_cuda::Device::open(0)
        .and_then(|d| d.info())
        .map(|i| format!("{} ({} SMs)", i.name, i.sm_count))
        .unwrap_or_else(|e| e.to_string());
    println!("\n## {title} on {device}");
    println!("| op | size | median ms | runs | floor ms | median/floor | note |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | --- |");
    for r in rows {
        println!("{}", r.line());
    }
}

impl Row {
    /// The row as a markdown table line.
    pub fn line(&self) -> String {
        let (floor, ratio) = match self.floor_ms {
            Some(f) => (format!("{f:.3}"), format!("{:.2}", self.median_ms / f)),
            None => ("-".into(), "-".into()),
        };
        format!(
            "| {} | {} | {:.3} | {} | {floor} | {ratio} | {} |",
            self.op, self.size, self.median_ms, self.runs, self.note
        )
    }
}

/// Adds a row and prints it to stderr at once, so a run cut short by a time limit still
/// shows what it measured.
pub fn push_row(rows: &mut Vec<Row>, row: Row) {
    eprintln!("measured: {}", row.line());
    rows.push(row);
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
