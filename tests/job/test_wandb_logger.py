"""``logger=wandb``: with no account, no key and no network a run logs offline into its own
folder, and the run's file read back (with W&B's own record format) holds the scalars, the
config, the figures and the sample tables; a missing wandb is refused before the run."""

import importlib.util
import json
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.checks import check_run_settings
from transformer_lab.job.run import train
from transformer_lab.sweep import naming  # noqa: F401 (registers ${run_name:}, as train.py)
from transformer_lab.training.wandb_logger import wandb_mode

from ..command_line import HANG_SECONDS

TINY = ["experiment=smoke"]
BLOCK, HEADER = 32768, 7  # W&B's transaction log: LevelDB's log format behind a 7-byte header
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def log_records(path: Path) -> Iterator[bytes]:
    """The serialized records of a ``run-<id>.wandb`` file: LevelDB log blocks of 32 KiB,
    each record a 7-byte header (checksum, length, type) and a chunk; a record cut across
    blocks comes in FIRST, MIDDLE..., LAST chunks; a block's tail under 7 bytes is padding."""
    data = path.read_bytes()
    assert struct.unpack("<4sHB", data[:HEADER]) == (b":W&B", 0xBEE1, 0)
    position, pending = HEADER, b""
    while position + HEADER <= len(data):
        left = BLOCK - position % BLOCK
        if left < HEADER:
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + HEADER])
        chunk = data[position + HEADER : position + HEADER + length]
        position += HEADER + length
        if kind in (FULL, LAST):
            yield pending + chunk
            pending = b""
        elif kind in (FIRST, MIDDLE):
            pending += chunk
        else:  # zeros: the rest of the block is padding
            position += BLOCK - position % BLOCK if position % BLOCK else 0


def finished(path: Path, timeout: float = HANG_SECONDS) -> Path:
    """``path`` once it holds the run's exit record: the job finished its W&B run, but W&B's
    service process writes the file's last records after ``finish()`` has returned."""
    from wandb.proto import wandb_internal_pb2

    deadline = time.monotonic() + timeout
    while not any(
        wandb_internal_pb2.Record.FromString(r).HasField("exit") for r in log_records(path)
    ):
        assert time.monotonic() < deadline, f"{path} has no exit record after {timeout} s"
        time.sleep(0.1)
    return path


def key_of(item) -> str:
    """An item's key: ``key``, or where W&B split it at its slashes, ``nested_key``."""
    return item.key or "/".join(item.nested_key)


def read_run(path: Path) -> tuple[object, dict, list[dict]]:
    """``(run record, config, history rows)`` of a W&B run file, as W&B's protos say."""
    from wandb.proto import wandb_internal_pb2

    run, config, history = None, {}, []
    for raw in log_records(path):
        record = wandb_internal_pb2.Record.FromString(raw)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run = record.run
        elif kind == "config":
            config |= {key_of(item): json.loads(item.value_json) for item in record.config.update}
        elif kind == "history":
            history.append({key_of(i): json.loads(i.value_json) for i in record.history.item})
    return run, config, history


@pytest.mark.slow
def test_a_run_logs_offline_with_no_account_and_its_file_holds_what_tensorboard_shows(
    compose_train, tmp_path, monkeypatch, capfd
):
    pytest.importorskip("wandb")  # dev installs it (pyproject.toml); users: [wandb]
    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_BASE_URL"):  # the suite's offline too
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no_netrc"))  # not logged in
    cfg = compose_train([*TINY, "logger=wandb", "optim.lr=2e-3", f"paths.outputs_root={tmp_path}"])
    train(cfg)
    terminal = "".join(capfd.readouterr())
    assert "anonymous" not in terminal  # Lightning's anonymous=None, which W&B warns of
    assert "Run history" not in terminal  # W&B quiet: its files hold the run's summary
    run_dir = tmp_path / "run"
    recorded = json.loads((run_dir / "metrics.json").read_text())
    assert list(run_dir.glob("events.out.tfevents.*"))  # TensorBoard stays

    (path,) = run_dir.glob("wandb/offline-run-*/run-*.wandb")  # offline: no account needed
    run, config, history = read_run(finished(path))
    assert (run.display_name, run.project) == ("run", "transformer_lab")  # tensorboard's name
    assert (config["optim.lr"], config["experiment"]) == (2e-3, "smoke")  # the overrides
    assert (config["model.d_model"], config["trainer.max_steps"]) == (32, 20)  # curated keys
    validations = [row for row in history if "val/seq_acc" in row]
    assert [row["trainer/global_step"] for row in validations] == [9, 19]
    assert validations[-1]["val/loss"] == pytest.approx(recorded["val/loss"])
    (tested,) = [row for row in history if "test/loss" in row]
    assert tested["test/loss"] == pytest.approx(recorded["test/loss"])
    losses = [row["trainer/global_step"] for row in history if "train/loss" in row]
    assert losses == [4, 9, 14, 19]
    # media values are objects, whose fields W&B writes under the tag (tag/_type, ...)
    kinds = {
        key.rpartition("/")[0]: row[key] for row in history for key in row if key.endswith("/_type")
    }
    assert kinds["attention/cross/layer1/example0"] == "images/separated"  # the figures
    assert kinds["norm_init/grad_by_layer"] == "images/separated"
    assert kinds["samples/test"] == "table-file"  # the samples, as a table
    (columns,) = [row["samples/test/ncols"] for row in history if "samples/test/ncols" in row]
    assert columns == 3


def test_logger_wandb_without_wandb_installed_is_refused_naming_the_extra(
    compose_train, monkeypatch
):
    cfg = compose_train([*TINY, "logger=many"])  # many has it too
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "wandb" else find_spec(name)
    )
    with pytest.raises(InvalidSetting) as refused:
        check_run_settings(cfg, HydraConfig.get())
    assert str(refused.value) == (
        "logger.wandb='transformer_lab.training.wandb_logger.RunWandbLogger': needs the wandb "
        "package, not installed; allowed: pip install 'transformer_lab[wandb]', or another logger"
    )


def test_the_mode_is_the_users_then_online_where_logged_in_then_offline(tmp_path, monkeypatch):
    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    netrc = tmp_path / "netrc"
    monkeypatch.setenv("NETRC", str(netrc))
    assert wandb_mode() == "offline"  # no .netrc
    netrc.write_text("machine example.org login me password secret\n")
    assert wandb_mode() == "offline"  # none for W&B's host
    netrc.write_text("machine api.wandb.ai login user password secret\n")  # as `wandb login`
    netrc.chmod(0o600)
    assert wandb_mode() == "online"
    monkeypatch.setenv("WANDB_MODE", "disabled")
    assert wandb_mode() == "disabled"  # the user's word wins
