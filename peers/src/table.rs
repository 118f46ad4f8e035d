//! One table from the results of a run: the JSON lines of `kiln-peers prove` (one per cell)
//! and of `kiln bench --json` (one per single-proof cell, one per round of a `--partitions`
//! batch), in any order, in one or more files.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::PeerError;
use crate::peer::{Cell, Prover, median};

/// A line of `kiln bench --json --partitions N`: one round of a batch.
#[derive(Debug, Deserialize)]
struct KilnBatchRound {
    circuit: String,
    log_size: u32,
    backend: String,
    partitions: usize,
    wall_ms: f64,
    verified: bool,
}

/// A line of `kiln bench --json`: the median of single proofs.
#[derive(Debug, Deserialize)]
struct KilnSingle {
    circuit: String,
    log_size: u32,
    backend: String,
    repeats: usize,
    wall_ms: f64,
    verified: bool,
}

/// Any result line. Untagged: tried in order, the first whose fields are all there wins (the
/// peers' lines have `prover`, kiln's batch rounds `partitions`, kiln's single cells `repeats`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Line {
    Peer(Cell),
    KilnBatch(KilnBatchRound),
    KilnSingle(KilnSingle),
}

/// A column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Column {
    /// kiln on the GPU (`kiln bench --backend gpu`).
    KilnGpu,
    /// kiln on the CPU.
    KilnCpu,
    /// A peer.
    Peer(usize),
}

impl Column {
    fn name(self) -> &'static str {
        match self {
            Column::KilnGpu => "kiln-gpu",
            Column::KilnCpu => "kiln-cpu",
            Column::Peer(i) => Prover::ALL[i].name(),
        }
    }

    fn kiln(backend: &str) -> Column {
        // kiln's GPU prover names itself `cuda:<ordinal>`, the CPU one `cpu`.
        if backend == "cpu" { Column::KilnCpu } else { Column::KilnGpu }
    }

    fn peer(p: Prover) -> Column {
        Column::Peer(Prover::ALL.iter().position(|&q| q == p).expect("every prover is in ALL"))
    }
}

/// A row: circuit, log2 size, proofs per run.
pub type RowKey = (String, u32, usize);

/// The timings of one (row, column): every run's wall time in ms, and whether all verified.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Times {
    /// Wall time per run (kiln's single-proof lines give their median once, with its count).
    pub runs_ms: Vec<f64>,
    /// Runs the figures stand for.
    pub runs: usize,
    /// Every proof verified.
    pub verified: bool,
}

impl Times {
    /// Median of the runs.
    pub fn median_ms(&self) -> f64 {
        let mut sorted = self.runs_ms.clone();
        sorted.sort_by(f64::total_cmp);
        median(&sorted)
    }
}

/// All results of a run, by row and column.
#[derive(Debug, Default)]
pub struct Results {
    /// (row, column) → timings.
    pub cells: BTreeMap<(RowKey, Column), Times>,
}

impl Results {
    /// Adds every result line of `text` (lines not starting with `{` are skipped: logs).
    pub fn add_text(&mut self, path: &Path, text: &str) -> Result<(), PeerError> {
        for (i, raw) in text.lines().enumerate() {
            let raw = raw.trim();
            if !raw.starts_with('{') {
                continue;
            }
            let line: Line = serde_json::from_str(raw).map_err(|source| PeerError::ResultLine {
                path: path.to_path_buf(),
                line: i + 1,
                source,
            })?;
            self.add(line);
        }
        Ok(())
    }

    /// Adds the result lines of the file at `path`.
    pub fn add_file(&mut self, path: &Path) -> Result<(), PeerError> {
        let text = std::fs::read_to_string(path).map_err(|source| PeerError::Io {
            path: path.to_path_buf(),
            op: "read",
            source,
        })?;
        self.add_text(path, &text)
    }

    fn add(&mut self, line: Line) {
        let (key, column, runs_ms, runs, verified) = match line {
            Line::Peer(c) => {
                let runs = c.runs_ms.len();
                ((c.circuit, c.log_size, c.batch), Column::peer(c.prover), c.runs_ms, runs, c.verified)
            }
            Line::KilnBatch(r) => {
                ((r.circuit, r.log_size, r.partitions), Column::kiln(&r.backend), vec![r.wall_ms], 1, r.verified)
            }
            Line::KilnSingle(s) => {
                ((s.circuit, s.log_size, 1), Column::kiln(&s.backend), vec![s.wall_ms], s.repeats, s.verified)
            }
        };
        let times = self.cells.entry((key, column)).or_insert(Times { verified: true, ..Times::default() });
        times.runs_ms.extend(runs_ms);
        times.runs += runs;
        times.verified &= verified;
    }

