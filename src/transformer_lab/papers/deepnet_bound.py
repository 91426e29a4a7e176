"""DeepNet (Wang et al., 2022), §4.2–4.3 and Figure 5: is DeepNorm's model update bounded in
depth while Post-LN's grows? Measured as the paper defines it, tested, not only drawn.

The paper's claim, in its words: §4.3 sets the GOAL "Fed(x, y, θe, θd) is updated by Θ(η) per
SGD step after initialization as η → 0", derives α and β from Theorem 4.3 so that it holds,
and reads Figure 5 ("Model updates of vanilla Post-LN and DEEPNET at the early stage of
training ... 64-128-2 tiny Transformers with depth varying from 6L-6L to 100L-100L") as:
"the model update of DEEPNET is nearly constant, while the model update of Post-LN is
exploding"; for Post-LN Theorem 4.3 gives ||ΔFed|| = O(M Σ_{2N} ||θ*_ei − θ_ei|| +
Σ_{3M} ||θ*_dj − θ_dj||), "the similar accumulative effect which leads to fast growth of the
magnitude regarding the model depth". §4.3: "Our analysis is based on SGD update, and we
empirically verify it works well for Adam optimizer".

The measurement (fixed in this file before its first run; see the commit that adds it):

- Models: the paper's 64-128-2 size (d_model 64, d_ff 128, 2 heads), N = M layers per stack
  at each of ``DEPTHS``, Xavier draws of ``init_seed = seed`` for each of ``SEEDS``; post-
  norm, DeepNorm and pre-norm (pre-norm for reference: the paper states nothing of it).
- F: the logits on one fixed probe batch of reverse (3–5 words, 32 examples), and
  ||ΔF|| the root mean square of their change, per element (the lab's DeepNet figure's).
- SGD, the theorem's setting: one plain SGD step of rate ``SGD_RATE`` on one training batch,
  in float64; the statistic is ||ΔF|| / η (the update per unit rate; η small enough that
  this is the η → 0 limit to three digits).
- AdamW, the paper's "works well for Adam": the lab's betas (0.9, 0.98), rate ``ADAM_RATE``,
  no warmup, ``ADAM_STEPS`` steps; the statistic is the largest ||F(x, θ_t) − F(x, θ_0)||
  over those steps ("an exploding update at the very beginning of training", §3).

The rule (fixed with the measurement): per seed, the slope b of log(statistic) against
log(depth) over ``DEPTHS`` (least squares); across the seeds, exact sign-flip tests (all
2^8 sign patterns, scipy.stats.permutation_test) on the per-seed slopes:

- **bounded** (DeepNorm, "nearly constant"): b within ±``MARGIN`` (a model 8× deeper
  changes its update by at most 8^0.25 = 1.68×), by two one-sided tests (TOST: p is the
  larger of the two);
- **grows** (Post-LN, "exploding"): b above ``MARGIN``, one-sided.

Four hypotheses (two claims × two optimisers), Holm over the four at 5%; each is
``supported`` when its adjusted p is at or below 0.05, else ``not shown`` (the data do not
support it; nothing is claimed against it). The slope interval (a t interval on the per-seed
slopes) and each depth's geometric mean are shown beside, for reading.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.stats import permutation_test
from statsmodels.stats.multitest import multipletests

from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.papers.measure import geometric_interval, model_kwargs, task_batches
from transformer_lab.report.statistics import estimate
from transformer_lab.training.loss import token_nll

DEPTHS = (6, 12, 24, 48)  # layers per stack: 6L-6L to 48L-48L (the paper's go to 100L-100L)
SEEDS = tuple(range(8))  # 2^8 sign patterns: an exact one-sided p can reach 1/256
PLACEMENTS = ("post", "deepnorm", "pre")
SGD_RATE = 1e-4
ADAM_RATE = 1e-3
ADAM_STEPS = 20
BETAS = (0.9, 0.98)  # conf/optim/adamw.yaml
MARGIN = 0.25  # |slope| of log update on log depth that counts as "nearly constant"
LEVEL = 0.05
OPTIMISERS = ("sgd", "adamw")


@dataclass(frozen=True)
class Claim:
    id: str
    placement: str
    optimiser: str
    shape: str  # "bounded" or "grows"
    source: str


CLAIMS = tuple(
    claim
    for optimiser in OPTIMISERS
    for claim in (
        Claim(
            f"deepnorm_update_bounded_{optimiser}",
            "deepnorm",
            optimiser,
            "bounded",
            "DeepNet §4.3 (GOAL: Θ(η) per SGD step; Figure 5: 'the model update of DEEPNET "
            "is nearly constant')",
        ),
        Claim(
            f"post_update_grows_{optimiser}",
            "post",
            optimiser,
            "grows",
            "DeepNet §4.2 Theorem 4.3 ('fast growth of the magnitude regarding the model "
            "depth') and §4.3, Figure 5 ('the model update of Post-LN is exploding')",
        ),
    )
)


def _model(depth: int, placement: str, seed: int) -> Seq2SeqTransformer:
    kwargs = model_kwargs(depth, 64, seed, placement) | {"num_heads": 2, "d_ff": 128}
    return Seq2SeqTransformer(**kwargs)


def _rms(change: torch.Tensor) -> float:
    return change.pow(2).mean().sqrt().item()


def sgd_update(model, batch, probe, rate: float = SGD_RATE) -> float:
    """||ΔF|| / η after one plain SGD step of rate η (``rate``), in float64."""
    model = model.double()
    with torch.no_grad():
        start = model(probe["src"], probe["tgt_in"])  # [B, T, V]
    token_nll(model(batch["src"], batch["tgt_in"]), batch["tgt_out"]).backward()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.grad is not None:
                parameter -= rate * parameter.grad
        return _rms(model(probe["src"], probe["tgt_in"]) - start) / rate


def adamw_update(model, batches, probe) -> float:
    """The largest ||F(x, θ_t) − F(x, θ_0)|| over :data:`ADAM_STEPS` AdamW steps."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=ADAM_RATE, betas=BETAS)
    with torch.no_grad():
        start = model(probe["src"], probe["tgt_in"])
    largest = 0.0
    for batch in batches:
        optimizer.zero_grad()
        token_nll(model(batch["src"], batch["tgt_in"]), batch["tgt_out"]).backward()
        optimizer.step()
        with torch.no_grad():
            largest = max(largest, _rms(model(probe["src"], probe["tgt_in"]) - start))
    return largest


