"""A sweep job's folder name: the overrides its sweep varies, as ``${job_name:...}`` names it."""

import pytest

from transformer_lab.config.validation import ConfigError
from transformer_lab.sweep.naming import check_distinct_folders, folder_name, run_name


def test_group_slashes_become_dots_so_the_folder_does_not_nest():
    assert run_name("model/norm=pre,model/pos_encoding=rotary,seed=1") == (
        "model.norm=pre,model.pos_encoding=rotary,seed=1"
    )


def test_a_deletion_reads_as_typed_wherever_it_stands():
    assert run_name("~callbacks.attention_maps=null") == "~callbacks.attention_maps"
    assert run_name("optim.lr=0.001,~callbacks.samples=null,seed=0") == (
        "optim.lr=0.001,~callbacks.samples,seed=0"
    )
    assert run_name("model.note=null") == "model.note=null"  # a value of null is kept


def test_no_overrides_is_named_defaults():
    assert run_name("") == "defaults"


def test_a_long_name_keeps_a_readable_prefix_and_stays_distinct():
    shared = ",".join(f"model.option_{i}=value" for i in range(12))  # 250 characters
    first, second = run_name(shared + ",seed=0"), run_name(shared + ",seed=1")
    assert len(first) == len(second) == 180 + 1 + 12
    assert first[:180] == second[:180] == shared[:180]
    assert first != second
    assert run_name(shared + ",seed=0") == first  # the same job gets the same folder


SHARED = ["experiment=smoke", "trainer.max_steps=8", "ckpt_path=null"]


def test_a_sweep_job_is_named_by_the_keys_its_sweep_varies_only():
    job = [*SHARED, "model/norm=pre", "seed=1"]
    swept = frozenset({"model.norm", "seed"})  # sweep.json's spelling: dots
    assert folder_name(job, ["ckpt_path"], swept) == "model.norm=pre,seed=1"


def test_a_single_run_or_a_sweep_that_varies_nothing_is_named_by_all_its_overrides():
    job = [*SHARED, "seed=1"]
    everything = "experiment=smoke,seed=1,trainer.max_steps=8"
    assert folder_name(job, ["ckpt_path"], None) == everything
    assert folder_name(job, ["ckpt_path"], frozenset()) == everything


def test_jobs_that_differ_only_in_a_key_names_leave_out_are_refused():
    jobs = [[*SHARED[:2], "ckpt_path=null"], [*SHARED[:2], "ckpt_path=/x/last.ckpt"]]
    with pytest.raises(ConfigError, match=r"^ckpt_path: the sweep's jobs ckpt_path=null and "):
        check_distinct_folders(jobs, ["ckpt_path"], frozenset({"ckpt_path"}))
    seeds = [["experiment=smoke", "seed=0"], ["experiment=smoke", "seed=1"]]
    check_distinct_folders(seeds, ["ckpt_path"], frozenset({"seed"}))  # two folders
