"""Two runs of ``pubmedqa_answer.py`` (e.g. before and after the shipped model changed),
paired question by question for one extractor: right/wrong and refused/answered, each by
the exact McNemar test. Run from the repository root with the venv active::

    python benchmarks/pubmedqa_answer_paired.py benchmarks/results/pubmedqa_answer_ce_v3.jsonl \
        benchmarks/results/pubmedqa_answer_ce_v4.jsonl --extractor deepera_ce

Prints and (with ``--out``) writes the JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sciera.eval.resultlog import read_text
from sciera.eval.significance import mcnemar_exact


def rows(path: Path, extractor: str, setting: str) -> dict[str, dict[str, Any]]:
    """{pmid: row} of one extractor and setting in a run's JSONL (the last row wins)."""
    out = {}
    for line in read_text(path).splitlines():
        row = json.loads(line)
        if row["extractor"] == extractor and row["setting"] == setting:
            out[row["pmid"]] = row
    return out


def paired(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and refusals of ``b`` against ``a`` on the questions both answered."""
    pmids = sorted(set(a) & set(b))
    if not pmids:
        raise SystemExit("the two runs share no question for this extractor and setting")
    out: dict[str, Any] = {"questions": len(pmids)}
    for name, outcome in (
        ("correct", lambda r: r["pred"] == r["gold"]),
        ("refused", lambda r: r["pred"] == "refused"),
    ):
        xa, xb = [outcome(a[p]) for p in pmids], [outcome(b[p]) for p in pmids]
        test = mcnemar_exact(xa, xb)
        out[name] = {
            "a": sum(xa),
            "b": sum(xb),
            "b_only": test.b_only,
            "a_only": test.a_only,
            "p": test.p_value,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path, help="baseline run (JSONL of pubmedqa_answer.py)")
    ap.add_argument("b", type=Path, help="run compared with it")
    ap.add_argument("--extractor", default="deepera_ce")
    ap.add_argument("--setting", default="retrieval")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    report = {
        "a": str(args.a),
        "b": str(args.b),
        "extractor": args.extractor,
        "setting": args.setting,
        **paired(
            rows(args.a, args.extractor, args.setting), rows(args.b, args.extractor, args.setting)
        ),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
