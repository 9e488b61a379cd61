"""``python -m pulsar_conformance ...``: the same as ``pulsar-conformance ...``."""

import sys

from pulsar_conformance.cli import main

sys.exit(main())
