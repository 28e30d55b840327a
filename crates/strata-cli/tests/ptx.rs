//! `strata ptx` and NVRTC, which need no GPU: the PTX disk cache serves a second process and
//! can be disabled, a missing or misnamed NVRTC is a clear error, and the differential
//! generator's kernels compile.
//!
//! NVRTC missing is a failure when `STRATA_REQUIRE` names `nvrtc` (scripts/test.sh sets it);
//! otherwise the tests that need it are skipped.

use std::path::PathBuf;
use std::process::{Command, Output};
use strata::prelude::*;
use strata::{codegen, cuda};

/// Whether NVRTC can be used; fails when it is required and cannot.
fn nvrtc_present() -> bool {
    match cuda::nvrtc_version() {
        Ok(_) => true,
        Err(why) => {
            let required = std::env::var("STRATA_REQUIRE")
                .is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"));
            assert!(!required, "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            false
        }
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn strata(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run strata")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_ptx_cache_serves_a_second_process() {
    if !nvrtc_present() {
        return;
    }
    let dir = scratch_dir("ptx-cache");
    let env = [("STRATA_CUDA_CACHE", dir.to_str().unwrap())];
    let args = ["ptx", "--arch", "80", "--filter", "int/"];
    let first = strata(&args, &env);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let first = text(&first);
    let kernels: usize = first
        .split(" kernels")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no kernel count in: {first}"));
    assert!(kernels >= 5, "{first}");
    assert!(first.contains(", 0 failed"), "{first}");
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert!(files >= 1, "nothing cached in {}", dir.display());
    // A new process compiles nothing: every kernel comes from the files.
    let second = strata(&args, &env);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let second = text(&second);
    assert!(
        second.contains(&format!(
            "{kernels} kernels, 0 compiled, {kernels} from the cache"
        )),
        "{second}"
    );
    // A damaged file is not trusted: it is compiled again and rewritten, with one warning
    // each. The damage: a truncated file, a flipped bit in the compiled code, a flipped bit
    // in the key, a foreign file.
    let mut damaged = 0;
    for (i, f) in std::fs::read_dir(&dir).unwrap().enumerate() {
        let path = f.unwrap().path();
        if path.extension().is_none_or(|e| e != "ptx") {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        match i % 4 {
            0 => bytes.truncate(n - 10),
            1 => bytes[n - 5] ^= 0x10,
            2 => bytes[20] ^= 0x01,
            _ => bytes = b"// strata PTX cache v1: garbage\n".to_vec(),
        }
        std::fs::write(&path, bytes).unwrap();
        damaged += 1;
    }
    assert!(damaged >= 5, "{damaged}");
    let again = strata(&args, &env);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let again = text(&again);
    assert!(
        again.contains(&format!(
            "{kernels} kernels, {damaged} compiled, {} from the cache",
            kernels - damaged
        )),
        "{again}"
    );
    assert_eq!(
        again
            .matches("strata: warning: the CUDA cache entry ")
            .count(),
        damaged,
        "{again}"
    );
    assert!(
        again.contains("is damaged (") && again.contains("compiling kernel `"),
        "{again}"
    );
    // The entries were rewritten whole.
    let fourth = text(&strata(&args, &env));
    assert!(
        fourth.contains(&format!(
            "{kernels} kernels, 0 compiled, {kernels} from the cache"
        )),
        "{fourth}"
    );
    assert!(!fourth.contains("warning"), "{fourth}");
    // Another architecture is another key: from the cache only what the first run at 80
    // took from it too (a kernel a case builds twice, compiled once in the process).
    let within = first
        .split(" from the cache")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .unwrap_or_else(|| panic!("no cache count in: {first}"));
    let other = text(&strata(&["ptx", "--arch", "90", "--filter", "int/"], &env));
    assert!(
        other.contains(&format!(", {within} from the cache")),
        "{other} (first run: {first})"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_ptx_cache_can_be_disabled() {
    if !nvrtc_present() {
        return;
    }
    let env = [("STRATA_CUDA_CACHE", "off")];
    for _ in 0..2 {
        let o = strata(&["ptx", "--filter", "int/i16_arith"], &env);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{t}");
        assert!(t.contains(", 0 from the cache (disabled)"), "{t}");
    }
}

#[test]
fn a_missing_nvrtc_is_a_clear_error() {
    let o = strata(&["ptx"], &[("STRATA_NVRTC", "/nonexistent/libnvrtc.so.12")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o)
            .contains("STRATA_NVRTC is set to `/nonexistent/libnvrtc.so.12`, which does not exist"),
        "{}",
        text(&o)
    );
    // A file that is not NVRTC.
    let o = strata(&["ptx"], &[("STRATA_NVRTC", "/etc/hostname")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("/etc/hostname"), "{}", text(&o));
    // And `cuda:0` without a CUDA device says why.
    if strata::devices()
        .iter()
        .all(|d| d.info().backend != strata::BackendKind::Cuda)
    {
        let msg = Device::from_spec("cuda:0").unwrap_err().to_string();
        assert!(
            msg.starts_with("no device `cuda:0`: the cuda backend has no devices: "),
            "{msg}"
        );
    }
}

/// The differential generator's kernels (100 random programs each, as `strata difftest` runs
/// them) compile with NVRTC. On the H100 (2026-11-22) 13 of 95 such kernels did not: C++'s
/// `min`/`max` return `int` for narrow integers, which no overload of the built-in helpers
/// took. Compiling them needs no GPU.
#[test]
fn difftest_kernels_compile_with_nvrtc() {
    if !nvrtc_present() {
        return;
    }
    // The first 1,200 programs of `strata difftest --seed 1` (local size 8 with that seed), as
    // the run batches them; batches 2 and 11 failed on the H100.
    let opts = strata_cli::difftest::Options {
        local_size: 8,
        ..Default::default()
    };
    let per = strata_cli::difftest::PROGRAMS_PER_KERNEL;
    let mut failures = Vec::new();
    for batch in 0..12 {
        let f = strata_cli::difftest::generate_range(1, batch * per..(batch + 1) * per, &opts);
        let k = Kernel::from_ir(f).expect("valid kernel");
        let generated = codegen::cuda(k.valid_function()).expect("CUDA source");
        let name = format!("difftest seed 1 batch {batch}");
        if let Err(e) = cuda::compile_ptx(&name, &generated, 90, &[]) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} difftest kernel(s) failed to compile:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
