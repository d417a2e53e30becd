//! Scenarios the validator accepts at the edges of their fields, which once aborted the engine
//! (issue 41: no accepted scenario may abort the process). Each runs to `stop` and keeps its
//! own accounts.
mod common;
use burstlab_sim::record::FlowSummary;
use common::*;

fn dumbbell_1g(flow: &str, stop: &str) -> String {
    format!(
        r#"
name = "edge"
stop = "{stop}"

[topology]
preset = "dumbbell"
bottleneck_rate = "1Gbps"
host_rate = "1Gbps"
rtt = "100us"
buffer = "1MiB"

[[flow]]
cca = "cubic"
{flow}
"#
    )
}

fn only_flow(text: &str) -> FlowSummary {
    burstlab_sim::run(&load(text)).summary.flows.remove(0)
}

#[test]
fn acked_bytes_a_slow_reader_has_not_read_at_stop_are_not_lost() {
    // The byte is acknowledged within one RTT, but the application reads 20 ms later: at
    // `stop` it waits in the receive queue, acknowledged and unread.
    let f = only_flow(&dumbbell_1g("size = 1\nread_latency = \"20ms\"", "5ms"));
    assert_eq!(f.delivered_bytes, 0, "read before the reader woke: {f:?}");
    assert!(f.sender_done_s.is_some(), "the one byte was never acknowledged: {f:?}");
}

/// A window too small for one segment: the sender sends nothing and waits, as Linux's does
/// (`tcp_snd_wnd_test()`); it must not count the transfer as acknowledged.
fn stalls_unfinished(flow: &str) {
    let f = only_flow(&dumbbell_1g(&format!("size = 100000\n{flow}"), "50ms"));
    assert_eq!((f.delivered_bytes, f.sender_done_s, f.fct_s), (0, None, None), "{f:?}");
}

#[test]
fn a_one_byte_tcp_rmem_leaves_the_transfer_unfinished() {
    stalls_unfinished("tcp_rmem = \"1 1 1\"");
}

#[test]
fn tcp_adv_win_scale_minus_18_leaves_the_transfer_unfinished() {
    // The default 128 KiB tcp_rmem[1] >> 18 is a window of 0 bytes.
    stalls_unfinished("tcp_adv_win_scale = -18");
}

#[test]
fn an_fq_retransmission_is_held_to_the_departure_time_it_is_stamped_with() {
    // The generated scenario's failed-54.toml: a flow paced at 1.714 kbit/s through a host
    // fq stamps its retransmission tens of seconds ahead. It used to leave at once and be
    // acknowledged "before" it was sent (a negative RTT sample in `TcpSender::on_ack`).
    let text = r#"
name = "gen"
stop = "283.213063785ms"

[[flow]]
cca = "bbr3"
dst = "h1"
pacing_latency = "177.136ns"
src = "h4"

[[flow]]
cca = "htcp"
dst = "h6"
quickack = true
size = 10485760
src = "h4"

[[flow]]
dst = "h0"
max_pacing_rate = "1.714Kbps"
size = "6886380B"
src = "h7"

[hosts]
cca = "bbr3"
ecn = true
nic_rate = "32.858287534Gbps"
qdisc = "fq"
tcp_rmem = [1, "91845B", "763988979B"]

[topology]
buffer = 1500
host_rate = "1.533994608Gbps"
hosts_per_rack = 4
link_delay = "0.071ns"
preset = "racks"
racks = 2
record = false
"#;
    let out = burstlab_sim::run(&load(text));
    let paced = &out.summary.flows[2];
    // Past the ten unpaced segments (`tcp_update_skb_after_send()`), nothing more can leave
    // at 1.714 kbit/s within the run.
    assert!(paced.delivered_bytes <= 10 * 1448, "{paced:?}");
    assert!(paced.fct_s.is_none(), "{paced:?}");
    assert_eq!(out.summary.flows[1].delivered_bytes, 10_485_760);
}

#[test]
fn the_largest_initcwnd_route_accepts_runs_every_bbr() {
    // ip-route's initcwnd is a u32 and `tcp_init_cwnd()` bounds it only by `snd_cwnd_clamp`
    // (itself ~0U): cwnd starts at 2^32 - 1 packets, and growth saturates at the clamp.
    for cca in ["bbr", "bbr3"] {
        let text = dumbbell_1g("size = 1000000\ninitcwnd = 4294967295", "50ms")
            .replace("cca = \"cubic\"", &format!("cca = \"{cca}\""));
        let f = only_flow(&text);
        assert_eq!(f.delivered_bytes, 1_000_000, "{cca}: {f:?}");
        assert!(f.max_cwnd_bytes.is_some_and(|c| c >= 1_000_000), "{cca}: {f:?}");
    }
}
