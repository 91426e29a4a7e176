"""Every kind of bad data file, given on the command line, is one error line naming the file
and the line, exit status 2, before any training, and nothing already written is touched.

The cases run through the command line (Hydra, its configuration check before any folder,
the exit) in the test process, so the suite pays the start of Python, torch and Lightning
for none of them."""

import pytest

from ..command_line import run_train_here

pytestmark = pytest.mark.slow

LONG = " ".join(["w"] * 70)
# case -> (file name, content, the stderr line after "error: data.train_path='<path>': ")
CASES = {
    "missing": (
        "missing.tsv",
        None,
        "no such file; allowed: an existing TSV or JSONL file of pairs",
    ),
    "empty": (
        "empty.tsv",
        b"",
        "the file is empty; allowed: one source<TAB>target pair a line (TSV)",
    ),
    "no tab": (
        "notab.tsv",
        b"a b\tc d\nno tab here\n",
        "line 2 has no tab between source and target; allowed: one source<TAB>target pair a "
        "line (TSV)",
    ),
    "invalid JSON": (
        "bad.jsonl",
        b'{"source": "a", "target": "b"}\n{"source": "a" "target": "b"}\n',
        "line 2 is not valid JSON (Expecting ',' delimiter at column 16); allowed: one "
        '{"source": ..., "target": ...} object a line (JSONL)',
    ),
    "missing key": (
        "nokey.jsonl",
        b'{"source": "a", "target": "b"}\n{"source": "a"}\n',
        'line 2 has no "target"; allowed: one {"source": ..., "target": ...} object a line (JSONL)',
    ),
    "empty source": (
        "emptysource.tsv",
        b"a\tb\n\tb\n",
        "line 2 has an empty source; allowed: one source<TAB>target pair a line (TSV), both "
        "non-empty",
    ),
    "empty target": (
        "emptytarget.tsv",
        b"a\tb\nc\t  \n",
        "line 2 has an empty target; allowed: one source<TAB>target pair a line (TSV), both "
        "non-empty",
    ),
    "not UTF-8": (
        "latin1.tsv",
        b"a\tb\ncaf\xe9\tcafe\n",
        "line 2 is not UTF-8 (byte 0xe9 at byte 4 of the line); allowed: a file in UTF-8",
    ),
    "parallel: line counts differ": (
        "counts",
        {"de": b"ein Hund\nzwei Katzen\n", "en": b"a dog\n"},
        "{path}.en has 1 line, {path}.de 2: not aligned line by line; allowed: two files "
        "{path}.de and {path}.en, aligned line by line (one sentence a line; plain or .gz)",
    ),
    "parallel: a line empty on one side": (
        "one_side",
        {"de": b"ein Hund\n\t\n", "en": b"a dog\ntwo cats\n"},
        "line 2 of {path}.de is empty, but not line 2 of {path}.en; allowed: two files "
        "{path}.de and {path}.en, aligned line by line (one sentence a line; plain or .gz)",
    ),
    "parallel: a file missing": (
        "missing_side",
        {"de": b"ein Hund\n"},
        "no file {path}.en (nor {path}.en.gz); allowed: two files {path}.de and {path}.en, "
        "aligned line by line (one sentence a line; plain or .gz)",
    ),
    "a line of two million characters": (
        "huge.tsv",
        ("".join(f"w {i}\tv {i}\n" for i in range(20)) + "x" * 2_000_000 + "\tv\n").encode(),
        "1 of its 19 train pairs need more than the model's 64 positions (the first at line "
        "21: 2,000,000 characters, more than the 2,048 (32 a position) any tokenizer fits in "
        "them); allowed: model.max_len >= 62501, or data.long_pairs=skip (leaves them out)",
    ),
    "longer than the model": (
        "long.tsv",
        ("".join(f"w {i}\tv {i}\n" for i in range(20)) + f"{LONG}\tv\n").encode(),
        "1 of its 19 train pairs need more than the model's 64 positions (the first at line "
        "21: 70 source and 1 target tokens, plus EOS/BOS); allowed: model.max_len >= 71, or "
        "data.long_pairs=skip (leaves them out)",
    ),
}


def snapshot(root):
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """``({case: (its stderr lines, path)}, outputs_root, files before)``."""
    root = tmp_path_factory.mktemp("bad_data")
    outputs = root / "outputs"
    earlier = outputs / "runs" / "earlier"
    (earlier / "checkpoints").mkdir(parents=True)
    (earlier / "metrics.json").write_text('{"test/bleu": 12.5}\n')
    (earlier / "checkpoints" / "last.ckpt").write_bytes(b"an earlier run's checkpoint")
    before = snapshot(outputs)
    paths, languages = {}, {}
    for case, (name, content, _) in CASES.items():
        paths[case] = root / name
        if isinstance(content, dict):  # parallel files of a prefix, one per language
            languages[case] = ["data.src_lang=de", "data.tgt_lang=en"]
            for lang, text in content.items():
                (root / f"{name}.{lang}").write_bytes(text)
        elif content is not None:
            paths[case].write_bytes(content)
    per_case = []
    for case, path in paths.items():
        data = ["data=pairs", f"data.train_path={path}", "data.tokenizer=word"]
        data += [*languages.get(case, []), "data.val_size=1", "data.test_size=1"]
        result = run_train_here(outputs, *data, cwd=root)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        per_case.append([*errors, f"exit {result.returncode}"])
    return (
        dict(zip(CASES, zip(per_case, paths.values(), strict=True), strict=True)),
        outputs,
        before,
    )


@pytest.mark.parametrize("case", CASES)
def test_a_bad_data_file_is_one_line_naming_file_and_line_and_exit_2(refused, case):
    (lines, path) = refused[0][case]
    message = CASES[case][2].replace("{path}", str(path))
    assert lines == [f"error: data.train_path={str(path)!r}: {message}", "exit 2"]


def test_a_multi30k_folder_without_the_corpus_is_one_line_naming_the_fetch_command(tmp_path):
    outputs = tmp_path / "outputs"
    result = run_train_here(outputs, "data=multi30k", f"paths.data_root={tmp_path}", cwd=tmp_path)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: data.data_dir={str(tmp_path / 'multi30k')!r}: no such folder; allowed: a "
        "folder of Multi30k's files: python -m transformer_lab.data.fetch multi30k downloads "
        "them into ${paths.data_root}/multi30k (docs/multi30k.md: by hand, without a network)"
    ]
    assert result.returncode == 2 and not outputs.exists()


def test_no_folder_is_made_and_the_earlier_run_is_untouched(refused):
    _, outputs, before = refused
    assert snapshot(outputs) == before
    folders = {str(p.relative_to(outputs)) for p in outputs.rglob("*") if p.is_dir()}
    assert folders == {"runs", "runs/earlier", "runs/earlier/checkpoints"}
