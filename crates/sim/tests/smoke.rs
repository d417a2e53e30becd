mod common;
use burstlab_sim::{Rate, Time, run};
use common::*;

#[test]
fn smoke() {
    let s = dumbbell(Rate::from_gbps(1), Time::from_ms(10), 1 << 20, 1500, vec![flow("cubic", Some(10_000_000))]);
    let out = run(&s);
    println!("{}", serde_json::to_string_pretty(&out.summary).unwrap());
    let iv = out.table("intervals").unwrap();
    println!("{:?}", iv.columns[4]);
}
