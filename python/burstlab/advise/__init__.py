"""Advice from evidence: `explain_iperf3` reads a real iperf3 run, says what limited it phase by
phase, and replays its simulated twin (docs/advice.md)."""

from __future__ import annotations

import os
from typing import Any

#: The twin matches the real run when its throughput is within this share of the real one.
TWIN_TOLERANCE = 0.10


def explain_iperf3(
    path: str | os.PathLike[str],
    *,
    rtt: str | None = None,
    rate: str | None = None,
    mtu: int | None = None,
    buffer: str | None = None,
    tbf: bool = False,
    tcp_rmem: str | None = None,
    tcp_wmem: str | None = None,
    rmem_max: str | None = None,
    cpu: str | None = None,
    skb_scaling_ratio: int | None = None,
    maxrate: str | None = None,
    what_if: list[str] | None = None,
    twin: bool = True,
    ss: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Explain the iperf3 `-J` result at `path` and replay its twin.

    `rtt`, `rate`, `buffer`, `maxrate` take units ("20ms", "10Gbps", "16KiB"); `tcp_rmem` and
    `tcp_wmem` the sysctl's three numbers, `rmem_max` the receiver's net.core.rmem_max (its
    window scale; default the simulator's 212,992), `cpu` the hosts' CPU profile
    ("veth-this-machine"; default none: hosts that never limit), `skb_scaling_ratio` the
    receiver's len/truesize ratio of 256 (default 128, the kernel's starting value); `tbf` says the bottleneck is a Linux tbf (then
    `buffer` is its limit). Each `what_if` is "KEY=VALUE" (a flow key such as tcp_rmem, or a
    path key: rtt, rate, buffer, mtu). Returns a dict (the CLI's `--json`): the run, its
    `limit`, `summary`, `phases`, `losses`, `notes`, and with `twin` the `scenario` (TOML),
    `twin` (throughput, FCT, retransmits; of a `-t` run, measured as iperf3 measures it: what
    arrived in its seconds, its FCT those seconds), `match` and `what_if` results. `ss` is a file of
    `ss -tin` snapshots taken on the sender during the run: Linux's own account of how long the
    receiver's window and the send buffer held the connection (`kernel`), set beside the limit.

    Raises burstlab.advise.iperf3.Iperf3InputError for input that is not a completed iperf3
    TCP test, and burstlab.BurstlabError subclasses for bad flags.
    """
    from burstlab.advise import explain as ex
    from burstlab.advise import iperf3, units
    from burstlab.advise import twin as tw

    run = iperf3.load(path)
    rmem = units.triple("--tcp-rmem", tcp_rmem) if tcp_rmem else None
    wmem = units.triple("--tcp-wmem", tcp_wmem) if tcp_wmem else None
    rate_bps = units.rate_bps("--rate", rate) if rate else None
    settings = ex.Settings(rate_bps=rate_bps, tcp_rmem=rmem, tcp_wmem=wmem,
                           maxrate_bps=units.rate_bps("--maxrate", maxrate) if maxrate else None)
    explained = ex.explain(run, settings)
    limits = ex.classify(run, settings)
    out: dict[str, Any] = {
        "input": str(path),
        "version": run.version,
        "streams": run.num_streams,
        "reverse": run.reverse,
        "cca": run.cca,
        "throughput_bps": run.throughput_bps,
        "seconds": run.seconds,
        "retransmits": run.retransmits,
        **explained.as_json(),
        "intervals": [{"start_s": iv.start_s, "end_s": iv.end_s, "bits_per_second": iv.bits_per_second,
                       "retransmits": iv.retransmits, "cwnd_bytes": iv.cwnd_bytes, "snd_wnd_bytes": iv.snd_wnd_bytes,
                       "rtt_us": iv.rtt_us, "limit": limit} for iv, limit in zip(run.intervals, limits)],
    }
    if ss is not None:
        out["kernel"] = _kernel_account(ss, explained.limit)
        out["notes"] = [*out["notes"], out["kernel"]["note"]]
    if not twin:
        return out
    overrides = [tw.what_if_overrides(expr, max(1, run.num_streams), tbf=tbf) for expr in what_if or []]
    path_, notes = tw.path_from(run, rtt_s=units.seconds("--rtt", rtt) if rtt else None, rate_bps=rate_bps,
                                mtu=mtu, buffer_bytes=units.size_bytes("--buffer", buffer) if buffer else None,
                                tbf=tbf)
    hosts = tw.Hosts(tcp_rmem=rmem, tcp_wmem=wmem, cpu=cpu, skb_scaling_ratio=skb_scaling_ratio,
                     rmem_max=units.size_bytes("--rmem-max", rmem_max) if rmem_max else None)
    toml = tw.scenario_toml(run, path_, hosts)
    # A -t run is measured over its seconds, whatever its last bytes wait for: so is its twin.
    seconds = run.seconds if run.time_limited and run.seconds > 0 else None
    # The sender sends for its seconds; iperf3 divides what arrived by the receiver's, which run
    # on until the client's end-of-test message arrives (a small-tcp_wmem run over 4 ms: 2.00 s
    # sent, 2.14 s received, the twin at 2.14 s of sending then 10 % fast).
    sending = min(run.sent_seconds or seconds, seconds) if seconds is not None else None
    if seconds is not None:
        sent = f"sent for {sending:.2f} s and " if sending is not None and sending < seconds - 0.005 else ""
        notes.append(f"the twin is measured as iperf3 -t measures: {sent}what arrived in the run's {seconds:.2f} s "
                     "(the scenario written carries the bytes the run sent, timed to the last one)")
    base = tw.replay(toml, seconds=sending, over_s=seconds)
    error = (base.throughput_bps - run.throughput_bps) / run.throughput_bps if run.throughput_bps else None
    out["notes"] = [*out["notes"], *notes]
    out["scenario"] = toml
    out["twin"] = base.as_json()
    out["match"] = {"throughput_rel_error": error, "tolerance": TWIN_TOLERANCE,
                    "within": error is not None and abs(error) <= TWIN_TOLERANCE}
    out["what_if"] = [{"change": expr, "set": sets, "before": base.as_json(),
                       "after": tw.replay(toml, sets, seconds=sending, over_s=seconds).as_json()}
                      for expr, sets in zip(what_if or [], overrides)]
    return out


#: A share of the busy time this large makes Linux's chronograph name a limit.
CHRONO_SHARE = 0.5


def _kernel_account(path: str | os.PathLike[str], limit: str) -> dict[str, Any]:
    """What `ss -tin`'s chronograph says limited the data connection, and whether it agrees."""
    from burstlab.advise import explain as ex
    from burstlab.advise import ss as ss_

    c = ss_.load(path)
    says = ex.RECEIVE_WINDOW if c.rwnd_share >= CHRONO_SHARE else ex.SEND_BUFFER if c.sndbuf_share >= CHRONO_SHARE else None
    agrees = None if says is None else says == limit
    verdict = ("names no window limit" if says is None else
               f"names the {says}: {'agrees' if agrees else 'DISAGREES'}")
    note = (f"Linux's chronograph (ss -tin, {c.local} > {c.peer}): busy {c.busy_ms} ms, receiver's window "
            f"{c.rwnd_share:.1%}, send buffer {c.sndbuf_share:.1%}{', app-limited' if c.app_limited else ''}; "
            f"{verdict}")
    return {"busy_ms": c.busy_ms, "rwnd_limited_share": c.rwnd_share, "sndbuf_limited_share": c.sndbuf_share,
            "app_limited": c.app_limited, "says": says, "agrees": agrees, "note": note}
