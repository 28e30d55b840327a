//! `vulkan:0` for the examples' tests: the device where strata lists one; without one, `None`,
//! or a failure when `STRATA_REQUIRE` names `vulkan` (as `scripts/test.sh` sets it).

use strata::Device;

/// `vulkan:0`, if listed (see the module docs).
pub fn vulkan0() -> Option<Device> {
    match Device::from_spec("vulkan:0") {
        Ok(d) => Some(d),
        Err(e) => {
            let required = std::env::var("STRATA_REQUIRE")
                .is_ok_and(|v| v.split(',').any(|b| b.trim() == "vulkan"));
            assert!(!required, "STRATA_REQUIRE names vulkan, but: {e}");
            None
        }
    }
}
