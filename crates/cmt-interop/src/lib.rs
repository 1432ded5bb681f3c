//! Interoperability harness: cmtlab's runtime (`cmt-net`) against SCTP stacks not
//! written here.
//!
//! * `usrsctp` (module and feature): the userland SCTP stack of the major browsers,
//!   multihoming and CMT included, over RFC 6951 UDP encapsulation. The tests are
//!   `tests/usrsctp.rs`: `cargo test -p cmt-interop --features usrsctp` (needs cmake
//!   and libclang to build usrsctp; .ci/run installs them).
//! * [`netns`]: private network namespaces joined by veth pairs, so that a multihomed
//!   peer has real addresses of its own; [`harness`] runs the test binaries that live
//!   in them (the runtime's attack tests, `crates/cmtlab/tests/attacks.rs`, too).
//! * `tests/sctp_proto.rs` (always built): in-memory tests against `sctp-proto`
//!   (webrtc-rs), a pure-Rust sans-IO SCTP.
//!
//! docs/interop.md has the table of what interoperates.

pub mod harness;
pub mod netns;
#[cfg(feature = "usrsctp")]
pub mod usrsctp;
