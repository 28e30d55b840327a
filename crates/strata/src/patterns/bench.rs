//! Pattern benchmarks (filled in below).
