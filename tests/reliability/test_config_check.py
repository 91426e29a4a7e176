"""The check of the composed config: each rule names its key and what is allowed, the
bundled configs pass it, a bug keeps its traceback, and a sweep's jobs are checked before
the first one starts."""

import itertools
import pickle
import re
from pathlib import Path

import pytest
import torch
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import InstantiationException
from hydra.types import RunMode
from omegaconf import OmegaConf, open_dict

from transformer_lab.config.jobs import job_configs, split_config
from transformer_lab.config.validation import ConfigError, InvalidSetting
from transformer_lab.job import build, run
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.checks import check_config
from transformer_lab.sweep.checks import ConfigCheck
from transformer_lab.sweep.parallel import SCHEMA_NOTICE

pytestmark = pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}")

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
DEBUG = sorted(p.stem for p in (CONF_DIR / "debug").glob("*.yaml"))

# (overrides, the whole message): one rule each
REFUSED = [
    (["seed=abc"], "seed='abc': not an integer; allowed: an integer in [0, 4294967295]"),
    (["seed=-1"], "seed=-1: out of range; allowed: an integer in [0, 4294967295]"),
    (["seed=1.5"], "seed=1.5: not an integer; allowed: an integer in [0, 4294967295]"),
    (
        ["trainer.max_steps=abc"],
        "trainer.max_steps='abc': not an integer; allowed: an integer >= 1",
    ),
    (["trainer.max_steps=-1"], "trainer.max_steps=-1: out of range; allowed: an integer >= 1"),
    (["trainer.max_steps=0"], "trainer.max_steps=0: out of range; allowed: an integer >= 1"),
    (["trainer.max_steps=2.5"], "trainer.max_steps=2.5: not an integer; allowed: an integer >= 1"),
    (
        ["trainer.val_check_interval=0"],
        "trainer.val_check_interval=0: out of range; allowed: an integer >= 1",
    ),
    (  # a fraction of an epoch needs check_val_every_n_epoch, which the lab leaves null
        ["trainer.val_check_interval=0.5"],
        "trainer.val_check_interval=0.5: not an integer; allowed: an integer >= 1",
    ),
    (
        ["trainer.val_check_interval=null"],
        "trainer.val_check_interval=None: not an integer; allowed: an integer >= 1",
    ),
    (
        ["trainer.check_val_every_n_epoch=1", "trainer.val_check_interval=1.5"],
        "trainer.val_check_interval=1.5: out of range; allowed: a number in (0, 1]",
    ),
    (
        ["trainer.gradient_clip_val=-1"],
        "trainer.gradient_clip_val=-1: out of range; allowed: a number >= 0",
    ),
    (
        ["trainer.gradient_clip_val=abc"],
        "trainer.gradient_clip_val='abc': not a number; allowed: a number >= 0",
    ),
    (["target_seq_acc=0"], "target_seq_acc=0: out of range; allowed: a number in (0, 1]"),
    (["target_seq_acc=abc"], "target_seq_acc='abc': not a number; allowed: a number in (0, 1]"),
    (
        ["optimized_metric=val/acc"],
        "optimized_metric='val/acc' is not a metric a run reports; allowed: "
        "<val|test|test_long>/<loss|ppl|token_acc|seq_acc|bleu|chrf>, "
        "<test|test_long>/<oracle_seq_acc|oracle_token_acc>, val/seq_acc_best, val/seq_acc_auc, "
        "train/clip_fraction, train/grad_norm_max or train/loss_spikes",
    ),
    (
        ["ckpt_path=/nowhere/last.ckpt"],
        "ckpt_path='/nowhere/last.ckpt' does not exist; allowed: an existing checkpoint file, "
        "'last', or null",
    ),
    (["model.lr=abc"], "model.lr='abc': not a number; allowed: a number > 0"),
    (["model.lr=-1"], "model.lr=-1: out of range; allowed: a number > 0"),
    (["model.lr=0"], "model.lr=0: out of range; allowed: a number > 0"),
    (["model.betas=[0.9]"], "model.betas=[0.9]: not a pair; allowed: [beta1, beta2], each in"),
    (["model.betas=abc"], "model.betas='abc': not a pair; allowed: [beta1, beta2], each in"),
    (
        ["model.betas=[0.9,1.0]"],
        "model.betas[1]=1.0: out of range; allowed: a number in [0, 1)",
    ),
    (
        ["model.weight_decay=-0.1"],
        "model.weight_decay=-0.1: out of range; allowed: a number >= 0",
    ),
    (
        ["model.weight_decay=abc"],
        "model.weight_decay='abc': not a number; allowed: a number >= 0",
    ),
    (
        ["model.warmup_steps=2.5"],
        "model.warmup_steps=2.5: not an integer; allowed: an integer >= 0",
    ),
    (
        ["model.label_smoothing=abc"],
        "model.label_smoothing='abc': not a number; allowed: a number in [0, 1)",
    ),
    (["model.compile=abc"], "model.compile='abc': not a boolean; allowed: true or false"),
    (["model.d_model=abc"], "model.d_model='abc': not an integer; allowed: an integer >= 1"),
    (
        ["model.schedule=cosine"],
        "model.schedule='cosine': unknown; allowed: constant, linear_warmup, noam",
    ),
    (["data.batch_size=abc"], "data.batch_size='abc': not an integer; allowed: an integer >= 1"),
    (
        ["+model.qk_norm=true"],
        "model.qk_norm=True: Seq2SeqLitModule takes no such setting; allowed: src_vocab_size, ",
    ),
]


