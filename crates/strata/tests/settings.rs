//! Settings ([`strata::Settings`]): set on a device, shared by its clones and its checked form,
//! and given to every compilation; with every switch on, kernels still compile and compute the
//! same on every device (what the switches print goes to standard error and is not checked).

use strata::prelude::*;
use strata::settings::{CudaLoad, Dump};
use strata::Settings;

/// The tests change the settings of shared devices: one at a time.
static DEVICES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn double() -> Kernel {
    Kernel::build("settings_double", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) * 2u32));
    })
    .unwrap()
}

#[test]
fn settings_are_the_devices_and_its_clones() {
    let _one = DEVICES.lock().unwrap_or_else(|e| e.into_inner());
    let d = Device::from_spec("interp").unwrap();
    assert_eq!(d.settings(), Settings::default());
    let mut s = Settings::default();
    s.dump = Dump::parse("ir").unwrap();
    d.set_settings(s.clone());
    assert_eq!(Device::from_spec("interp").unwrap().settings(), s);
    assert_eq!(d.checked().settings(), s);
    d.set_settings(Settings::default());
    assert_eq!(d.settings(), Settings::default());
}

#[test]
fn every_switch_on_changes_no_result() {
    let _one = DEVICES.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Settings::default();
    s.dump = Dump::parse("ir,opencl,cuda").unwrap();
    s.cpu_disasm = true;
    s.cuda_load = CudaLoad::Ptx;
    for dev in strata::devices() {
        let before = dev.settings();
        dev.set_settings(s.clone());
        dev.clear_kernel_cache();
        let q = Queue::new(&dev).unwrap();
        let x = Buffer::from_slice(&q, &[1u32, 2, 3]).unwrap();
        let r = double().launch(&q, NdRange::new(3), args![&x]);
        dev.set_settings(before);
        r.unwrap_or_else(|e| panic!("{}: {e}", dev.spec()));
        assert_eq!(q.read(&x).unwrap(), vec![2, 4, 6], "{}", dev.spec());
    }
}
