"""A stand-in target for tests/fuzz/test_interrupt_resume.py: the model, except that the first trace run
after the marker file named by ``CRASH_MARKER`` is missing kills its process with SIGSEGV (what a
segfault in the C++ client looks like to the parent: the 3.2.3 campaign of 27 Nov 2026 lost both
workers that way and then waited forever)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from conformance.targets.model import ModelTarget


class CrashesOnce(ModelTarget):
    def run(self, trace):
        marker = Path(os.environ["CRASH_MARKER"])
        if not marker.exists():
            marker.write_text(trace.header.trace_id, encoding="utf-8")
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(trace)
