//! The scenario's key tree, shared by the unknown-key check and by `--set`, so that an override
//! may add a key the file leaves out but never one the schema lacks.

use toml::{Table, Value};

use super::error::ScenarioError;

/// A key's shape: a leaf value (typed by the parser), a table, or an array of tables.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Node {
    Leaf,
    Table(&'static [(&'static str, Node)]),
    Tables(&'static [(&'static str, Node)]),
}

use Node::Leaf;

pub(crate) const QUEUE: &[(&str, Node)] = &[
    ("buffer", Leaf),
    ("quantum", Leaf),
    ("dscp", Leaf),
    ("flows", Leaf),
    ("ecn_threshold", Leaf),
    ("ecn_mode", Leaf),
];

pub(crate) const TOPOLOGY: &[(&str, Node)] = &[
    ("preset", Leaf),
    ("bottleneck_rate", Leaf),
    ("host_rate", Leaf),
    ("burst_link_rate", Leaf),
    ("rtt", Leaf),
    ("mtu", Leaf),
    ("clock_ppm", Leaf),
    ("veth", Leaf),
    ("buffer", Leaf),
    ("scheduler", Leaf),
    ("ecn_threshold", Leaf),
    ("ecn_mode", Leaf),
    ("tbf_rate", Leaf),
    ("tbf_burst", Leaf),
    ("tbf_limit", Leaf),
    ("tbf_watchdog_latency", Leaf),
    ("bottleneck_pauses", Leaf),
    ("queue", Node::Tables(QUEUE)),
    ("leaves", Leaf),
    ("spines", Leaf),
    ("hosts_per_leaf", Leaf),
    ("fabric_rate", Leaf),
    ("oversubscription", Leaf),
    ("racks", Leaf),
    ("hosts_per_rack", Leaf),
    ("uplink_rate", Leaf),
    ("hops", Leaf),
    ("hosts_per_switch", Leaf),
    ("link_delay", Leaf),
    ("record", Leaf),
    ("pauses", Leaf),
];

/// A table's keys with an egress port's settings between its own first and last keys, in one
/// place for a link's two directions and the link itself.
macro_rules! with_port_settings {
    ([$($first:expr),*], [$($last:expr),*]) => {
        &[
            $($first,)*
            ("buffer", Leaf),
            ("scheduler", Leaf),
            ("ecn_threshold", Leaf),
            ("ecn_mode", Leaf),
            ("tbf_rate", Leaf),
            ("tbf_burst", Leaf),
            ("tbf_limit", Leaf),
            ("tbf_watchdog_latency", Leaf),
            ("pauses", Leaf),
            ("clock_ppm", Leaf),
            ("record", Leaf),
            ("queue", Node::Tables(QUEUE)),
            $($last,)*
        ]
    };
}

/// A graph link's egress-port keys (`[[link]]` for both directions, `[link.ab]`/`[link.ba]`).
pub(crate) const PORT: &[(&str, Node)] = with_port_settings!([], []);

pub(crate) const LINK: &[(&str, Node)] = with_port_settings!(
    [("a", Leaf), ("b", Leaf), ("rate", Leaf), ("delay", Leaf)],
    [("ab", Node::Table(PORT)), ("ba", Node::Table(PORT))]
);

/// A table's keys with a host's settings (every `[[flow]]` key a `[hosts]` table, a `[[node]]`
/// or a flow may set) between its own first and last keys, in one place for all three.
macro_rules! with_host_settings {
    ([$($first:literal),*], [$($last:literal),*]) => {
        &[
            $(($first, Leaf),)*
            ("tcp_rmem", Leaf),
            ("tcp_wmem", Leaf),
            ("rmem_max", Leaf),
            ("tcp_adv_win_scale", Leaf),
            ("scaling_ratio", Leaf),
            ("skb_scaling_ratio", Leaf),
            ("skb_truesize", Leaf),
            ("rcvbuf_tuning", Leaf),
            ("initcwnd", Leaf),
            ("initrwnd", Leaf),
            ("tcp_comp_sack_nr", Leaf),
            ("rto_min", Leaf),
            ("tcp_early_retrans", Leaf),
            ("quickack", Leaf),
            ("ecn", Leaf),
            ("hz", Leaf),
            ("dctcp_shift_g", Leaf),
            ("dctcp_alpha_on_init", Leaf),
            ("timers", Leaf),
            ("read_latency", Leaf),
            ("read_latency_dist", Leaf),
            ("first_read_latency", Leaf),
            ("read_hold", Leaf),
            ("handshake_latency", Leaf),
            ("rx_coalesce", Leaf),
            ("pacing_latency", Leaf),
            ("dscp", Leaf),
            ("max_pacing_rate", Leaf),
            ("gso_max_size", Leaf),
            ("qdisc", Leaf),
            ("fq_maxrate", Leaf),
            ("fq_flow_limit", Leaf),
            ("fq_quantum", Leaf),
            ("nic_rate", Leaf),
            ("cpu", Leaf),
            $(($last, Leaf),)*
        ]
    };
}

/// A host's settings: every `[[flow]]` key but the flow's own (size, start, hosts, path).
pub(crate) const HOST: &[(&str, Node)] = with_host_settings!(["cca"], []);

pub(crate) const NODE: &[(&str, Node)] = with_host_settings!(["name", "kind", "cca"], []);

pub(crate) const FLOW: &[(&str, Node)] = with_host_settings!(
    ["cca", "size", "start", "streams"],
    ["src", "dst", "path", "sender_cpu", "receiver_cpu"]
);

