"""The Spark twin of the corpus schema, and refusing files of another version or truncated ones."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.corpus import CORPUS_SCHEMA_VERSION, SCHEMA, VERSION_KEY
from spark_reports.schemas import CORPUS_STRUCT, CorpusError, arrow_to_spark, check_corpus_folder, require_corpus_schema


def _part(path, version=str(CORPUS_SCHEMA_VERSION).encode(), rows=2):
    table = pa.Table.from_pylist(
        [{"run_id": "r", "trace_id": "t", "step": i + 1, "op": "send", "target": "model", "verdict": "PASS",
          "outcome_status": "ok", "rule_ids": [], "anomalies": []} for i in range(rows)], schema=SCHEMA)
    meta = {} if version is None else {VERSION_KEY: version}
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


def test_the_struct_matches_the_arrow_schema_field_for_field():
    assert CORPUS_STRUCT == arrow_to_spark(SCHEMA)  # names, order, types and nullability


def test_a_folder_of_good_parts_is_accepted(tmp_path):
    _part(tmp_path / "part-a-000000.parquet")
    assert [p.name for p in check_corpus_folder(tmp_path)] == ["part-a-000000.parquet"]


def test_missing_and_empty_folders_are_refused(tmp_path):
    with pytest.raises(CorpusError, match="no such corpus folder"):
        check_corpus_folder(tmp_path / "nowhere")
    with pytest.raises(CorpusError, match="no part-"):
        check_corpus_folder(tmp_path)


def test_another_schema_version_is_refused_naming_the_file(tmp_path):
    _part(tmp_path / "part-a-000000.parquet")
    _part(tmp_path / "part-b-000000.parquet", version=b"1")
    with pytest.raises(CorpusError, match=r"part-b-000000\.parquet: corpus schema version 1"):
        check_corpus_folder(tmp_path)


def test_a_truncated_file_is_refused_naming_it(tmp_path):
    part = _part(tmp_path / "part-a-000000.parquet", rows=50)
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match=r"part-a-000000\.parquet: not a readable Parquet file"):
        check_corpus_folder(tmp_path)


def test_a_dataframe_with_other_columns_is_refused(spark):
    df = spark.createDataFrame([("r", "t")], "run_id string, trace_id string")
    with pytest.raises(CorpusError, match="missing columns"):
        require_corpus_schema(df, source="frame.parquet")
    ok = spark.createDataFrame([], CORPUS_STRUCT)
    assert require_corpus_schema(ok) is ok
