"""The traffic tool: struct tcp_info offsets, MIB parsing, and a live flow that pins both."""

from __future__ import annotations

import socket
import struct
import sys
from pathlib import Path

import pytest

from burstlab.validate import traffic
from burstlab.validate.real import TRAFFIC, _collect
from burstlab.validate.topology import Dumbbell


def test_tcp_info_offsets_match_uapi_layout() -> None:
    # Lay out a struct tcp_info by hand from include/uapi/linux/tcp.h: 8 u8, 24 u32 up to
    # tcpi_total_retrans at 100, then u64s from 104.
    raw = bytearray(232)
    raw[0:3] = bytes([1, 4, 2])                      # state, ca_state, retransmits
    struct.pack_into("=I", raw, 8, 408_000)           # rto after one backoff of 204 ms
    struct.pack_into("=I", raw, 16, 1448)             # snd_mss
    struct.pack_into("=I", raw, 68, 850)              # rtt
    struct.pack_into("=I", raw, 80, 78)               # snd_cwnd
    struct.pack_into("=I", raw, 100, 309)             # total_retrans
    struct.pack_into("=Q", raw, 120, 50_000_017)      # bytes_acked
    struct.pack_into("=Q", raw, 208, 447_432)         # bytes_retrans
    info = traffic.parse_tcp_info(bytes(raw))
    assert (info["state"], info["ca_state"], info["retransmits"]) == (1, 4, 2)
    assert (info["rto_us"], info["snd_mss"], info["rtt_us"], info["snd_cwnd"]) == (408_000, 1448, 850, 78)
    assert (info["total_retrans"], info["bytes_acked"], info["bytes_retrans"]) == (309, 50_000_017, 447_432)


def test_tcp_info_short_buffer_gives_none_for_missing_fields() -> None:
    info = traffic.parse_tcp_info(bytes(104))  # a kernel from before tcpi_pacing_rate
    assert info["total_retrans"] == 0
    assert info["bytes_acked"] is None and info["delivery_rate_Bps"] is None


def test_bbr_info_is_tcp_bbr_info_and_other_ccas_answers_are_not() -> None:
    # struct tcp_bbr_info (include/uapi/linux/inet_diag.h): bw_lo, bw_hi, min_rtt, pacing_gain,
    # cwnd_gain. A bandwidth above 4 GB/s needs bw_hi.
    raw = struct.pack("=5I", 0x2345_6789, 1, 38, 320, 512)
    assert traffic.parse_bbr_info(raw) == ((1 << 32) | 0x2345_6789, 38, 320)
    assert traffic.parse_bbr_info(struct.pack("=5I", 135_000_000, 0, 41, 256, 512)) == (135_000_000, 41, 256)
    # cubic and reno answer TCP_CC_INFO with nothing, DCTCP and Vegas with 16 bytes.
    assert traffic.parse_bbr_info(b"") is None
    assert traffic.parse_bbr_info(bytes(16)) is None


def test_read_wait_is_how_long_the_oldest_unread_byte_waited() -> None:
    import socket
    import time

    def tcp_pair() -> tuple[socket.socket, socket.socket]:
        with socket.create_server(("127.0.0.1", 0)) as srv:
            a = socket.create_connection(srv.getsockname())
            return a, srv.accept()[0]

    a, b = tcp_pair()
    with a, b:
        b.setsockopt(socket.SOL_SOCKET, traffic.SO_TIMESTAMPNS, 1)
        buf = bytearray(8)
        # The first socket to ask for stamps turns them on from a workqueue
        # (`net_enable_timestamp()`): until it has run, skbs arrive unstamped. Wait for a stamp.
        deadline = time.monotonic() + 5
        while True:
            a.sendall(b"w")
            if traffic.read_wait_us(b, buf)[1] is not None:
                break
            assert time.monotonic() < deadline, "no receive timestamps after 5 s"
            time.sleep(0.01)
        # Bounds come from the clock around each step, so a loaded machine that oversleeps
        # cannot fail the test: the wait lies between the sleep and the send-to-read time.
        sent = time.monotonic()
        a.sendall(b"x")
        time.sleep(0.02)
        k, wait = traffic.read_wait_us(b, buf)
        held_us = (time.monotonic() - sent) * 1e6
        assert (k, bytes(buf[:1])) == (1, b"x")
        assert wait is not None and 20_000 <= wait <= held_us + 500, (wait, held_us)
        # The next byte's wait counts from its own arrival, not from the connection's last
        # read 50 ms earlier.
        time.sleep(0.05)
        sent = time.monotonic()
        a.sendall(b"y")
        time.sleep(0.002)
        k, wait = traffic.read_wait_us(b, buf)
        held_us = (time.monotonic() - sent) * 1e6
        assert (k, bytes(buf[:1])) == (1, b"y")
        assert wait is not None and 2_000 <= wait <= held_us + 500, (wait, held_us)
    c, d = tcp_pair()
    with c, d:  # without the option there is no timestamp to report
        c.sendall(b"x")
        assert traffic.read_wait_us(d, bytearray(1)) == (1, None)


