"""Speed and scale benchmarks. Each prints its figure and a ratio against a named baseline
measured in the same run: ``python -m benchmarks.run_all`` (or ``make bench``)."""