def measure_one(depth: int, placement: str, seed: int) -> dict[str, float]:
    """``{"sgd": ..., "adamw": ...}`` for one model (the same draws under both optimisers)."""
    train = task_batches(ADAM_STEPS, 32, seed)
    probe = task_batches(1, 32, 10_000 + seed)[0]  # disjoint seed: held apart from training
    return {
        "sgd": sgd_update(_model(depth, placement, seed), train[0], probe),
        "adamw": adamw_update(_model(depth, placement, seed), train, probe),
    }


def measure(depths=DEPTHS, seeds=SEEDS, placements=PLACEMENTS) -> dict:
    """``{placement: {optimiser: {depth: [statistic per seed]}}}``."""
    result = {p: {o: {d: [] for d in depths} for o in OPTIMISERS} for p in placements}
    for placement in placements:
        for depth in depths:
            for seed in seeds:
                for optimiser, value in measure_one(depth, placement, seed).items():
                    result[placement][optimiser][depth].append(value)
    return result


def slopes(by_depth: dict[int, list[float]]) -> list[float]:
    """Per seed, the least-squares slope of log(statistic) on log(depth)."""
    depths = sorted(by_depth)
    x = np.log(depths)
    per_seed = zip(*(by_depth[d] for d in depths), strict=True)
    return [float(np.polyfit(x, np.log(values), 1)[0]) for values in per_seed]


def sign_flip_p(values: list[float], alternative: str) -> float:
    """Exact one-sided sign-flip p that the values' mean is above (``greater``) or below
    (``less``) zero: every sign pattern, the smallest reachable p 1 / 2^n."""
    result = permutation_test(
        (np.asarray(values),),
        np.mean,
        permutation_type="samples",
        alternative=alternative,
        n_resamples=math.inf,
    )
    return float(result.pvalue)


