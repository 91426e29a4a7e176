"""data=pairs as a datamodule: held-out splits cut from the training file, the tokenizer learnt
from the training pairs only and kept as settings (so a checkpoint rebuilds it with no file),
pairs too long for the model refused or left out, overlaps warned, references as written,
batches of similar lengths."""

import gzip
import hashlib
import logging
import shutil
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data import pairs_reading
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
    return set(dm._read.lines[split].tolist())


def sources_of(dm, split, path):
    """The source texts of a split's pairs, as the file has them."""
    lines = Path(path).read_text().splitlines()
    return [lines[line - 1].split("\t")[0] for line in dm._read.lines[split].tolist()]


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
    held_out = {w for s in ("val", "test") for t in sources_of(dm, s, path) for w in t.split()}
    trained = {w for t in sources_of(dm, "train", path) for w in t.split()}
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
    assert references == [f"x  {line - 1}!" for line in dm._read.lines["test"][:3].tolist()]
    assert all("  " in text for text in references)  # not the decoded ids: as the file has it


def test_the_check_and_the_run_read_the_files_once(tmp_path):
    path = write_pairs(tmp_path / "p.tsv")
    pairs_reading.read.cache_clear()
    make(path)
    make(path)
    assert pairs_reading.read.cache_info().misses == 1 and pairs_reading.read.cache_info().hits == 1
    (tmp_path / "p.tsv").write_text((tmp_path / "p.tsv").read_text() + "new\tline\n")
    make(path)  # a changed file is read again
    assert pairs_reading.read.cache_info().misses == 2


def test_runs_of_another_seed_share_the_read_unless_a_split_is_cut_by_the_seed(tmp_path):
    """A seed sweep's check builds every job's data in one process: where each split has
    its file (Multi30k), the seed changes nothing read, and the files are read once."""
    path = write_pairs(tmp_path / "p.tsv")
    val, test = write_pairs(tmp_path / "v.tsv", 20), write_pairs(tmp_path / "t.tsv", 30)
    pairs_reading.read.cache_clear()
    given = [make(path, val_path=val, test_path=test, seed=seed) for seed in (0, 1, 2)]
    assert pairs_reading.read.cache_info().misses == 1
    assert len({dm.hparams.src_tokenizer_json for dm in given}) == 1
    cut = [make(path, seed=seed) for seed in (0, 1)]  # val and test shuffled out of train
    assert pairs_reading.read.cache_info().misses == 3
    assert lines_of(cut[0], "val") != lines_of(cut[1], "val")


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
    assert first._read.lines["train"].tolist() == every._read.lines["train"][:40].tolist()
    assert lines_of(first, "test") == lines_of(every, "test")  # held out as before
    trained = {w for t in sources_of(first, "train", path) for w in t.split()}
    assert first.src_codec.vocab_size == 4 + len(trained)  # the specials and its words


def write_parallel(prefix, count=300, packed=False):
    """The pairs of :func:`write_pairs` as two parallel files ``<prefix>.src``/``.tgt``."""
    tsv = prefix.with_name(prefix.name + ".tsv")
    lines = Path(write_pairs(tsv, count)).read_text().splitlines()
    for index, lang in enumerate(("src", "tgt")):
        text = "".join(line.split("\t")[index] + "\n" for line in lines).encode()
        name = prefix.with_name(f"{prefix.name}.{lang}" + (".gz" if packed else ""))
        name.write_bytes(gzip.compress(text) if packed else text)
    return str(tsv)


@pytest.mark.parametrize("packed", [False, True])
def test_parallel_files_give_the_splits_and_tokenizer_of_the_same_pairs_as_one_tsv(
    tmp_path, packed
):
    tsv = write_parallel(tmp_path / "train", packed=packed)
    parallel = make(str(tmp_path / "train"), src_lang="src", tgt_lang="tgt")
    one_file = make(tsv)
    assert parallel.hparams.src_tokenizer_json == one_file.hparams.src_tokenizer_json
    for split in ("train", "val", "test"):
        assert lines_of(parallel, split) == lines_of(one_file, split)
        assert torch.equal(parallel.splits[split].src, one_file.splits[split].src)
    suffix = ".gz" if packed else ""
    assert parallel.hparams.file_sha256 == {
        "train_path": {
            lang: hashlib.sha256((tmp_path / f"train.{lang}{suffix}").read_bytes()).hexdigest()
            for lang in ("src", "tgt")
        }
    }
    assert parallel.hparams.train_path == str((tmp_path / "train").resolve())


def test_a_changed_parallel_file_is_refused_when_the_run_reads_it_again(tmp_path):
    write_parallel(tmp_path / "train")
    dm = make(str(tmp_path / "train"), src_lang="src", tgt_lang="tgt")
    (tmp_path / "train.tgt").write_text((tmp_path / "train.tgt").read_text().upper())
    again = PairsDataModule(**dict(dm.hparams))  # a checkpoint's settings, files read lazily
    with pytest.raises(InvalidSetting, match=r"train_path='.*train': its content changed"):
        again.setup()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"src_lang": "de"},
            "tgt_lang=None: missing, but src_lang='de' is set; allowed: both languages, or neither",
        ),
        ({"src_lang": "de", "tgt_lang": "de"}, "tgt_lang='de': the same as src_lang"),
        ({"src_lang": "d e", "tgt_lang": "en"}, "src_lang='d e': not a language code"),
        (
            {"src_lang": "de", "tgt_lang": "en", "format": "tsv"},
            "format='tsv': a format of files of pairs, but src_lang/tgt_lang name parallel files",
        ),
    ],
)
def test_language_settings_that_name_no_parallel_files_are_refused(tmp_path, settings, message):
    with pytest.raises(InvalidSetting) as refused:
        make(str(tmp_path / "train"), **settings)
    assert str(refused.value).startswith(message)


def test_cleaned_control_characters_are_counted_in_a_warning_naming_the_file(tmp_path, caplog):
    path = write_pairs(tmp_path / "p.tsv", 100, ['bell\x07 here\ta "quoted\x0b one"'])
    dm = make(path, val_size=1, test_size=1)
    with caplog.at_level(logging.WARNING):
        dm.setup()
    assert f"data: {path}: 1 lines held control characters" in caplog.text
    assert "the first at line 101" in caplog.text
    vocabulary = dm.src_codec.tokenizer.get_vocab()
    assert "bell" in vocabulary and not any("\x07" in token for token in vocabulary)


def test_a_line_too_long_for_any_tokenizer_is_refused_by_its_characters_untokenized(tmp_path):
    huge = "x" * (10 * 32 + 1)  # one character more than 10 positions can hold
    path = write_pairs(tmp_path / "p.tsv", 100, [f"{huge}\ta"])
    with pytest.raises(InvalidSetting) as refused:
        make(path, model_positions=10, val_size=1, test_size=1)
    assert str(refused.value).endswith(
        "1 of its 99 train pairs need more than the model's 10 positions (the first at line "
        "101: 321 characters, more than the 320 (32 a position) any tokenizer fits in them); "
        "allowed: model.max_len >= 12, or data.long_pairs=skip (leaves them out)"
    )
    dm = make(path, model_positions=10, val_size=1, test_size=1, long_pairs="skip")
    assert dm._read.skipped == {"train": 1} and len(dm.splits["train"]) == 98
    assert "x" * 20 not in dm.hparams.src_tokenizer_json  # never learnt from
