"""The model's vocabularies come from the data: the synthetic tasks' vocab_size as before,
a tokenizer's size once it is learnt, a research task's own words; a size the config gives
must hold the data's ids."""

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.build import build_data_and_model


def pairs_file(tmp_path) -> str:
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"a b {i}\tc {i} d\n" for i in range(40)))
    return f"data.train_path={path}"


def test_the_synthetic_tasks_keep_their_vocab_size(compose_train):
    _, module = build_data_and_model(compose_train(["data.vocab_size=20"]))
    assert (module.model.config.src_vocab_size, module.model.config.tgt_vocab_size) == (20, 20)


def test_a_learnt_tokenizer_sizes_the_model(compose_train, tmp_path):
    cfg = compose_train(
        [
            "data=pairs",
            pairs_file(tmp_path),
            "data.tokenizer=word",
            "data.shared_vocab=false",
            "data.val_size=2",
            "data.test_size=2",
        ]
    )
    datamodule, module = build_data_and_model(cfg)
    assert module.model.config.src_vocab_size == datamodule.src_vocab_size == 4 + 2 + 36
    assert module.model.config.tgt_vocab_size == datamodule.tgt_vocab_size == 4 + 2 + 36
    assert datamodule.src_codec is not datamodule.tgt_codec


def test_scan_has_a_vocabulary_for_commands_and_one_for_actions(compose_train):
    _, module = build_data_and_model(compose_train(["data=scan"]))
    assert (module.model.config.src_vocab_size, module.model.config.tgt_vocab_size) == (16, 9)


def test_a_larger_vocabulary_may_be_pinned_a_smaller_one_is_refused(compose_train):
    _, module = build_data_and_model(compose_train(["model.src_vocab_size=40"]))
    assert (module.model.config.src_vocab_size, module.model.config.tgt_vocab_size) == (40, 16)
    with pytest.raises(InvalidSetting) as refused:
        build_data_and_model(compose_train(["model.tgt_vocab_size=10"]))
    assert str(refused.value) == (
        "model.tgt_vocab_size=10: smaller than the data's vocabulary (16 ids); "
        "allowed: >= 16, or null"
    )