    /// The table as Markdown: one row per (circuit, size, batch), each prover's median wall
    /// time in ms (runs in parentheses), the best peer and kiln's GPU speed-up over it.
    pub fn markdown(&self) -> String {
        let mut columns: Vec<Column> = self.cells.keys().map(|(_, c)| *c).collect();
        columns.sort();
        columns.dedup();
        let mut rows: Vec<&RowKey> = self.cells.keys().map(|(k, _)| k).collect();
        rows.dedup();
        let mut out = String::from("| circuit | size | batch |");
        for c in &columns {
            out += &format!(" {} ms |", c.name());
        }
        out += " best peer | kiln-gpu speed-up |\n|---|---:|---:|";
        for _ in &columns {
            out += "---:|";
        }
        out += "---|---:|\n";
        for key in rows {
            let (circuit, log_size, batch) = key;
            out += &format!("| {circuit} | 2^{log_size} | {batch} |");
            for c in &columns {
                out += &match self.cells.get(&(key.clone(), *c)) {
                    Some(t) if t.verified => format!(" {:.1} ({}) |", t.median_ms(), t.runs),
                    Some(t) => format!(" {:.1} ({}) NOT VERIFIED |", t.median_ms(), t.runs),
                    None => " - |".to_string(),
                };
            }
            let best = columns
                .iter()
                .filter(|c| matches!(c, Column::Peer(_)))
                .filter_map(|c| self.cells.get(&(key.clone(), *c)).filter(|t| t.verified).map(|t| (*c, t.median_ms())))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let kiln = self.cells.get(&(key.clone(), Column::KilnGpu)).filter(|t| t.verified).map(Times::median_ms);
            out += &match (best, kiln) {
                (Some((c, peer)), Some(kiln)) => format!(" {} | {:.2}x |\n", c.name(), peer / kiln),
                (Some((c, _)), None) => format!(" {} | - |\n", c.name()),
                (None, _) => " - | - |\n".to_string(),
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as `kiln bench --json` prints them (trimmed of fields the table does not read).
    const KILN: &str = r#"{"circuit":"porep","log_size":20,"backend":"cuda:0","repeats":3,"wall_ms":40.0,"verified":true,"proof":"ab"}
{"circuit":"porep","log_size":20,"backend":"cuda:0","round":1,"partitions":10,"wall_ms":300.0,"verified":true}
{"circuit":"porep","log_size":20,"backend":"cuda:0","round":2,"partitions":10,"wall_ms":200.0,"verified":true}
{"circuit":"porep","log_size":20,"backend":"cuda:0","round":3,"partitions":10,"wall_ms":250.0,"verified":true}
{"circuit":"porep","log_size":20,"backend":"cpu","repeats":3,"wall_ms":900.0,"verified":true}
note: a log line
"#;

    fn peer(prover: Prover, batch: usize, runs_ms: Vec<f64>) -> String {
        let cell = Cell {
            prover,
            circuit: "porep".into(),
            log_size: 20,
            batch,
            median_ms: 0.0,
            min_ms: 0.0,
            max_ms: 0.0,
            runs: runs_ms.len(),
            runs_ms,
            verified: true,
            params: "p".into(),
        };
        serde_json::to_string(&cell).unwrap()
    }

    #[test]
    fn kiln_and_peer_lines_make_one_table() {
        let mut r = Results::default();
        r.add_text(Path::new("kiln.jsonl"), KILN).unwrap();
        let peers = [
            peer(Prover::SuprasealC2, 1, vec![450.0, 400.0, 500.0]),
            peer(Prover::BellpersonCuda, 1, vec![1350.0, 1300.0, 1400.0]),
            peer(Prover::BellpersonCuda, 10, vec![9000.0, 9000.0, 9000.0]),
        ]
        .join("\n");
        r.add_text(Path::new("peers.jsonl"), &peers).unwrap();
        let table = r.markdown();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "| circuit | size | batch | kiln-gpu ms | kiln-cpu ms | bellperson-cuda ms | supraseal-c2 ms | best peer | kiln-gpu speed-up |"
        );
        // Single proofs: supraseal-c2's median 450 over kiln's 40.
        assert_eq!(
            lines[2],
            "| porep | 2^20 | 1 | 40.0 (3) | 900.0 (3) | 1350.0 (3) | 450.0 (3) | supraseal-c2 | 11.25x |"
        );
        // Batches: kiln's median round 250, bellperson-cuda 9000; no CPU or supraseal batch.
        assert_eq!(lines[3], "| porep | 2^20 | 10 | 250.0 (3) | - | 9000.0 (3) | - | bellperson-cuda | 36.00x |");
    }

    #[test]
    fn a_line_of_neither_kind_is_an_error_naming_it() {
        let mut r = Results::default();
        let err = r.add_text(Path::new("x.jsonl"), "{\"circuit\":\"porep\"}\n").unwrap_err();
        assert!(matches!(err, PeerError::ResultLine { line: 1, .. }), "{err}");
    }
}
