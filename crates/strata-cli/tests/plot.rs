//! Benchmark charts: `strata bench --plot FILE.svg` and `strata plot`, checked by parsing the
//! SVG they write: its size follows the number of benchmarks, and every benchmark and device
//! is named in it.

use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-plot-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The SVG's width and height, and all its text, after parsing it as XML.
fn read_svg(path: &std::path::Path) -> (u32, u32, String) {
    let text = std::fs::read_to_string(path).expect("the chart was written");
    let doc = roxmltree::Document::parse(&text).expect("the chart is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let dim = |a: &str| -> u32 {
        root.attribute(a)
            .and_then(|v| v.trim_end_matches("px").parse().ok())
            .unwrap_or_else(|| panic!("no {a} on <svg>"))
    };
    let words: Vec<&str> = root
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    (dim("width"), dim("height"), words.join("\n"))
}

#[test]
fn bench_plot_writes_an_svg_bar_chart() {
    let dir = scratch("bench");
    let chart = dir.join("ratios.svg");
    let json = dir.join("results.jsonl");
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["bench", "--device", "cpu", "--size", "4096", "--reps", "1"])
        .args(["--filter", "sum", "--json", "--plot"])
        .arg(&chart)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("chart written to"), "{err}");
    std::fs::write(&json, &o.stdout).unwrap();
    let benches = strata_cli::bench::selected(Some("sum"));
    assert!(benches.len() >= 2, "{benches:?}");
    let (w, h, text) = read_svg(&chart);
    assert_eq!((w, h), (1000, (90 + 24 * benches.len() as u32).max(200)));
    for b in &benches {
        assert!(text.lines().any(|l| l == *b), "no label `{b}` in:\n{text}");
    }
    assert!(text.contains("cpu: strata time / baseline time"), "{text}");
    assert!(text.contains("vs rayon"), "{text}");

    // The same results, saved, drawn again by `strata plot`; twice over, as two devices would
    // be, each in a panel of its own.
    let again = dir.join("again.svg");
    let doubled =
        String::from_utf8_lossy(&o.stdout).replace("\"device\":\"cpu\"", "\"device\":\"cpu2\"");
    let json2 = dir.join("results2.jsonl");
    std::fs::write(&json2, doubled).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("plot")
        .args([&json, &json2])
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (w, h, text) = read_svg(&again);
    assert_eq!((w, h), (1000, 2 * (90 + 24 * benches.len() as u32)));
    assert!(text.contains("cpu: strata time"), "{text}");
    assert!(text.contains("cpu2: strata time"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plot_errors_are_clear() {
    let dir = scratch("errors");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"bench\":\"x\"}\nnot json\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("plot")
        .arg(&bad)
        .args(["-o", dir.join("c.svg").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 1: not a benchmark line"), "{err}");
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("plot")
        .arg(&empty)
        .args(["-o", dir.join("c.svg").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no benchmark results to plot"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
