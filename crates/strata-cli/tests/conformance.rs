//! Runs the whole conformance suite on every device strata finds (always at least the CPU
//! backend), and again on each in checked mode (`SPEC+checked`: correct kernels must get no
//! report), and fails listing every failing case with its message, Vulkan devices included
//! (one is required when `STRATA_REQUIRE` names `vulkan`).

use strata::Queue;
use strata_cli::conformance;

#[test]
fn case_names_are_unique_and_well_formed() {
    let cases = conformance::cases();
    assert!(cases.len() >= 70, "only {} cases", cases.len());
    let mut names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    for n in &names {
        let parts: Vec<&str> = n.split('/').collect();
        assert!(
            parts.len() == 2 && parts.iter().all(|p| !p.is_empty()),
            "case name `{n}` is not `area/feature`"
        );
    }
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "duplicate case names");
}

#[test]
fn conformance_on_every_device() {
    let filter = std::env::var("STRATA_CONFORMANCE_FILTER").ok();
    let devices = strata::devices();
    assert!(
        !devices.is_empty(),
        "no device found (the CPU backend is always present)"
    );
    let mut failures = Vec::new();
    if std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "vulkan"))
        && !devices
            .iter()
            .any(|d| d.info().backend == strata::BackendKind::Vulkan)
    {
        failures.push(format!(
            "STRATA_REQUIRE names vulkan, but no Vulkan device is listed: {:?}",
            strata::unavailable_backends()
        ));
    }
    for dev in devices.iter().flat_map(|d| [d.clone(), d.checked()]) {
        // `STRATA_DUMP=opencl cargo test --test conformance` prints what the devices compile.
        dev.set_settings(strata::Settings::from_env());
        let spec = dev.spec();
        let queue = match Queue::new(&dev) {
            Ok(q) => q,
            Err(err) => {
                failures.push(format!("{spec}: cannot create a queue: {err}"));
                continue;
            }
        };
        let start = std::time::Instant::now();
        let report = conformance::run(&queue, filter.as_deref(), |_, _| {});
        eprintln!(
            "conformance on {spec} ({}): {} in {:.1?}",
            dev.info().name,
            report.summary(),
            start.elapsed()
        );
        if report.passed.is_empty() && report.failed.is_empty() {
            failures.push(format!("{spec}: no case ran"));
        }
        for (name, msg) in &report.failed {
            failures.push(format!("{spec} {name}: {msg}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} conformance failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
