"""Unit tests run without models: DeepEra grades with the (scripted) LLM, not the trained
cross-encoder that is the default scorer."""

import pytest


@pytest.fixture(autouse=True)
def _llm_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIERA_DEEPERA__SCORER", "llm")
