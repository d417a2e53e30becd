//! `--set path=value`: edits the TOML tree before validation, so an overridden value is checked
//! exactly like one written in the file.
//!
//! `path` is dotted keys with optional indices: `topology.buffer`, `flow[0].cca`, `flow.0.cca`,
//! `topology.queue[1].dscp`; a leading `scenario.` (as printed in error messages) is accepted.
//! `value` is read as a TOML value when it is one (`3`, `true`, `[46, 10]`, `"x"`) and as a
//! bare string otherwise (`32MiB`, `reno`).

use toml::{Table, Value};

use super::error::ScenarioError;
use super::schema::{self, Node};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Applies one `--set` argument to `root`.
pub(crate) fn apply(root: &mut Table, arg: &str) -> Result<(), ScenarioError> {
    let fail = |message: String| ScenarioError::Override { arg: arg.to_owned(), message };
    let (path, raw) = arg
        .split_once('=')
        .ok_or_else(|| fail("expected path=value, such as topology.buffer=32MiB".to_owned()))?;
    let path = path.trim();
    let segments = parse_path(path.strip_prefix("scenario.").unwrap_or(path)).map_err(fail)?;
    set(root, &segments, parse_value(raw)).map_err(fail)
}

/// A TOML value if `raw` is one, else the text as a string.
fn parse_value(raw: &str) -> Value {
    let raw = raw.trim();
    raw.parse::<Value>().unwrap_or_else(|_| Value::String(raw.to_owned()))
}

fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    let bad = || format!("\"{path}\" is not a path such as topology.buffer or flow[0].cca");
    let mut segments = Vec::new();
    for part in path.split('.') {
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            segments.push(Segment::Index(part.parse().map_err(|_| bad())?));
            continue;
        }
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if key.is_empty() {
            return Err(bad());
        }
        segments.push(Segment::Key(key.to_owned()));
        while !rest.is_empty() {
            let inner = rest.strip_prefix('[').and_then(|r| r.split_once(']')).ok_or_else(bad)?;
            segments.push(Segment::Index(inner.0.trim().parse().map_err(|_| bad())?));
            rest = inner.1;
        }
    }
    Ok(segments)
}

