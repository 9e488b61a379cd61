"""Spark jobs over the outcome corpus: I/O only (read Parquet, call ``spark_reports.transforms``,
write outputs). The Spark session is created here, in ``session()``, and nowhere else."""
