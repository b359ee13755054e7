//! Development binary: `tcplab-linkem CONFIG.json` runs the emulator in the current network
//! namespace and prints its report (JSON) on standard output after `stop`/EOF on standard input.
//! The kernel engine normally runs the same code in-process through `tcplab._core.linkem_serve`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: tcplab-linkem CONFIG.json");
        std::process::exit(2);
    };
    let cfg = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tcplab-linkem: {path}: {e}");
            std::process::exit(2);
        }
    };
    match tcplab_linkem::serve_json(&cfg) {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("tcplab-linkem: {e}");
            std::process::exit(1);
        }
    }
}
