"""Performance benchmarks and the cost model behind docs/BENCHMARKS.md (`make bench`); never run by `make test`."""
