"""The GRNET buffer-tuning study (seed 003; seed-targets.md §4): window/RTT bounds, the default
and 16 MiB buffers between two DCs at ~8 ms, parallel connections as the work-around, and the
ramp from tcp_rmem's default value at 150 ms against 0.15 ms.

Tolerances, fixed before any run: ±0.005 Mbit/s for the bounds (the seed prints two decimals),
±5 % for a measured range and for a rate at line speed, ±10 % for a plateau the window sets.
"""

from __future__ import annotations

from collections.abc import Mapping

from burstlab.advise.tune import window_bound_bps
from burstlab.report.data import SweepData
from burstlab.report.studies.core import (FAIL, PASS, Finding, Part, Study, compare, interval_sums, params_of,
                                          rate_bps, relation, within)

__all__ = ["STUDY", "BOUNDS"]

RTT = "topology.rtt"
STREAMS = "flow[0].streams"
RMEM16 = ("flow[0].tcp_rmem=8192 87380 16777216", "flow[0].rmem_max=16777216")
WMEM16 = ("flow[0].tcp_wmem=8192 16384 16777216",)

#: The seed's table: (rmem max bytes, its window in KiB as printed, RTT s, bound Mbit/s).
BOUNDS = (
    (6_291_456, 3_072, 0.008, 3_145.73),
    (6_291_456, 3_072, 0.012, 2_097.15),
    (16_777_216, 8_192, 0.008, 8_388.61),
    (268_435_456, 131_070, 0.148, 7_254.90),
)
#: iperf 10 s results between the two DCs, Gbit/s: default buffers, then 16 MiB rmem + wmem.
DEFAULT_RANGE = (1.58e9, 3.11e9)
TUNED_RANGE = (4.24e9, 5.27e9)
#: The 150 ms iperf run, Mbit/s per second, and the 0.15 ms one's first second.
RAMP_150MS = (117e6, 4_979e6, 7_472e6, 7_480e6)
AT_ONCE_015MS = 9.92e9

#: Measured on this machine's kernel (6.18) with the seed's sysctls, `scripts/real_ramp.py` (a TUN
#: delay line at 150 ms behind a 1 Gbit/s tbf: this kernel has no netem), 3 runs each,
#: `scripts/real_ramp.grnet-*.json`; Mbit/s, from the test's start as iperf3 counts (after the
#: handshake). "received": what the receiver got; "written": what the sender's application wrote.
REAL_RAMP = ("measured on this kernel with the seed's sysctls at 150 ms (scripts/real_ramp.py: a TUN delay "
             "line behind a 1 Gbit/s tbf, as no netem is built in), 3 runs: the receiver got 3.4–8.1 Mbit/s in "
             "second 1 and 243–446 in second 2, where ours at the same 1 Gbit/s cap gets 10.2 and 500 (counted, "
             "as iperf3 counts, from after the handshake; 5.0 and 357 from the first SYN): Linux's ramp from "
             "87,380 B is ours, not the seed's. The seed's figures are what the sender wrote: its application "
             "wrote 12–31 Mbit/s in second 1 with tcp_wmem's default 16 KiB and 94 Mbit/s with 16 MiB, while "
             "the receiver got 1–7.5; iperf2's client, whose output the seed shows, counts what it writes, so "
             "the send buffer's fill is counted as carried")
#: The same ramp scaled by 10 in rate and RTT (1 Gbit/s, 1.5 s: a seed's second is ten seconds),
#: `scripts/real_ramp.grnet-ramp-scaled*.json`, 12 runs (docs/studies.md, note 3).
REAL_RAMP_SCALED = ("seconds 2–3 are a known difference: on the ramp scaled by 10 (1 Gbit/s, 1.5 s, this kernel, "
                    "the seed's sysctls, 3 runs) the sender wrote 191–208 Mbit/s per ten seconds in the scaled "
                    "second 2, 3.1–3.5× what the receiver got but 38–42 % of the seed's 498 (its 4,979 / 10), so "
                    "send-buffer fill is not the size; a 256 MiB tcp_wmem default makes the first ten seconds "
                    "137 Mbit/s written against the seed's 11.7, refuted too (docs/studies.md, note 3); ours "
                    "at that scale (114–125 in its second 2) is this kernel's fastest run (115, the only one at "
                    "load average 6), whose 8 sampled others (26–61) lose round trips in the first flights to races "
                    "on the receiving host between its reads, its ACKs and DRS's RTT test (docs/fidelity.md, "
                    "receive-window ramp; the earlier record's 3 runs, 55–68, were not sampled)")

