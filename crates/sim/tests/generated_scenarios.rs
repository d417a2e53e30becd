//! Generated scenarios (issue 41): random scenarios drawn from the schema's real ranges —
//! dumbbells, graph presets and `[[node]]`/`[[link]]` graphs, flows with every congestion
//! control and host setting, incasts, bursts, INT telemetry, intervals, queues with ECN and
//! tbf, memory budgets — up to the budget's and the row caps' edges (`generated/mod.rs`).
//! For each, loading either refuses it with one `ScenarioError` line naming a field the
//! scenario holds (or a default it leaves), or the run
//! - ends without a panic (the engine's invariants — packets conserved, queue ≤ buffer,
//!   monotone time — are asserted in the test profile),
//! - conserves bytes in its records (a finished flow delivered its size, nothing delivered
//!   more than was sent, every drop a port counted has a `drops` row or is counted past the
//!   cap),
//! - keeps each capped table within its cap,
//! - holds at most its memory budget (peak RSS over the run, `VmHWM` reset before it),
//! - and gives the same records when run again with the same seed (every eighth run).
//!
//! `cargo test -p burstlab-sim --test generated_scenarios` runs 192 cases (seconds; under a minute on two
//! loaded cores). The long run, for as many seconds as `BURSTLAB_GENERATED_SECONDS` says
//! (docs/reliability.md):
//!
//! ```sh
//! BURSTLAB_GENERATED_SECONDS=3600 BURSTLAB_GENERATED_DIR=/tmp/gen \
//!   cargo test -p burstlab-sim --test generated_scenarios -- --nocapture
//! ```
//!
//! Also read: `BURSTLAB_GENERATED_CASES` (cases of the short run), `BURSTLAB_GENERATED_EVENTS`
//! (events a run may take before it is stopped and counted as cut), `BURSTLAB_GENERATED_SEED`
//! (the seed printed by an earlier run, to repeat it). With `BURSTLAB_GENERATED_DIR` each case
//! is written to `current.toml` there before it is loaded, so a run that kills the process
//! leaves its scenario behind, and a failing case to `failed.toml`;
//! `BURSTLAB_GENERATED_FILE=path/to/case.toml` checks that one scenario alone.

mod generated;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use burstlab_sim::record::{Column, Output};
use burstlab_sim::scenario::{self, Scenario, ScenarioError, budget};
use burstlab_sim::{Observer, Time};
use generated::Case;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use toml::Table;

/// The tests of this file measure the process's peak RSS: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(v.trim().parse().unwrap_or_else(|_| panic!("{name} = {v:?}: expected an integer")))
}

/// The draws of one scenario (`generated::scenario`); 1024 is more than any case reads.
fn cases() -> impl Strategy<Value = Case> {
    prop::collection::vec(any::<u32>(), 0..1024).prop_map(|d| generated::scenario(&d))
}

// ---- memory ----

/// A field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with(field)).expect(field);
    let kib: u64 = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect(field);
    kib * 1024
}

/// Resets `VmHWM` to the current RSS (proc(5), `/proc/pid/clear_refs`, value 5).
fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting VmHWM");
}

// ---- refusals ----

/// `"link[3]"` → `("link", Some(3))`.
fn segment(s: &str) -> (&str, Option<usize>) {
    match s.split_once('[') {
        Some((key, rest)) => (key, rest.trim_end_matches(']').parse().ok()),
        None => (s, None),
    }
}

