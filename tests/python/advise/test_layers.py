"""The advisor stands without the validation harness (its netns code needs root): importing
`burstlab tune`'s and `burstlab explain`'s modules must not import burstlab.validate."""

from __future__ import annotations

import subprocess
import sys


def test_the_advisor_imports_no_validation_module():
    code = ("import sys, burstlab.advise.tune, burstlab.advise.twin; "
            "print(sorted(m for m in sys.modules if m.startswith('burstlab.validate')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_validate_reads_the_receive_tuning_from_the_advisor():
    from burstlab.advise import twin
    from burstlab.validate import compare

    assert compare.rcvbuf_tuning is twin.rcvbuf_tuning
    assert [twin.rcvbuf_tuning(k) for k in ("6.18.1", "6.17.9", "bogus", None)] == ["6.18", None, None, None]
