//! Sweeps: files, plans, execution.

mod plan;
mod run;
mod spec;

pub use plan::{Axis, CiMethod, Plan, RunSpec};
pub use run::{run_file, run_plan, write_atomic, RunOptions, RunOutcome, RunRecord};
pub use spec::{
    flatten, ComparisonKind, ComparisonSpec, PaperValues, PlotKind, ReportSpec, Seeds, SweepFile,
    VariantSpec,
};
