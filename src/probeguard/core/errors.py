"""Exceptions the library raises on purpose.

Every error a user can cause carries enough context to fix it without a traceback:
`InputError` names the file, line and field; `MissingExtraError` prints the exact
install command.
"""

from __future__ import annotations


class ProbeGuardError(Exception):
    """Base class for all ProbeGuard errors."""


class InputError(ProbeGuardError):
    """Bad user input: a file, a line (1-based, when known) and a field (when known)."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if file is not None:
            where.append(str(file))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class PartError(InputError, ValueError):
    """A part built from a config spec (``core.plugins``) rejected it: an unknown name or
    parameter, a value of the wrong type, or one its constructor refuses. ``field`` is
    ``<kind>.<parameter>`` (``retriever.k1``) relative to where the spec sits; a
    ``ValueError`` too, for callers that catch those."""


class MissingExtraError(ProbeGuardError, ImportError):
    """An optional dependency is not installed; the message says how to install it."""

    def __init__(self, extra: str, module: str, *, hint: str | None = None) -> None:
        self.extra = extra
        self.module = module
        msg = (
            f"'{module}' is not installed; it is part of the '{extra}' extra: "
            f'pip install "probeguard[{extra}]"'
        )
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)


class UnsupportedCapabilityError(ProbeGuardError):
    """A caller asked a pipeline for a capability it does not declare."""

    def __init__(self, pipeline: str, missing: set[str] | frozenset[str]) -> None:
        self.pipeline = pipeline
        self.missing = frozenset(missing)
        super().__init__(
            f"pipeline '{pipeline}' lacks capabilities: {', '.join(sorted(self.missing))}"
        )


class PipelineCallError(ProbeGuardError):
    """A pipeline call failed. `transient` marks failures worth retrying
    (timeouts, HTTP 429 and 5xx); `retry_after` is the server's hint in seconds."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        self.transient = transient
        self.retry_after = retry_after
        self.status = status
        super().__init__(message)
