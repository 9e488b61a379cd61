"""Conformance reports over the outcome corpus with PySpark (``docs/outcome-corpus.md``).

- ``schemas``: the corpus schema v1 as a Spark ``StructType`` and the version/truncation checks;
- ``transforms``: pure ``DataFrame -> DataFrame`` functions (model vs broker diff, version vs
  version, summaries, flaky traces, minimal witnesses, trends, timing points);
- ``jobs``: I/O only; ``jobs.report.main`` is ``pulsar-conformance report``;
- ``generate``: a realistic corpus of any size made from the reference model, with divergences
  injected at known rates and a manifest of what a report must find.
"""
