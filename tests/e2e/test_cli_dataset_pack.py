"""`sciera dataset pack` / `unpack` end to end against a corpus `sciera ingest` built."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_cli_ingest import sciera, write_corpus

pytestmark = pytest.mark.e2e


def test_pack_unpack_restores_the_set_byte_for_byte(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    assert (
        sciera(
            "ingest", str(write_corpus(tmp_path / "docs.jsonl", 3)), "--corpus", str(corpus)
        ).returncode
        == 0
    )
    # the ingested passages' contents, as a build would have stored them in its candidates
    from sciera.corpus.store import PassageStore

    with PassageStore.open(corpus) as store:
        passages = store.get_passages(["doc1#0", "doc2#0"])
    assert len(passages) == 2
    record = {
        "id": "q1/ssli",
        "question": "Q?",
        "answer": "A.",
        "gold_passage_ids": ["doc1#0"],
        "setting": "ssli",
        "candidates": [
            *(
                {
                    "passage_id": p.passage_id,
                    "text": p.contents,
                    "is_distractor": False,
                    "distractor_type": "",
                }
                for p in passages
            ),
            {
                "passage_id": "ssli:q1:1",
                "text": "Written by the builder.",
                "is_distractor": True,
                "distractor_type": "misleading",
            },
        ],
        "provenance": {},
    }
    built = tmp_path / "set"
    built.mkdir()
    (built / "instances.jsonl").write_text(
        json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    )

    packed = tmp_path / "set.packed.jsonl.gz"
    assert sciera("dataset", "pack", str(built), str(packed)).returncode == 0
    text = gzip.decompress(packed.read_bytes()).decode()
    assert "Topic1x0" not in text and "Written by the builder." in text
    done = sciera(
        "dataset", "unpack", str(packed), "--corpus", str(corpus), "--out", str(tmp_path / "back")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "back" / "instances.jsonl").read_bytes() == (
        built / "instances.jsonl"
    ).read_bytes()

    other = tmp_path / "other"  # a corpus without those passages: one line, non-zero exit
    sciera("ingest", str(write_corpus(tmp_path / "one.jsonl", 1)), "--corpus", str(other))
    bad = sciera(
        "dataset", "unpack", str(packed), "--corpus", str(other), "--out", str(tmp_path / "x")
    )
    assert bad.returncode != 0
    assert (
        len(bad.stderr.strip().splitlines()) == 1 and "'doc2#0' is not in the corpus" in bad.stderr
    )
