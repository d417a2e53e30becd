"""The record layout of pcap and pcapng files, to cut a capture at chosen bytes
(draft-ietf-opsawg-pcap §4–5, draft-ietf-opsawg-pcapng §4)."""

from __future__ import annotations

import struct

#: pcapng Section Header, Interface Description and Enhanced Packet block types.
SHB, IDB, EPB = 0x0A0D0D0A, 1, 6


def pcap_records(data: bytes) -> list[int]:
    """File offsets of the records of a little-endian pcap file."""
    offsets, at = [], 24
    while at + 16 <= len(data):
        offsets.append(at)
        at += 16 + struct.unpack_from("<I", data, at + 8)[0]
    return offsets


def to_pcapng(pcap: bytes) -> tuple[bytes, list[int]]:
    """The same frames as pcapng (one section, one interface in nanoseconds, one Enhanced
    Packet Block a frame) and the file offsets of those blocks."""
    magic, linktype = struct.unpack_from("<I", pcap)[0], struct.unpack_from("<I", pcap, 20)[0]
    nanos = magic == 0xA1B23C4D
    out, epbs = bytearray(), []

    def block(kind: int, body: bytes) -> None:
        body += bytes(-len(body) % 4)
        out.extend(struct.pack("<II", kind, 12 + len(body)) + body + struct.pack("<I", 12 + len(body)))

    block(SHB, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    # if_tsresol (option 9) = 9: nanoseconds; then opt_endofopt.
    block(IDB, struct.pack("<HHI", linktype & 0xFFFF, 0, 262144) + struct.pack("<HHB3x", 9, 1, 9) + bytes(4))
    for at in pcap_records(pcap):
        sec, frac, incl, orig = struct.unpack_from("<IIII", pcap, at)
        ticks = sec * 10**9 + (frac if nanos else frac * 1000)
        epbs.append(len(out))
        block(EPB, struct.pack("<IIIII", 0, ticks >> 32, ticks & 0xFFFFFFFF, incl, orig) + pcap[at + 16:at + 16 + incl])
    return bytes(out), epbs


def replicate(pcap: bytes, copies: int, out) -> int:
    """Write ``copies`` back-to-back copies of the frames of ``pcap`` (a little-endian,
    nanosecond pcap whose records all have one size) to the binary file ``out``, each copy
    shifted in time to follow the one before; returns the frames written."""
    import numpy as np

    offsets = pcap_records(pcap)
    size = offsets[1] - offsets[0] if len(offsets) > 1 else len(pcap) - 24
    assert all(b - a == size for a, b in zip(offsets, offsets[1:])) and size % 4 == 0
    assert struct.unpack_from("<I", pcap)[0] == 0xA1B23C4D, "expected nanosecond pcap"
    frames = np.frombuffer(pcap, dtype="<u4", offset=24).reshape(len(offsets), size // 4)
    ns = frames[:, 0].astype(np.uint64) * 10**9 + frames[:, 1]
    span = int(ns[-1] - ns[0]) + 1_000
    out.write(pcap[:24])
    copy = frames.copy()
    for k in range(copies):
        shifted = ns + np.uint64(k * span)
        copy[:, 0] = shifted // 10**9
        copy[:, 1] = shifted % 10**9
        out.write(copy.tobytes())
    return copies * len(offsets)
