"""Talk to a trained model: its outputs for inputs of your own, one a line::

    echo "jump twice" | python -m transformer_lab.generate ckpt_path=<run folder or .ckpt>
    python -m transformer_lab.generate ckpt_path=<run> input=inputs.txt decoding=beam format=jsonl

(also ``tlab-generate``). The checkpoint alone rebuilds the model and how the task's text
reads as ids (the datamodule's codecs: the numbers of the synthetic tasks, the research
tasks' words, the tokenizer a ``data=pairs`` run learnt), so no data file is needed.
Inputs are in the task's own words, as the sample tables print them. Decoding is greedy,
beam search or sampling (:mod:`transformer_lab.model.decoding`); each output is printed
on its own line, in the order of the inputs, or as JSON lines with the output's
log-probability under the model. A line that cannot be read (an unknown word, more tokens
than the model has positions) is reported on stderr with its number, its output line is
left empty, the rest are decoded, and the exit status is 2. What a learnt tokenizer
(``data=pairs``) reads as ``<unk>`` is decoded, and named in a warning on stderr with the
line's number (and as ``unseen`` in JSON lines): never silently. The settings are
``conf/generate.yaml``, read like evaluate's.
"""

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.entry_command import EvaluationError, configure, refuse, usage
from transformer_lab.config.validation import (
    InvalidSetting,
    check_choice,
    check_integer,
    check_number,
)
from transformer_lab.console import quiet_library_notices
from transformer_lab.data.codec import Codec
from transformer_lab.data.examples import padded
from transformer_lab.data.pairs_reading import CHARS_PER_POSITION
from transformer_lab.data.text_lines import clean, lines_of
from transformer_lab.model.decoding import beam_search, check_beam_search, greedy, sample
from transformer_lab.model.scoring import sequence_log_probs
from transformer_lab.runs.checkpoint import find_checkpoint, load
from transformer_lab.tokens import EOS

DECODINGS = ("greedy", "beam", "sample")
FORMATS = ("text", "jsonl")
PATHS = ("ckpt_path", "input")  # taken as typed


@dataclass
class Line:
    """One input line: its number (from 1), its text, and its ids, or why it has none."""

    number: int
    text: str
    ids: list[int] | None = None
    error: str | None = None
    unseen: list[str] = field(default_factory=list)  # pieces read as <unk>
    output: str = ""
    tokens: int = 0  # generated, EOS included
    ended: bool = False  # the output ended with EOS (not cut at max_new_tokens)
    log_prob: float = 0.0


def read_lines(source: str) -> list[str]:
    """The lines of the file ``source``, or of standard input for ``-``: read the same way,
    as bytes, those that are not UTF-8 as U+FFFD (:func:`~.data.text_lines.lines_of`)."""
    if source == "-":
        stdin = getattr(sys.stdin, "buffer", None)  # a text stream without one: tests
        return lines_of(stdin.read() if stdin else sys.stdin.read().encode())
    path = Path(source)
    if not path.is_file():
        raise EvaluationError(f"input={source!r}: no such file; allowed: a file of inputs, or -")
    return lines_of(path.read_bytes())


def encoded(texts: list[str], codec: Codec, max_len: int) -> list[Line]:
    """Every line with its source ids (before EOS), or the reason it cannot be a source;
    and what of it a learnt tokenizer (``data=pairs``) reads as ``<unk>``. (The tasks' own
    codecs refuse what they cannot read; a learnt tokenizer has an ``<unk>`` the model was
    trained with, for what its training file lacked or its vocabulary left out.) A line is
    read as the training files were (:func:`~.data.text_lines.clean`: a tab a space); one of
    more characters than the model's positions can hold is refused without tokenizing it."""
    unseen = getattr(codec, "unseen", None)
    lines = []
    for number, text in enumerate(texts, start=1):
        line = Line(number, text)
        source = clean(text).strip()
        if len(source) > max_len * CHARS_PER_POSITION:
            line.error = (
                f"{len(source):,} characters, more than the model's {max_len} positions hold "
                f"({CHARS_PER_POSITION} a position)"
            )
            lines.append(line)
            continue
        if unseen is not None:
            line.unseen = unseen(source)
        try:
            ids = codec.encode(source)
        except ValueError as error:
            line.error = str(error)
        else:
            if not ids:
                line.error = "no tokens (an empty line)"
            elif len(ids) + 1 > max_len:
                line.error = (
                    f"{len(ids)} tokens and EOS need more than the model's {max_len} positions"
                )
            else:
                line.ids = ids
        lines.append(line)
    return lines


