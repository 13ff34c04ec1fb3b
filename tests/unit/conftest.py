"""Unit tests run without models: DeepEra grades with the (scripted) LLM, not the trained
cross-encoder that is the default scorer, and `ask` does not verify with the trained
verifier unless a test builds its verify stage with stand-ins."""

import pytest


@pytest.fixture(autouse=True)
def _llm_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIERA_DEEPERA__SCORER", "llm")
    monkeypatch.setenv("SCIERA_VERIFY__ENABLED", "false")
