"""The LightningModule: teacher-forced training, held-out metrics, optimizer and schedule.

Every constructor argument is a primitive (int, float, str, bool, list of floats), so
``save_hyperparameters`` stores nothing that ``torch.load(weights_only=True)`` refuses,
and a checkpoint alone rebuilds the model.
"""

import dataclasses

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.plugins.precision import MixedPrecision
from torch import nn

from transformer_lab.config.typed import from_settings
from transformer_lab.config.validation import InvalidSetting, check_flag
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.admin import needs_profiling, profile_admin, residual_weights
from transformer_lab.model.config import TransformerConfig
from transformer_lab.model.decoding import beam_search, greedy_to_length
from transformer_lab.model.transformer import check_source
from transformer_lab.tokens import FIRST_CONTENT, PAD
from transformer_lab.training.final_step import is_final_step
from transformer_lab.training.loss import token_nll
from transformer_lab.training.metrics import StageMetrics
from transformer_lab.training.optim import OptimConfig
from transformer_lab.training.schedules import lr_multiplier
from transformer_lab.training.text_metrics import TextMetrics

FUSED_DEVICES = ("cpu", "cuda")  # where torch (>= 2.4) has fused AdamW kernels and the lab runs


def adamw(
    module: nn.Module,
    lr: float,
    betas: tuple[float, float],
    weight_decay: float,
    fused: bool = False,
) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only, not on biases or norms' gains. ``fused``:
    one kernel updates every tensor of a group, instead of a Python loop over them (on a
    CPU, torch's default for AdamW)."""
    params = [p for p in module.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    # not fused: None, torch's own choice (a loop on a CPU, the foreach kernels on a GPU)
    return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), fused=fused or None)


def fused_adamw_fits(device: torch.device, trainer: L.Trainer | None) -> bool:
    """Whether AdamW may run fused here: on a device with the kernels, and not where
    Lightning clips gradients under mixed precision, which it refuses for a fused optimizer
    (it expects one to unscale gradients itself). ``trainer`` None: driven by hand, fp32."""
    if device.type not in FUSED_DEVICES:
        return False
    if trainer is None:
        return True
    mixed = isinstance(trainer.precision_plugin, MixedPrecision)
    return not (mixed and trainer.gradient_clip_val)


