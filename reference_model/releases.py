"""Broker releases: one reading of a version string, and the model line a release belongs to.

Pulsar part: the broker's release number, as ``pulsar-admin brokers version`` (``GET
/admin/v2/brokers/version``) reports it, as Maven Central names the server distribution
(``org.apache.pulsar:pulsar-server-distribution:<release>``), and as a rule's ``applies_to``
spec compares it ("``>=4.0.3``").

Every part of the project that reads a broker version reads it here: the model's profiles
(``profiles.profile_for``), the Key_Shared selector profiles (``key_shared.profile_for_broker``),
the rules' ``applies_to`` specs, the embedded-broker fixture, the Java driver's client version,
and the reports (JUnit, Spark, HTML), so "3.3", "3.x" and "3.3.6" mean one thing everywhere.

Vocabulary:

- a *release* is ``MAJOR.MINOR.PATCH`` ("4.0.8"), optionally followed by a suffix that is not
  part of the number ("4.0.8-SNAPSHOT", a vendor build tag such as "4.0.8.2" or "4.0.8-tdmq");
- a *line* is ``MAJOR.MINOR`` ("4.0") and means the releases of that line;
- a *major* is ``MAJOR.x`` ("3.x") and means every release of that major.

The model does not keep one parameter set per release: behaviour that changed between releases
is grouped into the *model lines* of ``MODEL_LINES`` (``LINE_SPANS`` says which releases each
covers). ``2.x`` is 2.10 and 2.11 (the oldest releases the suite runs), ``3.x`` every 3.*
release, ``4.0`` the 4.0.* releases, ``4.1`` every later 4.* release, ``5.x`` every 5.* release:
4.1 and later keep 4.1's defaults until a release is shown to differ (the reason
``profiles.Profile`` has its 4.1 values: the broker defaults changed in 4.1, apache/pulsar#23167
and #22917), and 2.x keeps 3.x's. A rule whose truth changed inside a line says so in its
``applies_to``.

Choices: a version that cannot be read raises ``ValueError`` naming the text and the accepted
forms; readers that must never fail (report sorting) use ``sort_key``, which orders unreadable
text after every release. Releases before 2.10 are not a model line (the suite does not run
them), so ``model_line`` refuses them.
Not modelled: release candidates ordered before their release ("4.1.0-rc1" sorts as 4.1.0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MODEL_LINES = ("2.x", "3.x", "4.0", "4.1", "5.x")
DEFAULT_LINE = "4.0"
# line -> (major, lowest minor, highest minor or None for "and every later minor")
LINE_SPANS: tuple[tuple[str, int, int, int | None], ...] = (
    ("2.x", 2, 10, None),
    ("3.x", 3, 0, None),
    ("4.0", 4, 0, 0),
    ("4.1", 4, 1, None),
    ("5.x", 5, 0, None),
)

_VERSION_RE = re.compile(
    r"^(?P<major>\d+)(?:\.(?P<minor>\d+|x))?(?:\.(?P<patch>\d+))?(?P<suffix>(?:[-+][0-9a-z]|\.\d)[0-9a-z.+_-]*)?$")


@dataclass(frozen=True)
class Release:
    """A broker version as read: a release (patch set), a line (no patch) or a major (no minor)."""

    major: int
    minor: int | None = None  # None: a whole major ("3.x")
    patch: int | None = None  # None: a line ("4.0") or a major
    suffix: str = ""  # what follows the number: "-SNAPSHOT", a vendor tag

    @property
    def is_release(self) -> bool:
        """True for a full release number ("4.0.8", "4.0.8-SNAPSHOT"), not a line or a major."""
        return self.patch is not None

    @property
    def number(self) -> str:
        """The number without its suffix: "4.0.8", "4.0" or "3.x"."""
        if self.minor is None:
            return f"{self.major}.x"
        if self.patch is None:
            return f"{self.major}.{self.minor}"
        return f"{self.major}.{self.minor}.{self.patch}"

    def as_tuple(self) -> tuple[int, int, int]:
        """(major, minor, patch), a missing part read as 0: "4.0" -> (4, 0, 0), "3.x" -> (3, 0, 0)."""
        return (self.major, self.minor or 0, self.patch or 0)


def parse(version: str) -> Release:
    """Read ``version`` ("4.0.8", "4.0.8-SNAPSHOT", "4.0", "3.x", "4"); ``ValueError`` otherwise."""
    text = str(version).strip().lower()
    m = _VERSION_RE.match(text)
    if m is None:
        raise ValueError(f"cannot read a broker version from {version!r}; expected a release like '4.0.8', "
                         "a line like '4.0' or a major like '3.x'")
    minor = m.group("minor")
    if minor == "x" and m.group("patch") is not None:
        raise ValueError(f"cannot read a broker version from {version!r}: a major ('3.x') has no patch number")
    return Release(major=int(m.group("major")),
                   minor=None if minor in (None, "x") else int(minor),
                   patch=None if m.group("patch") is None else int(m.group("patch")),
                   suffix=m.group("suffix") or "")


def line_of_release(release: Release) -> str | None:
    """The model line (``MODEL_LINES``) that covers ``release``, or None when none does."""
    for line, major, lowest, highest in LINE_SPANS:
        if release.major != major:
            continue
        if release.minor is None:
            return line if line.endswith(".x") else None  # "4.x" spans two model lines
        if release.minor >= lowest and (highest is None or release.minor <= highest):
            return line
    return None


def model_line(version: str | None) -> str:
    """The model line of ``version``: one of ``MODEL_LINES`` (``DEFAULT_LINE`` when None or empty).

    A model line's own name is itself; "4.x" is refused because it spans two model lines.
    """
    if version is None or not str(version).strip():
        return DEFAULT_LINE
    text = str(version).strip().lower()
    if text in MODEL_LINES:
        return text
    line = line_of_release(parse(text))
    if line is None:
        raise ValueError(f"unknown broker version {version!r}; use one of {', '.join(MODEL_LINES)} "
                         "or a release from 2.10 on, like 4.0.8")
    return line


def model_line_or_text(version: str | None) -> str:
    """``model_line``, but an unreadable or unknown version comes back as its own trimmed,
    lower-cased text: for reports, which show whatever a history recorded rather than fail."""
    try:
        return model_line(version)
    except ValueError:
        return str(version).strip().lower()


def version_tuple(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of ``version``, for comparing against ``applies_to`` bounds."""
    return parse(version).as_tuple()


