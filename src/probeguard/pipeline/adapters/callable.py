"""Wrap a Python function as a pipeline.

The target is a callable or an import string ``"package.module:function"`` (a dotted
attribute path after the colon also works: ``"app.rag:pipeline.ask"``). It is called with the
question and returns one of:

* a ``str`` — the answer;
* a ``dict`` with ``answer`` (required) and optionally ``contexts`` (or ``retrieved``): a list
  of strings or of objects ``{text, doc_id, chunk_id, score, title, ...}`` (other keys go to
  the chunk's metadata), ``cited_chunk_ids``, ``refused``, ``latency_s``, ``usage`` and
  ``metadata``; any other key is an error (a misspelt key would otherwise be lost silently);
* a ``PipelineOutput``.

A context given as a bare string gets ``doc_id=""`` (unknown) and a content-derived
``chunk_id = "ctx-" + sha256(text)[:12]``; ranks are the list order, from 1.

**Variations and capabilities.** When the function accepts a ``variation`` keyword (or
``**kwargs``), it is called with ``variation=`` (a ``Variation``, or ``None`` for the pipeline
as configured). It then declares the capabilities listed in its own ``capabilities``
attribute (names of ``Capability``), and none without one: a capability a pipeline lacks is
reported (``UnsupportedCapabilityError``), never faked. A function that does not accept
``variation`` has no capabilities.

**Async.** An ``async def`` target gets a native ``aanswer`` (the runner awaits it);
``answer`` then runs it with ``asyncio.run``. A sync target has no ``aanswer``; the runner
calls ``answer`` in worker threads, so it must be thread-safe.

**Fingerprint** = sha256 of the target's ``module:qualname`` and the optional ``version``
string. Changing the function's *code* does not change the fingerprint, so cached answers
would still be served: bump ``version`` (or pass ``fingerprint=`` outright) whenever the
function's behaviour changes. Lambdas all share the qualname ``<lambda>``: give them a
``version`` or ``fingerprint``.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ValidationError

from probeguard.core.errors import InputError, PipelineCallError
from probeguard.core.hashing import sha256_hex
from probeguard.core.pipeline import (
    Capability,
    PipelineOutput,
    RetrievedChunk,
    Usage,
    Variation,
    check_capabilities,
)

__all__ = ["CallablePipeline", "to_output", "parse_capabilities"]

_OUTPUT_KEYS = frozenset(
    {
        "answer",
        "contexts",
        "retrieved",
        "cited_chunk_ids",
        "refused",
        "latency_s",
        "usage",
        "metadata",
    }
)
_CHUNK_KEYS = frozenset({"text", "doc_id", "chunk_id", "score", "title", "metadata"})


def load_target(target: str) -> Callable[..., Any]:
    """Import ``"package.module:attr.path"``; ``InputError`` naming the target otherwise."""
    module_name, sep, attr_path = target.partition(":")
    if not sep or not module_name or not attr_path:
        raise InputError(
            f"bad pipeline target {target!r}: expected 'package.module:function'", field="target"
        )
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(
            f"cannot import module {module_name!r} of pipeline target {target!r}: {exc}"
            f"{_import_hint(module_name, exc)}",
            field="target",
        ) from None
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(
                f"pipeline target {target!r}: {module_name!r} has no attribute "
                f"path {attr_path!r} (missing {part!r})",
                field="target",
            ) from None
    if not callable(obj):
        raise InputError(
            f"pipeline target {target!r} is a {type(obj).__name__}, not a callable", field="target"
        )
    return obj


def _import_hint(module_name: str, exc: ImportError) -> str:
    """How to make the target's own module importable, when it is that module (not one of
    its imports) that Python did not find. The ``probeguard`` command puts its own folder on
    ``sys.path``, not the current one, so a ``mymod.py`` beside the config is not found."""
    missing = getattr(exc, "name", None)
    if not isinstance(exc, ModuleNotFoundError) or missing is None:
        return ""
    if missing != module_name and not module_name.startswith(missing + "."):
        return ""
    top = module_name.split(".")[0]
    return (
        f". Make it importable: add the folder that holds {top}.py (or the package {top}/) "
        f"to PYTHONPATH, e.g. `PYTHONPATH=. probeguard scan ...` from that folder, or "
        f"install it (`pip install -e .`)"
    )


def parse_capabilities(names: Iterable[str | Capability], *, where: str) -> frozenset[Capability]:
    """``Capability`` values from names; ``InputError`` listing the valid ones otherwise."""
    if isinstance(names, str):
        names = [names]
    out: set[Capability] = set()
    for name in names:
        try:
            out.add(Capability(str(name)))
        except ValueError:
            valid = ", ".join(c.value for c in Capability)
            raise InputError(
                f"unknown capability {name!r} in {where}; valid: {valid}", field="capabilities"
            ) from None
    return frozenset(out)


def _qualname(fn: Any) -> str:
    target = fn
    if isinstance(fn, functools.partial):
        target = fn.func  # its bound arguments are not part of the name: use ``version``
    elif not (inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isbuiltin(fn)):
        target = type(fn)  # a callable object
    module = getattr(target, "__module__", None) or "?"
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{qualname}"


def _accepts_variation(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    for p in params:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return True
        if p.name == "variation" and p.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        ):
            return True
    return False


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        type(fn).__call__ if callable(fn) else None
    )


def _chunk(item: Any, rank: int, source: str) -> RetrievedChunk:
    if isinstance(item, RetrievedChunk):
        return item.model_copy(update={"rank": rank})
    if isinstance(item, str):
        return RetrievedChunk(
            chunk_id="ctx-" + sha256_hex(item)[:12], doc_id="", text=item, rank=rank
        )
    if isinstance(item, dict):
        if "text" not in item:
            raise PipelineCallError(
                f"{source}: context {rank} has no 'text' (keys: "
                f"{', '.join(sorted(map(str, item)))})"
            )
        text = str(item["text"])
        metadata = dict(item.get("metadata") or {})
        metadata.update({k: v for k, v in item.items() if k not in _CHUNK_KEYS})
        score = item.get("score")
        return RetrievedChunk(
            chunk_id=str(item.get("chunk_id") or "ctx-" + sha256_hex(text)[:12]),
            doc_id=str(item.get("doc_id") or ""),
            text=text,
            rank=rank,
            score=None if score is None else float(score),
            title=str(item.get("title") or ""),
            metadata=metadata,
        )
    raise PipelineCallError(
        f"{source}: context {rank} is a {type(item).__name__}; expected a "
        f"string or an object with 'text'"
    )


def to_output(value: Any, *, source: str = "pipeline") -> PipelineOutput:
    """Convert what a user's function returned (str, dict or ``PipelineOutput``)."""
    if isinstance(value, PipelineOutput):
        return value
    if isinstance(value, str):
        return PipelineOutput(answer=value)
    if isinstance(value, dict):
        unknown = sorted(str(k) for k in value if k not in _OUTPUT_KEYS)
        if unknown:
            raise PipelineCallError(
                f"{source} returned unknown keys {unknown}; known keys: "
                f"{', '.join(sorted(_OUTPUT_KEYS))}"
            )
        if "answer" not in value:
            raise PipelineCallError(
                f"{source} returned a dict without 'answer' (keys: "
                f"{', '.join(sorted(map(str, value)))})"
            )
        if "contexts" in value and "retrieved" in value:
            raise PipelineCallError(f"{source} returned both 'contexts' and 'retrieved'; give one")
        contexts = value.get("contexts", value.get("retrieved")) or []
        if isinstance(contexts, (str, dict)):
            contexts = [contexts]
        answer = value["answer"]
        cited = value.get("cited_chunk_ids") or []
        try:
            return PipelineOutput(
                answer="" if answer is None else str(answer),
                retrieved=[_chunk(c, i + 1, source) for i, c in enumerate(contexts)],
                cited_chunk_ids=[str(c) for c in cited],
                refused=bool(value.get("refused", False)),
                latency_s=value.get("latency_s"),
                usage=Usage.model_validate(value.get("usage") or {}),
                metadata=dict(value.get("metadata") or {}),
            )
        except ValidationError as exc:
            raise PipelineCallError(f"{source} returned an invalid output: {exc}") from None
    raise PipelineCallError(
        f"{source} returned a {type(value).__name__}; expected str, dict or PipelineOutput"
    )


