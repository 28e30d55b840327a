//! The MPI layer's typed errors that need no running job (feature `mpi`): MPI not initialized,
//! and row splits that cannot be made. The checks across ranks run under `mpirun` in
//! `crates/strata-examples/examples/mpi_check.rs` (scripts/test.sh runs it with 2 and 4 ranks).

use strata::multi::mpi::{Comm, MpiError, RowSplit};

#[test]
fn mpi_not_initialized_is_a_typed_error() {
    let e = Comm::world().unwrap_err();
    assert!(
        matches!(e.layer(), Some(MpiError { op: "world", .. })),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("MPI is not initialized; call strata::multi::mpi::init() first"),
        "{e}"
    );
}

#[test]
fn row_splits() {
    // even: every rank the same rows
    let s = RowSplit::of(2, 4, 100, true).unwrap();
    assert_eq!((s.first, s.rows, s.total), (50, 25, 100));
    // uneven: the first ranks one row more, rows in rank order without gaps
    let parts: Vec<RowSplit> = (0..3)
        .map(|r| RowSplit::of(r, 3, 100, false).unwrap())
        .collect();
    assert_eq!(
        parts.iter().map(|s| (s.first, s.rows)).collect::<Vec<_>>(),
        [(0, 34), (34, 33), (67, 33)]
    );
    let e = RowSplit::of(0, 3, 100, true).unwrap_err();
    assert!(
        matches!(e.layer(), Some(MpiError { op: "split", .. })),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("3 ranks do not divide 100 rows; run with a rank count that divides it (e.g. 1, 2, 4, 5)"),
        "{e}"
    );
    let e = RowSplit::of(0, 8, 5, false).unwrap_err();
    assert!(
        e.to_string()
            .contains("5 rows cannot be split over 8 ranks"),
        "{e}"
    );
}
