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


# JATS that is XML-shaped but wrong: missing or empty parts, deep nesting, huge or odd text
# (NUL, lone surrogates written as invalid UTF-8, markup-like characters), unknown tags.
ODD_TEXT = st.one_of(
    st.text(max_size=40),
    st.just(""),
    st.just("x\x00y"),
    st.just("\ud800 lone"),
    st.just("<b>&amp;</b> & <"),
    st.integers(1, 200_000).map(lambda n: "word " * n),
)


@st.composite
def jats_like(draw: st.DrawFn) -> bytes:
    title = draw(ODD_TEXT)
    depth = draw(st.integers(0, 400))
    body = (
        "".join(
            f"<sec><title>{draw(ODD_TEXT)}</title><p>{draw(ODD_TEXT)}</p>" for _ in range(depth)
        )
        + "</sec>" * depth
    )
    parts = {
        "front": f"<front><article-meta><title-group><article-title>{title}</article-title>"
        f"</title-group><pub-date><year>{draw(ODD_TEXT)}</year></pub-date></article-meta>"
        "</front>",
        "body": f"<body>{body}<{draw(st.sampled_from(['p', 'x-tag', 'table-wrap']))}>"
        f"{draw(ODD_TEXT)}</{'p'}></body>",
        "back": f"<back><ref-list><ref><mixed-citation>{draw(ODD_TEXT)}</mixed-citation>"
        "</ref></ref-list></back>",
    }
    kept = [v for k, v in parts.items() if draw(st.booleans()) or k == "body"]
    text = (
        f'<?xml version="1.0"?><article article-type="research-article">{"".join(kept)}</article>'
    )
    return text.encode("utf-8", "surrogatepass")


@tiered(default=25, nightly=600, data=jats_like())
def test_almost_right_jats_gives_a_paper_or_a_one_line_error(tmp_path: Path, data: bytes) -> None:
    file = tmp_path / "a.nxml"
    file.write_bytes(data)
    check("jats", file)


@tiered(default=3, nightly=100, bad=st.lists(jats_like(), min_size=1, max_size=3))
def test_skip_bad_keeps_the_good_paper_beside_bad_ones(tmp_path: Path, bad: list[bytes]) -> None:
    """A folder of one real article and generated bad ones, ingested with --skip-bad: the
    real article is stored whatever its neighbours are, and a second ingest adds nothing."""
    import shutil
    import tempfile

    from sciera.corpus import PassageStore
    from sciera.corpus.library import ingest_folder

    root = Path(tempfile.mkdtemp(dir=tmp_path))  # one folder per generated example
    folder = root / "papers"
    folder.mkdir()
    shutil.copy(ARTICLES["jats"], folder / "good.nxml")
    for i, data in enumerate(bad):
        (folder / f"bad{i}.nxml").write_bytes(data)
    corpus = root / "corpus"
    ingest_folder(folder, corpus, skip_bad=True)
    with PassageStore.open(corpus) as store:
        first = store.count_documents(), store.count_passages()
        good = [s for s in store.sources() if s.endswith("good.nxml")]
    assert good and first[0] >= 1  # the real article is in, whatever its neighbours
    ingest_folder(folder, corpus, skip_bad=True)
    with PassageStore.open(corpus) as store:
        assert (store.count_documents(), store.count_passages()) == first
