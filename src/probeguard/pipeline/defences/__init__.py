"""Optional defences of the reference pipeline, configured by ``DefencesConfig``
(``pipeline.reference.defences``; per call, ``Variation.defences``). One module per defence:

- ``trust``: source trust tiers (provenance weighting of the rank score; weight 0 drops);
- ``archive``: date-aware ranking (archived / superseded / draft documents demoted);
- ``dedupe``: near-duplicate suppression across documents;
- ``conflict``: two retrieved documents disagree on a number or date (flag or refuse);
- ``grounding``: refuse an answer its contexts do not support (offline judge);
- ``sanitise``: strip instruction-like sentences from retrieved text (spotlighting lives in
  ``probeguard.models.prompts.spotlight``);
- ``gate``: ``min_score`` per retrieval backend, and ``calibrate_gate``;
- ``expansion``: query expansion with the paraphrase tables.

Only the config is imported here, so ``probeguard.config.models`` stays cheap to import.
"""

from __future__ import annotations

from probeguard.core.defences import DefencesConfig

__all__ = ["DefencesConfig"]
