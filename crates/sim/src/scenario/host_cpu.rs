//! A host's `cpu` (`crate::host::cpu`): a profile's name, or a table of parameters that may
//! start from a `profile`.
//!
//! ```toml
//! cpu = "server-100g"
//! cpu = { profile = "server-100g", cores = 4 }
//! cpu = { cores = 1, ring = 512, rx_packet = "300ns", rx_skb = "1us", copy_rate = "40Gbps" }
//! ```

use toml::Value;

use super::error::ScenarioError;
use super::fields::Fields;
use super::schema::suggest;
use crate::host::cpu::{HostCpuSpec, PROFILES};
use crate::packet::{IPV4_HEADER_BYTES, TCP_HEADER_BYTES};

type Result<T> = std::result::Result<T, ScenarioError>;

/// The keys of a `cpu` table.
const KEYS: [&str; 12] = [
    "profile",
    "cores",
    "ring",
    "gro",
    "gro_max",
    "tso",
    "rx_packet",
    "rx_skb",
    "rx_byte_rate",
    "copy_rate",
    "tx_skb",
    "tx_byte_rate",
];

fn profile_names() -> String {
    PROFILES.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

fn expected() -> String {
    format!(
        "a CPU profile ({}) or a table of its parameters such as {{ profile = \"server-100g\", \
         cores = 4 }}",
        profile_names()
    )
}

/// `key` of `q` (`cpu`, `sender_cpu`, `receiver_cpu`), if set.
pub(crate) fn cpu(q: &Fields, key: &str) -> Result<Option<Box<HostCpuSpec>>> {
    let Some(v) = q.table_ref().get(key) else { return Ok(None) };
    let path = q.path(key);
    let named = |name: &str, at: &str, v: &Value| {
        HostCpuSpec::profile(name).ok_or_else(|| {
            ScenarioError::field(at, v, format!("one of the CPU profiles {}", profile_names()))
        })
    };
    match v {
        Value::String(name) => named(name, &path, v).map(|s| Some(Box::new(s))),
        Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
                let suggestion = suggest(k, KEYS.iter().copied()).map(str::to_owned);
                return Err(ScenarioError::UnknownKey { path: format!("{path}.{k}"), suggestion });
            }
            let f = Fields::new(t, path.clone());
            let base = match t.get("profile") {
                None => HostCpuSpec::free(),
                Some(p) => match p.as_str() {
                    Some(name) => named(name, &f.path("profile"), p)?,
                    None => return Err(f.error("profile", "a profile's name")),
                },
            };
            table(&f, base).map(|s| Some(Box::new(s)))
        }
        _ => Err(ScenarioError::field(&path, v, expected())),
    }
}

/// The table's parameters over `base`.
fn table(f: &Fields, base: HostCpuSpec) -> Result<HostCpuSpec> {
    let cores = f.integer("cores", 1..=4096)?.map_or(base.cores, |v| v as u32);
    let ring = f.integer("ring", 1..=1 << 20)?.map_or(base.ring, |v| v as u32);
    let gro_max = f.size("gro_max")?.unwrap_or(u64::from(base.gro_max));
    // One full-sized IP packet of the smallest MTU must fit; BIG TCP's 512 KiB at most.
    let least = u64::from(IPV4_HEADER_BYTES + TCP_HEADER_BYTES + 1);
    f.ensure("gro_max", (least..=512 << 10).contains(&gro_max), || {
        format!("a size from {least} B to 512KiB (64KiB by default; BIG TCP raises it)")
    })?;
    Ok(HostCpuSpec {
        profile: base.profile.clone(),
        cores,
        ring,
        gro: f.boolean("gro")?.unwrap_or(base.gro),
        gro_max: gro_max as u32,
        tso: f.boolean("tso")?.unwrap_or(base.tso),
        rx_packet: f.time("rx_packet")?.unwrap_or(base.rx_packet),
        rx_skb: f.time("rx_skb")?.unwrap_or(base.rx_skb),
        rx_byte_rate: f.rate("rx_byte_rate")?.or(base.rx_byte_rate),
        copy_rate: f.rate("copy_rate")?.or(base.copy_rate),
        tx_skb: f.time("tx_skb")?.unwrap_or(base.tx_skb),
        tx_byte_rate: f.rate("tx_byte_rate")?.or(base.tx_byte_rate),
    })
}
