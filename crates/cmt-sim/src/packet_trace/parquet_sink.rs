//! The Parquet sink of the per-packet trace: the CSV columns, `time_s` as a double,
//! empty fields as nulls, one row group per 2^20 rows.

use std::fs::File;
use std::io;
use std::sync::Arc;

use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::parser::parse_message_type;

use super::{Row, Sink};

const SCHEMA: &str = "message packet_trace {
    REQUIRED DOUBLE time_s;
    REQUIRED BYTE_ARRAY side (UTF8);
    REQUIRED INT64 path;
    REQUIRED BYTE_ARRAY path_name (UTF8);
    REQUIRED BYTE_ARRAY direction (UTF8);
    REQUIRED BYTE_ARRAY kind (UTF8);
    OPTIONAL BYTE_ARRAY cause (UTF8);
    OPTIONAL INT64 tsn;
    OPTIONAL INT64 bytes;
    OPTIONAL INT64 cwnd;
    OPTIONAL BYTE_ARRAY link (UTF8);
}";

const ROW_GROUP: usize = 1 << 20;

/// A nullable column: values of the present rows and a definition level per row.
#[derive(Default)]
struct Nullable<T> {
    values: Vec<T>,
    defined: Vec<i16>,
}

impl<T> Nullable<T> {
    fn push(&mut self, v: Option<T>) {
        self.defined.push(v.is_some() as i16);
        self.values.extend(v);
    }
    fn clear(&mut self) {
        self.values.clear();
        self.defined.clear();
    }
}

#[derive(Default)]
struct Columns {
    time_s: Vec<f64>,
    side: Vec<ByteArray>,
    path: Vec<i64>,
    path_name: Vec<ByteArray>,
    direction: Vec<ByteArray>,
    kind: Vec<ByteArray>,
    cause: Nullable<ByteArray>,
    tsn: Nullable<i64>,
    bytes: Nullable<i64>,
    cwnd: Nullable<i64>,
    link: Nullable<ByteArray>,
}

pub(super) struct ParquetSink {
    writer: SerializedFileWriter<File>,
    cols: Columns,
}

fn err(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e)
}

fn text(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

fn nonempty(s: &str) -> Option<ByteArray> {
    (!s.is_empty()).then(|| text(s))
}

impl ParquetSink {
    pub(super) fn new(file: File) -> io::Result<Self> {
        let schema = Arc::new(parse_message_type(SCHEMA).map_err(err)?);
        let props = Arc::new(WriterProperties::builder().build());
        Ok(ParquetSink {
            writer: SerializedFileWriter::new(file, schema, props).map_err(err)?,
            cols: Columns::default(),
        })
    }

    fn flush_group(&mut self) -> io::Result<()> {
        if self.cols.time_s.is_empty() {
            return Ok(());
        }
        let c = &self.cols;
        let mut rg = self.writer.next_row_group().map_err(err)?;
        let mut i = 0;
        while let Some(mut col) = rg.next_column().map_err(err)? {
            write_column(&mut col, c, i)?;
            col.close().map_err(err)?;
            i += 1;
        }
        rg.close().map_err(err)?;
        let c = &mut self.cols;
        for v in [&mut c.side, &mut c.path_name, &mut c.direction, &mut c.kind] {
            v.clear();
        }
        c.time_s.clear();
        c.path.clear();
        c.cause.clear();
        c.link.clear();
        c.tsn.clear();
        c.bytes.clear();
        c.cwnd.clear();
        Ok(())
    }
}

/// Writes column `i` (schema order) of the buffered rows.
fn write_column(col: &mut SerializedColumnWriter<'_>, c: &Columns, i: usize) -> io::Result<()> {
    let strings = |col: &mut SerializedColumnWriter<'_>, v: &[ByteArray]| {
        col.typed::<ByteArrayType>().write_batch(v, None, None)
    };
    let ints = |col: &mut SerializedColumnWriter<'_>, n: &Nullable<i64>| {
        col.typed::<Int64Type>()
            .write_batch(&n.values, Some(&n.defined), None)
    };
    let opt_strings = |col: &mut SerializedColumnWriter<'_>, n: &Nullable<ByteArray>| {
        col.typed::<ByteArrayType>()
            .write_batch(&n.values, Some(&n.defined), None)
    };
    match i {
        0 => col.typed::<DoubleType>().write_batch(&c.time_s, None, None),
        1 => strings(col, &c.side),
        2 => col.typed::<Int64Type>().write_batch(&c.path, None, None),
        3 => strings(col, &c.path_name),
        4 => strings(col, &c.direction),
        5 => strings(col, &c.kind),
        6 => opt_strings(col, &c.cause),
        7 => ints(col, &c.tsn),
        8 => ints(col, &c.bytes),
        9 => ints(col, &c.cwnd),
        _ => opt_strings(col, &c.link),
    }
    .map(|_| ())
    .map_err(err)
}

impl Sink for ParquetSink {
    fn row(&mut self, r: &Row<'_>) -> io::Result<()> {
        let c = &mut self.cols;
        c.time_s.push(r.time.as_nanos() as f64 / 1e9);
        c.side.push(text(r.side.as_str()));
        c.path.push(r.path as i64);
        c.path_name.push(text(r.path_name));
        c.direction.push(text(if r.ack { "ack" } else { "data" }));
        c.kind.push(text(r.kind.as_str()));
        c.cause.push(nonempty(r.cause));
        c.tsn.push(r.tsn.map(|t| t as i64));
        c.bytes.push(r.bytes.map(i64::from));
        c.cwnd.push(r.cwnd.map(|w| w as i64));
        c.link.push(nonempty(r.link));
        if c.time_s.len() >= ROW_GROUP {
            self.flush_group()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.flush_group()?;
        let file = self.writer.into_inner().map_err(err)?;
        file.sync_all()
    }
}
