//! `strata devices`: the summaries of every device (as text and as JSON lines), and the reasons
//! a backend has no device (`--why`).
//!
//! When `STRATA_REQUIRE` names `opencl` (scripts/test.sh does), having no OpenCL device is a
//! failure, with the reason strata gives.

use std::process::Command;
use strata::{BackendKind, Device};

fn required(kind: BackendKind) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == kind.name()))
}

/// Every OpenCL device; with none, fails when OpenCL is required.
fn opencl_devices() -> Vec<Device> {
    let devs: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::OpenCl)
        .collect();
    assert!(
        !devs.is_empty() || !required(BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but no OpenCL device is listed: {:?}",
        strata::unavailable_backends()
    );
    devs
}

fn strata_devices(env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args(["devices", "--why"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run strata");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn strata_devices_why_lists_or_explains_opencl() {
    let devs = opencl_devices();
    let text = strata_devices(&[]);
    if devs.is_empty() {
        assert!(text.contains("\n  opencl: "), "{text}");
    } else {
        // The child numbers its devices itself: compare names. A platform may be missing from
        // the child as a whole, never part of one: NVIDIA's OpenCL platform was invisible to a
        // second process while this one held it open (H100, driver 580, 2026-11-22).
        let platform = |d: &Device| {
            d.info()
                .extra
                .iter()
                .find(|(k, _)| k == "platform")
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let listed = |d: &Device| {
            let tail = format!(": {} ({})", d.info().name, d.info().vendor);
            text.lines()
                .any(|l| l.starts_with("opencl:") && l.ends_with(&tail))
        };
        let mut seen_platforms = 0;
        for d in &devs {
            let p = platform(d);
            let in_child = text.contains(&format!("  platform              {p}\n"));
            assert!(
                listed(d) || !in_child,
                "`{}` of platform `{p}` is missing from:\n{text}",
                d.info().name
            );
            seen_platforms += usize::from(in_child);
        }
        if seen_platforms == 0 {
            // Every platform this process uses was invisible to the child (with
            // STRATA_OPENCL_PLATFORM naming one, nothing is left): OpenCL is explained.
            assert!(text.contains("\n  opencl: "), "{text}");
        } else {
            assert!(text.contains("  platform              "), "{text}");
            assert!(text.contains("  device type           "), "{text}");
            assert!(!text.contains("\n  opencl: "), "{text}");
        }
    }
    // With an ICD loader that finds no driver, OpenCL is explained, not listed.
    if required(BackendKind::OpenCl) {
        let empty = std::env::temp_dir().join("strata-no-icds");
        std::fs::create_dir_all(&empty).unwrap();
        let text = strata_devices(&[("OCL_ICD_VENDORS", empty.to_str().unwrap())]);
        assert!(!text.contains("opencl:0"), "{text}");
        let line = text
            .lines()
            .find(|l| l.starts_with("  opencl: "))
            .unwrap_or_else(|| panic!("OpenCL is not explained in:\n{text}"));
        assert!(line.contains("no platform"), "{line}");
        assert!(line.contains("pocl-opencl-icd"), "{line}");
        // A platform filter that matches nothing names the variable and the platforms.
        let text = strata_devices(&[("STRATA_OPENCL_PLATFORM", "no-such-platform")]);
        assert!(!text.contains("\nopencl:0"), "{text}");
        let line = text
            .lines()
            .find(|l| l.starts_with("  opencl: "))
            .unwrap_or_else(|| panic!("OpenCL is not explained in:\n{text}"));
        assert!(
            line.contains("STRATA_OPENCL_PLATFORM=`no-such-platform`"),
            "{line}"
        );
    }
}

/// `strata devices --json`: one object per device, in the order of [`strata::devices`], with
/// every field of its summary and each backend-specific fact as a field of its own; with
/// `--why`, one object per backend without devices.
#[test]
fn devices_json_has_every_field() {
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["devices", "--json", "--why"])
        .output()
        .expect("run strata");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (devices, others): (Vec<_>, Vec<_>) = objects.iter().partition(|v| v.get("spec").is_some());
    let here = strata::devices();
    // The child process may miss a platform this one holds (see above): compare by spec only
    // the devices it lists.
    assert!(!devices.is_empty() && devices.len() <= here.len(), "{text}");
    for v in &devices {
        let spec = v["spec"].as_str().unwrap();
        let d = Device::from_spec(spec).unwrap();
        let info = d.info();
        assert_eq!(v["backend"], info.backend.name(), "{v}");
        assert_eq!(v["compute_units"], info.compute_units, "{v}");
        assert_eq!(v["max_work_group_size"], info.max_work_group_size, "{v}");
        assert_eq!(
            v["max_work_item_sizes"],
            serde_json::json!(info.max_work_item_sizes),
            "{v}"
        );
        assert_eq!(v["global_mem_size"], info.global_mem_size, "{v}");
        assert_eq!(v["supports_f64"], info.supports_f64, "{v}");
        assert_eq!(v["supports_f16"], info.supports_f16, "{v}");
        for (k, val) in &info.extra {
            assert_eq!(v[k.as_str()], val.as_str(), "{k} in {v}");
        }
    }
    for v in others {
        let backend = v["backend"].as_str().unwrap();
        assert!(["opencl", "cuda"].contains(&backend), "{v}");
        assert!(
            v.get("unavailable").is_some() || v.get("problem").is_some(),
            "{v}"
        );
    }
}
