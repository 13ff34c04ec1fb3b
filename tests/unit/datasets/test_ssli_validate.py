"""Each SSLI rejection rule rejects a crafted bad case and accepts a good one."""

from __future__ import annotations

import pytest

from sciera.datasets.ssli.qa import QAPair, screen_pairs
from sciera.datasets.ssli.validate import (
    answer_key,
    answer_support,
    check_answer_supported,
    check_duplicate,
    check_no_answer,
    check_no_answer_span,
    check_not_duplicate_distractor,
    check_not_meta,
    check_not_near_duplicate,
    check_not_repetitive,
    check_on_topic,
    check_self_contained,
    key_span,
    question_key,
    tokens,
)

PASSAGE = (
    "The mammal collection in the Yale Peabody Museum's Division of Vertebrate Zoology is "
    "used principally for teaching. The 5,086 mammal skins (over 720 species) date from the "
    "19th century."
)
QUESTION = "How many mammal species are represented in the Yale Peabody Museum collection?"
ANSWER = "The collection represents over 720 mammal species."


@pytest.mark.parametrize(
    "question",
    [
        "What did this study find about vitamin D?",
        "According to the passage, what lowers LDL?",
        "What method did the authors use to measure insulin?",
        "What do these results imply for statin therapy?",
    ],
)
def test_self_reference_rejected(question: str) -> None:
    rejection = check_self_contained(question)
    assert rejection is not None and rejection.reason == "self_reference"


def test_self_contained_question_accepted() -> None:
    assert check_self_contained(QUESTION) is None
    # "the results of X" names its subject: not a reference to the source
    assert check_self_contained("What are the results of metformin on HbA1c?") is None


def test_answer_support_share_is_hand_computed() -> None:
    # content words of the answer ("the" and "over" are stopwords): collect, repres, 720,
    # mammal, speci (5 stems); "repres" is not in the passage -> 4/5
    assert answer_support(ANSWER, PASSAGE) == pytest.approx(4 / 5)
    assert check_answer_supported(ANSWER, PASSAGE) is None


def test_unsupported_answer_rejected() -> None:
    rejection = check_answer_supported("Bats dominate the Denver holdings of rodents.", PASSAGE)
    assert rejection is not None and rejection.reason == "answer_unsupported"
    # an answer without content words cannot be supported
    assert check_answer_supported("It is the one.", PASSAGE) is not None


def test_answer_that_restates_the_question_rejected() -> None:
    from sciera.datasets.ssli.validate import check_answer_adds_content

    # seen in a real build with the 1.5B model
    question = (
        "What is the purpose of the randomized controlled trial comparing losartan to a "
        "control group in hypertensive patients on hemodialysis?"
    )
    restated = "A randomized controlled trial comparing losartan to a control group."
    rejection = check_answer_adds_content(question, restated)
    assert rejection is not None and rejection.reason == "answer_in_question"
    answer = "Losartan lowered nighttime short-term blood pressure variability."
    assert check_answer_adds_content(question, answer) is None
    # two questions of the shipped SciFact set (built before reporting words counted):
    # the answers add only "study", "involved", "found"
    cases = [
        (
            "What is the purpose of using bacterial biofilms to stimulate autoimmunity in mice?",
            "The study involved the use of bacterial biofilms to stimulate autoimmunity in mice.",
        ),
        (
            "How does RACK1 bind both the NR2B subunit of the NMDA receptor and Fyn?",
            "We found that RACK1 binds both the NR2B subunit of the NMDA receptor and Fyn.",
        ),
    ]
    for q, a in cases:
        rejection = check_answer_adds_content(q, a)
        assert rejection is not None and rejection.reason == "answer_in_question", (q, a)
    # a reporting word beside a finding is not enough to reject
    found = "We found that RACK1 binds NR2B through its WD40 repeats."
    assert check_answer_adds_content(cases[1][0], found) is None


def test_duplicate_rejected_after_normalization() -> None:
    seen = {question_key(QUESTION)}
    dup = "how many mammal species are represented in the Yale Peabody Museum collection"
    rejection = check_duplicate(dup, seen)
    assert rejection is not None and rejection.reason == "duplicate_question"
    assert check_duplicate("How old are the mammal skins at Yale?", seen) is None


