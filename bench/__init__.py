"""The benchmarks (``make bench``); each is run from the repository root as ``python -m bench.<name>``."""
