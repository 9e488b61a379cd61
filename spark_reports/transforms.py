"""Reports over the outcome corpus: pure ``DataFrame -> DataFrame`` transforms.

Pulsar part: none directly; these fold the checker's per-step verdicts (``conformance/checker.py``)
recorded in the outcome corpus (``docs/outcome-corpus.md``, schema version 1) into the figures
the reports print. No transform reads or writes files or creates a Spark session: the jobs in
``spark_reports/jobs/`` do the I/O, and ``tests/spark/`` runs every transform on a few rows.

Which rows are which:
- *model rows* have ``target == "model"``: the reference model's prediction for the trace; their
  ``broker_version`` is the line the model describes (``3.x``, ``4.0``, ``4.1``) and their
  ``client`` the client kind (``cpp``, ``java``, or ``mixed`` for cross-client traces).
- *broker rows* are every other target: what a live broker did, e.g. ``4.0.8`` / ``python``
  (clients ``python``, ``java``, and ``mixed`` for cross-client traces).
  A broker row is paired with the model row of the same run, trace and step whose line and
  client kind match (``line_of`` / ``client_kind_of`` mirror ``reference_model.profiles``).
  The ``profile`` column is not a pairing key: within a run a trace id names one trace, its
  pinned profile included, while a broker row's profile also carries the ``broker_config`` the
  broker reported (``conformance/targets/pulsar.py``), which the model's row of the same trace
  never has and which differs between releases. Pairing on it left every broker row of a real
  run without a prediction (issue 20).
- A model row records either the release the model played (``ModelTarget.run``: the embedded
  broker's, e.g. ``4.0.8``) or only its line (the fuzz builder's ``model_history``: ``4.0``);
  ``model_release_of_line`` gives the line's rows the release, when the corpus's model rows of that
  line and client name exactly one, so a run's model is one column per release and client.

Choices:
- Keys are compared with ``eqNullSafe`` (a null client or broker version is a value, not "unknown").
- Rows are never de-duplicated: a redelivery is its own ``receive`` step, and a row recorded
  twice (a resumed run) is reported twice rather than hidden.
- A rule's verdict at a step comes from the schema-v2 columns ``failed_rule_ids`` and
  ``indeterminate_rule_ids``: a step that failed one rule does not count against the other
  rules it judged.
- Trends order runs by ``run_id``: schema v1 has no run timestamp.

Not modelled: timing windows are not in the corpus; ``timing_points`` measures a broker's
redelivery instant against the model's (the model delivers at the earliest allowed instant).
"""

from __future__ import annotations

from functools import reduce
from typing import Iterable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from conformance import verdicts
from conformance.verdicts import FAIL, INDETERMINATE, PASS
from reference_model import releases

MODEL = "model"

# Rules whose verdicts are about *when* a message arrives (redelivery and delay windows).
TIMING_RULES = ("PLS-NACK-001", "PLS-NACK-002", "PLS-NACK-004", "PLS-ACKTIMEOUT-002")

# The diff categories of ``model_vs_broker``.
SAME, DIFFERS, NO_PREDICTION = "same", "differs", "no_prediction"

_TRACE_INSTANCE = ("run_id", "trace_id", "target", "broker_version", "client", "profile")


# --------------------------------------------------------------------------- helpers


def line_of(version: Column) -> Column:
    """The model line of a broker version, as ``reference_model.releases.model_line_or_text``
    reads it, built from the same table (``releases.LINE_SPANS``): ``3.x`` for any 3.*, ``4.0``
    for 4.0.*, ``4.1`` for later 4.*, ``4.0`` when empty; anything else is kept as written."""
    v = F.lower(F.trim(version))
    major = F.regexp_extract(v, r"^(\d+)", 1)
    minor = F.regexp_extract(v, r"^\d+\.(\d+)", 1)
    expr = F.when(v.isNull() | (v == ""), F.lit(releases.DEFAULT_LINE)).when(v.isin(*releases.MODEL_LINES), v)
    for line, line_major, lowest, highest in releases.LINE_SPANS:
        in_line = (major == F.lit(str(line_major))) & (minor != "") & (minor.cast("int") >= lowest)
        if highest is not None:
            in_line = in_line & (minor.cast("int") <= highest)
        if line.endswith(".x"):
            in_line = (major == F.lit(str(line_major))) & ((minor == "") | in_line)
        expr = expr.when(in_line, F.lit(line))
    return expr.otherwise(v)