def test_a_sampled_read_times_how_long_it_holds_the_socket() -> None:
    """The sampled read's second part takes what is queued without waiting: its time is how
    long the read holds the socket, and it is kept only where asked for."""
    import socket
    import time

    with socket.create_server(("127.0.0.1", 0)) as srv:
        a = socket.create_connection(srv.getsockname())
        b = srv.accept()[0]
    with a, b:
        a.sendall(b"z" * 200_000)
        time.sleep(0.05)
        buf = bytearray(1 << 20)
        waits: list = []
        holds: list[float] = []
        k = traffic.sampled_read(b, buf, len(buf), 0, waits, None, holds)
        assert k > 1 and len(holds) == 1 and 0 <= holds[0] < 1_000_000, (k, holds)
        # A read that is not sampled, or a caller that keeps no holds, times nothing.
        a.sendall(b"z" * 1000)
        time.sleep(0.02)
        assert traffic.sampled_read(b, buf, len(buf), 1, waits, None, holds) > 0 and len(holds) == 1
        a.sendall(b"z" * 1000)
        time.sleep(0.02)
        assert traffic.sampled_read(b, buf, len(buf), 0, waits, None) > 0 and len(holds) == 1


def test_midpoint_quantiles_split_the_values_into_equal_slices() -> None:
    # 0..100 in steps of 1: the midpoints of 10 slices are 5, 15, ..., 95.
    assert traffic.midpoint_quantiles([float(v) for v in range(101)], 10) == pytest.approx(range(5, 100, 10))
    assert traffic.midpoint_quantiles([7.0], 3) == [7.0, 7.0, 7.0]
    assert traffic.midpoint_quantiles([]) == []


def test_reader_gaps_leave_out_the_data_stalling() -> None:
    # 1 byte/ns on average. A 100 us gap that found 100 kB: the reader was late. A 2 ms gap
    # that found 1 kB: the data had stopped (a loss being repaired), not the reader.
    t = [0, 100_000, 2_100_000, 2_200_000]
    sizes = [0, 100_000, 1_000, 2_099_000]
    assert traffic.reader_gaps_us(t, sizes) == [100.0, 100.0]
    assert traffic.reader_gaps_us([5], [10]) == []


def test_listener_gives_accepted_connections_its_cca() -> None:
    # Set before listen(): a connection arriving at once must not get the namespace default.
    with traffic.listener(0, 4, 5.0, "reno") as srv:
        c = socket.create_connection(srv.getsockname())
        s, _ = srv.accept()
        with c, s:
            assert traffic.cca_of(s) == "reno"


def test_mib_parsed_as_name_value_line_pairs(tmp_path: Path) -> None:
    (tmp_path / "snmp").write_text(
        "Tcp: RtoAlgorithm RtoMin CurrEstab RetransSegs OutSegs\nTcp: 1 200 3 10 500\n")
    (tmp_path / "netstat").write_text(
        "TcpExt: TCPTimeouts DelayedACKs\nTcpExt: 2 7\nIpExt: InOctets\nIpExt: 900\n")
    before = traffic.read_mib(tmp_path)
    assert before["Tcp.RetransSegs"] == 10 and before["TcpExt.TCPTimeouts"] == 2
    assert before["IpExt.InOctets"] == 900
    after = {**before, "Tcp.RetransSegs": 14, "Tcp.CurrEstab": 1, "IpExt.InOctets": 1000}
    delta = traffic.mib_delta(before, after)
    assert delta["Tcp.RetransSegs"] == 4 and delta["TcpExt.TCPTimeouts"] == 0
    assert delta["IpExt.InOctets"] == 100
    assert "Tcp.CurrEstab" not in delta  # a gauge, not a counter


def test_the_receivers_scaling_ratio_comes_back_from_its_buffer_and_clamp() -> None:
    # Traced on 6.18 (`tcp:tcp_probe`): after the first full-sized skb, and after DRS steps.
    assert traffic.scaling_ratio_of(131072, 117248) == 229
    assert traffic.scaling_ratio_of(3398946, 3040463) == 229
    assert traffic.scaling_ratio_of(2506382, 2428057) == 248
    # The clamp `tcp_init_buffer_space()` left (64 KiB less one segment): no ratio gives it.
    assert traffic.scaling_ratio_of(131072, 64088) is None


@pytest.mark.netns
def test_bulk_flow_reports_kernel_counters_consistently() -> None:
    size = 2_000_000
    py = sys.executable
    with Dumbbell() as net:
        rx = net.spawn(net.receiver_ns, [py, str(TRAFFIC), "--timeout", "20", "bulk-recv", "--port", "5001"])
        tx = net.spawn(net.sender_ns[0], [py, str(TRAFFIC), "--timeout", "20", "bulk-send", "--host",
                                          net.receiver_addr, "--port", "5001", "--bytes", str(size),
                                          "--cca", "cubic"])
        recv, send = _collect([rx, tx], 25)
        drops = net.qdisc_stats()["drops"]
    info = send["tcp_info"]
    assert send["cca"] == "cubic"
    assert info["state"] == 1                        # TCP_ESTABLISHED: offsets line up
    assert info["snd_mss"] == 1500 - 20 - 20 - 12    # veth MTU - IP - TCP - timestamps option
    # bytes_acked counts the SYN's sequence number too; 16 is our header.
    assert info["bytes_acked"] == size + 16 + 1
    # The receiver reads its tcp_info after acknowledging; if the sender's FIN already arrived,
    # its sequence number is counted too (tcp_rcv_nxt_update covers end_seq, FIN included).
    assert recv["bytes"] == size and recv["tcp_info"]["bytes_received"] in (size + 16, size + 17)
    assert info["unacked"] == 0 and info["retransmits"] == 0
    assert info["total_retrans"] == send["mib"]["Tcp.RetransSegs"]  # one flow in the namespace
    assert send["mib"]["Tcp.RetransSegs"] >= drops   # every tbf drop is a data segment resent
    assert 0 < recv["fct_s"] and send["connect_s"] < recv["first_byte_s"] <= recv["fct_s"]
    # Kernels >= 6.6 measure the receiver's ratio from its first full-sized skb.
    assert recv["scaling_ratio"] is None or 1 <= recv["scaling_ratio"] <= 255