def check_settings(cfg: DictConfig, model) -> int:
    """EvaluationError for the first setting that cannot decode; the ``max_new_tokens``."""
    try:
        check_choice("decoding", cfg.decoding, DECODINGS)
        check_choice("format", cfg.format, FORMATS)
        check_choice("device", cfg.device, ("auto", "cpu", "cuda"))
        check_integer("batch_size", cfg.batch_size, minimum=1)
        if cfg.max_new_tokens is not None:
            check_integer("max_new_tokens", cfg.max_new_tokens, minimum=1, maximum=model.max_len)
        if cfg.decoding == "beam":
            check_beam_search(model, cfg.beam_size, cfg.length_penalty)
        if cfg.decoding == "sample":
            check_number("temperature", cfg.temperature, above=0)
            check_integer("top_k", cfg.top_k, minimum=0)
            check_integer("seed", cfg.seed, minimum=0)
    except (InvalidSetting, ValueError) as error:
        raise EvaluationError(str(error)) from None
    return cfg.max_new_tokens or model.max_len


def decode(model, src: torch.Tensor, cfg: DictConfig, max_new: int, seed: int) -> torch.Tensor:
    """``[B, <= 1 + max_new]`` from BOS by the configured search (``seed``: sampling's)."""
    if cfg.decoding == "beam":
        return beam_search(model, src, cfg.beam_size, max_new, cfg.length_penalty)
    if cfg.decoding == "sample":
        return sample(model, src, max_new, cfg.temperature, cfg.top_k, seed)
    return greedy(model, src, max_new)


def generate(cfg: DictConfig) -> list[Line]:
    """Every input line of ``cfg.input``, decoded where it could be read."""
    if OmegaConf.is_missing(cfg, "ckpt_path"):
        raise EvaluationError(
            "ckpt_path is required: python -m transformer_lab.generate ckpt_path=<run folder "
            "or .ckpt> [input=<file>]"
        )
    module, datamodule, _ = load(find_checkpoint(cfg.ckpt_path, cfg.test_weights))
    model = module.model
    max_new = check_settings(cfg, model)
    if cfg.device == "auto":
        model.to("cuda" if torch.cuda.is_available() else "cpu")
    else:
        model.to(cfg.device)
    lines = encoded(read_lines(cfg.input), datamodule.src_codec, model.max_len)
    readable = sorted((line for line in lines if line.ids), key=lambda line: len(line.ids))
    # batches of similar lengths, little padding; a sampled line alone, drawing from
    # seed + its number, so that its sample does not depend on the other lines
    size = 1 if cfg.decoding == "sample" else cfg.batch_size
    for start in range(0, len(readable), size):
        chunk = readable[start : start + size]
        src = padded([line.ids for line in chunk], [[] for _ in chunk])[0]
        src = src.to(next(model.parameters()).device)
        out = decode(model, src, cfg, max_new, cfg.seed + chunk[0].number)  # [B, <= 1 + max_new]
        scores = sequence_log_probs(model, src, out).tolist()
        for line, tokens, score in zip(chunk, out[:, 1:].tolist(), scores, strict=True):
            line.output = datamodule.tgt_codec.decode(tokens)
            line.ended = EOS in tokens
            line.tokens = tokens.index(EOS) + 1 if line.ended else len(tokens)
            line.log_prob = score
    return lines


def record(line: Line) -> dict:
    """One line of ``format=jsonl``."""
    if line.error:
        return {"line": line.number, "input": line.text, "error": line.error}
    unseen = {"unseen": line.unseen} if line.unseen else {}
    return {
        "line": line.number,
        "input": line.text,
        "output": line.output,
        "tokens": line.tokens,
        "ended": line.ended,
        "log_prob": round(line.log_prob, 6),
        **unseen,
    }


def cli(argv: list[str] | None = None) -> None:
    """``tlab-generate`` and ``python -m transformer_lab.generate``: a setting that cannot
    decode is one ``error:`` line and exit status 2; so is each line that cannot be read,
    after the others are printed."""
    argv = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(argv):
        print(usage("generate", "tlab-generate", " < inputs"), end="")
        return
    try:
        cfg = configure(argv, "generate", PATHS)
        quiet_library_notices()
        lines = generate(cfg)
    except EvaluationError as error:
        refuse(error)
    for line in lines:
        if line.error:
            print(f"error: line {line.number}: {line.error}", file=sys.stderr)
        elif line.unseen:
            pieces = ", ".join(repr(piece) for piece in line.unseen)
            print(
                f"warning: line {line.number}: unseen in training, read as <unk>: {pieces}",
                file=sys.stderr,
            )
        print(json.dumps(record(line)) if cfg.format == "jsonl" else line.output, flush=True)
    if any(line.error for line in lines):
        sys.exit(2)


if __name__ == "__main__":
    cli()
