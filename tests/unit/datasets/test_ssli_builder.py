"""The builder end to end on a tiny corpus with a scripted LLM: output, stats, resume.

The LLM stand-in answers by prompt content (each document names its own compound), so a
crashed-and-resumed build must produce the same instances as an uninterrupted one.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from fakes import ScriptedLLM
from sciera.corpus import ingest
from sciera.datasets.ssli.builder import BuildTask, SSLIBuilder, _BuildWorker
from sciera.datasets.ssli.config import BuildConfig
from sciera.datasets.ssli.io import load_ssli
from sciera.datasets.ssli.questions import question_id
from sciera.errors import ScieraError
from sciera.executor import LocalExecutor
from sciera.retrieve import build_indexes, open_retriever
from sciera.settings import load_settings

N_DOCS = 10


class HashEmbedder:
    """Bag of words hashed into 4096 dims (a deterministic stand-in, not under test)."""

    name = "hash"
    dim = 4096

    def _embed(self, texts) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def embed_queries(self, texts):
        return self._embed(texts)

    def embed_passages(self, texts, progress=None):
        return self._embed(texts)


def _doc(i: int) -> dict:
    topic = "glucose uptake in muscle cells" if i % 2 else "bone mineral density in women"
    return {
        "_id": f"d{i}",
        "title": f"Compound{i} and {topic}",
        "text": f"We treated samples with compound{i}. Compound{i} increased {topic} by {10 + i} "
        f"percent in a randomized trial. These findings suggest compound{i} targets {topic}.",
    }


def _llm(
    crash_after: int | None = None,
    repair: bool = False,
    vague: bool = False,
    model_id: str = "scripted:test",
) -> ScriptedLLM:
    """``repair``: the question-repair call names the subject (else it points at "this
    study" again, and the pair stays rejected). ``vague``: each passage's second question
    names no subject ("What was the result of the randomized trial?": every abstract
    reports one) instead of pointing at "this study"."""
    llm = ScriptedLLM(model_id=model_id)
    if crash_after is not None:
        llm.on(lambda _: len(llm.calls) > crash_after, raises=RuntimeError("killed"))
    llm.on(
        "You are a Reader Agent",
        {"method": "trial", "result": "increase", "significance": "target"},
    )
    for i in range(N_DOCS):
        topic = _doc(i)["text"].split("increased ")[1].split(" by")[0]
        pairs = [
            {
                "question": f"By how much did compound{i} change {topic}?",
                "answer": f"Compound{i} increased {topic} by {10 + i} percent.",
                "type": "result",
            },
            {"question": "What did this study test?", "answer": f"compound{i}", "type": "method"},
        ]
        if vague:
            pairs[1] = {
                "question": "What was the result of the randomized trial?",
                "answer": f"Compound{i} increased {topic} by {10 + i} percent.",
                "type": "result",
            }
        llm.on(lambda p, i=i: "Question Generator" in p and f"compound{i}." in p, {"pairs": pairs})
        if repair:
            llm.on(
                lambda p, i=i: "exam questions" in p and f"Compound{i} and" in p,
                f"Which compound raised {topic} by {10 + i} percent?",
            )
    llm.on("exam questions", "What did this study test?")
    guidance = [
        {"DocID": 1, "TargetType": "misleading", "MainIdea": "m", "AnswerAvoidance": "a"},
        {"DocID": 2, "TargetType": "background", "MainIdea": "b", "AnswerAvoidance": "a"},
    ]
    llm.on("design distractor passages", {"guidance": guidance})
    llm.on(
        lambda p: "write one distractor" in p and "TargetType: misleading" in p,
        {
            "passage": "Compound dosing alters glucose uptake in muscle cells "
            "and bone mineral density in women."
        },
    )
    llm.on(
        "write one distractor",
        {"passage": "Herbarium specimens from Colorado were digitized last year."},
    )
    return llm


def make_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N_DOCS abstracts written as BEIR, ingested and BM25-indexed (shared with the SSLI
    evaluation tests)."""
    src = tmp_path_factory.mktemp("src")
    with (src / "corpus.jsonl").open("w") as f:
        for i in range(N_DOCS):
            f.write(json.dumps(_doc(i)) + "\n")
    corpus = tmp_path_factory.mktemp("corpus")
    ingest(src, corpus, format="beir")
    build_indexes(corpus, load_settings(), which=("bm25",))
    return corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory)


CONFIG = BuildConfig(
    n_docs=4,
    pool=None,
    cluster_size=5,
    min_cluster=2,
    total=5,
    n_distractors=2,
    retriever="bm25",
    seed=3,
)


