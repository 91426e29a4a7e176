"""Where the tests find the real corpora's copies (never in the repository): Multi30k's raw
files in ``$TLAB_MULTI30K``, else ``<repository>/../shared/data/multi30k``, as these machines
keep them. A test that needs them is marked :data:`needs_multi30k`: skipped, with the reason,
where they are absent."""

import os
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
MULTI30K = Path(os.environ.get("TLAB_MULTI30K", REPOSITORY.parent / "shared" / "data" / "multi30k"))
HAVE_MULTI30K = (MULTI30K / "train.de.gz").is_file()
NO_MULTI30K = (
    f"Multi30k's raw files are not in {MULTI30K} (set TLAB_MULTI30K to their folder, or "
    "python -m transformer_lab.data.fetch multi30k)"
)
needs_multi30k = pytest.mark.skipif(not HAVE_MULTI30K, reason=NO_MULTI30K)
