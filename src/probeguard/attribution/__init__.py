"""The surgeon: which component caused each failure, and what to change.

For every failure of a scan (a failed golden case; a failed probe group, through its failing
roles), attribution asks the runner — never the pipeline — for counterfactual re-runs that
swap one component at a time (``swaps``: oracle context, whole-document index, better
retrieval, clean corpus, hardened prompt), all in one extra pass, re-judges the failure with
each swapped record in place of the failing one (``engine``), and decides its cause by which
swap repairs it (``decide``):

* oracle context repairs ⇒ the failure lies before generation; then clean corpus ⇒ **corpus**,
  else whole documents ⇒ **chunker**, else better retrieval ⇒ **retriever** (that priority:
  narrowest intervention first; the others that repair are listed in ``also``); else the
  hardened prompt ⇒ **prompt**; else an abstain case ⇒ **generator** (no refusal gate), gold
  evidence not retrieved ⇒ **retriever**, otherwise **undetermined**;
* oracle context still fails ⇒ hardened prompt repairs ⇒ **prompt**; a pre-generation swap
  repairs ⇒ its component; nothing repairs ⇒ **generator**;
* oracle context impossible (no gold evidence, unsupported, errored) ⇒ the first repairing
  swap's component, else **undetermined** with the reason; on a black-box pipeline where no
  swap can run, the cause is read from the outputs (``basis: observed``): gold evidence not
  retrieved ⇒ retriever, answer not supported by its contexts ⇒ generator.

An abstain case is never blamed on a chunking or retrieval swap that only makes the generator
refuse; an injected instruction that the hardened prompt neutralises is the **prompt**; the
clean corpus masks only documents implicated in the failure (injected, probe-named, or a
related version stating the asked fact differently: ``conflicts``). A verdict also records
*contributing* causes (a retrieval miss under a generator that fails even with the gold
evidence) and its **mechanism** (``mechanisms``; the failing probe's own reading first):
"chunk boundary splits the evidence", "stale version outranks the current one", "generator
refuses with evidence in hand", …; the summary counts both.

The full table, with row numbers recorded in each verdict, is in ``decide``. Every verdict
keeps its re-runs (case id, call key, answer, retrieved documents) and the re-judged numbers,
and carries a structured fix (``recommend``): a dotted ``config_patch`` for the reference
pipeline (only when the scanned pipeline is that one) and a sentence for other pipelines.
``run.json`` holds them in ``attribution`` and
the totals in ``summary.attribution`` (``AttributionSummary``).
"""

from probeguard.attribution.config import AttributionConfig
from probeguard.attribution.decide import CAUSES, Decision, Observed, decide
from probeguard.attribution.engine import AttributionResult, attribute, failing_roles, find_failures
from probeguard.attribution.mechanisms import FailureFacts, read_mechanism
from probeguard.attribution.recommend import Recommendation, recommend, top_fixes
from probeguard.attribution.summary import AttributionSummary, TopFix, summarize_attribution
from probeguard.attribution.swaps import SWAPS, SwapPlan, conflicting_docs, plan_swap

__all__ = [
    "AttributionConfig",
    "AttributionResult",
    "AttributionSummary",
    "CAUSES",
    "Decision",
    "FailureFacts",
    "Observed",
    "Recommendation",
    "SWAPS",
    "SwapPlan",
    "TopFix",
    "attribute",
    "conflicting_docs",
    "decide",
    "failing_roles",
    "find_failures",
    "plan_swap",
    "read_mechanism",
    "recommend",
    "summarize_attribution",
    "top_fixes",
]
