"""Every option of every config group composes and instantiates."""

import re
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.tasks import TASKS
from transformer_lab.job.build import build
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.layers import FFNS
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.model.residual import NORM_PLACEMENTS

from ..real_corpora import HAVE_MULTI30K, MULTI30K, NO_MULTI30K

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


@pytest.mark.parametrize(
    "override",
    [f"data={o}" for o in options("data")]
    + [f"model/norm={o}" for o in options("model/norm")]
    + [f"model/norm_type={o}" for o in options("model/norm_type")]
    + [f"model/pos_encoding={o}" for o in options("model/pos_encoding")]
    + [f"model/ffn={o}" for o in options("model/ffn")]
    + [f"trainer={o}" for o in options("trainer") if o not in ("gpu", "fsdp")],  # need CUDA
)
def test_every_group_option_builds_datamodule_module_and_trainer(compose_train, override, tmp_path):
    files = []  # data=pairs reads its pairs from a file, data=multi30k the corpus's
    if override == "data=pairs":
        (tmp_path / "pairs.tsv").write_text("".join(f"a {i}\tb {i}\n" for i in range(20)))
        files = [f"data.train_path={tmp_path / 'pairs.tsv'}", "data.val_size=2", "data.test_size=2"]
    if override == "data=multi30k":
        if not HAVE_MULTI30K:
            pytest.skip(NO_MULTI30K)
        files = [f"data.data_dir={MULTI30K}", "data.train_size=500", "data.test_size=50"]
    cfg = compose_train([override, *files])
    datamodule, module, trainer = build(cfg)
    assert isinstance(module.model, Seq2SeqTransformer)
    assert module.model.config.max_len >= datamodule.max_seq_len
    assert trainer.max_steps == cfg.trainer.max_steps


@pytest.mark.parametrize(
    ("group", "registry"),
    [
        ("model/norm", NORM_PLACEMENTS),
        ("model/norm_type", NORM_TYPES),
        ("model/pos_encoding", POSITIONAL_ENCODINGS),
        ("model/ffn", FFNS),
    ],
)
def test_each_model_option_group_has_one_yaml_per_registered_name(group, registry):
    """A registered option without its YAML could not be swept by its group, and a YAML
    without its class would fail only when a run picks it."""
    assert options(group) == sorted(registry)


def test_group_options_reach_the_model(compose_train):
    cfg = compose_train(["model/norm=pre", "model/pos_encoding=rotary", "model/ffn=swiglu"])
    _, module, _ = build(cfg)
    c = module.model.config
    assert (c.norm, c.pos_encoding, c.ffn) == (
        "pre",
        "rotary",
        "swiglu",
    )


def test_gpu_trainer_config_asks_for_bf16_on_gpu(compose_train):
    cfg = compose_train(["trainer=gpu"])
    assert cfg.trainer.accelerator == "gpu"
    assert cfg.trainer.precision == "bf16-mixed"


@pytest.mark.parametrize("task", list(TASKS))
def test_each_registered_task_is_a_data_option_of_its_own(compose_train, task):
    """``data=<task>`` for every synthetic task: a task without its YAML could be run only
    by the key ``data.task``, and no sweep of the group would find it."""
    assert compose_train([f"data={task}"]).data.task == task


def test_a_model_without_positions_for_the_longest_target_is_refused_before_it_trains(
    compose_train,
):
    """duplicate's 10-word sources have 20-word targets: BOS or EOS and 20 words."""
    with pytest.raises(
        InvalidSetting,
        match=re.escape(
            "model.max_len=20: shorter than the longest sequence of the data incl. BOS/EOS (21)"
        ),
    ):
        build(compose_train(["data=duplicate", "model.max_len=20"]))


def test_fsdp_trainer_config_shards_fully_on_gpus_in_bf16(compose_train):
    cfg = compose_train(["trainer=fsdp"])
    assert cfg.trainer.strategy._target_.endswith("FSDPStrategy")
    assert cfg.trainer.strategy.sharding_strategy == "FULL_SHARD"
    assert (cfg.trainer.accelerator, cfg.trainer.precision) == ("gpu", "bf16-mixed")


