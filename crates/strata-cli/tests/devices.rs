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
/// every field of its summary and each backend-specific fact as a field of its own (keys in
/// snake_case, values typed); with `--why`, one object per backend without devices.
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
        assert_eq!(v["sub_group_size"], info.sub_group_size, "{v}");
        assert_eq!(v["pitch_alignment"], info.pitch_alignment, "{v}");
        assert_eq!(v["preferred_group_size"], info.preferred_group_size, "{v}");
        assert_eq!(
            v["max_constant_buffer_size"],
            serde_json::json!(info.max_constant_buffer_size),
            "{v}"
        );
        for (k, val) in &info.extra {
            let key = strata_cli::report::snake_case(k);
            assert_eq!(
                v[key.as_str()],
                strata_cli::report::typed_value(k, val),
                "{k} in {v}"
            );
        }
        // Every key is snake_case; whole numbers are numbers.
        for (key, val) in v.as_object().unwrap() {
            assert!(
                key.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{key} in {v}"
            );
            if let Some(s) = val.as_str() {
                assert!(
                    s.trim().parse::<u64>().is_err(),
                    "{key} is a number as text in {v}"
                );
            }
        }
        if info.backend == strata::BackendKind::Cpu {
            assert!(v["threads"].is_u64(), "{v}");
        }
        if info.backend == strata::BackendKind::OpenCl {
            assert!(v["platform_version"].is_string(), "{v}");
            assert!(v["extensions"].is_array(), "{v}");
        }
    }
    for v in others {
        let backend = v["backend"].as_str().unwrap();
        assert!(["opencl", "cuda", "vulkan"].contains(&backend), "{v}");
        assert!(
            v.get("unavailable").is_some() || v.get("problem").is_some(),
            "{v}"
        );
    }
}

/// The JSON names and types of backend-specific facts.
#[test]
fn device_facts_are_snake_case_and_typed() {
    use serde_json::json;
    use strata_cli::report::{snake_case, typed_value};
    assert_eq!(snake_case("platform version"), "platform_version");
    assert_eq!(snake_case("Compute Capability"), "compute_capability");
    assert_eq!(snake_case("threads"), "threads");
    assert_eq!(typed_value("threads", "2"), json!(2));
    assert_eq!(typed_value("warp size", "32"), json!(32));
    assert_eq!(
        typed_value("max grid size", "2147483647 x 65535 x 65535"),
        json!([2147483647u64, 65535, 65535])
    );
    assert_eq!(
        typed_value("extensions", "cl_khr_fp64 cl_khr_fp16"),
        json!(["cl_khr_fp64", "cl_khr_fp16"])
    );
    assert_eq!(typed_value("compute capability", "9.0"), json!("9.0"));
    assert_eq!(typed_value("driver version", "13.0"), json!("13.0"));
    assert_eq!(typed_value("device type", "GPU"), json!("GPU"));
}
