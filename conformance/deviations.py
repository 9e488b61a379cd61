"""Known deviations: where a real broker (or client) does not do what the model says.

Each entry in ``deviations.yaml`` (and in ``deviations.d/*.yaml``, one file per upstream bug
family, read in name order after it) names the case, the broker versions it shows on, what it
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
DEVIATIONS_DIR = Path(__file__).parent / "deviations.d"


@dataclass(frozen=True)
class Deviation:
    id: str
    case: str
    rule: str
    brokers: tuple[str, ...]  # releases ("4.0.8"), lines ("4.0"), majors ("3.x") or specs (">=4.0.0,<4.0.7"): ``broker_matches``
    reason: str
    evidence: str  # path of a saved history, relative to the repository root
    anomaly: str = ""  # the anomaly it excuses (conformance.anomalies)
    step: int | None = None  # the step it excuses; None: any step of the case
    # how the deviation shows when it depends on timing ("" = every run): a case it excuses may also
    # PASS on the releases it names, and that PASS does not mean the broker was fixed
    intermittent: str = ""

    def excuses(self, case_id: str, rule_id: str, anomaly: str | None, step: int | None) -> bool:
        """Whether this deviation excuses a FAIL of ``rule_id`` with ``anomaly`` at ``step`` in ``case_id``."""
        return (case_id == self.case and rule_id == self.rule and (anomaly or "") == self.anomaly
                and (self.step is None or step == self.step))


def load_deviations(path: Path | None = None) -> list[Deviation]:
    """The known deviations of ``path``, or, by default, of ``deviations.yaml`` and ``deviations.d/``;
    an id declared twice is refused."""
    if path is not None:
        return _load_file(path)
    out: list[Deviation] = []
    for file in [DEVIATIONS_FILE, *sorted(DEVIATIONS_DIR.glob("*.yaml"))]:
        for dev in _load_file(file):
            if any(d.id == dev.id for d in out):
                raise ValueError(f"{file}: deviation id {dev.id} is declared twice")
            out.append(dev)
    return out


def _load_file(path: Path) -> list[Deviation]:
    if not path.exists():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text (a binary file?); give a YAML list of deviations") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise ValueError(f"{where}: not valid YAML: {problem}; fix the YAML") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of deviations; write one '- id: KD-...' entry per deviation")
    out = []
    for i, raw in enumerate(data, start=1):
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: deviation {i} is {raw!r}; each deviation is a mapping of id, case, rule, "
                             "anomaly, brokers, reason, evidence")
        missing = {"id", "case", "rule", "anomaly", "brokers", "reason", "evidence"} - set(raw)
        if missing:
            raise ValueError(f"{path}: deviation {i} lacks {sorted(missing)} (a deviation names what it excuses: "
                             "rule, anomaly and, where it can be known, step)")
        from reference_model.anomalies import ANOMALIES

        if raw["anomaly"] not in ANOMALIES:
            raise ValueError(f"{path}: deviation {raw['id']} names anomaly {raw['anomaly']!r}, which is not in "
                             f"conformance.anomalies ({', '.join(sorted(ANOMALIES))})")
        if raw.get("step") is not None and not isinstance(raw["step"], int):
            raise ValueError(f"{path}: deviation {raw['id']} has step {raw['step']!r}; give a step number or leave it out")
        if "intermittent" in raw and not (isinstance(raw["intermittent"], str) and raw["intermittent"].strip()):
            raise ValueError(f"{path}: deviation {raw['id']} has intermittent {raw['intermittent']!r}; say in words how "
                             "often it shows and where a run passed (the measurement), or leave it out")
        if not isinstance(raw["brokers"], list) or not raw["brokers"]:
            raise ValueError(f"{path}: deviation {raw['id']} has brokers {raw['brokers']!r}; give a list of releases, "
                             "lines or specs, e.g. ['4.0.8', '>=4.0.0,<4.0.7']")
        evidence = Path(__file__).parent.parent / str(raw["evidence"])
        if not evidence.exists():
            raise ValueError(f"{path}: deviation {raw['id']} cites evidence {raw['evidence']}, which does not exist")
        out.append(Deviation(raw["id"], raw["case"], raw["rule"], tuple(str(b) for b in raw["brokers"]), raw["reason"],
                             raw["evidence"], raw["anomaly"], raw.get("step"), str(raw.get("intermittent", "")).strip()))
    return out


def broker_matches(entry: str, broker_version: str) -> bool:
    """Whether a deviation's ``brokers`` entry covers ``broker_version``: a release names itself
    ("4.0.1" is not "4.0.10"), a line its releases ("4.0"), a major its lines ("3.x"), and a spec
    (">=4.0.0,<4.0.7") the releases it admits. Versions are read by ``reference_model.releases``."""
    from reference_model import releases
    from reference_model.rules import version_in

    entry = entry.strip()
    try:
        version = releases.parse(broker_version)
    except ValueError:
        return False
    if entry[:1] in "<>=!":
        return version.is_release and version_in(broker_version, entry)
    wanted = releases.parse(entry)
    if wanted.minor is None:
        return version.major == wanted.major
    if wanted.patch is None:
        return (version.major, version.minor) == (wanted.major, wanted.minor)
    return version.number == wanted.number


def known_deviations(case_id: str, broker_version: str) -> list[Deviation]:
    """Every known deviation of ``case_id`` recorded for ``broker_version`` (a case may break
    several rules on one release, one entry each)."""
    return [dev for dev in load_deviations()
            if dev.case == case_id and any(broker_matches(b, broker_version) for b in dev.brokers)]


def known_deviation(case_id: str, broker_version: str) -> Deviation | None:
    """The first of ``known_deviations``, or None."""
    found = known_deviations(case_id, broker_version)
    return found[0] if found else None
