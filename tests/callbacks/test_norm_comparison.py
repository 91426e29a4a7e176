"""The twin comparison at initialisation reproduces Xiong et al. (2020) and Liu et al. (2020),
and measures without touching the run."""

import json
import logging
from types import SimpleNamespace

import pytest
import torch

from transformer_lab.callbacks.norm_comparison import (
    NormComparison,
    estimated_gflop,
    examples_within,
    measure_twins,
    split_batch,
    twin_kwargs,
)
from transformer_lab.callbacks.stacks import STACKS
from transformer_lab.data.datamodule import SyntheticDataModule
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.admin import profile_admin
from transformer_lab.model.residual import NORM_PLACEMENTS
from transformer_lab.training.loss import token_nll

DATA = SyntheticDataModule(train_size=300, val_size=10, test_size=10, seed=0)
BATCHES = split_batch(DATA.sample("train", 128), 4)  # 4 batches of 32


def model(layers: int, **overrides) -> dict:
    kwargs = dict(
        src_vocab_size=16,
        tgt_vocab_size=16,
        d_model=64,
        num_heads=4,
        num_encoder_layers=layers,
        num_decoder_layers=layers,
        d_ff=256,
        dropout=0.0,
        max_len=32,
        init_seed=0,
    )
    return {**kwargs, **overrides}


@pytest.fixture(scope="module")
def deep() -> dict:
    """Every placement of a 6+6-layer model at init, the gradient expected over 4 batches."""
    return measure_twins(model(6), NORM_PLACEMENTS, BATCHES, 0.01)


def test_post_norm_last_layer_ffn_gradients_exceed_pre_norm_ones_at_init(deep):
    grads = deep["grad_norm"]
    for stack in STACKS:
        for matrix in ("ffn.w1", "ffn.w2"):
            assert grads["post"][stack][matrix][-1] > 1.5 * grads["pre"][stack][matrix][-1]


def test_post_norm_decoder_gradients_grow_toward_the_output_and_pre_norm_ones_do_not(deep):
    post = deep["grad_norm"]["post"]["decoder"]["ffn.w2"]  # [layer 0 .. 5]
    pre = deep["grad_norm"]["pre"]["decoder"]["ffn.w2"]
    assert post[-1] > 3 * post[0]
    assert pre[-1] < 1.2 * pre[0]


def test_every_placement_has_a_finite_gradient_norm_for_every_layer_and_matrix(deep):
    for placement in NORM_PLACEMENTS:
        by_stack = deep["grad_norm"][placement]
        assert set(by_stack["encoder"]) == {"ffn.w1", "ffn.w2", "self_attn"}
        assert set(by_stack["decoder"]) == {"ffn.w1", "ffn.w2", "self_attn", "cross_attn"}
        for by_group in by_stack.values():
            for values in by_group.values():
                assert len(values) == 6
                assert all(0 < v < float("inf") for v in values)


def test_output_change_under_weight_noise_is_larger_for_post_norm_and_grows_with_depth(deep):
    shallow = measure_twins(model(2), ["post", "pre"], BATCHES, 0.01)
    change = deep["output_change"]
    assert change["post"] > 1.3 * change["pre"]
    assert change["post"] > 1.3 * shallow["output_change"]["post"]


def test_admins_twin_is_measured_profiled_as_a_run_starts_it_not_as_post_norm(deep):
    admin, post = deep["grad_norm"]["admin"], deep["grad_norm"]["post"]
    assert admin["decoder"]["ffn.w2"] != pytest.approx(post["decoder"]["ffn.w2"], rel=1e-3)
    twin = Seq2SeqTransformer(**twin_kwargs(model(6), "admin")).eval()
    profile_admin(twin, BATCHES[0]["src"], BATCHES[0]["tgt_in"])  # by hand, on the first batch
    for batch in BATCHES:
        loss = token_nll(twin(batch["src"], batch["tgt_in"]), batch["tgt_out"]) / len(BATCHES)
        loss.backward()
    by_hand = twin.decoder_layers[-1].ffn.w2.weight.grad.norm().item()
    assert admin["decoder"]["ffn.w2"][-1] == pytest.approx(by_hand, rel=1e-5)


def test_the_gradient_is_the_mean_of_the_batches_gradients_not_one_batchs():
    kwargs = model(2)
    one = [measure_twins(kwargs, ["post"], [b], 0)["grad_norm"]["post"] for b in BATCHES[:2]]
    both = measure_twins(kwargs, ["post"], BATCHES[:2], 0)["grad_norm"]["post"]
    twin = Seq2SeqTransformer(**twin_kwargs(kwargs, "post")).eval()
    for batch in BATCHES[:2]:  # by hand: (g1 + g2) / 2 of the last decoder W2
        loss = token_nll(twin(batch["src"], batch["tgt_in"]), batch["tgt_out"]) / 2
        loss.backward()
    by_hand = twin.decoder_layers[-1].ffn.w2.weight.grad.norm().item()
    assert both["decoder"]["ffn.w2"][-1] == pytest.approx(by_hand, rel=1e-5)
    singles = [g["decoder"]["ffn.w2"][-1] for g in one]
    assert both["decoder"]["ffn.w2"][-1] != pytest.approx(singles[0], rel=1e-3)
    assert both["decoder"]["ffn.w2"][-1] <= (singles[0] + singles[1]) / 2 + 1e-9  # |mean| <= mean||


