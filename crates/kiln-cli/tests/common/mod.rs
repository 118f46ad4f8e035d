//! What the binary's test suites share: a scratch folder and the `kiln` command.
#![allow(dead_code)] // Each test binary uses its own part.

pub mod service;

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A fresh folder per test.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kiln-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn kiln() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kiln"));
    c.env_remove("RUST_LOG").env_remove("NO_COLOR").stdin(Stdio::null());
    c
}
