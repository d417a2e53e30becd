//! Record tables are capped within the memory budget (`record::RowCap`, `budget::row_caps`):
//! a run whose settings pass the estimate but whose tables outgrow their share keeps `max`
//! rows, counts the rest in the summary's `rows_not_kept`, and simulates exactly what an
//! uncapped run does.

use burstlab_sim::record::Output;
use burstlab_sim::scenario::{self, budget};
use burstlab_sim::{Time, run};

/// An unsized flow reported every millisecond for 200 s: 200,000 `intervals` rows (about 27
/// MiB estimated), which a 64 MiB budget accepts but caps at a quarter of itself.
const LONG_1MS: &str = "name = \"capped\"\nstop = \"200s\"\ninterval = \"1ms\"\n\
                        [topology]\nbottleneck_rate = \"1Mbps\"\nrtt = \"10ms\"\n\
                        [[flow]]\ncca = \"cubic\"\n";

fn run_with_budget(size: &str) -> (Output, u64) {
    let scn = scenario::load(LONG_1MS, &[format!("memory_budget={size}")]).unwrap();
    (run(&scn), scn.memory_budget)
}

#[test]
fn the_intervals_table_stops_at_its_cap_and_counts_the_rest() {
    let (full, _) = run_with_budget("1GiB");
    let (capped, budget_bytes) = run_with_budget("64MiB");
    assert_eq!(budget_bytes, 64 << 20);
    let max = budget::row_caps(budget_bytes).intervals;
    assert_eq!(max, (16 << 20) / budget::INTERVAL_ROW_BYTES);

    let all = full.table("intervals").unwrap().rows() as u64;
    let kept = capped.table("intervals").unwrap().rows() as u64;
    assert_eq!(all, 200_000, "one row per millisecond of the 200 s run");
    assert_eq!(kept, max);
    assert!(full.summary.rows_not_kept.is_empty());
    assert_eq!(capped.summary.rows_not_kept.get("intervals"), Some(&(all - max)));
    assert_eq!(capped.summary.rows_not_kept.len(), 1, "{:?}", capped.summary.rows_not_kept);

    // The rows kept are the run's first ones, and the cap changes nothing simulated.
    let (f, c) = (full.table("intervals").unwrap(), capped.table("intervals").unwrap());
    for (name, col) in &c.columns {
        let whole = f.column(name).unwrap();
        assert_eq!(whole.len() as u64, all);
        match (col, whole) {
            (burstlab_sim::record::Column::U64(a), burstlab_sim::record::Column::U64(b)) => {
                assert_eq!(a[..], b[..a.len()], "{name}")
            }
            (burstlab_sim::record::Column::F64(a), burstlab_sim::record::Column::F64(b)) => {
                assert_eq!(a[..], b[..a.len()], "{name}")
            }
            other => panic!("{name}: unexpected column types {other:?}"),
        }
    }
    assert_eq!(capped.summary.flows, full.summary.flows);
    assert_eq!(capped.summary.ports, full.summary.ports);
    assert_eq!(capped.summary.engine.sim_time_s, Time::from_secs(200).as_secs_f64());
}

#[test]
fn rows_not_kept_is_in_the_json_only_when_rows_were_dropped() {
    let (full, _) = run_with_budget("1GiB");
    let (capped, _) = run_with_budget("64MiB");
    let json = |o: &Output| serde_json::to_value(&o.summary).unwrap();
    assert!(json(&full).get("rows_not_kept").is_none());
    let nk = &json(&capped)["rows_not_kept"];
    assert_eq!(nk["intervals"], serde_json::json!(200_000 - (16u64 << 20) / 144));
}
