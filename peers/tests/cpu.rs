//! bellperson on the CPU proves a kiln circuit with kiln's parameters, and the proof passes
//! kiln's verifier and bellperson's (through the benchmark's own path: `run_cell`).

use kiln_groth16::circuits::Kind;
use kiln_peers::peer::{CellSpec, Loaded, Prover, run_cell};

#[test]
fn bellperson_cpu_proves_on_kiln_parameters() {
    if !Prover::BellpersonCpu.is_built() {
        eprintln!("skipped: a supraseal build holds no CPU prover");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kiln-peers-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for kind in [Kind::Porep, Kind::Squaring] {
        let path = dir.join(format!("{kind}-8.params"));
        kiln_peers::setup::write(kind, 8, kiln_peers::setup::KILN_BENCH_SETUP_SEED, &path).unwrap();
        let loaded = Loaded::read(Prover::BellpersonCpu, &path).unwrap();
        let cell = run_cell(&loaded, CellSpec { kind, log_size: 8, batch: 2, repeat: 1, seed: 5 }).unwrap();
        assert_eq!((cell.prover, cell.batch, cell.runs, cell.verified), (Prover::BellpersonCpu, 2, 1, true));
        assert!(cell.median_ms > 0.0);
    }
    // Parameters of another circuit are refused before any proving, naming the file.
    let porep = Loaded::read(Prover::BellpersonCpu, &dir.join("porep-8.params")).unwrap();
    let err =
        run_cell(&porep, CellSpec { kind: Kind::Squaring, log_size: 8, batch: 1, repeat: 1, seed: 1 }).unwrap_err();
    assert!(matches!(err, kiln_peers::PeerError::WrongParameters { .. }), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_prover_not_built_is_a_clear_error() {
    let missing = Prover::ALL.into_iter().find(|p| !p.is_built()).expect("no build holds all three");
    let err = Loaded::read(missing, std::path::Path::new("/nonexistent")).err().unwrap();
    assert!(matches!(err, kiln_peers::PeerError::NotBuilt { .. }), "{err}");
}
