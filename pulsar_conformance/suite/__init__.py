"""The conformance suite as pytest tests, shipped in the package: run it from any folder with

    pytest --pyargs pulsar_conformance.suite --target embedded --client python --client java \
        --junitxml=junit.xml

``--target`` takes ``model``, ``embedded`` (the default: a broker from Maven Central, cached),
``docker`` or a cluster's ``pulsar://HOST:PORT`` (with ``--pulsar-admin-url``, ``--token-file``);
``--broker-version`` picks the embedded/docker release; ``--client`` (repeatable) the clients that
drive the broker (python, java, go, mixed; default python, java, mixed). Every built-in case runs
on the model (the reference, always) and, unless the target is ``model``, on the broker with each
client. The fixtures and options come from the ``pulsar_conformance`` pytest plugin, which pip
registers when the package is installed. See docs/ci-recipes.md for CI jobs built on it.
"""