def client_kind_of(client: Column) -> Column:
    """``java`` for the Java client, ``go`` for the Go client, ``mixed`` for cross-client traces
    (handles of several clients: the model records them as ``mixed`` too), ``cpp`` for everything
    else (the Python client wraps C++), as ``reference_model.profiles.profile_for`` names them."""
    c = F.lower(F.trim(client))
    return (F.when(c.startswith("java"), F.lit("java"))
            .when(c.startswith("go"), F.lit("go"))
            .when(c == "mixed", F.lit("mixed"))
            .otherwise(F.lit("cpp")))


def _severity(verdict: Column) -> Column:
    """``conformance.verdicts.severity`` of a row's judged verdict (anything else counts as PASS)."""
    return reduce(lambda expr, status: expr.when(verdict == status, verdicts.severity(status)),
                  verdicts.JUDGED[1:], F.when(verdict == verdicts.JUDGED[0], verdicts.severity(verdicts.JUDGED[0]))
                  ).otherwise(verdicts.severity(PASS))


def _verdict_of(severity: Column) -> Column:
    """The judged verdict whose ``verdicts.severity`` is ``severity`` (PASS when none is)."""
    return reduce(lambda expr, status: expr.when(severity == verdicts.severity(status), status),
                  verdicts.JUDGED[1:], F.when(severity == verdicts.severity(verdicts.JUDGED[0]), verdicts.JUDGED[0])
                  ).otherwise(PASS)


def model_rows(corpus: DataFrame) -> DataFrame:
    return corpus.filter(F.col("target") == MODEL)


def broker_rows(corpus: DataFrame) -> DataFrame:
    return corpus.filter(F.col("target") != MODEL)


# --------------------------------------------------------------------------- model vs broker


def model_release_of_line(corpus: DataFrame) -> DataFrame:
    """``corpus`` with each model row recorded under a bare model line (``4.0``) given the release
    the corpus's other model rows of that line and client name, when they name exactly one
    (``4.0.8``); with none or several, the line is kept. Broker rows are unchanged. The pairing
    with broker rows is unchanged too (``line_of`` of the release is the line)."""
    version = F.col("broker_version")
    is_line = version.isin(*releases.MODEL_LINES)
    named = (model_rows(corpus).filter(version.isNotNull() & ~is_line)
             .select(line_of(version).alias("_line"), F.col("client").alias("_client"), version.alias("_release"))
             .distinct().groupBy("_line", "_client")
             .agg(F.count(F.lit(1)).alias("_n"), F.first("_release").alias("_release"))
             .filter(F.col("_n") == 1).drop("_n"))
    cond = (F.col("target") == MODEL) & is_line & (version == F.col("_line")) & F.col("client").eqNullSafe(F.col("_client"))
    joined = corpus.join(F.broadcast(named), cond, "left")
    return joined.withColumn("broker_version", F.coalesce(F.col("_release"), version)).select(*corpus.columns)


def fingerprint(observation: Column) -> Column:
    """A 64-bit fingerprint of an observation (xxhash64), null where the observation is null."""
    return F.when(observation.isNull(), F.lit(None).cast("long")).otherwise(F.xxhash64(observation))


