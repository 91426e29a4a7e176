"""What a sweep's runs leave for TensorBoard, read back with TensorBoard's own readers from
a tiny real sweep: HPARAMS, the custom-scalars layout, accuracy against length, sample
generations, the report's run and a quiet terminal."""

import json
import re

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.util.tensor_util import make_ndarray

from transformer_lab.report import main as report_main
from transformer_lab.tokens import detokenize
from transformer_lab.training.module import Seq2SeqLitModule

from ..command_line import run_train

pytestmark = pytest.mark.slow  # the shared sweep takes ~30 s of CPU
ALL = {"scalars": 0, "tensors": 0, "images": 0}

# The tiny real two-job sweep through the command line that every test here reads:
# ``model/norm=pre,post`` on 1-3 word copies of reversal, 30 steps at a high constant
# learning rate, so ``val/seq_acc`` rises above 0 and a low target is reached at different
# steps; a test_long split of 4-5 words; a fresh matplotlib cache, as in a new virtualenv.
SWEEP = ["-m", "experiment=smoke", "model/norm=pre,post"]
TINY = [
    "data.min_task_len=1",
    "data.max_task_len=3",
    "data.test_long_size=16",
    "data.test_long_max_task_len=5",
    "optim.lr=1e-2",
    "optim.schedule=constant",
    "trainer.max_steps=30",
    "trainer.val_check_interval=10",
    "callbacks.layer_stats.every_n_steps=10",
    "target_seq_acc=0.03",
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "~callbacks.norm_comparison",
]


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    """``(terminal output, sweep folder)`` of the dashboard's sweep."""
    root = tmp_path_factory.mktemp("dashboard")
    env = {"MPLCONFIGDIR": str(root / "matplotlib")}
    result = run_train(root / "outputs", *SWEEP, *TINY, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    (sweep,) = (root / "outputs" / "multirun").iterdir()
    return result.stdout + result.stderr, sweep


@pytest.fixture(scope="module")
def runs(sweep_run):
    """The sweep's job folders, post-norm first."""
    _, sweep = sweep_run
    jobs = sorted(p for p in sweep.iterdir() if (p / ".hydra").is_dir())
    assert len(jobs) == 2
    return jobs


def events_of(folder) -> EventAccumulator:
    events = EventAccumulator(str(folder), size_guidance=ALL)
    events.Reload()
    return events


def text(events: EventAccumulator, tag: str) -> list[tuple[int, str]]:
    return [
        (e.step, make_ndarray(e.tensor_proto).item().decode())
        for e in events.Tensors(f"{tag}/text_summary")
    ]


def metrics_of(run) -> dict:
    return json.loads((run / "metrics.json").read_text())


def norm_of(run) -> str:
    return OmegaConf.load(run / "config_resolved.yaml").model.norm


def test_hparams_list_only_the_swept_key_and_the_comparison_metrics(runs, read_hparams):
    for run in runs:
        experiment, session = read_hparams(run)
        names = [h.name for h in experiment.hparam_infos]
        # TensorBoard ticks the first five, the differing first: listed, the key the sweep
        # varies, not the ten overrides every job shares nor the curated constants
        assert names == ["model.norm"]
        assert {h.name for h in experiment.hparam_infos if h.differs} == {"model.norm"}
        assert session.hparams["model.norm"].string_value == norm_of(run)
        assert [m.name.tag for m in experiment.metric_infos] == [
            "val/loss",
            "val/seq_acc",
            "outcome/learned",
            "val/seq_acc_auc",
            "val/steps_to_target",
            "test/seq_acc",
            "val/seq_acc_best",
            "train/clip_fraction",
            "train/grad_norm_max",
            "train/loss_spikes",
            "run/diverged",
            "run/train_seconds",
            "test_long/seq_acc",
        ]


def test_best_and_steps_to_target_agree_with_the_logged_val_seq_acc(runs):
    reached = 0
    for run in runs:
        events, metrics = events_of(run), metrics_of(run)
        target = OmegaConf.load(run / "config_resolved.yaml").target_seq_acc
        curve = [(s.step, s.value) for s in events.Scalars("val/seq_acc")]
        assert len(curve) == 3  # steps 9, 19, 29
        best = max(v for _, v in curve)
        first = next((step for step, v in curve if v >= target), None)
        assert metrics["val/seq_acc_best"] == pytest.approx(best)
        assert events.Scalars("val/seq_acc_best")[-1].value == pytest.approx(best)
        if first is None:
            assert "val/steps_to_target" not in metrics
            assert "val/steps_to_target" not in events.Tags()["scalars"]
        else:
            reached += 1
            assert metrics["val/steps_to_target"] == first
            assert events.Scalars("val/steps_to_target")[-1].value == first
        assert events.Scalars("run/diverged")[-1].value == 0.0
        seconds = events.Scalars("run/train_seconds")[-1].value
        assert seconds == pytest.approx(metrics["train_seconds"], abs=0.06)
    assert reached  # the sweep's settings make the target reachable


def test_accuracy_against_length_is_one_series_whose_steps_are_the_lengths(runs):
    for run in runs:
        events, metrics = events_of(run), metrics_of(run)
        # train (512 of 1-3 words) holds every source of 1 and 2 words: test has 3 only
        for split, lengths in (("test", [3]), ("test_long", [4, 5])):
            series = events.Scalars(f"{split}/seq_acc_vs_len")
            assert [s.step for s in series] == lengths
            for s in series:
                assert s.value == pytest.approx(metrics[f"{split}/seq_acc_by_len/{s.step}"])


def table_rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in line.strip("| ").split(" | ")] for line in lines]


