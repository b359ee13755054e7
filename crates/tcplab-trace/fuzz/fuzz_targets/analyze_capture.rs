//! Whole pipeline: arbitrary capture bytes through reader, decoder and analyzer (with graph
//! data), then the report as JSON. No panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcplab_trace::analysis::{analyze_reader, AnalyzerConfig, SeriesSink};

fuzz_target!(|data: &[u8]| {
    let mut sink = SeriesSink::default();
    if let Ok(rep) = analyze_reader(data, AnalyzerConfig::default(), &mut sink) {
        let _ = rep.to_value(Some(&sink)).to_json();
    }
});
