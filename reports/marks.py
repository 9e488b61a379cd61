"""Verdict marks and escaping shared by the HTML pages (``reports/html.py``, ``reports/client_matrix.py``).

Part of Pulsar: none; presentation only. One glyph, CSS class and label per verdict, so that
every matrix the reports print marks PASS, FAIL, NOT_APPLICABLE ("unsupported", never a
failure), NOT_EXERCISED and INDETERMINATE alike.

Choices: colour is never the only carrier of a verdict: each mark has its own glyph and text.
This module imports no other report module, so both pages can use it without importing each other.
"""

from __future__ import annotations

import html
from typing import Any

MARKS = {
    "PASS": ("\u2713", "m-pass", "pass"),
    "FAIL": ("\u2717", "m-fail", "fail"),
    "NOT_APPLICABLE": ("n/a", "m-na", "not applicable (unsupported by this client/version)"),
    "NOT_EXERCISED": ("\u2205", "m-nx", "not exercised"),
    "INDETERMINATE": ("?", "m-indet", "indeterminate"),
}


def esc(x: Any) -> str:
    """``x`` as HTML text or attribute value (``None`` is empty)."""
    return html.escape("" if x is None else str(x), quote=True)


__all__ = ["MARKS", "esc"]
