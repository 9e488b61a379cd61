"""What the model answers when Pulsar refuses an op, and what it raises when it cannot answer.

Pulsar part: the client/broker errors a Python application sees (``pulsar.ConsumerBusy``, ...).
Rule ids: any; a ``Rejected`` names the rule that predicts it.

Two kinds of "no", after the WebAssembly reference interpreter's Trap vs Crash:
- ``Rejected`` is a *value*: the spec says this op fails (e.g. a second Exclusive consumer gets
  ``ConsumerBusy``, PLS-EXCL-001). Targets turn it into a ``rejected`` outcome; the checker
  expects the real broker to reject too.
- ``NotModelledError`` is raised when a trace asks for something this model does not describe
  (partitioned dispatch, Key_Shared, batching, ...): the answer is "unknown", never "wrong".
- ``ModelError`` is a bug in the model or in its caller (an invariant broke). It is never a
  verdict on Pulsar.

Not modelled: the exact wording of Pulsar's error texts (``detail`` is ours).
Choices: ``certain=False`` marks a rejection read from source or docs but not yet confirmed on
a live broker; the checker reports a mismatch on it as INDETERMINATE, not FAIL.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rejected:
    """The spec predicts this op fails with ``error`` (a name from the trace format's closed list)."""

    error: str
    rule: str
    detail: str
    certain: bool = True
    open_because: str = ""  # with certain=False: why the outcome is open here (else: read from source, not confirmed)


class NotModelledError(Exception):
    """The trace uses a feature this model does not describe; see each module's "Not modelled"."""


class ModelError(Exception):
    """An invariant of the model broke: a bug in the model or in how it was called."""