/// Checks that `e` is one line naming a field of `root`: every table on its path is in the
/// scenario, and so is the field itself unless the error says it is missing or names the
/// default that drives a memory estimate (`topology.buffer`, `interval` left unset).
fn check_refusal(e: &ScenarioError, root: &Table) -> Result<(), String> {
    let line = e.to_string();
    if line.contains('\n') {
        return Err(format!("a refusal of more than one line: {line:?}"));
    }
    let (path, value) = match e {
        ScenarioError::Field { path, value, .. } => (path, value.clone()),
        ScenarioError::UnknownKey { path, .. } => (path, None),
        ScenarioError::OverBudget { path, .. } => (path, None),
        other => {
            return Err(format!("a {} error for a generated TOML tree: {other}", other.kind()));
        }
    };
    let may_be_absent = match e {
        ScenarioError::Field { value, .. } => value.is_none(),
        ScenarioError::OverBudget { .. } => true,
        _ => false,
    };
    let rest = path.strip_prefix("scenario.").ok_or_else(|| format!("{path}: not a field"))?;
    let segments: Vec<&str> = rest.split('.').collect();
    let mut table = root;
    for (k, seg) in segments.iter().enumerate() {
        let last = k + 1 == segments.len();
        let (key, index) = segment(seg);
        let Some(mut v) = table.get(key) else {
            if last && may_be_absent {
                return Ok(());
            }
            return Err(format!("{line}\n  names {path}, but the scenario has no {key} there"));
        };
        if let Some(i) = index {
            v = v
                .as_array()
                .and_then(|a| a.get(i))
                .ok_or_else(|| format!("{line}\n  names {path}, but there is no {key}[{i}]"))?;
        }
        if last {
            if let Some(shown) = value.filter(|s| *s != v.to_string()) {
                return Err(format!("{line}\n  shows {shown}, but the scenario has {v} there"));
            }
            return Ok(());
        }
        table = v
            .as_table()
            .ok_or_else(|| format!("{line}\n  names {path}, but {key} is not a table"))?;
    }
    Ok(())
}

// ---- runs ----

/// Engine panics already reported, with their reproducers: counted, not failed, so the rest
/// of what the generator finds stays in view. Remove a line when its bug is fixed.
const KNOWN_ENGINE_BUGS: [&str; 0] = [];

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<String>(), payload.downcast_ref::<&str>()) {
        (Some(s), _) => s.clone(),
        (None, Some(s)) => (*s).to_owned(),
        _ => "a panic without a message".to_owned(),
    }
}

/// Stops a run after `polls` × `OBSERVE_EVERY` events: a generated 400 Gbit/s flow for
/// months would otherwise run for days.
struct EventLimit {
    polls: u64,
}

impl Observer for EventLimit {
    fn poll(&mut self, _now: Time) -> ControlFlow<()> {
        if self.polls == 0 {
            return ControlFlow::Break(());
        }
        self.polls -= 1;
        ControlFlow::Continue(())
    }
}

/// Float columns whose NaN means "none" (`record/flows.rs`, `record/queries.rs`).
const NAN_IS_NULL: [(&str, &str); 4] = [
    ("flows", "end_s"),
    ("flows", "fct_s"),
    ("flows", "sender_done_s"),
    ("queries", "srtt_at_response_us"),
];

