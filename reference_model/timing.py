"""Virtual time: instants, spans and windows.

Pulsar part: none directly; this is how the model talks about *when*.
Rule ids: used by PLS-NACK-001, PLS-ACKTIMEOUT-002, PLS-REDELIVER-001.

The model never reads a clock. A target passes the instant an op happened; the checker passes
the span ``[t_start, t_end]`` an op took on a real client, because the real effect happened
somewhere inside it. A window says when something becomes eligible (``low``), when the model
would make it happen if it must choose (``canonical``) and by when it must have happened
(``high``).

Not modelled: clock skew between client and broker (everything is client time).
Choices: milliseconds as floats; ``high=None`` means "no deadline".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """An op ran somewhere in ``[start, end]`` (virtual: ``start == end``)."""

    start: float
    end: float

    @staticmethod
    def at(t: float) -> "Span":
        return Span(t, t)


@dataclass(frozen=True)
class Window:
    """Eligible from ``low``; the model's own choice is ``canonical``; due by ``high``."""

    low: float
    canonical: float
    high: float | None

    def describe(self) -> str:
        hi = "no deadline" if self.high is None else f"{self.high:g}"
        return f"[{self.low:g}, {hi}] ms"