def model_vs_broker(corpus: DataFrame, *, exact: bool = False) -> DataFrame:
    """Every broker row beside the model's prediction for the same run, trace and step.

    Paired on ``(run_id, trace_id, step)`` plus the model line and client kind of the broker
    row, null-safely (``eqNullSafe``); not on ``profile`` (see the module notes). ``diff`` is ``same`` (outcome
    status and observation equal, null-safely), ``differs``, or ``no_prediction`` (no model row
    for that key). One output row per broker row: duplicates are kept (a broker row recorded
    twice gives two output rows). Columns: the broker row's own, ``line``, ``client_kind``,
    ``model_status``, ``model_verdict``, ``model_t_start_ms``, ``model_t_end_ms``, ``diff``, and
    with ``exact=True`` also ``model_observation``.

    Observations are compared on ``observation_key`` (schema v2: the observation without the
    values a broker chooses freely, such as ledger ids and publish times), by ``fingerprint``
    (64-bit xxhash: two different keys collide with odds about 1 in 1.8e19 per pair) unless
    ``exact=True``, which compares and shuffles the full key strings. Use
    ``with_model_observation`` to fetch the model's observation for a few differing rows.
    """
    # run_id, trace_id and step are NOT NULL in schema v1; saying so lets Spark compare them
    # with plain equi-join keys (half the join's cost on 10 M rows). The nullable key columns
    # (broker_version and client, through line and client kind) stay null-safe.
    keyed = corpus.filter(F.col("run_id").isNotNull() & F.col("trace_id").isNotNull() & F.col("step").isNotNull())
    b = broker_rows(keyed).withColumn("line", line_of(F.col("broker_version"))).withColumn(
        "client_kind", client_kind_of(F.col("client")))
    m = model_rows(keyed).select(
        F.col("run_id").alias("m_run_id"), F.col("trace_id").alias("m_trace_id"), F.col("step").alias("m_step"),
        line_of(F.col("broker_version")).alias("m_line"), client_kind_of(F.col("client")).alias("m_client_kind"),
        F.col("outcome_status").alias("model_status"),
        (F.col("observation_key") if exact else fingerprint(F.col("observation_key"))).alias("_m_obs"),
        F.col("verdict").alias("model_verdict"), F.col("t_start_ms").alias("model_t_start_ms"),
        F.col("t_end_ms").alias("model_t_end_ms"), F.lit(True).alias("_has_model"),
    )
    pairs = (("run_id", "m_run_id"), ("trace_id", "m_trace_id"), ("step", "m_step"), ("line", "m_line"),
             ("client_kind", "m_client_kind"))
    cond = reduce(lambda acc, p: acc & b[p[0]].eqNullSafe(m[p[1]]), pairs, F.lit(True))
    joined = b.join(m, cond, "left")
    b_obs = F.col("observation_key") if exact else fingerprint(F.col("observation_key"))
    same = F.col("outcome_status").eqNullSafe(F.col("model_status")) & b_obs.eqNullSafe(F.col("_m_obs"))
    out = joined.withColumn(
        "diff", F.when(F.col("_has_model").isNull(), NO_PREDICTION).when(same, SAME).otherwise(DIFFERS))
    if exact:
        out = out.withColumnRenamed("_m_obs", "model_observation")
    return out.drop("_has_model", "_m_obs", *[p[1] for p in pairs])


def with_model_observation(diff_rows: DataFrame, corpus: DataFrame) -> DataFrame:
    """``diff_rows`` (a few rows of ``model_vs_broker``) with ``model_observation`` added, looked
    up in ``corpus`` by the same null-safe key (the small side is broadcast)."""
    names = ["run_id", "trace_id", "step", "line", "client_kind"]
    keys = diff_rows.select(*names).distinct()
    m = model_rows(corpus).select(
        "run_id", "trace_id", "step", line_of(F.col("broker_version")).alias("line"),
        client_kind_of(F.col("client")).alias("client_kind"), F.col("observation").alias("model_observation"))
    k = keys.alias("k")
    cond = reduce(lambda acc, n: acc & F.col(f"k.{n}").eqNullSafe(m[n]), names, F.lit(True))
    found = m.join(F.broadcast(k), cond, "left_semi").alias("mo")
    d = diff_rows.alias("d")
    cond2 = reduce(lambda acc, n: acc & F.col(f"d.{n}").eqNullSafe(F.col(f"mo.{n}")), names, F.lit(True))
    return d.join(F.broadcast(found), cond2, "left").select("d.*", F.col("mo.model_observation"))


