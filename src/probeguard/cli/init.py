"""``probeguard init CORPUS``: a commented starter config for the user's own data.

The corpus is loaded first (a bad record fails here, with its file, line and field), so the
config written always points at a corpus that loads. Paths in the config are relative to the
config file's folder (``config.loading`` resolves them so). Golden questions and attack cases
are filled in when a file of a usual name (``QUESTION_NAMES``, ``ATTACK_NAMES``) lies beside
the corpus, else left as commented lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from probeguard.cli.common import fail
from probeguard.core.errors import InputError
from probeguard.corpus.loaders import detect_format, load_corpus

QUESTION_NAMES = ("questions.jsonl", "questions.json", "golden.jsonl", "golden.json")
ATTACK_NAMES = ("attacks.jsonl", "attacks.json")


def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()


def _beside(corpus: Path, names: tuple[str, ...]) -> Path | None:
    folder = corpus if corpus.is_dir() else corpus.parent
    return next((folder / n for n in names if (folder / n).is_file()), None)


def _optional(key: str, path: Path | None, base: Path, hint: str) -> str:
    if path is None:
        return f"  # {key}: {hint}"
    return f"  {key}: {_relative(path, base)}"


def starter_config(corpus: Path, config_path: Path, n_documents: int) -> str:
    """The YAML text of a starter config for ``corpus``, to be written at ``config_path``."""
    base = config_path.parent
    questions = _beside(corpus, QUESTION_NAMES)
    attacks = _beside(corpus, ATTACK_NAMES)
    return "\n".join(
        [
            f"# ProbeGuard config for {corpus.name} ({n_documents} documents, "
            f"{detect_format(corpus)}); written by `probeguard init`.",
            f"#   probeguard scan --config {config_path.name} --out runs/first",
            "# Precedence: defaults < this file < PROBEGUARD_* environment < command-line flags.",
            "seed: 0",
            "corpus:",
            f"  path: {_relative(corpus, base)}",
            _optional(
                "questions",
                questions,
                base,
                "questions.jsonl   # golden questions: {question, answers, evidence_doc_ids, mode}",
            ),
            _optional(
                "attacks",
                attacks,
                base,
                "attacks.jsonl       # attack cases: the question fields plus a `type`",
            ),
            "pipeline:",
            "  type: reference          # or callable (your function), http (your endpoint)",
            "  reference:",
            "    chunker: {name: tokens, size: 128, overlap: 32}   # or {name: sentences}, {name: document}",
            "    embedder: {name: minilm}                          # or {name: hashing} (no model)",
            "    retriever: {name: hybrid}                         # or dense, bm25",
            "    top_k: 5",
            "    generator: {name: extractive}                     # or {name: llama_cpp}, {name: openai, ...}",
            '  # callable: {target: "my_rag:answer"}   # with type: callable; PYTHONPATH=. if it is here',
            '  # http: {url: "http://localhost:8000/rag", answer_path: answer, contexts_path: contexts}',
            "runner:",
            "  concurrency: 4",
            "  cache_dir: .probeguard-cache",
            "# probes:",
            "#   enabled: [chunk_fracture, retrieval_gap, corpus_poisoning]   # default: every probe",
            "",
        ]
    )


@click.command()
@click.argument("corpus", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("probeguard.yaml"),
    show_default=True,
    help="Where to write the config.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
def init(corpus: Path, config_path: Path, force: bool) -> None:
    """Write a commented starter config for CORPUS (a JSONL/JSON/CSV file or a folder)."""
    if config_path.exists() and not force:
        fail(f"{config_path} exists; pass --force to overwrite it")
        return
    try:
        documents = load_corpus(corpus)
    except InputError as exc:
        fail(str(exc))
        return
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(starter_config(corpus, config_path, len(documents)), encoding="utf-8")
    click.echo(f"wrote {config_path} for {len(documents)} documents from {corpus}")
    click.echo(f"next: probeguard scan --config {config_path} --out runs/first")
