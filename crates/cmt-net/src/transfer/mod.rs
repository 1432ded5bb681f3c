//! Moving one file over several UDP paths: the sender connects (INIT … COOKIE ACK),
//! writes the file, closes gracefully when everything is acknowledged; the receiver
//! listens, accepts one association, writes what arrives in order to a file and returns
//! when the peer has shut down. On the sending side path i pairs local address i with
//! remote address i; the accepting side pairs its addresses with the peer's (see
//! [`pair_remotes`]) and then answers each path from wherever its packets come (relays,
//! NATs). The runtime confirms paths before use (RFC 9260 §5.4) and runs CMT-PF, so a
//! path that dies mid-transfer stops getting new data after its second timeout.
//! [`serve`] runs many receiving associations at once on the same sockets, each storing
//! a file in a directory under the name its sender gives.

mod arrivals;
mod connection;
mod digest;
mod door;
mod error;
mod gate;
mod handshake;
pub mod meter;
mod options;
mod recv;
mod reorder;
mod report;
mod routes;
mod send;
pub mod serve;
mod wait;

pub use arrivals::{receiver_trace_csv, ArrivalRecord};
pub use connection::reconfig::SPARE_PATHS;
pub use error::{Ended, TransferError};
pub use options::{Exact, Options, Outputs, ReceiveOptions, SendOptions};
pub use recv::{receive, receive_on};
pub use reorder::{ReorderStats, Reordering};
pub use report::{Counters, PathCount, Report};
pub use routes::pair_remotes;
pub use send::{send, send_file, send_source, ADOPT_SLOTS};
