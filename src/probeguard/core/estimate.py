"""``Estimate``: a point estimate with its 95% interval, sample size and method.

Every rate ProbeGuard reports is one. The functions that make them (Wilson, bootstrap) live in
``probeguard.stats``; this is only the value, so that every layer can carry it.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict


class Estimate(BaseModel):
    """A point estimate with its interval, sample size and the method that made it."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=True)

    value: float
    low: float
    high: float
    n: int
    method: str

    @property
    def defined(self) -> bool:
        return self.n > 0 and not math.isnan(self.value)

    def format(self, digits: int = 3, percent: bool = False) -> str:
        """``0.412 [0.301, 0.531] (n=40)``; ``n/a (n=0)`` when undefined."""
        if not self.defined:
            return f"n/a (n={self.n})"
        if percent:
            return (
                f"{self.value * 100:.1f}% [{self.low * 100:.1f}, {self.high * 100:.1f}]"
                f" (n={self.n})"
            )
        return (
            f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] (n={self.n})"
        )