#: GRNET's 16 MiB row scaled by 10 in rate and RTT on this kernel (docs/studies.md, note 2),
#: `scripts/real_ramp.grnet-16mib-scaled-*.json`, 6 runs in two sittings.
REAL_16MIB = ("at 1 Gbit/s and 78 ms with the seed's 8 MiB window (the same BDP in packets and window/BDP) "
              "this kernel carries 91–98 % of window/RTT over seconds 5–20 (781–847 of 860 Mbit/s, 0 "
              "retransmits, TCPRcvQDrop 0, sndbuf-limited 0; the twin 853), so Linux's buffers at the seed's "
              "sysctls do not explain it; an old kernel's rcv_ssthresh stop at tcp_rmem[2]/4 (4.30 Gbit/s "
              "at 7.8 ms) is refuted by the seed's own 5.11–5.27 Gbit/s trials (docs/studies.md, note 2)")

#: `ss -ti` on both ends of those runs: the window scale this kernel picks with tcp_rmem max 256 MiB.
REAL_WSCALE = 13

PARTS = (
    Part("default", "grnet/dc", {RTT: ["7.8ms", "11.9ms"]}),
    Part("rmem16", "grnet/dc", {RTT: ["7.8ms", "11.9ms"]}, RMEM16),
    Part("rmem-wmem16", "grnet/dc", {RTT: ["7.8ms", "11.9ms"]}, RMEM16 + WMEM16),
    Part("parallel", "grnet/dc", {RTT: ["7.8ms"], STREAMS: ["2"]}),
    Part("ramp", "grnet/ramp", {RTT: ["150ms", "0.15ms"]}),
    Part("ramp-default-tuned", "grnet/ramp", {RTT: ["150ms"]}, ("flow[0].tcp_rmem=4096 268435456 268435456",)),
)

NEEDS = ("a clean 10 Gbit/s path that loses nothing (the seed saw no retransmissions) and hosts whose "
         "CPU keeps up: every finding is about windows and buffers; the seed's own sysctls, RTTs and MTU "
         "where it gives them (scenarios/grnet/*.toml).")


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:,.2f} Mbit/s"


def _bounds() -> list[Finding]:
    out = []
    for rmem, window_kib, rtt, theirs in BOUNDS:
        ours = window_bound_bps(rmem, rtt) / 1e6
        err = round(ours - theirs, 2) + 0.0  # + 0.0: no "-0.00"
        ok = abs(err) <= 0.005
        why = ("" if ok else f"the seed's window is {window_kib:,} KiB, not rmem/2 = {rmem // 2048:,} KiB; "
               f"with its window the bound is {window_kib * 1024 * 8 / rtt / 1e6:,.2f} Mbit/s. {window_kib:,} KiB "
               "is 65,535 << 11, the largest window at window scale 11; this kernel, given these buffers, "
               f"chose scale {REAL_WSCALE} (ss -ti, scripts/real_ramp.py), whose clamp does not bind, and "
               "advertises rmem/2 (docs/studies.md, note 1)")
        out.append(Finding(
            f"bound-{rmem >> 20}mib-{rtt * 1e3:g}ms", f"window/RTT bound, rmem {rmem:,} B at {rtt * 1e3:g} ms",
            f"{theirs:,.2f} Mbit/s", f"{ours:,.2f} Mbit/s", f"{err:+.2f} Mbit/s", PASS if ok else FAIL,
            "to the digit (±0.005 Mbit/s): rmem/2 x 8 / RTT (tcp_adv_win_scale = 1)", why))
    return out


def _rates(data: SweepData | None) -> dict[str, float]:
    if data is None:
        return {}
    return {r.params[RTT]: rate_bps(r) for r in data.runs if STREAMS not in r.params}