def test_pe_extrapolation_sweeps_its_published_grid_and_tests_past_the_training_lengths(
    compose_train,
):
    """Its grid is its own design, reported in docs/results.md: five encodings x two tasks,
    seeds from 6000 until decided (the sequential sweeper runs the two encodings its rules
    compare). An encoding registered later joins it only by an edit of the experiment."""
    sweeper = OmegaConf.load(CONF_DIR / "experiment" / "pe_extrapolation.yaml").hydra.sweeper
    grid = {key: str(values).split(",") for key, values in sweeper.params.items()}
    assert grid == {
        "data": ["reverse", "copy"],
        "model/pos_encoding": ["sinusoidal", "learned", "rotary", "alibi", "none"],
    }
    assert (sweeper.first, sweeper.budget, sweeper.first_seed) == (8, 16, 6000)
    datamodule, module, _ = build(compose_train(["experiment=pe_extrapolation"]))
    assert datamodule.test_split_names == ["test", "test_long"]
    assert datamodule.hparams.test_long_max_task_len > datamodule.hparams.max_task_len
    assert module.model.config.max_len >= datamodule.max_seq_len  # the tables cover test_long


@pytest.mark.parametrize("experiment", options("experiment"))
def test_every_experiment_composes_and_sweeps_only_options_that_exist(compose_train, experiment):
    sweep = OmegaConf.load(CONF_DIR / "experiment" / f"{experiment}.yaml")
    params = OmegaConf.select(sweep, "hydra.sweeper.params") or {}
    for key, values in params.items():
        if (CONF_DIR / key).is_dir():  # a config group: every swept option must exist
            assert set(str(values).split(",")) <= set(options(key)), key
    corpus = []  # an experiment on Multi30k reads the real files: a few thousand pairs here
    if experiment.startswith("multi30k"):
        if not HAVE_MULTI30K:
            pytest.skip(NO_MULTI30K)
        corpus = [f"data.data_dir={MULTI30K}", "data.train_size=2000"]
    if experiment != "paper_base":  # builds a 57M-parameter model: tested in tests/gpu
        _, module, trainer = build(compose_train([f"experiment={experiment}", *corpus]))
        assert trainer.max_steps > 0 and module.model is not None


def test_ffn_comparison_compares_feed_forward_blocks_of_the_same_size(compose_train):
    sizes = {}
    for ffn in FFNS:
        _, module, _ = build(compose_train(["experiment=ffn_comparison", f"model/ffn={ffn}"]))
        sizes[ffn] = sum(p.numel() for p in module.parameters())
    assert sizes["gelu"] == sizes["relu"]
    # per block, d_model 64, d_ff 256: ReLU W1, b1, W2, b2; SwiGLU's hidden width 2/3 x 256
    # rounds up to 176 (a multiple of 8), with gate and value W, b and the output W, b
    relu, swiglu = 2 * 64 * 256 + 256 + 64, 3 * 64 * 176 + 2 * 176 + 64
    assert sizes["swiglu"] - sizes["relu"] == 4 * (swiglu - relu)  # 2 + 2 layers
    assert sizes["swiglu"] / sizes["relu"] == pytest.approx(1.019, abs=1e-3)


def test_the_ffn_is_one_setting_from_group_to_key_and_refused_by_that_key(compose_train):
    """``model/ffn=swiglu`` sets ``model.ffn`` (the key hypotheses and HPARAMS name); an
    unknown FFN is refused as ``model.ffn``, not by the network's keyword."""
    assert compose_train(["model/ffn=swiglu"]).model.ffn == "swiglu"
    with pytest.raises(
        InvalidSetting, match=re.escape(f"model.ffn='tanh': unknown; allowed: {', '.join(FFNS)}")
    ):
        build(compose_train(["model.ffn=tanh"]))
