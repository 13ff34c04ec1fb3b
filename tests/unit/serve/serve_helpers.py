"""Shared by the HTTP API tests: the tiny corpus's documents, the scripted LLM, the
settings and LLM the generated-request tests serve with, and the check that an error body
is one line of JSON."""

from __future__ import annotations

import threading

from fakes import ScriptedLLM

DOCS = [
    ("a1", "Albendazole and filariasis", "Albendazole treats lymphatic filariasis in trials."),
    ("c1", "Curcumin", "Curcumin reduces inflammation in chondrocytes treated with IL-1beta."),
    ("m1", "Malaria", "Malaria vectors transmit parasites; filariasis vectors differ."),
    ("x1", "Untrusted markup", "<script>alert('x')</script> Ivermectin kills scabies mites."),
]
SCRIPT = "<script>alert('x')</script>"
INTENT = {"topic": "t", "entity_type": "drug", "intent": "factual", "expected_answer_type": "a"}
Q = "Is albendazole used to treat lymphatic filariasis?"
ANSWER = "Yes. Trials show it works [1], see."


def scripted(block: threading.Event | None = None, entered: threading.Event | None = None):
    """DeepEra keeps the albendazole passage and the answer is "yes" with a citation.

    With ``block``, every LLM call sets ``entered`` and first waits for ``block`` to be set
    (so a request can be held inside the LLM while others arrive).
    """
    llm = ScriptedLLM()
    if block is not None:

        def wait(prompt: str) -> bool:
            if entered is not None:
                entered.set()
            block.wait(10)
            return False  # the rules below answer

        llm.on(wait, "unused")
    return (
        llm.on("Answer with exactly one word", probs={"yes": 0.9, "no": 0.1})
        .on("explain the answer", {"explanation": "Trials show it works [1], see [3]."})
        .on("Research question", INTENT)
        .on("Write the summary", "Albendazole treats lymphatic filariasis.")
        .on("Albendazole treats", probs={"9": 1.0})
        .on("Curcumin reduces", probs={"2": 1.0})
        .on("Malaria vectors", probs={"1": 1.0})
        .on("Ivermectin kills", probs={"1": 1.0})
    )


def assert_one_line_error(response, status: int) -> str:
    """The body is exactly ``{"error": "<one line>"}`` in JSON, with no traceback."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"]
    assert "\n" not in body["error"] and "Traceback" not in response.text
    return body["error"]


def fuzz_settings(home):
    """The settings the generated-request tests (HTTP, stateful HTTP, MCP) serve the tiny
    corpus with: BM25, DeepEra over 3 candidates, the stand-in verifier on 2 abstracts."""
    from sciera.settings import load_settings

    return load_settings(
        home=home,
        retrieve={"retriever": "bm25"},
        rerank={"depth": 3},
        filter={"top_k": 2, "tau": 0.8},
        answer={"evidence": "deepera"},
        verify={"selector": "overlap", "verdict": "keyword", "abstracts": 2},
    )


def fuzz_llm():
    """The tiny corpus's rules, and for any other prompt (a question type or passage the
    rules do not know) a reply that is neither the JSON nor the choice asked for."""
    return scripted().on(lambda prompt: True, "I cannot tell.", probs={"maybe": 1.0})
