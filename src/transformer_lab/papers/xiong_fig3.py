"""Xiong et al. (2020), §3.4, Figure 3: the gradient norm of each layer's FFN W2 at init.

Their claim (abstract): "for the original-designed Post-LN Transformer ... the expected
gradients of the parameters near the output layer are large", while under Pre-LN "the
gradients are well-behaved at initialization". Their figure (§3.4, ten seeds): 3(a)/(b),
the Frobenius norm of each FFN matrix's gradient expected over mini-batches in a 6-6 model,
"grows along with the layer index for the Post-LN Transformer" and "almost keeps the same"
for Pre-LN; 3(c)/(d), the last FFN W2's gradient in 6-6 to 14-14 models, "remains" for
Post-LN and "decreases" for Pre-LN (§3.3's Theorem 1). The shape to compare with:
post-norm's W2 gradient grows toward the output layer, pre-norm's stays flat across
layers; and as the model gets deeper, post-norm's last-layer gradient stays while
pre-norm's shrinks.

Here: for each depth and seed, the post- and pre-norm twins of one Xavier draw
(:func:`~transformer_lab.callbacks.norm_comparison.measure_twins`, as the norm-comparison
callback measures a run), the gradient expected over ``batches`` batches of reverse (data
drawn per seed), so the figure's centre is over seeds of init and data; the band is the
95% interval of the geometric mean over seeds.
"""

import json
from pathlib import Path

from transformer_lab.callbacks.norm_comparison import measure_twins
from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.papers.measure import geometric_interval, model_kwargs, task_batches

PLACEMENTS = ("post", "pre")
STACKS = ("encoder", "decoder")


def measure(depths, seeds, batches=8, batch_size=32, d_model=64) -> dict:
    """``{depth: {placement: {stack: [[W2 gradient norm per layer] per seed]}}}``."""
    result = {}
    for depth in depths:
        by_placement = {p: {s: [] for s in STACKS} for p in PLACEMENTS}
        for seed in seeds:
            data = task_batches(batches, batch_size, seed)
            grads = measure_twins(model_kwargs(depth, d_model, seed), PLACEMENTS, data, 0)
            for placement in PLACEMENTS:
                for stack in STACKS:
                    by_placement[placement][stack].append(
                        grads["grad_norm"][placement][stack]["ffn.w2"]
                    )
        result[depth] = by_placement
    return result


def by_layer(per_seed: list[list[float]]) -> list[tuple[float, float, float]]:
    """Per layer ``(centre, low, high)`` over seeds."""
    return [geometric_interval(list(values)) for values in zip(*per_seed, strict=True)]


def last_layer(result: dict, placement: str, stack: str = "decoder") -> list[tuple]:
    """Per depth ``(centre, low, high)`` of the last layer's W2 gradient norm."""
    return [
        geometric_interval([seed[-1] for seed in result[d][placement][stack]])
        for d in sorted(result)
    ]


def _band(ax, xs, rows, label):
    centre = [r[0] for r in rows]
    ax.plot(xs, centre, marker="o", label=label)
    ax.fill_between(xs, [r[1] for r in rows], [r[2] for r in rows], alpha=0.25)


def draw(result: dict, seeds: int, path: Path) -> Path:
    deepest = max(result)
    figure = new_figure(13.0, 4.2)
    axes = figure.subplots(1, 3)
    for ax, stack in zip(axes[:2], STACKS, strict=True):
        for placement in PLACEMENTS:
            _band(ax, range(deepest), by_layer(result[deepest][placement][stack]), placement)
        ax.set(yscale="log", xlabel=f"{stack} layer (0 = nearest the input)")
        ax.set_title(f"{stack} FFN W2, {deepest}+{deepest} layers", fontsize=9)
    axes[0].set_ylabel("gradient norm at init")
    depths = sorted(result)
    for placement in PLACEMENTS:
        _band(axes[2], depths, last_layer(result, placement), placement)
    axes[2].set(yscale="log", xlabel="layers per stack", xticks=depths)
    axes[2].set_title("last decoder layer's FFN W2 against depth", fontsize=9)
    axes[2].legend(title="norm")
    figure.suptitle(
        "Xiong et al. (2020) Figure 3, this lab. Paper's shape: post grows toward the output, "
        "pre flat.\n"
        f"Reverse, gradient expected over batches; geometric mean over {seeds} seeds, 95% band",
        fontsize=9,
    )
    return save_png(figure, path)


def run(out: Path, depths, seeds, batches: int, batch_size: int, d_model: int) -> Path:
    """Measures, draws ``out`` (a PNG) and writes the numbers beside it (``.json``)."""
    result = measure(depths, seeds, batches, batch_size, d_model)
    record = {
        "figure": "xiong_fig3",
        "seeds": list(seeds),
        "batches": batches,
        "batch_size": batch_size,
        "d_model": d_model,
        "w2_grad_norm": result,
    }
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    return draw(result, len(seeds), out)
