//! The launch ABI in the IR ([`strata::ir::abi`]): the builder and checked mode list every
//! hidden parameter of a kernel with its role, the validator checks the list, and the
//! fingerprint covers it.

use strata::builder::{self, global_id};
use strata::ir::{
    self, Function, GatherOp, HiddenParam, HiddenRole, Literal, ParamId, Scalar, ShapePart,
};

/// Parameter `n`.
fn p(n: usize) -> ParamId {
    ParamId::new(n)
}

/// A kernel with a 3-D buffer whose extent it reads, a launch-sized local array, a
/// built-in and a custom gather.
fn recorded() -> Function {
    builder::record("abi", |k| {
        let vol = k.read3::<f32>("vol");
        let tile = k.local_array_dyn::<f32>("tile");
        let n = k.scalar::<u32>("n");
        let i = global_id(0);
        tile.set(0u32, vol.at3(i, i, i));
        let e = vol.extent();
        k.gather_add(e.x() + n);
        k.gather_with(i, 1u32, |a, b| a * b);
    })
    .unwrap()
}

#[test]
fn the_builder_lists_every_hidden_parameter_with_its_role() {
    let f = recorded();
    let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "vol",
            "vol_pitch",
            "vol_slice_pitch",
            "tile_len",
            "n",
            "vol_width",
            "vol_height",
            "vol_depth",
            "gather0",
            "gather1"
        ]
    );
    let user: Vec<ParamId> = f.user_params().collect();
    assert_eq!(user, [p(0), p(3), p(4)]);
    assert_eq!(f.buffer_dims(p(0)), Some(3));
    assert_eq!(f.buffer_dims(p(8)), None);
    assert_eq!(f.shape_param(p(0), ShapePart::SlicePitch), Some(p(2)));
    assert_eq!(f.shape_param(p(0), ShapePart::Extent(2)), Some(p(7)));
    let gathers = f.gathers();
    assert_eq!(gathers.len(), 2);
    assert_eq!((gathers[0].0, gathers[0].1.op), (p(8), GatherOp::Add));
    assert_eq!(gathers[0].1.identity, Literal::from_bits(Scalar::U32, 0));
    let custom = gathers[1].1;
    assert_eq!((gathers[1].0, custom.op), (p(9), GatherOp::Custom));
    assert_eq!(custom.identity_bytes(), 1u32.to_le_bytes());
    let combine = custom.combine.as_ref().expect("the combining function");
    assert_eq!(combine.name, "abi_gather1_combine");
    assert!(!f.is_checked());
    assert!(ir::validate(f).is_ok());
}

#[test]
fn checked_mode_adds_its_fault_words_and_local_lengths() {
    let f = recorded();
    let ins = ir::checked::instrument(&f).function;
    assert!(ins.is_checked());
    assert_eq!(ins.params.len(), f.params.len() + 2);
    assert!(matches!(
        ins.hidden_role(p(10)),
        Some(HiddenRole::FaultWords)
    ));
    assert!(matches!(
        ins.hidden_role(p(11)),
        Some(HiddenRole::LocalLen { len_param }) if *len_param == p(3)
    ));
    assert_eq!(ins.user_params().collect::<Vec<_>>(), [p(0), p(3), p(4)]);
    assert!(ir::validate(ins).is_ok());
}

#[test]
fn the_fingerprint_covers_the_hidden_parameters() {
    let f = recorded();
    let mut g = f.clone();
    g.hidden.pop();
    assert_ne!(f.fingerprint(), g.fingerprint());
    assert_eq!(f.fingerprint(), recorded().fingerprint());
}

#[test]
fn the_validator_checks_the_hidden_parameters() {
    let mut f = recorded();
    f.hidden.push(HiddenParam {
        param: p(4),
        role: HiddenRole::LocalLen { len_param: p(0) },
    });
    let e = ir::validate(f).unwrap_err().to_string();
    assert!(
        e.contains("hidden parameter 7 (parameter 4): repeats parameter 0, which is not a local-length parameter"),
        "{e}"
    );
}
