"""The AmLight study's published numbers the report sets beside ours.

Source: J. Bezerra et al., "Handling Microbursts @ AmLight" (AmLight's CI Lunch and Learn talk),
slide "Microbursts vs TCP Retransmissions" (median and 95th percentile of TCP retransmits over
the repetitions, per burst start mark, pooled over burst durations); the slide's BBR rows are
shifted by one label, read here as the evident table (shared/reference/seed-targets.md §1).
"""

from __future__ import annotations

__all__ = ["RETRANSMITS"]

#: (cca, rtt in ms, burst start mark in s) -> (median, 95th percentile) retransmits.
RETRANSMITS: dict[tuple[str, int, float], tuple[int, int]] = {}

_MARKS = (2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5)
# Per CCA, one row per mark: 209 ms median, 209 ms p95, 301 ms median, 301 ms p95.
_TABLE = {
    "htcp": (
        (15, 10_882, 1, 5), (21, 456, 2, 7_416), (658, 2_714, 2, 13), (8_733, 16_097, 15, 33),
        (32_939, 41_649, 57, 6_043), (26_095, 36_681, 293, 958), (24_017, 38_625, 977, 2_938),
        (24_971, 37_760, 2_890, 6_901), (27_187, 50_373, 10_438, 23_955),
        (21_590, 49_132, 20_324, 32_006), (23_708, 38_355, 17_420, 31_151),
        (0, 18_619, 17_201, 30_731),
    ),
    "bbr": (
        (21, 343_757, 0, 12), (168, 113_229, 2, 32), (1_068, 5_064, 4, 87),
        (7_089, 245_130, 16, 63_251), (188_826, 387_750, 23, 359), (322_152, 399_855, 212, 1_171),
        (233_541, 347_600, 836, 3_406), (103_833, 396_492, 4_062, 65_322),
        (157_384, 192_791, 13_583, 53_242), (91_172, 143_773, 87_339, 284_489),
        (58_551, 271_062, 112_704, 301_796), (0, 234_852, 42_217, 295_720),
    ),
}
for _cca, _rows in _TABLE.items():
    for _mark, (_m209, _p209, _m301, _p301) in zip(_MARKS, _rows, strict=True):
        RETRANSMITS[(_cca, 209, _mark)] = (_m209, _p209)
        RETRANSMITS[(_cca, 301, _mark)] = (_m301, _p301)
