//! The cuBLAS loader behind the SGEMM baseline of `strata bench`.

use strata_cli::bench::cublas::{cublas_path, cublas_version};

/// cuBLAS, the SGEMM baseline on CUDA devices, loads through strata's own function table where
/// it is installed (the CUDA toolkit, or the `nvidia-cublas-cu12` wheel); elsewhere the reason
/// names what to install. It needs no GPU to load.
#[test]
fn cublas_loads_or_says_why() {
    match (cublas_path(), cublas_version()) {
        (Ok(path), Ok((major, minor, patch))) => {
            assert!(
                major >= 12,
                "cuBLAS {major}.{minor}.{patch} at {}",
                path.display()
            );
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("libcublas.so"), "{name}");
            eprintln!("cuBLAS {major}.{minor}.{patch} from {}", path.display());
        }
        (Err(why), Err(again)) => {
            assert_eq!(why, again);
            assert!(
                why.contains("cuBLAS") && why.contains("STRATA_CUBLAS"),
                "{why}"
            );
            eprintln!("no cuBLAS (strata bench would compare SGEMM with CUDA C): {why}");
        }
        other => panic!("the path and the version disagree: {other:?}"),
    }
}
