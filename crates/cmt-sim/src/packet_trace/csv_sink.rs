//! The CSV sink of the per-packet trace (the `csv` crate quotes names that need it).

use std::io;

use super::{seconds, Row, Sink, COLUMNS};

pub(super) struct CsvSink<W: io::Write> {
    out: csv::Writer<W>,
}

impl<W: io::Write> CsvSink<W> {
    pub(super) fn new(out: W) -> io::Result<Self> {
        let mut out = csv::Writer::from_writer(out);
        out.write_record(COLUMNS)?;
        Ok(CsvSink { out })
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

impl<W: io::Write + Send> Sink for CsvSink<W> {
    fn row(&mut self, r: &Row<'_>) -> io::Result<()> {
        self.out.write_record([
            seconds(r.time).as_str(),
            r.side.as_str(),
            &r.path.to_string(),
            r.path_name,
            if r.ack { "ack" } else { "data" },
            r.kind.as_str(),
            r.cause,
            &opt(r.tsn),
            &opt(r.bytes),
            &opt(r.cwnd),
            r.link,
        ])?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.out.flush()
    }
}