/// The records' own accounts agree: bytes conserved per flow, drops counted once, tables
/// within their caps, the clock within `stop`.
fn check_records(scn: &Scenario, out: &Output) -> Result<(), String> {
    let s = &out.summary;
    if s.engine.sim_time_s > scn.stop.as_secs_f64() {
        return Err(format!("ran to {} s, past stop {} s", s.engine.sim_time_s, scn.stop));
    }
    for f in &s.flows {
        if f.delivered_bytes > f.size_bytes && (f.kind == "udp" || f.fct_s.is_some()) {
            return Err(format!(
                "flow {} delivered {} of {} bytes",
                f.flow_id, f.delivered_bytes, f.size_bytes
            ));
        }
        if f.fct_s.is_some() && f.delivered_bytes != f.size_bytes {
            return Err(format!(
                "flow {} finished having delivered {} of its {} bytes",
                f.flow_id, f.delivered_bytes, f.size_bytes
            ));
        }
        let spec = scn.flows.get(f.flow_id as usize).and_then(|spec| spec.size_bytes);
        if let Some(size) = spec.filter(|&size| f.delivered_bytes > size) {
            return Err(format!(
                "flow {} delivered {} bytes of a {size}-byte transfer",
                f.flow_id, f.delivered_bytes
            ));
        }
    }
    let numbers =
        s.flows.iter().flat_map(|f| [Some(f.start_s), f.fct_s, Some(f.active_s), f.throughput_bps]);
    let numbers = numbers.chain(s.ports.iter().map(|p| p.mean_queue_bytes)).flatten();
    if let Some(x) = numbers.into_iter().find(|x| !x.is_finite()) {
        return Err(format!("a summary figure is {x}: {}", serde_json::to_string(s).unwrap()));
    }
    for t in &out.tables {
        for (name, col) in &t.columns {
            // NaN is these columns' null (an unfinished flow, a response without an SRTT).
            let null = NAN_IS_NULL.contains(&(t.name, *name));
            if let Column::F64(v) = col
                && let Some(i) = v.iter().position(|x| x.is_infinite() || x.is_nan() && !null)
            {
                return Err(format!("{}.{name} row {i} is {}", t.name, v[i]));
            }
        }
    }
    let caps = budget::row_caps(scn.memory_budget);
    for (table, cap) in [
        ("queue", caps.queue),
        ("drops", caps.drops),
        ("int", caps.int),
        ("intervals", caps.intervals),
    ] {
        let rows = out.table(table).map_or(0, |t| t.rows()) as u64;
        if rows > cap {
            return Err(format!("the {table} table holds {rows} rows, over its cap of {cap}"));
        }
    }
    let counted: u64 = s.ports.iter().map(|p| p.drops).sum();
    let not_kept = s.rows_not_kept.get("drops").copied().unwrap_or(0);
    let rows = out.table("drops").map_or(0, |t| t.rows()) as u64;
    if rows + not_kept != counted {
        return Err(format!(
            "ports counted {counted} drops; the drops table has {rows} rows and {not_kept} not kept"
        ));
    }
    Ok(())
}