def test_split_batch_keeps_every_example_in_order():
    parts = split_batch(DATA.sample("train", 10), 3)
    assert [len(p["src"]) for p in parts] == [4, 3, 3]
    assert torch.equal(torch.cat([p["src"] for p in parts]), DATA.sample("train", 10)["src"])


def test_the_comparison_leaves_the_run_weights_and_the_global_rng_untouched(tmp_path, lab_module):
    module = lab_module(**model(2, d_model=32, d_ff=64, num_heads=2))
    trainer = SimpleNamespace(
        fast_dev_run=False, datamodule=DATA, default_root_dir=tmp_path, loggers=[]
    )
    weights = {k: v.clone() for k, v in module.state_dict().items()}
    rng = torch.get_rng_state()
    NormComparison(batch_size=8).on_fit_start(trainer, module)
    assert torch.equal(torch.get_rng_state(), rng)
    assert all(torch.equal(v, weights[k]) for k, v in module.state_dict().items())
    assert (tmp_path / "norm_comparison.json").is_file()
    assert (tmp_path / "norm_comparison.png").is_file()


def test_unknown_placements_are_rejected_with_the_allowed_ones():
    with pytest.raises(ValueError, match=f"allowed: {', '.join(NORM_PLACEMENTS)}"):
        NormComparison(placements=["post", "middle"])


def test_the_twins_are_the_runs_network_but_for_the_placement(tmp_path, lab_module):
    """Built from the run's network config: its FFN (``model.ffn``) and norm type too."""
    module = lab_module(**model(1, d_model=16, d_ff=32, num_heads=2, ffn="swiglu"))
    trainer = SimpleNamespace(
        fast_dev_run=False, datamodule=DATA, default_root_dir=tmp_path, loggers=[]
    )
    NormComparison(placements=["pre"], batch_size=8, batches=1).on_fit_start(trainer, module)
    record = json.loads((tmp_path / "norm_comparison.json").read_text())
    assert record["model"] == module.model.config.keywords()
    assert record["model"]["activation"] == "swiglu"


def test_the_examples_measured_are_the_first_within_the_work_budget():
    batch = {"src": torch.tensor([[5, 2, 0], [5, 5, 2]]), "tgt_in": torch.tensor([[1, 5], [1, 5]])}
    # tokens: 2 + 2, then 3 + 2; 2 placements of a 1e6-parameter model: 0.048, then 0.108 GFLOP
    assert estimated_gflop(1_000_000, 4) == pytest.approx(0.024)
    assert examples_within(batch, 1_000_000, 2, max_gflop=0.1) == 1
    assert examples_within(batch, 1_000_000, 2, max_gflop=0.108) == 2
    assert examples_within(batch, 1_000_000, 2, max_gflop=0.01) == 1  # always one
    assert examples_within(batch, 1_000_000, 2, max_gflop=None) == 2


def test_the_main_jobs_model_measures_every_example_within_the_default_budget(tmp_path, lab_module):
    module = lab_module(**model(2))  # the main job's network: d_model 64, 2+2 layers
    trainer = SimpleNamespace(
        fast_dev_run=False, datamodule=DATA, default_root_dir=tmp_path, loggers=[]
    )
    NormComparison(placements=["post", "pre"], batch_size=64, batches=4).on_fit_start(
        trainer, module
    )
    record = json.loads((tmp_path / "norm_comparison.json").read_text())
    assert (record["examples"], record["batches"], record["batch_size"]) == (256, 4, 64)
    assert 0 < record["gflop"] < record["max_gflop"] == 100


def test_a_model_too_large_for_the_budget_measures_fewer_examples_and_says_so(
    tmp_path, lab_module, caplog
):
    module = lab_module(**model(2))
    parameters = sum(p.numel() for p in module.model.parameters())
    trainer = SimpleNamespace(
        fast_dev_run=False, datamodule=DATA, default_root_dir=tmp_path, loggers=[]
    )
    budget = 2 * estimated_gflop(parameters, 100)  # 100 tokens for each of 2 placements
    callback = NormComparison(
        placements=["post", "pre"], batch_size=32, batches=4, max_gflop=budget
    )
    with caplog.at_level(logging.INFO):
        callback.on_fit_start(trainer, module)
    record = json.loads((tmp_path / "norm_comparison.json").read_text())
    sample = DATA.sample("train", 128)
    assert record["examples"] == examples_within(sample, parameters, 2, budget) < 128
    assert record["gflop"] <= round(budget, 1) and record["batches"] == 4
    assert (
        f"norm comparison: the first {record['examples']} of 128 training examples, to keep "
        f"the twins' passes within callbacks.norm_comparison.max_gflop={budget:g}" in caplog.text
    )


def test_a_budget_that_is_not_a_positive_number_is_refused():
    with pytest.raises(ValueError, match=r"max_gflop=0: out of range; allowed: a number > 0"):
        NormComparison(max_gflop=0)