def raw_p(claim: Claim, b: list[float]) -> float:
    if claim.shape == "grows":
        return sign_flip_p([v - MARGIN for v in b], "greater")
    below = sign_flip_p([v - MARGIN for v in b], "less")
    above = sign_flip_p([v + MARGIN for v in b], "greater")
    return max(below, above)  # TOST: both one-sided tests must reject


def judge(result: dict) -> list[dict]:
    """Each claim's slopes, interval, raw and Holm-adjusted p and verdict."""
    rows = []
    for claim in CLAIMS:
        b = slopes(result[claim.placement][claim.optimiser])
        interval = estimate(b)
        rows.append(
            {
                "id": claim.id,
                "placement": claim.placement,
                "optimiser": claim.optimiser,
                "shape": claim.shape,
                "source": claim.source,
                "slopes": b,
                "slope": interval.mean,
                "slope_interval": [interval.low, interval.high],
                "p": raw_p(claim, b),
            }
        )
    adjusted = multipletests([row["p"] for row in rows], alpha=LEVEL, method="holm")[1]
    for row, p in zip(rows, adjusted, strict=True):
        row["p_holm"] = float(p)
        row["verdict"] = "supported" if p <= LEVEL else "not shown"
    return rows


def draw(result: dict, verdicts: list[dict], path: Path) -> Path:
    figure = new_figure(11.0, 4.2)
    axes = figure.subplots(1, 2)
    titles = {
        "sgd": f"one SGD step, ||ΔF|| / η (η = {SGD_RATE:g}, float64)",
        "adamw": f"AdamW lr {ADAM_RATE:g}, no warmup: largest ||ΔF|| in {ADAM_STEPS} steps",
    }
    slope_of = {(v["placement"], v["optimiser"]): v for v in verdicts}
    for ax, optimiser in zip(axes, OPTIMISERS, strict=True):
        for placement, by_optimiser in result.items():
            by_depth = by_optimiser[optimiser]
            depths = sorted(by_depth)
            rows = [geometric_interval(by_depth[d]) for d in depths]
            b = slopes(by_depth)
            label = f"{placement} (slope {sum(b) / len(b):+.2f})"
            verdict = slope_of.get((placement, optimiser))
            if verdict:
                label += f": {verdict['shape']} {verdict['verdict']}"
            ax.plot(depths, [r[0] for r in rows], marker="o", label=label)
            ax.fill_between(depths, [r[1] for r in rows], [r[2] for r in rows], alpha=0.25)
        ax.set(xscale="log", yscale="log", xlabel="layers per stack", xticks=depths)
        ax.set_xticklabels([str(d) for d in depths])
        ax.set_title(titles[optimiser], fontsize=9)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("model update (rms logit change)")
    figure.suptitle(
        "DeepNet §4.2-4.3, Figure 5 on the lab's 64-128-2 model: DeepNorm's update 'nearly "
        f"constant', Post-LN's 'exploding'? slope of log update on log depth, |b| <= {MARGIN}"
        f" = bounded\ngeometric mean over {len(SEEDS)} seeds, 95% band; Holm over the four "
        "claims",
        fontsize=9,
    )
    return save_png(figure, path)


def run(out: Path, depths=DEPTHS, seeds=SEEDS) -> Path:
    """Measures, judges, draws ``out`` (a PNG) and writes the numbers beside it (``.json``)."""
    result = measure(depths, seeds)
    verdicts = judge(result)
    record = {"figure": "deepnet_bound", "depths": list(depths), "seeds": list(seeds)}
    record |= {"margin": MARGIN, "sgd_rate": SGD_RATE, "adam_rate": ADAM_RATE}
    record |= {"adam_steps": ADAM_STEPS, "verdicts": verdicts}
    record["runs"] = {
        p: {o: {str(d): v for d, v in by_depth.items()} for o, by_depth in by_opt.items()}
        for p, by_opt in result.items()
    }
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    return draw(result, verdicts, out)
