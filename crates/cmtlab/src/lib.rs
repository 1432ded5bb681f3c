//! # cmtlab — the command-line program, as a library you can extend
//!
//! The `cmtlab` binary is [`Cmtlab::new().main()`](Cmtlab::main). A program of your own
//! that registers its algorithms first gets the whole command line — `run`, `sweep`,
//! `reproduce`, `send`, `recv`, … — with scenario and sweep files that name them:
//!
//! ```no_run
//! use cmt_core::sched::{FnFactory, SchedContext, Scheduler};
//! use cmt_core::PathId;
//!
//! /// Always the first path that can send.
//! struct FirstFit;
//! impl Scheduler for FirstFit {
//!     fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
//!         ctx.paths.iter().find(|p| p.can_send).map(|p| p.id)
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     cmtlab::Cmtlab::new()
//!         .scheduler("first-fit", "the first path with room", |_params| {
//!             Ok(FnFactory::new("first-fit", |_paths| Box::new(FirstFit)))
//!         })
//!         .main()
//! }
//! ```
//!
//! `docs/extending.md` walks through a complete example crate.

/// Prints to stdout like `print!`; a closed pipe (`cmtlab run … | head`) ends the program
/// quietly instead of panicking.
macro_rules! say {
    ($($t:tt)*) => {
        $crate::stdout_or_exit(format_args!($($t)*))
    };
}

/// `println!` through [`say!`].
macro_rules! sayln {
    ($($t:tt)*) => {{
        say!($($t)*);
        say!("\n");
    }};
}

/// Writes to stdout; on a closed pipe exits with status 0 (the reader has what it wanted).
pub(crate) fn stdout_or_exit(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

mod cli;
mod extend;
mod net;
mod output;
mod real;
mod run;
mod sweep;

pub use extend::Cmtlab;
