//! Linux MPTCP's reinjection (`association.reinject`) through a path failure: 20 MiB
//! over two 10 Mbit/s paths with the `linux-mptcp` preset, path `a` cut for good at 3 s.
//!
//! The bounds come from models, not from a run:
//! - *Without reinjection* the chunks lost on `a` are resent only on `a` (RTX-SAME, as
//!   TCP subflows do), so the receiver's window stays stuck behind them until `a` is
//!   given up after Path.Max.Retrans + 1 = 6 timeouts backed off from RTO.Min
//!   (0.2 + 0.4 + … + 6.4 = 12.6 s): the file cannot arrive before 3 + 12.6 s.
//! - *With it* the stalled data is copied to `b`, so the transfer must beat `b` alone:
//!   20 MiB of 1,452-byte payloads in 1,500-byte packets at 10 Mbit/s is 17.3 s, and `a`
//!   carried data for the first 3 s.

use cmt_sim::{run_str, Summary};

const SCENARIO: &str = "seed = 7\nfile_size = \"20MB\"\ntime_limit = \"120s\"\n\
    [association]\npreset = \"linux-mptcp\"\n[receiver]\nrbuf = \"2MB\"\n\
    [[links]]\nname = \"a\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = 100\n\
    [[links]]\nname = \"b\"\nrate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = 100\n\
    [[paths]]\nname = \"a\"\nlinks = [\"a\"]\n[[paths]]\nname = \"b\"\nlinks = [\"b\"]\n\
    [[events]]\nat = \"3s\"\nlink = \"a\"\nstate = \"down\"\n";

fn run(reinject: &str) -> Summary {
    run_str(SCENARIO, &[format!("association.reinject=\"{reinject}\"")]).expect("runs")
}

#[test]
fn reinjection_moves_a_cut_paths_data_and_beats_the_other_path_alone() {
    let (linux, off) = (run("linux"), run("off"));
    let b_alone = 20.0 * 1048576.0 / 1452.0 * 1500.0 * 8.0 / 10e6;
    println!(
        "reinjection {:.2} s ({} copies on b), none {:.2} s, b alone {b_alone:.2} s",
        linux.sim_time_s, linux.paths[1].copies, off.sim_time_s
    );
    assert_eq!(linux.ending, "FileDelivered");
    assert_eq!(off.ending, "FileDelivered");
    assert!(off.sim_time_s >= 3.0 + 12.6, "without: {}", off.sim_time_s);
    assert!(linux.sim_time_s < b_alone, "with: {}", linux.sim_time_s);
    assert!(linux.paths[1].copies > 0 && off.paths[1].copies == 0);
}
