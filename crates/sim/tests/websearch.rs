//! The web-search workload in a run (`[[websearch]]`, `app::websearch`): the queries table
//! holds each query's completion time and each background flow's FCT with its size class, and
//! neither beats what the links allow.
use burstlab_sim::record::{Column, Output};
use burstlab_sim::run;
use burstlab_sim::scenario;

fn racks(load: f64, queries_per_s: f64, seed: u64) -> String {
    format!(
        r#"
name = "websearch-small"
seed = {seed}
stop = "2s"
[topology]
preset = "racks"
racks = 2
hosts_per_rack = 2
host_rate = "1Gbps"
buffer = "128KB"
ecn_threshold = "32KB"
[hosts]
cca = "dctcp"
ecn = true
quickack = true
rto_min = "10ms"
[[websearch]]
hosts = ["h0", "h1", "h2", "h3"]
load = {load}
queries_per_s = {queries_per_s}
query_size = "30KB"
stop = "1.5s"
"#
    )
}

struct Row {
    kind: String,
    class: String,
    size: u64,
    start: f64,
    qct: f64,
}

fn rows(out: &Output) -> Vec<Row> {
    let q = out.table("queries").expect("a queries table");
    let f64s = |name| match q.column(name) {
        Some(Column::F64(v)) => v.clone(),
        _ => panic!("queries.{name} is not f64"),
    };
    let dict = |name| match q.column(name) {
        Some(Column::Dict { codes, dict }) => {
            codes.iter().map(|&c| dict[c as usize].clone()).collect::<Vec<_>>()
        }
        _ => panic!("queries.{name} is not a dictionary"),
    };
    let Some(Column::U64(size)) = q.column("size_bytes") else { panic!("no size_bytes") };
    let (kind, class, start, qct) =
        (dict("kind"), dict("size_class"), f64s("request_s"), f64s("qct_s"));
    (0..q.rows())
        .map(|i| Row {
            kind: kind[i].clone(),
            class: class[i].clone(),
            size: size[i],
            start: start[i],
            qct: qct[i],
        })
        .collect()
}

#[test]
fn queries_and_background_flows_complete_no_faster_than_the_links() {
    let out = run(&scenario::load(&racks(0.3, 40.0, 1), &[]).unwrap());
    let rows = rows(&out);
    let queries: Vec<&Row> = rows.iter().filter(|r| r.kind == "query").collect();
    let background: Vec<&Row> = rows.iter().filter(|r| r.kind == "background").collect();
    // 4 hosts × 40 queries/s over ~1.49 s of arrivals: ~238 (σ ≈ 15).
    assert!((180..300).contains(&queries.len()), "{} queries", queries.len());
    // 0.3 Gbit/s per host of 1.71 MB flows: ~26 per host/s, 4 hosts, ~1.49 s: ~156 (σ ≈ 12).
    assert!((100..220).contains(&background.len()), "{} background flows", background.len());
    // A query's 30 KB of answers all cross the client's 1 Gbit/s link after the request's
    // half round trip: at least 240 µs. A background flow's bytes cross its sender's link.
    for q in &queries {
        assert_eq!(q.size, 30_000);
        assert!(q.qct >= 240e-6, "query at {} s took {} s", q.start, q.qct);
    }
    for b in &background {
        assert!(b.qct >= b.size as f64 * 8.0 / 1e9, "{} B in {} s", b.size, b.qct);
        let class = match b.size {
            0..=100_000 => "small",
            100_001..=10_000_000 => "medium",
            _ => "large",
        };
        assert_eq!(b.class, class, "{} B", b.size);
    }
    // A lightly loaded fabric: most queries finish within a few round trips.
    let mut qct: Vec<f64> = queries.iter().map(|q| q.qct).collect();
    qct.sort_by(f64::total_cmp);
    assert!(qct[qct.len() / 2] < 2e-3, "median QCT {} s", qct[qct.len() / 2]);
}

