"""data=pairs as a datamodule: held-out splits cut from the training file, the tokenizer learnt
from the training pairs only and kept as settings (so a checkpoint rebuilds it with no file),
pairs too long for the model refused or left out, overlaps warned, references as written,
batches of similar lengths."""

import logging
import shutil

import pytest
import torch
from tokenizers import Tokenizer

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data import pairs
from transformer_lab.data.buckets import LengthBuckets
from transformer_lab.data.pairs import PairsDataModule
from transformer_lab.data.sampler import EpochShuffle

WORDS = ["the", "a", "cat", "dog", "sees", "likes", "big", "small", "red", "old"]


def write_pairs(path, count=300, extra=()):
    """``count`` distinct pairs source -> the source's words reversed, then ``extra`` lines."""
    lines = []
    for i in range(count):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(2 + i % 4)] + [str(i)]
        lines.append(f"{' '.join(words)}\t{' '.join(reversed(words))}")
    path.write_text("\n".join([*lines, *extra]) + "\n")
    return str(path)


def make(path, **settings):
    defaults = dict(tokenizer="word", vocab_size=None, val_size=20, test_size=30, batch_size=8)
    return PairsDataModule(path, **(defaults | settings))


def lines_of(dm, split):
    return {pair.line for pair in dm._read.pairs[split]}


def test_val_and_test_are_cut_from_the_training_file_disjoint_and_seeded(tmp_path):
    path = write_pairs(tmp_path / "p.tsv")
    dm = make(path)
    sizes = {name: len(split) for name, split in dm.splits.items()}
    assert sizes == {"train": 250, "val": 20, "test": 30}
    train, val, test = (lines_of(dm, s) for s in ("train", "val", "test"))
    assert train | val | test == set(range(1, 301)) and not (
        train & val or train & test or val & test
    )
    assert lines_of(make(path), "test") == test != lines_of(make(path, seed=1), "test")


def test_the_tokenizer_learns_from_the_training_pairs_only(tmp_path):
    path = write_pairs(tmp_path / "p.tsv")
    dm = make(path)
    held_out = {w for s in ("val", "test") for p in dm._read.pairs[s] for w in p.source.split()}
    trained = {w for p in dm._read.pairs["train"] for w in p.source.split()}
    for word in held_out - trained:  # the numbers of held-out lines: never seen
        assert dm.src_codec.encode(word) == [3]  # <unk>
    assert dm.src_codec.decode(dm.src_codec.encode("the big cat")) == "the big cat"


def test_the_checkpoint_settings_rebuild_the_tokenizer_without_any_file(tmp_path):
    (tmp_path / "data").mkdir()
    path = write_pairs(tmp_path / "data" / "p.tsv")
    dm = make(path, tokenizer="bpe", vocab_size=40)
    settings = dict(dm.hparams)
    assert settings["src_tokenizer_json"] == dm.src_codec.to_json()
    shutil.rmtree(tmp_path / "data")
    again = PairsDataModule(**settings)  # what load_from_checkpoint does: nothing is read
    assert again.src_vocab_size == dm.src_vocab_size
    assert again.src_codec.encode("the old dog") == dm.src_codec.encode("the old dog")
    with pytest.raises(InvalidSetting, match=r"train_path='.*p\.tsv': no such file"):
        again.setup()  # the splits need the files


