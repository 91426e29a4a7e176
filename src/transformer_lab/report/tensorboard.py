"""The report inside TensorBoard: ``<sweep>/report/`` holds an event file with the report's
tables as text and its figures as images, so ``tensorboard --logdir <sweep>`` shows a run
named ``report`` beside the jobs. It is no job (no ``.hydra/``), so the report's own sweep
reader passes over it.
"""

from pathlib import Path

from matplotlib.image import imread
from torch.utils.tensorboard import SummaryWriter

RUN = "report"


def write_tensorboard(sweep: Path, tables: str, figures: list[tuple[str, str]]) -> Path:
    """Write ``tables`` (markdown) and the PNGs ``[(caption, file in sweep)]`` as the run
    ``report``, replacing what an earlier report wrote there."""
    folder = sweep / RUN
    for old in folder.glob("events.out.tfevents.*"):
        old.unlink()
    with SummaryWriter(str(folder)) as writer:
        writer.add_text("report/tables", tables, 0)
        for caption, file in figures:
            image = imread(sweep / file)[..., :3]  # [H, W, 3] floats in 0..1 (PNG drops alpha)
            writer.add_image(f"report/{Path(file).stem}", image, 0, dataformats="HWC")
            writer.add_text(f"report/{Path(file).stem}/caption", caption, 0)
    return folder
