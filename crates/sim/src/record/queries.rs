//! The `queries` table: one row per completed request: an incast query (`app::incast`), or a
//! web-search workload's query or background flow (`app::websearch`), told apart by `kind`.

use crate::app::incast::QueryDone;
use crate::app::websearch::{Completed, Kind, size_class};
use crate::record::{Column, Table};
use crate::time::Time;

/// `kind` codes.
const KINDS: [&str; 3] = ["incast", "query", "background"];
/// `size_class` codes (`app::websearch::size_class`).
const CLASSES: [&str; 3] = ["small", "medium", "large"];

/// Column builders of the `queries` table.
#[derive(Default)]
pub struct Queries {
    app: Vec<u64>,
    index: Vec<u64>,
    start: Vec<f64>,
    end: Vec<f64>,
    qct: Vec<f64>,
    srtt: Vec<f64>,
    kind: Vec<u32>,
    size: Vec<u64>,
    class: Vec<u32>,
}

impl Queries {
    /// Incast app `app`'s query `q` completed at `now`.
    pub fn push(&mut self, app: usize, q: &QueryDone, now: Time) {
        self.row(app, 0, u64::from(q.index), q.request_at, now, q.size_bytes);
        self.srtt.push(q.median_srtt_us);
    }

    /// Web-search workload `app`'s request `c` completed (no SRTT is taken: NaN).
    pub fn push_websearch(&mut self, app: usize, c: &Completed) {
        let kind = match c.kind {
            Kind::Query => 1,
            Kind::Background => 2,
        };
        self.row(app, kind, c.index, c.start, c.done, c.size_bytes);
        self.srtt.push(f64::NAN);
    }

    fn row(&mut self, app: usize, kind: u32, index: u64, start: Time, end: Time, size: u64) {
        self.app.push(app as u64);
        self.index.push(index);
        self.start.push(start.as_secs_f64());
        self.end.push(end.as_secs_f64());
        self.qct.push((end - start).as_secs_f64());
        self.kind.push(kind);
        self.size.push(size);
        let class = size_class(size);
        self.class.push(CLASSES.iter().position(|&c| c == class).expect("a listed class") as u32);
    }

    pub fn finish(self) -> Table {
        let dict = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Table {
            name: "queries",
            columns: vec![
                ("app", Column::U64(self.app)),
                ("query", Column::U64(self.index)),
                ("request_s", Column::F64(self.start)),
                ("done_s", Column::F64(self.end)),
                ("qct_s", Column::F64(self.qct)),
                ("srtt_at_response_us", Column::F64(self.srtt)),
                ("kind", Column::Dict { codes: self.kind, dict: dict(&KINDS) }),
                ("size_bytes", Column::U64(self.size)),
                ("size_class", Column::Dict { codes: self.class, dict: dict(&CLASSES) }),
            ],
        }
    }
}
