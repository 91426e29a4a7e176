"""``python -m transformer_lab.papers <figure> [options]``: draw one of the
papers' figures on this lab's models (see the package doc), a PNG and its numbers (.json)."""

import argparse
import sys
from pathlib import Path

from transformer_lab.papers import deepnet_bound, deepnet_update, xiong_fig3


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: not integers separated by commas") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: each must be >= 1")
    return values


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m transformer_lab.papers", description=__doc__)
    figures = main.add_subparsers(dest="figure", required=True)
    xiong = figures.add_parser("xiong_fig3", help="FFN W2 gradient norm by layer at init")
    xiong.add_argument("--depths", type=_ints, default=[2, 4, 6, 8], help="layers per stack")
    xiong.add_argument("--seeds", type=int, default=10, help="seeds 0..n-1 (init and data)")
    xiong.add_argument("--batches", type=int, default=8, help="batches per expected gradient")
    xiong.add_argument("--batch-size", type=int, default=32)
    xiong.add_argument("--d-model", type=int, default=64)
    xiong.add_argument("--out", type=Path, default=Path("docs/xiong_fig3.png"))
    deepnet = figures.add_parser("deepnet_update", help="early model update, then gradients")
    deepnet.add_argument("--depths", type=_ints, default=[2, 6, 12], help="layers per stack")
    deepnet.add_argument("--seeds", type=int, default=5, help="seeds 0..n-1 (init and data)")
    deepnet.add_argument("--steps", type=int, default=30, help="AdamW steps from init")
    deepnet.add_argument("--lr", type=float, default=3e-3, help="constant, no warmup")
    deepnet.add_argument("--d-model", type=int, default=32)
    deepnet.add_argument("--out", type=Path, default=Path("docs/deepnet_update.png"))
    bound = figures.add_parser(
        "deepnet_bound", help="is the model update bounded in depth? (tested, fixed design)"
    )
    bound.add_argument("--out", type=Path, default=Path("docs/deepnet_bound.png"))
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    for name in ("seeds", "steps", "batches", "batch_size"):
        value = getattr(args, name, None)  # deepnet_bound's design is fixed: none of these
        if value is not None and value < (2 if name == "seeds" else 1):
            least = 2 if name == "seeds" else 1
            print(
                f"error: {name}={value}: too few; allowed: an integer >= {least}", file=sys.stderr
            )
            return 2
    if args.figure == "deepnet_bound":
        out = deepnet_bound.run(args.out)
    elif args.figure == "xiong_fig3":
        out = xiong_fig3.run(
            args.out, args.depths, range(args.seeds), args.batches, args.batch_size, args.d_model
        )
    else:
        out = deepnet_update.run(
            args.out, args.depths, range(args.seeds), args.steps, args.lr, args.d_model
        )
    print(f"wrote {out} and {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
