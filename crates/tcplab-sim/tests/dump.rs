//! Writes the benchmark scenarios as normalized config for the `runjson` example (debug aid):
//! `cargo test -p tcplab-sim --test dump -- --ignored`.
mod common;
use common::*;
use serde_json::json;

#[test]
#[ignore]
fn dump_configs() {
    let big = json!({"rcvbuf": 256u64 << 20, "sndbuf": 256u64 << 20});
    let mut s1 =
        Dumbbell::new(100_000_000, 50 * MS, 417, 60 * SEC).tcp("f0", "cubic", 0, big.clone());
    s1.access_rate_bps = 1_000_000_000;
    dump(&s1, "/tmp/s1.json");
    let mut s2 = Dumbbell::new(1_000_000_000, 180 * MS, 64, 100 * SEC)
        .tcp("f0", "cubic", 0, big.clone())
        .tcp("f1", "cubic", 10 * MS, big.clone());
    s2.access_rate_bps = 1_000_000_000;
    dump(&s2, "/tmp/s2.json");
    let mut s3 = Dumbbell::new(100_000_000, 100 * MS, 834, 60 * SEC);
    for i in 0..8 {
        s3 = s3.tcp(&format!("f{i}"), "newreno", i * 10 * MS, big.clone());
    }
    s3.access_rate_bps = 1_000_000_000;
    dump(&s3, "/tmp/s3.json");
}
