"""Known deviations: where a real broker (or client) does not do what the model says.

Each entry in ``deviations.yaml`` names the case, the broker versions it shows on, the rule,
why, and the saved history that is the evidence. A known deviation is reported as such (an
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


def load_deviations(path: Path = DEVIATIONS_FILE) -> list[Deviation]:
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of deviations")
    out = []
    for i, raw in enumerate(data, start=1):
        missing = {"id", "case", "rule", "brokers", "reason", "evidence"} - set(raw or {})
        if missing:
            raise ValueError(f"{path}: deviation {i} lacks {sorted(missing)}")
        evidence = Path(__file__).parent.parent / raw["evidence"]
        if not evidence.exists():
            raise ValueError(f"{path}: deviation {raw['id']} cites evidence {raw['evidence']}, which does not exist")
        out.append(Deviation(raw["id"], raw["case"], raw["rule"], tuple(str(b) for b in raw["brokers"]), raw["reason"], raw["evidence"]))
    return out


def known_deviation(case_id: str, broker_version: str) -> Deviation | None:
    for dev in load_deviations():
        if dev.case == case_id and any(broker_version.startswith(b) for b in dev.brokers):
            return dev
    return None