#[test]
fn the_same_seed_gives_the_same_requests_and_another_seed_others() {
    let starts = |seed| -> Vec<(String, u64, f64, f64)> {
        let out = run(&scenario::load(&racks(0.2, 20.0, seed), &[]).unwrap());
        rows(&out).into_iter().map(|r| (r.kind, r.size, r.start, r.qct)).collect()
    };
    let a = starts(3);
    assert!(!a.is_empty());
    assert_eq!(a, starts(3));
    assert_ne!(a, starts(4));
}

#[test]
fn a_workload_outside_a_graph_or_with_nothing_to_run_is_refused() {
    let dumbbell = "name = \"x\"\n[topology]\nbottleneck_rate = \"1Gbps\"\nrtt = \"1ms\"\n\
                    [[websearch]]\nhosts = [\"a\", \"b\"]\nload = 0.3\n";
    let e = scenario::load(dumbbell, &[]).unwrap_err();
    assert!(e.to_string().contains("scenario.websearch"), "{e}");
    assert!(e.to_string().contains("a graph topology"), "{e}");
    let text = racks(0.0, 0.0, 1);
    let e = scenario::load(&text, &[]).unwrap_err();
    assert!(e.to_string().contains("scenario.websearch[0].load"), "{e}");
    let e = scenario::load(&racks(1.5, 1.0, 1), &[]).unwrap_err();
    assert!(e.to_string().contains("from 0 to 1"), "{e}");
    let e = scenario::load(&racks(0.3, 1.0, 1).replace("\"h3\"]", "\"h9\"]"), &[]).unwrap_err();
    assert!(e.to_string().contains("h9"), "{e}");
}

#[test]
fn streams_in_the_workloads_tcp_settings_are_refused_in_one_line() {
    let text = racks(0.3, 1.0, 1) + "[websearch.tcp]\nstreams = 2\n";
    let e = scenario::load(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("scenario.websearch[0].tcp.streams = 2: expected no streams here"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// The S-ECN testbed (4 racks of 3 hosts, 1 Gbit/s everywhere) with its web-search workload at
/// `load` of whatever `load_of` names.
fn testbed(load: f64, load_of: &str) -> String {
    format!(
        r#"
name = "websearch-testbed"
stop = "1s"
[topology]
preset = "racks"
racks = 4
hosts_per_rack = 3
host_rate = "1Gbps"
[hosts]
cca = "dctcp"
[[websearch]]
hosts = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9", "h10", "h11"]
load = {load}
{load_of}
connections = 8
"#
    )
}

#[test]
fn load_is_of_each_hosts_link_by_default_and_of_the_busiest_link_when_asked() {
    let rate = |text: &str| scenario::load(text, &[]).unwrap().websearches[0].background.rate;
    let host = rate(&testbed(0.6, ""));
    assert_eq!(host, rate(&testbed(0.6, "load_of = \"host-link\"")));
    assert_eq!(host.bps(), 1_000_000_000);
    // Each rack's uplink carries 3 hosts' flows to the 9 hosts outside: 27/11 of one host's
    // offer, so `load` of the uplink is each host offering load · 11/27 of 1 Gbit/s.
    let busiest = rate(&testbed(0.6, "load_of = \"busiest-link\""));
    assert!((busiest.bps() as f64 - 1e9 * 11.0 / 27.0).abs() <= 1.0, "{busiest:?}");
}

#[test]
fn a_load_of_that_names_no_link_is_refused_with_the_choices() {
    let e = scenario::load(&testbed(0.3, "load_of = \"uplink\""), &[]).unwrap_err().to_string();
    assert!(
        e.contains("scenario.websearch[0].load_of")
            && e.contains("\"host-link\", \"busiest-link\""),
        "{e}"
    );
    let e = scenario::load(&testbed(1.2, "load_of = \"busiest-link\""), &[]).unwrap_err();
    assert!(e.to_string().contains("a share of the busiest link from 0 to 1"), "{e}");
}
