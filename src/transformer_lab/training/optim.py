"""The optimisation settings as one typed config, apart from the network's.

The values are the runs' config (``conf/optim/adamw.yaml``), the one place they are
written, so the fields have no defaults but one (:attr:`OptimConfig.min_lr_ratio`, which a
checkpoint written before it lacks); each has its help, and the checks that torch
would otherwise make only once the fit starts (AdamW is built in ``configure_optimizers``),
or never (a string ``compile``).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from transformer_lab.config.validation import InvalidSetting, check_number
from transformer_lab.training.schedules import check_schedule


@dataclass(frozen=True)
class OptimConfig:
    """AdamW, its learning-rate schedule and the training loss's label smoothing."""

    lr: float = field(metadata={"help": "the peak learning rate of every schedule"})
    betas: tuple[float, float] = field(metadata={"help": "AdamW's (beta1, beta2)"})
    weight_decay: float = field(metadata={"help": "AdamW's decoupled decay, on matrices only"})
    schedule: str = field(metadata={"help": "constant | linear_warmup | noam | cosine"})
    warmup_steps: int = field(metadata={"help": "steps of the linear rise to lr"})
    label_smoothing: float = field(metadata={"help": "of the training loss (not of val/loss)"})
    min_lr_ratio: float = field(
        default=0.0,  # no floor: what a run before this setting had
        metadata={"help": "cosine's floor at trainer.max_steps, x lr"},
    )

    def __post_init__(self):
        """InvalidSetting for the first setting that cannot work, in the order above."""
        check_number("lr", self.lr, above=0)
        betas = self.betas
        if not isinstance(betas, Sequence) or isinstance(betas, str) or len(betas) != 2:
            raise InvalidSetting("betas", betas, "not a pair", "[beta1, beta2], each in [0, 1)")
        for name, beta in zip(("betas[0]", "betas[1]"), betas, strict=True):
            check_number(name, beta, minimum=0, below=1)
        check_number("weight_decay", self.weight_decay, minimum=0)
        check_number("label_smoothing", self.label_smoothing, minimum=0, below=1)
        check_schedule(self.schedule, self.warmup_steps, self.min_lr_ratio)
