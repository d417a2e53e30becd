"""Arrow arrays built from their buffers, without ``pyarrow.array()``.

``pyarrow.array()`` imports pandas, where it is installed, the first time it is called in a
process (to ask whether its argument is a pandas object): about a third of a second of CPU time,
more than numpy and pyarrow together, paid by every sweep worker and every ``burstlab run``
that never uses pandas. The arrays here are the ones ``pyarrow.array()`` would give (the same
Arrow IPC bytes; tests/python/test_arrow_buffers.py), made from numpy's memory and Python's
strings directly. Reading Parquet and DuckDB still import pandas; these do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["from_numpy", "strings", "dictionary", "column"]

#: numpy kinds whose memory is an Arrow array's values buffer as it stands: signed and unsigned
#: integers, floats (``b``, booleans, are packed to bits first).
_PLAIN_KINDS = "iuf"


def from_numpy(values: npt.NDArray[Any]) -> pa.Array:
    """A one-dimensional numeric or boolean array, zero-copy where Arrow's layout is numpy's
    (the result keeps ``values``' memory alive). NaN stays a value, not a null, as with
    ``pyarrow.array()``."""
    if values.ndim != 1:
        raise ValueError(f"expected a one-dimensional array, got shape {values.shape}")
    kind = values.dtype.kind
    if kind == "b":
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)], null_count=0)
    if kind not in _PLAIN_KINDS:
        raise TypeError(f"expected an array of integers, floats or booleans, got dtype {values.dtype}")
    if not values.dtype.isnative:
        values = values.astype(values.dtype.newbyteorder("="))
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)],
                                 null_count=0)


def strings(values: Sequence[str | None]) -> pa.Array:
    """A UTF-8 string array; ``None`` is a null."""
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"{offsets[-1]} bytes of text: more than a string array holds (2 GiB)")
    missing = np.fromiter((v is None for v in values), dtype=bool, count=len(encoded))
    nulls = int(missing.sum())
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little")) if nulls else None
    buffers = [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers, null_count=nulls)


def dictionary(codes: npt.NDArray[Any], values: Sequence[str]) -> pa.DictionaryArray:
    """A dictionary-encoded string array: int32 indices ``codes`` into ``values`` (the Arrow
    default, read back identically by every Parquet reader)."""
    return pa.DictionaryArray.from_arrays(from_numpy(codes.astype(np.int32, copy=False)), strings(values))


def column(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    """A Python list as an array of ``arrow_type``: a string, boolean, int64 or float64 column."""
    if arrow_type == pa.string():
        return strings(values)
    dtypes = {pa.bool_(): np.bool_, pa.int64(): np.int64, pa.float64(): np.float64}
    if arrow_type not in dtypes:
        raise TypeError(f"column type {arrow_type}: expected string, bool, int64 or float64")
    return from_numpy(np.array(values, dtype=dtypes[arrow_type]))
