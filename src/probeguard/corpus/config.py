"""Where the corpus, golden questions and attack cases come from (``ScanConfig.corpus``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from probeguard.core.config import StrictModel


class CorpusConfig(StrictModel):
    path: Path | None = None
    """A JSONL/JSON/CSV file or a folder of .txt/.md files. None with ``demo: true``."""
    format: Literal["jsonl", "json", "csv", "folder"] | None = None
    """Guessed from the path when omitted."""
    id_field: str | None = None
    """The records' id field (JSONL/JSON/CSV). None: ``id``, optional (a record without one
    gets a content id, unless it has an id-like field such as ``doc_id``: then an error asks
    for this setting). Set: every record must have it."""
    text_field: str = "text"
    """The records' text field (JSONL/JSON/CSV)."""
    questions: Path | None = None
    """Golden questions (JSONL/JSON): ``{id, question, answers, evidence_doc_ids, mode, tags}``."""
    attacks: Path | None = None
    """Attack cases for the ``attack_types`` probe (JSONL/JSON): the golden-question fields
    plus a required ``type`` (``probeguard.dataset.attack_types``). ``demo: true`` uses the
    bundled ``attacks.jsonl``."""
    manifest: Path | None = None
    """The dataset manifest (``probeguard dataset manifest``) the questions and attack files
    must match; None: ``<file>.manifest.json`` beside each, when there is one."""
    synthesize: int = Field(default=120, ge=0)
    """With no golden questions (``questions`` unset, not the demo), a scan synthesizes this
    many cases from the corpus (``probeguard.dataset.synth``: golden questions, and attack
    cases unless ``attacks`` is set) so that every probe has questions to run; 0: none."""
