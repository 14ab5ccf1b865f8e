"""Benchmarks on public data that users can run themselves (``probeguard bench ...``)."""