def test_key_span_is_longest_supported_run() -> None:
    assert key_span(ANSWER, PASSAGE) == ("over", "720")
    # a lone common word is no key span; a short answer is its own span
    assert key_span("Teaching is the use.", "used for teaching") == ("teaching", "is", "use")
    assert key_span("glucose", "insulin lowers glucose") == ("glucose",)


def test_key_span_ignores_the_topic_the_question_already_names() -> None:
    # seen in a real build: "of bacterial biofilms" (the question's own topic) was the key
    # span, so every on-topic distractor was rejected as containing the answer
    question = "What is the purpose of using bacterial biofilms to stimulate autoimmunity?"
    answer = "The study used bacterial biofilms and curli-DNA composites in mice."
    source = "Bacterial biofilms formed curli-DNA composites that triggered autoimmunity in mice."
    assert key_span(answer, source) == ("bacterial", "biofilms")  # without the question
    span = key_span(answer, source, question)
    assert span == ("curlidna", "composites")  # SQuAD normalization drops the hyphen
    on_topic = "Bacterial biofilms of gut commensals stimulate autoimmunity in old mice."
    assert check_no_answer_span(on_topic, span) is None
    leak = "Curli-DNA composites are what biofilms use to break tolerance."
    assert check_no_answer_span(leak, span) is not None
    # reporting words ("study", "used") are no answer either
    assert key_span("The study used mice.", "the study used mice", "What used mice?") == ()


def test_key_span_compares_with_the_question_by_stem() -> None:
    # "inhibits" answers nothing when the question asks whether X "inhibited" it
    question = "Which kinase inhibited mTOR signalling in the liver?"
    answer = "AMPK inhibits mTOR signalling."
    source = "In the liver AMPK inhibits mTOR signalling under fasting."
    assert key_span(answer, source, question) == ("ampk", "inhibits", "mtor", "signalling")
    assert key_span("It inhibits mTOR signalling.", source, question) == ()


def test_distractor_containing_answer_span_rejected() -> None:
    span = key_span(ANSWER, PASSAGE)
    bad = "Staff records list over 720 species of mammals in the Yale collection."
    rejection = check_no_answer_span(bad, span)
    assert rejection is not None and rejection.reason == "contains_answer"
    # the paper's Figure 8 distractor mentions 720 but not the answer's span
    good = "Yale's mammal collection species count is often conflated with 720 total species."
    assert check_no_answer_span(good, span) is None


def test_off_topic_distractor_rejected() -> None:
    bad = "Herbarium COLO holds bryophyte specimens collected in Colorado."
    rejection = check_on_topic(bad, QUESTION)
    assert rejection is not None and rejection.reason == "off_topic"
    # a close embedding rescues a lexically distant passage; a far one does not
    assert check_on_topic(bad, QUESTION, cosine=0.5) is None
    assert check_on_topic(bad, QUESTION, cosine=0.1) is not None
    good = "The Yale Peabody Museum's mammal species counts remain under review by curators."
    assert check_on_topic(good, QUESTION) is None


def test_near_duplicate_of_gold_rejected() -> None:
    copy = PASSAGE.replace("principally", "mainly")
    rejection = check_not_near_duplicate(copy, PASSAGE)
    assert rejection is not None and rejection.reason == "near_duplicate_gold"
    different = "Mammal species counts at the Yale Peabody Museum lack precise enumeration."
    assert check_not_near_duplicate(different, PASSAGE) is None
    assert check_not_near_duplicate(different, PASSAGE, cosine=0.97) is not None


def test_screen_pairs_applies_rules_in_order() -> None:
    pairs = [
        QAPair(QUESTION, ANSWER, "result"),
        QAPair("What did the study measure?", "mammal skins", "method"),
        QAPair(QUESTION + " ", ANSWER, "result"),
        QAPair("Which birds nest in the museum?", "Pigeons and crows nest there.", "result"),
    ]
    seen: set[str] = set()
    accepted, rejected = screen_pairs(pairs, PASSAGE, seen)
    assert accepted == [pairs[0]]
    assert [r.reason for _, r in rejected] == [
        "self_reference",
        "duplicate_question",
        "answer_unsupported",
    ]
    assert seen == {question_key(QUESTION)}