def unobserved_steps(corpus: DataFrame) -> DataFrame:
    """Model steps a broker trace instance never recorded (a history cut short, a lost row).

    For every broker trace instance (run, trace, target, version, client), the model rows of
    its run, line and client kind whose step has no broker row.
    """
    b = broker_rows(corpus)
    instances = b.select(
        "run_id", "trace_id", "target", "broker_version", "client",
        line_of(F.col("broker_version")).alias("line"), client_kind_of(F.col("client")).alias("client_kind"),
    ).distinct()  # the set of trace instances, not rows
    m = model_rows(corpus).select(
        "run_id", "trace_id", "step", "op", "outcome_status", "observation",
        line_of(F.col("broker_version")).alias("line"), client_kind_of(F.col("client")).alias("client_kind"),
    )
    expected = m.join(instances, ["run_id", "trace_id", "line", "client_kind"], "inner")
    keys = ["run_id", "trace_id", "step", "target", "broker_version", "client"]
    seen = b.select(*keys)
    cond = reduce(lambda acc, k: acc & expected[k].eqNullSafe(seen[k]), keys, F.lit(True))
    return expected.join(seen, cond, "left_anti")


# --------------------------------------------------------------------------- version vs version


def version_vs_version(corpus: DataFrame, base: str, other: str) -> DataFrame:
    """Broker version ``base`` against ``other`` over the traces both ran.

    Per ``(trace_id, step, client)`` and per version: how many runs, how many FAIL,
    the distinct verdicts and the number of distinct observations. Only steps run on both
    versions appear; ``changed`` is true where the verdict sets or observations differ. Not
    keyed on ``profile``: each release reports its own ``broker_config`` there (a 3.x broker
    lacks keys 4.x has), so a key with it would pair no step across releases.
    """
    b = broker_rows(corpus).filter(F.col("broker_version").isin(base, other))
    keys = ["trace_id", "step", "client"]
    agg = b.groupBy(*keys, "broker_version").agg(
        F.count(F.lit(1)).alias("rows"),
        F.sum((F.col("verdict") == FAIL).cast("long")).alias("fail_rows"),
        F.array_sort(F.collect_set("verdict")).alias("verdicts"),
        F.array_sort(F.collect_set(F.xxhash64("outcome_status", "observation_key"))).alias("_obs"),
        F.min("observation").alias("observation"),
        F.first("op").alias("op"),
        F.first("rule_ids").alias("rule_ids"),
    )
    a = agg.filter(F.col("broker_version") == base).alias("a")
    o = agg.filter(F.col("broker_version") == other).alias("o")
    cond = reduce(lambda acc, k: acc & F.col(f"a.{k}").eqNullSafe(F.col(f"o.{k}")), keys, F.lit(True))
    out = a.join(o, cond, "inner").select(
        *[F.col(f"a.{k}").alias(k) for k in keys],
        F.col("a.op").alias("op"), F.col("a.rule_ids").alias("rule_ids"),
        F.lit(base).alias("base_version"), F.lit(other).alias("other_version"),
        F.col("a.rows").alias("base_rows"), F.col("o.rows").alias("other_rows"),
        F.col("a.fail_rows").alias("base_fail_rows"), F.col("o.fail_rows").alias("other_fail_rows"),
        F.col("a.verdicts").alias("base_verdicts"), F.col("o.verdicts").alias("other_verdicts"),
        F.col("a.observation").alias("base_observation"), F.col("o.observation").alias("other_observation"),
        (~(F.col("a.verdicts").eqNullSafe(F.col("o.verdicts")) & F.col("a._obs").eqNullSafe(F.col("o._obs"))))
        .alias("changed"),
    )
    return out


# --------------------------------------------------------------------------- summaries


