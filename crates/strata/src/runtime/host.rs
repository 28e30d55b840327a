//! What the host has left of its memory, for devices whose memory is the host's
//! ([`Device::memory_budget`](super::Device::memory_budget)).

use std::path::Path;

/// Bytes the process can still allocate on the host, and where the limit comes from: the least
/// of `MemAvailable` and the headroom of every memory-limited cgroup the process is in. `None`
/// when none of them can be read (not Linux).
pub(crate) fn headroom() -> Option<(u64, String)> {
    headroom_in(Path::new("/proc"), Path::new("/sys/fs/cgroup"))
}

/// [`headroom`] with the roots of `/proc` and the cgroup file system given (for tests).
pub(crate) fn headroom_in(proc: &Path, cgroup_root: &Path) -> Option<(u64, String)> {
    let mut limits: Vec<(u64, String)> = Vec::new();
    if let Some(kib) = std::fs::read_to_string(proc.join("meminfo"))
        .ok()
        .and_then(|t| field(&t, "MemAvailable:"))
    {
        limits.push((kib * 1024, "MemAvailable".into()));
    }
    let cgroups = std::fs::read_to_string(proc.join("self/cgroup")).unwrap_or_default();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c.trim_start_matches('/')),
            _ => continue,
        };
        if controllers.is_empty() {
            // cgroup v2: every cgroup from the process's up to the root may limit it.
            let mut dir = cgroup_root.join(path);
            loop {
                if let (Some(max), Some(current)) = (
                    number(&dir.join("memory.max")),
                    number(&dir.join("memory.current")),
                ) {
                    limits.push((
                        max.saturating_sub(current),
                        format!(
                            "cgroup {}: memory.max {max}, memory.current {current}",
                            dir.display()
                        ),
                    ));
                }
                if dir == cgroup_root || !dir.pop() || !dir.starts_with(cgroup_root) {
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            // cgroup v1: the memory controller's hierarchy.
            let dir = cgroup_root.join("memory").join(path);
            if let (Some(max), Some(used)) = (
                number(&dir.join("memory.limit_in_bytes")),
                number(&dir.join("memory.usage_in_bytes")),
            ) {
                // "No limit" is a huge number (about 2^63, rounded to pages).
                if max < 1 << 62 {
                    limits.push((
                        max.saturating_sub(used),
                        format!(
                            "cgroup {}: memory.limit_in_bytes {max}, usage {used}",
                            dir.display()
                        ),
                    ));
                }
            }
        }
    }
    limits.into_iter().min_by_key(|(b, _)| *b)
}

/// The number after `name` in `/proc/meminfo` text.
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// A file holding one number; `None` for `max` (no limit), a missing file or anything else.
fn number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::headroom_in;
    use std::fs;

    #[test]
    fn the_least_of_memavailable_and_every_cgroup_limit() {
        let root = std::env::temp_dir().join(format!("strata-host-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let (proc, cg) = (root.join("proc"), root.join("cgroup"));
        fs::create_dir_all(proc.join("self")).unwrap();
        fs::write(
            proc.join("meminfo"),
            "MemTotal:       32000000 kB\nMemAvailable:   20000000 kB\n",
        )
        .unwrap();
        // v2: the process's cgroup has no limit, its parent 3 GiB of which 1 GiB is used.
        fs::write(proc.join("self/cgroup"), "0::/a/b\n").unwrap();
        fs::create_dir_all(cg.join("a/b")).unwrap();
        fs::write(cg.join("a/b/memory.max"), "max\n").unwrap();
        fs::write(cg.join("a/b/memory.current"), "5\n").unwrap();
        fs::write(cg.join("a/memory.max"), format!("{}\n", 3u64 << 30)).unwrap();
        fs::write(cg.join("a/memory.current"), format!("{}\n", 1u64 << 30)).unwrap();
        let (left, what) = headroom_in(&proc, &cg).unwrap();
        assert_eq!(left, 2 << 30);
        assert!(what.contains("memory.max 3221225472"), "{what}");
        // Without the limit, MemAvailable.
        fs::write(cg.join("a/memory.max"), "max\n").unwrap();
        assert_eq!(
            headroom_in(&proc, &cg).unwrap(),
            (20000000 * 1024, "MemAvailable".to_string())
        );
        // v1: the memory controller's limit.
        fs::write(proc.join("self/cgroup"), "4:memory:/job\n3:cpu:/job\n").unwrap();
        fs::create_dir_all(cg.join("memory/job")).unwrap();
        fs::write(cg.join("memory/job/memory.limit_in_bytes"), "1000000\n").unwrap();
        fs::write(cg.join("memory/job/memory.usage_in_bytes"), "400000\n").unwrap();
        assert_eq!(headroom_in(&proc, &cg).unwrap().0, 600000);
        let _ = fs::remove_dir_all(&root);
    }
}
