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
/// Control characters other than newlines and tabs (a name with an escape sequence in
/// a scenario, say) are written escaped, so output never drives the terminal.
pub(crate) fn stdout_or_exit(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = printable(&args.to_string()).into_owned();
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// `text` with every control character but newline and tab escaped (`\u{1b}`).
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.contains(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if bad(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

mod calibrate;
mod cli;
mod extend;
mod locals;
mod measure;
mod net;
mod output;
mod progress;
mod real;
mod run;
mod serve;
mod sweep;
mod transfer_args;
mod transfer_report;

pub use extend::Cmtlab;
