//! Atomic file writes: a reader never sees a half-written proof or parameter file, and an
//! output path never replaces something that is not a regular file.
//!
//! The output is written to a temporary file in the same folder (`.kiln-<pid>-<n>.tmp`: short,
//! so that any output name the file system allows still leaves room for it), fsynced and
//! renamed over the output. Before anything is created the output path is checked:
//!
//! - a new path, or a regular file: written;
//! - a symlink to a regular file: the file it points to is replaced (the link stays a link);
//! - anything else (a directory, a device node such as `/dev/null`, a FIFO, a socket, a
//!   symlink to one of those or to nothing): [`WriteError::NotRegular`]; renaming over it
//!   would turn it into a regular file;
//! - the same file as one of the inputs (same device and inode, so also through hard and
//!   symbolic links): [`WriteError::SameAsInput`].
//!
//! A process killed mid-write leaves its temporary file behind; the next write into that
//! folder removes temporary files whose process is gone (Linux: no `/proc/<pid>`). That test
//! sees only this machine's processes in this PID namespace: folders shared with writers on
//! other machines or in other containers should not be written concurrently from both.

use std::fs::{File, FileType, Metadata};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::WriteError;

/// Prefix and suffix of temporary file names; [`stale_owner`] parses them back.
const TMP_PREFIX: &str = ".kiln-";
const TMP_SUFFIX: &str = ".tmp";

/// Distinguishes temporary files of concurrent writes into one folder from one process.
static NEXT_TMP: AtomicU64 = AtomicU64::new(0);