def test_sample_tables_hold_the_real_predictions_wrong_ones_first(runs):
    for run in runs:
        events = events_of(run)
        assert [step for step, _ in text(events, "samples/val")] == [10, 20, 30]
        [(_, table)] = text(events, "samples/test")
        rows = table_rows(table)
        assert len(rows) == 8
        model = Seq2SeqLitModule.load_from_checkpoint(
            run / "checkpoints" / "last.ckpt", weights_only=True
        ).model  # the weights the test ran with
        data = instantiate(OmegaConf.load(run / "config_resolved.yaml").data)
        batch = data.sample("test", 64)
        predicted = model.generate(batch["src"], batch["tgt_out"].size(1))[:, 1:]
        examples = zip(batch["src"], batch["tgt_out"], predicted, strict=True)
        truth = {
            detokenize(s.tolist()): (detokenize(t.tolist()), detokenize(p.tolist()))
            for s, t, p in examples
        }
        correct = []
        for source, target, prediction in rows:
            assert truth[source][0] == target
            shown = re.sub(r"\*\*(⟨end⟩|…)\*\*", "", prediction).replace("**", "").strip()
            assert shown == truth[source][1]
            correct.append(target == truth[source][1])
            assert ("**" in prediction) != correct[-1]  # the first wrong token, marked
        assert correct == sorted(correct)  # wrong ones first
        assert f"{correct.count(False)} of 8 wrong" in table


def test_every_tag_the_custom_layout_names_exists(runs):
    layouts = []
    for run in runs:
        events = events_of(run)
        [config] = events.Tensors("custom_scalars__config__")
        layout = layout_pb2.Layout.FromString(make_ndarray(config.tensor_proto).item())
        layouts.append(layout)
        tags = events.Tags()["scalars"]
        charts = {c.title: list(c.multiline.tag) for cat in layout.category for c in cat.chart}
        assert len(charts) == 5
        for title, patterns in charts.items():
            for pattern in patterns:
                matched = [t for t in tags if re.fullmatch(pattern.strip("^$"), t)]
                assert matched, (title, pattern)
                if "every layer" in title:
                    assert len(matched) == 2  # one line per layer
    assert layouts[0] == layouts[1]  # the same in every run, so the runs overlay


def test_the_report_writes_its_tables_and_figures_as_the_tensorboard_run_report(sweep_run):
    _, sweep = sweep_run
    for _ in range(2):  # a rerun replaces the run's events rather than piling them up
        assert report_main([str(sweep)]) == 0
    assert len(list((sweep / "report").glob("events.out.tfevents.*"))) == 1
    events = events_of(sweep / "report")
    assert {"report/val_loss", "report/accuracy_by_length"} <= set(events.Tags()["images"])
    image = events.Images("report/val_loss")[0]
    assert image.width > 100 and image.height > 100
    [(_, tables)] = text(events, "report/tables")
    assert "model.norm" in tables and "| post |" in tables and "| pre |" in tables


def test_the_terminal_stays_quiet_and_the_summary_counts_flops(sweep_run):
    out, _ = sweep_run
    for noise in ("findfont", "Directory watcher", "USDT"):
        assert noise not in out
    assert re.search(r"model: [\d.]+ K trainable parameters, [\d.]+ K FLOPs a forward", out)
