//! # cmt-core — the sans-IO protocol core of cmtlab
//!
//! One SCTP association carrying one ordered stream over several paths at once
//! (Concurrent Multipath Transfer). The crate never reads a clock, opens a socket or
//! draws ambient randomness: time comes in as a parameter, packets go in and out as
//! values, and randomness comes from a seed the driver passes in. The same code runs in
//! the discrete-event simulator (`cmt-sim`) and the real runtime (`cmt-net`).
//!
//! Layers, bottom up:
//!
//! * [`time`], [`tsn`] — integer-nanosecond clock types; TSN wrap-around handling.
//! * [`packet`] — typed SCTP packets and chunks (RFC 9260 §3).
//! * [`rtt`], [`view`] — per-path RTT/RTO estimation; what algorithms see of a path
//!   (the sender's own path state, built from named parts, is crate-internal).
//! * [`cc`], [`sched`], [`rtx`] — the three extension points: congestion control (one
//!   instance per path), data scheduling and retransmission-destination policies. Each
//!   folder holds a trait, one file per algorithm and one table of names
//!   ([`registry`]) that programs can add to.
//! * [`assoc`] — the association: send and receive halves, SACK processing with CMT's
//!   SFR / CUC / DAC, timers, CMT-PF.
//! * [`event`] — the observer interface every protocol event goes through.
//! * [`wire`], [`setup`], [`auth`] — what the real runtime adds around the
//!   association: the packet format, association setup and authenticated chunks
//!   (RFC 4895). The core writes no file format: captures are `cmt_sim::pcap`'s.
//! * [`fuzzing`] — what a hostile network can hand the core, with the invariants that
//!   must hold whatever it is (the fuzz targets' and `tests/fuzzing.rs`'s harnesses).
//!
//! Algorithms follow `docs/algorithms.md` of the project; doc comments cite the section.

pub mod addr_conf;
pub mod assoc;
pub mod auth;
pub mod cc;
mod chunk_pool;
pub mod config;
pub mod event;
pub mod extension_failure;
pub mod fuzzing;
pub mod packet;
pub mod params;
pub(crate) mod path;
pub mod preset;
pub mod registry;
pub mod rev;
pub mod rtt;
pub mod rtx;
pub mod sched;
pub mod setup;
pub mod time;
pub mod tsn;
pub mod tsn_window;
pub mod view;
pub mod wire;

pub use assoc::{Algorithms, AssocInit, AssocStats, Association, Closing, Transmit};
pub use config::{Compat, Config, MaxBurstMode, Recovery, Reinject, SendBuffer};
pub use event::{Event, Observer, SendKind};
pub use packet::{Chunk, Packet, Payload};
pub use params::{ParamError, ParamValue, Params};
pub use time::{Duration, Time};
pub use view::{PathId, PathState, PathView};
