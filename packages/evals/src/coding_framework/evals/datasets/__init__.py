"""Benchmark datasets, one module per benchmark family, each loading the official file format."""