def summarise(corpus: DataFrame) -> DataFrame:
    """Counts per rule, anomaly, target, broker version, client and profile.

    ``rule_ids`` is exploded (one row per rule judged at a step) and so is ``anomalies`` (null
    where none); steps that judged no rule are left out. Columns: the keys, ``rows``, ``pass``,
    ``fail``, ``indeterminate``.
    """
    keys = ["target", "broker_version", "client", "profile"]
    # count first by the arrays themselves (a few thousand distinct combinations), then explode
    # the counts: the same figures as exploding every row, without multiplying 10 M rows by 3
    counted = corpus.filter(F.size("rule_ids") > 0).groupBy(
        "rule_ids", "failed_rule_ids", "indeterminate_rule_ids", "anomalies", *keys
    ).agg(F.count(F.lit(1)).alias("rows"))
    exploded = counted.select(
        F.explode("rule_ids").alias("rule_id"), "failed_rule_ids", "indeterminate_rule_ids", "anomalies", *keys, "rows")
    failed = F.coalesce(F.array_contains("failed_rule_ids", F.col("rule_id")), F.lit(False))
    unknown = F.coalesce(F.array_contains("indeterminate_rule_ids", F.col("rule_id")), F.lit(False)) & ~failed
    # the step's anomalies are what its failing rules saw: a rule that passed there gets none
    # (one row, anomaly null), so it is not counted once per other rule's anomaly
    exploded = exploded.select(
        "rule_id", *keys, "rows", failed.alias("_failed"), unknown.alias("_unknown"),
        F.explode_outer(F.when(failed | unknown, F.col("anomalies"))).alias("anomaly"))
    return exploded.groupBy("rule_id", "anomaly", *keys).agg(
        F.sum("rows").alias("rows"),
        F.sum(F.when(~F.col("_failed") & ~F.col("_unknown"), F.col("rows")).otherwise(0)).alias("pass"),
        F.sum(F.when(F.col("_failed"), F.col("rows")).otherwise(0)).alias("fail"),
        F.sum(F.when(F.col("_unknown"), F.col("rows")).otherwise(0)).alias("indeterminate"),
    )


def rule_verdicts(summary: DataFrame) -> DataFrame:
    """One verdict per (rule, target, broker version, client) from ``summarise``'s output:
    FAIL if any step judging the rule failed, else INDETERMINATE if any was, else PASS."""
    return summary.groupBy("rule_id", "target", "broker_version", "client").agg(
        F.sum("rows").alias("rows"), F.sum("fail").alias("fail"), F.sum("indeterminate").alias("indeterminate"),
    ).withColumn(
        "verdict", F.when(F.col("fail") > 0, FAIL).when(F.col("indeterminate") > 0, INDETERMINATE).otherwise(PASS))


def trace_verdicts(corpus: DataFrame) -> DataFrame:
    """One row per trace instance (run, trace, target, version, client, profile): its worst
    verdict, its length (highest step) and how many rows it has."""
    return corpus.groupBy(*_TRACE_INSTANCE).agg(
        _verdict_of(F.max(_severity(F.col("verdict")))).alias("verdict"),
        F.max("step").alias("length"),
        F.count(F.lit(1)).alias("rows"),
    )


def flaky_traces(corpus: DataFrame) -> DataFrame:
    """Traces whose verdict differs between runs on the same target, version, client and profile.

    Columns: ``trace_id``, target, broker_version, client, profile, ``runs``, ``fail_runs``,
    ``verdicts`` (sorted distinct), ``first_fail_run`` (lowest run id that failed).
    """
    per_run = trace_verdicts(corpus)
    return (
        per_run.groupBy("trace_id", "target", "broker_version", "client", "profile")
        .agg(
            F.count(F.lit(1)).alias("runs"),
            F.sum((F.col("verdict") == FAIL).cast("long")).alias("fail_runs"),
            F.array_sort(F.collect_set("verdict")).alias("verdicts"),
            F.min(F.when(F.col("verdict") == FAIL, F.col("run_id"))).alias("first_fail_run"),
        )
        .filter(F.size("verdicts") > 1)
    )


def failing_steps(corpus: DataFrame) -> DataFrame:
    """FAIL rows exploded by the rules that failed there: ``rule_id`` plus the row's own columns."""
    return corpus.filter(F.col("verdict") == FAIL).withColumn("rule_id", F.explode("failed_rule_ids"))


