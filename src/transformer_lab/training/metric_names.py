"""The metrics a run reports, by name, and which way each is better: what
``optimized_metric`` may name (a sweeper optimizes it, :mod:`transformer_lab.sweep.objective`)
and what a hypothesis may compare (:mod:`transformer_lab.sweep.hypotheses`).
"""

STAGES = ("val", "test", "test_long")  # test_long: with a data.test_long_size split
STAGE_METRICS = ("loss", "ppl", "token_acc", "seq_acc")  # of each stage (module.py)
# of each stage too, for data read by a tokenizer (0-100); bleu_lc: lowercased (text_metrics.py)
TEXT_METRICS = ("bleu", "bleu_lc", "chrf")
TEST_STAGES = ("test", "test_long")
# of the test stages only: greedy decoding forced to the target's length (training/metrics.py)
ORACLE_METRICS = ("oracle_seq_acc", "oracle_token_acc")
CURVE_METRICS = ("val/seq_acc_best", "val/seq_acc_auc")  # runs/learning_curve.py
STABILITY_METRICS = (  # callbacks/training_stability.py: fewer, smaller is better
    "train/clip_fraction",
    "train/grad_norm_max",
    "train/loss_spikes",
)
METRIC_NAMES = frozenset(
    [f"{s}/{m}" for s in STAGES for m in (*STAGE_METRICS, *TEXT_METRICS)]
    + [f"{s}/{m}" for s in TEST_STAGES for m in ORACLE_METRICS]
    + [*CURVE_METRICS, *STABILITY_METRICS]
)
METRIC_CHOICES = (
    "<val|test|test_long>/<loss|ppl|token_acc|seq_acc|bleu|bleu_lc|chrf>, "
    "<test|test_long>/<oracle_seq_acc|oracle_token_acc>, val/seq_acc_best, val/seq_acc_auc, "
    "train/clip_fraction, train/grad_norm_max or train/loss_spikes"
)
LOWER_IS_BETTER = ("loss", "ppl", *(name.split("/")[1] for name in STABILITY_METRICS))


def is_metric(name: str) -> bool:
    """Whether ``name`` is a metric a run reports (:data:`METRIC_CHOICES`)."""
    return name in METRIC_NAMES


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric ``name`` is better: accuracies (fractions in
    [0, 1], the worst 0) and what their curve says; not losses, perplexities and the
    training's clipped steps, gradient norm and loss spikes. A name that is no metric
    counts as a fraction, higher better."""
    return not is_metric(name) or name.split("/")[1] not in LOWER_IS_BETTER


def check_optimized_metric(name: str, direction: str | None = None) -> None:
    """Raise ValueError unless ``name`` is a metric a run reports, optimized the right way."""
    if not is_metric(name):
        raise ValueError(
            f"optimized_metric={name!r} is not a metric a run reports; allowed: {METRIC_CHOICES}"
        )
    natural = "maximize" if higher_is_better(name) else "minimize"
    if direction is not None and direction != natural:
        raise ValueError(
            f"optimized_metric={name} is to {natural}, but hydra.sweeper.direction="
            f"{direction}; allowed: hydra.sweeper.direction={natural}"
        )


# the metrics whose value is a fraction in [0, 1], higher better: accuracies and their curve
FRACTION_METRICS = frozenset(
    name
    for name in METRIC_NAMES
    if name.split("/")[1]
    in ("token_acc", "seq_acc", *ORACLE_METRICS, "seq_acc_best", "seq_acc_auc")
)


def metric_range(name: str) -> tuple[float | None, float | None]:
    """The values ``name`` can take, ``(low, high)`` (None: unbounded), so that an interval
    of its mean stays inside them: fractions in [0, 1], BLEU and chrF in [0, 100], losses,
    perplexities, gradient norms and counts at 0 or above."""
    if name in FRACTION_METRICS or name.endswith("clip_fraction"):
        return 0.0, 1.0
    if name.endswith(TEXT_METRICS):
        return 0.0, 100.0
    if is_metric(name):
        return 0.0, None
    return None, None


def length_series(metrics: dict[str, float], split: str) -> dict[int, float]:
    """``{words: seq_acc}`` of ``split`` from metrics named ``<split>/seq_acc_by_len/<n>``
    (a test stage's exact match by source length: training/metrics.py)."""
    prefix = f"{split}/seq_acc_by_len/"
    return {int(k[len(prefix) :]): float(v) for k, v in metrics.items() if k.startswith(prefix)}
