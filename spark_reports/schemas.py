"""The outcome corpus schema (version 1) as a Spark ``StructType``, and the version check.

Source of truth: ``conformance/corpus.py:SCHEMA`` (pyarrow) and ``docs/outcome-corpus.md``.
``CORPUS_STRUCT`` is its field-for-field twin (names, order, types, nullability);
``tests/spark/test_schemas.py`` compares the two so they cannot drift apart.

A corpus folder is refused before Spark reads it when any part is missing, truncated or of
another schema version (``check_corpus_folder``, the message names the file): Spark itself
would either fail deep inside a task or, worse, silently read a file with a different layout.
A DataFrame built some other way is checked with ``require_corpus_schema``.

Choices: the version lives in each Parquet file's key-value metadata
(``pulsar_conformance_corpus_version``), which Spark does not expose, so the folder check
reads the footers with pyarrow (footers only: cheap even for large corpora).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from conformance.corpus import CORPUS_SCHEMA_VERSION, VERSION_KEY, CorpusError, check_part, part_files

__all__ = [
    "CORPUS_SCHEMA_VERSION",
    "CORPUS_STRUCT",
    "CorpusError",
    "VERSION_KEY",
    "arrow_to_spark",
    "check_corpus_folder",
    "check_part_columns",
    "require_corpus_schema",
]

CORPUS_STRUCT = StructType(
    [
        StructField("run_id", StringType(), nullable=False),
        StructField("trace_id", StringType(), nullable=False),
        StructField("step", IntegerType(), nullable=False),
        StructField("op", StringType(), nullable=False),
        StructField("target", StringType(), nullable=False),
        StructField("broker_version", StringType(), nullable=True),
        StructField("client", StringType(), nullable=True),
        StructField("client_version", StringType(), nullable=True),
        StructField("profile", StringType(), nullable=True),
        StructField("rule_ids", ArrayType(StringType(), containsNull=True), nullable=True),
        StructField("anomalies", ArrayType(StringType(), containsNull=True), nullable=True),
        StructField("failed_rule_ids", ArrayType(StringType(), containsNull=True), nullable=True),
        StructField("indeterminate_rule_ids", ArrayType(StringType(), containsNull=True), nullable=True),
        StructField("verdict", StringType(), nullable=False),
        StructField("outcome_status", StringType(), nullable=False),
        StructField("observation", StringType(), nullable=True),
        StructField("observation_key", StringType(), nullable=True),
        StructField("explanation", StringType(), nullable=True),
        StructField("t_start_ms", DoubleType(), nullable=True),
        StructField("t_end_ms", DoubleType(), nullable=True),
    ]
)

_ARROW_TO_SPARK: dict[pa.DataType, DataType] = {
    pa.string(): StringType(),
    pa.int32(): IntegerType(),
    pa.float64(): DoubleType(),
}


def arrow_to_spark(schema: pa.Schema) -> StructType:
    """The Spark twin of a (flat, corpus-like) pyarrow schema; used to check ``CORPUS_STRUCT``."""
    fields = []
    for f in schema:
        if pa.types.is_list(f.type):
            inner = _ARROW_TO_SPARK[f.type.value_type]
            dtype: DataType = ArrayType(inner, containsNull=f.type.value_field.nullable)
        else:
            dtype = _ARROW_TO_SPARK[f.type]
        fields.append(StructField(f.name, dtype, nullable=f.nullable))
    return StructType(fields)


def _shape(struct: StructType) -> list[tuple[str, str]]:
    # nullability is not compared: Spark reads every Parquet column as nullable
    return [(f.name, f.dataType.simpleString()) for f in struct.fields]


def column_problems(want: list[tuple[str, str]], got: list[tuple[str, str]]) -> str:
    """How the columns ``got`` (name, type) differ from ``want``: missing, unexpected, retyped, reordered."""
    expected = dict(want)
    missing = [n for n, _ in want if n not in dict(got)]
    extra = [n for n, _ in got if n not in expected]
    changed = [f"{n}: {t} (expected {expected[n]})" for n, t in got if n in expected and expected[n] != t]
    return "; ".join(p for p in (
        f"missing columns {missing}" if missing else "",
        f"unexpected columns {extra}" if extra else "",
        f"changed types {changed}" if changed else "",
    ) if p) or "columns in another order"


def require_corpus_schema(df: DataFrame, *, source: str = "<DataFrame>") -> DataFrame:
    """``df`` if its columns are the corpus v1 columns (names, order, types); else ``CorpusError``."""
    want, got = _shape(CORPUS_STRUCT), _shape(df.schema)
    if want != got:
        problems = column_problems(want, got)
        raise CorpusError(
            f"{source}: not an outcome corpus of schema version {CORPUS_SCHEMA_VERSION} ({problems}); "
            "regenerate it with this version of pulsar-conformance")
    return df


REGENERATE = "regenerate the corpus with this pulsar-conformance (pulsar-conformance run), or move the part out of the folder"


def check_corpus_folder(corpus_dir: str | Path) -> list[Path]:
    """Every ``part-*.parquet`` of ``corpus_dir``, after refusing a missing folder, an empty one,
    and any part that is truncated, of another schema version, or whose columns are not the
    corpus's (``CorpusError``: one line naming the file, the columns and what to do). Footers only:
    no Spark, no data pages."""
    try:
        parts = part_files(Path(corpus_dir))  # CorpusError when the folder does not exist
    except CorpusError as err:
        raise CorpusError(f"{err}; give --outcomes the corpus folder of a run (OUT/corpus)") from None
    if not parts:
        raise CorpusError(f"{corpus_dir}: no part-*.parquet files; is this an outcome corpus folder? "
                          "give --outcomes the corpus folder of a run (OUT/corpus)")
    for part in parts:
        try:
            check_part(part)
        except (CorpusError, ValueError) as err:
            text = " ".join(str(err).split())
            if not text.startswith(str(part)):
                text = f"{part}: {text}"
            raise CorpusError(f"{text}; {REGENERATE}") from None
        check_part_columns(part)
    return parts


def _arrow_shape(schema: pa.Schema) -> list[tuple[str, str]]:
    # list<item: string> and list<element: string> are the same column: compare value types
    return [(f.name, f"list<{f.type.value_type}>" if pa.types.is_list(f.type) else str(f.type)) for f in schema]


def check_part_columns(part: Path) -> None:
    """Refuse a part whose columns (names, order, types) are not the corpus's, even when its
    metadata claims the right schema version; the message names the file and the columns."""
    import pyarrow.parquet as pq

    from conformance.corpus import SCHEMA

    try:
        got = _arrow_shape(pq.read_schema(part))
    except (pa.ArrowException, OSError) as err:
        raise CorpusError(f"{part}: not a readable Parquet file ({' '.join(str(err).split())}); {REGENERATE}") from None
    want = _arrow_shape(SCHEMA)
    if got != want:
        raise CorpusError(f"{part}: tagged corpus schema version {CORPUS_SCHEMA_VERSION} but its columns are not the "
                          f"corpus's ({column_problems(want, got)}); {REGENERATE}")
