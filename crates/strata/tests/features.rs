//! The cargo features `opencl`, `cuda` and `vulkan`: with all (the default), the backends are there (or
//! explained by their drivers); without one, its devices are absent, and asking for one says
//! which feature to turn on. The CPU backend runs kernels in every configuration. The test
//! script runs this file with `--no-default-features` too.

use strata::prelude::*;
use strata::{BackendKind, Error};

/// The reason strata gives for `kind` having no devices, if it has none.
fn why_not(kind: BackendKind) -> Option<String> {
    strata::unavailable_backends()
        .into_iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, why)| why)
}

#[test]
fn left_out_backends_name_their_feature() {
    for (kind, on) in [
        (BackendKind::OpenCl, cfg!(feature = "opencl")),
        (BackendKind::Cuda, cfg!(feature = "cuda")),
        (BackendKind::Vulkan, cfg!(feature = "vulkan")),
    ] {
        let feature = kind.name();
        let spec = format!("{feature}:0");
        let has_devices = strata::devices().iter().any(|d| d.info().backend == kind);
        if on {
            // Compiled in: listed, or explained by something other than the feature.
            assert!(
                has_devices || !why_not(kind).unwrap().contains("feature"),
                "{:?}",
                why_not(kind)
            );
            continue;
        }
        assert!(!has_devices);
        let err = Device::from_spec(&spec).unwrap_err();
        assert!(matches!(err, Error::DeviceNotFound { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "no device `{spec}`: the {feature} backend has no devices: strata was built \
                 without its `{feature}` feature (enable it in Cargo.toml: strata = {{ \
                 features = [\"{feature}\"] }})"
            )
        );
    }
}

#[test]
fn the_cpu_backend_runs_in_every_configuration() {
    let device = Device::from_spec("best").unwrap();
    if !cfg!(feature = "opencl") && !cfg!(feature = "cuda") {
        assert_eq!(device.info().backend, BackendKind::Cpu);
    }
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let k = Kernel::build("twice", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) * 2.0f32));
    })
    .unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32, 2.5, -3.0]).unwrap();
    k.launch(&q, NdRange::new(3), args![&x]).unwrap();
    assert_eq!(q.read(&x).unwrap(), vec![2.0, 5.0, -6.0]);
}
