"""The Parquet store of `burstlab collect --out`: files rotate by time and by size, each appears
under its final name only once whole, `burstlab query DIR` reads the closed ones while
collection runs, and a restart on the same DIR goes on (numbering after the last file, the
unfinished ones removed). Malformed floods and floods of distinct switch ids are counted and
stay under the stream cap."""

from __future__ import annotations

import json
import random
import socket
import threading
from pathlib import Path

import pyarrow.parquet as pq

from burstlab.collect import Collection, replay
from burstlab.collect.store import Store
from collect_support import RISE, ramp_table, write_capture
from helpers import burstlab


def _collection(tmp_path: Path, **kw) -> Collection:
    c = Collection(["127.0.0.1:0"], out=tmp_path / "live", rise=RISE, **kw)
    port = int(c.addresses[0].rsplit(":", 1)[1])
    c.port = port  # type: ignore[attr-defined]
    return c


def _feed(capture: Path, port: int, **kw) -> threading.Thread:
    t = threading.Thread(target=replay, args=(capture, f"127.0.0.1:{port}"), kwargs=kw, daemon=True)
    t.start()
    return t


def test_files_rotate_by_size_and_query_reads_them_while_collection_runs(tmp_path: Path):
    capture = tmp_path / "r.pcap"
    write_capture(capture, ramp_table(20_000))
    c = _collection(tmp_path, rotate_s=3600, rotate_bytes=20_000)
    sender = _feed(capture, c.port, rate=40_000)
    seen_files = 0
    while sender.is_alive():
        c.poll(0.1)
        closed = sorted((tmp_path / "live" / "queue").glob("part-*.parquet"))
        if closed and seen_files == 0:
            # While collecting: the closed files read whole, through burstlab query too.
            r = burstlab("query", tmp_path / "live", "SELECT count(*) AS n FROM queue", "--json")
            assert r.returncode == 0, r.stderr
            assert json.loads(r.stdout)[0]["n"] == sum(pq.read_metadata(f).num_rows for f in closed) > 0
        seen_files = len(closed)
    c.close()
    queue = sorted((tmp_path / "live" / "queue").glob("part-*.parquet"))
    # Time never rotates here (an hour): each file but the last closed once 20 kB large.
    assert len(queue) >= 2, "a 20 kB limit on 20,000 samples makes several files"
    assert all(f.stat().st_size >= 20_000 for f in queue[:-1])
    assert sum(pq.read_metadata(f).num_rows for f in queue) == c.snapshot.counters["samples"]
    reports = pq.read_table(tmp_path / "live" / "reports")
    assert reports.num_rows == c.snapshot.counters["reports"] == 20_000
    assert not list((tmp_path / "live").glob("*/.part-*"))
    assert pq.read_schema(queue[0]).metadata[b"burstlab.table"] == b"queue"


def test_rotation_by_time_closes_idle_files(tmp_path: Path):
    capture = tmp_path / "r.pcap"
    write_capture(capture, ramp_table(2_000))
    c = _collection(tmp_path, rotate_s=0.3)
    _feed(capture, c.port, speed="max").join()
    c.poll(0.1)
    assert not list((tmp_path / "live" / "reports").glob("part-*.parquet"))
    for _ in range(4):
        c.poll(0.1)  # nothing arrives; the file ages past --rotate and closes
    assert len(list((tmp_path / "live" / "reports").glob("part-*.parquet"))) == 1
    c.close()


def test_a_restart_on_the_same_directory_goes_on(tmp_path: Path):
    out = tmp_path / "live"
    (out / "queue").mkdir(parents=True)
    (out / "queue" / "part-000007.parquet").write_bytes(b"")  # as a previous run left it
    (out / "queue" / ".part-000008.parquet.tmp").write_bytes(b"PAR1 cut")  # killed mid-file
    store = Store(out, rotate_s=10, rotate_bytes=1 << 20, metadata={})
    assert store.next_number == 8
    assert [p.name for p in store.removed] == [".part-000008.parquet.tmp"]
    assert not (out / "queue" / ".part-000008.parquet.tmp").exists()
    assert (out / "queue" / "part-000007.parquet").exists()