/// The same scenario and seed give the same records (wall-clock figures aside); else what
/// differs first. NaN equals NaN here: a column's bits are compared, not its numbers.
fn same_records(a: &Output, b: &Output) -> Result<(), String> {
    let mut sa = a.summary.clone();
    let mut sb = b.summary.clone();
    for e in [&mut sa.engine, &mut sb.engine] {
        e.wall_s = 0.0;
        e.events_per_s = 0.0;
    }
    let (ja, jb) = (serde_json::to_string(&sa).unwrap(), serde_json::to_string(&sb).unwrap());
    if ja != jb {
        let at = ja.bytes().zip(jb.bytes()).take_while(|(x, y)| x == y).count();
        let around =
            |j: &str| j.get(at.saturating_sub(80)..(at + 80).min(j.len())).unwrap_or("").to_owned();
        return Err(format!("summaries differ: {}\n  vs {}", around(&ja), around(&jb)));
    }
    for (ta, tb) in a.tables.iter().zip(&b.tables) {
        for ((name, ca), (_, cb)) in ta.columns.iter().zip(&tb.columns) {
            let same = match (ca, cb) {
                (Column::F64(x), Column::F64(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
                }
                _ => ca == cb,
            };
            if !same {
                return Err(format!("column {}.{name} differs", ta.name));
            }
        }
    }
    Ok(())
}

/// What the cases did, for the closing line and the long run's log.
#[derive(Default)]
struct Stats {
    cases: u64,
    refused: BTreeMap<String, u64>,
    completed: u64,
    cut: u64,
    rerun: u64,
    /// Runs that hit a known engine bug ([`KNOWN_ENGINE_BUGS`]).
    known: BTreeMap<&'static str, u64>,
    capped: BTreeMap<&'static str, u64>,
    max_held: u64,
    /// The largest held / budget, and held / estimate, with the estimate and budget.
    max_of_budget: (f64, u64, u64),
    max_of_estimate: (f64, u64, u64),
    max_case_s: f64,
}

impl Stats {
    fn line(&self) -> String {
        let refused: Vec<String> = self.refused.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let capped: Vec<String> = self.capped.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let known: Vec<String> = self.known.iter().map(|(k, n)| format!("\"{k}\" {n}")).collect();
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        format!(
            "{} cases: refused {} ({}); ran {} to the end, {} cut at the event limit, {} run twice; \
             known engine bugs: {}; \
             tables capped: {}; peak held {:.1} MiB; most of its budget {:.0} % ({:.1} of {:.1} MiB); \
             most of its estimate {:.0} % ({:.1} MiB held, {:.1} MiB estimated); slowest case {:.1} s",
            self.cases,
            self.refused.values().sum::<u64>(),
            refused.join(", "),
            self.completed,
            self.cut,
            self.rerun,
            if known.is_empty() { "none".into() } else { known.join(", ") },
            if capped.is_empty() { "none".into() } else { capped.join(", ") },
            mib(self.max_held),
            self.max_of_budget.0 * 100.0,
            mib(self.max_of_budget.1),
            mib(self.max_of_budget.2),
            self.max_of_estimate.0 * 100.0,
            mib(self.max_of_estimate.1),
            mib(self.max_of_estimate.2),
            self.max_case_s,
        )
    }
}

/// Loads and runs one case, checking everything the module doc lists.
fn check_case(
    case: &Case,
    stats: &RefCell<Stats>,
    max_events: u64,
    dir: Option<&PathBuf>,
    rerun_every: u64,
) -> Result<(), TestCaseError> {
    let began = Instant::now();
    stats.borrow_mut().cases += 1;
    if let Some(d) = dir {
        std::fs::write(d.join("current.toml"), &case.toml).expect("writing current.toml");
    }
    let scn = match scenario::load(&case.toml, &[]) {
        Ok(scn) => scn,
        Err(e) => {
            check_refusal(&e, &case.root).map_err(TestCaseError::fail)?;
            *stats.borrow_mut().refused.entry(e.kind().to_owned()).or_default() += 1;
            return Ok(());
        }
    };
    let estimate = budget::estimate(&scn).total();
    prop_assert!(estimate <= scn.memory_budget, "accepted over budget: {estimate}");
    let polls = max_events / u64::from(burstlab_sim::observe::OBSERVE_EVERY);
    let before = status_bytes("VmRSS:");
    reset_peak_rss();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        burstlab_sim::run_observed(&scn, &mut EventLimit { polls })
    }));
    let held = status_bytes("VmHWM:").saturating_sub(before);
    let run = match run {
        Ok(run) => run,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            let Some(known) = KNOWN_ENGINE_BUGS.iter().find(|k| message.contains(*k)) else {
                std::panic::resume_unwind(payload);
            };
            *stats.borrow_mut().known.entry(known).or_default() += 1;
            return Ok(());
        }
    };
    prop_assert!(
        held <= scn.memory_budget,
        "the run held {held} bytes, over its memory budget of {} (estimate {estimate})",
        scn.memory_budget
    );
    let mut st = stats.borrow_mut();
    st.max_held = st.max_held.max(held);
    let of_budget = held as f64 / scn.memory_budget as f64;
    if of_budget > st.max_of_budget.0 {
        st.max_of_budget = (of_budget, held, scn.memory_budget);
    }
    let of_estimate = held as f64 / estimate as f64;
    if of_estimate > st.max_of_estimate.0 {
        st.max_of_estimate = (of_estimate, held, estimate);
    }
    let Ok(out) = run else {
        st.cut += 1;
        return Ok(());
    };
    st.completed += 1;
    for table in out.summary.rows_not_kept.keys() {
        *st.capped.entry(*table).or_default() += 1;
    }
    check_records(&scn, &out).map_err(TestCaseError::fail)?;
    if st.completed.is_multiple_of(rerun_every) {
        st.rerun += 1;
        drop(st);
        let again = burstlab_sim::run(&scn);
        same_records(&out, &again).map_err(|why| {
            TestCaseError::fail(format!("the same seed gave other records: {why}"))
        })?;
        st = stats.borrow_mut();
    }
    st.max_case_s = st.max_case_s.max(began.elapsed().as_secs_f64());
    Ok(())
}

