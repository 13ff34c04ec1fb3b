"""Rule-based claim negation (hand-written expectations, one per rule)."""

from __future__ import annotations

import pytest

from sciera.verify.negation import negate_claim


@pytest.mark.parametrize(
    ("claim", "negated"),
    [
        # 1. an explicit negation is removed
        ("NR5A2 does not play a role in X.", "NR5A2 does play a role in X."),
        ("CD44v6 is not associated with metastasis.", "CD44v6 is associated with metastasis."),
        ("Statins cannot lower LDL.", "Statins can lower LDL."),
        (
            "Deltex has no known interactions with eIF3f.",
            "Deltex has known interactions with eIF3f.",
        ),
        # 2. a directional word is swapped (case kept, first one only)
        ("Aspirin increases bleeding.", "Aspirin decreases bleeding."),
        (
            "Reduced IL-2 responsiveness is linked to T1D.",
            "Increased IL-2 responsiveness is linked to T1D.",
        ),
        ("Caspase-11 promotes pyroptosis.", "Caspase-11 inhibits pyroptosis."),
        ("Omnivores produce more TMAO than vegans.", "Omnivores produce less TMAO than vegans."),
        # 3. "not" inserted after the first auxiliary, else before a common verb
        ("Migraine is associated with stroke.", "Migraine is not associated with stroke."),
        ("Egr3 regulates B cells.", "Egr3 does not regulate B cells."),
        ("Mitochondria play a major role.", "Mitochondria do not play a major role."),
    ],
)
def test_each_rule(claim, negated):
    assert negate_claim(claim) == negated


def test_negating_twice_returns_the_claim_for_swaps_and_not():
    for claim in ("Aspirin increases bleeding.", "Migraine is associated with stroke."):
        assert negate_claim(negate_claim(claim)) == claim


@pytest.mark.parametrize(
    "claim",
    [
        "BLM gene encodes RecQ-class DNA helicase.",  # no rule fits: no guess
        "",
        "More than half of trials stop early.",  # "more than" is a quantity, not a direction
        "The cause of pain remains unclear.",  # "cause" after an article is a noun
    ],
)
def test_no_rule_no_guess(claim):
    assert negate_claim(claim) is None


def test_conditions_are_not_directions():
    # "high-fat" and "HIV-positive" name the population, not the finding
    assert negate_claim("HIV-positive patients have high-fat diets.") == (
        "HIV-positive patients do not have high-fat diets."
    )
