"""Questions answered only in a paper's Methods or Results: does retrieval find the gold
sentence's passage, and with the right section? -> benchmarks/results/fulltext_qa.json.

The questions (``experiments/fulltext_questions.jsonl``) were written from the JATS
articles of ../shared/data/fulltext; each names its paper, the section kind its answer
sits in and the gold sentence verbatim. The XML articles are ingested into a fresh corpus
and indexed (BM25; ``--dense`` adds the shipped embedder and hybrid retrieval). Each
question is searched three ways: over every passage, with ``--section`` set to its gold
section kind, and with ``--section methods,results``. Reported per way: hit@1 and hit@5
(a passage holding the gold sentence), MRR@10, and the share of questions whose best
gold-holding passage in the top 5 carries the gold section (what a citation would name).
With ``--answer``, each question is also asked end to end (``sciera.pipeline``, the
defaults of ``sciera ask`` with a BM25 first stage and the embedded 1.5B; over every
passage and with ``--section methods,results``): reported are the share of answers that
cite a passage holding the gold sentence, the share whose citation of it names the gold
section (what ``[n, Methods]`` shows), refusals and seconds per question. Without it no
LLM runs.

    python benchmarks/fulltext_qa.py [--data ../shared/data/fulltext] [--dense] [--answer]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sciera.corpus.fulltext.sections import section_kinds
from sciera.corpus.library import ingest_folder
from sciera.retrieve.build import build_indexes
from sciera.retrieve.open import open_retriever
from sciera.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "benchmarks/experiments/fulltext_questions.jsonl"


def main() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/fulltext")
    parser.add_argument("--dense", action="store_true", help="Also dense and hybrid retrieval.")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/fulltext_qa.json")
    parser.add_argument("--answer", action="store_true", help="Also answer with the 1.5B.")
    args = parser.parse_args()
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line]
    load_before = os.getloadavg()
    retrievers = ["bm25", *(["dense", "hybrid"] if args.dense else [])]
    results: dict[str, dict[str, object]] = {}
    rows = []
    opened: dict[tuple[str, tuple[str, ...]], Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        papers, corpus = Path(tmp) / "papers", Path(tmp) / "corpus"
        papers.mkdir()
        for file in sorted(args.data.iterdir()):
            if file.suffix in {".xml", ".nxml"}:
                shutil.copy(file, papers / file.name)
        ingest_folder(papers, corpus)
        started = time.perf_counter()
        build_indexes(corpus, load_settings(), which=["bm25", "dense"] if args.dense else ["bm25"])
        index_seconds = time.perf_counter() - started
        for name in retrievers:
            for way in ("all", "gold-section", "methods,results"):
                hits1 = hits5 = right = 0
                mrr = 0.0
                for q in questions:
                    sections = {"all": (), "gold-section": (q["section"],)}.get(
                        way, ("methods", "results")
                    )
                    key = (name, tuple(sections))
                    if key not in opened:  # one retriever (and embedder load) per filter
                        settings = load_settings(retrieve={"sections": sections})
                        opened[key] = open_retriever(corpus, name, settings)
                    ranking = opened[key].search(q["question"], 10)
                    ranks = [it.rank for it in ranking if q["gold"] in it.passage.text]
                    first = ranks[0] if ranks else None
                    hits1 += first == 1
                    hits5 += first is not None and first <= 5
                    mrr += 1 / first if first else 0.0
                    if first is not None and first <= 5:
                        section = ranking[first - 1].passage.section
                        right += q["section"] in section_kinds(section)
                    rows.append(
                        {
                            "id": q["id"],
                            "retriever": name,
                            "way": way,
                            "gold_rank": first,
                            "top1": ranking[0].passage_id if len(ranking) else None,
                            "top1_section": ranking[0].passage.section if len(ranking) else None,
                        }
                    )
                n = len(questions)
                results[f"{name}/{way}"] = {
                    "hit@1": round(hits1 / n, 3),
                    "hit@5": round(hits5 / n, 3),
                    "mrr@10": round(mrr / n, 3),
                    "right_section_in_top5": round(right / n, 3),
                }
                print(name, way, results[f"{name}/{way}"], file=sys.stderr)
        answers = answer_questions(corpus, questions) if args.answer else None
    out = {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "questions": len(questions),
        "index_seconds": round(index_seconds, 1),
        "results": results,
        "rows": rows,
        **({"answers": answers} if answers is not None else {}),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def answer_questions(corpus: Path, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Each question through the answering pipeline, over every passage and over methods
    and results only: does an answer cite the gold sentence's passage, with its section?"""
    from sciera.pipeline import pipeline_from_settings

    out: dict[str, Any] = {}
    for way, sections in (("all", ()), ("methods,results", ("methods", "results"))):
        settings = load_settings(retrieve={"retriever": "bm25", "sections": sections})
        pipe = pipeline_from_settings(corpus, settings)
        cited = right = refused = 0
        seconds = 0.0
        per = []
        for q in questions:
            started = time.perf_counter()
            answer = pipe.answer(q["question"], "factoid")
            seconds += time.perf_counter() - started
            texts = {e.passage.passage_id: e.passage for e in answer.evidence}
            gold = [
                c
                for c in answer.citations
                if c.passage_id in texts and q["gold"] in texts[c.passage_id].text
            ]
            cited += bool(gold)
            right += any(q["section"] in section_kinds(c.section) for c in gold)
            refused += answer.insufficient
            per.append(
                {
                    "id": q["id"],
                    "text": answer.text,
                    "citations": [[c.marker, c.passage_id, c.section] for c in answer.citations],
                    "cites_gold": bool(gold),
                }
            )
            print(way, q["id"], bool(gold), answer.text[:120], file=sys.stderr)
        n = len(questions)
        out[way] = {
            "cites_gold_passage": round(cited / n, 3),
            "cites_it_with_the_gold_section": round(right / n, 3),
            "refused": round(refused / n, 3),
            "seconds_per_question": round(seconds / n, 1),
            "rows": per,
        }
    return out


if __name__ == "__main__":
    main()
