"""Every file the lab writes is the old one or the complete new one, never half of one; a
write that fails names the file and what it holds; a record that is there but damaged is
named, never read as absent; a config reads back as OmegaConf reads it
(src/transformer_lab/records.py)."""

import errno
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from transformer_lab.records import (
    DamagedRecord,
    RecordNotWritten,
    read_config,
    read_json,
    read_yaml,
    unwritten,
    write_atomically,
    write_json,
)


def test_a_write_interrupted_half_way_leaves_the_old_record_and_no_temporary(tmp_path):
    path = write_json(tmp_path / "metrics.json", {"val/loss": 1.5}, "the metrics")

    def half_then_stop(file):
        file.write(b'{"val/loss": 0.')
        raise KeyboardInterrupt  # Ctrl-C, or anything else, in the middle of the write

    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, half_then_stop, "the metrics")
    assert read_json(path) == {"val/loss": 1.5}
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def test_a_write_into_a_folder_that_cannot_hold_it_names_the_file_and_what_it_holds(tmp_path):
    blocked = tmp_path / "not_a_folder"
    blocked.write_text("a file")
    with pytest.raises(RecordNotWritten) as failed:
        write_json(blocked / "summary.json", {"jobs": 2}, "the sweep's summary")
    assert str(failed.value).startswith(
        f"{blocked / 'summary.json'}: could not write the sweep's summary: "
    )  # "File exists" where it makes the folder, "Not a directory" elsewhere
    assert blocked.read_text() == "a file"


def test_torch_s_cryptic_error_on_a_full_disk_is_told_by_the_oserror_behind_it(tmp_path):
    def full_disk(file):
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:  # what torch's writer raises while handling the OSError
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos")  # noqa: B904

    with pytest.raises(RecordNotWritten, match=r"last.ckpt: could not write a checkpoint: No sp"):
        write_atomically(tmp_path / "last.ckpt", full_disk, "a checkpoint")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_is_named_before_the_errors_it_set_off(tmp_path):
    first = RecordNotWritten(tmp_path / "best.ckpt", "a checkpoint", "No space left on device")
    try:
        try:
            raise first
        except RecordNotWritten:  # a logger closing on the failure fails in turn
            raise OSError(errno.ENOSPC, "No space left on device")  # noqa: B904
    except OSError as then:
        assert unwritten(then, tmp_path) is first
    events = OSError(errno.ENOSPC, "No space left on device")  # TensorBoard's: no file named
    assert str(unwritten(events, tmp_path)) == (
        f"{tmp_path}: could not write the run's TensorBoard events or logs: No space left on device"
    )
    assert unwritten(ValueError("not a write"), tmp_path) is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [("", "empty"), ('{"diverged": fal', "not JSON: "), ("\xff", "'utf-8' codec can't decode")],
    ids=["empty", "cut", "garbage"],
)
def test_a_damaged_json_record_is_named_not_read_as_absent(tmp_path, content, reason):
    path = tmp_path / "failed.json"
    path.write_text(content, encoding="latin-1")
    with pytest.raises(DamagedRecord) as damaged:
        read_json(path)
    assert str(damaged.value).startswith(f"{path} is damaged ({reason}")
    assert damaged.value.path == path
    assert read_json(tmp_path / "absent.json") is None


def test_a_damaged_config_is_named(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("")
    with pytest.raises(DamagedRecord, match=r"config.yaml is damaged \(empty\)"):
        read_config(path)
    path.write_text("- a list\n")
    with pytest.raises(DamagedRecord, match=r"config.yaml is damaged \(not a mapping\)"):
        read_config(path)
    path.write_text("model:\n  d_model: 32\n")
    assert read_config(path).model.d_model == 32


def test_a_record_written_whole_reads_back_with_the_group_able_to_read_it(tmp_path):
    path = write_atomically(tmp_path / "x.pt", lambda f: torch.save({"w": torch.ones(3)}, f), "x")
    assert torch.equal(torch.load(path, weights_only=True)["w"], torch.ones(3))
    assert path.stat().st_mode & 0o777 == 0o644


CONF = Path(__file__).resolve().parents[1] / "conf"
# the scalars where YAML 1.1, YAML 1.2 and OmegaConf part ways
EDGE_CASES = """\
lr: 1e-3
big: 1_000
half: .5
negative: -2.5E+2
infinite: .inf
not_a_number: .nan
day: 2026-12-07
moment: 2026-12-07 01:45:00
octal: 0o17
old_octal: 017
sexagesimal: 1:30
word_yes: yes
word_off: off
tilde: ~
quoted: "1e-3"
interpolation: ${lr}
path: !!python/object/apply:pathlib.PosixPath [/tmp, a]
mixed: [1, 2.0, "3", null, true]
"""


def _typed(config) -> str:
    """The config as YAML with each leaf's type: ``1``, ``1.0`` and ``true`` compare equal."""
    container = OmegaConf.to_container(config)

    def typed(value):
        if isinstance(value, dict):
            return {key: typed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [typed(item) for item in value]
        return (type(value).__name__, repr(value))

    return repr(typed(container))


@pytest.mark.parametrize(
    "source", ["edge_cases", *sorted(str(p.relative_to(CONF)) for p in CONF.rglob("*.yaml"))]
)
def test_a_yaml_record_reads_as_omegaconf_load_reads_it(tmp_path, source):
    path = CONF / source
    if source == "edge_cases":
        path = tmp_path / "edge_cases.yaml"
        path.write_text(EDGE_CASES)
    ours, omegaconfs = read_yaml(path), OmegaConf.load(path)
    assert type(ours) is type(omegaconfs)
    assert _typed(ours) == _typed(omegaconfs)


def test_a_duplicate_key_is_a_damaged_config_as_omegaconf_refuses_it(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  d_model: 32\n  d_model: 64\n")
    with pytest.raises(
        DamagedRecord, match=r"config.yaml is damaged \(not YAML: .*duplicate key d_model"
    ):
        read_config(path)
