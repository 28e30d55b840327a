//! Compile-fail tests of `#[kernel]`: Rust that cannot run on a device is rejected at compile
//! time with an error at the offending span that says what to write instead, and the typed
//! launch API turns wrong argument types and counts into compile errors. The expected
//! messages are in `tests/ui/*.stderr` (regenerate with `TRYBUILD=overwrite`).

#[test]
fn kernel_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
