"""The old home of the command line, kept so ``python -m conformance.cli ...`` and imports of
``conformance.cli`` keep working. The command line is ``pulsar_conformance.cli`` (the top layer);
nothing in ``conformance`` imports this module, so it adds no upward dependency to the package.
"""

from __future__ import annotations

import sys

from pulsar_conformance.cli import build_parser, main, target_spec_from  # noqa: F401 - re-exported
from pulsar_conformance.targets import (  # noqa: F401 - re-exported
    CLIENT_CHOICES,
    describe_target,
    live_target,
    open_endpoint,
    open_target,
    parse_clients,
)

if __name__ == "__main__":
    sys.exit(main())
