//! Prints the analysis of a capture as JSON: `cargo run --example analyze -- FILE [--tsg]`.

use tcplab_trace::analysis::{analyze_path, AnalyzerConfig, SeriesSink};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: analyze CAPTURE [--tsg]");
        std::process::exit(2);
    };
    let tsg = args.iter().any(|a| a == "--tsg");
    let mut sink = SeriesSink::default();
    match analyze_path(
        std::path::Path::new(path),
        AnalyzerConfig::default(),
        &mut sink,
    ) {
        Ok(rep) => println!("{}", rep.to_value(tsg.then_some(&sink)).to_json()),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    }
}
