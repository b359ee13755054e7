//! The pcap/pcapng reader must return records or an error with an offset inside the input,
//! never panic or allocate without bound, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcplab_trace::pcap::CaptureReader;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = CaptureReader::new(data) else { return };
    loop {
        match r.next_record() {
            Ok(Some(rec)) => assert!(rec.data.len() <= data.len()),
            Ok(None) => break,
            Err(e) => {
                assert!(e.offset <= data.len() as u64);
                let _ = e.to_string();
                break;
            }
        }
    }
});
