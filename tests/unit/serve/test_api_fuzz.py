"""The HTTP API against requests generated from its own OpenAPI schema (Schemathesis).

The real app runs in process on the tiny BM25 corpus with the scripted LLM and the stand-in
verifier, plus a small experiments folder, so every route answers without a model. For
every generated request (valid and invalid bodies, parameters and paths, of each operation):
a status the schema documents, never a 5xx, a response that validates against the schema,
and for every error exactly ``{"error": "<one line>"}`` with no traceback and no filesystem
path. The default tier is bounded (``EXAMPLES`` per operation); the ``nightly`` twin runs
many more (``pytest -m nightly``). A second schema serves with an API key, so requests
without it are 401s in the same error shape.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance
from serve_helpers import fuzz_llm, fuzz_settings
from test_experiments import ssli_file

from api_fuzzing import generated, no_leak_and_one_line_errors
from sciera.eval.experiment import parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment
from sciera.serve import create_app

EXAMPLES = 20
NIGHTLY_EXAMPLES = 500
KEY = "fuzz-key"


def ssli_questions(path: Path) -> Path:
    """test_experiments' two questions in the ``ssli`` setting (the one the SSLI view reads)."""
    ssli_file(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "setting": "ssli"}) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def experiments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("api-fuzz-experiments")
    spec = {
        "name": "pool-only",
        "dataset": {"type": "ssli", "path": str(ssli_questions(root / "ssli.jsonl"))},
        "metrics": ["hit@1"],
        "repeats": 1,
        "pipelines": [{"name": "pool", "retriever": "candidates"}],
    }
    out = root / "results" / "pool-only"
    run_experiment(parse_experiment(spec, "pool-only.yaml"), out)
    write_report(out, plots=False)
    (out / "report" / "rank_distribution.png").write_bytes(b"\x89PNG\r\n\x1a\nnot an image")
    (root / "secret").write_text("outside the results folder")
    return root / "results"


def build_app(corpus: Path, home: Path, experiments: Path, api_key: str | None) -> Any:
    settings, llm = fuzz_settings(home), fuzz_llm()
    return create_app(
        {"tiny": corpus},
        settings,
        api_key=api_key,
        experiments_dir=experiments,
        llm_factory=lambda s: llm,
        static_dir=home / "no-static",
    )


# every operation of the schema (a test below checks the list is complete)
OPERATIONS = [
    "GET /v1/corpora",
    "GET /v1/corpora/{name}/documents/{doc_id}",
    "POST /v1/search",
    "POST /v1/rerank",
    "POST /v1/ask",
    "POST /v1/verify",
    "GET /v1/experiments",
    "GET /v1/experiments/{name}",
    "GET /v1/experiments/{name}/plots/{file}",
    "GET /v1/experiments/{name}/ssli",
    "GET /v1/experiments/{name}/ssli/{qid}",
    "GET /healthz",
]
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
# only request bodies can be negated: any string is a valid path segment (the positive
# cases already send arbitrary ones, traversal attempts included)
CASES = [
    (label, mode)
    for label in OPERATIONS
    for mode in MODES
    if mode.is_positive or label.startswith("POST ")
]
SENT: Counter[tuple[str, str, int]] = Counter()  # (operation, mode, status) -> requests


@pytest.fixture
def app(corpus: Path, tmp_path: Path, experiments: Path, registered: None) -> Any:
    return build_app(corpus, tmp_path, experiments, None)


def operation(app: Any, label: str) -> Any:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    method, path = label.split(" ")
    return schema[path][method]


def fuzz(op: Any, mode: GenerationMode, examples: int, **call: Any) -> None:
    """``examples`` generated requests of ``mode`` to ``op``, each response checked and
    counted in :data:`SENT`."""

    def count(response: Any) -> None:
        SENT[(f"{op.method.upper()} {op.path}", mode.value, response.status_code)] += 1

    generated(op, mode, examples, derandomize=examples <= EXAMPLES, on_response=count, **call)


def test_the_operations_listed_are_the_schema_s(app: Any) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    labels = [f"{r.ok().method.upper()} {r.ok().path}" for r in schema.get_all_operations()]
    assert sorted(labels) == sorted(OPERATIONS)


@pytest.mark.parametrize(("label", "mode"), CASES, ids=[f"{c[0]}-{c[1].value}" for c in CASES])
def test_every_generated_request_gets_a_documented_answer(
    app: Any, label: str, mode: GenerationMode
) -> None:
    fuzz(operation(app, label), mode, EXAMPLES)


@pytest.mark.nightly
@pytest.mark.parametrize(("label", "mode"), CASES, ids=[f"{c[0]}-{c[1].value}" for c in CASES])
def test_every_generated_request_gets_a_documented_answer_nightly(
    app: Any, label: str, mode: GenerationMode
) -> None:
    fuzz(operation(app, label), mode, NIGHTLY_EXAMPLES)


EXPERIMENT_ROUTES = [op for op in OPERATIONS if "/experiments/{name}" in op]
# names and files that exist, that try to leave the folder, and anything else. Not empty,
# "." or "..": clients remove those segments before sending (/v1/experiments/.. is /v1/)
SEGMENT = st.text(min_size=1).filter(lambda s: s.strip(".") != "")
EXISTING = st.just("pool-only")
NAMES = (
    EXISTING
    | EXISTING
    | st.sampled_from(["notes", "../secret", "pool-only/../..", "%2e%2e"])
    | SEGMENT
)
FILES = st.just("rank_distribution.png") | st.sampled_from(["../manifest.json", "x.png"]) | SEGMENT
QIDS = st.sampled_from(["q1", "q2"]) | st.sampled_from(["nope", "../q1"]) | SEGMENT


@pytest.mark.parametrize("label", EXPERIMENT_ROUTES)
def test_experiment_routes_with_names_that_exist_or_try_to_leave(app: Any, label: str) -> None:
    """Random path segments rarely name an experiment: these do, or try to escape it."""
    op = operation(app, label)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
    @given(name=NAMES, file=FILES, qid=QIDS)
    def one(name: str, file: str, qid: str) -> None:
        wanted = {"name": name, "file": file, "qid": qid}
        case = op.Case(path_parameters={k: v for k, v in wanted.items() if f"{{{k}}}" in op.path})
        response = case.call_and_validate(
            additional_checks=[no_leak_and_one_line_errors],
            excluded_checks=[positive_data_acceptance],
        )
        SENT[(label, "named", response.status_code)] += 1
        if ".." in name.split("/") and response.status_code == 200:
            raise AssertionError(f"{case.path} answered 200 for {name!r}")

    one()


@pytest.mark.parametrize("label", [op for op in OPERATIONS if op.split(" ")[1].startswith("/v1/")])
def test_with_an_api_key_a_request_without_it_is_a_401_in_the_error_shape(
    corpus: Path, tmp_path: Path, experiments: Path, registered: None, label: str
) -> None:
    op = operation(build_app(corpus, tmp_path, experiments, KEY), label)

    @settings(
        max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(case=op.as_strategy())
    def one(case: Any) -> None:
        response = case.call()
        assert response.status_code == 401, response.text
        no_leak_and_one_line_errors(None, response, case)
        case.call_and_validate(
            headers={"X-API-Key": KEY},
            additional_checks=[no_leak_and_one_line_errors],
            excluded_checks=[positive_data_acceptance],
        )

    one()
