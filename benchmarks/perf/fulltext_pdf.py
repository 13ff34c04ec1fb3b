"""PDF text against the publisher's JATS XML of the same articles ->
benchmarks/results/fulltext_pdf.json.

For each PDF in ../shared/data/fulltext whose article also comes as XML (MANIFEST.tsv
pairs them by DOI), the PDF reader's paper (pypdfium2) is compared with the XML's:

* ``sentences_recovered``: share of the XML's paragraph sentences (abstract, body, back
  matter; not captions, tables or references) found verbatim in the PDF text, compared
  on letters and digits only (case, spaces, punctuation and dashes ignored);
* ``section_label_right``: share of the PDF passages (250 words, cut as ingest cuts them)
  holding at least one XML sentence whose top-level section agrees with the XML
  section most of those sentences come from (the same heading, or the same kind:
  methods, results ...); passages with no XML sentence are counted apart;
* ``char_similarity``: per top-level XML section, difflib's character ratio between the
  XML paragraphs and the PDF paragraphs of the section with the same heading (else the
  same kind; 0 when the PDF has none), both as letters and digits only, averaged over
  sections weighted by XML length;
* ``pages_per_s``: PDF pages read per second by the reader (one process).

The same sentence share and speed are measured for pypdf's plain text and for
pypdfium2's plain text (pages joined; no header or hyphen handling), to record which
library extracts these files best. Comparing letters and digits only forgives a hyphen
left at a line break, so the plain baselines are not penalised for it.

    python benchmarks/perf/fulltext_pdf.py [--data ../shared/data/fulltext]
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import re
import time
from collections import Counter
from pathlib import Path

from common import DATA, RESULTS, command, loadavg, log, machine, write_json
from sciera.corpus.fulltext import paper_document, section_kinds
from sciera.corpus.fulltext.chunk import chunk_paper
from sciera.corpus.fulltext.jats import parse_jats
from sciera.corpus.fulltext.model import Paper
from sciera.corpus.fulltext.pdf import parse_pdf
from sciera.corpus.sentences import split_sentences


def squash(text: str) -> str:
    """Letters and digits only, lower-cased (how texts are compared)."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def xml_sentences(paper: Paper) -> list[tuple[str, str]]:
    """``(top-level heading, sentence)`` of every paragraph sentence of the XML."""
    out = []
    for section in paper.sections:
        for block in section.blocks:
            if block.kind == "paragraph":
                out.extend((section.path[0], s) for s in split_sentences(block.text))
    return out


def same_section(a: str, b: str) -> bool:
    if a.lower() == b.lower():
        return True
    return bool(section_kinds(a) & section_kinds(b))


def section_texts(paper: Paper) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    for section in paper.sections:
        key = section.path[0].lower()
        out.setdefault(key, []).extend(b.text for b in section.blocks if b.kind == "paragraph")
    return {k: " ".join(v) for k, v in out.items()}


def compare(xml: Paper, pdf: Paper) -> dict[str, object]:
    sentences = [(sec, s, squash(s)) for sec, s in xml_sentences(xml)]
    sentences = [x for x in sentences if len(x[2]) >= 20]  # a few words at least
    pdf_all = squash(pdf.body_text())
    found = sum(1 for _, _, key in sentences if key in pdf_all)

    laid = paper_document(pdf, "pdf")
    passages, _, units = chunk_paper(laid.document, laid.layout, 250)
    right = labelled = unmatched = 0
    for passage, unit in zip(passages, units, strict=True):
        key = squash(passage.text)
        secs = Counter(sec for sec, _, skey in sentences if skey in key)
        if not secs:
            unmatched += 1
            continue
        labelled += 1
        right += same_section(unit.section, secs.most_common(1)[0][0])

    xml_secs, pdf_secs = section_texts(xml), section_texts(pdf)
    weighted = total = 0.0
    per_section = {}
    for key, text in xml_secs.items():
        a = squash(text)
        if not a:
            continue
        match = pdf_secs.get(key)
        if match is None:
            match = next((v for k, v in pdf_secs.items() if same_section(k, key)), "")
        ratio = difflib.SequenceMatcher(None, a, squash(match), autojunk=False).ratio()
        per_section[key] = round(ratio, 4)
        weighted += ratio * len(a)
        total += len(a)
    return {
        "xml_sentences": len(sentences),
        "sentences_recovered": found,
        "pdf_passages": len(passages),
        "passages_with_xml_sentences": labelled,
        "passages_without_xml_sentence": unmatched,
        "passages_section_right": right,
        "char_similarity": round(weighted / total, 4) if total else 0.0,
        "char_similarity_by_section": per_section,
        "pdf_sections": sorted({" > ".join(s.path) for s in pdf.sections}),
    }


