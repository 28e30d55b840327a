// `#[derive(Element)]` rejects what a kernel cannot lay out as Rust does.

#[derive(Clone, Copy, strata::Element)]
struct NotReprC {
    a: f32,
}

#[derive(Clone, Copy, strata::Element)]
#[repr(C, packed)]
struct Packed {
    a: u8,
    b: u32,
}

#[derive(Clone, Copy, strata::Element)]
#[repr(C)]
struct Generic<T> {
    a: T,
}

#[derive(Clone, Copy, strata::Element)]
#[repr(C)]
struct WithRef {
    a: &'static f32,
}

#[derive(Clone, Copy, strata::Element)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

fn main() {}
