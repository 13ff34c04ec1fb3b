"""Ingest throughput on BEIR SciFact -> benchmarks/results/ingest_speed.json.

Measures, into a fresh temporary corpus dir: a full ingest (documents/s,
passages/s), a second ingest of the same folder (journal says complete), and an
ingest of a copy of corpus.jsonl (every document compared by content hash).
Also times the chunker alone (sentence splitting + packing) on the same texts.

    python benchmarks/perf/ingest_speed.py [--data ../shared/data/scifact] [--max-words 250]

The machine is shared: the load average before and after is recorded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from common import DATA, RESULTS, command, loadavg, machine, write_json
from sciera.corpus import chunk_text, ingest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "scifact")
    parser.add_argument("--max-words", type=int, default=250)
    parser.add_argument("--out", type=Path, default=RESULTS / "ingest_speed.json")
    args = parser.parse_args()

    load_before = loadavg()
    texts = [
        json.loads(line)["text"]
        for line in (args.data / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    started = time.perf_counter()
    chunks = sum(len(chunk_text(t, args.max_words)) for t in texts)
    chunk_seconds = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        first = ingest(args.data, corpus, max_words=args.max_words)
        again = ingest(args.data, corpus, max_words=args.max_words)
        copy = Path(tmp) / "copy.jsonl"
        shutil.copy(args.data / "corpus.jsonl", copy)
        by_hash = ingest(copy, corpus, format="beir", max_words=args.max_words)

    result = {
        "command": command(),
        "data": str(args.data.resolve()),
        "max_words": args.max_words,
        "documents": first.added,
        "passages": first.passages,
        "ingest_seconds": round(first.seconds, 3),
        "documents_per_second": round(first.added / first.seconds, 1),
        "passages_per_second": round(first.passages_per_second, 1),
        "chunker_only_seconds": round(chunk_seconds, 3),
        "chunker_passages": chunks,
        "reingest_same_file_seconds": round(again.seconds, 3),
        "reingest_copy_seconds": round(by_hash.seconds, 3),
        "reingest_copy_unchanged": by_hash.unchanged,
        "machine": machine(),
        "load_before": load_before,
        "load_after": loadavg(),
    }
    write_json(args.out, result, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
