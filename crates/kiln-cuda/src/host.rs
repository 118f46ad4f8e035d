//! The host's memory as Linux reports it: what page-locked buffers may take, and what a
//! process used at its peak (for reports). `None` where the OS does not say (not Linux).

/// Host memory available for new allocations now (`MemAvailable` of `/proc/meminfo`).
pub fn available_bytes() -> Option<u64> {
    proc_kib("/proc/meminfo", "MemAvailable:")
}

/// This process's peak resident set size (`VmHWM` of `/proc/self/status`).
pub fn peak_resident_bytes() -> Option<u64> {
    proc_kib("/proc/self/status", "VmHWM:")
}

/// A `<key> <n> kB` line of a /proc file, in bytes.
fn proc_kib(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_os = "linux")]
    fn linux_reports_memory_available_and_a_peak_beside_it() {
        let available = super::available_bytes().expect("Linux reports MemAvailable");
        let peak = super::peak_resident_bytes().expect("Linux reports VmHWM");
        // A test process holds at least a page and less than the whole machine.
        assert!(peak >= 4096 && available > 0, "peak {peak}, available {available}");
        let held = vec![1u8; 64 << 20];
        assert!(super::peak_resident_bytes().unwrap() >= peak.max(64 << 20), "64 MiB touched: {}", held.len());
    }
}