def release_number(version: str | None) -> str | None:
    """The full release number in ``version`` ("4.0.8" from "4.0.8-SNAPSHOT"), or None when
    ``version`` is empty, unreadable, a line or a major."""
    try:
        release = parse(version) if version and str(version).strip() else None
    except ValueError:
        return None
    return release.number if release is not None and release.is_release else None


# A line stands for the release the suite runs for it (fixtures LINE_RELEASES); a major for its newest line.
LINE_RELEASE = {"2.10": "2.10.5", "2.11": "2.11.0", "3.0": "3.0.7", "3.1": "3.1.0", "3.2": "3.2.3", "3.3": "3.3.6",
                "4.0": "4.0.8", "4.1": "4.2.4", "4.2": "4.2.4", "2.x": "2.11.0", "3.x": "3.3.6", "4.x": "4.2.4"}


def representative_release(version: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of the release ``version`` means: itself when it is a release, the release the suite
    runs for a line or major (``LINE_RELEASE``), None when unknown (no version, an unreadable one, "5.x")."""
    number = release_number(version)
    if number is None and version:
        try:
            number = LINE_RELEASE.get(parse(version).number)
        except ValueError:
            number = None
    return version_tuple(number) if number is not None else None


def sort_key(version: str | None) -> tuple:
    """A key that orders versions by number ("3.3.6" < "4.0" < "4.0.8" < "4.1.2"), a line before
    its releases, and unreadable text after every version (alphabetically among itself)."""
    text = str(version or "").strip().lower()
    try:
        r = parse(text)
    except ValueError:
        return (1, 0, 0, 0, 0, text)
    return (0, r.major, -1 if r.minor is None else r.minor, -1 if r.patch is None else r.patch,
            1 if r.suffix else 0, r.suffix)
