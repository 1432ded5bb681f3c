//! Sweeps: files, plans, execution.

mod grid;
mod plan;
mod run;
mod sequential;
mod spec;

pub use grid::{Axis, CiMethod, MAX_RUNS, MAX_SEEDS};
pub(crate) use plan::toml_error;
pub use plan::{Plan, RunSpec};
pub use run::{
    chosen_runs, run_file, run_plan, run_plan_until, write_atomic, RunOptions, RunOutcome,
    RunRecord, INTERRUPTED,
};
pub use sequential::{select, Decision, Estimate, Results, Selection, Sequential};
pub use spec::{
    flatten, plain, toml_text_to_json, ComparisonKind, ComparisonSpec, PaperSet, PaperValues,
    PlotKind, ReportSpec, Seeds, SequentialSpec, SweepFile, VariantSpec,
};
