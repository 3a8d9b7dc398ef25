"""Benchmarks: ratios side by side in one run (law, streams, instrumentation overhead)."""
