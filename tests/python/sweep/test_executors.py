"""The local pool stops on Ctrl-C even when a worker dies half-way through sending a result."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# Run in its own interpreter: a pool that does not stop hangs the interpreter's exit, which
# in-process would hang pytest itself.
SCRIPT = textwrap.dedent(
    """
    import os, struct, sys, time
    from pathlib import Path

    from burstlab.sweep.executors import open_executor


    def half_sent_result(flag):
        # Find the worker loop's result queue and write a message header promising 1000 bytes,
        # then only 10 of them: what a worker terminated mid-write leaves in the pipe.
        frame = sys._getframe()
        while "result_queue" not in frame.f_locals:
            frame = frame.f_back
        writer = frame.f_locals["result_queue"]._writer
        os.write(writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
        Path(flag).touch()
        time.sleep(3600)


    if __name__ == "__main__":
        flag = Path(sys.argv[1])
        try:
            with open_executor(jobs=1) as (pool, _):
                pool.submit(half_sent_result, str(flag))
                while not flag.exists():
                    time.sleep(0.01)
                time.sleep(0.2)  # the manager thread is now blocked reading the other 990 bytes
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            print("stopped")
    """
)


def test_interrupted_pool_exits_when_a_worker_left_half_a_result(tmp_path: Path):
    script = tmp_path / "half_sent.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "flag")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the interpreter did not exit within 60 s of stopping the pool") from None
    assert proc.returncode == 0, err
    assert out.strip() == "stopped"
