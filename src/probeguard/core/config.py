"""``StrictModel``: the base of every model a user writes (config files, datasets).

Unknown keys are errors (``extra="forbid"``), so a misspelt setting is named, not ignored.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A pydantic model that rejects unknown fields."""

    model_config = ConfigDict(extra="forbid")
