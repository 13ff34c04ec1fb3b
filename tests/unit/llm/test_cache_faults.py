"""A damaged LLM response cache (Hypothesis): truncated or overwritten at generated offsets.

Opening it is a one-line ScieraError naming the file, or every call still answers: a hit
gives exactly the stored reply, anything unreadable is a miss that asks the model again
(logged), never an exception from SQLite or JSON.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import strategies as st

from fakes import ScriptedLLM
from fuzz_tiers import tiered
from sciera.errors import ScieraError
from sciera.llm.base import Message
from sciera.llm.cache import CachedLLM

PROMPTS = [f"question number {i}" for i in range(60)]
DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0.0, 0.999)),
    st.tuples(
        st.just("overwrite"),
        st.lists(st.tuples(st.floats(0.0, 0.999), st.binary(min_size=1, max_size=64)), min_size=1),
    ),
)


def model() -> ScriptedLLM:
    return ScriptedLLM(default="the answer")


def ask(llm: CachedLLM, prompt: str) -> str:
    return llm.complete([Message("user", prompt)]).text


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cache") / "llm.sqlite"
    llm = CachedLLM(model(), path)
    for prompt in PROMPTS:
        ask(llm, prompt)
    llm.close()
    return path


def damage(path: Path, how: tuple) -> None:
    data = bytearray(path.read_bytes())
    if how[0] == "truncate":
        del data[int(len(data) * how[1]) :]
    else:
        for where, junk in how[1]:
            at = int(len(data) * where)
            data[at : at + len(junk)] = junk
    path.write_bytes(bytes(data))


@tiered(default=30, nightly=500, how=DAMAGE)
def test_a_damaged_cache_is_named_or_a_miss_never_a_crash(
    filled: Path, tmp_path_factory: pytest.TempPathFactory, how: tuple
) -> None:
    path = tmp_path_factory.mktemp("damaged") / "llm.sqlite"
    shutil.copy(filled, path)
    damage(path, how)
    inner = model()
    try:
        llm = CachedLLM(inner, path)
    except ScieraError as err:
        assert "\n" not in str(err) and str(path) in str(err)
        return
    try:
        for prompt in PROMPTS[:20]:
            assert ask(llm, prompt) == "the answer"
        assert ask(llm, "a new question") == "the answer"
    except ScieraError as err:
        assert "\n" not in str(err) and str(path) in str(err), str(err)
    finally:
        llm.close()
