"""How well a corpus's stored sentences line up with SciFact's own sentence lists: what
decides whether a rationale index a verifier quotes on a corpus ingested from BEIR's text
(``sciera ingest ../shared/data/scifact``, the README's corpus) names the sentence
SciFact's labels name.

Run from the repository root with the venv active (no model runs)::

    python benchmarks/sentence_alignment.py --corpus corpora/scifact-unglued \\
        --versus corpora/scifact --name sentence_alignment

For each abstract of ``corpus_sentences.jsonl``: whether the corpus stores the same
sentence list (spaces at the ends aside); the sentence boundaries SciFact has that the
corpus misses and those the corpus adds; and, for every gold rationale sentence of the
SciFact training claims (``claims_train.jsonl``), whether the corpus's sentence at that
index is SciFact's. With ``--versus`` a second corpus (say, ingested by an older splitter)
is scored the same way and the rationale sentences are paired (exact McNemar). Writes
``benchmarks/results/<name>.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from sciera.corpus.store import PassageStore
from sciera.datasets.claims import read_gold
from sciera.eval.significance import mcnemar_exact
from verify_common import DATA, ROOT, log

OUT = ROOT / "benchmarks" / "results"


def scifact_sentences() -> dict[str, list[str]]:
    out = {}
    with (DATA / "scifact" / "corpus_sentences.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            out[str(rec["doc_id"])] = [s.strip() for s in rec["abstract"]]
    return out


def _boundaries(sentences: list[str]) -> set[int]:
    """Where each sentence after the first starts, in the text with spaces removed (so the
    lists of two corpora and SciFact's compare whatever spaces joined them)."""
    out, pos = set(), 0
    for s in sentences[:-1]:
        pos += len("".join(s.split()))
        out.add(pos)
    return out


def score(corpus: Path, gold: dict[str, list[str]], rationales: list[tuple[str, int]]) -> dict:
    with PassageStore.open(corpus) as store:
        stored = {d: [s.strip() for s in v[1]] for d, v in store.sentences(list(gold)).items()}
    if missing := [d for d in gold if d not in stored]:
        sys.exit(f"{corpus}: {len(missing)} SciFact abstracts not stored (first {missing[0]})")
    exact = missed = extra = boundaries = 0
    for doc, sentences in gold.items():
        ours, theirs = _boundaries(stored[doc]), _boundaries(sentences)
        exact += stored[doc] == sentences
        boundaries += len(theirs)
        missed += len(theirs - ours)
        extra += len(ours - theirs)
    aligned = [i < len(stored[d]) and stored[d][i] == gold[d][i] for d, i in rationales]
    return {
        "corpus": str(corpus),
        "abstracts": len(gold),
        "same_sentence_list": exact,
        "scifact_boundaries": boundaries,
        "boundaries_missed": missed,
        "boundaries_added": extra,
        "rationale_sentences": len(aligned),
        "rationale_sentences_aligned": int(sum(aligned)),
        "_aligned": aligned,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="a corpus folder to score")
    ap.add_argument("--versus", type=Path, help="a second corpus folder, paired with it")
    ap.add_argument("--name", default="sentence_alignment", help="result name")
    args = ap.parse_args()
    gold = scifact_sentences()
    rationales = [
        (doc, i)
        for claim in read_gold(DATA / "scifact" / "claims_train.jsonl")
        for doc, evidence in claim.evidence.items()
        for rationale in evidence.rationales
        for i in sorted(rationale)
    ]
    sides = [score(args.corpus, gold, rationales)]
    if args.versus:
        sides.append(score(args.versus, gold, rationales))
    out: dict[str, Any] = {
        "command": "python benchmarks/sentence_alignment.py " + shlex.join(sys.argv[1:]),
        "corpora": [{k: v for k, v in s.items() if k != "_aligned"} for s in sides],
    }
    if args.versus:
        a, b = (np.array(s["_aligned"]) for s in sides)
        out["paired_rationale_sentences"] = mcnemar_exact(b, a).as_dict()
    for s in out["corpora"]:
        log(
            f"{s['corpus']}: {s['same_sentence_list']} of {s['abstracts']} abstracts as SciFact "
            f"splits them; {s['boundaries_missed']} of {s['scifact_boundaries']} boundaries "
            f"missed, {s['boundaries_added']} added; {s['rationale_sentences_aligned']} of "
            f"{s['rationale_sentences']} rationale sentences at SciFact's index"
        )
    path = OUT / f"{args.name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
