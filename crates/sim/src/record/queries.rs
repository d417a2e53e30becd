//! The `queries` table: one row per completed incast query (`app::incast`).

use crate::app::incast::QueryDone;
use crate::record::{Column, Table};
use crate::time::Time;

/// Column builders of the `queries` table.
#[derive(Default)]
pub struct Queries {
    app: Vec<u64>,
    index: Vec<u64>,
    start: Vec<f64>,
    end: Vec<f64>,
    qct: Vec<f64>,
    srtt: Vec<f64>,
}

impl Queries {
    /// App `app`'s query `q` completed at `now`.
    pub fn push(&mut self, app: usize, q: &QueryDone, now: Time) {
        self.app.push(app as u64);
        self.index.push(u64::from(q.index));
        self.start.push(q.request_at.as_secs_f64());
        self.end.push(now.as_secs_f64());
        self.qct.push((now - q.request_at).as_secs_f64());
        self.srtt.push(q.median_srtt_us);
    }

    pub fn finish(self) -> Table {
        Table {
            name: "queries",
            columns: vec![
                ("app", Column::U64(self.app)),
                ("query", Column::U64(self.index)),
                ("request_s", Column::F64(self.start)),
                ("done_s", Column::F64(self.end)),
                ("qct_s", Column::F64(self.qct)),
                ("srtt_at_response_us", Column::F64(self.srtt)),
            ],
        }
    }
}
