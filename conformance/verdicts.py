"""The verdict vocabulary: the statuses a rule can end with, and their one order.

Every layer that names or folds a verdict status imports it from here: the detectors and the
checker (a judgement at one step), the runner (a rule over the cases of a run), the corpus rows,
the exit code (``verdict_exit``), JUnit/HTML/client-matrix reports and the Spark report job.

Statuses. A detector judging a rule at one step says one of ``JUDGED``:

- ``PASS``: the rule was in force and the observation kept it;
- ``INDETERMINATE``: the checker could not tell (a timeout, an op not modelled);
- ``FAIL``: the observation is one the model does not allow.

A rule over a run (or a target x version x client combination) can also end as:

- ``NOT_EXERCISED``: it applies, but no detector judged it;
- ``UNJUDGED``: a case or trace named it and no detector judged it (read like NOT_EXERCISED);
- ``NOT_APPLICABLE``: it does not speak about this broker version or client;
- ``ERROR``: the suite itself failed where the rule would have been judged.

Order (``ORDER``, least to most severe): NOT_APPLICABLE < NOT_EXERCISED < UNJUDGED < PASS <
INDETERMINATE < FAIL < ERROR. Folding several verdicts of one rule keeps the most severe, so a
rule judged somewhere beats "not exercised" elsewhere, FAIL beats INDETERMINATE beats PASS, and
a harness error hides nothing it could not vouch for. The exit code reads the same statuses
with its own precedence (``verdict_exit``: harness error, then FAIL, then inconclusive).

Choices: statuses are plain strings (they are written to JSON, YAML, JUnit and Parquet as they
are); a status outside the vocabulary is a caller bug and raises ``ValueError``.
"""

from __future__ import annotations

from typing import Iterable

PASS = "PASS"
FAIL = "FAIL"
INDETERMINATE = "INDETERMINATE"
NOT_APPLICABLE = "NOT_APPLICABLE"
NOT_EXERCISED = "NOT_EXERCISED"
UNJUDGED = "UNJUDGED"
ERROR = "ERROR"

JUDGED = (PASS, INDETERMINATE, FAIL)
ORDER = (NOT_APPLICABLE, NOT_EXERCISED, UNJUDGED, PASS, INDETERMINATE, FAIL, ERROR)
STATUSES = frozenset(ORDER)
_RANK = {status: rank for rank, status in enumerate(ORDER)}


def severity(status: str) -> int:
    """The rank of ``status`` in ``ORDER`` (0 = NOT_APPLICABLE ... 6 = ERROR)."""
    try:
        return _RANK[status]
    except KeyError:
        raise ValueError(f"unknown verdict status {status!r}; use one of {', '.join(ORDER)}") from None


def worst(statuses: Iterable[str], default: str | None = None) -> str | None:
    """The most severe of ``statuses`` by ``ORDER``; ``default`` when there are none."""
    found = list(statuses)
    return max(found, key=severity) if found else default


def worst_judged(statuses: Iterable[str], default: str | None = None) -> str | None:
    """The most severe of the detector judgements (``JUDGED``) among ``statuses``, the others
    ignored; ``default`` when none was judged."""
    return worst((s for s in statuses if s in JUDGED), default)


def is_judged(status: str) -> bool:
    """Did a detector judge the rule (PASS, INDETERMINATE or FAIL)?"""
    return status in JUDGED
