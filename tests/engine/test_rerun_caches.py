"""The derived caches of a scan (plans, scores, attributions; issue 18): a cached re-run
writes the bytes a re-run without them writes; a changed input, setting, seed or code misses;
a corrupt entry is a logged miss; a changed response-cache entry re-runs the attribution."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import probeguard.engine.attribution_cache as attribution_cache
import probeguard.engine.plans as plans
import probeguard.engine.scoring as scoring
from probeguard.config.models import ScanConfig
from probeguard.core.documents import Document
from probeguard.engine.derived_cache import DerivedCache, modules_version, same_repr, tree_digest
from probeguard.engine.plans import plan_key
from probeguard.engine.scan import scan
from probeguard.engine.stages import load_inputs
from probeguard.probes import ProbeContext
from probeguard.probes.config import ProbesConfig
from probeguard.probes.evaluate import enabled_probes

KINDS = ("plans", "scores", "attributions")
_TIMING_LINE = re.compile(rb'^ *"(duration_s|latency_s|wall_s|cache_dir)": .*$', re.MULTILINE)
_TIMING_FIELD = re.compile(rb'"(duration_s|latency_s)":[^,}]*')


def small_config(cache: Path, **changes: Any) -> ScanConfig:
    """The demo corpus through the hashing embedder, three probes (failures to attribute),
    standard metrics on: a whole scan in a few seconds."""
    data: dict[str, Any] = {
        "demo": True,
        "runner": {"cache_dir": str(cache)},
        "pipeline": {"reference": {"embedder": {"name": "hashing", "dim": 1024}}},
        "probes": {
            "enabled": ["prompt_hijack", "benign_control", "unanswerable"],
            "settings": {
                "prompt_hijack": {"styles": ["direct"], "reruns": 0},
                "benign_control": {"planted": 1},
            },
        },
    }
    return ScanConfig.model_validate({**data, **changes})


def outputs(run: Path) -> dict[str, bytes]:
    """A run folder's files, the clock's values blanked (``run.json``'s timing lines and
    ``run.jsonl``'s timing fields) and ``run.json``'s cache folder (tests copy it)."""
    return {
        "report.md": (run / "report.md").read_bytes(),
        "report.html": (run / "report.html").read_bytes(),
        "run.json": _TIMING_LINE.sub(b"", (run / "run.json").read_bytes()),
        "run.jsonl": _TIMING_FIELD.sub(b"", (run / "run.jsonl").read_bytes()),
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``first`` (fills the caches), ``cached`` (served from them) and ``plain`` (a re-run
    with the response cache only: the derived caches deleted first), one cache folder."""
    base = tmp_path_factory.mktemp("rerun")
    cache = base / "cache"
    scan(small_config(cache), base / "first")
    scan(small_config(cache), base / "cached")
    saved = base / "saved"
    saved.mkdir()
    for kind in KINDS:
        shutil.move(cache / kind, saved / kind)
    scan(small_config(cache), base / "plain")
    for kind in KINDS:
        shutil.rmtree(cache / kind)
        shutil.move(saved / kind, cache / kind)
    return base


def copy_cache(runs: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(runs / "cache", cache)
    return cache


def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the calls of the three computations the caches stand in for."""
    counts = {"plan": 0, "score": 0, "attribute": 0}

    def counting(name: str, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return fn(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(plans, "generate_cases", counting("plan", plans.generate_cases))
    monkeypatch.setattr(plans, "plan_probes", counting("plan", plans.plan_probes))
    monkeypatch.setattr(scoring, "score_records", counting("score", scoring.score_records))
    monkeypatch.setattr(
        attribution_cache, "attribute", counting("attribute", attribution_cache.attribute)
    )
    return counts


# -- byte-identical, and served from the cache ---------------------------------------------------
def test_the_first_run_fills_each_cache(runs: Path) -> None:
    for kind in KINDS:
        assert len(list((runs / "cache" / kind).glob("*/*.json"))) == 1, kind
    assert not list((runs / "cache").glob("**/*.tmp"))


def test_a_cached_rerun_writes_the_bytes_of_a_rerun_without_the_caches(runs: Path) -> None:
    cached, plain = outputs(runs / "cached"), outputs(runs / "plain")
    for name in cached:
        assert cached[name] == plain[name], name
    assert cached["report.md"] == (runs / "first" / "report.md").read_bytes()


def test_a_rerun_generates_scores_and_attributes_nothing(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = spies(monkeypatch)
    scan(small_config(copy_cache(runs, tmp_path)), tmp_path / "run")
    assert counts == {"plan": 0, "score": 0, "attribute": 0}
    assert outputs(tmp_path / "run") == outputs(runs / "plain")


# -- what must miss ------------------------------------------------------------------------------
def test_a_changed_seed_misses_every_cache(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = spies(monkeypatch)
    result = scan(small_config(copy_cache(runs, tmp_path), seed=7), tmp_path / "run")
    assert counts == {"plan": 1, "score": 1, "attribute": 1}
    assert result.run.seed == 7


def test_a_changed_setting_misses(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = spies(monkeypatch)
    probes = {
        "enabled": ["prompt_hijack", "benign_control", "unanswerable"],
        "settings": {"prompt_hijack": {"styles": ["direct"], "reruns": 0}, "benign_control": {}},
    }
    scan(small_config(copy_cache(runs, tmp_path), probes=probes), tmp_path / "run")
    assert counts == {"plan": 1, "score": 1, "attribute": 1}


def test_a_changed_corpus_document_misses(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = small_config(copy_cache(runs, tmp_path))
    documents, golden = load_inputs(config)
    edited = [documents[0].model_copy(update={"text": documents[0].text + " Updated."})]
    counts = spies(monkeypatch)
    scan(config, tmp_path / "run", inputs=([*edited, *documents[1:]], golden))
    assert counts == {"plan": 1, "score": 1, "attribute": 1}


def test_the_plan_key_covers_corpus_questions_seed_settings_and_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = (
        Document(id="a", text="Refunds are due within 30 days of purchase."),
        Document(id="b", text="Staff get 25 days of annual leave."),
    )
    config = ProbesConfig(enabled=["unanswerable"])

    def key(ctx: ProbeContext, cfg: ProbesConfig = config) -> str:
        return plan_key(cfg, ctx, enabled_probes(cfg, ctx)[0])

    base = key(ProbeContext(documents=docs, questions=()))
    edited = (docs[0].model_copy(update={"text": "Refunds are due within 31 days."}), docs[1])
    moved = (docs[0].model_copy(update={"source": "elsewhere/a.md"}), docs[1])
    variants = [
        key(ProbeContext(documents=edited, questions=())),
        key(ProbeContext(documents=moved, questions=())),
        key(ProbeContext(documents=docs[::-1], questions=())),
        key(ProbeContext(documents=docs, questions=(), seed=1)),
        key(ProbeContext(documents=docs, questions=(), top_k=3)),
        key(
            ProbeContext(documents=docs, questions=()),
            ProbesConfig(enabled=["unanswerable"], settings={"unanswerable": {}}),
        ),
    ]
    assert base not in variants and len(set(variants)) == len(variants)
    assert key(ProbeContext(documents=docs, questions=())) == base
    monkeypatch.setattr(plans, "code_version", lambda: "another version")
    assert key(ProbeContext(documents=docs, questions=())) != base


def test_the_code_digest_changes_with_any_file_but_compiled_ones(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "data").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "data" / "words.txt").write_text("alpha\n")
    before = tree_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert tree_digest(tmp_path / "pkg") == before
    (tmp_path / "pkg" / "data" / "words.txt").write_text("alpha\nbeta\n")
    assert tree_digest(tmp_path / "pkg") != before


def test_without_a_cache_folder_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = small_config(tmp_path / "unused", runner={"cache_dir": None})
    counts = spies(monkeypatch)
    scan(config, tmp_path / "run")
    assert counts == {"plan": 1, "score": 1, "attribute": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_standard_metrics_from_an_llm_judge_are_never_cached() -> None:
    assert not scoring._llm_scores(small_config(Path("c")))
    assert scoring._llm_scores(small_config(Path("c"), judge={"name": "llm"}))
    assert scoring._llm_scores(small_config(Path("c"), judge={"relevance": "llm"}))
    assert not scoring._llm_scores(
        small_config(Path("c"), judge={"name": "llm"}, metrics={"standard": False})
    )


# -- corrupt and stale entries --------------------------------------------------------------------
def test_corrupt_entries_are_logged_misses_and_the_run_is_unchanged(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache = copy_cache(runs, tmp_path)
    (plan,) = (cache / "plans").glob("*/*.json")
    plan.write_bytes(plan.read_bytes()[:-40])  # cut short: the checksum no longer matches
    (score,) = (cache / "scores").glob("*/*.json")
    score.write_bytes(score.read_bytes().replace(b'"golden"', b'"goldun"', 1))  # a flipped byte
    (attributed,) = (cache / "attributions").glob("*/*.json")
    payload = b'{"entries": "not a list"}'
    attributed.write_bytes(_checksummed(payload))  # a whole entry that does not validate
    counts = spies(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="probeguard.engine.derived_cache"):
        scan(small_config(cache), tmp_path / "run")
    assert counts == {"plan": 1, "score": 1, "attribute": 1}
    messages = " ".join(r.getMessage() for r in caplog.records)
    for kind in KINDS:
        assert f"{kind} cache:" in messages, kind
    assert outputs(tmp_path / "run") == outputs(runs / "plain")
    counts.update(plan=0, score=0, attribute=0)
    scan(small_config(cache), tmp_path / "again")  # overwritten: hits again
    assert counts == {"plan": 0, "score": 0, "attribute": 0}


def _checksummed(payload: bytes) -> bytes:
    return hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def test_a_changed_response_entry_reruns_the_attribution(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = copy_cache(runs, tmp_path)
    (attributed,) = (cache / "attributions").glob("*/*.json")
    reads = json.loads(attributed.read_bytes().partition(b"\n")[2])["reads"]
    call_key = reads[0][0]
    entry = cache / call_key[:2] / f"{call_key}.json"
    output = json.loads(entry.read_text())
    output["answer"] = "A different answer than before."
    entry.write_text(json.dumps(output))
    counts = spies(monkeypatch)
    scan(small_config(cache), tmp_path / "run")
    assert counts["attribute"] == 1


# -- the store ----------------------------------------------------------------------------------
def test_the_store_checks_keys_and_checksums(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DerivedCache(tmp_path, "plans")
    key = "ab" * 32
    assert store.get(key) is None
    store.put(key, '{"x": 1}')
    assert store.get(key) == '{"x": 1}'
    assert store.load(key, json.loads) == {"x": 1}
    assert [p.name for p in store.path_for(key).parent.iterdir()] == [f"{key}.json"]
    store.path_for(key).write_bytes(store.path_for(key).read_bytes().replace(b"1", b"2"))
    with caplog.at_level(logging.WARNING):
        assert store.get(key) is None
    assert "corrupt entry" in caplog.text
    with pytest.raises(ValueError):
        store.path_for("../../etc/passwd")


def test_a_plugin_module_outside_the_package_is_part_of_the_key(tmp_path: Path) -> None:
    plugin = tmp_path / "my_probe_plugin.py"
    plugin.write_text("X = 1\n")
    spec = importlib.util.spec_from_file_location("my_probe_plugin", plugin)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = modules_version([module, "sys", "not.imported"])  # built-in, absent: names only
    plugin.write_text("X = 2\n")
    assert modules_version([module, "sys", "not.imported"]) != before
    assert modules_version(["probeguard.probes.poisoning"]) == modules_version(
        ["probeguard.probes.poisoning"]
    )


def test_same_repr_tells_types_apart_and_keeps_nan() -> None:
    assert same_repr({"a": [math.nan]}, {"a": [float("nan")]})
    assert not same_repr({"a": (1,)}, {"a": [1]})
    assert not same_repr(1, 1.0)
