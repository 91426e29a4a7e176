"""DeepNet (Wang et al., 2022), §3, Figure 4 and §4.2, Figure 5: the model update over the
first steps of training, and the decoder's gradient after them.

Their account (§3, Figure 4, 18L-18L on IWSLT-14): "Post-LN has an exploding update at the
very beginning of training, and then nearly no update shortly"; the inputs to the
LayerNorms grow, and a LayerNorm's gradient falls with its input's scale, hence "the
gradient vanishing problem" (Figure 4(d), the gradient norm in all decoder layers; which
layers it hits most is the figure's, not the text's). §4.2, Figure 5 (6L-6L to 100L-100L):
Post-LN's update grows with depth, DeepNorm's (the residual up-weighted by ``alpha``, the
branches initialised smaller by ``beta``) is "much smaller and more stable". The shape to
compare with: post-norm's first updates are large and grow with depth, DeepNorm's are
small; after them post-norm's decoder gradient is small.

Here: for each depth, placement and seed, AdamW (the lab's betas) at a constant rate with
no warmup trains the model on reverse; the model update at step t is the root mean square
of ``F(x, theta_t) - F(x, theta_0)`` on one fixed probe batch (F: the logits), DeepNet's
``||F(x, theta_t) - F(x, theta_0)||`` per element; after the last step the decoder's
gradient, expected over the probe batches, is measured per layer (all of a layer's
weight matrices as one vector). Centres are geometric means over seeds, bands 95%.
"""

import json
from pathlib import Path

import torch

from transformer_lab.callbacks.norm_comparison import expected_gradient
from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.callbacks.stacks import global_norm
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.papers.measure import geometric_interval, model_kwargs, task_batches
from transformer_lab.training.loss import token_nll

PLACEMENTS = ("post", "pre", "deepnorm")
BETAS = (0.9, 0.98)  # conf/model/transformer.yaml


def decoder_gradient(model, probes) -> list[float]:
    """Per decoder layer, the norm of its weight matrices' gradient expected over ``probes``."""
    model.zero_grad()
    expected_gradient(model, probes)
    norms = [
        global_norm([p.grad for p in layer.parameters() if p.dim() >= 2])
        for layer in model.decoder_layers
    ]
    model.zero_grad()
    return norms


def one_run(depth: int, placement: str, seed: int, steps: int, lr: float, d_model: int) -> dict:
    """``{"update": [rms logit change after step 1..steps], "decoder_grad_init": [per
    layer, before the first step], "decoder_grad": [per layer, after the last]}``."""
    model = Seq2SeqTransformer(**model_kwargs(depth, d_model, seed, placement))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=BETAS)
    train = task_batches(steps, 32, seed)
    probes = task_batches(4, 32, 10_000 + seed)  # disjoint seed: held apart from training
    probe = probes[0]
    at_init = decoder_gradient(model, probes)
    with torch.no_grad():
        start = model(probe["src"], probe["tgt_in"])  # [B, T, V]
    updates = []
    for batch in train:
        optimizer.zero_grad()
        token_nll(model(batch["src"], batch["tgt_in"]), batch["tgt_out"]).backward()
        optimizer.step()
        with torch.no_grad():
            change = model(probe["src"], probe["tgt_in"]) - start
        updates.append(change.pow(2).mean().sqrt().item())
    return {
        "update": updates,
        "decoder_grad_init": at_init,
        "decoder_grad": decoder_gradient(model, probes),
    }


def measure(depths, seeds, steps=30, lr=3e-3, d_model=32) -> dict:
    """``{depth: {placement: [one_run per seed]}}``."""
    return {
        depth: {p: [one_run(depth, p, s, steps, lr, d_model) for s in seeds] for p in PLACEMENTS}
        for depth in depths
    }


def _band(ax, xs, rows, label):
    (line,) = ax.plot(xs, [r[0] for r in rows], marker="o", markersize=3, label=label)
    ax.fill_between(xs, [r[1] for r in rows], [r[2] for r in rows], alpha=0.25)
    return line


def centre(runs: list[dict], field: str) -> list[tuple[float, float, float]]:
    """Per step (or layer) ``(centre, low, high)`` of ``field`` over the seeds' runs."""
    return [geometric_interval(list(v)) for v in zip(*(r[field] for r in runs), strict=True)]


def draw(result: dict, seeds: int, lr: float, path: Path) -> Path:
    deepest, depths = max(result), sorted(result)
    steps = len(result[deepest][PLACEMENTS[0]][0]["update"])
    figure = new_figure(13.0, 4.2)
    axes = figure.subplots(1, 3)
    for placement in PLACEMENTS:
        runs = result[deepest][placement]
        _band(axes[0], range(1, steps + 1), centre(runs, "update"), placement)
        first = [centre(result[d][placement], "update")[0] for d in depths]
        _band(axes[1], depths, first, placement)
        line = _band(axes[2], range(deepest), centre(runs, "decoder_grad"), placement)
        at_init = [c for c, _, _ in centre(runs, "decoder_grad_init")]
        axes[2].plot(range(deepest), at_init, linestyle="--", color=line.get_color())
    axes[0].set(yscale="log", xlabel="step", ylabel="model update (rms logit change)")
    axes[0].set_title(f"model update over the first steps, {deepest}+{deepest}", fontsize=9)
    axes[1].set(yscale="log", xlabel="layers per stack", xticks=depths)
    axes[1].set_title("model update after the first step, by depth", fontsize=9)
    axes[2].set(yscale="log", xlabel="decoder layer (0 = nearest the input)")
    axes[2].set_ylabel("gradient norm")
    axes[2].set_title(
        f"decoder gradient after {steps} steps (dashed: at init), {deepest}+{deepest}", fontsize=9
    )
    axes[2].legend(title="norm")
    figure.suptitle(
        "DeepNet (Wang et al. 2022) Fig. 4-5, this lab. Paper's shape: post-norm's early update "
        "large, then its decoder gradient small; DeepNorm's update small.\n"
        f"AdamW lr {lr:g}, no warmup, reverse; geometric mean over {seeds} seeds, 95% band",
        fontsize=9,
    )
    return save_png(figure, path)


def run(out: Path, depths, seeds, steps: int, lr: float, d_model: int) -> Path:
    """Measures, draws ``out`` (a PNG) and writes the numbers beside it (``.json``)."""
    result = measure(depths, seeds, steps, lr, d_model)
    record = {"figure": "deepnet_update", "seeds": list(seeds), "steps": steps, "lr": lr}
    record |= {"d_model": d_model, "runs": result}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    return draw(result, len(seeds), lr, out)
