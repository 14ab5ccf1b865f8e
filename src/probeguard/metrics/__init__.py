"""Metrics: pure functions over outputs and expectations."""