/// `cases` from `seed`, shrinking a failure for at most `shrink_ms` (each step is a run).
fn runner(cases: u32, seed: u64, shrink_ms: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_time: shrink_ms,
        ..Config::default()
    };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

#[test]
fn generated_scenarios_are_refused_in_one_line_or_run_within_their_budget() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let seed = env_u64("BURSTLAB_GENERATED_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            as u64
    });
    let long = env_u64("BURSTLAB_GENERATED_SECONDS").map(Duration::from_secs);
    let n_cases = env_u64("BURSTLAB_GENERATED_CASES").unwrap_or(192) as u32;
    let max_events = env_u64("BURSTLAB_GENERATED_EVENTS").unwrap_or(if long.is_some() {
        20_000_000
    } else {
        1_000_000
    });
    let dir = std::env::var_os("BURSTLAB_GENERATED_DIR").map(PathBuf::from);
    if let Some(d) = &dir {
        std::fs::create_dir_all(d).expect("creating BURSTLAB_GENERATED_DIR");
    }
    let stats = RefCell::new(Stats::default());
    if let Some(file) = std::env::var_os("BURSTLAB_GENERATED_FILE") {
        // One scenario, such as a long run's failed.toml or current.toml, checked as a case.
        let toml = std::fs::read_to_string(&file).expect("reading BURSTLAB_GENERATED_FILE");
        let root: Table = toml.parse().expect("BURSTLAB_GENERATED_FILE is TOML");
        if let Err(why) = check_case(&Case { toml, root }, &stats, max_events, None, 1) {
            panic!("{}: {why}", PathBuf::from(file).display());
        }
        eprintln!("generated scenarios: {}", stats.borrow().line());
        return;
    }
    eprintln!("generated scenarios: seed {seed} (BURSTLAB_GENERATED_SEED repeats it)");
    let began = Instant::now();
    let mut batch = 0u64;
    let mut failures = Vec::new();
    loop {
        // A long run is batches of 64 cases, each from its own seed, until its time is up.
        let (n, s) = if long.is_some() { (64, seed.wrapping_add(batch)) } else { (n_cases, seed) };
        let shrink_ms = if long.is_some() { 30_000 } else { 120_000 };
        let result = runner(n, s, shrink_ms)
            .run(&cases(), |case| check_case(&case, &stats, max_events, dir.as_ref(), 8));
        match result {
            Ok(()) => {}
            Err(TestError::Fail(why, case)) => {
                let name = format!("failed-{}.toml", failures.len());
                if let Some(d) = &dir {
                    std::fs::write(d.join(&name), &case.toml).expect("writing a failed case");
                }
                let report = format!("seed {s}: {why}\nthe smallest scenario that fails:{case:?}");
                // A long run records the failure (in BURSTLAB_GENERATED_DIR) and goes on.
                if long.is_none() {
                    panic!("{report}");
                }
                eprintln!("FAILED ({name}) {report}");
                failures.push(why.to_string());
            }
            Err(TestError::Abort(why)) => panic!("seed {s}: {why}"),
        }
        batch += 1;
        match long {
            Some(limit) if began.elapsed() < limit => {
                eprintln!("[{:.0} s] {}", began.elapsed().as_secs_f64(), stats.borrow().line());
            }
            _ => break,
        }
    }
    eprintln!(
        "generated scenarios: {} in {:.0} s",
        stats.borrow().line(),
        began.elapsed().as_secs_f64()
    );
    let st = stats.borrow();
    assert!(failures.is_empty(), "{} failures: {failures:#?}", failures.len());
    // A generator whose every case is refused tests nothing.
    assert!(st.completed > 0, "no generated scenario ran to its end: {}", st.line());
}

