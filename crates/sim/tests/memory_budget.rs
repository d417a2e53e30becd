//! The memory budget (`scenario::budget`): the scenarios that aborted the process (issue 41) are
//! refused by the loader in one line naming the field that drives the estimate; the budget is
//! settable; presets are refused before they expand; every shipped scenario fits a small
//! machine.

use std::path::Path;

use burstlab_sim::scenario::{self, ScenarioError, budget};

fn refusal(text: &str, overrides: &[&str]) -> ScenarioError {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match scenario::load(text, &overrides) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn field_of(e: &ScenarioError) -> &str {
    match e {
        ScenarioError::OverBudget { path, .. } => path,
        other => panic!("not a budget refusal: {other}"),
    }
}

const DUMBBELL: &str = "name = \"x\"\n[topology]\nbottleneck_rate = \"10Gbps\"\nrtt = \"1ms\"\n";

// ---- the aborts ----

#[test]
fn aborts_four_billion_sources_are_refused_naming_sources() {
    let text = format!(
        "{DUMBBELL}[[burst]]\nsources = 4294967295\nrate = \"1Gbps\"\nstart = \"1ms\"\nduration = \"1ns\"\n"
    );
    let e = refusal(&text, &[]);
    assert_eq!(e.kind(), "memory_budget");
    assert_eq!(field_of(&e), "scenario.burst[0].sources");
    let line = e.to_string();
    assert!(line.starts_with("scenario.burst[0].sources = 4294967295: the run would hold about "));
    assert!(
        line.contains("4294967295 burst sources") && line.contains("over the memory budget of")
    );
    assert!(!line.contains('\n'), "{line}");
}

#[test]
fn aborts_an_unsized_flow_at_1ms_intervals_for_months_is_refused_naming_interval() {
    let text = "name = \"x\"\nstop = \"18000000s\"\ninterval = \"1ms\"\n[topology]\n\
                bottleneck_rate = \"1bps\"\nrtt = \"1ms\"\n[[flow]]\ncca = \"cubic\"\n";
    let e = refusal(text, &[]);
    assert_eq!(field_of(&e), "scenario.interval");
    assert!(e.to_string().contains("18000000001 rows for 1 flows"), "{e}");
    // The same flow for a minute is fine.
    scenario::load(text, &["stop=60s".into()]).unwrap();
}

#[test]
fn aborts_a_burst_at_an_absurd_rate_is_refused_naming_its_rate() {
    let text = format!(
        "{DUMBBELL}burst_link_rate = \"1Tbps\"\n[[burst]]\nrate = \"1Tbps\"\nstart = \"0s\"\n\
         duration = \"100s\"\npacket_size = 64\n"
    );
    let e = refusal(&text, &["stop=100s"]);
    assert_eq!(field_of(&e), "scenario.burst[0].rate");
    assert!(e.to_string().contains("up to 195312500000 rows"), "{e}");
}

#[test]
fn aborts_a_leaf_spine_of_16_million_hosts_is_refused_before_it_expands() {
    let text = "name = \"x\"\n[topology]\npreset = \"leaf-spine\"\nleaves = 4096\n\
                hosts_per_leaf = 4096\n[[flow]]\ncca = \"reno\"\nsrc = \"h0\"\ndst = \"h1\"\n";
    let t = std::time::Instant::now();
    let e = refusal(text, &[]);
    assert_eq!(field_of(&e), "scenario.topology.hosts_per_leaf");
    assert!(e.to_string().contains("16781316 nodes"), "{e}");
    // Expanding it would take minutes and tens of GB; the refusal comes first.
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
}

// ---- the budget ----

#[test]
fn budget_is_the_scenario_s_memory_budget_when_given() {
    let text = format!("{DUMBBELL}[[flow]]\ncca = \"cubic\"\nsize = \"1MB\"\n");
    scenario::load(&text, &[]).unwrap();
    let e = refusal(&text, &["memory_budget=1MiB"]);
    assert_eq!(e.kind(), "memory_budget");
    assert!(e.to_string().contains("over the memory budget of 1.0 MiB (memory_budget)"), "{e}");
    let e = refusal(&text, &["memory_budget=0B"]);
    assert_eq!(e.kind(), "field");
    assert_eq!(
        e.to_string(),
        "scenario.memory_budget = \"0B\": expected a size above 0, such as \"8GiB\""
    );
    // A budget above the machine's lets through what the default refuses.
    let sources = format!(
        "{DUMBBELL}[[burst]]\nsources = 300000\nrate = \"1Gbps\"\nstart = \"1ms\"\nduration = \"1ns\"\n"
    );
    refusal(&sources, &["memory_budget=100MiB"]);
    scenario::load(&sources, &["memory_budget=64GiB".into()]).unwrap();
}

#[test]
fn budget_defaults_to_half_the_machine() {
    let b = budget::machine_budget();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap();
    assert!(b.bytes <= kib * 1024 / 2, "{b:?}");
    assert!(b.whence.starts_with("half of this"), "{b:?}");
}

#[test]
fn budget_estimate_grows_linearly_in_flows() {
    let flows = |n: usize| {
        let mut t = DUMBBELL.to_owned();
        for _ in 0..n {
            t.push_str("[[flow]]\ncca = \"reno\"\nsize = \"10KB\"\n");
        }
        budget::estimate(&scenario::load(&t, &[]).unwrap()).total()
    };
    let (a, b, c) = (flows(100), flows(1000), flows(2000));
    assert_eq!(c - b, (b - a) * 1000 / 900, "{a} {b} {c}");
}

#[test]
fn budget_fits_every_shipped_scenario_in_2_gib() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = ["", "amlight", "graphs"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let scn = scenario::load_file(&f, &[]).unwrap();
        let total = budget::estimate(&scn).total();
        assert!(total < 2 << 30, "{}: {}", f.display(), budget::human(total));
    }
}
