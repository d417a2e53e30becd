"""Range expansion: exact decimal steps, units kept, stop included only when it lands."""

from __future__ import annotations

import pytest

from burstlab.sweep.errors import SweepError
from burstlab.sweep.ranges import MAX_RANGE_VALUES, expand_range, looks_like_range


def test_range_times_inclusive_and_exact():
    values = expand_range("1.5s..7.5s/0.5s")
    assert len(values) == 13
    assert values[:4] == ["1.5s", "2s", "2.5s", "3s"]
    assert values[-1] == "7.5s"


def test_range_decimal_steps_do_not_drift():
    # 0.1 accumulated in binary floating point misses 0.3 (0.30000000000000004) and would drop
    # or mangle the last value; Decimal lands exactly.
    assert expand_range("0.1..0.5/0.1") == ["0.1", "0.2", "0.3", "0.4", "0.5"]
    assert expand_range("0.1ms..0.3ms/0.1ms") == ["0.1ms", "0.2ms", "0.3ms"]


def test_range_stop_excluded_when_step_overshoots():
    assert expand_range("1..10/3") == ["1", "4", "7", "10"]
    assert expand_range("1..9/3") == ["1", "4", "7"]


def test_range_mixed_units_written_in_start_unit():
    assert expand_range("500ms..2s/250ms") == ["500ms", "750ms", "1000ms", "1250ms", "1500ms", "1750ms", "2000ms"]
    assert expand_range("1s..2s/500ms") == ["1s", "1.5s", "2s"]


def test_range_rates_and_sizes():
    assert expand_range("10Gbps..25Gbps/7.5Gbps") == ["10Gbps", "17.5Gbps", "25Gbps"]
    # Binary sizes: 1 KiB + 512 B is exactly 1.5 KiB.
    assert expand_range("1KiB..2KiB/512B") == ["1KiB", "1.5KiB", "2KiB"]
    assert expand_range("1MB..3MB/1MB") == ["1MB", "2MB", "3MB"]


def test_range_plain_floats_stay_floats():
    # "2" would be a TOML integer where the range was written as floats.
    assert expand_range("1.0..3/1") == ["1.0", "2.0", "3.0"]
    assert expand_range("-1..1/1") == ["-1", "0", "1"]


def test_range_single_value_when_start_is_stop():
    assert expand_range("5ms..5ms/1ms") == ["5ms"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1s..2s", "expected start..stop/step"),
        ("1s..2Gbps/1s", "one kind"),
        ("1s..2s/0s", "step must be positive"),
        ("2s..1s/1s", "stop is below start"),
        ("1x..2x/1x", "unknown unit 'x'"),
        ("-1s..2s/1s", "negative"),
        ("1Gb..2Gb/1Gb", "unknown unit 'Gb'"),  # bits, not bytes: refused like the loader does
    ],
)
def test_range_bad_syntax_named(text, message):
    with pytest.raises(SweepError, match=message):
        expand_range(text)


def test_range_too_long_refused():
    with pytest.raises(SweepError, match=str(MAX_RANGE_VALUES)):
        expand_range(f"0..{MAX_RANGE_VALUES}/1")
    assert len(expand_range(f"1..{MAX_RANGE_VALUES}/1")) == MAX_RANGE_VALUES


def test_range_detection_ignores_quoted_text():
    assert looks_like_range("1..2/1")
    assert not looks_like_range('"a..b"')
    assert not looks_like_range("100ms")