@pytest.mark.parametrize(("overrides", "message"), REFUSED, ids=[" ".join(o) for o, _ in REFUSED])
def test_each_rule_refuses_naming_the_key_the_value_and_what_is_allowed(
    compose_train, tmp_path, overrides, message
):
    cfg = compose_train(["experiment=smoke", *overrides, f"paths.outputs_root={tmp_path}"])
    with pytest.raises(ConfigError) as error:
        check_config(cfg, HydraConfig.get())
    assert str(error.value).startswith(message), str(error.value)


@pytest.mark.parametrize(
    "overrides",
    [
        ["trainer.gradient_clip_val=null"],  # no clipping
        ["trainer.gradient_clip_val=0"],
        ["trainer.check_val_every_n_epoch=1", "trainer.val_check_interval=0.5"],
        ["model.init_seed=null", "model.betas=[0.0,0.5]", "model.weight_decay=0", "seed=0"],
        ["target_seq_acc=1"],
        *[[f"experiment={name}"] for name in EXPERIMENTS],
        *[[f"debug={name}"] for name in DEBUG],
        ["model/norm=deepnorm", "model/norm_type=rmsnorm", "model/pos_encoding=alibi"],
        ["model/ffn=swiglu", "model.compile=true", "model.tie_embeddings=true"],
        ["model/pos_encoding=learned", "model/ffn=gelu", "model/norm=sandwich"],
        ["model/pos_encoding=rotary", "model/norm=pre", "data=sort"],
        ["model/pos_encoding=none", "data=copy", "trainer=ddp", "trainer.accelerator=cpu"],
    ],
    ids=lambda overrides: " ".join(overrides),
)
def test_the_bundled_configs_and_the_edges_of_each_range_pass(compose_train, overrides):
    check_config(compose_train(overrides), HydraConfig.get())


def test_the_check_builds_on_the_meta_device_and_generates_no_data(compose_train):
    cfg = compose_train(["experiment=paper_base"])  # 57M parameters: no time, no memory
    with torch.device("meta"):
        datamodule, module = build_data_and_model(cfg)
    assert next(module.parameters()).is_meta
    assert datamodule._splits is None  # generated at setup, which the check never calls


def test_a_bug_inside_a_constructor_keeps_its_traceback(compose_train, monkeypatch):
    """A TypeError or ValueError from the project's own code is not a user's mistake."""

    def broken(*args, **kwargs):
        raise TypeError("a bug, not a setting")

    monkeypatch.setattr("transformer_lab.training.module.StageMetrics", broken)
    cfg = compose_train(["experiment=smoke"])
    with pytest.raises(InstantiationException) as error:
        check_config(cfg, HydraConfig.get())
    assert isinstance(error.value.__cause__, TypeError)
    with pytest.raises(InstantiationException):
        run.train(cfg)


def test_a_library_constructors_refusal_is_a_config_error(compose_train):
    """Lightning checks the Trainer's arguments with ValueError; they are the user's."""
    with pytest.raises(ConfigError, match=re.escape("trainer: Precision 'bad' is invalid")):
        build.build(compose_train(["experiment=smoke", "trainer.precision=bad"]))


def test_an_invalid_setting_survives_pickling_with_its_parts():
    error = pickle.loads(pickle.dumps(InvalidSetting("lr", "abc", "not a number", "> 0")))
    assert (error.key, error.value) == ("lr", "abc")
    assert str(error.within("model")) == "model.lr='abc': not a number; allowed: > 0"