class Seq2SeqLitModule(L.LightningModule):
    """Trains :class:`~transformer_lab.model.Seq2SeqTransformer` on ``{src, tgt_in, tgt_out}``.

    ``val`` and ``test`` report ``loss`` (token NLL without label smoothing), ``ppl``,
    ``token_acc`` (teacher-forced argmax, non-PAD labels), ``seq_acc`` (greedy generation
    matches the whole target up to and including EOS) and ``seq_acc_by_len/<n>`` (the same
    over the sources of ``n`` words), and for data with reference texts ``bleu`` and ``chrf``
    of the decoded outputs (:mod:`.text_metrics`). A second test loader is reported under
    ``test_long/``. The test stages also decode greedily at the oracle length
    (:func:`greedy_to_length`): ``oracle_seq_acc``, ``oracle_token_acc`` and
    ``oracle_token_acc_by_pos/<i>`` (:mod:`~transformer_lab.training.metrics`). ``beam_size``
    > 1 (set by :mod:`transformer_lab.evaluate`, not a hyper-parameter) makes ``seq_acc``
    score beam search instead of greedy decoding; the oracle stays greedy.
    """

    EVAL_STAGES = ("val", "test", "test_long")

    def __init__(self, *, model: dict, optim: dict, compile: bool):
        """The run config's ``model`` node (the network, :class:`TransformerConfig`, with its
        vocabularies filled in) and ``optim`` node (:class:`OptimConfig`), and ``compile``:
        every optimisation setting is required, so the lab's values live in one place,
        ``conf/``, which every run composes, and a checkpoint holds them all as one tree of
        primitives that rebuilds the module. A setting refused is named by its config key
        (``model.d_model``), before any training."""
        super().__init__()
        try:  # the config, and what the network's parts check of it (an odd rotary head)
            network = TransformerConfig.from_dict(model)
            self.model = Seq2SeqTransformer(config=network)
        except InvalidSetting as error:
            raise error.within("model") from None
        try:
            self.optim = from_settings(OptimConfig, optim)
        except InvalidSetting as error:
            raise error.within("optim") from None
        check_flag("compile", compile)
        self.save_hyperparameters(
            {
                "model": network.to_dict(),
                "optim": dataclasses.asdict(self.optim),
                "compile": compile,
            }
        )
        if compile:  # lazily, at the first call; the state_dict keys stay the same
            self.model.compile()
        else:  # the model summary runs it for real FLOPs and shapes (compiling would take long)
            self.example_input_array = (torch.full((1, 4), FIRST_CONTENT),) * 2  # src, tgt_in
        # a source holds at most max_len - 1 words (and EOS)
        self.metrics = nn.ModuleDict(
            {stage: StageMetrics(network.max_len) for stage in self.EVAL_STAGES}
        )
        # BLEU and chrF, for data with reference texts (data=pairs)
        self.text_metrics = {stage: TextMetrics() for stage in self.EVAL_STAGES}
        self.beam_size, self.length_penalty = 1, 0.0  # how seq_acc decodes
        self.validated_at_step = -1  # the global step of the latest real validation
        self.validation_metrics: dict[str, float] = {}  # its val/* values

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        """Keep the RNG state, so dropout after a resume draws what it would have drawn,
        and the latest validation (its step and ``val/*``): a run resumed from its final
        ``last.ckpt``, written after the closing validation, records that validation's
        values without running it again (``callbacks/last_checkpoint.py``)."""
        checkpoint["validation"] = {"step": self.validated_at_step, **self.validation_metrics}
        checkpoint["rng_state"] = torch.get_rng_state()
        if torch.cuda.is_available():
            checkpoint["cuda_rng_state"] = torch.cuda.get_rng_state_all()

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        # torch restores each group's saved ``fused``; this run's device and precision decide
        # (a checkpoint of a fused CPU run resumed under bf16-mixed on a GPU, or one from
        # before fusing)
        fused = self._fused_optimizer() or None
        for state in checkpoint.get("optimizer_states", []):
            for group in state["param_groups"]:
                group["fused"] = fused
        validation = dict(checkpoint.get("validation", {"step": -1}))
        self.validated_at_step = validation.pop("step")
        self.validation_metrics = validation
        if "rng_state" in checkpoint:
            torch.set_rng_state(checkpoint["rng_state"])
        if "cuda_rng_state" in checkpoint and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(checkpoint["cuda_rng_state"])

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        return self.model(src, tgt_in)

    def on_before_batch_transfer(self, batch: dict, dataloader_idx: int) -> dict:
        """Refuse a source row of nothing but PAD here, where the batch enters, still on
        the CPU: a compiled network skips its own check (:func:`check_source`), which would
        split its graph. The model summary's example input, a tuple of content tokens,
        passes through here too."""
        if isinstance(batch, dict):
            check_source(batch["src"])
        return batch

    # -- training --------------------------------------------------------------------------

    def on_fit_start(self) -> None:
        """Admin's omegas (``model.norm=admin``) are profiled on the first training batch of
        a fresh start; a resumed run restored them, profiled, with its weights."""
        self._profile_admin = needs_profiling(self.model)

    def on_train_batch_start(self, batch: dict, batch_idx: int) -> None:
        if not getattr(self, "_profile_admin", False):
            return
        profile_admin(self.model, batch["src"], batch["tgt_in"])
        for weight in residual_weights(self.model):  # DDP ranks profiled their own batches
            weight.omega.data.copy_(
                self.trainer.strategy.reduce(weight.omega.data, reduce_op="mean")
            )
        self._profile_admin = False

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        logits = self.model(batch["src"], batch["tgt_in"])  # [B, T, V]
        loss = token_nll(logits, batch["tgt_out"], self.optim.label_smoothing)
        if self._logger_writes_this_step():
            self.log("train/loss", loss, prog_bar=True, batch_size=batch["src"].size(0))
            # one tag for the learning rate (LearningRateMonitor would split it per group)
            self.log("train/lr", self.optimizers().param_groups[0]["lr"], batch_size=1)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx: int) -> None:
        """The fit's final step stops the fit, so that Lightning validates the final weights
        inside the fit, logged at the step of every other validation (``learning_curve.py``),
        instead of a ``trainer.validate()`` after it, which would log one step later."""
        if is_final_step(self.trainer):
            self.trainer.should_stop = True

    def _logger_writes_this_step(self) -> bool:
        """Whether the loggers write this step's ``train/*``: every ``log_every_n_steps``
        (never for 0), and every step of a ``fast_dev_run``.

        ``self.log`` costs about 0.7 ms a call on a CPU, whether or not the value is written
        (Lightning moves its result collection to the device each time): 6% of the main
        job's step for two values only the progress bar would read in between.
        """
        every = self.trainer.log_every_n_steps
        if self.trainer.fast_dev_run:
            return True
        return every > 0 and (self.global_step + 1) % every == 0

    def _fused_optimizer(self) -> bool:
        """:func:`fused_adamw_fits` for this module's device and trainer (none when driven
        by hand): about 6% off the main job's CPU step, the same updates to float rounding."""
        try:
            trainer = self.trainer
        except RuntimeError:  # not attached to a Trainer
            return fused_adamw_fits(self.device, None)
        return fused_adamw_fits(trainer.strategy.root_device, trainer)

    def _max_steps(self) -> int | None:
        """The fit's length, over which ``cosine`` decays; None when driven by hand."""
        try:
            return self.trainer.max_steps
        except RuntimeError:  # not attached to a Trainer
            return None

    def configure_optimizers(self):
        """:func:`adamw` with the configured learning rate, stepped by the schedule; fused
        where it fits (:meth:`_fused_optimizer`)."""
        o = self.optim
        optimizer = adamw(self, o.lr, o.betas, o.weight_decay, self._fused_optimizer())
        multiplier = lr_multiplier(o.schedule, o.warmup_steps, o.min_lr_ratio, self._max_steps())
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, multiplier)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "step"},
        }

    # -- evaluation ------------------------------------------------------------------------

    def _evaluate(self, batch: dict[str, torch.Tensor], stage: str) -> None:
        src, tgt_out = batch["src"], batch["tgt_out"]
        logits = self.model(src, batch["tgt_in"])
        labels = tgt_out.flatten()
        nll = token_nll(logits, tgt_out, reduction="sum")
        if self.beam_size == 1:
            predicted = self.model.generate(src, max_new_tokens=tgt_out.size(1))
        else:
            predicted = beam_search(
                self.model, src, self.beam_size, tgt_out.size(1), self.length_penalty
            )
        predicted = _as_wide_as(predicted[:, 1:], tgt_out)  # [B, T] BOS dropped
        oracle = None
        if stage != "val":  # once per run, not at every validation
            lengths = (tgt_out != PAD).sum(dim=1) - 1  # [B] target words, EOS not counted
            oracle = _as_wide_as(greedy_to_length(self.model, src, lengths)[:, 1:], tgt_out)
        words = (src != PAD).sum(dim=1) - 1  # [B] source length, EOS not counted
        self.metrics[stage].update(
            nll,
            labels,
            logits.argmax(-1).flatten(),
            words,
            (predicted == tgt_out).all(dim=1),
            oracle,
        )
        if "row" in batch:  # the split's examples have reference texts: BLEU and chrF
            datamodule = self.trainer.datamodule
            references = datamodule.references(stage, batch["row"].tolist())
            hypotheses = [datamodule.tgt_codec.decode(row) for row in predicted.tolist()]
            self.text_metrics[stage].update(hypotheses, references)

    def _log_stage(self, stage: str) -> dict[str, float]:
        values = self.metrics[stage].compute()  # summed over DDP ranks by torchmetrics
        self.metrics[stage].reset()
        if len(self.text_metrics[stage]):
            values |= self.text_metrics[stage].compute()  # gathered over DDP ranks
            self.text_metrics[stage].reset()
        for name, value in values.items():  # equal on every rank: the mean over them is it
            self.log(f"{stage}/{name}", value, sync_dist=True)
        return values

    def validation_step(self, batch, batch_idx):
        self._evaluate(batch, "val")

    def on_validation_epoch_end(self):
        values = self._log_stage("val")
        if not self.trainer.sanity_checking:
            self.validated_at_step = self.global_step
            self.validation_metrics = {f"val/{name}": float(v) for name, v in values.items()}

    def test_step(self, batch, batch_idx, dataloader_idx: int = 0):
        self._evaluate(batch, "test" if dataloader_idx == 0 else "test_long")

    def on_test_epoch_end(self):
        for stage in ("test", "test_long"):
            if self.metrics[stage].seqs.sum() > 0:
                self._log_stage(stage)


def _as_wide_as(predicted: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """Generated tokens ``[B, <=T]`` after BOS, padded with PAD to ``tgt_out``'s ``[B, T]``."""
    return F.pad(predicted, (0, tgt_out.size(1) - predicted.size(1)), value=PAD)
