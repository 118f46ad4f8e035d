//! Output paths (issue 15, items 3 and 7): kiln writes only to a new path or a regular file,
//! never over one of its inputs, with a short temporary name, and cleans up after killed
//! writers.
#![cfg(unix)]

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use kiln_groth16::WriteError;
use kiln_groth16::atomic::{AtomicFile, write_atomic};

/// A fresh folder per test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kiln-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Names in the folder, sorted.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, inputs: &[&Path], bytes: &[u8]) -> Result<(), WriteError> {
    write_atomic(path, inputs, |w| w.write_all(bytes))
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn expect_not_regular(result: Result<(), WriteError>, expected: &str) {
    match result {
        Err(WriteError::NotRegular { what, .. }) => assert_eq!(what, expected),
        other => panic!("expected NotRegular ({expected}), got {other:?}"),
    }
}

/// `--out /dev/null` would have replaced the system's `/dev/null` when run as root (and
/// failed with a permission error otherwise).
#[test]
fn a_device_node_is_refused() {
    expect_not_regular(write(Path::new("/dev/null"), &[], b"proof"), "a character device");
    assert!(std::fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
}

/// A FIFO became a regular file.
#[test]
fn a_fifo_is_refused_and_stays_a_fifo() {
    let dir = Scratch::new("fifo");
    let fifo = dir.path("out.fifo");
    mkfifo(&fifo);
    expect_not_regular(write(&fifo, &[], b"proof"), "a FIFO or pipe");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(dir.names(), ["out.fifo"], "temporary file left behind");
}

/// A symlink to a device became a regular file.
#[test]
fn a_symlink_to_a_device_or_to_nothing_is_refused_and_stays_a_symlink() {
    let dir = Scratch::new("symlink-dev");
    let link = dir.path("out");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    expect_not_regular(write(&link, &[], b"proof"), "a symlink to a character device");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let dangling = dir.path("dangling");
    std::os::unix::fs::symlink(dir.path("nowhere"), &dangling).unwrap();
    expect_not_regular(write(&dangling, &[], b"proof"), "a symlink to a path that does not exist");
    assert!(!dir.path("nowhere").exists());
}

/// A symlink to a regular file: the file is replaced, the link stays.
#[test]
fn a_symlink_to_a_regular_file_writes_the_file() {
    let dir = Scratch::new("symlink-file");
    let file = dir.path("real.proof");
    std::fs::write(&file, b"old").unwrap();
    let link = dir.path("out.proof");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    write(&link, &[], b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&file).unwrap(), b"new");
    assert_eq!(dir.names(), ["out.proof", "real.proof"]);
}

/// `--out .` said "Device or resource busy".
#[test]
fn a_directory_is_refused() {
    let dir = Scratch::new("dir");
    expect_not_regular(write(&dir.0, &[], b"proof"), "a directory");
    expect_not_regular(write(Path::new("."), &[], b"proof"), "a directory");
    assert!(dir.names().is_empty());
}

/// `--out` equal to `--params` replaced the parameters with a proof; also through a hard
/// link or a symlink.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = Scratch::new("same");
    let input = dir.path("in.params");
    std::fs::write(&input, b"parameters").unwrap();
    let hard = dir.path("hard");
    std::fs::hard_link(&input, &hard).unwrap();
    let soft = dir.path("soft");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    for out in [&input, &hard, &soft] {
        match write(out, &[&input], b"proof") {
            Err(WriteError::SameAsInput { path, input: i }) => assert_eq!((&path, &i), (out, &input)),
            other => panic!("{}: expected SameAsInput, got {other:?}", out.display()),
        }
        // Also when the input is named through the link and the output directly.
        assert!(matches!(write(&input, &[out], b"proof"), Err(WriteError::SameAsInput { .. })));
    }
    assert_eq!(std::fs::read(&input).unwrap(), b"parameters");
    // Another file is fine, and a missing input does not stop the write.
    write(&dir.path("other"), &[&input, &dir.path("missing")], b"proof").unwrap();
}

/// A 246-255-byte output name failed: the temporary name added `.tmp-<pid>` to it.
#[test]
fn the_longest_file_name_can_be_written() {
    let dir = Scratch::new("long");
    let name = "p".repeat(255);
    write(&dir.path(&name), &[], b"proof").unwrap();
    assert_eq!(dir.names(), [name]);
}

/// A writer killed mid-write left a full-size temporary file; the next write into the folder
/// removes those of processes that are gone, and leaves those of live ones.
#[cfg(target_os = "linux")]
#[test]
fn temporary_files_of_dead_writers_are_removed() {
    let dir = Scratch::new("stale");
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let mut live = std::process::Command::new("sleep").arg("600").spawn().unwrap();
    let stale = format!(".kiln-{gone_pid}-0.tmp");
    let running = format!(".kiln-{}-0.tmp", live.id());
    for name in [&stale, &running, &".kiln-notes.txt".to_string()] {
        std::fs::write(dir.path(name), b"partial").unwrap();
    }
    write(&dir.path("out.proof"), &[], b"proof").unwrap();
    let names = dir.names();
    live.kill().unwrap();
    live.wait().unwrap();
    assert!(!names.contains(&stale), "stale temporary file kept: {names:?}");
    assert!(names.contains(&running), "live writer's temporary file removed: {names:?}");
    assert!(names.contains(&".kiln-notes.txt".to_string()), "unrelated file removed: {names:?}");
}

/// A streamed write: the output appears only at commit; a dropped writer leaves nothing.
#[test]
fn an_uncommitted_output_never_appears() {
    let dir = Scratch::new("stream");
    let out = dir.path("out.proof");
    std::fs::write(&out, b"previous").unwrap();
    let mut f = AtomicFile::create(&out, &[]).unwrap();
    f.write_bytes(b"first half").unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    drop(f);
    assert_eq!(dir.names(), ["out.proof"]);
    let mut f = AtomicFile::create(&out, &[]).unwrap();
    f.write_bytes(b"whole").unwrap();
    f.commit().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"whole");
    assert_eq!(dir.names(), ["out.proof"]);
}

/// Errors name the output and the operation: a missing folder said only "No such file or
/// directory (os error 2)".
#[test]
fn io_errors_name_the_output_and_the_operation() {
    let dir = Scratch::new("missing-dir");
    let out = dir.path("no/such/folder/out.proof");
    let err = write(&out, &[], b"proof").unwrap_err();
    assert!(matches!(err, WriteError::Io { op: "create a temporary file in its folder", .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&*out.to_string_lossy()) && msg.contains("temporary file"), "{msg}");
}
