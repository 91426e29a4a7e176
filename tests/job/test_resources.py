"""A run's memory, estimated from the check's meta-device build before anything is
allocated, refused in one line where it cannot fit the machine; a step budget beyond any
sensible one refused too."""

import re

import pytest
import torch

from transformer_lab.config.validation import ConfigError
from transformer_lab.job import resources
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.checks import check_config
from transformer_lab.job.context import RunContext
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.training.loss import token_nll

from ..command_line import run_train_here

GB = 10**9


def meta_build(cfg):
    with torch.device("meta"):
        return build_data_and_model(cfg)


def test_the_models_part_is_16_bytes_a_parameter_and_needs_no_weights(compose_train):
    _, module = meta_build(compose_train(["model.d_model=100000"]))
    count = resources.parameter_count(module.model)
    assert count == sum(p.numel() for p in module.model.parameters()) > 2 * 10**11
    assert all(p.is_meta for p in module.model.parameters())  # nothing allocated
    assert resources.BYTES_PER_PARAMETER == 4 + 4 + 4 + 4  # weight, gradient, two moments


def saved_by_storage(model, rows: int, length: int) -> int:
    """What a real teacher-forced pass saves for backward: each storage once, parameters'
    left out."""
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    src = torch.randint(3, 16, (rows, length), generator=torch.Generator().manual_seed(0))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        token_nll(model(src, src), src)
    return sum(saved.values())


@pytest.mark.parametrize("pos_encoding", ["sinusoidal", "t5_bias"])
def test_the_meta_estimate_of_activations_is_within_a_tenth_of_what_a_real_pass_saves(
    pos_encoding,
):
    sizes = dict(d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=64)
    real = Seq2SeqTransformer(16, 16, **sizes, dropout=0.1, pos_encoding=pos_encoding)
    with torch.device("meta"):
        meta = Seq2SeqTransformer(16, 16, **sizes, dropout=0.1, pos_encoding=pos_encoding)
    estimate = resources.activation_bytes(meta, 48, 11, 11)
    truth = saved_by_storage(real, 48, 11)
    assert truth * 0.9 <= estimate <= truth * 1.1, (estimate, truth)
    assert resources.activation_bytes(meta, 96, 11, 11) == pytest.approx(2 * estimate, rel=0.01)


def test_networks_that_differ_only_in_their_seed_share_one_estimate_and_no_other_does(
    monkeypatch,
):
    """A sweep's jobs that differ in seed, learning rate or schedule build modules of one
    network: its activations are estimated once (the regime grid's 864 jobs: 15 networks)."""
    estimated, known = [], {}
    monkeypatch.setattr(
        resources, "activation_bytes", lambda model, *shape: estimated.append(shape) or 1
    )
    sizes = dict(d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32)
    with torch.device("meta"):
        networks = [Seq2SeqTransformer(16, 16, **sizes, init_seed=seed) for seed in (0, 1)]
        networks.append(Seq2SeqTransformer(16, 16, **{**sizes, "num_heads": 4}))
        networks.append(Seq2SeqTransformer(16, 16, **sizes, init_seed=0).eval())  # no dropout
    for network in networks:
        resources.cached_activation_bytes(network, 8, 5, 5, known)
    resources.cached_activation_bytes(networks[0], 8, 6, 5, known)  # another batch shape
    assert estimated == [(8, 5, 5), (8, 5, 5), (8, 5, 5), (8, 6, 5)]


@pytest.fixture
def machine_of(monkeypatch):
    """``machine_of(gigabytes)``: the host memory the check reads, set."""
    return lambda gigabytes: monkeypatch.setattr(
        resources, "host_bytes_available", lambda: gigabytes * GB
    )


def check(cfg):
    check_config(cfg, RunContext.from_hydra().hydra)


def test_a_model_too_large_for_the_machine_is_refused_naming_its_sizes(compose_train, machine_of):
    machine_of(16)
    cfg = compose_train(["model.d_model=100000"])
    refused = re.escape(
        "memory: the run needs about 3856.4 GB and 16.0 GB is available on this machine: "
        "the model's 240,214.4 M parameters 3843.4 GB"
    )
    with pytest.raises(ConfigError, match=refused) as error:
        check(cfg)
    assert str(error.value).endswith(
        "allowed: a run that fits, by a smaller model (model.d_model=100000, model.d_ff=256, "
        "model.num_encoder_layers=2, model.num_decoder_layers=2)"
    )


def test_a_batch_too_large_is_refused_at_the_training_splits_size(compose_train, machine_of):
    """A batch holds no more examples than the training split: 100,000 of the main job's."""
    machine_of(4)
    with pytest.raises(ConfigError, match=r"a training batch of 100,000 examples at 11 ") as error:
        check(compose_train(["data.batch_size=1000000000"]))
    assert str(error.value).endswith("by a smaller batch (data.batch_size=1000000000) or model")
    check(compose_train([]))  # the main job fits in 4 GB


def test_data_splits_too_large_are_refused_naming_their_size(compose_train, machine_of):
    machine_of(16)
    with pytest.raises(ConfigError, match=r"the data's splits 264\.0 GB; .*data\.train_size=10"):
        check(compose_train(["data.train_size=1000000000", "data.vocab_size=1000"]))


def test_a_cpu_ddp_run_needs_a_replica_per_process(compose_train, machine_of):
    cfg = compose_train(["trainer.devices=4", "+trainer.strategy=ddp", "trainer.accelerator=cpu"])
    datamodule, module = meta_build(cfg)
    machine_of(16)
    resources.check_resources(cfg, datamodule, module)  # fits, 4 times over
    machine_of(0.01)
    with pytest.raises(ConfigError, match=r"GB x 4 processes and 0\.0 GB is available"):
        resources.check_resources(cfg, datamodule, module)


def test_a_gpu_run_is_held_to_the_devices_free_memory(compose_train, monkeypatch):
    cfg = compose_train(["model.d_model=100000", "trainer.accelerator=gpu"])
    datamodule, module = meta_build(cfg)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *device: (80 * GB, 141 * GB))
    with pytest.raises(ConfigError, match=r"and 80\.0 GB is free on the GPU: "):
        resources.check_resources(cfg, datamodule, module)


def test_a_step_budget_beyond_any_sensible_one_is_refused(compose_train):
    with pytest.raises(
        ConfigError,
        match=re.escape("trainer.max_steps=1000000000000: out of range; allowed: an integer in"),
    ):
        check(compose_train(["trainer.max_steps=1000000000000"]))


def test_the_command_refuses_a_model_no_machine_holds_in_one_line_before_any_folder(tmp_path):
    outputs = tmp_path / "outputs"
    result = run_train_here(outputs, "model.d_model=100000")
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith("error: memory: the run needs about 3856.4 GB and ")
    assert result.stderr.count("\n") == 1
    assert not outputs.exists()
