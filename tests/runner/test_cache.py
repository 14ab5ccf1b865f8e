"""The on-disk response cache: layout, round trip, corrupt entries, concurrent writers."""

from __future__ import annotations

import logging
import math
import shutil
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from probeguard.core.cases import Case
from probeguard.core.io import atomic_write_text
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk, Usage
from probeguard.log.writer import dump_json_line
from probeguard.runner import ResponseCache

KEY = Case(id="c1", question="Who wrote it?").call_key("fp-1")


def full_output(answer: str = "Ada Lovelace [1]") -> PipelineOutput:
    return PipelineOutput(
        answer=answer,
        cited_chunk_ids=["d1#0-10"],
        refused=False,
        latency_s=0.25,
        retrieved=[
            RetrievedChunk(
                chunk_id="d1#0-10",
                doc_id="d1",
                text="Ada wrote it.",
                rank=1,
                score=0.9,
                title="Notes",
                metadata={"page": 3},
            )
        ],
        usage=Usage(prompt_tokens=12, completion_tokens=4),
        metadata={"prompt": "default"},
    )


def test_round_trip_and_layout(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    assert cache.get(KEY) is None
    assert KEY not in cache
    out = full_output()
    cache.put(KEY, out)
    assert cache.path_for(KEY) == tmp_path / KEY[:2] / f"{KEY}.json"
    assert cache.path_for(KEY).is_file()
    assert KEY in cache
    assert cache.get(KEY) == out
    # A fresh instance over the same directory sees it.
    assert ResponseCache(tmp_path).get(KEY) == out


def test_non_finite_floats_round_trip(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    out = PipelineOutput(
        answer="x",
        latency_s=float("nan"),
        metadata={"s": float("-inf")},
        retrieved=[RetrievedChunk(chunk_id="c", doc_id="d", text="t", rank=1, score=float("inf"))],
    )
    cache.put(KEY, out)
    back = cache.get(KEY)
    assert math.isnan(back.latency_s)
    assert back.retrieved[0].score == math.inf
    assert back.metadata["s"] == -math.inf


@pytest.mark.parametrize(
    "garbage", [b"", b"{not json", b'{"answer": 3, "bogus": 1}', b"\xff\xfe\x00"]
)
def test_corrupt_entry_is_a_logged_miss(tmp_path, caplog, garbage: bytes) -> None:
    cache = ResponseCache(tmp_path)
    path = cache.path_for(KEY)
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="probeguard.runner.cache"):
        assert cache.get(KEY) is None
    assert any("corrupt entry" in r.getMessage() and KEY in r.getMessage() for r in caplog.records)
    cache.put(KEY, full_output())  # the next put repairs it
    assert cache.get(KEY) == full_output()


def test_bad_keys_are_rejected(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    for key in ["../../etc/passwd", "a/b", "", "x"]:
        with pytest.raises(ValueError, match="bad cache key"):
            cache.put(key, full_output())


def test_concurrent_writers_of_one_key_leave_one_complete_entry(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    outputs = [full_output(answer=f"answer {i} " + "x" * 20_000) for i in range(8)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(outputs))

    def writer(out: PipelineOutput) -> None:
        try:
            barrier.wait()
            for _ in range(25):
                cache.put(KEY, out)
                got = cache.get(KEY)  # a reader never sees half a file
                assert got is not None and got in outputs
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(o,)) for o in outputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cache.get(KEY) in outputs
    leftovers = [p.name for p in cache.path_for(KEY).parent.iterdir()]
    assert leftovers == [f"{KEY}.json"]  # no temporary files left behind


def test_call_key_ignores_the_order_of_masked_documents() -> None:
    # Regression: Variation documented exclude_doc_ids as "sorted for stable hashing" but kept
    # the given order, so one mask written two ways made two cache entries (two calls).
    from probeguard.core.cases import Case
    from probeguard.core.pipeline import Variation

    a = Case(id="a", question="q", variation=Variation(exclude_doc_ids=("d2", "d1", "d2")))
    b = Case(id="b", question="q", variation=Variation(exclude_doc_ids=("d1", "d2")))
    assert a.variation.exclude_doc_ids == ("d1", "d2")
    assert a.call_key("fp") == b.call_key("fp")
    assert a.call_key("fp") != Case(id="c", question="q").call_key("fp")


def test_an_entry_is_the_bytes_and_mode_atomic_write_text_gives(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    output = full_output()
    cache.put(KEY, output)
    reference = atomic_write_text(tmp_path / "ref.json", dump_json_line(output), fsync=False)
    entry = cache.path_for(KEY)
    assert entry.read_bytes() == reference.read_bytes()
    assert stat.S_IMODE(entry.stat().st_mode) == stat.S_IMODE(reference.stat().st_mode)


def test_a_fan_out_folder_is_made_once_and_again_if_it_vanished(tmp_path, monkeypatch) -> None:
    cache = ResponseCache(tmp_path)
    made: list[Path] = []
    real_mkdir = Path.mkdir

    def counting_mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", counting_mkdir)
    cache.put(KEY, full_output(answer="1"))
    cache.put(KEY, full_output(answer="2"))
    assert made == [cache.path_for(KEY).parent]
    shutil.rmtree(cache.path_for(KEY).parent)
    cache.put(KEY, full_output(answer="3"))
    assert cache.get(KEY) == full_output(answer="3")
    assert len(made) == 2
