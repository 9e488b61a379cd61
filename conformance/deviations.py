"""Known deviations: where a real broker (or client) does not do what the model says.

Each entry in ``deviations.yaml`` names the case, the broker versions it shows on, what it
excuses (the rule, the anomaly and, where it can be known, the step), why, and the saved history
that is the evidence. It excuses exactly that: any other failure in the same case is a FAIL. A known deviation is reported as such (an
expected failure), never hidden: the rule's registry status says why, and the evidence file is
checked to exist so an entry cannot outlive its proof.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

DEVIATIONS_FILE = Path(__file__).parent / "deviations.yaml"


@dataclass(frozen=True)
class Deviation:
    id: str
    case: str
    rule: str
    brokers: tuple[str, ...]  # version prefixes, e.g. "4.0"
    reason: str
    evidence: str  # path of a saved history, relative to the repository root
    anomaly: str = ""  # the anomaly it excuses (conformance.anomalies)
    step: int | None = None  # the step it excuses; None: any step of the case

    def excuses(self, case_id: str, rule_id: str, anomaly: str | None, step: int | None) -> bool:
        """Whether this deviation excuses a FAIL of ``rule_id`` with ``anomaly`` at ``step`` in ``case_id``."""
        return (case_id == self.case and rule_id == self.rule and (anomaly or "") == self.anomaly
                and (self.step is None or step == self.step))


def load_deviations(path: Path = DEVIATIONS_FILE) -> list[Deviation]:
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of deviations")
    out = []
    for i, raw in enumerate(data, start=1):
        missing = {"id", "case", "rule", "anomaly", "brokers", "reason", "evidence"} - set(raw or {})
        if missing:
            raise ValueError(f"{path}: deviation {i} lacks {sorted(missing)} (a deviation names what it excuses: "
                             "rule, anomaly and, where it can be known, step)")
        from reference_model.anomalies import ANOMALIES

        if raw["anomaly"] not in ANOMALIES:
            raise ValueError(f"{path}: deviation {raw['id']} names anomaly {raw['anomaly']!r}, which is not in "
                             f"conformance.anomalies ({', '.join(sorted(ANOMALIES))})")
        if raw.get("step") is not None and not isinstance(raw["step"], int):
            raise ValueError(f"{path}: deviation {raw['id']} has step {raw['step']!r}; give a step number or leave it out")
        evidence = Path(__file__).parent.parent / raw["evidence"]
        if not evidence.exists():
            raise ValueError(f"{path}: deviation {raw['id']} cites evidence {raw['evidence']}, which does not exist")
        out.append(Deviation(raw["id"], raw["case"], raw["rule"], tuple(str(b) for b in raw["brokers"]), raw["reason"],
                             raw["evidence"], raw["anomaly"], raw.get("step")))
    return out


def known_deviation(case_id: str, broker_version: str) -> Deviation | None:
    for dev in load_deviations():
        if dev.case == case_id and any(broker_version.startswith(b) for b in dev.brokers):
            return dev
    return None
