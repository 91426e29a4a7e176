"""The gradient norm of each layer's weights by placement (Xiong et al., 2020, Figure 3):
drawn by the norm comparison at a run's start (:mod:`.norm_comparison`) and by the report
over a sweep's runs, free of Lightning, so that the report starts without it."""

from transformer_lab.callbacks.plotting import new_figure
from transformer_lab.callbacks.stacks import STACKS, WEIGHT_GROUPS

GradNorms = dict[str, dict[str, dict[str, list[float]]]]  # placement -> stack -> group -> [layer]


def grad_norm_by_layer_figure(grad_norm: GradNorms, title: str):
    """Rows: encoder, decoder; columns: FFN W1, W2, self- and cross-attention; one line per
    placement, the gradient norm against the layer (log scale)."""
    figure = new_figure(3.0 * len(WEIGHT_GROUPS), 5.0)
    figure.suptitle(title)
    axes = figure.subplots(len(STACKS), len(WEIGHT_GROUPS), squeeze=False)
    for row, stack in enumerate(STACKS):
        for col, group in enumerate(WEIGHT_GROUPS):
            ax = axes[row][col]
            curves = {p: s[stack][group] for p, s in grad_norm.items() if group in s[stack]}
            if not curves:
                ax.set_axis_off()
                continue
            layers = range(len(next(iter(curves.values()))))
            for placement, values in curves.items():
                ax.plot(layers, values, marker="o", label=placement)
            ax.set_yscale("log")
            ax.set_title(f"{stack} {group}", fontsize=9)
            ax.set_xlabel("layer")
            ax.set_xticks(layers)
            if col == 0:
                ax.set_ylabel("gradient norm")
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(handles, labels, loc="center", title="norm")  # the empty panel
    return figure