/// An output file being written: bytes go to a temporary file that [`AtomicFile::commit`]
/// renames over the output. Dropped without `commit` (an error, a panic), it removes the
/// temporary file and the output is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    /// The output path as given (named in errors).
    path: PathBuf,
    /// What the rename replaces: `path`, or the regular file a symlink at `path` points to.
    target: PathBuf,
    tmp: PathBuf,
    /// `None` once committed.
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Checks the output path (see the module documentation: a new path or a regular file,
    /// not one of `inputs`), removes stale temporary files in its folder and creates the
    /// temporary file. Call it before the expensive work, so that a bad output path is
    /// reported at once.
    pub fn create(path: &Path, inputs: &[&Path]) -> Result<Self, WriteError> {
        let target = resolve_output(path)?;
        refuse_inputs(path, &target, inputs)?;
        if target.file_name().is_none() {
            return Err(io_error(path, "name", std::io::Error::other("the path does not end in a file name")));
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        remove_stale_temporaries(&dir);
        // The temporary name does not grow with the output's name: a 255-byte name is valid.
        let tmp = dir.join(format!(
            "{TMP_PREFIX}{}-{}{TMP_SUFFIX}",
            std::process::id(),
            NEXT_TMP.fetch_add(1, Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| io_error(path, "create a temporary file in its folder", e))?;
        Ok(AtomicFile { path: path.to_path_buf(), target, tmp, writer: Some(BufWriter::with_capacity(1 << 20, file)) })
    }

    /// Appends `bytes`; the error names the output path.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.write_all(bytes).map_err(|e| io_error(&self.path, "write", e))
    }

    /// Flushes, fsyncs and renames the temporary file over the output.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let path = self.path.clone();
        let Some(writer) = self.writer.take() else { return Ok(()) };
        let file = writer.into_inner().map_err(|e| io_error(&path, "write", e.into_error()))?;
        file.sync_all().map_err(|e| io_error(&path, "sync to disk", e))?;
        drop(file);
        // On an error here and above, Drop removes the temporary file.
        std::fs::rename(&self.tmp, &self.target)
            .map_err(|e| io_error(&path, "rename the temporary file onto it", e))?;
        // Make the rename itself durable where the platform allows it.
        if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        // Renamed: nothing for Drop to remove.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.writer.as_mut() {
            Some(w) => w.write(buf),
            None => Err(std::io::Error::other("output already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.writer.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.writer = None;
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `path` atomically by calling `fill` on an [`AtomicFile`]; refuses outputs that are
/// not a new path or a regular file, or that are one of `inputs`. On any error the temporary
/// file is removed and `path` is untouched.
pub fn write_atomic<F>(path: &Path, inputs: &[&Path], fill: F) -> Result<(), WriteError>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let mut file = AtomicFile::create(path, inputs)?;
    fill(&mut file).map_err(|e| io_error(path, "write", e))?;
    file.commit()
}

fn io_error(path: &Path, op: &'static str, source: std::io::Error) -> WriteError {
    WriteError::Io { path: path.to_path_buf(), op, source }
}

/// A phrase for a file type that is not a regular file, for error messages.
pub(crate) fn file_kind(ft: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO or pipe";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symlink"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The file a write to `path` replaces, or why it must not be written.
fn resolve_output(path: &Path) -> Result<PathBuf, WriteError> {
    let not_regular = |what: String| WriteError::NotRegular { path: path.to_path_buf(), what };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(io_error(path, "inspect it", e)),
    };
    if meta.is_file() {
        return Ok(path.to_path_buf());
    }
    if !meta.file_type().is_symlink() {
        return Err(not_regular(file_kind(&meta.file_type()).to_string()));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => std::fs::canonicalize(path).map_err(|e| io_error(path, "resolve the symlink", e)),
        Ok(m) => Err(not_regular(format!("a symlink to {}", file_kind(&m.file_type())))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(not_regular("a symlink to a path that does not exist".to_string()))
        }
        Err(e) => Err(io_error(path, "resolve the symlink", e)),
    }
}

/// Refuses an existing output `target` that is the same file as one of `inputs`. Inputs
/// that cannot be inspected are skipped: reading them reports that.
fn refuse_inputs(path: &Path, target: &Path, inputs: &[&Path]) -> Result<(), WriteError> {
    let Ok(out) = std::fs::metadata(target) else { return Ok(()) };
    for input in inputs {
        if let Ok(inp) = std::fs::metadata(input)
            && same_file(&out, &inp, target, input)
        {
            return Err(WriteError::SameAsInput { path: path.to_path_buf(), input: input.to_path_buf() });
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata, _: &Path, _: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata, a: &Path, b: &Path) -> bool {
    // No inode numbers in std here: compare the resolved paths (misses hard links).
    matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The process id in a temporary file name of this module, when it is not this process's.
fn stale_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TMP_PREFIX)?.strip_suffix(TMP_SUFFIX)?;
    let (pid, seq) = rest.split_once('-')?;
    if pid.is_empty() || seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    (pid != std::process::id()).then_some(pid)
}

/// Whether process `pid` is alive; `true` when that cannot be told, so nothing is removed.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new("/proc").join(pid.to_string()).exists() } else { true }
}

/// Removes temporary files left in `dir` by processes that are gone (killed mid-write).
/// Best effort: a failure here must not stop the write.
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(stale_owner) else { continue };
        // Only regular files: a directory or FIFO with a look-alike name is not ours.
        if entry.file_type().is_ok_and(|t| t.is_file()) && !process_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("kiln-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        let err = write_atomic(&path, &[], |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("boom"))
        });
        assert!(matches!(err, Err(WriteError::Io { op: "write", .. })), "{err:?}");
        assert!(!path.exists(), "target written despite the error");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "temporary file left behind");
        // Dropped without commit: nothing either.
        let mut f = AtomicFile::create(&path, &[]).unwrap();
        f.write_bytes(b"dropped").unwrap();
        drop(f);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "temporary file left behind by drop");
        write_atomic(&path, &[], |w| w.write_all(b"whole")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temporary_names_parse_back() {
        assert_eq!(stale_owner(".kiln-12-0.tmp"), Some(12));
        assert_eq!(stale_owner(&format!(".kiln-{}-3.tmp", std::process::id())), None, "own files are live");
        for other in
            [".kiln-12.tmp", ".kiln--1.tmp", ".kiln-x-1.tmp", "kiln-12-0.tmp", ".kiln-12-0.tmpx", ".kiln-12-1x.tmp"]
        {
            assert_eq!(stale_owner(other), None, "{other}");
        }
    }
}
