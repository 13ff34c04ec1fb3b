"""The embedded llama.cpp backend on the real registered models (weights via ensure_model)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from sciera.errors import ScieraError
from sciera.llm.base import LLM, Message
from sciera.llm.llamacpp import LlamaCppLLM

pytestmark = pytest.mark.integration

GRADES = [str(i) for i in range(11)]
YES_NO_SYSTEM = "Does the passage answer the question? Answer yes or no."

# (question, relevant passage, on-topic but irrelevant passage)
CASES = [
    (
        "What vitamin deficiency causes scurvy?",
        "Scurvy results from a lack of vitamin C (ascorbic acid), which is required for "
        "collagen synthesis; sailors on long voyages developed it until citrus was added.",
        "Vitamin D deficiency in children causes rickets, a softening of the bones that leads "
        "to bowed legs; it is prevented by sunlight exposure and fortified milk.",
    ),
    (
        "Which enzyme does aspirin inhibit?",
        "Aspirin irreversibly acetylates a serine residue of cyclooxygenase (COX-1 and COX-2), "
        "blocking prostaglandin and thromboxane synthesis.",
        "Aspirin was first synthesized by Felix Hoffmann at Bayer in 1897 and became one of "
        "the most widely sold drugs of the twentieth century.",
    ),
    (
        "How is tuberculosis transmitted?",
        "Tuberculosis spreads through the air when a person with active pulmonary disease "
        "coughs or sneezes and others inhale droplets containing Mycobacterium tuberculosis.",
        "Tuberculosis is treated with a six-month regimen of isoniazid, rifampicin, "
        "pyrazinamide and ethambutol; drug-resistant strains need longer courses.",
    ),
]


def _yes_no(question: str, passage: str) -> list[Message]:
    return [
        Message("system", YES_NO_SYSTEM),
        Message("user", f"Question: {question}\n\nPassage: {passage}"),
    ]


def test_implements_the_protocol(llm_1p5b: LlamaCppLLM) -> None:
    assert isinstance(llm_1p5b, LLM)
    assert llm_1p5b.model_id == "llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m@cc324af070c2"


def test_complete_is_deterministic_and_counts_tokens(llm_1p5b: LlamaCppLLM) -> None:
    messages = [Message("user", "What is the chemical symbol of gold? Reply with the symbol.")]
    first = llm_1p5b.complete(messages, max_tokens=8)
    second = llm_1p5b.complete(messages, max_tokens=8)
    assert "Au" in first.text
    assert first.text == second.text
    assert first.prompt_tokens > 10 and 0 < first.completion_tokens <= 8
    assert first.finish_reason in {"stop", "length"} and first.seconds > 0


def test_json_output_follows_the_schema(llm_1p5b: LlamaCppLLM) -> None:
    schema = {
        "type": "object",
        "properties": {
            "topic": {"type": "string"},
            "intent": {"type": "string", "enum": ["definition", "mechanism", "causal"]},
            "confidence": {"type": "number"},
        },
        "required": ["topic", "intent", "confidence"],
    }
    result = llm_1p5b.complete_json(
        [Message("user", "Classify the question 'How does aspirin reduce fever?' as JSON.")],
        schema,
        max_tokens=80,
    )
    assert result.ok, result.failure
    assert result.value is not None
    assert set(result.value) == {"topic", "intent", "confidence"}
    assert result.value["intent"] in {"definition", "mechanism", "causal"}
    assert isinstance(result.value["confidence"], int | float)


def test_long_string_limits_do_not_crash_and_are_checked_after(llm_1p5b: LlamaCppLLM) -> None:
    # llama.cpp unrolls maxLength into one grammar rule per character: 1200 crashed the
    # process (SSLI distractor schema). Such limits stay out of the grammar and are checked
    # after parsing.
    schema = {
        "type": "object",
        "properties": {"passage": {"type": "string", "maxLength": 1200}},
        "required": ["passage"],
    }
    messages = [Message("user", "In JSON {passage}, write: Aspirin lowers fever.")]
    result = llm_1p5b.complete_json(messages, schema, max_tokens=150)
    assert result.ok, result.failure
    assert result.value is not None and 0 < len(result.value["passage"]) <= 1200
    # a short limit stays in the grammar and bounds the generated string
    tight = {"type": "object", "properties": {"passage": {"type": "string", "maxLength": 5}}}
    short = llm_1p5b.complete_json(messages, tight, max_tokens=150)
    assert short.ok, short.failure
    assert short.value is not None and len(short.value["passage"]) <= 5


def test_json_cut_off_by_max_tokens_is_a_parse_failure(llm_1p5b: LlamaCppLLM) -> None:
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}}
    result = llm_1p5b.complete_json(
        [Message("user", "Summarize the history of medicine in JSON.")], schema, max_tokens=4
    )
    assert result.value is None and result.failure is not None
    assert result.failure.raw == result.completion.text


def test_relevant_passage_gets_higher_yes(llm_1p5b: LlamaCppLLM) -> None:
    for question, relevant, irrelevant in CASES:
        good = llm_1p5b.choice_logprobs(_yes_no(question, relevant), ["yes", "no"])
        bad = llm_1p5b.choice_logprobs(_yes_no(question, irrelevant), ["yes", "no"])
        assert sum(good.probs.values()) == pytest.approx(1.0)
        assert 0 < good.raw_mass <= 1
        assert good.probs["yes"] > bad.probs["yes"], question


def test_grades_include_ten_and_split_the_shared_first_token(llm_1p5b: LlamaCppLLM) -> None:
    def ask(n: int):
        return llm_1p5b.choice_logprobs(
            [Message("user", f"Reply with the number {n} and nothing else.")], GRADES
        )

    ten, one = ask(10), ask(1)
    for result in (ten, one):
        assert list(result.probs) == GRADES
        assert sum(result.probs.values()) == pytest.approx(1.0)
        assert all(p >= 0 for p in result.probs.values())
    assert max(ten.probs, key=ten.probs.get) == "10"
    assert max(one.probs, key=one.probs.get) == "1"
    assert ten.expected() > 8 and one.expected() < 3


def test_shared_prefix_is_reused_with_the_same_result(llm_1p5b: LlamaCppLLM) -> None:
    question, relevant, irrelevant = CASES[0]
    first = llm_1p5b.choice_logprobs(_yes_no(question, relevant), ["yes", "no"])
    before = llm_1p5b.evaluated_tokens
    other = llm_1p5b.choice_logprobs(_yes_no(question, irrelevant), ["yes", "no"])
    shared = llm_1p5b.evaluated_tokens - before
    assert shared < other.prompt_tokens - 20  # system prompt + question were not re-evaluated
    before = llm_1p5b.evaluated_tokens
    again = llm_1p5b.choice_logprobs(_yes_no(question, relevant), ["yes", "no"])
    # llama.cpp's CPU kernels are not batch-invariant: splitting a prompt differently moves
    # probabilities by up to a few hundredths (measured), so compare with that tolerance.
    assert again.probs["yes"] == pytest.approx(first.probs["yes"], abs=0.05)
    assert llm_1p5b.evaluated_tokens - before < first.prompt_tokens


def test_one_instance_is_safe_from_several_threads(llm_1p5b: LlamaCppLLM) -> None:
    prompts = [_yes_no(q, p) for q, rel, irr in CASES[:2] for p in (rel, irr)]
    alone = [llm_1p5b.choice_logprobs(m, ["yes", "no"]).probs["yes"] for m in prompts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda m: llm_1p5b.choice_logprobs(m, ["yes", "no"]), prompts))
    assert [r.probs["yes"] for r in together] == pytest.approx(alone, abs=0.05)


def test_prompt_longer_than_the_context_is_refused(llm_1p5b: LlamaCppLLM) -> None:
    huge = "evidence " * 5000
    with pytest.raises(ScieraError, match="does not fit the context window"):
        llm_1p5b.choice_logprobs([Message("user", huge)], ["yes", "no"])


def test_fast_preset_model_loads_verified_through_the_registry() -> None:
    from sciera.llm.registry import make_llm
    from sciera.llm.weights import resolve_model
    from sciera.settings import Settings, load_settings

    home = Settings().home
    resolved = resolve_model("qwen2.5-coder-0.5b-instruct-q4_k_m", home)
    assert resolved.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert resolved.hash_status.startswith("verified")
    assert resolved.path.stat().st_size == 491_400_064
    llm = make_llm(load_settings("fast", home=home, llm={"cache": False, "n_ctx": 1024}))
    assert isinstance(llm, LlamaCppLLM)
    assert llm.model_id == "llamacpp:qwen2.5-coder-0.5b-instruct-q4_k_m@1d9614638d18"
    reply = llm.complete([Message("user", "Say OK.")], max_tokens=4)
    assert reply.text.strip() and reply.completion_tokens > 0


def test_without_prefix_reuse_an_answer_depends_on_neither_earlier_calls_nor_threads() -> None:
    from sciera.llm.registry import make_llm
    from sciera.settings import Settings, load_settings

    llm_settings = {"cache": False, "n_ctx": 1024, "prefix_reuse": False, "threads": 2}
    settings = load_settings("fast", home=Settings().home, llm=llm_settings)
    question, relevant, irrelevant = CASES[0]
    target = _yes_no(question, relevant)
    after_other = make_llm(settings)
    after_other.choice_logprobs(_yes_no(question, irrelevant), ["yes", "no"])
    after_other.complete(_yes_no(question, irrelevant), max_tokens=12)
    before = after_other.evaluated_tokens
    probs = after_other.choice_logprobs(target, ["yes", "no"])
    assert after_other.evaluated_tokens - before >= probs.prompt_tokens  # nothing reused
    text = after_other.complete(target, max_tokens=12).text
    alone = make_llm(settings)  # a fresh process-like instance: no calls before
    assert alone.choice_logprobs(target, ["yes", "no"]).probs == probs.probs  # bit for bit
    assert alone.complete(target, max_tokens=12).text == text
    # nor on the thread count (each output row is one thread's work in ggml): a Ray worker
    # with one thread answers as a build alone with two (tests/integration/test_ray_*.py)
    single = load_settings("fast", home=Settings().home, llm={**llm_settings, "threads": 1})
    one_thread = make_llm(single)
    assert settings.llm.threads == 2 and one_thread._llama.n_threads == 1
    assert one_thread.choice_logprobs(target, ["yes", "no"]).probs == probs.probs
    assert one_thread.complete(target, max_tokens=12).text == text


def test_llm_check_command_reports_speed_and_sanity() -> None:
    from typer.testing import CliRunner

    import sciera.cli.llm_cmds  # noqa: F401  (registers the commands)
    from sciera.cli import app

    result = CliRunner().invoke(
        app,
        ["llm", "check", "--model", "qwen2.5-coder-0.5b-instruct-q4_k_m", "--gen-tokens", "8"],
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "weights: verified" in out
    assert "prompt: " in out and "tok/s" in out and "generation: 8 tokens" in out
    assert out.rstrip().endswith("ok")
