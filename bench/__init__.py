"""The benchmarks that ``make bench`` and the docs' Benchmarks page run: ``python -m bench <command>``."""
