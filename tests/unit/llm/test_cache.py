"""CachedLLM: keys, hits and misses, persistence, threads and processes, accounting."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fakes import ScriptedLLM
from sciera.errors import ScieraError
from sciera.llm.accounting import UsageTracker, stage
from sciera.llm.base import LLM, Message
from sciera.llm.cache import CachedLLM

REPO = Path(__file__).resolve().parents[3]
MSGS = [Message("system", "You grade."), Message("user", "Question: q1\nScore:")]
SCHEMA = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}


def scripted() -> ScriptedLLM:
    return (
        ScriptedLLM(default="fallback reply")
        .on("Score:", "7 out of ten words in this reply")
        .on("json please", {"score": 0.5})
        .on("broken json", "{not json")
        .on("yes or no", probs={"yes": 0.6, "no": 0.2, "maybe": 0.2})
        .on("explode", raises=ScieraError("server down"))
    )


def test_cached_llm_satisfies_the_protocol(tmp_path: Path) -> None:
    assert isinstance(CachedLLM(scripted(), tmp_path / "c.sqlite"), LLM)


def test_complete_hit_and_miss(tmp_path: Path) -> None:
    inner = scripted()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    first = llm.complete(MSGS, max_tokens=50)
    second = llm.complete(MSGS, max_tokens=50)
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text == "7 out of ten words in this reply"
    assert second.prompt_tokens == first.prompt_tokens == 5  # "You grade. Question: q1 Score:"
    assert second.completion_tokens == first.completion_tokens == 8
    assert len(inner.calls) == 1
    assert (llm.hits, llm.misses, len(llm)) == (1, 1, 1)


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [Message("system", "You grade!"), MSGS[1]]},
        {"messages": [Message("user", "You grade."), MSGS[1]]},  # role matters
        {"messages": [MSGS[1]]},
        {"max_tokens": 51},
        {"stop": ["\n"]},
        {"model_id": "scripted:other"},
    ],
)
def test_key_changes_with_every_parameter(tmp_path: Path, change: dict) -> None:
    path = tmp_path / "c.sqlite"
    CachedLLM(scripted(), path).complete(MSGS, max_tokens=50)
    inner = ScriptedLLM(default="x", model_id=change.get("model_id", "scripted:test"))
    llm = CachedLLM(inner, path)
    reply = llm.complete(
        change.get("messages", MSGS),
        max_tokens=change.get("max_tokens", 50),
        stop=change.get("stop"),
    )
    assert reply.cached is False and len(inner.calls) == 1
    # and the unchanged call is still a hit
    if "model_id" not in change:
        assert llm.complete(MSGS, max_tokens=50).cached is True


def test_keys_for_json_schema_and_choices(tmp_path: Path) -> None:
    llm = CachedLLM(scripted(), tmp_path / "c.sqlite")
    k = llm.key("complete_json", MSGS, {"max_tokens": 512, "schema": SCHEMA})
    other_schema = {**SCHEMA, "required": []}
    assert k != llm.key("complete_json", MSGS, {"max_tokens": 512, "schema": other_schema})
    assert k != llm.key("complete", MSGS, {"max_tokens": 512, "schema": SCHEMA})
    # canonical: key order in params and schema does not matter
    reordered = {"schema": dict(reversed(list(SCHEMA.items()))), "max_tokens": 512}
    assert k == llm.key("complete_json", MSGS, reordered)
    c1 = llm.key("choice_logprobs", MSGS, {"choices": ["yes", "no"]})
    assert c1 != llm.key("choice_logprobs", MSGS, {"choices": ["no", "yes"]})


def test_only_temperature_zero_is_cached_by_default(tmp_path: Path) -> None:
    inner = scripted()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    for _ in range(2):
        assert llm.complete(MSGS, temperature=0.7).cached is False
    assert len(inner.calls) == 2 and len(llm) == 0
    assert (llm.hits, llm.misses) == (0, 0)
    sampled = CachedLLM(inner, tmp_path / "c.sqlite", cache_sampled=True)
    sampled.complete(MSGS, temperature=0.7)
    assert sampled.complete(MSGS, temperature=0.7).cached is True
    assert sampled.complete(MSGS, temperature=0.0).cached is False  # temperature is in the key


def test_disabled_cache_never_touches_disk(tmp_path: Path) -> None:
    inner = scripted()
    llm = CachedLLM(inner, tmp_path / "sub" / "c.sqlite", enabled=False)
    llm.complete(MSGS)
    assert llm.complete(MSGS).cached is False
    assert len(inner.calls) == 2 and not (tmp_path / "sub").exists()
    assert llm.usage().calls == 2 and llm.usage().cache_misses == 0


def test_persistence_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with CachedLLM(scripted(), path) as llm:
        llm.complete(MSGS)
        llm.complete_json([Message("user", "json please")], SCHEMA)
        llm.choice_logprobs([Message("user", "yes or no")], ["yes", "no"])
    inner = scripted()
    again = CachedLLM(inner, path)
    assert again.complete(MSGS).cached is True
    result = again.complete_json([Message("user", "json please")], SCHEMA)
    assert result.ok and result.value == {"score": 0.5} and result.completion.cached
    probs = again.choice_logprobs([Message("user", "yes or no")], ["yes", "no"])
    assert probs.cached and probs.probs == pytest.approx({"yes": 0.75, "no": 0.25})
    assert probs.raw_mass == pytest.approx(0.8)
    assert inner.calls == [] and again.hits == 3


def test_parse_failures_are_cached_as_raw_text_and_reparsed(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    msgs = [Message("user", "broken json")]
    llm = CachedLLM(scripted(), path)
    first = llm.complete_json(msgs, SCHEMA)
    assert not first.ok and first.completion.text == "{not json"
    hit = llm.complete_json(msgs, SCHEMA)
    assert hit.completion.cached and not hit.ok and hit.failure is not None
    assert llm.usage().failures == 2  # a cached failure is still a failure
    # a stored failure is re-parsed on a hit: rewrite the raw text as if the parser had
    # learned to read it, and the hit now succeeds without asking the model
    key = llm.key("complete_json", msgs, {"max_tokens": 512, "schema": SCHEMA})
    with sqlite3.connect(path) as db:
        stored = json.loads(
            db.execute("SELECT value FROM responses WHERE key=?", (key,)).fetchone()[0]
        )
        assert stored["value"] is None
        stored["completion"]["text"] = "{'score': 1,}"
        db.execute("UPDATE responses SET value=? WHERE key=?", (json.dumps(stored), key))
    inner = scripted()
    rescued = CachedLLM(inner, path).complete_json(msgs, SCHEMA)
    assert rescued.ok and rescued.value == {"score": 1} and inner.calls == []


def test_errors_are_not_cached_and_count_as_failures(tmp_path: Path) -> None:
    inner = scripted()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    for _ in range(2):
        with pytest.raises(ScieraError, match="server down"):
            llm.complete([Message("user", "explode")])
    assert len(inner.calls) == 2 and len(llm) == 0
    usage = llm.usage()
    assert (usage.calls, usage.failures, usage.cache_misses) == (2, 2, 2)


def test_tracker_counts_per_stage(tmp_path: Path) -> None:
    tracker = UsageTracker()
    llm = CachedLLM(scripted(), tmp_path / "c.sqlite", tracker=tracker)
    with stage("deepera.assess"):
        llm.choice_logprobs([Message("user", "yes or no")], ["yes", "no"])
        llm.choice_logprobs([Message("user", "yes or no")], ["yes", "no"])
    with stage("generate"):
        llm.complete(MSGS)
    usage = tracker.snapshot()
    assess = usage.by_stage["deepera.assess"]
    assert (assess["calls"], assess["cache_hits"], assess["cache_misses"]) == (2, 1, 1)
    assert assess["prompt_tokens"] == 3  # "yes or no": the hit costs no tokens
    assert usage.by_stage["generate"]["completion_tokens"] == 8
    assert usage.calls == 3 and llm.usage().calls == 3


def test_concurrent_identical_calls_ask_the_model_once(tmp_path: Path) -> None:
    gate = threading.Event()
    inner = ScriptedLLM().on(lambda prompt: gate.wait(5) or True, "slow reply")
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    prompts = [[Message("user", f"q{i % 4}")] for i in range(32)]
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(llm.complete, p) for p in prompts]
        gate.set()
        results = [f.result() for f in futures]
    assert all(r.text == "slow reply" for r in results)
    assert len(inner.calls) == 4  # one per distinct prompt
    assert (llm.hits, llm.misses, len(llm)) == (28, 4, 4)


def test_bad_cache_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ScieraError, match="cannot open the LLM response cache"):
        CachedLLM(scripted(), blocker / "c.sqlite")


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from fakes import ScriptedLLM
    from sciera.llm.base import Message
    from sciera.llm.cache import CachedLLM

    llm = CachedLLM(ScriptedLLM(default="r"), sys.argv[1])
    for i in range(150):
        llm.complete([Message("user", f"{{sys.argv[2]}}-{{i}}")])
        llm.complete([Message("user", f"shared-{{i}}")])
    print(llm.misses)
    """
)


def test_two_processes_share_one_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    script = WRITER.format(tests=str(REPO / "tests"))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    misses = sum(int(out.strip()) for out, _ in outs)
    # 150 private prompts each + 150 shared ones asked by at least one process
    assert 450 <= misses <= 600
    llm = CachedLLM(ScriptedLLM(), path)
    assert len(llm) == 450
    assert llm.complete([Message("user", "shared-149")]).cached
