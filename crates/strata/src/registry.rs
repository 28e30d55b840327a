//! The device registry: which backends this build has, their devices, and devices by spec.
//!
//! [`BACKENDS`] is the one list of backends, one entry per backend (its cargo feature on or
//! off), each a [`BackendEntry`] that its backend module gives: the backend's name (the prefix
//! of its specs), how to find its devices or why it has none, and how much `best` prefers its
//! devices. Everything else here ([`devices`], [`unavailable_backends`], [`device_problems`],
//! [`Device::from_spec`]) reads the list and knows no backend by name, and the runtime below
//! knows backends only through the [`DeviceBackend`](crate::runtime::DeviceBackend) trait. A
//! new backend is a module with an entry, and a line here.
//!
//! The registry sits above the runtime and the backends (it names both), so that neither
//! needs the other.

use crate::error::{Error, Result};
use crate::runtime::{BackendEntry, BackendKind, Device};
use std::sync::OnceLock;

/// Every backend, in the order their devices are listed ([`devices`]) and their absences
/// reported ([`unavailable_backends`]).
static BACKENDS: &[BackendEntry] = &[
    crate::cpu::COMPILED,
    crate::cpu::INTERPRETER,
    #[cfg(feature = "opencl")]
    crate::opencl::BACKEND,
    #[cfg(not(feature = "opencl"))]
    BackendEntry::left_out(BackendKind::OpenCl, "opencl"),
    #[cfg(feature = "cuda")]
    crate::cuda::BACKEND,
    #[cfg(not(feature = "cuda"))]
    BackendEntry::left_out(BackendKind::Cuda, "cuda"),
    #[cfg(feature = "vulkan")]
    crate::vulkan::BACKEND,
    #[cfg(not(feature = "vulkan"))]
    BackendEntry::left_out(BackendKind::Vulkan, "vulkan"),
];

/// What the backends found, once per process.
struct Registry {
    devices: Vec<Device>,
    unavailable: Vec<(BackendKind, String)>,
    problems: Vec<(BackendKind, String)>,
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut reg = Registry {
            devices: Vec::new(),
            unavailable: Vec::new(),
            problems: Vec::new(),
        };
        for entry in BACKENDS {
            match entry.discover() {
                Ok(found) => {
                    reg.devices
                        .extend(found.devices.into_iter().map(Device::from_backend));
                    reg.problems
                        .extend(found.problems.into_iter().map(|p| (entry.kind, p)));
                }
                Err(why) => reg.unavailable.push((entry.kind, why)),
            }
        }
        reg
    })
}

/// Every device of every backend compiled in and present. The CPU backend is always there.
/// Never panics when a driver is missing: that backend is simply not listed, and
/// [`unavailable_backends`] says why.
pub fn devices() -> Vec<Device> {
    registry().devices.clone()
}

/// The backends that have no devices here, and why.
pub fn unavailable_backends() -> Vec<(BackendKind, String)> {
    registry().unavailable.clone()
}

/// Problems met while opening the devices of backends that do have devices (an OpenCL platform
/// that cannot list its devices, a device that cannot be opened): those devices are missing
/// from [`devices`], and this says why.
pub fn device_problems() -> Vec<(BackendKind, String)> {
    registry().problems.clone()
}

/// `"cuda:0".parse::<Device>()`: [`Device::from_spec`].
impl std::str::FromStr for Device {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Device> {
        Device::from_spec(spec)
    }
}

impl Device {
    /// The device named by `spec`: `cpu` (the compiled CPU backend), `interp` (the CPU
    /// interpreter), `opencl:N`, `cuda:N`, `vulkan:N`, or `best` (the first CUDA
    /// device, else the first OpenCL device that is not a CPU, else the CPU backend); any of
    /// them may end in `+checked` for the device in checked mode ([`Device::checked`]). The
    /// same as `spec.parse::<Device>()`.
    pub fn from_spec(spec: &str) -> Result<Device> {
        let spec = spec.trim();
        if let Some(plain) = spec.strip_suffix("+checked") {
            if plain.contains('+') {
                return Err(Error::InvalidDeviceSpec(spec.into()));
            }
            return match Device::from_spec(plain) {
                Ok(d) => Ok(d.checked()),
                Err(Error::InvalidDeviceSpec(_)) => Err(Error::InvalidDeviceSpec(spec.into())),
                Err(Error::DeviceNotFound { reason, .. }) => Err(Error::DeviceNotFound {
                    spec: spec.into(),
                    reason,
                }),
                Err(e) => Err(e),
            };
        }
        let all = &registry().devices;
        let entry_of = |kind: BackendKind| BACKENDS.iter().find(|e| e.kind == kind);
        if spec == "best" {
            // The first device of the lowest rank.
            let pick = all
                .iter()
                .filter_map(|d| {
                    let rank = entry_of(d.info().backend).and_then(|e| (e.best_rank)(d.info()));
                    rank.map(|r| (r, d))
                })
                .min_by_key(|(r, _)| *r)
                .map(|(_, d)| d);
            return pick.cloned().ok_or_else(|| Error::DeviceNotFound {
                spec: spec.into(),
                reason: "no device at all".into(),
            });
        }
        let (entry, index) = match spec.split_once(':') {
            None => match BACKENDS
                .iter()
                .find(|e| e.bare_spec && e.kind.name() == spec)
            {
                Some(e) => (e, 0),
                None => return Err(Error::InvalidDeviceSpec(spec.into())),
            },
            Some((b, n)) => {
                let Some(entry) = BACKENDS.iter().find(|e| e.kind.name() == b) else {
                    return Err(Error::InvalidDeviceSpec(spec.into()));
                };
                let n: usize = n
                    .parse()
                    .map_err(|_| Error::InvalidDeviceSpec(spec.into()))?;
                (entry, n)
            }
        };
        let kind = entry.kind;
        let of_kind: Vec<&Device> = all.iter().filter(|d| d.info().backend == kind).collect();
        if let Some(d) = of_kind.get(index) {
            return Ok((*d).clone());
        }
        let reason = if of_kind.is_empty() {
            match unavailable_backends().into_iter().find(|(k, _)| *k == kind) {
                Some((_, why)) => format!("the {kind} backend has no devices: {why}"),
                None => format!("the {kind} backend has no devices"),
            }
        } else {
            format!(
                "the {kind} backend has {} device(s), numbered from 0",
                of_kind.len()
            )
        };
        Err(Error::DeviceNotFound {
            spec: spec.into(),
            reason,
        })
    }
}