/// Walks `segments` through the schema and the tree, creating absent tables on the way, and
/// stores `value` at the leaf.
fn set(root: &mut Table, segments: &[Segment], value: Value) -> Result<(), String> {
    let mut table = root;
    let mut fields = schema::ROOT;
    let mut shown = String::new();
    let mut i = 0;
    loop {
        let Some(Segment::Key(key)) = segments.get(i) else {
            let what =
                if shown.is_empty() { "the scenario".to_owned() } else { format!("\"{shown}\"") };
            let hint = example(&shown, fields);
            return Err(format!("{what} is a table: name one of its keys, such as {hint}"));
        };
        let here = join(&shown, key);
        let Some(&(_, node)) = fields.iter().find(|(name, _)| name == key) else {
            let hint = schema::suggest(key, fields.iter().map(|(name, _)| *name))
                .map(|s| format!("; did you mean \"{}\"?", join(&shown, s)))
                .unwrap_or_default();
            return Err(format!("unknown key \"{here}\"{hint}"));
        };
        let last = i + 1 == segments.len();
        match node {
            Node::Leaf if last => {
                table.insert(key.clone(), value);
                return Ok(());
            }
            Node::Leaf => return Err(format!("\"{here}\" is a single value, not a table")),
            Node::Table(sub) => {
                let entry = table.entry(key.clone()).or_insert_with(|| Value::Table(Table::new()));
                let Value::Table(t) = entry else {
                    return Err(format!("\"{here}\" is not a table in the scenario"));
                };
                (table, fields, shown, i) = (t, sub, here, i + 1);
            }
            Node::Tables(sub) => {
                let Some(&Segment::Index(index)) = segments.get(i + 1) else {
                    return Err(format!(
                        "\"{here}\" is an array of tables: give an index, such as {here}[0]"
                    ));
                };
                let items = match table.get_mut(key.as_str()) {
                    Some(Value::Array(items)) => items.as_mut_slice(),
                    Some(_) => {
                        return Err(format!(
                            "\"{here}\" is not an array of tables in the scenario"
                        ));
                    }
                    None => &mut [],
                };
                let len = items.len();
                let Some(Value::Table(t)) = items.get_mut(index) else {
                    return Err(format!("index {index} is past the end of {here} (length {len})"));
                };
                (table, fields, shown, i) = (t, sub, format!("{here}[{index}]"), i + 2);
            }
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_owned() } else { format!("{prefix}.{key}") }
}

/// `prefix.key` for the first leaf key of `fields`, to show how to name a key inside a table.
fn example(prefix: &str, fields: &[(&str, Node)]) -> String {
    let first = fields.iter().find(|(_, n)| matches!(n, Node::Leaf)).map_or("name", |(k, _)| *k);
    join(prefix, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Table {
        "name = \"t\"\n[topology]\nrtt = \"8ms\"\n[[flow]]\ncca = \"cubic\"\n".parse().unwrap()
    }

    fn message(t: &mut Table, arg: &str) -> String {
        apply(t, arg).unwrap_err().to_string()
    }

    #[test]
    fn set_leaf_string_and_number() {
        let mut t = tree();
        apply(&mut t, "topology.buffer=32MiB").unwrap();
        apply(&mut t, "seed=7").unwrap();
        assert_eq!(t["topology"]["buffer"], Value::String("32MiB".into()));
        assert_eq!(t["seed"], Value::Integer(7));
    }

    #[test]
    fn set_index_both_spellings() {
        let mut t = tree();
        apply(&mut t, "flow[0].cca=reno").unwrap();
        assert_eq!(t["flow"][0]["cca"], Value::String("reno".into()));
        apply(&mut t, "flow.0.cca=bbr").unwrap();
        assert_eq!(t["flow"][0]["cca"], Value::String("bbr".into()));
        apply(&mut t, "scenario.flow[0].quickack=true").unwrap();
        assert_eq!(t["flow"][0]["quickack"], Value::Boolean(true));
    }

    #[test]
    fn set_array_value_and_creates_absent_table() {
        let mut t: Table = "name = \"t\"\n".parse().unwrap();
        apply(&mut t, "topology.mtu=9000").unwrap();
        assert_eq!(t["topology"]["mtu"], Value::Integer(9000));
        let mut t = tree();
        apply(&mut t, "flow[0].tcp_rmem=[4096, 131072, 6291456]").unwrap();
        assert_eq!(t["flow"][0]["tcp_rmem"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn unknown_path_suggests_full_path() {
        let mut t = tree();
        assert_eq!(
            message(&mut t, "topology.bufer=32MiB"),
            "--set topology.bufer=32MiB: unknown key \"topology.bufer\"; did you mean \"topology.buffer\"?"
        );
        assert_eq!(
            message(&mut t, "flow[0].ccaa=reno"),
            "--set flow[0].ccaa=reno: unknown key \"flow[0].ccaa\"; did you mean \"flow[0].cca\"?"
        );
    }

    #[test]
    fn index_past_end_names_length() {
        let mut t = tree();
        assert_eq!(
            message(&mut t, "flow[3].cca=reno"),
            "--set flow[3].cca=reno: index 3 is past the end of flow (length 1)"
        );
        assert_eq!(
            message(&mut t, "burst[0].start=2s"),
            "--set burst[0].start=2s: index 0 is past the end of burst (length 0)"
        );
    }

    #[test]
    fn malformed_arguments() {
        let mut t = tree();
        assert!(message(&mut t, "topology.buffer").contains("expected path=value"));
        assert!(message(&mut t, "flow[x].cca=reno").contains("is not a path"));
        assert!(message(&mut t, "flow[0.cca=reno").contains("is not a path"));
        assert!(message(&mut t, ".cca=reno").contains("is not a path"));
        assert!(message(&mut t, "flow.cca=reno").contains("give an index, such as flow[0]"));
        assert!(message(&mut t, "name.x=1").contains("is a single value"));
        assert!(
            message(&mut t, "topology=1")
                .contains("\"topology\" is a table: name one of its keys, such as topology.preset")
        );
        assert!(
            message(&mut t, "flow[0]=1")
                .contains("\"flow[0]\" is a table: name one of its keys, such as flow[0].cca")
        );
    }
}
