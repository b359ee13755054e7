mod common;
use common::*;
use serde_json::json;
#[test]
#[ignore]
fn dump_configs() {
    let d = Dumbbell::new(100_000_000, 100 * MS, 1000, 10 * SEC).tcp("w", "reno", 0, json!({"rcvbuf": 262144, "delayed_ack": false}));
    dump(&d, "/tmp/w.json");
}