def test_separate_vocabularies_give_two_tokenizers_saved_as_two_files(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("".join(f"{w} {i}\t{w.upper()}\n" for i, w in enumerate(WORDS * 10)))
    dm = make(str(path), tokenizer="char", shared_vocab=False, val_size=5, test_size=5)
    assert dm.src_codec is not dm.tgt_codec
    assert dm.tgt_codec.decode(dm.tgt_codec.encode("DOG")) == "DOG"
    assert dm.src_codec.decode(dm.src_codec.encode("DOG")) == "<unk><unk><unk>"
    files = dm.save_tokenizers(tmp_path)
    assert [f.name for f in files] == ["tokenizer_source.json", "tokenizer_target.json"]
    assert Tokenizer.from_file(str(files[1])).get_vocab_size() == dm.tgt_vocab_size
    assert [f.name for f in make(str(path), val_size=5, test_size=5).save_tokenizers(tmp_path)] == [
        "tokenizer.json"
    ]


def test_pairs_longer_than_the_model_are_refused_with_the_count_and_the_fix(tmp_path):
    long = " ".join(["the"] * 12)
    path = write_pairs(tmp_path / "p.tsv", 100, [f"{long}\ta", f"a\t{long} cat"])
    with pytest.raises(InvalidSetting) as refused:
        make(path, model_positions=10, val_size=1, test_size=1)
    assert str(refused.value.within("data")) == (
        f"data.train_path={path!r}: 2 of its 100 train pairs need more than the model's 10 "
        "positions (the first at line 101: 12 source and 1 target tokens, plus EOS/BOS); "
        "allowed: model.max_len >= 14, or data.long_pairs=skip (leaves them out)"
    )


def test_long_pairs_skip_leaves_them_out_with_a_warning(tmp_path, caplog):
    long = " ".join(["the"] * 12)
    path = write_pairs(tmp_path / "p.tsv", 100, [f"{long}\ta"])
    held_out = write_pairs(tmp_path / "held_out.tsv", 10)
    dm = make(path, model_positions=10, long_pairs="skip", val_path=held_out, test_path=held_out)
    assert dm.max_seq_len <= 10
    with caplog.at_level(logging.WARNING):
        assert len(dm.splits["train"]) == 100
    assert "left out 1 train pairs longer than the model's 10 positions" in caplog.text


def test_held_out_pairs_that_occur_in_training_are_counted_in_a_warning(tmp_path, caplog):
    path = write_pairs(tmp_path / "p.tsv", 100)
    test = tmp_path / "t.tsv"
    test.write_text(
        "".join(line + "\n" for line in (tmp_path / "p.tsv").read_text().splitlines()[:5])
    )
    dm = make(path, test_path=str(test), val_size=10)
    with caplog.at_level(logging.WARNING):
        dm.setup()
    in_train = 5 - len(lines_of(dm, "val") & set(range(1, 6)))  # some may be held out as val
    assert f"{in_train} of the 5 test pairs also occur in the training pairs" in caplog.text


def test_too_few_pairs_for_the_held_out_sizes_is_refused(tmp_path):
    path = write_pairs(tmp_path / "p.tsv", 40)
    with pytest.raises(
        InvalidSetting,
        match=r"val_size=20: the held-out pairs \(val_size=20 \+ "
        r"test_size=30\) leave none of the 40 pairs",
    ):
        make(path)


def test_batches_carry_rows_of_the_references_as_written(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("".join(f'{{"source": "a{i}", "target": "x  {i}!"}}\n' for i in range(30)))
    dm = make(str(path), tokenizer="char", val_size=5, test_size=5)
    batch = dm.sample("test", 3)
    references = dm.references("test", batch["row"].tolist())
    assert references == [pair.target for pair in dm._read.pairs["test"][:3]]
    assert all("  " in text for text in references)  # not the decoded ids: as the file has it


def test_the_check_and_the_run_read_the_files_once(tmp_path):
    path = write_pairs(tmp_path / "p.tsv")
    pairs.read.cache_clear()
    make(path)
    make(path)
    assert pairs.read.cache_info().misses == 1 and pairs.read.cache_info().hits == 1
    (tmp_path / "p.tsv").write_text((tmp_path / "p.tsv").read_text() + "new\tline\n")
    make(path)  # a changed file is read again
    assert pairs.read.cache_info().misses == 2


def test_length_buckets_cut_the_padding_and_keep_a_seeded_resumable_order(tmp_path):
    path = write_pairs(tmp_path / "p.tsv", 2000)
    dm = make(path, tokenizer="char", batch_size=16)
    train = dm.splits["train"]
    lengths = torch.maximum(train.src_len, train.tgt_len)

    def padding(order):
        batches = [order[i : i + 16] for i in range(0, len(order), 16)]
        real = sum(int(lengths[b].sum()) for b in batches)
        return 1 - real / sum(int(lengths[b].max()) * len(b) for b in batches)

    buckets = list(LengthBuckets(lengths, 16, seed=0))
    assert sorted(buckets) == list(range(len(train)))  # every example once an epoch
    assert padding(buckets) < padding(list(EpochShuffle(len(train), seed=0))) / 3
    assert isinstance(dm._train_sampler(train), LengthBuckets)
    assert (
        buckets == list(LengthBuckets(lengths, 16, seed=0)) != list(LengthBuckets(lengths, 16, 1))
    )
    resumed = LengthBuckets(lengths, 16, seed=0)
    resumed.resume(global_step=3, accumulate_grad_batches=1, batch_size=16)
    assert list(resumed) == buckets[3 * 16 :]


def test_train_size_keeps_the_first_training_pairs_and_learns_from_them_alone(tmp_path):
    path = write_pairs(tmp_path / "p.tsv")
    every, first = make(path), make(path, train_size=40)
    assert len(first.splits["train"]) == 40 and len(every.splits["train"]) == 250
    assert first._read.pairs["train"] == every._read.pairs["train"][:40]
    assert lines_of(first, "test") == lines_of(every, "test")  # held out as before
    trained = {w for p in first._read.pairs["train"] for w in p.source.split()}
    assert first.src_codec.vocab_size == 4 + len(trained)  # the specials and its words
