"""A sweep job's folder name, from Hydra's ``override_dirname`` (``${run_name:...}``)."""

from transformer_lab.sweep.naming import run_name


def test_group_slashes_become_dots_so_the_folder_does_not_nest():
    assert run_name("model/norm=pre,model/pos_encoding=rotary,seed=1") == (
        "model.norm=pre,model.pos_encoding=rotary,seed=1"
    )


def test_a_deletion_reads_as_typed_wherever_it_stands():
    assert run_name("~callbacks.attention_maps=null") == "~callbacks.attention_maps"
    assert run_name("model.lr=0.001,~callbacks.samples=null,seed=0") == (
        "model.lr=0.001,~callbacks.samples,seed=0"
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
