import numpy as np
import pytest

from sciera.rerank.normalize import minmax, normalize, rank_based, zscore


def test_minmax_hand_values():
    assert minmax([2.0, 4.0, 3.0]).tolist() == [0.0, 1.0, 0.5]


def test_zscore_is_normal_cdf_of_standard_score():
    # mean 2, population std sqrt(2/3): z = -1.2247, 0, 1.2247 -> Phi = 0.1103, 0.5, 0.8897
    np.testing.assert_allclose(zscore([1.0, 2.0, 3.0]), [0.110335, 0.5, 0.889665], atol=1e-6)


def test_rank_based_with_ties_sharing_the_best_rank():
    # ranks: 5 -> 1, 3 and 3 -> 2, 1 -> 4; score (n - r + 1) / n with n = 4
    assert rank_based([3.0, 5.0, 3.0, 1.0]).tolist() == [0.75, 1.0, 0.75, 0.25]


@pytest.mark.parametrize("method", ["minmax", "zscore", "rank"])
def test_single_and_constant_lists_do_not_collapse_to_zero(method):
    assert normalize([0.3], method).tolist() == [1.0]
    assert normalize([-2.0, -2.0], method).tolist() == [1.0, 1.0]
    assert normalize([], method).tolist() == []


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown normalization"):
        normalize([1.0], "softmax")
