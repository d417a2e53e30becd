"""`burstlab collect` against the real servers it exports to: a Prometheus server (Debian's
`prometheus`) scraping `--metrics`, and an InfluxDB 1.x (Debian's `influxdb`) written by
`--influx`. A capture is replayed into the collector and the figures are read back from both
servers' HTTP APIs. The servers are installed by scripts/collect_servers.sh (run by
scripts/setup.sh); this test starts its own instances on free ports. Under CI=true a missing
server fails the test; elsewhere it skips, saying why."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from collect_support import RISE, collect_process, free_port, noviflow_profile, ramp_table, write_capture
from helpers import burstlab

pytestmark = pytest.mark.serial

#: 8,400 reports per queue: two whole ramps, then 1.6 ms of an idle queue, so every burst has
#: ended (a merge gap after its fall) while the collector still runs.
REPORTS = 4 * 8_400
BURSTS = 8
GARBAGE = 37


def _need(binary: str) -> str:
    path = shutil.which(binary)
    if path is None:
        why = f"{binary} is not installed (bash scripts/collect_servers.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return path


def _get(url: str, timeout: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def _wait_http(url: str, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{what} exited: {proc.stderr.read() if proc.stderr else ''}"
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status < 300:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{what} not ready at {url} within {timeout} s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A Prometheus scraping 127.0.0.1:<the port returned> every 200 ms; yields its URL and the
    port the collector must serve metrics on."""
    binary = _need("prometheus")
    target, web = free_port(socket.SOCK_STREAM), free_port(socket.SOCK_STREAM)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 200ms\n  scrape_timeout: 150ms\n"
        f"scrape_configs:\n  - job_name: burstlab\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
    )
    proc = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{web}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_http(f"http://127.0.0.1:{web}/-/ready", proc, "prometheus")
        yield f"http://127.0.0.1:{web}", target
    finally:
        _stop(proc)