def plain_text(library: str, file: Path) -> tuple[str, int]:
    """A library's plain page text (lines joined with spaces) and the page count."""
    if library == "pypdf":
        import pypdf

        reader = pypdf.PdfReader(file)
        pages = [page.extract_text() or "" for page in reader.pages]
    else:
        import pypdfium2 as pdfium

        doc = pdfium.PdfDocument(file)
        pages = []
        for i in range(len(doc)):
            textpage = doc[i].get_textpage()
            pages.append(textpage.get_text_bounded())
            textpage.close()
        doc.close()
    return " ".join(" ".join(p.split()) for p in pages), len(pages)


def article_pairs(data: Path) -> list[tuple[str, str]]:
    """``(pdf, xml)`` file names of the articles MANIFEST.tsv lists in both forms (same DOI)."""
    with open(data / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    by_doi: dict[str, dict[str, str]] = {}
    for row in rows:
        kind = "pdf" if row["file"].endswith(".pdf") else "xml"
        by_doi.setdefault(row["doi"], {})[kind] = row["file"]
    return sorted((v["pdf"], v["xml"]) for v in by_doi.values() if {"pdf", "xml"} <= set(v))


def summarize(
    articles: list[dict[str, object]],
    pages: int,
    seconds: float,
    baselines: dict[str, dict[str, float]],
) -> dict[str, object]:
    """The shares over all articles, the reader's speed and the plain-text baselines."""

    def share(key_a: str, key_b: str) -> float:
        a = sum(int(r[key_a]) for r in articles)  # type: ignore[call-overload]
        b = sum(int(r[key_b]) for r in articles)  # type: ignore[call-overload]
        return round(a / b, 4) if b else 0.0

    sim_total = sum(float(r["char_similarity"]) * int(r["xml_sentences"]) for r in articles)  # type: ignore[arg-type]
    return {
        "articles": len(articles),
        "pages": pages,
        "sentences_recovered": share("sentences_recovered", "xml_sentences"),
        "section_label_right": share("passages_section_right", "passages_with_xml_sentences"),
        "char_similarity": round(sim_total / sum(int(r["xml_sentences"]) for r in articles), 4),  # type: ignore[call-overload]
        "pages_per_s": round(pages / seconds, 1) if seconds else 0.0,
        "targets": {"sentences_recovered": 0.95, "section_label_right": 0.9},
        "plain_text_baselines": {
            lib: {
                "sentences_recovered": round(v["found"] / v["sentences"], 4),
                "pages_per_s": round(v["pages"] / v["seconds"], 1),
            }
            for lib, v in baselines.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "fulltext")
    parser.add_argument("--out", type=Path, default=RESULTS / "fulltext_pdf.json")
    args = parser.parse_args()
    pairs = article_pairs(args.data)
    load_before = loadavg()
    articles = []
    pages = 0
    seconds = 0.0
    baselines: dict[str, dict[str, float]] = {
        lib: {"found": 0, "sentences": 0, "pages": 0, "seconds": 0.0}
        for lib in ("pypdf", "pypdfium2-plain")
    }
    for pdf_name, xml_name in pairs:
        xml = parse_jats((args.data / xml_name).read_bytes())
        data = (args.data / pdf_name).read_bytes()
        started = time.perf_counter()
        pdf = parse_pdf(data)
        took = time.perf_counter() - started
        pages += pdf.pages
        seconds += took
        row = {"pdf": pdf_name, "xml": xml_name, "pages": pdf.pages, "seconds": round(took, 3)}
        row.update(compare(xml, pdf))
        articles.append(row)
        keys = [squash(s) for _, s in xml_sentences(xml)]
        keys = [k for k in keys if len(k) >= 20]
        for lib in baselines:
            started = time.perf_counter()
            text, n = plain_text("pypdf" if lib == "pypdf" else "pypdfium2", args.data / pdf_name)
            baselines[lib]["seconds"] += time.perf_counter() - started
            flat = squash(text)
            baselines[lib]["found"] += sum(1 for k in keys if k in flat)
            baselines[lib]["sentences"] += len(keys)
            baselines[lib]["pages"] += n
        log(
            f"{pdf_name}: {row['sentences_recovered']}/{row['xml_sentences']} sentences, "
            f"{row['passages_section_right']}/{row['passages_with_xml_sentences']} sections "
            f"right, similarity {row['char_similarity']}"
        )

    summary = summarize(articles, pages, seconds, baselines)
    out = {
        "command": command(),
        "machine": machine(),
        "load_before": load_before,
        "load_after": loadavg(),
        "summary": summary,
        "articles": articles,
    }
    write_json(args.out, out)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
