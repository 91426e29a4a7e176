"""An experiment's hypotheses are checked at the sweep's start, before any folder: a rule the
sweep cannot evaluate gets one line naming its field and exit status 2; every bundled
experiment's hypotheses pass."""

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.sweep.checks import ConfigCheck
from transformer_lab.sweep.hypotheses import check_against_sweep, parse_hypotheses

from ..conftest import CONF_DIR
from ..real_corpora import MULTI30K, needs_multi30k
from .conftest import refusal

pytestmark = pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}")

EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
FIRST = "hypotheses.deep_post_needs_warmup"  # of experiment=norm_comparison


@pytest.mark.slow
@pytest.mark.parametrize(
    "experiment",
    [
        pytest.param(e, marks=needs_multi30k) if "multi30k" in e else e
        for e in EXPERIMENTS
        # regime's first stage is 864 jobs (40 s to compose): tests/config/test_regime.py
        # checks its rules against every cell and the metrics its jobs report
        if e not in ("paper_base", "regime")
    ],
)
def test_every_bundled_experiments_hypotheses_can_be_evaluated_by_its_sweep(
    sweep_config, experiment
):
    corpus = [f"data.data_dir={MULTI30K}"] if "multi30k" in experiment else []
    ConfigCheck().on_multirun_start(sweep_config([f"experiment={experiment}", *corpus]))


REFUSED = [
    (
        "hypotheses.0.key=optim.lr",
        f"{FIRST}.key='optim.lr': the sweep does not vary it; allowed: depth, model.norm, "
        "optim.schedule, or hypotheses=[] to judge none",
    ),
    (
        "hypotheses.0.values=[linear_warmup,noam]",
        f"{FIRST}.values='noam': the sweep does not run optim.schedule=noam; allowed: "
        "constant, linear_warmup",
    ),
    (
        "hypotheses.0.fixed.depth=4",
        f"{FIRST}.fixed.depth='4': the sweep does not run depth=4; allowed: 2, 6",
    ),
    (  # norm_comparison has no test_long split
        "hypotheses.0.metric=test_long/seq_acc",
        f"{FIRST}.metric='test_long/seq_acc': no job of the sweep reports it; allowed: "
        "test/loss, test/oracle_seq_acc, test/oracle_token_acc, test/ppl, test/seq_acc, "
        "test/token_acc, train/clip_fraction, "
        "train/grad_norm_max, train/loss_spikes, val/loss, val/ppl, val/seq_acc, "
        "val/seq_acc_auc, val/seq_acc_best, val/token_acc",
    ),
    (
        "hypotheses.0.metric=val/acc",
        f"{FIRST}.metric='val/acc': not a metric a run reports; allowed: outcome/learned, "
        "outcome/learned@<step> (outcome.at_steps), "
        "<val|test|test_long>/<loss|ppl|token_acc|seq_acc|bleu|bleu_lc|chrf>, "
        "<test|test_long>/<oracle_seq_acc|oracle_token_acc>, val/seq_acc_best, val/seq_acc_auc, "
        "train/clip_fraction, train/grad_norm_max or train/loss_spikes",
    ),
    (
        "hypotheses.0.predicted=A worse",
        f"{FIRST}.predicted='A worse': unknown; allowed: A better, B better or equivalent",
    ),
    (
        "~hypotheses.0.claim",
        "hypotheses[0].claim=None: missing; allowed: id, claim, source, metric, key, values, "
        "fixed, predicted, margin, diverged_value, across, family",
    ),
    (
        "hypotheses.1.id=deep_post_needs_warmup",
        "hypotheses.deep_post_needs_warmup='At 6+6 layers without warmup, pre-norm learns "
        "faster than post-norm.': stated twice; allowed: one rule per id",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("override", "message"), REFUSED, ids=[o for o, _ in REFUSED])
def test_a_hypothesis_the_sweep_cannot_evaluate_is_refused_in_one_line(
    sweep_config, capsys, tmp_path, override, message
):
    config = sweep_config(
        ["experiment=norm_comparison", override, f"paths.outputs_root={tmp_path}"]
    )
    assert refusal(capsys, config) == f"error: {message}"
    assert list(tmp_path.iterdir()) == []  # before the sweep folder


def test_a_single_run_checks_the_format_only(sweep_config, capsys):
    """A run of an experiment without -m has no sweep to compare in: its hypotheses need
    only be well formed."""
    ConfigCheck().on_run_start(sweep_config(["experiment=norm_comparison"], multirun=False))
    bad = ["experiment=norm_comparison", "hypotheses.1.predicted=maybe"]
    with pytest.raises(SystemExit):
        ConfigCheck().on_run_start(sweep_config(bad, multirun=False))
    assert capsys.readouterr().err == (
        "error: hypotheses.deep_pre_beats_post_without_warmup.predicted='maybe': unknown; allowed: "
        "A better, B better or equivalent\n"
    )


def test_the_values_compared_must_run_together_with_the_fixed_ones():
    """A folder that gathers two sweeps need not hold every combination."""
    [hypothesis] = parse_hypotheses(
        [
            {
                "id": "h",
                "claim": "c",
                "source": "s",
                "metric": "val/loss",
                "key": "model/norm",
                "values": ["pre", "post"],
                "fixed": {"optim.lr": 1e-3},
                "predicted": "A better",
            }
        ]
    )
    jobs = [
        {"model.norm": "pre", "optim.lr": "1e-3", "seed": "0"},
        {"model.norm": "post", "optim.lr": "1e-2", "seed": "0"},
    ]
    with pytest.raises(InvalidSetting) as error:
        check_against_sweep([hypothesis], jobs)
    assert str(error.value) == (
        "hypotheses.h.fixed={'optim.lr': '0.001'}: no job runs model.norm=post with "
        "optim.lr=0.001; allowed: values run together"
    )
    jobs.append({"model.norm": "post", "optim.lr": "1e-3", "seed": "0"})
    check_against_sweep([hypothesis], jobs)  # 1e-3 is 0.001
