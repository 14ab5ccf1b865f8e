"""What every artefact a run saves has in common: one header model, and how it is written.

Every file ProbeGuard writes for a reader or a later command (``run.jsonl``'s first line,
``run.json``, ``eval.json``, ``fix.json``, ``comparison.json``, ``bench.json``) is a pydantic
model that inherits ``ArtifactHeader``: its ``kind``, its format ``version``, the ProbeGuard
version that wrote it, the fingerprints of the pipeline and of the corpus it describes, and
the seed. The header fields sit at the top level of the JSON, first.

NaN is written as ``null`` (JSON has none); ``JsonEstimate`` and ``JsonFloat`` read it back as
NaN, so a rate that was undefined stays undefined after a round trip.

The pieces of a saved summary are models read like the dicts they replace (``ByKeyModel``):
``summary["fcs"]["value"]`` is ``summary.fcs.value``, for code that reads them as JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import ItemsView, Iterator, KeysView, ValuesView
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from probeguard.core.estimate import Estimate
from probeguard.core.io import atomic_write_text

__all__ = [
    "ArtifactHeader",
    "ByKeyModel",
    "JsonEstimate",
    "JsonFloat",
    "artifact_json",
    "write_artifact",
]


FROZEN_RESULT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=True)
"""The config of every saved result model: unknown keys are errors, values are frozen, and
NaN (an undefined rate) is allowed."""


class ArtifactHeader(BaseModel):
    """The header every saved artefact starts with (inherited, so its fields come first)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    kind: str
    """What the file is: ``header`` (``run.jsonl``), ``run``, ``eval``, ``fix``, ``sweep``,
    ``bench``; ``probeguard schema KIND`` prints each one's JSON schema."""
    version: int
    """Format version of this kind (README, "Run log versions")."""
    probeguard_version: str
    """The ProbeGuard version that wrote the file."""
    pipeline_name: str | None = None
    """The pipeline under test (None when the artefact covers several, or none was called)."""
    pipeline_fingerprint: str | None = None
    """sha256 of the pipeline's canonical config and version (None as for the name)."""
    corpus_fingerprint: str | None = None
    """sha256 of the corpus (``core.documents.corpus_fingerprint``); None when unknown."""
    seed: int = 0
    """The seed of every random choice of the run."""


def _null_to_nan(value: Any) -> Any:
    if isinstance(value, dict) and value.get("value", 0.0) is None:
        return {
            **value,
            **{k: math.nan for k in ("value", "low", "high") if value.get(k) is None},
        }
    return value


JsonEstimate = Annotated[Estimate, BeforeValidator(_null_to_nan)]
"""An ``Estimate`` field that reads the ``null`` a NaN estimate is written as back as NaN."""


def _none_to_nan(value: Any) -> Any:
    return math.nan if value is None else value


JsonFloat = Annotated[float, BeforeValidator(_none_to_nan)]
"""A float field that reads the ``null`` a NaN is written as back as NaN."""


class ByKeyModel(BaseModel):
    """A model read like the dict it replaces: ``model[key]``, ``key in model``, ``get``,
    keys, items and iteration over its dump (``dict(model)`` is that dump)."""

    def __getitem__(self, key: str) -> Any:
        return self.model_dump()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.model_dump()

    def get(self, key: str, default: Any = None) -> Any:
        return self.model_dump().get(key, default)

    def keys(self) -> KeysView[str]:
        return self.model_dump().keys()

    def items(self) -> ItemsView[str, Any]:
        return self.model_dump().items()

    def values(self) -> ValuesView[Any]:
        return self.model_dump().values()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # keys, as a dict's
        return iter(self.model_dump())

    def __len__(self) -> int:
        return len(self.model_dump())


def artifact_json(model: BaseModel) -> dict[str, Any]:
    """``model`` as plain JSON data (NaN and infinities as None), by its serialisers."""
    data: dict[str, Any] = json.loads(model.model_dump_json())
    return data


def write_artifact(path: str | Path, model: BaseModel) -> Path:
    """Write ``model``'s JSON to ``path`` atomically: indented, UTF-8, no NaN."""
    text = json.dumps(artifact_json(model), indent=2, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(path, text + "\n")
