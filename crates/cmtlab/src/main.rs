//! `cmtlab` — the command-line program with the built-in algorithms.

fn main() -> std::process::ExitCode {
    cmtlab::Cmtlab::new().main()
}
