//! The one error a scenario can fail with: a kind, and a one-line message naming the field, the
//! value and what was expected (pydantic-core's `input_value`/`type`, polars' error kinds).

use std::path::PathBuf;

use toml::Value;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("cannot read scenario {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML. Line and column are 1-based; the column counts characters.
    #[error("scenario is not valid TOML at line {line}, column {column}: {message}")]
    Syntax { line: usize, column: usize, message: String },
    /// A field is missing, of the wrong type, or out of range. `value` is the TOML spelling of
    /// what was given (`None` when the field is missing).
    #[error("{path}{}: expected {expected}", shown(.value))]
    Field { path: String, value: Option<String>, expected: String },
    /// A key the schema does not have, with the closest known key if one is near.
    #[error("{path}: unknown key{}", did_you_mean(.suggestion))]
    UnknownKey { path: String, suggestion: Option<String> },
    /// A `--set path=value` argument that cannot be applied.
    #[error("--set {arg}: {message}")]
    Override { arg: String, message: String },
    /// The run would hold more memory than its budget (`budget.rs`): the field that drives
    /// the estimate, its value, what it makes the run hold, the estimate and the budget.
    #[error(
        "{path} = {value}: the run would hold about {} ({what}), over the memory budget of {} \
         ({whence}); expected a smaller value, or a memory_budget above the estimate",
        super::budget::human(*.estimate),
        super::budget::human(*.budget)
    )]
    OverBudget {
        path: String,
        value: String,
        what: String,
        estimate: u64,
        budget: u64,
        whence: String,
    },
}

impl ScenarioError {
    /// Stable name of the kind, for the CLI's `--json` output and the Python exception classes.
    pub fn kind(&self) -> &'static str {
        match self {
            ScenarioError::Io { .. } => "io",
            ScenarioError::Syntax { .. } => "syntax",
            ScenarioError::Field { .. } => "field",
            ScenarioError::UnknownKey { .. } => "unknown_key",
            ScenarioError::Override { .. } => "override",
            ScenarioError::OverBudget { .. } => "memory_budget",
        }
    }

    /// A field error for a value that was given.
    pub(crate) fn field(path: &str, value: &Value, expected: impl Into<String>) -> ScenarioError {
        ScenarioError::Field {
            path: path.to_owned(),
            value: Some(value.to_string()),
            expected: expected.into(),
        }
    }

    /// A field error for a required value that was not given.
    pub(crate) fn missing(path: &str, expected: impl Into<String>) -> ScenarioError {
        ScenarioError::Field { path: path.to_owned(), value: None, expected: expected.into() }
    }

    /// Locates a TOML parser error in `text`.
    pub(crate) fn syntax(err: &toml::de::Error, text: &str) -> ScenarioError {
        let offset = err.span().map_or(0, |s| s.start).min(text.len());
        let before = text.get(..offset).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        let message = err.message().trim().lines().map(str::trim).collect::<Vec<_>>().join("; ");
        ScenarioError::Syntax { line, column, message }
    }
}

fn shown(value: &Option<String>) -> String {
    match value {
        Some(v) => format!(" = {v}"),
        None => " is missing".to_owned(),
    }
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean \"{s}\"?"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_path_value_and_expectation() {
        let e = ScenarioError::field(
            "scenario.flow[0].size",
            &Value::String("13GB!".into()),
            "a size such as \"13GiB\" or \"500MB\"",
        );
        assert_eq!(
            e.to_string(),
            "scenario.flow[0].size = \"13GB!\": expected a size such as \"13GiB\" or \"500MB\""
        );
        assert_eq!(e.kind(), "field");
    }

    #[test]
    fn field_missing_says_so() {
        let e = ScenarioError::missing("scenario.topology.rtt", "a time such as \"8ms\"");
        assert_eq!(
            e.to_string(),
            "scenario.topology.rtt is missing: expected a time such as \"8ms\""
        );
    }

    #[test]
    fn unknown_key_with_and_without_suggestion() {
        let e = ScenarioError::UnknownKey {
            path: "scenario.topology.bufer".into(),
            suggestion: Some("buffer".into()),
        };
        assert_eq!(e.to_string(), "scenario.topology.bufer: unknown key; did you mean \"buffer\"?");
        assert_eq!(e.kind(), "unknown_key");
        let e = ScenarioError::UnknownKey { path: "scenario.zzz".into(), suggestion: None };
        assert_eq!(e.to_string(), "scenario.zzz: unknown key");
    }

    #[test]
    fn syntax_locates_line_and_column() {
        let text = "name = \"x\"\nseed = = 1\n";
        let err = text.parse::<toml::Table>().unwrap_err();
        let e = ScenarioError::syntax(&err, text);
        match &e {
            ScenarioError::Syntax { line, column, .. } => {
                assert_eq!(*line, 2);
                assert!(*column >= 7, "column {column}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(!e.to_string().contains('\n'), "{e}");
        assert_eq!(e.kind(), "syntax");
    }

    #[test]
    fn kinds_are_stable_names() {
        let io = ScenarioError::Io {
            path: "x.toml".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(io.kind(), "io");
        assert!(io.to_string().starts_with("cannot read scenario x.toml: "));
        let o = ScenarioError::Override { arg: "a=b".into(), message: "m".into() };
        assert_eq!(o.kind(), "override");
        assert_eq!(o.to_string(), "--set a=b: m");
    }
}
