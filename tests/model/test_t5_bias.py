"""T5's relative position bias (Raffel et al., 2020, §2.1): log-spaced buckets of the key's
distance, both ways in the encoder and causal in the decoder, one learned bias per bucket
and head shared by a stack's layers, its two settings in its YAML."""

import re

import lightning
import pytest
import torch

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.build import build_data_and_model
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.options import DECODER
from transformer_lab.model.positional import T5Bias, T5BiasSettings, t5_buckets
from transformer_lab.training.module import Seq2SeqLitModule


def test_distances_fall_into_exact_then_log_spaced_buckets_each_way_in_the_encoder():
    # 8 buckets, 4 each way: distances 0, 1 exact, 2-3 and 4 up share log-spaced ones;
    # keys after the query (key - query > 0) in buckets 4-7
    relative = torch.arange(-5, 6)  # key - query
    assert t5_buckets(relative, True, 8, 8).tolist() == [3, 3, 2, 2, 1, 0, 5, 6, 6, 7, 7]


def test_the_decoders_buckets_count_past_keys_only():
    # causal, 8 buckets: 0-3 exact, 4, 5, 6, then 7 for 7 and every distance beyond
    relative = torch.arange(-9, 2)
    assert t5_buckets(relative, False, 8, 8).tolist() == [7, 7, 7, 6, 5, 4, 3, 2, 1, 0, 0]


def test_the_papers_32_buckets_reach_128_positions_back():
    distance = torch.tensor([0, 15, 16, 127, 128, 1000])
    assert t5_buckets(-distance, False, 32, 128).tolist() == [0, 15, 16, 31, 31, 31]
    # the encoder: 16 a way, 8 exact; a key after the query lands 16 buckets on
    assert t5_buckets(torch.tensor([-7, 7, -8, 8]), True, 32, 128).tolist() == [7, 23, 8, 24]


def test_the_bias_is_the_learned_value_of_its_bucket_for_each_head():
    pe = T5Bias(16, 2, 64, settings=T5BiasSettings(num_buckets=8, max_distance=8))
    positions = torch.arange(6)
    bias = pe.bias(positions, positions)  # [H, L, L]
    buckets = t5_buckets(positions[None, :] - positions[:, None], True, 8, 8)
    assert bias.shape == (2, 6, 6)
    for head in range(2):
        assert torch.equal(bias[head], pe.table.weight[:, head][buckets])
    step = pe.bias(torch.tensor([4]), torch.arange(5))  # a cached decoding step
    assert torch.equal(step, bias[:, 4:5, :5])


def test_each_stack_has_one_table_shared_by_its_layers_and_the_decoders_is_causal():
    model = Seq2SeqTransformer(13, 11, 16, 2, 3, 3, 32, pos_encoding="t5_bias", init_seed=0)
    tables = {name: p for name, p in model.named_parameters() if "pos." in name}
    assert {name: tuple(p.shape) for name, p in tables.items()} == {
        "src_pos.table.weight": (32, 2),
        "tgt_pos.table.weight": (32, 2),
    }
    assert not model.src_pos.stack.causal and model.tgt_pos.stack == DECODER
    assert model.src_pos.table.weight.std().item() == pytest.approx(16**-0.5, rel=0.35)
    positions, after = torch.arange(4), torch.ones(4, 4, dtype=torch.bool).triu(1)
    decoder = model.tgt_pos.buckets(positions, positions)
    assert decoder[after].eq(0).all()  # keys after the query: the bucket of distance 0
    encoder = model.src_pos.buckets(positions, positions)
    assert encoder[after].ge(16).all() and encoder[~after].lt(16).all()  # half a direction


def test_its_yaml_sets_its_two_settings_and_a_command_line_changes_them(compose_train):
    cfg = compose_train(["model/pos_encoding=t5_bias", "model.options.t5_bias.num_buckets=16"])
    assert dict(cfg.model.options.t5_bias) == {"num_buckets": 16, "max_distance": 128}
    _, module = build_data_and_model(cfg)
    assert module.model.tgt_pos.settings == T5BiasSettings(num_buckets=16, max_distance=128)
    assert module.model.tgt_pos.table.weight.shape == (16, 4)
    assert module.hparams["model"]["options"] == {
        "t5_bias": {"num_buckets": 16, "max_distance": 128}
    }


def test_buckets_without_room_for_both_directions_are_refused_by_their_key(compose_train):
    cfg = compose_train(["model/pos_encoding=t5_bias", "model.options.t5_bias.num_buckets=3"])
    refused = "model.options.t5_bias.num_buckets=3: out of range; allowed: an integer >= 4"
    with pytest.raises(InvalidSetting, match=re.escape(refused)):
        build_data_and_model(cfg)


def test_its_settings_are_saved_in_the_checkpoint_and_rebuild_the_model(compose_train, tmp_path):
    cfg = compose_train(["model/pos_encoding=t5_bias", "model.options.t5_bias.max_distance=64"])
    _, module = build_data_and_model(cfg)
    path = tmp_path / "t5.ckpt"
    torch.save(
        {
            "state_dict": module.state_dict(),
            "hyper_parameters": dict(module.hparams),
            "pytorch-lightning_version": lightning.__version__,
        },
        path,
    )
    loaded = Seq2SeqLitModule.load_from_checkpoint(path, weights_only=True)
    assert loaded.model.src_pos.settings == T5BiasSettings(num_buckets=32, max_distance=64)
    assert torch.equal(loaded.model.tgt_pos.table.weight, module.model.tgt_pos.table.weight)
