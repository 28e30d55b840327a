//! What a new user expects of a Rust library, checked: an error returned from `main` (or a
//! test) prints its message, not a variant dump; `select`'s literal arms infer their type;
//! a device says its name; `compile_on` pays a kernel's compilation before its first launch,
//! on every device present but CUDA ones.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use strata::prelude::*;
use strata::{BackendKind, Error};

/// The tests that count compilations run one at a time (a device counts them for all its
/// users).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Set in the environment of the child run of [`returns_an_error_when_asked`].
const CHILD: &str = "STRATA_CONVENTIONS_CHILD";

/// Fails when run as the child of [`an_error_returned_from_main_prints_its_message`]: a
/// test returning `Err` reports it exactly as `fn main() -> strata::Result<()>` does (the
/// standard library's `Termination` for `Result`: `Error: {err:?}`).
#[test]
fn returns_an_error_when_asked() -> strata::Result<()> {
    if std::env::var_os(CHILD).is_some() {
        Device::from_spec("gpu")?;
    }
    Ok(())
}

#[test]
fn an_error_returned_from_main_prints_its_message() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "returns_an_error_when_asked", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("Error: invalid device `gpu`: write `cpu`"),
        "the child printed:\n{text}"
    );
    assert!(!text.contains("InvalidDeviceSpec"), "{text}");
}

#[test]
fn debug_leads_with_the_message() {
    let e = Device::from_spec("opencl:99").unwrap_err();
    let debug = format!("{e:?}");
    assert!(debug.starts_with(&e.to_string()), "{debug}");
    // The alternate form adds the variant and its fields after the message.
    let full = format!("{e:#?}");
    assert!(full.starts_with(&e.to_string()), "{full}");
    assert!(full.contains("DeviceNotFound {"), "{full}");
    // A layer's error: its message, then its sources.
    let e = Error::Layer(strata::LayerError::new(Outer("disk full".into())));
    let debug = format!("{e:?}");
    assert_eq!(
        debug,
        "could not save: disk full\n\nCaused by:\n    disk full"
    );
}

/// An application's error type with a source, carried by [`Error::Layer`].
#[derive(Debug, PartialEq)]
struct Outer(String);

impl std::fmt::Display for Outer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "could not save: {}", self.0)
    }
}

impl std::error::Error for Outer {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&Source)
    }
}

#[derive(Debug)]
struct Source;

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("disk full")
    }
}

impl std::error::Error for Source {}

#[test]
fn select_infers_the_type_of_literal_arms() {
    let _one = serial();
    let k = Kernel::build("conventions_threshold", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<u8>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            // No `select::<u8>`: the arms say it.
            y.set(i, select(x.at(i).gt(0.5f32), lit(255u8), lit(0u8)));
        });
    })
    .unwrap();
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let x = Buffer::from_slice(&q, &[0.2f32, 0.7, 0.5, 0.9]).unwrap();
    let y = Buffer::<u8>::new(&q, 4).unwrap();
    k.launch(&q, NdRange::new(4), args![&x, &y]).unwrap();
    assert_eq!(q.read(&y).unwrap(), vec![0, 255, 0, 255]);
}

#[kernel]
fn conventions_double(x: &mut [u32]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] = x[i] * 2;
    }
}

#[test]
fn devices_say_their_names() {
    for d in strata::devices() {
        assert!(!d.name().is_empty(), "{}", d.spec());
        assert_eq!(d.name(), d.info().name);
    }
    let cpu = Device::from_spec("cpu").unwrap();
    assert!(cpu.name().contains("Cranelift"), "{}", cpu.name());
    let interp = Device::from_spec("interp").unwrap();
    assert!(interp.name().contains("interpreter"), "{}", interp.name());
}

#[test]
fn compile_on_compiles_before_the_first_launch() {
    let _one = serial();
    for device in strata::devices() {
        if device.info().backend == BackendKind::Cuda {
            continue;
        }
        let name = device.spec();
        let q = Queue::new(&device).unwrap();
        // A kernel of its own for each device, so no other test has compiled it.
        let k = Kernel::build(
            &format!("conventions_inc_{}", name.replace(':', "_")),
            |k| {
                let x = k.read_write::<u32>("x");
                let i = global_id(0);
                if_(i.lt(x.len()), || x.set(i, x.at(i) + 1u32));
            },
        )
        .unwrap();
        let before = device.compile_count();
        k.compile_on(&device).unwrap();
        let compiled = device.compile_count();
        assert!(compiled > before, "{name}: compile_on compiled nothing");
        k.compile_on(&q).unwrap();
        assert_eq!(device.compile_count(), compiled, "{name}: compiled twice");
        let x = Buffer::from_slice(&q, &[1u32, 2]).unwrap();
        k.launch(&q, NdRange::new(2), args![&x]).unwrap();
        assert_eq!(
            device.compile_count(),
            compiled,
            "{name}: the launch compiled"
        );
        assert_eq!(q.read(&x).unwrap(), vec![2, 3], "{name}");

        // The typed launch of a `#[kernel]` has it too.
        let double = conventions_double::build().unwrap();
        double.compile_on(&device).unwrap();
        let compiled = device.compile_count();
        double.launch(&q, NdRange::new(2), &x).unwrap();
        assert_eq!(
            device.compile_count(),
            compiled,
            "{name}: the launch compiled"
        );
        assert_eq!(q.read(&x).unwrap(), vec![4, 6], "{name}");
    }
}