def _builder(
    corpus: Path,
    out: Path,
    llm: ScriptedLLM,
    config: BuildConfig = CONFIG,
    executor: LocalExecutor | None = None,
) -> SSLIBuilder:
    settings = load_settings()
    retriever = open_retriever(corpus, "bm25", settings)
    return SSLIBuilder(
        corpus,
        out,
        config,
        settings=settings,
        llm=llm,
        retriever=retriever,
        embedder=HashEmbedder(),
        executor=executor,
    )


def _build(corpus: Path, out: Path, llm: ScriptedLLM, config: BuildConfig = CONFIG) -> dict:
    return _builder(corpus, out, llm, config).run()


def _sharded_build(
    corpus: Path,
    out: Path,
    llm: ScriptedLLM,
    monkeypatch: pytest.MonkeyPatch,
    *,
    worker_llm: ScriptedLLM | None = None,
    shard_size: int = 1,
) -> dict:
    """The build with its questions and contexts made in shards by an executor's worker
    (the path ``--ray`` takes, here on a :class:`LocalExecutor`); the worker's own builder
    holds ``worker_llm`` (default: the same scripted LLM)."""

    def setup(task: BuildTask, threads: int | None) -> _BuildWorker:
        return _BuildWorker(_builder(Path(task.corpus), Path(task.out), worker_llm or llm))

    monkeypatch.setattr(BuildTask, "setup", setup)
    return _builder(corpus, out, llm, executor=LocalExecutor(shard_size)).run()


def _log_lines(path: Path) -> list[dict]:
    rows = [{**json.loads(line), "seconds": 0} for line in path.read_text().splitlines()]
    return sorted(rows, key=lambda r: r.get("passage_id") or r.get("qid") or "")


