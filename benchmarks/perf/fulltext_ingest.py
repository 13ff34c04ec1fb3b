"""Ingest of full-text papers: speed, store size per paper, and memory on large PDFs ->
benchmarks/results/fulltext_ingest.json.

1. ``sciera ingest`` of the papers of ../shared/data/fulltext (10 JATS XML files, 6 PDFs,
   copied into a folder of their own) into a fresh corpus: seconds, PDF pages per
   second, passages, and the size of store.sqlite per paper (after a WAL checkpoint);
   then the same folder again (every file unchanged: nothing read).
2. Two large PDFs built from the shared ones with pypdf (page copies): about 1,000 pages
   (elife-08245's 28 pages, 36 times) and about 50 MB (elife-04177's images, 27 times).
   Each is ingested in a child process (this script with ``--child``) that reports its
   peak resident memory (VmHWM) next to the same process's peak after importing sciera,
   before the ingest.

When a paper comes both as PDF and as XML (same DOI) the folder holds one document for it
(the XML, read last); the PDF pages per second count every PDF read.

    python benchmarks/perf/fulltext_ingest.py [--data ../shared/data/fulltext]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, RESULTS, command, loadavg, log, machine, memory, run_child, write_json


def ingest_large(pdf: str, corpus: str) -> None:
    """The child: ingest one PDF, print seconds, peak memory before and after (MiB)."""
    from sciera.corpus import ingest

    before = memory()["hwm"]
    started = time.perf_counter()
    report = ingest(pdf, corpus, format="pdf")
    took = time.perf_counter() - started
    row = {
        "seconds": took,
        "rss_before_mb": before / 2**20,
        "rss_peak_mb": memory()["hwm"] / 2**20,
        "passages": report.passages,
        "added": report.added,
    }
    print(json.dumps(row))


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


def folder_ingest(data: Path, tmp: Path) -> dict[str, object]:
    """``sciera ingest`` of the folder's papers into a fresh corpus, then again."""
    from sciera.corpus import PassageStore
    from sciera.corpus.library import ingest_folder

    corpus, papers = tmp / "corpus", tmp / "papers"
    papers.mkdir()
    for file in sorted(data.iterdir()):
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
    return {
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


def large_pdf(data: Path, name: str, copies: int, tmp: Path) -> dict[str, object]:
    """``copies`` of the PDF ``name`` as one file, ingested in a child process."""
    big = tmp / f"large-{name}"
    n_pages = build_pdf(data / name, copies, big)
    child = run_child(
        [sys.executable, __file__, "--child", str(big), str(tmp / f"c-{name}")], capture=True
    )
    if child.returncode != 0:
        raise SystemExit(f"ingest of {big} failed: {child.stderr.strip()[-500:]}")
    row = json.loads(child.stdout)
    row.update(
        {
            "built_from": f"{name} x {copies}",
            "pages": n_pages,
            "file_mb": round(big.stat().st_size / 2**20, 1),
            "pages_per_s": round(n_pages / row["seconds"], 1),
        }
    )
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "fulltext")
    parser.add_argument("--out", type=Path, default=RESULTS / "fulltext_ingest.json")
    parser.add_argument("--child", nargs=2, metavar=("PDF", "CORPUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        ingest_large(*args.child)
        return
    load_before = loadavg()
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out["folder"] = folder_ingest(args.data, Path(tmp))
        log(json.dumps(out["folder"], indent=1))
        large = []
        for name, copies in (("elife-08245.pdf", 36), ("elife-04177.pdf", 27)):
            large.append(large_pdf(args.data, name, copies, Path(tmp)))
            log(json.dumps(large[-1]))
        out["large_pdfs"] = large
    result = {
        "command": command(),
        "machine": machine(),
        "load_before": load_before,
        "load_after": loadavg(),
        **out,
    }
    write_json(args.out, result)


if __name__ == "__main__":
    main()
