//! `burstlab-bench SCENARIO.toml [--set path=value ...] [--repeat N]`: run a scenario in the
//! release engine and print wall time, CPU time, events per second of each, packet-hops (packets
//! serialized on a port; a hop through an idle port costs one event, a queued one two) and
//! peak memory — the figures of docs/performance.md. `--graph text|json|dot` prints the expanded network
//! instead. On a shared machine compare CPU time (or instruction counts), not wall time.

use std::process::ExitCode;
use std::time::Instant;

use burstlab_sim::scenario;

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// CPU time this thread has run, from the scheduler's own account (nanoseconds, unlike
/// `getrusage`'s clock ticks); the engine runs on the calling thread.
fn thread_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// Each TCP flow's FCT, or with many flows how many finished and their median and slowest.
fn fct_column(fcts: &[Option<f64>]) -> String {
    const LISTED: usize = 16;
    let show = |x: Option<f64>| x.map_or("unfinished".into(), |x| format!("{x:.3}"));
    if fcts.len() <= LISTED {
        return fcts.iter().map(|&x| show(x)).collect::<Vec<_>>().join(",");
    }
    let mut done: Vec<f64> = fcts.iter().flatten().copied().collect();
    done.sort_by(f64::total_cmp);
    let mut out = format!("{} of {} finished", done.len(), fcts.len());
    if let (Some(mid), Some(max)) = (done.get(done.len() / 2), done.last()) {
        out += &format!(": median {mid:.3}, max {max:.3}");
    }
    out
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut path = None;
    let mut sets = Vec::new();
    let mut repeat = 1;
    let mut json = false;
    let mut graph = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--set" => sets.push(it.next().cloned().unwrap_or_default()),
            "--json" => json = true,
            "--graph" => graph = it.next().cloned(),
            "--repeat" => repeat = it.next().and_then(|v| v.parse().ok()).unwrap_or(1),
            "-h" | "--help" => {
                println!(
                    "usage: burstlab-bench SCENARIO.toml [--set path=value ...] [--repeat N] [--json] [--graph text|json|dot]"
                );
                return ExitCode::SUCCESS;
            }
            _ => path = Some(a.clone()),
        }
    }
    let Some(path) = path else {
        eprintln!(
            "usage: burstlab-bench SCENARIO.toml [--set path=value ...] [--repeat N] [--json] [--graph text|json|dot]"
        );
        return ExitCode::from(2);
    };
    let scn = match scenario::load_file(std::path::Path::new(&path), &sets) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(format) = graph {
        // The expanded network, for checking a topology before running it.
        let view = scn.graph_view();
        match format.as_str() {
            "text" => print!("{}", view.to_text()),
            "json" => println!("{}", serde_json::to_string_pretty(&view).expect("view serializes")),
            "dot" => print!("{}", view.to_dot()),
            other => {
                eprintln!("--graph {other}: expected text, json or dot");
                return ExitCode::from(2);
            }
        }
        return ExitCode::SUCCESS;
    }
    println!(
        "scenario\trun\twall_s\tevents\tevents_per_s\tsim_time_s\tpeak_rss_mib\tcpu_s\tevents_per_cpu_s\tpacket_hops\tpacket_hops_per_cpu_s\tfct_s"
    );
    for r in 0..repeat {
        let t = Instant::now();
        let cpu0 = thread_cpu_s();
        let out = burstlab_sim::run(&scn);
        let wall = t.elapsed().as_secs_f64();
        let cpu = thread_cpu_s().zip(cpu0).map_or(f64::NAN, |(b, a)| b - a);
        if json {
            eprintln!(
                "{}",
                serde_json::to_string_pretty(&out.summary).expect("summary serializes")
            );
        }
        let e = &out.summary.engine;
        let fcts: Vec<Option<f64>> =
            out.summary.flows.iter().filter(|f| f.kind == "tcp").map(|f| f.fct_s).collect();
        println!(
            "{}\t{}\t{:.3}\t{}\t{:.0}\t{:.3}\t{:.0}\t{:.3}\t{:.0}\t{}\t{:.0}\t{}",
            scn.name,
            r,
            wall,
            e.events,
            e.events as f64 / wall,
            e.sim_time_s,
            peak_rss_mib().unwrap_or(f64::NAN),
            cpu,
            e.events as f64 / cpu,
            out.packet_hops,
            out.packet_hops as f64 / cpu,
            fct_column(&fcts)
        );
    }
    ExitCode::SUCCESS
}
