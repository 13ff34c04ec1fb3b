"""The refusal hint of `sciera ask` when every candidate fell below the filter's tau."""

from __future__ import annotations

from sciera.cli.ask_cmds import _tau_hint


def info(scores: list[float], kept: list[bool], tau: float = 0.8) -> dict:
    rows = [
        {"passage_id": f"d{i}#0", "score": s, "kept": k, "title": "", "why": ""}
        for i, (s, k) in enumerate(zip(scores, kept, strict=True))
    ]
    return {"candidates": rows, "filter": {"tau": tau, "top_k": 5}}


def test_hint_names_the_best_candidate_and_tau() -> None:
    hint = _tau_hint(info([0.41, 0.712, 0.2], [False] * 3))
    assert hint.startswith("best candidate d1#0 scored 0.712 < tau 0.80; --tau lower")


def test_pruned_candidates_score_only_a_bound_and_are_not_named() -> None:
    data = info([0.41, 0.79], [False, False])
    data["candidates"][1]["graded"] = False
    assert _tau_hint(data).startswith("best candidate d0#0 scored 0.410")


def test_no_hint_when_something_was_kept_or_without_a_threshold() -> None:
    assert _tau_hint(info([0.9, 0.1], [True, False])) == ""
    assert _tau_hint({"candidates": info([0.5], [False])["candidates"]}) == ""
    assert _tau_hint({}) == ""


def test_an_answer_from_the_closest_passages_says_so_and_marks_them(capsys) -> None:
    from sciera.cli.ask_cmds import _print

    evidence = {"summary": "", "section": "Methods", "rationales": [], "title": "T"}
    pipeline = info([0.08, 0.03], [False, False])
    pipeline.update(compression_ratio=1.0, compression_ratio_candidates=1.0, sufficient=None)
    data = {
        "question": "What dose?",
        "question_type": "factoid",
        "text": "24 µg/ml [1].",
        "exact": ["24 µg/ml"],
        "insufficient": False,
        "citations": [],
        "evidence": [
            {**evidence, "n": 1, "passage_id": "d0#3", "score": 0.08, "kept": False},
            {**evidence, "n": 2, "passage_id": "d1#0", "score": 0.03, "kept": False},
        ],
        "trace": {"closest": 2, "pipeline": pipeline},
    }
    _print(data, explain=False)
    out = capsys.readouterr().out
    assert (
        "note: no passage passed tau 0.80; the answer is stated verbatim in the 2 closest "
        "passages below it (check them)"
    ) in out
    assert out.count("(below tau)") == 2 and "cited for its sentences" not in out
