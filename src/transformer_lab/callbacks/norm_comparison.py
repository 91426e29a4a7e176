"""Post- vs pre-norm (and every other placement) at initialisation, on twins of the run's model.

Xiong et al. (2020, "On Layer Normalization in the Transformer Architecture", §3.4,
Figure 3) measured the gradient norm of each layer's weights at initialisation: post-norm
gradients grow toward the output layers, pre-norm gradients stay roughly flat across depth
(and shrink as the model gets deeper), which they hypothesise is "one of the reasons" that
post-norm needs a learning-rate warmup. Liu et al. (2020,
"Understanding the Difficulty of Training Transformers") measured how much the output moves
under a small random change of the parameters: more for post-norm, more with depth.

At fit start this callback builds one twin of the run's model per placement: the run's
hyper-parameters with both stacks at that placement and the same ``init_seed``, so every
twin has the same Xavier draws (deepnorm's scaled by its beta). A run whose stacks have
placements of their own (``model.encoder.norm``/``model.decoder.norm``, e.g. Liu et al.'s
post-norm encoder with a pre-norm decoder) gets the same twins as a run of one placement:
the comparison is of the placements on the run's architecture, not of the run's hybrid
(its own per-layer gradients are the layer statistics' business). The record's ``model``
is what the twins share, per-stack placements left to ``norm``, so the report counts a
hybrid run's twins with those of its architecture. It measures both quantities and logs
them (TensorBoard scalars with the layer as the step, one figure,
and ``norm_comparison.json`` in the run folder for the sweep report). The twins are built under
a forked RNG and never touch the run's model: the run trains exactly as without it.
Admin's twin is measured as a run starts it: its omegas profiled on the first measured
batch (:func:`~transformer_lab.model.admin.profile_admin`; a run profiles on its first
training batch). Unprofiled, its omegas are 1 and it is post-norm weight for weight.

The gradient is the expected gradient over ``batches`` training batches (their gradients
summed and divided by their number: the gradient of the mean loss), not one batch's: what
Xiong et al. plot (§3.4, Figure 3(a)/(b)) is the Frobenius norm of the gradient expected
over mini-batches, and one batch's gradient carries that batch's noise, larger the smaller
the batch.

**Bounded in work, so start-up stays seconds.** The twins' forward and backward passes cost
at most ``6 x parameters x tokens`` floating-point operations each (Kaplan et al., 2020; an
upper bound here, as each token of an encoder-decoder passes one of its stacks):
nothing for the lab's synthetic models (8 batches of 64 on a 0.2 M-parameter model: some
40 GFLOP for the four placements), but minutes of a 2-core CPU before the first step for
a real one (Multi30k's 11.7 M parameters: 4 TFLOP). So the examples measured are the
first of the ``batch_size x batches`` that keep the estimate within ``max_gflop``
(:func:`examples_within`; at least one), fewer batches where fewer examples remain; the
record says how many it used and what the estimate was, and a log line says when the
budget cut them. The synthetic models' measurements are those of the full count, as
before; ``max_gflop=null`` measures every example whatever it costs.
"""

import logging
from pathlib import Path

import lightning as L
import torch

from transformer_lab.callbacks.norm_figure import grad_norm_by_layer_figure
from transformer_lab.callbacks.publishing import figure_hook, log_tensorboard_scalars, publish
from transformer_lab.callbacks.stacks import (
    global_norm,
    stacks,
    weight_groups,
)
from transformer_lab.config.validation import check_integer, check_number
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.admin import needs_profiling, profile_admin
from transformer_lab.model.residual import NORM_PLACEMENTS
from transformer_lab.records import write_json
from transformer_lab.tokens import PAD
from transformer_lab.training.loss import token_nll

log = logging.getLogger(__name__)


PER_STACK_NORMS = ("encoder_norm", "decoder_norm")


def twin_kwargs(kwargs: dict, placement: str) -> dict:
    """The run's model arguments ``kwargs`` with both stacks at ``placement``."""
    return {**kwargs, "norm": placement} | dict.fromkeys(PER_STACK_NORMS)


