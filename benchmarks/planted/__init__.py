"""The second planted-fault suite: a water utility's corpus, ten defective reference pipelines
and their clean twins, and the measurement of whether ProbeGuard's probes separate them and
its surgeon names the planted mechanism (``python -m benchmarks.planted_faults``)."""
