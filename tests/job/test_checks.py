"""The check of the composed config (job/checks.py): each rule names its key and what is
allowed, the bundled configs pass it, a bug keeps its traceback. The Hydra callback that
runs it before any folder: tests/sweep/test_config_check.py."""

import re
from pathlib import Path

import pytest
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import read_write

from transformer_lab.config.validation import ConfigError
from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.job import build, run
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.checks import check_config, check_launcher

from ..real_corpora import HAVE_MULTI30K, MULTI30K, NO_MULTI30K

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
        "trainer.max_steps='abc': not an integer; allowed: an integer in [1, 1000000000]",
    ),
    (
        ["trainer.max_steps=-1"],
        "trainer.max_steps=-1: out of range; allowed: an integer in [1, 1000000000]",
    ),
    (
        ["trainer.max_steps=0"],
        "trainer.max_steps=0: out of range; allowed: an integer in [1, 1000000000]",
    ),
    (
        ["trainer.max_steps=2.5"],
        "trainer.max_steps=2.5: not an integer; allowed: an integer in [1, 1000000000]",
    ),
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
        "<val|test|test_long>/<loss|ppl|token_acc|seq_acc|bleu|bleu_lc|chrf>, "
        "<test|test_long>/<oracle_seq_acc|oracle_token_acc>, val/seq_acc_best, val/seq_acc_auc, "
        "train/clip_fraction, train/grad_norm_max or train/loss_spikes",
    ),
    (
        ["ckpt_path=/nowhere/last.ckpt"],
        "ckpt_path='/nowhere/last.ckpt' does not exist; allowed: an existing checkpoint file, "
        "'last', or null",
    ),
    (["optim.lr=abc"], "optim.lr='abc': not a number; allowed: a number > 0"),
    (["optim.lr=-1"], "optim.lr=-1: out of range; allowed: a number > 0"),
    (["optim.lr=0"], "optim.lr=0: out of range; allowed: a number > 0"),
    (["optim.betas=[0.9]"], "optim.betas=[0.9]: not a pair; allowed: [beta1, beta2], each in"),
    (["optim.betas=abc"], "optim.betas='abc': not a pair; allowed: [beta1, beta2], each in"),
    (
        ["optim.betas=[0.9,1.0]"],
        "optim.betas[1]=1.0: out of range; allowed: a number in [0, 1)",
    ),
    (
        ["optim.weight_decay=-0.1"],
        "optim.weight_decay=-0.1: out of range; allowed: a number >= 0",
    ),
    (
        ["optim.weight_decay=abc"],
        "optim.weight_decay='abc': not a number; allowed: a number >= 0",
    ),
    (
        ["optim.warmup_steps=2.5"],
        "optim.warmup_steps=2.5: not an integer; allowed: an integer >= 0",
    ),
    (
        ["optim.label_smoothing=abc"],
        "optim.label_smoothing='abc': not a number; allowed: a number in [0, 1)",
    ),
    (["compile=abc"], "compile='abc': not a boolean; allowed: true or false"),
    (["model.d_model=abc"], "model.d_model='abc': not an integer; allowed: an integer >= 1"),
    (
        ["optim.schedule=cosin"],
        "optim.schedule='cosin': unknown; allowed: constant, linear_warmup, noam, cosine",
    ),
    (
        ["optim.min_lr_ratio=-0.1"],
        "optim.min_lr_ratio=-0.1: out of range; allowed: a number in [0, 1]",
    ),
    (  # a cosine floor above the peak
        ["optim.min_lr_ratio=1.5"],
        "optim.min_lr_ratio=1.5: out of range; allowed: a number in [0, 1]",
    ),
    (  # a stop before the outcome rule's target (job/cancelling_settings.py)
        ["stop_at_seq_acc=0.3"],
        "stop_at_seq_acc=0.3: below outcome.threshold=0.5: runs stop at val/seq_acc 0.3, "
        "before the outcome rule (learned: final val/seq_acc >= 0.5) can call them learned; "
        "allowed: stop_at_seq_acc >= 0.5, or null",
    ),
    (["data.batch_size=abc"], "data.batch_size='abc': not an integer; allowed: an integer >= 1"),
    (["test_weights=first"], "test_weights='first': unknown; allowed: last, best"),
    (
        ["callbacks/averaging=ema", "callbacks.averaging.decay=1.5"],
        "callbacks.averaging.decay=1.5: out of range; allowed: a number in (0, 1)",
    ),
    (
        ["test_weights=best", "~callbacks.model_checkpoint"],
        "test_weights='best': callbacks.model_checkpoint, which saves best.ckpt, is switched "
        "off; allowed: last, or keep callbacks.model_checkpoint",
    ),
    (
        ["+model.qk_norm=true"],
        "model.qk_norm=True: TransformerConfig takes no such setting; allowed: src_vocab_size, ",
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


def corpus_of(experiment: str) -> list[str]:
    """Where an experiment on a real corpus finds it: these machines' copy (its absence is
    then the refusal the test names)."""
    return [f"data.data_dir={MULTI30K}"] if "multi30k" in experiment else []


@pytest.mark.slow
@pytest.mark.parametrize(
    "overrides",
    [
        ["trainer.gradient_clip_val=null"],  # no clipping
        ["trainer.gradient_clip_val=0"],
        ["trainer.check_val_every_n_epoch=1", "trainer.val_check_interval=0.5"],
        ["model.init_seed=null", "optim.betas=[0.0,0.5]", "optim.weight_decay=0", "seed=0"],
        ["target_seq_acc=1"],
        # paper_base asks for a GPU: refused on a machine without one (tests/e2e/test_typos.py)
        *[
            [f"experiment={name}", "trainer.accelerator=auto", *corpus_of(name)]
            for name in EXPERIMENTS
        ],
        *[[f"debug={name}"] for name in DEBUG],
        ["model/norm=deepnorm", "model/norm_type=rmsnorm", "model/pos_encoding=alibi"],
        ["model/ffn=swiglu", "compile=true", "model.tie_embeddings=true"],
        ["model/pos_encoding=learned", "model/ffn=gelu", "model/norm=sandwich"],
        ["model/pos_encoding=rotary", "model/norm=pre", "data=sort"],
        ["model/pos_encoding=none", "data=copy", "trainer=ddp", "trainer.accelerator=cpu"],
    ],
    ids=lambda overrides: " ".join(overrides),
)
def test_the_bundled_configs_and_the_edges_of_each_range_pass(
    compose_train, overrides, large_machine
):
    if any(o == f"data.data_dir={MULTI30K}" for o in overrides) and not HAVE_MULTI30K:
        pytest.skip(NO_MULTI30K)
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
    with pytest.raises(TypeError, match="a bug, not a setting"):
        check_config(cfg, HydraConfig.get())
    with pytest.raises(TypeError, match="a bug, not a setting"):
        run.train(cfg)


def test_a_library_constructors_refusal_is_a_config_error(compose_train):
    """Lightning checks the Trainer's arguments with ValueError; they are the user's."""
    with pytest.raises(ConfigError, match=re.escape("trainer: Precision 'bad' is invalid")):
        build.build(compose_train(["experiment=smoke", "trainer.precision=bad"]))


def test_a_local_multirun_refuses_ddp_with_a_clear_message(compose_train):
    cfg = compose_train(["trainer=ddp", "trainer.devices=2"])
    check_launcher(cfg, HydraConfig.get())  # a single run: fine
    with read_write(HydraConfig.get()):
        HydraConfig.get().mode = RunMode.MULTIRUN
    with pytest.raises(ConfigError, match=r"local multirun; allowed: .*hydra/launcher=slurm"):
        check_launcher(cfg, HydraConfig.get())
