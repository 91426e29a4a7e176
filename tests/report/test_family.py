"""The lab's Holm adjustment is statsmodels' ``multipletests(method="holm")`` to the last
bit on any family, kept as the lab's own only because statsmodels' collects garbage on
every call (report/family.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from transformer_lab.report.family import holm


@settings(max_examples=20, deadline=None)  # each statsmodels call collects garbage
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_is_statsmodels_on_any_family(p_values):
    assert holm(p_values) == pytest.approx(list(multipletests(p_values, method="holm")[1]))


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4 x 0.005, 3 x 0.01, 2 x 0.03, max(1 x 0.04, 0.06)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # never above 1
    assert holm([]) == []
