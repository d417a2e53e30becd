//! `[[websearch]]`: the web-search workload (`app::websearch`) among named hosts of a graph.
//! The hosts and their link rate are attached in `graph.rs`, with the other traffic.

use super::error::ScenarioError;
use super::fields::Fields;
use super::traffic;
use super::units::format_time;
use crate::app::websearch::{FlowArrivalSpec, LoadOf, SizeCdf, WebSearchSpec};
use crate::time::Time;
use crate::units::Rate;

type Result<T> = std::result::Result<T, ScenarioError>;

/// The S-ECN paper's total response per query (seeds/004 §IV-D: "The total response size is
/// 100KB").
const DEFAULT_QUERY_BYTES: u64 = 100_000;
/// Persistent connections per ordered pair for background flows: at load 0.6 a pair starts
/// ~4 flows a second, most over in milliseconds, so a flow rarely finds all of them busy.
const DEFAULT_CONNECTIONS: i64 = 8;

/// A `[[websearch]]` table; its `hosts` are names that `graph::attach` resolves (and the
/// rate `load` is a share of, per `load_of`, is set there once the routes are known).
pub(crate) fn websearch(q: &Fields, stop: Time) -> Result<WebSearchSpec> {
    let hosts = q.required(
        "hosts",
        q.strings("hosts", "an array of host names")?,
        "an array of at least two host names, such as [\"h0\", \"h1\", \"h2\"]",
    )?;
    q.ensure("hosts", (2..=256).contains(&hosts.len()), || {
        "from 2 to 256 host names, such as [\"h0\", \"h1\", \"h2\"]".into()
    })?;
    let n = hosts.len() as u32;
    let number = |key: &str, expected: &str| {
        q.read(key, expected, |v| {
            let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64))?;
            (x.is_finite() && x >= 0.0).then_some(x)
        })
    };
    let load_of = q
        .choice(
            "load_of",
            &[("host-link", LoadOf::HostLink), ("busiest-link", LoadOf::BusiestLink)],
        )?
        .unwrap_or_default();
    let share = match load_of {
        LoadOf::HostLink => "a share of each host's link from 0 to 1, such as 0.4",
        LoadOf::BusiestLink => "a share of the busiest link from 0 to 1, such as 0.4",
    };
    let load = number("load", share)?.unwrap_or(0.0);
    q.ensure("load", load <= 1.0, || share.into())?;
    let queries_per_s =
        number("queries_per_s", "queries per second per host, 0 or more, such as 100")?
            .unwrap_or(0.0);
    q.ensure("load", load > 0.0 || queries_per_s > 0.0, || {
        "a background load above 0, or queries_per_s above 0 (nothing to run)".into()
    })?;
    let query_bytes = q.size("query_size")?.unwrap_or(DEFAULT_QUERY_BYTES);
    q.ensure("query_size", query_bytes >= u64::from(n - 1), || {
        format!("at least one byte per answering host ({})", n - 1)
    })?;
    let connections = q.integer("connections", 1..=64)?.unwrap_or(DEFAULT_CONNECTIONS) as u32;
    let start = q.time("start")?.unwrap_or(Time::ZERO);
    q.ensure("start", start < stop, || {
        format!("a start before scenario.stop ({})", format_time(stop))
    })?;
    let until = q.time("stop")?.unwrap_or(stop);
    q.ensure("stop", until > start && until <= stop, || {
        format!(
            "a time after start ({}), no later than scenario.stop ({})",
            format_time(start),
            format_time(stop)
        )
    })?;
    let t = q.table("tcp");
    if t.has("streams") {
        return Err(
            t.error("streams", "no streams here: the workload's connections are its streams")
        );
    }
    for key in ["size", "start", "src", "dst"] {
        if t.has(key) {
            return Err(t.error(key, format!("no {key} here: the workload sets it")));
        }
    }
    Ok(WebSearchSpec {
        hosts: n,
        background: FlowArrivalSpec {
            load,
            rate: Rate(0),
            start,
            stop: until,
            sizes: SizeCdf::web_search(),
        },
        queries_per_s,
        query_bytes,
        connections,
        load_of,
        tcp: traffic::flow(&t, stop)?,
    })
}