@torch.no_grad()
def output_change(model, batch, logits: torch.Tensor, scale: float, seed: int) -> float:
    """Mean squared change of the logits when every weight matrix ``W`` gets
    ``scale * std(W) * N(0, 1)`` noise; the noise is the same for every placement."""
    generator = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        if p.dim() >= 2:
            noise = torch.randn(p.shape, generator=generator).to(p.device)
            p.add_(noise * (scale * p.std()))
    return (model(batch["src"], batch["tgt_in"]) - logits).pow(2).mean().item()


def estimated_gflop(parameters: int, tokens: int) -> float:
    """A forward and backward pass over ``tokens`` (sources' and targets' together) of a
    model of ``parameters``: ``6 x parameters x tokens`` operations, in GFLOP."""
    return 6 * parameters * tokens / 1e9


def examples_within(batch, parameters: int, placements: int, max_gflop: float | None) -> int:
    """How many of ``batch``'s examples, the first ones, the twins of ``placements``
    placements measure within ``max_gflop`` (None: all of them); at least one."""
    tokens = (batch["src"] != PAD).sum(dim=1) + (batch["tgt_in"] != PAD).sum(dim=1)  # [N]
    if max_gflop is None:
        return len(tokens)
    spent = placements * estimated_gflop(parameters, 1) * torch.cumsum(tokens, 0)  # [N]
    return max(1, int((spent <= max_gflop).sum()))


def split_batch(batch, count: int) -> list[dict]:
    """``batch`` cut into ``count`` batches of (nearly) equal size, in order."""
    return [
        dict(zip(batch, part, strict=True))
        for part in zip(*(v.tensor_split(count) for v in batch.values()), strict=True)
    ]


def expected_gradient(model, batches) -> float:
    """Leaves in every parameter's ``.grad`` the mean of its gradient over ``batches``
    (the gradient of the mean loss) and returns that mean loss."""
    total = 0.0
    for batch in batches:
        loss = token_nll(model(batch["src"], batch["tgt_in"]), batch["tgt_out"]) / len(batches)
        loss.backward()  # gradients add up over the batches
        total += loss.item()
    return total


def measure_twins(kwargs: dict, placements, batches, perturbation: float, device="cpu") -> dict:
    """``{"loss", "grad_norm", "output_change"}`` per placement, for twins built from ``kwargs``:
    the gradient expected over ``batches`` (a list of batches), the output change on the first.

    Twins run in eval mode (no dropout): the measurement is of the function, not of noise.
    """
    batches = [{k: v.to(device) for k, v in batch.items()} for batch in batches]
    batch = batches[0]
    results = {"loss": {}, "grad_norm": {}, "output_change": {}}
    with torch.random.fork_rng(devices=[]):  # nn.Linear's own init draws from the global RNG
        for placement in placements:
            twin = Seq2SeqTransformer(**twin_kwargs(kwargs, placement)).to(device).eval()
            if needs_profiling(twin):  # Admin: its omegas as a run sets them
                profile_admin(twin, batch["src"], batch["tgt_in"])
            results["loss"][placement] = expected_gradient(twin, batches)
            results["grad_norm"][placement] = {
                stack: {
                    group: [
                        global_norm([p.grad for p in weight_groups(layer)[group]])
                        for layer in layers
                    ]
                    for group in weight_groups(layers[0])
                }
                for stack, layers in stacks(twin).items()
            }
            if perturbation > 0:
                with torch.no_grad():
                    logits = twin(batch["src"], batch["tgt_in"])  # [B, T, V]
                results["output_change"][placement] = output_change(
                    twin, batch, logits, perturbation, kwargs["init_seed"]
                )
    return results


