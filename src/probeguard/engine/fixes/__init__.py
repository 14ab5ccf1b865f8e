"""Fix verification: apply each recommended fix (``attribution.recommend``) to the reference
pipeline's config, re-run the failures it targets and the benign controls, and measure the
failure rate and the false refusals before and after (``verify``), with a verdict per fix
(``verdict``). ``probeguard fix RUN_DIR`` writes ``RUN_DIR/fix/fix.json`` and ``fix.md``.
"""

from probeguard.engine.fixes.collect import Fix, collect_fixes, load_run
from probeguard.engine.fixes.patch import apply_patch, merge_patches, parse_patch_option
from probeguard.engine.fixes.verdict import VERDICTS, FixCounts, decide_fix
from probeguard.engine.fixes.verify import FixRun, undone_repairs, verify_fixes, write_fix

__all__ = [
    "Fix",
    "FixCounts",
    "FixRun",
    "VERDICTS",
    "apply_patch",
    "collect_fixes",
    "decide_fix",
    "load_run",
    "merge_patches",
    "parse_patch_option",
    "undone_repairs",
    "verify_fixes",
    "write_fix",
]
