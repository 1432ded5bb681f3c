//! # cmt-lab — experiments over many runs
//!
//! The experiment engine (sweep files, parallel runs, reports, study reproductions)
//! grows here. For now it holds the statistics every report needs: mean, sample
//! standard deviation and confidence intervals (spec §13).

pub mod stats;
