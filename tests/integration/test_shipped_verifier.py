"""The claim verifier sciera ships (`scifact-verifier`): present, small, carded, trained with
the split discipline, loaded offline by its short name as the default, and measuring on its
dev claims what its card says it measured (the weights, calibrators, inputs and policy the
inference code reads are the ones training scored). Its quality is measured by
`sciera eval run` of benchmarks/experiments/verify_scifact.yaml and verify_pubmedqa.yaml
(docs/benchmarks.md rows), not asserted here."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def shipped():
    from sciera.artifacts.registry import SHIPPED, VERIFIER

    return SHIPPED[VERIFIER]["scifact-verifier"]


@pytest.fixture(scope="module")
def card(shipped):
    return json.loads((shipped / "sciera-card.json").read_text())


@pytest.fixture(scope="module")
def backends():
    from sciera.verify.trained import TrainedSelector, TrainedVerdict

    selector = TrainedSelector()  # the default name, resolved to the shipped folder
    return selector, TrainedVerdict(network=selector.network)


def test_shipped_verifier_files_and_card(shipped, card):
    size = sum(f.stat().st_size for f in shipped.iterdir() if f.is_file())
    assert size <= 50 * 2**20, f"shipped verifier is {size / 2**20:.1f} MB (limit 50)"
    assert card["command"] == "sciera train verifier recipes/scifact-verifier.yaml"
    excluded_sets = card["recipe"]["content"]["data"]["exclude_ssli"]  # the SSLI evaluation set
    assert any("ssli_scifact_100/build" in path for path in excluded_sets)
    excluded = {s["kind"] for s in card["splits"]["excluded"]}
    assert "ssli" in excluded and "qrels" in excluded  # BEIR test claims and SSLI abstracts
    assert card["heads"]["labels"] == ["SUPPORT", "CONTRADICT", "NOT ENOUGH INFO"]
    for name in card["calibrators"].values():
        assert (shipped / name).is_file()
    dev, train = set(card["data"]["dev_ids"]), card["data"]["train_claims"]
    assert dev and train and not dev & set(card["data"]["test_ids"])


def test_the_default_verifier_is_the_shipped_one(shipped, backends):
    from sciera.settings import Settings

    selector, verdict = backends
    assert Settings().verify.model == "scifact-verifier"
    assert selector.network.path.resolve() == shipped.resolve()
    assert verdict.network is selector.network  # one encoder for both heads
    assert selector.network.rationale_calibrator is not None
    assert selector.network.verdict_calibrator is not None


def test_dev_claims_measure_what_the_card_says(card, backends, scifact_dir):
    """The oracle setting (each dev claim's cited abstracts) through the inference code with
    the card's policy gives the card's dev numbers (float16 weights on disk: within 0.03)."""
    from sciera.datasets.claims import read_gold
    from sciera.eval.metrics.scifact import scifact_counts
    from sciera.train.verifier_data import load_abstracts
    from sciera.train.verifier_eval import to_prediction
    from sciera.verify.verifier import VerifyPolicy, verify_abstracts

    selector, verdict = backends
    policy = VerifyPolicy.from_card(card)
    abstracts = load_abstracts(scifact_dir / "corpus_sentences.jsonl")
    claims = {c.id: c for c in read_gold(scifact_dir / "claims_train.jsonl")}
    dev = [claims[i] for i in card["data"]["dev_ids"]]
    preds = []
    for c in dev:
        docs = [d for d in dict.fromkeys([*c.evidence, *c.cited_doc_ids]) if d in abstracts]
        result = verify_abstracts(c.claim, [abstracts[d] for d in docs], selector, verdict, policy)
        preds.append(to_prediction(c.id, result))
        for v in result.verdicts:  # rationales are verbatim sentences at their indices
            for r in v.rationales:
                assert abstracts[v.doc_id].sentences[r.index] == r.text
    measured = scifact_counts(dev, preds).metrics()
    expected = card["dev"]["oracle"]
    for key in ("abstract_label_only_f1", "sentence_selection_f1", "sentence_label_f1"):
        assert measured[key] == pytest.approx(expected[key], abs=0.03), key


def test_the_llm_combiners_ship_and_lean_on_the_llm(shipped, card):
    """The combined verdict loads the folder's combiners offline by the default name, fitted
    on training claims and questions only; an LLM sure of "contradict" (or "no") turns the
    decision, and one sure of "support" keeps it."""
    from fakes import ScriptedLLM
    from sciera.settings import Settings
    from sciera.verify.base import VerdictInput
    from sciera.verify.llm_verdict import COMBINER_FILES, CombinedVerdict
    from sciera.verify.registry import make_verdict
    from sciera.verify.verifier import VerifyPolicy

    assert card["policy"]["min_relevance"] == 0.5  # fixed, not chosen on dev
    section = card["combiner"]
    assert "never dev" in section["fitted_on"] and section["llm"]
    for kind, file in COMBINER_FILES.items():
        assert (shipped / file).is_file() and section[kind]["rows"]
    evidence = ("Aspirin lowered the incidence of colorectal adenomas by 21%.",)
    claim = "Aspirin reduces the risk of colorectal adenomas."
    negated = "Aspirin increases the risk of colorectal adenomas."  # what the rules give
    reads = section["claim"].get("inputs", ["trained", "llm"])
    decisions = {}
    for word, other in (("support", "contradict"), ("contradict", "support")):
        llm = ScriptedLLM()  # sure of `word` for the claim, of `other` for its negation
        llm.on(
            f"Claim: {claim}",
            probs={"support": 0.02, "contradict": 0.02, "neither": 0.02, word: 0.96},
        )
        llm.on(
            f"Claim: {negated}",
            probs={"support": 0.02, "contradict": 0.02, "neither": 0.02, other: 0.96},
        )
        verdict = make_verdict("combined", Settings(), llm=llm)
        assert isinstance(verdict, CombinedVerdict)
        assert list(verdict.combiners["claim"].inputs) == reads
        (p,) = verdict.predict_many(claim, [VerdictInput(evidence)])
        asked = 1 + ("llm_negated" in reads)  # the claim, and its negation when read
        assert sum(p) == pytest.approx(1.0) and len(llm.calls_to("choice_logprobs")) == asked
        decisions[word] = max(range(2), key=lambda i: p[i])
    assert decisions == {"support": 0, "contradict": 1}
    q = ScriptedLLM(default_probs={"no": 0.96, "yes": 0.02, "maybe": 0.02})
    (p,) = make_verdict("combined", Settings(), llm=q).predict_many(
        "Does aspirin reduce colorectal adenomas?", [VerdictInput(evidence)]
    )
    assert p[1] > p[0]  # the question's combiner, asked yes / no / maybe
    # the combined verdict decides behind its own gate, chosen on dev with a CV estimate
    own = VerifyPolicy.from_card(verdict.card)
    assert own.relevance_weight == section["policy"]["relevance_weight"] < 1.0
    assert own.min_rationale == card["policy"]["min_rationale"]  # the selector's part kept
    search = section["policy_search"]
    assert search["cross_validated"]["folds"] == 5 and len(search["cross_validated"]["picked"]) == 5
    # its cited sentences: min_cited chosen after the gate, against citing what is read
    assert own.min_cited == section["policy"]["min_cited"] is not None
    cite = {t["min_cited"]: t for t in search["cite_trials"]}
    assert None in cite and cite[own.min_cited]["scifact_mean_f1"] >= cite[None]["scifact_mean_f1"]
    # and the trained verdict's, chosen after its policy
    mine = {t["min_cited"]: t for t in card["dev"]["cite_trials"]}
    chosen = mine[card["policy"]["min_cited"]]["scifact_mean_f1"]
    assert chosen >= mine[None]["scifact_mean_f1"]


def test_the_shipped_verifier_quotes_by_its_citer(shipped, card, backends, scifact_dir):
    """The shipped folder carries a citer (adapters and calibrator, loaded by the default
    name), its `combined` policy's `min_quoted` was chosen on dev against quoting as without
    it, and a claim's decided abstracts quote the citer's best sentences, verbatim, while the
    verdict reads what the rationale head picks."""
    from dataclasses import replace

    from sciera.datasets.claims import read_gold
    from sciera.train.verifier_data import load_abstracts
    from sciera.verify.base import CitingSelector
    from sciera.verify.verifier import VerifyPolicy, quoted, read_and_cite, verify_abstracts

    selector, verdict = backends
    section = card["citer"]
    files = section["adapters"]
    files = [files] if isinstance(files, str) else files
    assert (
        all((shipped / f).is_file() for f in files) and (shipped / section["calibrator"]).is_file()
    )
    assert isinstance(selector, CitingSelector) and selector.network.citer is not None
    assert len(selector.network.citer.models) == len(files)  # one classifier per member
    assert selector.network.citer.calibrator is not None
    combined = card["combiner"]["policy"]
    trials = {t["min_quoted"]: t for t in card["combiner"]["policy_search"]["quote_trials"]}
    assert combined["min_quoted"] is not None and None in trials
    assert trials[combined["min_quoted"]]["sentence_label_f1"] >= trials[None]["sentence_label_f1"]
    policy = VerifyPolicy.from_card(card, min_quoted=combined["min_quoted"])
    abstracts = load_abstracts(scifact_dir / "corpus_sentences.jsonl")
    claims = {c.id: c for c in read_gold(scifact_dir / "claims_train.jsonl")}
    decided = differ = 0
    for cid in card["data"]["dev_ids"][:20]:
        c = claims[cid]
        items = [abstracts[d] for d in c.evidence if d in abstracts]
        result = verify_abstracts(c.claim, items, selector, verdict, policy)
        heads = selector.score_many(c.claim, items)
        cites = selector.cite_many(c.claim, items)
        for item, v, head, cite in zip(items, result.verdicts, heads, cites, strict=True):
            if v.label == "NOT ENOUGH INFO":
                continue
            decided += 1
            shown = [r.index for r in v.rationales]
            assert shown == quoted(cite, policy)
            assert [r.text for r in v.rationales] == [item.sentences[i] for i in shown]
            differ += shown != read_and_cite(head, replace(policy, min_quoted=None))[1]
    assert decided >= 5 and differ >= 1  # the citer, not the head, chose what is quoted
