"""Every conformance case against the model and the live broker: the installed suite itself.

The tests are those of ``pulsar_conformance.suite`` (the module a user runs with
``pytest --pyargs pulsar_conformance.suite``), imported here so the repository's test run and a
user's are one suite. The repository runs them with every client: ``--client`` in pyproject's
``addopts``.
"""

from pulsar_conformance.suite.test_conformance_cases import (  # noqa: F401 - collected by pytest from here
    pytest_generate_tests,
    test_case_on_broker,
    test_case_on_model,
)