def check(parts: Mapping[str, SweepData]) -> list[Finding]:
    out = _bounds()
    default, rmem16, tuned = (_rates(parts.get(k)) for k in ("default", "rmem16", "rmem-wmem16"))
    window = window_bound_bps(6_291_456, 0.0078)
    out.append(within(
        "default-buffers", "default buffers (tcp_rmem max 6 MiB) at 7.8 and 11.9 ms: 1.58–3.11 Gbit/s",
        *DEFAULT_RANGE, list(default.values()), 0.05,
        why=f"window-bound: 3 MiB / 7.8 ms = {window / 1e9:.2f} Gbit/s, above the seed's best trial"))
    out.append(within(
        "tuned-buffers", "16 MiB rmem + wmem at 7.8 and 11.9 ms: 4.24–5.27 Gbit/s",
        *TUNED_RANGE, list(tuned.values()), 0.05,
        why=(f"ours is window-bound with no loss (8 MiB / 7.8 ms = {window_bound_bps(16 << 20, 0.0078) / 1e9:.2f} "
             "Gbit/s, 0 retransmits): the seed's trials sit below their own bound ('not even approaching "
             f"the theoretical value'). A known difference: {REAL_16MIB}")))
    both = [(rmem16[k], tuned[k]) for k in tuned if k in rmem16]
    out.append(relation(
        "wmem-caps-flight", "receiver rmem sets the window, sender wmem caps bytes in flight: tune both",
        "rmem alone: 'not even approaching' the bound; rmem + wmem 'much better'",
        ", ".join(f"{a / 1e9:.2f} → {b / 1e9:.2f} Gbit/s" for a, b in both),
        all(b >= 1.25 * a for a, b in both) if both else None,
        "rmem + wmem ≥ 1.25 × rmem alone at each RTT",
        why="the default tcp_wmem max (4 MiB) does not bind here"))
    par = parts.get("parallel")
    two = params_of(par, **{RTT: "7.8ms", STREAMS: "2"}) if par else None
    one = default.get("7.8ms")
    out.append(relation(
        "parallel-connections", "the work-around: parallel TCP connections raise the aggregate when "
        "the window bounds each", "doubling parallel downloads raised each queue's aggregate",
        f"{one / 1e9:.2f} → {rate_bps(two) / 1e9:.2f} Gbit/s (1 → 2 streams)" if one and two else "",
        rate_bps(two) >= 1.8 * one if one and two else None, "2 streams ≥ 1.8 × 1 stream",
        why="the two streams' windows exceed the link"))
    out += _ramp(parts.get("ramp"), parts.get("ramp-default-tuned"))
    return out


def _per_second(data: SweepData | None, rtt: str) -> list[float]:
    run = params_of(data, **{RTT: rtt}) if data else None
    return [b for _, b in interval_sums(data, run)] if data and run else []


def _ramp(data: SweepData | None, tuned_data: SweepData | None) -> list[Finding]:
    secs, at_once, tuned = _per_second(data, "150ms"), _per_second(data, "0.15ms"), _per_second(tuned_data, "150ms")
    iperf2 = ("ours per second: " + ", ".join(f"{b / 1e6:,.0f}" for b in secs) + f" Mbit/s; {REAL_RAMP}; "
              f"{REAL_RAMP_SCALED}")
    out = [
        relation("ramp-slow", "at 150 ms, with tcp_rmem's default value, the first second is a small "
                 "share of the plateau", "117 of 7,480 Mbit/s (1.6 %)",
                 f"{secs[0] / 1e6:,.0f} of {secs[3] / 1e6:,.0f} Mbit/s ({secs[0] / secs[3]:.1%})" if len(secs) >= 4
                 else "", secs[0] < 0.05 * secs[3] if len(secs) >= 4 else None,
                 "first second < 5 % of the fourth"),
        compare("ramp-second-2", "150 ms, second 2", RAMP_150MS[1], secs[1] if len(secs) >= 2 else None,
                0.10, unit=_mbps, why=iperf2),
        compare("ramp-second-3", "150 ms, second 3", RAMP_150MS[2], secs[2] if len(secs) >= 3 else None,
                0.10, unit=_mbps, why=iperf2),
        compare("ramp-plateau", "150 ms, second 4: the window's plateau (256 MB buffers)", RAMP_150MS[3],
                secs[3] if len(secs) >= 4 else None, 0.10, unit=_mbps,
                why="128 MiB / 150 ms = 7,158 Mbit/s"),
        relation("ramp-default-value", "raising tcp_rmem's default value shortens the ramp ('for higher "
                 "performance in the initialisation period the default value should also be tuned')",
                 "default value tuned: faster build-up",
                 f"second 2: {secs[1] / 1e6:,.0f} → {tuned[1] / 1e6:,.0f} Mbit/s" if len(secs) >= 2 and len(tuned) >= 2
                 else "", tuned[1] >= 1.5 * secs[1] if len(secs) >= 2 and len(tuned) >= 2 else None,
                 "second 2 ≥ 1.5× with tcp_rmem's default at 256 MiB"),
        compare("at-once-015ms", "0.15 ms: 9.92 Gbit/s from the first second", AT_ONCE_015MS,
                at_once[0] if at_once else None, 0.05),
    ]
    return out


#: 28.7 s user + 1.9 s system for its 10 runs (`burstlab study grnet -j 2`, load average 8-13).
CPU_S = 31.0

STUDY = Study(
    name="grnet",
    title="GRNET buffer tuning: the seed's findings checked on our runs",
    seed="003 (GRNET NOC, \"Transferring Earth observation data around the globe\")",
    needs=NEEDS,
    parts=PARTS,
    check=check,
    cpu_s=CPU_S,
)