def _without_timings(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["provenance"].pop("timings")
    return rows


def test_build_output_and_stats(corpus: Path, tmp_path: Path) -> None:
    stats = _build(corpus, tmp_path, _llm())
    instances = load_ssli(tmp_path)
    assert stats["questions"] == 4 and stats["instances"] == {"base": 4, "ssli": 4}
    assert stats["qa"]["rejected"] == {"self_reference": 4}
    # misleading distractor accepted; the herbarium one is off topic, twice (one retry)
    assert stats["contexts"]["distractors_rejected"] == {"off_topic": 8}
    assert stats["contexts"]["distractors_accepted"] == {"misleading": 4}
    for inst in instances:
        assert len(inst.candidates) == 5
        ids = [c.passage_id for c in inst.candidates]
        assert set(inst.gold_passage_ids) <= set(ids) and len(set(ids)) == 5
        assert inst.provenance["model"] == "scripted:test"
        assert inst.provenance["prompts"] == {
            "ssli_extract": "3",
            "ssli_qa": "3",
            "ssli_qa_repair": "1",
        }
        if inst.setting == "ssli":
            qid = inst.id.rsplit("/", 1)[0]
            assert ids[-1] == f"ssli:{qid}:1" and inst.candidates[-1].is_distractor
        else:
            assert not any(c.is_distractor for c in inst.candidates)
    assert len({i.id for i in instances}) == 8


def test_self_referencing_question_repaired_from_its_answer(corpus: Path, tmp_path: Path) -> None:
    stats = _build(corpus, tmp_path, _llm(repair=True))
    assert stats["qa"]["rejected"] == {}
    assert stats["qa"]["repair_attempts"] == 4 and stats["qa"]["repaired"] == 4
    assert stats["questions"] == 8
    records = [json.loads(line) for line in (tmp_path / "qa.jsonl").read_text().splitlines()]
    for rec in records:
        fixed = [p for p in rec["accepted"] if "repaired_from" in p]
        assert len(fixed) == 1 and fixed[0]["repaired_from"] == "What did this study test?"
        assert fixed[0]["question"].startswith("Which compound raised")
        assert fixed[0]["answer"] == rec["passage_id"].split("#")[0].replace("d", "compound")


def test_failed_repair_keeps_the_rejection(corpus: Path, tmp_path: Path) -> None:
    stats = _build(corpus, tmp_path, _llm())
    assert stats["qa"]["repair_attempts"] == 4 and stats["qa"]["repaired"] == 0
    records = [json.loads(line) for line in (tmp_path / "qa.jsonl").read_text().splitlines()]
    for rec in records:
        assert rec["repaired"] == [
            {
                "from": "What did this study test?",
                "question": "What did this study test?",
                "accepted": False,
                "reason": "self_reference",
            }
        ]


def test_question_naming_no_subject_rejected_or_repaired(corpus: Path, tmp_path: Path) -> None:
    stats = _build(corpus, tmp_path / "plain", _llm(vague=True))
    # "randomized trial": all 10 abstracts > max(5, 0.005 * 10); the repair names "this
    # study" again, so the pair stays rejected
    assert stats["qa"]["rejected"] == {"underspecified": 4} and stats["questions"] == 4
    spec = json.loads((tmp_path / "plain" / "specificity.json").read_text())
    assert (spec["specific"], spec["underspecified"], spec["corpus_documents"]) == (4, 0, 10)

    stats = _build(corpus, tmp_path / "repaired", _llm(vague=True, repair=True))
    assert stats["qa"]["rejected"] == {} and stats["qa"]["repaired"] == 4
    assert stats["questions"] == 8

    config = BuildConfig(**{**CONFIG.to_dict(), "max_topic_share": None})
    stats = _build(corpus, tmp_path / "off", _llm(vague=True), config)
    # without the rule the vague question is kept once (later passages repeat it), and no
    # index is built for specificity.json
    assert stats["qa"]["rejected"] == {} and stats["questions"] == 5
    assert not (tmp_path / "off" / "specificity.json").exists()


def test_repair_can_be_switched_off(corpus: Path, tmp_path: Path) -> None:
    llm = _llm()
    config = BuildConfig(**{**CONFIG.to_dict(), "repair_questions": False})
    stats = _build(corpus, tmp_path, llm, config)
    assert stats["qa"]["repair_attempts"] == 0
    assert not [c for c in llm.calls if "exam questions" in str(c.messages)]


def test_resume_after_crash_matches_clean_build(corpus: Path, tmp_path: Path) -> None:
    clean_llm = _llm()
    _build(corpus, tmp_path / "clean", clean_llm)
    crashing = _llm(crash_after=13)
    with pytest.raises(RuntimeError, match="killed"):
        _build(corpus, tmp_path / "resumed", crashing)
    resumed_llm = _llm()
    _build(corpus, tmp_path / "resumed", resumed_llm)
    # calls 1-12 (4 extractions, 4 QA, 4 question repairs) were logged; call 13 (a
    # question's guidance) was in flight with its distractors when call 14 crashed, so
    # only that question is redone
    assert len(resumed_llm.calls) == len(clean_llm.calls) - 12
    clean = _without_timings(tmp_path / "clean" / "instances.jsonl")
    resumed = _without_timings(tmp_path / "resumed" / "instances.jsonl")
    assert resumed == clean
    # a third run changes nothing and calls nothing
    again = _llm()
    _build(corpus, tmp_path / "resumed", again)
    assert again.calls == []
    assert _without_timings(tmp_path / "resumed" / "instances.jsonl") == clean


def test_resume_makes_again_a_question_whose_logged_distractor_fails_current_rules(
    corpus: Path, tmp_path: Path
) -> None:
    _build(corpus, tmp_path, _llm())
    clean = _without_timings(tmp_path / "instances.jsonl")
    log = tmp_path / "contexts.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # as if an older, looser rule had accepted a distractor restating the gold answer
    ssli = next(i for i in records[1]["instances"] if i["setting"] == "ssli")
    leak = next(c for c in ssli["candidates"] if c["is_distractor"])
    leak["text"] = f"In mice, {ssli['answer']}"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))

    llm = _llm()
    stats = _build(corpus, tmp_path, llm)
    # only that question is made again: one guidance call, then its distractors
    guidance = [c for c in llm.calls if "design distractor passages" in c.prompt]
    assert len(guidance) == 1 and llm.calls[0] is guidance[0]
    assert all("distractor" in c.prompt for c in llm.calls)
    assert _without_timings(tmp_path / "instances.jsonl") == clean  # no duplicate, no leak
    assert len(log.read_text().splitlines()) == len(records) + 1  # the old line is kept
    assert stats["contexts"]["made_again_after_rule_change"] == 1
    again = _llm()
    _build(corpus, tmp_path, again)
    assert again.calls == []


def test_resume_leaves_out_a_checkpointed_question_the_current_rules_reject(
    corpus: Path, tmp_path: Path
) -> None:
    _build(corpus, tmp_path, _llm())
    log = tmp_path / "qa.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # as if an older, looser rule had accepted an answer that only restates its question
    pair = records[0]["accepted"][0]
    pair["answer"] = "The study found that " + pair["question"].rstrip("?")
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    qid = question_id(records[0]["passage_id"], 1)
    assert any(i.id.startswith(f"{qid}/") for i in load_ssli(tmp_path))

    llm = _llm()
    stats = _build(corpus, tmp_path, llm)
    assert llm.calls == []  # nothing to write again: the question is only left out
    assert stats["qa"]["dropped_after_rule_change"] == [
        {"qid": qid, "reason": "answer_in_question"}
    ]
    assert stats["questions"] == 3 and stats["instances"] == {"base": 3, "ssli": 3}
    assert not any(i.id.startswith(f"{qid}/") for i in load_ssli(tmp_path))


