"""``probeguard dataset selftest``: every layer scorer flips on the mutation that targets it
(demo cases), and a broken scorer is caught."""

from __future__ import annotations

from click.testing import CliRunner

from probeguard.cli.dataset_selftest import table_lines
from probeguard.cli.main import cli
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.formats import load_case_file
from probeguard.engine.selftest import (
    MUTATIONS,
    SCORERS,
    Pool,
    Subject,
    passing_output,
    real_scorers,
    run_selftest,
)
from probeguard.engine.stages import demo_data_dir


def _demo() -> tuple[list[Case], list[Document]]:
    data = demo_data_dir()
    documents = load_corpus(data / "corpus.jsonl")
    ids = frozenset(d.id for d in documents)
    golden = load_case_file(data / "questions.jsonl", corpus_ids=ids)
    attacks = load_case_file(data / "attacks.jsonl", corpus_ids=ids, attack=True)
    return [*golden, *attacks], documents


def test_every_targeted_scorer_flips_on_the_demo() -> None:
    report = run_selftest(*_demo())
    assert report.ok, table_lines(report)
    assert not report.baseline_failures
    targeted = {s for (_, s), c in report.cells.items() if c.targeted and c.applicable}
    assert targeted == set(SCORERS)
    for (mutation, scorer), cell in report.cells.items():
        if cell.targeted:
            assert cell.targeted_flipped == cell.targeted_applicable > 0, (mutation, scorer)


def test_cli_on_the_demo_exits_0_and_prints_the_table() -> None:
    res = CliRunner().invoke(cli, ["dataset", "selftest"])
    assert res.exit_code == 0, res.output
    assert "selftest passed" in res.output
    for name in MUTATIONS:
        assert name in res.output


def test_cli_on_a_file_needs_its_corpus() -> None:
    data = demo_data_dir()
    res = CliRunner().invoke(cli, ["dataset", "selftest", str(data / "questions.jsonl")])
    assert res.exit_code == 2
    ok = CliRunner().invoke(
        cli,
        [
            "dataset",
            "selftest",
            str(data / "questions.jsonl"),
            "--corpus",
            str(data / "corpus.jsonl"),
        ],
    )
    assert ok.exit_code == 0, ok.output
    attacks = CliRunner().invoke(
        cli,
        [
            "dataset",
            "selftest",
            str(data / "attacks.jsonl"),
            "--corpus",
            str(data / "corpus.jsonl"),
        ],
    )
    assert attacks.exit_code == 0, attacks.output
    assert "selftest over 47 cases" in attacks.output


def _number_blind(subject: Subject, output: PipelineOutput) -> dict[str, bool | None]:
    """A broken answer scorer (a fake: the real one cannot be made to miss this): it
    ignores digits, so a wrong number passes."""
    scores = real_scorers(subject, output)
    digitless = output.model_copy(
        update={"answer": "".join(ch for ch in output.answer if not ch.isdigit())}
    )
    base = subject.output.model_copy(
        update={"answer": "".join(ch for ch in subject.output.answer if not ch.isdigit())}
    )
    if digitless.answer == base.answer and scores["answer"] is False:
        scores["answer"] = True
    return scores


def test_a_broken_scorer_is_caught() -> None:
    report = run_selftest(*_demo(), scorers=_number_blind)
    assert not report.ok
    cell = report.cells[("wrong_number", "answer")]
    assert cell.missed and cell.targeted_flipped < cell.targeted_applicable
    assert report.cells[("swapped_entity", "answer")].missed == []


def test_a_scorer_failing_correct_answers_is_caught() -> None:
    cases, documents = _demo()

    def strict(subject: Subject, output: PipelineOutput) -> dict[str, bool | None]:
        return {**real_scorers(subject, output), "answer": False}

    report = run_selftest(cases[:3], documents, scorers=strict)
    assert not report.ok
    assert {s for _, s in report.baseline_failures} == {"answer"}


def test_mutations_change_the_right_values() -> None:
    case = Case(
        id="c1",
        question="When?",
        expected=Expected(answers=("30 days in March 2024",), evidence_doc_ids=("d1",)),
    )
    subject = Subject(case, passing_output(case), frozenset())
    pool = Pool(("Zeta",))
    number = MUTATIONS["wrong_number"][0](subject, pool)
    date = MUTATIONS["wrong_date"][0](subject, pool)
    entity = MUTATIONS["swapped_entity"][0](subject, pool)
    assert number is not None and number.answer == "31 days in March 2024 [1]"
    assert date is not None and date.answer == "30 days in April 2025 [1]"
    assert entity is not None and entity.answer == "30 days in Zeta 2024 [1]"
    assert MUTATIONS["cite_forbidden"][0](subject, pool) is None


def test_the_table_is_deterministic() -> None:
    cases, documents = _demo()
    assert table_lines(run_selftest(cases, documents)) == table_lines(
        run_selftest(cases, documents)
    )


def _excludes_blind(subject: Subject, output: PipelineOutput) -> dict[str, bool | None]:
    """A scorer that forgot the ``excludes`` rule: it scores the case without them."""
    exp = subject.case.expected.model_copy(update={"excludes": ()})
    case = subject.case.model_copy(update={"expected": exp})
    return real_scorers(Subject(case, subject.output, subject.uncitable), output)


def test_a_scorer_that_ignores_excludes_misses_the_stale_value() -> None:
    report = run_selftest(*_demo(), scorers=_excludes_blind)
    assert not report.ok
    assert report.cells[("excluded_value", "answer")].missed
    assert report.cells[("excluded_value", "golden")].missed
    assert report.cells[("wrong_number", "answer")].missed == []


def test_excluded_value_states_the_stale_figure() -> None:
    case = Case(
        id="t1",
        question="How long is the refund window?",
        expected=Expected(answers=("30 days",), excludes=("14 days",), evidence_doc_ids=("d",)),
    )
    subject = Subject(case, passing_output(case), frozenset({"d-archived"}))
    mutated = MUTATIONS["excluded_value"][0](subject, Pool(()))
    assert mutated is not None and mutated.answer == "14 days, or 30 days [1]"
    forbidden = MUTATIONS["cite_forbidden"][0](subject, Pool(()))
    assert forbidden is not None
    assert [c.doc_id for c in forbidden.retrieved] == ["d", "d-archived"]
    assert real_scorers(subject, forbidden)["citation"] is False
    assert real_scorers(subject, subject.output)["citation"] is True
