//! [`Cmtlab`]: the command line with algorithms of your own.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;
use cmt_core::cc::CcFactory;
use cmt_core::registry::RegistryError;
use cmt_core::rtx::RtxFactory;
use cmt_core::sched::SchedulerFactory;
use cmt_core::{ParamError, Params};
use cmt_sim::loss_model::LossModelFactory;

use crate::cli::{dispatch, Cli};

/// The `cmtlab` command line, with any schedulers, retransmission policies, congestion
/// controllers and loss models you register before calling [`main`](Self::main).
///
/// Each registration adds a row to the process-wide table of its extension point
/// ([`cmt_core::registry`]): scenario and sweep files name it like a built-in one
/// (`association.scheduler = "first-fit"`, `links[].loss_model = "…"`), its parameters
/// come from the matching `*_params` table, `--help` and `cmtlab algorithms` list it,
/// and the real runtime's `--scheduler` / `--rtx` / `--cc` accept it. Results record the
/// registered names, and their build hash covers the executable, so results of a
/// changed extension are never taken for old ones.
#[derive(Debug, Default)]
#[must_use = "call .main() to run the command line"]
pub struct Cmtlab {
    errors: Vec<RegistryError>,
}

impl Cmtlab {
    /// The command line with the built-in algorithms.
    pub fn new() -> Self {
        Cmtlab::default()
    }

    fn note(mut self, r: Result<(), RegistryError>) -> Self {
        if let Err(e) = r {
            self.errors.push(e);
        }
        self
    }

    /// Registers a scheduler: `build` turns `association.scheduler_params` into its
    /// factory (refuse unknown keys with [`Params::expect_only`]).
    pub fn scheduler<T: SchedulerFactory + 'static>(
        self,
        name: &str,
        summary: &str,
        build: impl Fn(&Params) -> Result<T, ParamError> + Send + Sync + 'static,
    ) -> Self {
        self.note(cmt_core::sched::register(name, summary, build))
    }

    /// Registers a retransmission policy (parameters from `association.rtx_params`).
    pub fn rtx<T: RtxFactory + 'static>(
        self,
        name: &str,
        summary: &str,
        build: impl Fn(&Params) -> Result<T, ParamError> + Send + Sync + 'static,
    ) -> Self {
        self.note(cmt_core::rtx::register(name, summary, build))
    }

    /// Registers a congestion controller (parameters from `association.cc_params`).
    pub fn cc<T: CcFactory + 'static>(
        self,
        name: &str,
        summary: &str,
        build: impl Fn(&Params) -> Result<T, ParamError> + Send + Sync + 'static,
    ) -> Self {
        self.note(cmt_core::cc::register(name, summary, build))
    }

    /// Registers a loss model for links (parameters from `links[].loss_model_params`).
    pub fn loss_model<T: LossModelFactory + 'static>(
        self,
        name: &str,
        summary: &str,
        build: impl Fn(&Params) -> Result<T, ParamError> + Send + Sync + 'static,
    ) -> Self {
        self.note(cmt_sim::loss_model::register(name, summary, build))
    }

    /// Parses the process's arguments and runs the subcommand: exit status 0 on
    /// success, 2 with a one-line error on stderr otherwise (also when a registration
    /// was refused, e.g. a name already taken).
    pub fn main(self) -> ExitCode {
        self.main_from(std::env::args_os())
    }

    /// As [`main`](Self::main), with the arguments given (the first is the program
    /// name).
    pub fn main_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        if let Some(e) = self.errors.first() {
            eprintln!("error: {}", crate::printable(&e.to_string()));
            return ExitCode::from(2);
        }
        match dispatch(Cli::parse_from(args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {}", crate::printable(&e.to_string()));
                ExitCode::from(2)
            }
        }
    }
}
