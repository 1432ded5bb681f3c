//! Time-series figures of one run, from the `timeseries.csv` and `paths.csv` that
//! `cmtlab run --out DIR` writes.

use std::path::Path;

use super::chart::{draw, Chart, Point, Series, Style};
use crate::error::LabError;

struct PathSeries {
    name: String,
    goodput: Vec<Point>,
    cwnd: Vec<Point>,
}

fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), LabError> {
    let label = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|e| LabError::at(&label, e))?;
    let header = r
        .headers()
        .map_err(|e| LabError::at(&label, e))?
        .iter()
        .map(String::from)
        .collect();
    let mut rows = Vec::new();
    for rec in r.records() {
        rows.push(
            rec.map_err(|e| LabError::at(&label, e))?
                .iter()
                .map(String::from)
                .collect(),
        );
    }
    Ok((header, rows))
}

fn col(header: &[String], name: &str, path: &Path) -> Result<usize, LabError> {
    header
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| LabError::at(&path.display().to_string(), format!("no column `{name}`")))
}

fn f(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// Draws `run_goodput`, `run_cwnd`, `run_o3tsn` and `run_rbuf` (SVG and PNG) into `dir`.
pub fn plot_run(dir: &Path, title: &str) -> Result<Vec<String>, LabError> {
    let ts_path = dir.join("timeseries.csv");
    let (h, ts) = read_csv(&ts_path)?;
    let (t, g, o3, rb) = (
        col(&h, "t_s", &ts_path)?,
        col(&h, "goodput_mbps", &ts_path)?,
        col(&h, "o3_tsn_max", &ts_path)?,
        col(&h, "rbuf_max_bytes", &ts_path)?,
    );
    let (tsn_s, tsn_r) = (
        col(&h, "tsn_sent", &ts_path)?,
        col(&h, "tsn_received", &ts_path)?,
    );
    let paths_path = dir.join("paths.csv");
    let (ph, ps) = read_csv(&paths_path)?;
    let (pt, pn, pg, pc) = (
        col(&ph, "t_s", &paths_path)?,
        col(&ph, "path", &paths_path)?,
        col(&ph, "goodput_mbps", &paths_path)?,
        col(&ph, "cwnd_bytes", &paths_path)?,
    );
    // Paths in scenario order (first appearance), each with its two series.
    let mut paths: Vec<PathSeries> = Vec::new();
    for row in &ps {
        let i = match paths.iter().position(|p| p.name == row[pn]) {
            Some(i) => i,
            None => {
                paths.push(PathSeries {
                    name: row[pn].clone(),
                    goodput: Vec::new(),
                    cwnd: Vec::new(),
                });
                paths.len() - 1
            }
        };
        paths[i].goodput.push((f(&row[pt]), f(&row[pg]), None));
        paths[i]
            .cwnd
            .push((f(&row[pt]), f(&row[pc]) / 1024.0, None));
    }
    let mut goodput: Vec<Series> = paths
        .iter()
        .map(|p| Series {
            name: p.name.clone(),
            points: p.goodput.clone(),
        })
        .collect();
    goodput.push(Series {
        name: "total".into(),
        points: ts.iter().map(|r| (f(&r[t]), f(&r[g]), None)).collect(),
    });
    let cwnd: Vec<Series> = paths
        .into_iter()
        .map(|p| Series {
            name: p.name,
            points: p.cwnd,
        })
        .collect();
    let one = |name: &str, col: usize, scale: f64| {
        vec![Series {
            name: name.into(),
            points: ts
                .iter()
                .map(|r| (f(&r[t]), f(&r[col]) * scale, None))
                .collect(),
        }]
    };
    let charts = [
        (
            "run_goodput",
            "goodput per path",
            "goodput per bin (Mbit/s)",
            goodput,
        ),
        (
            "run_cwnd",
            "congestion window per path",
            "cwnd at end of bin (KiB)",
            cwnd,
        ),
        (
            "run_o3tsn",
            "out-of-order arrivals",
            "largest |O3-TSN| in bin (TSNs)",
            one("", o3, 1.0),
        ),
        (
            "run_tsn",
            "TSNs sent and received",
            "highest TSN so far",
            vec![
                one("sent", tsn_s, 1.0).remove(0),
                one("received", tsn_r, 1.0).remove(0),
            ],
        ),
        (
            "run_rbuf",
            "receive-buffer occupancy",
            "largest occupancy in bin (KiB)",
            one("", rb, 1.0 / 1024.0),
        ),
    ];
    let mut files = Vec::new();
    for (stem, what, y, s) in charts {
        let chart = Chart {
            title: format!("{title}: {what}"),
            x_label: "time (s)".into(),
            y_label: y.into(),
            categories: None,
            series: s,
            style: Style::Lines,
            fits: Vec::new(),
            error_bars: None,
            paper: Vec::new(),
        };
        draw(&chart, &dir.join(stem))?;
        files.push(format!("{stem}.png"));
    }
    Ok(files)
}
