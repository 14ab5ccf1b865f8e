from pathlib import Path

import pytest

from probeguard.config import load_config
from probeguard.core.errors import InputError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "probeguard.yaml"
    path.write_text(text)
    return path


def test_defaults():
    cfg = load_config(None, environ={})
    assert cfg.seed == 0 and cfg.pipeline.type == "reference"
    assert cfg.pipeline.reference.generator["name"] == "extractive"


def test_precedence_defaults_file_env_flags(tmp_path):
    path = write(tmp_path, "seed: 1\nrunner:\n  concurrency: 2\n  retries: 5\n")
    env = {"PROBEGUARD_SEED": "2", "PROBEGUARD_RUNNER__CONCURRENCY": "9"}
    cfg = load_config(path, environ=env, overrides={"seed": 3})
    assert cfg.seed == 3  # flag beats env beats file
    assert cfg.runner.concurrency == 9  # env beats file
    assert cfg.runner.retries == 5  # file beats default
    assert cfg.runner.timeout_s == 120.0  # default


def test_relative_corpus_paths_resolve_against_the_config_file(tmp_path):
    path = write(tmp_path, "corpus:\n  path: docs.jsonl\n  questions: q.jsonl\n")
    cfg = load_config(path, environ={})
    assert cfg.corpus.path == tmp_path / "docs.jsonl"


def test_validation_error_names_file_line_and_field(tmp_path):
    path = write(tmp_path, "seed: 1\npipeline:\n  reference:\n    top_k: 0\n")
    with pytest.raises(InputError) as info:
        load_config(path, environ={})
    err = info.value
    assert err.file == str(path) and err.line == 4 and err.field == "pipeline.reference.top_k"
    assert "top_k" in str(err) and "line 4" in str(err)


def test_unknown_key_is_an_error(tmp_path):
    path = write(tmp_path, "seed: 1\nrunner:\n  concurrancy: 3\n")
    with pytest.raises(InputError) as info:
        load_config(path, environ={})
    assert info.value.line == 3 and info.value.field == "runner.concurrancy"


def test_bad_yaml_names_line(tmp_path):
    path = write(tmp_path, "seed: 1\nrunner: [unclosed\n")
    with pytest.raises(InputError) as info:
        load_config(path, environ={})
    assert info.value.line is not None and str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read config"):
        load_config(tmp_path / "nope.yaml", environ={})


def test_recorded_config_redacts_literal_header_values(tmp_path):
    path = write(
        tmp_path,
        (
            "pipeline:\n  type: http\n  http:\n    url: http://127.0.0.1:1/ask\n"
            "    headers:\n      Authorization: 'Bearer ${RAG_KEY}'\n      X-Api-Key: sk-live-123456\n"
        ),
    )
    recorded = load_config(path, environ={}).recorded()
    headers = recorded["pipeline"]["http"]["headers"]
    assert headers == {"Authorization": "Bearer ${RAG_KEY}", "X-Api-Key": "<redacted>"}
    assert "sk-live-123456" not in str(recorded)


def test_recorded_config_redacts_url_secrets_and_generator_headers(tmp_path):
    # Regression: the endpoint URL's query (?api_key=...), its user info, and the
    # OpenAI-compatible generator's extra_headers/base_url reached run.json and report.md
    # verbatim.
    http = load_config(
        write(
            tmp_path,
            (
                "pipeline:\n  type: http\n  http:\n"
                "    url: 'https://bob:pw-999@rag.example/ask?api_key=sk-url-777&v=2'\n"
            ),
        ),
        environ={},
    ).recorded()
    assert http["pipeline"]["http"]["url"] == "https://rag.example/ask?api_key=***&v=***"
    assert "sk-url-777" not in str(http) and "pw-999" not in str(http)
    ref = load_config(
        write(
            tmp_path,
            (
                "pipeline:\n  reference:\n    generator:\n      name: openai\n"
                "      base_url: 'https://u:pw-555@llm.example/v1?key=sk-q-1'\n"
                "      extra_headers: {X-Key: sk-hdr-888, X-Org: '${ORG_ID}'}\n"
            ),
        ),
        environ={},
    ).recorded()
    gen = ref["pipeline"]["reference"]["generator"]
    assert gen["extra_headers"] == {"X-Key": "<redacted>", "X-Org": "${ORG_ID}"}
    assert gen["base_url"] == "https://llm.example/v1?key=***"
    for secret in ("sk-hdr-888", "pw-555", "sk-q-1"):
        assert secret not in str(ref)


def test_probe_list_must_not_repeat(tmp_path):
    path = write(tmp_path, "probes:\n  enabled: [retrieval_gap, retrieval_gap]\n")
    with pytest.raises(InputError) as info:
        load_config(path, environ={})
    assert info.value.line == 2 and "more than once" in str(info.value)


# -- hardening (issue 17): bad configs end in one InputError naming file, line and field --------
def _base(extra: str) -> str:
    return "corpus: {path: c.jsonl}\n" + extra


def test_config_that_is_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "probeguard.yaml"
    path.write_bytes("seed: 1\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="line 2.*not valid UTF-8"):
        load_config(path, environ={})


def test_yaml_alias_bomb_fails_fast_on_the_error_path(tmp_path):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 12):  # 9**12 leaves if every alias were followed
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="field 'a0'"):
        load_config(path, environ={})


@pytest.mark.parametrize(
    ("yaml_text", "field"),
    [
        ("probes: {overlap_weights: {chunk_fracture: 1.5}}\n", "probes.overlap_weights"),
        ("probes: {overlap_weights: {chunk_fracture: -0.1}}\n", "probes.overlap_weights"),
        ("probes: {overlap_weights: {chunk_fractur: 0.5}}\n", "probes.overlap_weights"),
        (
            "pipeline: {reference: {embedder: {name: nosuch}, retriever: {name: bm25}}}\n",
            "pipeline.reference.embedder",
        ),
    ],
)
def test_bad_values_are_refused_at_load(tmp_path, yaml_text, field):
    path = write(tmp_path, _base(yaml_text))
    with pytest.raises(InputError) as info:
        load_config(path, environ={})
    assert info.value.field == field and info.value.line == 2


def test_env_override_nested_too_deeply_is_a_string():
    cfg_env = {"PROBEGUARD_SEED": "[" * 5000}
    with pytest.raises(InputError, match="field 'seed'"):
        load_config(None, environ=cfg_env)


def test_a_bad_environment_value_names_its_variable(tmp_path):
    path = write(tmp_path, "seed: 1\n")
    with pytest.raises(InputError) as info:
        load_config(path, environ={"PROBEGUARD_SEED": "abc"})
    assert info.value.file == "environment variable PROBEGUARD_SEED"
    assert info.value.field == "seed" and info.value.line is None