def minimal_witnesses(corpus: DataFrame, by: Iterable[str] = ("target", "broker_version", "client")) -> DataFrame:
    """Per failing rule (and per ``by`` columns): the shortest failing trace instance.

    Shortest = fewest steps; ties go to the lowest ``trace_id``, then ``run_id``, then the
    earliest failing step. Columns: ``rule_id``, the ``by`` columns, the trace instance,
    ``length``, the failing ``step``, ``op``, ``anomalies``, ``explanation``, ``observation``,
    ``failing_instances`` (how many trace instances failed this rule in that group).
    """
    by = list(by)
    fails = failing_steps(corpus)
    instances = fails.select(*_TRACE_INSTANCE).distinct()  # the failing trace instances (few)
    lengths = (
        corpus.join(F.broadcast(instances), list(_TRACE_INSTANCE), "left_semi")
        .groupBy(*_TRACE_INSTANCE)
        .agg(F.max("step").alias("length"))
    )
    ranked = fails.join(lengths, list(_TRACE_INSTANCE), "inner")
    group = ["rule_id", *by]
    order = Window.partitionBy(*group).orderBy("length", "trace_id", "run_id", "step")
    count = Window.partitionBy(*group)
    instance_key = F.concat_ws("\u0000", *[F.coalesce(F.col(c), F.lit("")) for c in _TRACE_INSTANCE])
    return (
        ranked.withColumn("_rank", F.row_number().over(order))
        .withColumn("failing_instances", F.size(F.collect_set(instance_key).over(count)))
        .filter(F.col("_rank") == 1)
        .select(*group, *[c for c in _TRACE_INSTANCE if c not in group], "length", "step", "op", "anomalies",
                "explanation", "observation", "failing_instances")
    )


def trend_by_run(corpus: DataFrame) -> DataFrame:
    """Per run and (target, version, client): trace instances, failing ones, and failed rows."""
    per_run = trace_verdicts(corpus)
    return per_run.groupBy("run_id", "target", "broker_version", "client").agg(
        F.count(F.lit(1)).alias("traces"),
        F.sum((F.col("verdict") == FAIL).cast("long")).alias("failing_traces"),
        F.sum((F.col("verdict") == INDETERMINATE).cast("long")).alias("indeterminate_traces"),
    )


def timing_points(diff: DataFrame, rules: Iterable[str] = TIMING_RULES) -> DataFrame:
    """Redeliveries judged by a timing rule: the broker's delivery instant against the model's.

    From ``model_vs_broker`` output: receive/read_next rows that got a message with
    ``redelivery_count > 0`` and judged one of ``rules``. ``delta_ms`` = broker ``t_end_ms``
    minus model ``t_end_ms`` (negative: earlier than the model's earliest allowed instant).
    """
    rules = list(rules)
    count = F.get_json_object("observation", "$.value.message.redelivery_count").cast("int")
    return (
        diff.filter(F.col("op").isin("receive", "read_next") & (count > 0) & F.col("model_t_end_ms").isNotNull())
        .withColumn("rule_id", F.explode(F.array_intersect("rule_ids", F.array(*[F.lit(r) for r in rules]))))
        .select(
            "rule_id", "target", "broker_version", "client", "run_id", "trace_id", "step", "verdict",
            "anomalies", (F.col("t_end_ms") - F.col("model_t_end_ms")).alias("delta_ms"),
            "model_t_end_ms", "t_end_ms",
        )
    )


def diff_counts(diff: DataFrame) -> DataFrame:
    """``model_vs_broker`` output counted per target, version, client, diff and verdict."""
    return diff.groupBy("target", "broker_version", "client", "diff", "verdict").agg(
        F.count(F.lit(1)).alias("rows"))


def divergent_rule_counts(diff: DataFrame) -> DataFrame:
    """The divergent rows of ``model_vs_broker`` output (``diff == differs`` and a FAIL verdict: the
    broker did what the model does not allow), counted per target, version, client, trace and the
    rules that FAILed at the step (``failed_rule_ids``, sorted; empty where the row names none).
    The report tells from these which rows a known deviation explains (a deviation names its case
    and rule); their sum per combo is ``diff_counts``'s differs/FAIL rows."""
    return (diff.filter((F.col("diff") == DIFFERS) & (F.col("verdict") == FAIL))
            .withColumn("failed_rule_ids", F.array_sort(F.coalesce(F.col("failed_rule_ids"), F.array().cast("array<string>"))))
            .groupBy("target", "broker_version", "client", "trace_id", "failed_rule_ids")
            .agg(F.count(F.lit(1)).alias("rows")))


def divergent_trace_instances(diff: DataFrame) -> DataFrame:
    """Broker trace instances with at least one step that differs from the model."""
    return diff.filter(F.col("diff") != SAME).groupBy(*_TRACE_INSTANCE).agg(
        F.array_sort(F.collect_list("step")).alias("steps"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("anomalies")))).alias("anomalies"),
    )
