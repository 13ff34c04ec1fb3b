"""Ingest of full-text papers: speed, store size per paper, and memory on large PDFs ->
benchmarks/results/fulltext_ingest.json.

1. ``sciera ingest`` of the papers of ../shared/data/fulltext (10 JATS XML files, 6 PDFs,
   copied into a folder of their own) into a fresh corpus: seconds, PDF pages per
   second, passages, and the size of store.sqlite per paper (after a WAL checkpoint);
   then the same folder again (every file unchanged: nothing read).
2. Two large PDFs built from the shared ones with pypdf (page copies): about 1,000 pages
   (elife-08245's 28 pages, 36 times) and about 50 MB (elife-04177's images, 27 times).
   Each is ingested in a child process that reports its peak resident memory (VmHWM)
   next to the same process's peak after importing sciera, before the ingest.

When a paper comes both as PDF and as XML (same DOI) the folder holds one document for it
(the XML, read last); the PDF pages per second count every PDF read.

    python benchmarks/fulltext_ingest.py [--data ../shared/data/fulltext]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
from sciera.corpus import ingest

def hwm():  # this process's peak resident memory (kB; reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

before = hwm()
started = time.perf_counter()
report = ingest(sys.argv[1], sys.argv[2], format="pdf")
took = time.perf_counter() - started
print(json.dumps({"seconds": took, "rss_before_mb": before / 1024, "rss_peak_mb": hwm() / 1024,
                  "passages": report.passages, "added": report.added}))
"""


def build_pdf(source: Path, copies: int, out: Path) -> int:
    import pypdf

    writer = pypdf.PdfWriter()
    for _ in range(copies):
        writer.append(pypdf.PdfReader(source))
    with open(out, "wb") as handle:
        writer.write(handle)
    return len(writer.pages)


def page_count(file: Path) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(file)
    try:
        return len(doc)
    finally:
        doc.close()


def store_bytes(corpus: Path) -> int:
    conn = sqlite3.connect(corpus / "store.sqlite")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return (corpus / "store.sqlite").stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/fulltext")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/fulltext_ingest.json"
    )
    args = parser.parse_args()
    from sciera.corpus import PassageStore
    from sciera.corpus.library import ingest_folder

    load_before = os.getloadavg()
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus, papers = Path(tmp) / "corpus", Path(tmp) / "papers"
        papers.mkdir()
        for file in sorted(args.data.iterdir()):
            if file.suffix in {".pdf", ".xml", ".nxml"}:
                shutil.copy(file, papers / file.name)
        started = time.perf_counter()
        first = ingest_folder(papers, corpus)
        took = time.perf_counter() - started
        pdf_reports = [r for r in first.reports if r.format == "pdf"]
        pages = sum(page_count(Path(r.source)) for r in pdf_reports)
        with PassageStore.open(corpus) as store:
            docs = store.count_documents()
            passages, sentences = store.count_passages(), store.count_sentences()
        size = store_bytes(corpus)
        started = time.perf_counter()
        again = ingest_folder(papers, corpus)
        out["folder"] = {
            "files": len(first.reports),
            "documents": docs,
            "note": "the XML and the PDF of one article share a DOI: one document",
            "seconds": round(took, 2),
            "pdf_pages": pages,
            "pdf_seconds": round(sum(r.seconds for r in pdf_reports), 2),
            "pdf_pages_per_s": round(pages / sum(r.seconds for r in pdf_reports), 1),
            "passages": passages,
            "sentences": sentences,
            "store_bytes": size,
            "store_kb_per_document": round(size / 1024 / docs, 1),
            "again_seconds": round(time.perf_counter() - started, 3),
            "again_records_read": sum(r.records for r in again.reports),
        }
        print(json.dumps(out["folder"], indent=1), file=sys.stderr)
        large = []
        for name, copies in (("elife-08245.pdf", 36), ("elife-04177.pdf", 27)):
            big = Path(tmp) / f"large-{name}"
            n_pages = build_pdf(args.data / name, copies, big)
            child = subprocess.run(
                [sys.executable, "-c", CHILD, str(big), str(Path(tmp) / f"c-{name}")],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(child.stdout)
            row.update(
                {
                    "built_from": f"{name} x {copies}",
                    "pages": n_pages,
                    "file_mb": round(big.stat().st_size / 2**20, 1),
                    "pages_per_s": round(n_pages / row["seconds"], 1),
                }
            )
            row = {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}
            large.append(row)
            print(json.dumps(row), file=sys.stderr)
        out["large_pdfs"] = large
    result = {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        **out,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
