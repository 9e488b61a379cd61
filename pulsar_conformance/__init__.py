"""The command line of the conformance suite, its top layer: ``pulsar-conformance`` / ``python -m pulsar_conformance``.

  cli.py       argument parsing and printing only; exit codes (``conformance.verdict_exit``)
  run_job.py   the main job (``run``): cases on the model and the target per client, a fuzz
               budget, summaries, JUnit XML, the client matrix, the Spark report
  commands.py  the work behind replay, check, diff-clients and broker
  targets.py   obtaining a target: the model, or a live broker driven by one client

Layers point one way: reference_model <- fixtures <- conformance <- reports <- spark_reports <-
pulsar_conformance. Nothing below imports this package (tests/unit/test_verdict_exit.py checks the
layers; the old ``python -m conformance.cli`` entry point, an upward import, is gone).
"""