// ---- the generator itself ----

/// What the accepted scenarios of a fixed sample hold.
#[derive(Default)]
struct Reach {
    accepted: u64,
    refused: BTreeMap<&'static str, u64>,
    /// Refusals by kind and field (indices left out), for tuning the generator.
    refused_at: BTreeMap<String, (u64, String)>,
    ccas: BTreeMap<String, u64>,
    presets: BTreeMap<&'static str, u64>,
    fq: u64,
    tbf: u64,
    ecn_modes: BTreeMap<String, u64>,
    incasts: u64,
    bursts: u64,
    int: u64,
    /// The largest estimate / budget of an accepted scenario.
    nearest_budget: f64,
}

#[test]
fn the_generator_reaches_every_cca_preset_qdisc_and_the_budget_s_edge() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut runner = runner(1, 7, 0);
    let mut r = Reach::default();
    for _ in 0..1500 {
        let case = cases().new_tree(&mut runner).expect("a case").current();
        if let Some(d) = std::env::var_os("BURSTLAB_GENERATED_DIR") {
            std::fs::write(PathBuf::from(d).join("current.toml"), &case.toml)
                .expect("current.toml");
        }
        let scn = match scenario::load(&case.toml, &[]) {
            Ok(scn) => scn,
            Err(e) => {
                *r.refused.entry(e.kind()).or_default() += 1;
                let field = match &e {
                    ScenarioError::Field { path, .. }
                    | ScenarioError::UnknownKey { path, .. }
                    | ScenarioError::OverBudget { path, .. } => path.clone(),
                    other => other.to_string(),
                };
                let field: String =
                    field.split('[').map(|p| p.split_once(']').map_or(p, |x| x.1)).collect();
                let at = r.refused_at.entry(format!("{} {field}", e.kind())).or_default();
                at.0 += 1;
                at.1 = e.to_string().chars().take(200).collect();
                continue;
            }
        };
        r.accepted += 1;
        let specs = scn.flows.iter().chain(scn.incasts.iter().map(|i| &i.tcp));
        for f in specs {
            *r.ccas.entry(f.cca.clone()).or_default() += 1;
            r.fq += u64::from(matches!(f.qdisc, scenario::HostQdisc::Fq(_)));
        }
        *r.presets.entry(scn.topology.preset.name()).or_default() += 1;
        let ports: Vec<&scenario::PortSpec> = match &scn.topology.graph {
            None => vec![&scn.topology.dumbbell.bottleneck],
            Some(g) => g.graph.links.iter().flat_map(|l| [&l.ab.port, &l.ba.port]).collect(),
        };
        r.tbf += u64::from(ports.iter().any(|p| p.shaper.is_some()));
        for e in ports.iter().flat_map(|p| &p.queues).filter_map(|q| q.ecn) {
            let mode = format!("{:?}", e.mode);
            *r.ecn_modes.entry(mode.split(' ').next().unwrap_or("").to_owned()).or_default() += 1;
        }
        r.incasts += u64::from(!scn.incasts.is_empty());
        r.bursts += u64::from(!scn.bursts.is_empty());
        r.int += u64::from(!scn.telemetry.int_ports.is_empty());
        let near = budget::estimate(&scn).total() as f64 / scn.memory_budget as f64;
        r.nearest_budget = r.nearest_budget.max(near);
    }
    let n = 1500;
    let mut common: Vec<_> = r.refused_at.iter().collect();
    common.sort_by_key(|(_, k)| std::cmp::Reverse(k.0));
    eprintln!(
        "accepted {} of {n}; refused most often at {:?}",
        r.accepted,
        &common[..common.len().min(12)]
    );
    eprintln!("presets {:?}; ccas {:?}; ecn {:?}", r.presets, r.ccas, r.ecn_modes);
    assert!(r.accepted * 4 >= n && r.accepted * 20 <= n * 19, "accepted {} of {n}", r.accepted);
    for kind in ["field", "memory_budget", "unknown_key"] {
        assert!(r.refused.get(kind).is_some_and(|&k| k > 0), "no {kind} refusal: {:?}", r.refused);
    }
    for cca in burstlab_sim::tcp::cc::names() {
        assert!(r.ccas.contains_key(cca), "no accepted flow runs {cca}: {:?}", r.ccas);
    }
    for (name, _) in scenario::Preset::ALL {
        assert!(r.presets.contains_key(name), "no accepted {name}: {:?}", r.presets);
    }
    assert!(r.ecn_modes.len() >= 3, "ECN modes accepted: {:?}", r.ecn_modes);
    for (what, k) in
        [("fq", r.fq), ("tbf", r.tbf), ("incast", r.incasts), ("burst", r.bursts), ("INT", r.int)]
    {
        assert!(k > 0, "no accepted scenario with {what}");
    }
    // Some accepted run is estimated at most of its budget: the generator reaches the edge.
    assert!(
        r.nearest_budget > 0.5,
        "the nearest accepted estimate is {:.2} of its budget",
        r.nearest_budget
    );
}