# Distractors the 1.5B wrote in a real SciFact build (shortened), and real-looking ones.
META = [
    "The retrieved context discusses the detection of very small embryonic-like stem cells, "
    "but it does not provide any information about the two populations.",
    "The characteristics of the bigger 4-7 um PSCs were not described in the retrieved context.",
    "They were not mentioned in the answer and did not state or imply the gold answer.",
    "The incidence of distal forearm fractures is not relevant to the question about "
    "childhood fractures.",
    "The role of ER-associated peptidase activity in tailoring peptides, which is unrelated "
    "to the question.",
]
SCIENCE = [
    "The curli-DNA composites formed by bacterial biofilms are essential for adhesion to "
    "surfaces. These composites are composed of DNA and curli proteins.",
    "Metformin was not associated with weight gain in 120 patients followed for two years.",
]


@pytest.mark.parametrize("text", META)
def test_meta_text_is_rejected(text):
    rejection = check_not_meta(text)
    assert rejection is not None and rejection.reason == "meta_text"


@pytest.mark.parametrize("text", SCIENCE)
def test_scientific_text_is_not_meta(text):
    assert check_not_meta(text) is None


def test_a_repeated_sentence_is_rejected():
    loop = "Cells were small. They were not studied further. They were not studied further."
    assert check_not_repetitive(loop).reason == "repetitive"
    assert check_not_repetitive(SCIENCE[0]) is None


def test_a_distractor_like_an_accepted_one_is_rejected():
    accepted = [SCIENCE[0]]
    copy = SCIENCE[0].replace("essential", "needed")
    assert check_not_duplicate_distractor(copy, accepted).reason == "duplicate_distractor"
    assert check_not_duplicate_distractor(SCIENCE[1], accepted) is None
    assert check_not_duplicate_distractor(copy, []) is None


# A real SciFact gold passage (shortened), a question and answer the 1.5B generated from it,
# and distractors it wrote: the first two restate the answer with a word changed, which
# whole-span matching let through.
IGF_GOLD = (
    "Loss of IGF-IEa or IGF-IEb impairs myogenic differentiation. To address functions of "
    "IGF-I splice variants, we examined the impact of loss of IGF-IEa and IGF-IEb on cultured "
    "mouse myoblasts. Cells deficient in total IGF-I or IGF-IEa alone proliferated "
    "significantly slower than control cells or cells deficient in IGF-IEb in serum-free "
    "media. Provision of mature IGF-I, but not synthetic E peptides, restored Myh3 expression. "
    "Collectively, these data suggest that IGF-I splice variants may regulate myoblast "
    "differentiation through the actions of mature IGF-I and not the E peptides."
)
IGF_QUESTION = "What is the role of IGF-I splice variants in myoblast differentiation?"
IGF_ANSWER = (
    "These data suggest that IGF-I splice variants may regulate myoblast differentiation "
    "through the actions of mature IGF-I and not the E peptides"
)
IGF_RESTATED = [
    "The study aimed to investigate the role of IGF-I splice variants in myoblast "
    "differentiation. It found that these variants may regulate myoblast differentiation "
    "through the actions of mature IGF-I and not the E peptides.",
    # every answer word, reworded and reordered: no six-token run survives
    "Not the E peptides but the actions of mature IGF-I: through them the data suggest "
    "splice variants regulate how myoblasts differentiate.",
]
IGF_ON_TOPIC = [
    "IGF-I splice variants are expressed at different levels during myoblast differentiation "
    "in aged rats, and their expression declines with denervation of the muscle.",
    "Myoblast differentiation in culture depends on serum withdrawal; we followed myogenin "
    "and MyoD expression over 72 hours in C2C12 cells.",
]


@pytest.mark.parametrize("text", IGF_RESTATED)
def test_a_distractor_restating_a_long_answer_is_rejected(text):
    key = answer_key(IGF_ANSWER, IGF_GOLD, IGF_QUESTION)
    assert check_no_answer_span(text, key.span) is None  # the old, whole-span rule missed it
    rejection = check_no_answer(text, key)
    assert rejection is not None and rejection.reason == "contains_answer"