@pytest.fixture
def influxdb(tmp_path: Path) -> Iterator[str]:
    """An InfluxDB 1.x with a database `int`; yields its URL."""
    binary = _need("influxd")
    http_port, rpc_port = free_port(socket.SOCK_STREAM), free_port(socket.SOCK_STREAM)
    root = tmp_path / "influx"
    config = tmp_path / "influxdb.conf"
    config.write_text(
        f'reporting-disabled = true\nbind-address = "127.0.0.1:{rpc_port}"\n'
        f'[meta]\n  dir = "{root}/meta"\n'
        f'[data]\n  dir = "{root}/data"\n  wal-dir = "{root}/wal"\n  query-log-enabled = false\n'
        f'[http]\n  bind-address = "127.0.0.1:{http_port}"\n  log-enabled = false\n'
        '[monitor]\n  store-enabled = false\n'
    )
    proc = subprocess.Popen([binary, "-config", str(config)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{http_port}"
    try:
        _wait_http(f"{url}/ping", proc, "influxd")
        request = urllib.request.Request(f"{url}/query", data=b"q=CREATE+DATABASE+int", method="POST")
        urllib.request.urlopen(request, timeout=5).read()
        yield url
    finally:
        _stop(proc)


def _prom(url: str, query: str) -> float:
    out = _get(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    result = out["data"]["result"]
    return float(result[0]["value"][1]) if result else float("nan")


def _influx(url: str, query: str) -> list:
    out = _get(f"{url}/query?" + urllib.parse.urlencode({"db": "int", "q": query}))
    series = out["results"][0].get("series", [])
    return series[0]["values"] if series else []


def test_prometheus_and_influxdb_read_back_what_collect_saw(tmp_path: Path, prometheus, influxdb):
    prom_url, metrics_port = prometheus
    capture = tmp_path / "ramps.pcap"
    table = ramp_table(REPORTS, lose_every=300)
    write_capture(capture, table)
    # Each queue's last reported occupancy: its idle tail, under the rise.
    rows = zip(table.column("switch_id").to_pylist(), table.column("egress_port").to_pylist(),
               table.column("queue_occupancy_bytes").to_pylist(), strict=True)
    last_occupancy = {(sw, p): occ for sw, p, occ in rows}
    assert len(last_occupancy) == 4 and max(last_occupancy.values()) < 400_000
    detected = json.loads(burstlab("detect", capture, "--rise", RISE, "--json").stdout)
    assert len(detected["bursts"]) == BURSTS and detected["reports_lost"] > 0
    port = free_port()
    proc = collect_process("--listen", f"127.0.0.1:{port}", "--profile", noviflow_profile(tmp_path / "p.toml", port),
                           "--rise", RISE, "--json", "--metrics", f"127.0.0.1:{metrics_port}",
                           "--influx", f"{influxdb}/write?db=int")
    events: list[dict] = []
    reader = threading.Thread(target=lambda: events.extend(json.loads(line) for line in proc.stdout), daemon=True)
    try:
        reader.start()
        deadline = time.monotonic() + 20
        while not events and time.monotonic() < deadline:
            time.sleep(0.05)
        assert events and events[0]["event"] == "listening", proc.stderr.read() if proc.poll() is not None else events
        sent = burstlab("replay", capture, "--to", f"127.0.0.1:{port}", "--speed", "max", "--json")
        assert sent.returncode == 0, sent.stderr
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for k in range(GARBAGE):
                s.sendto(bytes([k]) * (k + 3), ("127.0.0.1", port))
        # Prometheus scrapes every 200 ms: wait for a scrape that saw everything.
        deadline = time.monotonic() + 30
        while _prom(prom_url, "burstlab_malformed_total") != GARBAGE and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _prom(prom_url, "burstlab_reports_total") == detected["reports"]
        assert _prom(prom_url, "burstlab_malformed_total") == GARBAGE
        assert _prom(prom_url, "burstlab_kernel_drops_total") == 0
        assert _prom(prom_url, "sum(burstlab_reports_lost_per_stream_total)") == detected["reports_lost"]
        assert _prom(prom_url, "burstlab_reports_lost_per_stream_total{switch_id='1'}") > 0
        assert _prom(prom_url, "sum(burstlab_bursts_total)") == BURSTS
        assert _prom(prom_url, "sum(burstlab_burst_duration_seconds_count)") == BURSTS
        longest = max(b["duration_s"] for b in detected["bursts"])
        assert _prom(prom_url, "max(burstlab_burst_duration_seconds_sum)") >= longest
        assert _prom(prom_url, "count(burstlab_queue_occupancy_bytes)") == 4
        for (switch, port_id), occupancy in last_occupancy.items():
            labels = f"switch_id='{switch}',port='{port_id}',queue_id='0'"
            assert _prom(prom_url, f"burstlab_queue_occupancy_bytes{{{labels}}}") == occupancy
            assert _prom(prom_url, f"burstlab_queue_occupancy_max_bytes{{{labels}}}") >= occupancy
    finally:
        proc.send_signal(15)
        proc.wait(timeout=30)
        reader.join(timeout=10)
    assert proc.returncode == 0, proc.stderr.read()
    summary = events[-1]
    assert summary["event"] == "summary" and summary["reports"] == detected["reports"]
    # InfluxDB: every burst as a point, the collector's counters, loss per stream, and the
    # queues under the measurement AmLight's collector writes.
    bursts = _influx(influxdb, "SELECT duration_s, peak_bytes, top_culprit FROM burstlab_burst")
    assert len(bursts) == BURSTS
    assert sorted(round(v[1], 9) for v in bursts) == sorted(round(b["duration_s"], 9) for b in detected["bursts"])
    assert {v[3].split(":")[0] for v in bursts} <= {"10.0.0.1", "10.0.0.2"}
    last = _influx(influxdb, "SELECT last(reports), last(malformed), last(reports_lost) FROM burstlab_collector")
    assert last[0][1:] == [detected["reports"], GARBAGE, detected["reports_lost"]]
    lost = _influx(influxdb, "SELECT sum(lost) FROM (SELECT last(lost) AS lost FROM burstlab_report_loss "
                             "GROUP BY switch_id, hw_id)")
    assert lost[0][1] == detected["reports_lost"]
    for (switch, port_id), occupancy in last_occupancy.items():
        amlight = _influx(influxdb, f'SELECT last(value) FROM "queue_occ,sw={switch},port={port_id},queue=0"')
        assert amlight[0][1] == occupancy, (switch, port_id)