# -- the Hydra callback, before Hydra makes a folder ---------------------------------------


@pytest.fixture
def loader():
    """Hydra's config loader, as ``hydra.main`` sets it up, for the callback's expansion."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield GlobalHydra.instance().config_loader()


def composed(loader, overrides, multirun=False):
    """The config Hydra hands the callbacks: ``hydra`` node included, nothing resolved."""
    mode = RunMode.MULTIRUN if multirun else RunMode.RUN
    extra = ["hydra.mode=MULTIRUN"] if multirun else []
    config = loader.load_configuration("train", [*overrides, *extra], run_mode=mode)
    if not multirun:
        with open_dict(config):
            config.hydra.mode = RunMode.RUN  # as Hydra.run sets it
    return config


def refusal(capsys, hook, config) -> str:
    with pytest.raises(SystemExit) as stop:
        getattr(ConfigCheck(), hook)(config)
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line


def test_a_run_is_refused_before_its_folder_with_one_line(loader, capsys, tmp_path):
    bad = ["experiment=smoke", "model.lr=abc", f"paths.outputs_root={tmp_path}"]
    config = composed(loader, bad)
    line = refusal(capsys, "on_run_start", config)
    assert line == "error: model.lr='abc': not a number; allowed: a number > 0"
    assert OmegaConf.is_missing(config.hydra.runtime, "output_dir")  # before run_job set it
    assert list(tmp_path.iterdir()) == []
    ConfigCheck().on_run_start(composed(loader, ["experiment=smoke"]))  # a good one passes


def test_every_job_of_a_sweep_is_checked_and_the_bad_one_named(loader, capsys):
    sweep = ["experiment=smoke", "model/norm=pre,post", "model.lr=1e-3,abc"]
    config = composed(loader, sweep, multirun=True)
    line = refusal(capsys, "on_multirun_start", config)
    assert line == (
        "error: model.lr='abc': not a number; allowed: a number > 0 "
        "(sweep job: model/norm=pre,model.lr=abc)"
    )


def test_a_local_sweep_of_ddp_jobs_is_refused_up_front(loader, capsys):
    config = composed(loader, ["trainer=ddp", "trainer.accelerator=cpu", "seed=0,1"], True)
    line = refusal(capsys, "on_multirun_start", config)
    assert "trainer.strategy='ddp': with trainer.devices=2 in a local multirun" in line


def test_an_optimizing_sweep_checks_its_own_config_and_direction(loader, capsys):
    def study(*overrides):
        return composed(loader, ["hparams_search=optuna", "experiment=smoke", *overrides], True)

    line = refusal(capsys, "on_multirun_start", study("optimized_metric=val/loss"))
    assert line == (
        "error: optimized_metric=val/loss is to minimize, but hydra.sweeper.direction=maximize; "
        "allowed: hydra.sweeper.direction=minimize"
    )
    line = refusal(capsys, "on_multirun_start", study("model.dropout=2"))
    assert line == "error: model.dropout=2: out of range; allowed: a number in [0, 1)"
    # the values it draws are its own: a trial that draws a bad one fails alone, later
    ConfigCheck().on_multirun_start(study("model.warmup_steps=choice(-1,0)"))


def test_the_expanded_jobs_are_the_configs_the_launcher_composes(loader):
    """Composed once per combination of groups, values applied after: the same configs,
    in the same order, as ``load_sweep_config`` composes for each job."""
    values = ["model.lr=1e-3", "~callbacks.samples", "+trainer.benchmark=true"]
    sweep = ["experiment=smoke", "model/norm=pre,post", "data=copy,sort", "seed=0,1", *values]
    config = composed(loader, sweep, multirun=True)
    jobs = list(job_configs(config))
    expected = list(itertools.product(["pre", "post"], ["copy", "sort"], ["0", "1"]))
    assert len(jobs) == len(expected) == 8
    for (name, task, hydra_cfg), (norm, data, seed) in zip(jobs, expected, strict=True):
        assert name == f"model/norm={norm},data={data},seed={seed}"
        job = ["experiment=smoke", f"model/norm={norm}", f"data={data}", f"seed={seed}", *values]
        launched, launched_hydra = split_config(loader.load_sweep_config(config, job))
        assert OmegaConf.to_container(task) == OmegaConf.to_container(launched), name
        assert hydra_cfg.mode == launched_hydra.mode == RunMode.MULTIRUN
        assert "samples" not in task.callbacks and task.trainer.benchmark is True