// ---- what the generator found, pinned ----

/// Scenarios the generator found that the validator accepted and the run could not survive,
/// and the one line each gets now.
#[test]
fn found_by_the_generator_refused_in_one_line() {
    let dumbbell = "name = \"found\"\n[topology]\nbottleneck_rate = \"16Mbps\"\nrtt = \"1ms\"\n";
    let cases = [
        // fq_change refuses a quantum above 1 MiB; the port built from it panicked.
        (
            "[[flow]]\nqdisc = \"fq\"\nfq_quantum = 248588102\n",
            "scenario.flow[0].fq_quantum = 248588102: expected an integer from 1 to 1048576",
        ),
        // Checking INT port names built the whole network first: 161 million burst hosts
        // aborted the process before the budget could refuse them.
        (
            "memory_budget = \"64MiB\"\n[[burst]]\nsources = 161668503\nrate = \"3Kbps\"\n\
             start = \"0s\"\nduration = \"1ms\"\n[telemetry]\nint_ports = [\"swA:swA->swB\"]\n",
            "scenario.burst[0].sources = 161668503: the run would hold about",
        ),
    ];
    for (extra, line) in cases {
        // Root keys go before [topology]; tables after it.
        let (root, tables) = extra.split_at(extra.find('[').unwrap_or(extra.len()));
        let text = format!("{root}{dumbbell}{tables}");
        let began = Instant::now();
        let e = scenario::load(&text, &[]).expect_err(&text);
        assert!(e.to_string().starts_with(line), "{e}");
        assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
    }
}

/// A connection's settings merge `[hosts]`, its hosts' `[[node]]` and its own entry: a bad
/// combination is reported where the bad key is written, not at the entry that lacks it.
#[test]
fn found_by_the_generator_a_host_s_key_is_named_where_it_is_written() {
    let graph = "name = \"found\"\n[topology]\npreset = \"racks\"\n\
                 [[flow]]\nsrc = \"h0\"\ndst = \"h1\"\ntcp_adv_win_scale = 1\n";
    let e = scenario::load(&format!("{graph}[hosts]\nskb_scaling_ratio = 114\n"), &[]).unwrap_err();
    assert!(
        e.to_string().starts_with("scenario.hosts.skb_scaling_ratio = 114: expected no"),
        "{e}"
    );
}

/// The budget is checked before the network is built to check INT port names, and counts the
/// INT rows of the ports as written: the refusal still names what drives the estimate.
#[test]
fn found_by_the_generator_int_ports_are_counted_before_the_network_is_built() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/int-burst.toml");
    let e = scenario::load_file(&file, &["memory_budget=1MiB".into()]).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::OverBudget { path, .. } if path == "scenario.telemetry.int_ports"),
        "{e}"
    );
}