def test_floods_of_garbage_and_of_switch_ids_are_counted_and_stay_under_the_cap(tmp_path: Path):
    capture = tmp_path / "many.pcap"
    # 3,000 switches, one port each: far past a cap of 100 streams.
    write_capture(capture, ramp_table(6_000, switches=3_000))
    c = Collection(["127.0.0.1:0"], out=None, rise=RISE, max_streams=100)
    port = int(c.addresses[0].rsplit(":", 1)[1])
    garbage = 5_000
    rng = random.Random(35)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for k in range(garbage):
            s.sendto(rng.randbytes(1 + k % 600), ("127.0.0.1", port))
            if k % 500 == 0:
                c.poll(0)
    _feed(capture, port, rate=50_000).join()
    c.poll(0.2)
    counters = c.close()["counters"]
    assert counters["datagrams"] == garbage + 6_000
    # Each garbage datagram is malformed or decodes (a few random ones do: TR v0.5 has little
    # to check) into at least one report.
    assert counters["malformed"] + (counters["reports"] - 6_000) >= garbage
    assert counters["malformed"] > 0.9 * garbage
    assert len(c.snapshot.queues) <= 100
    # 100 queues of 50 switches × 2 ports are tracked; every report beyond them overflows.
    assert counters["overflow"] >= 6_000 - 100 * 2
    assert counters["kernel_drops"] == 0


def test_replay_counts_and_paces(tmp_path: Path):
    capture = tmp_path / "r.pcap"
    write_capture(capture, ramp_table(3_000))
    c = Collection(["127.0.0.1:0"], out=None, rise=RISE)
    port = int(c.addresses[0].rsplit(":", 1)[1])
    sent = replay(capture, f"127.0.0.1:{port}", rate=10_000)
    assert (sent["frames"], sent["sent"], sent["refused"]) == (3_000, 3_000, 0)
    assert 0.25 <= sent["seconds"] < 1.0
    c.poll(0.2)
    assert c.close()["counters"]["datagrams"] == 3_000


def test_a_flood_of_distinct_flows_stays_under_the_flow_cap(tmp_path: Path):
    import numpy as np
    import pyarrow as pa

    table = ramp_table(8_000, switches=1)
    table = table.set_column(table.schema.get_field_index("src_port"), "src_port",
                             pa.array(np.arange(8_000, dtype=np.uint64) % 60_000))
    capture = tmp_path / "flows.pcap"
    write_capture(capture, table)
    c = Collection(["127.0.0.1:0"], out=None, rise=RISE, max_flows=500)
    port = int(c.addresses[0].rsplit(":", 1)[1])
    _feed(capture, port, rate=50_000).join()
    c.poll(0.2)
    counters = c.close()["counters"]
    # Every sample still counts for its queue; only 500 (queue, flow) pairs are remembered.
    assert (counters["reports"], counters["samples"]) == (8_000, 8_000)
    assert (counters["flows"], counters["flow_overflow"]) == (500, 7_500)


def test_an_unreachable_influxdb_is_counted_and_does_not_hold_up_collection(tmp_path: Path):
    import time

    capture = tmp_path / "r.pcap"
    write_capture(capture, ramp_table(2_000))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens once it is closed
    c = Collection(["127.0.0.1:0"], out=None, rise=RISE, influx=f"http://127.0.0.1:{dead}/write?db=int")
    port = int(c.addresses[0].rsplit(":", 1)[1])
    start = time.monotonic()
    _feed(capture, port, speed="max").join()
    for _ in range(4):
        c.poll(0.05)
    counters = c.close()["counters"]
    assert counters["reports"] == 2_000
    assert time.monotonic() - start < 5
    assert c.influx.failed >= 1 and "Connection refused" in c.influx.last_error
