"""The exit code of a run: one function from rule verdicts to a process status.

``pulsar-conformance run``, ``replay`` and ``check`` all end here, so the same verdicts always
give the same exit code:

  0  every rule the run was meant to judge is PASS (or NOT_APPLICABLE), or FAILed only as an
     excused known deviation (``conformance/deviations.yaml``)
  1  a conformance FAIL: the target did something the model does not allow
  2  bad input, bad usage, or no broker could be had (decided before any verdict; not here)
  3  inconclusive: a rule the run was meant to judge ended INDETERMINATE, or no detector judged
     it (NOT_EXERCISED, UNJUDGED)
  4  harness error: the suite itself failed (an exception inside a target, the Java driver died,
     a checker crash, the report job crashed); the verdicts are incomplete

When several apply, the first in the order 4, 1, 3 wins: a harness error means the verdicts are
incomplete, so neither a FAIL nor a PASS among them is the whole answer; a FAIL is a finding
whatever else stayed inconclusive.

Choices: the caller decides which rules the run was meant to judge (the keys of
``rule_verdicts``); a status outside the closed vocabulary is a caller bug and raises
``ValueError`` rather than being read as success.
"""

from __future__ import annotations

from typing import Collection, Mapping

from conformance.verdicts import (ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, STATUSES,
                                  UNJUDGED)

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_HARNESS = 0, 1, 2, 3, 4

# UNJUDGED: a rule a case or trace named that no detector judged (treated as INDETERMINATE).
FINE = frozenset({PASS, NOT_APPLICABLE})
FAILED = frozenset({FAIL})
INCONCLUSIVE = frozenset({INDETERMINATE, NOT_EXERCISED, UNJUDGED})
BROKEN = frozenset({ERROR})

EXIT_CODES_TEXT = """exit codes:
  0  every rule the run was meant to judge is PASS, or an excused known deviation
  1  a conformance FAIL
  2  bad input, bad usage, or no broker
  3  inconclusive: a rule the run was meant to judge ended INDETERMINATE or was never judged
  4  harness error: the suite itself failed (a target raised, the Java driver died, the broker
     died under the run, the report job crashed)
  130/143  interrupted by Ctrl-C / SIGTERM: what was judged is kept; --resume continues it
  when several apply: 4, then 1, then 3"""


def exit_code(rule_verdicts: Mapping[str, str], *, harness_errors: int = 0, failed_cases: int = 0,
              excused: Collection[str] = ()) -> int:
    """The process exit code for a run whose meant-to-judge rules ended with ``rule_verdicts``.

    ``harness_errors``: how many things of the suite itself failed (cases that ended ERROR, a
    crashed report job, ...). ``failed_cases``: conformance failures not visible as a rule's FAIL
    (a case's broken ``expect:`` line charged to no rule, a fuzz failure), excused ones left out.
    ``excused``: rules whose FAIL is an excused known deviation (counted as PASS here).
    """
    unknown = {rule: status for rule, status in rule_verdicts.items() if status not in STATUSES}
    if unknown:
        raise ValueError(f"unknown verdict status for {unknown}; use one of {sorted(STATUSES)}")
    if harness_errors < 0 or failed_cases < 0:
        raise ValueError(f"counts must be >= 0; got harness_errors={harness_errors}, failed_cases={failed_cases}")
    statuses = {status for rule, status in rule_verdicts.items() if not (status == FAIL and rule in excused)}
    if harness_errors or statuses & BROKEN:
        return EXIT_HARNESS
    if failed_cases or statuses & FAILED:
        return EXIT_FAIL
    if statuses & INCONCLUSIVE:
        return EXIT_INCONCLUSIVE
    return EXIT_OK