@pytest.mark.parametrize("text", IGF_ON_TOPIC)
def test_an_on_topic_distractor_that_does_not_answer_passes(text):
    assert check_no_answer(text, answer_key(IGF_ANSWER, IGF_GOLD, IGF_QUESTION)) is None


def test_answer_words_leave_out_the_question_and_the_reporting():
    key = answer_key(IGF_ANSWER, IGF_GOLD, IGF_QUESTION)
    assert {"matur", "peptid", "regul"} <= key.words
    assert not key.words & {"splice", "variant", "myoblast", "differenti", "suggest"}
    short = answer_key(ANSWER, PASSAGE, QUESTION)  # two answer words: both must be there
    assert check_no_answer("Over 720 species were found on the island.", short) is not None
    assert check_no_answer("The collection holds species from 1850.", short) is None


# accepted under the old rules (a share of 0.8, nothing below three answer words) in the
# shipped SciFact set: each states the answer
RESTATED_IN_THE_SHIPPED_SET = [
    (  # one answer word ("facilitates")
        "What role does RAD52 play in promoting mitotic DNA synthesis following replication "
        "stress?",
        "RAD52 facilitates mitotic DNA synthesis following replication stress.",
        "RAD52 Facilitates Mitotic DNA Synthesis Following Replication Stress.\nHomologous "
        "recombination-based repair of DNA breaks in human cells.",
        "RAD52 is a crucial protein involved in DNA repair and replication. It plays a vital "
        "role in promoting mitotic DNA synthesis following replication stress. This is "
        "because RAD52 facilitates the repair of damaged DNA.",
    ),
    (  # one answer word ("29")
        "What percentage of patients with HER2-negative tumors had HER2-positive CTC?",
        "29% of patients with HER2-negative tumors had HER2-positive CTC.",
        "CTC were HER2-positive in 29 of 100 patients whose tumors were HER2-negative.",
        "We found that 29% of patients with HER2-negative tumors had HER2-positive CTC.",
    ),
    (  # eight of eleven answer words (0.73)
        "What is the noncanonical thermogenic mechanism discovered in beige fat?",
        "The study uncovers a noncanonical thermogenic mechanism through which beige fat "
        "controls whole-body energy homeostasis via Ca2+ cycling, which may have implications "
        "for the treatment of obesity and diabetes.",
        "The study uncovers a noncanonical thermogenic mechanism through which beige fat "
        "controls whole-body energy homeostasis via Ca2+ cycling, which may have implications "
        "for the treatment of obesity and diabetes.",
        "The study reveals a novel noncanonical thermogenic mechanism in beige fat, which "
        "regulates whole-body energy homeostasis through Ca2+ cycling. This mechanism may "
        "have therapeutic applications for obesity and diabetes.",
    ),
]


@pytest.mark.parametrize(("question", "answer", "gold", "text"), RESTATED_IN_THE_SHIPPED_SET)
def test_restatements_the_old_share_rule_let_through_are_rejected(question, answer, gold, text):
    rejection = check_no_answer(text, answer_key(answer, gold, question))
    assert rejection is not None and rejection.reason == "contains_answer"


def test_sentences_joined_without_a_space_are_split():
    # SciFact joins an abstract's sentences with no space after the full stop
    gold = "Receptors were found in 60% of receptor-positive tumors.29% of patients with "
    gold += "HER2-negative tumors had HER2-positive CTC.Survival was longer (p = 0.29)."
    words = tokens(gold)
    assert words[7:10] == ["tumors", "29", "of"] and "ctc" in words and "029" in words
    question, answer, _, _ = RESTATED_IN_THE_SHIPPED_SET[1]
    assert key_span(answer, gold, question)[:3] == ("29", "of", "patients")


def test_a_single_answer_word_distractor_without_it_passes():
    question, answer, gold, _ = RESTATED_IN_THE_SHIPPED_SET[0]
    other = (
        "RAD52 loss slows fork restart in S phase; mitotic DNA synthesis following "
        "replication stress was not measured."
    )
    assert check_no_answer(other, answer_key(answer, gold, question)) is None