class NormComparison(L.Callback):
    """Measures every placement in ``placements`` (None: every registered one) on twins at
    fit start (see module doc).

    ``batches`` batches of ``batch_size`` training examples (the datamodule's fixed first
    ones) give the expected gradient, as many of them as the twins measure within
    ``max_gflop`` (None: all; see the module doc); ``perturbation`` is the relative noise
    of the output-change measurement (0: skip it).
    """

    def __init__(
        self,
        placements=None,
        batch_size: int = 64,
        batches: int = 8,
        perturbation=0.01,
        max_gflop: float | None = 100.0,
    ):
        placements = NORM_PLACEMENTS if placements is None else placements  # None: every one
        for placement in placements:
            NORM_PLACEMENTS.lookup(placement, "placements")
        check_integer("batches", batches, minimum=1)
        if max_gflop is not None:
            check_number("max_gflop", max_gflop, above=0)
        self.placements = list(placements)
        self.batch_size = batch_size
        self.batches = batches
        self.perturbation = perturbation
        self.max_gflop = max_gflop

    def _batches(self, trainer: L.Trainer, pl_module: L.LightningModule):
        """The batches the twins measure (the first examples within ``max_gflop``) and the
        estimate of their cost, in GFLOP for all the placements."""
        asked = self.batch_size * self.batches
        examples = trainer.datamodule.sample("train", asked)
        parameters = sum(p.numel() for p in pl_module.model.parameters())
        kept = examples_within(examples, parameters, len(self.placements), self.max_gflop)
        if kept < len(examples["src"]):
            log.info(
                "norm comparison: the first %d of %d training examples, to keep the twins' "
                "passes within callbacks.norm_comparison.max_gflop=%g (%.1f M parameters, "
                "%d placements); raise it, or null, to measure more",
                kept,
                asked,
                self.max_gflop,
                parameters / 1e6,
                len(self.placements),
            )
            examples = {key: value[:kept] for key, value in examples.items()}
        tokens = int((examples["src"] != PAD).sum() + (examples["tgt_in"] != PAD).sum())
        gflop = len(self.placements) * estimated_gflop(parameters, tokens)
        return split_batch(examples, min(self.batches, kept)), gflop

    @figure_hook
    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        kwargs = pl_module.model.config.keywords()
        own = {key: kwargs[key] for key in PER_STACK_NORMS if kwargs.get(key) is not None}
        if own:
            log.info(
                "the norm comparison's twins put both stacks at each placement, not at the "
                "run's own %s",
                ", ".join(f"{key}={value}" for key, value in own.items()),
            )
        kwargs = twin_kwargs(kwargs, kwargs["norm"])  # what every twin shares
        if kwargs.get("init_seed") is None:  # the run drew from the global RNG; twins need a seed
            kwargs["init_seed"] = 0
        batches, gflop = self._batches(trainer, pl_module)
        results = measure_twins(
            kwargs, self.placements, batches, self.perturbation, pl_module.device
        )
        run_dir = Path(trainer.default_root_dir)
        record = {
            "model": kwargs,
            "batch_size": len(batches[0]["src"]),
            "batches": len(batches),
            "examples": sum(len(batch["src"]) for batch in batches),
            "gflop": round(gflop, 1),
            "max_gflop": self.max_gflop,
            "perturbation": self.perturbation,
            **results,
        }
        write_json(run_dir / "norm_comparison.json", record, "the norm comparison at init")

        for placement, by_stack in results["grad_norm"].items():
            for stack, by_group in by_stack.items():
                for group, values in by_group.items():
                    for layer, value in enumerate(values):
                        tag = f"norm_init/grad/{placement}/{stack}/{group}"
                        log_tensorboard_scalars(trainer, {tag: value}, step=layer)
        changes = {f"norm_init/output_change/{p}": v for p, v in results["output_change"].items()}
        log_tensorboard_scalars(trainer, changes, step=0)
        title = "gradient norm by layer at init: " + " vs ".join(self.placements)
        figure = grad_norm_by_layer_figure(results["grad_norm"], title)
        publish(trainer, "norm_init/grad_by_layer", figure, 0, run_dir / "norm_comparison.png")
        last = {p: s["decoder"]["ffn.w2"][-1] for p, s in results["grad_norm"].items()}
        log.info(
            "gradient norm of the last decoder FFN W2 at init: %s",
            ", ".join(f"{p} {v:.3g}" for p, v in last.items()),
        )