def test_other_options_refused_on_resume(corpus: Path, tmp_path: Path) -> None:
    _build(corpus, tmp_path, _llm(), BuildConfig(**{**CONFIG.to_dict(), "settings": ("base",)}))
    with pytest.raises(ScieraError, match="other options"):
        _build(corpus, tmp_path, _llm())


def test_lmqg_mode_skips_extraction(corpus: Path, tmp_path: Path) -> None:
    llm = _llm()
    llm.on(
        "answer-aware question generation",
        {
            "pairs": [
                {
                    "question": "What did compound1 increase in muscle cells?",
                    "answer": "glucose uptake",
                    "type": "factoid",
                }
            ]
        },
    )
    config = BuildConfig(**{**CONFIG.to_dict(), "mode": "lmqg", "settings": ("base",)})
    stats = _build(corpus, tmp_path, llm, config)
    assert not any("You are a Reader Agent" in c.prompt for c in llm.calls)
    # the same pair for every doc: supported by the first glucose doc, a duplicate for the
    # second (accepted there, left out when the questions are put together in order),
    # unsupported by the two bone-density docs
    assert stats["instances"] == {"base": 1}
    assert stats["qa"]["rejected"] == {"answer_unsupported": 2}
    assert stats["qa"]["duplicates_of_earlier_passages"] == 1


def test_excluded_abstracts_are_never_a_source(corpus: Path, tmp_path: Path) -> None:
    first = tmp_path / "eval"
    _build(corpus, first, _llm(repair=True))
    eval_docs = {i.gold_passage_ids[0].split("#")[0] for i in load_ssli(first)}
    assert len(eval_docs) == 4
    judged, unjudged = sorted({f"d{i}" for i in range(N_DOCS)} - eval_docs)[:2]
    qrels = tmp_path / "test.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\nq1\t{judged}\t1\nq2\t{unjudged}\t0\n")
    config = BuildConfig(
        **{**CONFIG.to_dict(), "exclude_ssli": (str(first),), "exclude_qrels": (str(qrels),)}
    )
    train = tmp_path / "train"
    _build(corpus, train, _llm(repair=True), config)
    selection = json.loads((train / "selection.json").read_text())
    picked = {item["doc_id"] for item in selection["items"]}
    assert len(picked) == 4 and not picked & (eval_docs | {judged})
    assert selection["counts"]["excluded_docs"] == 5  # a grade of 0 is not relevant
    train_docs = {i.gold_passage_ids[0].split("#")[0] for i in load_ssli(train)}
    assert train_docs and not train_docs & eval_docs
    # the exclusions are build options: a resume without them is refused
    with pytest.raises(ScieraError, match="exclude_qrels, exclude_ssli"):
        _build(corpus, train, _llm(repair=True))


@pytest.mark.parametrize("shard_size", [1, 3])
def test_a_sharded_build_writes_the_single_process_build(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shard_size: int
) -> None:
    clean = _build(corpus, tmp_path / "clean", _llm(repair=True))
    llm = _llm(repair=True)
    sharded = _sharded_build(corpus, tmp_path / "sharded", llm, monkeypatch, shard_size=shard_size)
    assert sharded["questions"] == clean["questions"] == 8
    assert sharded["qa"] == {**clean["qa"], "mean_seconds": sharded["qa"]["mean_seconds"]}
    for name in ("extract.jsonl", "qa.jsonl"):
        assert _log_lines(tmp_path / "sharded" / name) == _log_lines(tmp_path / "clean" / name)
    assert _without_timings(tmp_path / "sharded" / "instances.jsonl") == _without_timings(
        tmp_path / "clean" / "instances.jsonl"
    )


def test_a_lost_context_line_is_made_again_by_the_workers_and_only_it(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "sharded"
    first = _sharded_build(corpus, out, _llm(), monkeypatch)
    clean = _without_timings(out / "instances.jsonl")
    log = out / "contexts.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("".join(line + "\n" for line in lines[:-1]))  # died before the last line

    llm = _llm()
    again = _sharded_build(corpus, out, llm, monkeypatch)
    # one question's guidance, then its distractors; no question made again
    guidance = [c for c in llm.calls if "design distractor passages" in c.prompt]
    assert len(guidance) == 1 and all("distractor" in c.prompt for c in llm.calls)
    assert len(log.read_text().splitlines()) == len(lines)
    assert again["questions"] == first["questions"]
    assert _without_timings(out / "instances.jsonl") == clean


def test_a_worker_with_another_llm_is_refused_before_its_lines_are_kept(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = _llm(model_id="scripted:other")
    with pytest.raises(ScieraError, match=r"a worker's LLM \(scripted:other\) differs"):
        _sharded_build(corpus, tmp_path, _llm(), monkeypatch, worker_llm=other)
    for name in ("extract.jsonl", "qa.jsonl"):
        assert not (tmp_path / name).exists() or not (tmp_path / name).read_text()
