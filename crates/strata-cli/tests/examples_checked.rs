//! Every example of the library, run on every present device in checked mode: no access out of
//! bounds, no barrier divergence, and on `interp+checked` no data race and no read of memory
//! nobody wrote (checked mode must not report correct programs).

#[path = "../../strata-examples/examples/matmul.rs"]
#[allow(dead_code)]
mod matmul;
#[path = "../../strata-examples/examples/patterns.rs"]
#[allow(dead_code)]
mod patterns;
#[path = "../../strata-examples/examples/reduce.rs"]
#[allow(dead_code)]
mod reduce;
#[path = "../../strata-examples/examples/saxpy.rs"]
#[allow(dead_code)]
mod saxpy;
#[path = "../../strata-examples/examples/showcase.rs"]
#[allow(dead_code)]
mod showcase;

use strata::Device;

#[test]
fn examples_run_clean_in_checked_mode() {
    let devices: Vec<Device> = strata::devices().iter().map(Device::checked).collect();
    assert!(
        devices.iter().any(|d| d.finds_uninit_buffer_reads()),
        "interp+checked is always there"
    );
    for d in &devices {
        saxpy::saxpy_on(d);
        reduce::reductions_on(d);
        matmul::matmuls_on(d);
        showcase::showcase_on(d);
        assert!(patterns::patterns_on(d) > 2, "{}", d.spec());
    }
}
