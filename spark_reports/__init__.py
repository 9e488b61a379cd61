"""Conformance reports over many outcome records with PySpark (see the reports issue).

Nothing is implemented here yet: the outcome corpus this package reads is produced by the
fuzzing work, which has not landed.
"""
