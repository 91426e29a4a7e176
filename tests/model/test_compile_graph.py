"""``torch.compile`` sees the network as one graph: nothing in its forward pass reads the
data (the all-padding check runs outside the compiled region)."""

import pytest
import torch


@pytest.mark.slow
@pytest.mark.parametrize("pos_encoding", ["sinusoidal", "alibi"])
def test_the_forward_pass_compiles_without_a_graph_break(make_model, batch, pos_encoding):
    model = make_model(pos_encoding=pos_encoding, dtype=torch.float32).train()
    explained = torch._dynamo.explain(model)(*batch)
    breaks = [reason.reason for reason in explained.break_reasons]
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), breaks
