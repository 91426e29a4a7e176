"""The learning-rate schedules, read from the optimizer the module configures (so what is
tested is what a run steps through), against the formulas they claim to be."""

import itertools
import math

import lightning as L
import pytest

LR, WARMUP, D_MODEL = 2e-3, 40, 32


@pytest.fixture
def learning_rates(lab_module):
    """``learning_rates(schedule, steps, warmup)``: the learning rate of each update 1..steps,
    as the configured scheduler sets it."""
    return lambda schedule, steps, warmup=WARMUP, **settings: rates_of(
        lab_module, schedule, steps, warmup, **settings
    )


def rates_of(lab_module, schedule: str, steps: int, warmup: int, **settings) -> list[float]:
    """``settings``: the module's other settings; ``max_steps`` attaches the Trainer of a fit
    that long (the cosine schedule decays over it)."""
    max_steps = settings.pop("max_steps", None)
    module = lab_module(
        src_vocab_size=16,
        tgt_vocab_size=16,
        d_model=D_MODEL,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        lr=LR,
        schedule=schedule,
        warmup_steps=warmup,
        **settings,
    )
    if max_steps is not None:
        module.trainer = L.Trainer(max_steps=max_steps, logger=False, enable_checkpointing=False)
    configured = module.configure_optimizers()
    optimizer, scheduler = configured["optimizer"], configured["lr_scheduler"]["scheduler"]
    rates = []
    for _ in range(steps):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return rates


def test_noam_peaks_at_the_configured_lr_on_the_warmup_step(learning_rates):
    rates = learning_rates("noam", 4 * WARMUP)
    peak_step = max(range(len(rates)), key=rates.__getitem__) + 1
    assert peak_step == WARMUP
    assert rates[WARMUP - 1] == pytest.approx(LR, rel=1e-12)
    assert rates[0] == pytest.approx(LR / WARMUP)  # linear on the way up
    assert rates[4 * WARMUP - 1] == pytest.approx(LR / 2)  # sqrt(warmup / step) after


def test_noam_is_the_papers_formula_scaled_to_the_peak(learning_rates):
    """Vaswani et al.: d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), times one constant."""
    rates = learning_rates("noam", 3 * WARMUP)
    paper = [D_MODEL**-0.5 * min(s**-0.5, s * WARMUP**-1.5) for s in range(1, 3 * WARMUP + 1)]
    ratios = [rate / value for rate, value in zip(rates, paper, strict=True)]
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-9)
    assert ratios[0] == pytest.approx(LR * math.sqrt(D_MODEL * WARMUP))


def test_linear_warmup_rises_to_the_lr_and_stays(learning_rates):
    rates = learning_rates("linear_warmup", 2 * WARMUP)
    assert rates[:3] == pytest.approx([LR / WARMUP, 2 * LR / WARMUP, 3 * LR / WARMUP])
    assert rates[WARMUP - 1 :] == pytest.approx([LR] * (WARMUP + 1))


def test_constant_and_zero_warmup_start_at_the_lr(learning_rates):
    assert learning_rates("constant", 5) == pytest.approx([LR] * 5)
    assert learning_rates("noam", 3, warmup=0) == pytest.approx([LR, LR / 2**0.5, LR / 3**0.5])


def test_cosine_warms_up_then_halves_at_the_middle_and_ends_at_the_floor(learning_rates):
    """Warmup 40 of 140 steps, floor 0.1: the peak at step 40, then
    0.1 + 0.9 * (1 + cos(pi * (step - 40) / 100)) / 2 of it."""
    rates = learning_rates("cosine", 140, min_lr_ratio=0.1, max_steps=140)
    assert rates[:2] == pytest.approx([LR / WARMUP, 2 * LR / WARMUP])
    assert rates[40 - 1] == pytest.approx(LR)  # the end of warmup: the peak
    assert rates[65 - 1] == pytest.approx(LR * (0.1 + 0.9 * (1 + 2**-0.5) / 2))  # a quarter
    assert rates[90 - 1] == pytest.approx(LR * 0.55)  # the middle of the decay
    assert rates[140 - 1] == pytest.approx(LR * 0.1)  # the last step: the floor
    assert all(a > b for a, b in itertools.pairwise(rates[39:]))  # falls at every step


BAD = [
    ("exponential", 10, {}, "schedule='exponential'"),
    ("noam", -1, {}, "warmup_steps"),
    ("cosine", 10, {"min_lr_ratio": 1.5}, "min_lr_ratio=1.5: out of range"),
    ("cosine", 10, {}, "schedule='cosine': decays over trainer.max_steps"),  # no Trainer
]


@pytest.mark.parametrize(("schedule", "warmup", "settings", "named"), BAD)
def test_a_bad_schedule_is_refused_when_the_module_is_built(
    learning_rates, schedule, warmup, settings, named
):
    with pytest.raises(ValueError, match=named):
        learning_rates(schedule, 1, warmup, **settings)