class CallablePipeline:
    """A Python function as a pipeline (see the module docstring)."""

    def __init__(
        self,
        target: str | Callable[..., Any],
        name: str | None = None,
        *,
        version: str = "",
        fingerprint: str | None = None,
    ) -> None:
        if isinstance(target, str):
            self.target = target
            self._fn = load_target(target)
        elif callable(target):
            self._fn = target
            self.target = _qualname(target)
        else:
            raise InputError(
                f"pipeline target must be 'package.module:function' or a "
                f"callable, got {type(target).__name__}",
                field="target",
            )
        self.name = name or self.target
        self.version = version
        self._fingerprint = fingerprint
        self._passes_variation = _accepts_variation(self._fn)
        declared = getattr(self._fn, "capabilities", None)
        if declared is not None and not self._passes_variation:
            raise InputError(
                f"pipeline target {self.target!r} declares capabilities but does "
                f"not accept a 'variation' keyword argument",
                field="capabilities",
            )
        self.capabilities: frozenset[Capability] = (
            parse_capabilities(declared, where=f"{self.target}.capabilities")
            if declared is not None
            else frozenset()
        )
        self.is_async = _is_async(self._fn)
        if self.is_async:
            self.aanswer = self._aanswer

    def fingerprint(self) -> str:
        if self._fingerprint is not None:
            return self._fingerprint
        return sha256_hex("callable", self.target, self.version)

    def _args(self, variation: Variation | None) -> dict[str, Any]:
        check_capabilities(self, variation)
        return {"variation": variation} if self._passes_variation else {}

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        kwargs = self._args(variation)
        if self.is_async:
            return to_output(asyncio.run(self._fn(question, **kwargs)), source=self.target)
        return to_output(self._fn(question, **kwargs), source=self.target)

    async def _aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        kwargs = self._args(variation)
        return to_output(await self._fn(question, **kwargs), source=self.target)

    def __repr__(self) -> str:
        return f"CallablePipeline({self.target!r}, name={self.name!r})"
