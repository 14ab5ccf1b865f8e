"""Every saved artefact shares one header model; ``probeguard schema KIND`` prints each
kind's JSON schema (``run`` by default, as before); ``eval.json`` round-trips through its
model."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.config.models import ScanConfig
from probeguard.core.artifacts import ArtifactHeader
from probeguard.engine.evaluate import evaluate
from probeguard.results import ARTIFACTS, EvalArtifact, RunLog

HEADER = list(ArtifactHeader.model_fields)


@pytest.mark.parametrize("kind", sorted(ARTIFACTS))
def test_every_artifact_starts_with_the_shared_header(kind):
    model = ARTIFACTS[kind]
    assert issubclass(model, ArtifactHeader)
    assert list(model.model_fields)[: len(HEADER)] == HEADER
    assert model.model_fields["kind"].default == kind
    assert isinstance(model.model_fields["version"].default, int)


def test_schema_prints_each_kind_and_run_by_default():
    runner = CliRunner()
    default = runner.invoke(cli, ["schema"])
    assert default.exit_code == 0
    assert json.loads(default.output) == json.loads(
        json.dumps(RunLog.model_json_schema(), sort_keys=True)
    )
    for kind, model in ARTIFACTS.items():
        result = runner.invoke(cli, ["schema", kind])
        assert result.exit_code == 0, result.output
        schema = json.loads(result.output)
        assert schema["title"] == model.__name__
        assert set(HEADER) <= set(schema["properties"])
    bad = runner.invoke(cli, ["schema", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output


def test_eval_json_has_the_header_and_round_trips(tmp_path):
    dataset = tmp_path / "data.jsonl"
    record = {
        "id": "r1",
        "input": "Is shipping free?",
        "answer": "Shipping is free on all orders.",
        "retrievalContext": ["Shipping is free on all orders."],
    }
    dataset.write_text(json.dumps(record) + "\n")
    result = evaluate(ScanConfig(), dataset, tmp_path / "out")
    saved = json.loads(result.json_path.read_text())
    assert list(saved)[: len(HEADER)] == HEADER
    assert (saved["kind"], saved["version"], saved["pipeline_name"]) == ("eval", 2, None)
    assert saved == result.data
    back = EvalArtifact.model_validate(saved)
    assert json.loads(back.model_dump_json()) == saved
    assert back.results[0].metrics["faithfulness"].value == 1.0
