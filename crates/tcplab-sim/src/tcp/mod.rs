//! TCP: knobs, sequence arithmetic, the receive half, the send half and their parts.

pub mod config;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod seq;
