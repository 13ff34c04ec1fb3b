"""The full-text readers (JATS XML, PDF) against generated files (Hypothesis).

Arbitrary bytes under their file names, and real articles from ../shared/data/fulltext
truncated or overwritten at generated offsets, give a document or a one-line error naming
the file, never another exception; so does format detection on them.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import strategies as st
from test_corpus_readers_fuzz import assert_document, assert_one_line, read_each

from fuzz_tiers import tiered
from sciera.corpus.readers import READERS, detect_format
from sciera.errors import ScieraError

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "fulltext"
ARTICLES = {"jats": DATA / "elife-22661.xml", "pdf": DATA / "elife-22661.pdf"}
SUFFIX = {"jats": ".nxml", "pdf": ".pdf"}
DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0.0, 0.999)),
    st.tuples(
        st.just("overwrite"),
        st.lists(st.tuples(st.floats(0.0, 0.999), st.binary(min_size=1, max_size=64)), min_size=1),
    ),
)


def damaged(data: bytes, how: tuple) -> bytes:
    out = bytearray(data)
    if how[0] == "truncate":
        del out[int(len(out) * how[1]) :]
    else:
        for where, junk in how[1]:
            at = int(len(out) * where)
            out[at : at + len(junk)] = junk
    return bytes(out)


def check(fmt: str, file: Path) -> None:
    docs, errors = read_each(fmt, file)
    for doc in docs:
        assert_document(doc)
    for err in errors:
        assert_one_line(err, file)
    try:
        assert detect_format(file) in READERS
    except ScieraError as err:
        assert_one_line(err, file)


@tiered(default=30, nightly=1000, data=st.binary(max_size=600), compress=st.booleans())
@pytest.mark.parametrize(
    ("fmt", "name"), [("jats", "a.nxml"), ("jats", "a.nxml.gz"), ("pdf", "a.pdf")]
)
def test_arbitrary_bytes_give_a_paper_or_a_one_line_error(
    tmp_path: Path, fmt: str, name: str, data: bytes, compress: bool
) -> None:
    prefix = b"%PDF-1.7\n" if fmt == "pdf" and compress else b""  # past the header sniff
    file = tmp_path / name
    file.write_bytes(gzip.compress(data) if name.endswith(".gz") and compress else prefix + data)
    check(fmt, file)


@tiered(default=20, nightly=500, how=DAMAGE)
@pytest.mark.parametrize("fmt", ["jats", "pdf"])
def test_a_damaged_real_article_gives_a_paper_or_a_one_line_error(
    tmp_path: Path, fmt: str, how: tuple
) -> None:
    if not ARTICLES[fmt].is_file():
        pytest.fail(f"shared article not found: {ARTICLES[fmt]}")
    file = tmp_path / f"paper{SUFFIX[fmt]}"
    file.write_bytes(damaged(ARTICLES[fmt].read_bytes(), how))
    check(fmt, file)
