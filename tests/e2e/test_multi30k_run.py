"""experiment=multi30k_base end to end on the real corpus (these machines' copy; skipped where
absent), shrunk to seconds (a 1+1-layer d64 model, 3,000 training pairs, 30 steps): the run
tests by beam search and records sacreBLEU's cased and lowercased BLEU with their
signatures; evaluate's beam column reproduces the run's test; generate translates German
lines of one's own from stdin and names what the tokenizer never saw."""

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from transformer_lab.evaluate import evaluate

from ..command_line import python_module, run_command_here, run_train_here
from ..conftest import eval_config
from ..real_corpora import MULTI30K, needs_multi30k

pytestmark = [pytest.mark.slow, needs_multi30k]
SHRUNK = [
    "experiment=multi30k_base",
    f"data.data_dir={MULTI30K}",
    *("data.train_size=3000", "data.vocab_size=2000", "data.val_size=50", "data.test_size=40"),
    *("model.d_model=64", "model.d_ff=128", "model.num_heads=2"),
    *("model.num_encoder_layers=1", "model.num_decoder_layers=1"),
    *("trainer.max_steps=30", "trainer.val_check_interval=15", "optim.warmup_steps=10"),
    "callbacks.test_decoding.beam_size=3",
    *("~callbacks.progress_bar", "~callbacks.attention_maps", "samples=0"),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("multi30k")
    done = run_train_here(root / "outputs", *SHRUNK)
    assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = (root / "outputs" / "runs").iterdir()
    return folder


def test_the_run_records_cased_and_lowercased_bleu_with_their_signatures(run):
    metrics = json.loads((run / "metrics.json").read_text())
    assert {"test/bleu", "test/bleu_lc", "test/chrf", "val/bleu", "val/bleu_lc"} <= set(metrics)
    assert metrics["test/bleu_lc"] >= metrics["test/bleu"] >= 0
    signatures = metrics["sacrebleu"]
    assert signatures["bleu"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|")
    assert signatures["bleu_lc"].startswith("nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|")
    assert metrics["stop_reason"] == "trainer.max_steps=30 reached"  # not the 30 minutes
    config = OmegaConf.load(run / "config_resolved.yaml")
    assert (config.data.src_lang, config.data.tgt_lang) == ("de", "en")
    assert config.data.data_dir == str(MULTI30K.resolve())


def test_the_runs_test_is_the_beam_search_evaluate_scores_again(run):
    results = evaluate(eval_config(ckpt_path=run, beam_size=3, length_penalty=1.0, samples=0))
    metrics = json.loads((run / "metrics.json").read_text())
    for key in ("test/bleu", "test/bleu_lc", "test/chrf", "test/seq_acc"):
        assert results["beam"][key] == pytest.approx(metrics[key], rel=1e-6, abs=1e-9), key
    assert set(results["sacrebleu"]) == {"bleu", "bleu_lc", "chrf"}


def test_generate_translates_german_lines_from_stdin_and_names_what_it_never_saw(run):
    lines = "Ein Hund läuft über die Wiese.\nZwei Kinder spielen im Schnee ☃.\n"
    command = python_module("transformer_lab.generate", f"ckpt_path={run}", "decoding=beam")
    done = run_command_here(command, Path.cwd(), input=lines.encode())
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(done.stdout.splitlines()) == 2 and all(done.stdout.splitlines())
    assert "warning: line 2: unseen in training, read as <unk>: '☃'" in done.stderr


def test_evaluate_finds_the_corpus_where_it_lies_now(run, tmp_path):
    moved = tmp_path / "elsewhere"
    moved.symlink_to(MULTI30K, target_is_directory=True)
    here = evaluate(eval_config(ckpt_path=run, samples=0, **{"data.data_dir": moved}))
    metrics = json.loads((run / "metrics.json").read_text())
    assert here["beam"]["test/bleu_lc"] >= 0 and here["data"] == {"data_dir": str(moved)}
    assert here["greedy"]["test/loss"] == pytest.approx(metrics["test/loss"], rel=1e-6)