pub(crate) const BURST: &[(&str, Node)] = &[
    ("sources", Leaf),
    ("rate", Leaf),
    ("start", Leaf),
    ("duration", Leaf),
    ("packet_size", Leaf),
    ("dscp", Leaf),
    ("jitter", Leaf),
    ("clock_ppm", Leaf),
    ("src", Leaf),
    ("dst", Leaf),
];

pub(crate) const ROOT: &[(&str, Node)] = &[
    ("name", Leaf),
    ("seed", Leaf),
    ("stop", Leaf),
    ("interval", Leaf),
    ("memory_budget", Leaf),
    ("topology", Node::Table(TOPOLOGY)),
    ("flow", Node::Tables(FLOW)),
    ("incast", Node::Tables(INCAST)),
    ("websearch", Node::Tables(WEBSEARCH)),
    ("burst", Node::Tables(BURST)),
    ("telemetry", Node::Table(TELEMETRY)),
    ("node", Node::Tables(NODE)),
    ("link", Node::Tables(LINK)),
    ("hosts", Node::Table(HOST)),
];

pub(crate) const TELEMETRY: &[(&str, Node)] = &[("int_ports", Leaf), ("int_sample", Leaf)];

pub(crate) const INCAST: &[(&str, Node)] = &[
    ("senders", Leaf),
    ("query_size", Leaf),
    ("queries", Leaf),
    ("start", Leaf),
    ("gap", Leaf),
    ("serve_time", Leaf),
    ("serve_order", Leaf),
    ("one_sender_host", Leaf),
    ("src", Leaf),
    ("dst", Leaf),
    ("tcp", Node::Table(FLOW)),
];

pub(crate) const WEBSEARCH: &[(&str, Node)] = &[
    ("hosts", Leaf),
    ("load", Leaf),
    ("load_of", Leaf),
    ("queries_per_s", Leaf),
    ("query_size", Leaf),
    ("connections", Leaf),
    ("start", Leaf),
    ("stop", Leaf),
    ("tcp", Node::Table(FLOW)),
];

/// Rejects the first key (in key order, depth first) that `fields` does not list, and any
/// table or array of tables written with the wrong shape.
pub(crate) fn check_keys(
    table: &Table,
    fields: &[(&str, Node)],
    path: &str,
) -> Result<(), ScenarioError> {
    for (key, value) in table {
        let here = format!("{path}.{key}");
        let Some(&(_, node)) = fields.iter().find(|(name, _)| name == key) else {
            let suggestion = suggest(key, fields.iter().map(|(name, _)| *name)).map(str::to_owned);
            return Err(ScenarioError::UnknownKey { path: here, suggestion });
        };
        match (node, value) {
            (Node::Leaf, _) => {}
            (Node::Table(sub), Value::Table(t)) => check_keys(t, sub, &here)?,
            (Node::Table(_), v) => {
                return Err(ScenarioError::field(&here, v, format!("a table written [{key}]")));
            }
            (Node::Tables(sub), Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{here}[{i}]");
                    let Value::Table(t) = item else {
                        return Err(ScenarioError::field(
                            &at,
                            item,
                            format!("a table written [[{key}]]"),
                        ));
                    };
                    check_keys(t, sub, &at)?;
                }
            }
            (Node::Tables(_), v) => {
                let hint = format!(
                    "an array of tables written [[{}]]",
                    here.trim_start_matches("scenario.")
                );
                return Err(ScenarioError::field(&here, v, hint));
            }
        }
    }
    Ok(())
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo:
/// at most 2 edits, or a third of the word's length for long words (pip's "did you mean").
pub(crate) fn suggest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters (insert, delete, substitute, each costing 1).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_known_values() {
        assert_eq!(edit_distance("bufer", "buffer"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("cca", "cca"), 0);
    }

    #[test]
    fn suggest_typo_but_not_unrelated_words() {
        let keys = TOPOLOGY.iter().map(|(k, _)| *k);
        assert_eq!(suggest("bufer", keys.clone()), Some("buffer"));
        assert_eq!(suggest("bottleneck_rat", keys.clone()), Some("bottleneck_rate"));
        assert_eq!(suggest("colour", keys), None);
    }

    #[test]
    fn check_keys_unknown_nested_key_gets_suggestion() {
        let t: Table = "[topology]\nbufer = \"1MiB\"\n".parse().unwrap();
        let e = check_keys(&t, ROOT, "scenario").unwrap_err();
        assert_eq!(e.to_string(), "scenario.topology.bufer: unknown key; did you mean \"buffer\"?");
    }

    #[test]
    fn check_keys_flow_as_single_table_is_refused() {
        let t: Table = "[flow]\ncca = \"cubic\"\n".parse().unwrap();
        let e = check_keys(&t, ROOT, "scenario").unwrap_err();
        assert!(e.to_string().contains("scenario.flow = "), "{e}");
        assert!(e.to_string().contains("[[flow]]"), "{e}");
    }

    #[test]
    fn check_keys_inside_array_of_tables_names_the_index() {
        let t: Table =
            "[[flow]]\ncca = \"reno\"\n[[flow]]\ncca = \"reno\"\nintcwnd = 3\n".parse().unwrap();
        let e = check_keys(&t, ROOT, "scenario").unwrap_err();
        assert_eq!(
            e.to_string(),
            "scenario.flow[1].intcwnd: unknown key; did you mean \"initcwnd\"?"
        );
    }

    #[test]
    fn schema_keys_are_unique_per_table() {
        for fields in [
            ROOT, TOPOLOGY, QUEUE, FLOW, BURST, INCAST, WEBSEARCH, TELEMETRY, PORT, LINK, HOST,
            NODE,
        ] {
            let mut names: Vec<_> = fields.iter().map(|(k, _)| *k).collect();
            names.sort_unstable();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n);
        }
    }
}
