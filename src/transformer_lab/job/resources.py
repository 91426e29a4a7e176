"""What a job will hold in memory, estimated from the check's meta-device build before
anything is allocated, against what the machine has: a run that cannot fit is refused in
one line (``model.d_model=100000`` would otherwise try a 120 GB allocation, and
``data.batch_size=10**9`` would grow to gigabytes before anything refused it).

The estimate has three parts, each from what the check built on the meta device:

- **the model**: its parameters, each with its gradient and AdamW's two moments, all float32:
  16 bytes a parameter (exact);
- **a training batch's activations**: what autograd saves for the backward pass of a
  teacher-forced step of the network and the loss, counted in a pass of the meta-device
  model over a batch of ``data.batch_size`` examples (no more than the training split
  holds) at the data's longest lengths, each saved tensor once (a view with its base), the
  parameters left out (counted above), at float32 (a bf16-mixed run saves some in half:
  the estimate is then up to twice its part), within a few percent of what a real pass saves
  (tests/job/test_resources.py);
- **the data's splits**, where the datamodule knows their sizes: their id tensors.

Left out, so that what is refused surely cannot fit: the backward pass's transient
gradients, the framework's own memory, a DataLoader's workers. The machine's memory is
what the host has available (``MemAvailable``, within the process's cgroup limit), or for
a CUDA run what the device has free; per process of a DDP run, whose processes each hold a
replica (FSDP shards the model's part across its devices).
"""

from dataclasses import replace
from pathlib import Path

import torch
from omegaconf import DictConfig

from transformer_lab.config.validation import ConfigError
from transformer_lab.private_apis import view_base
from transformer_lab.tokens import FIRST_CONTENT
from transformer_lab.training.loss import token_nll

BYTES_PER_PARAMETER = 4 + 4 + 8  # float32 weight, its gradient, AdamW's exp_avg and exp_avg_sq
GB = 1e9


def parameter_count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def activation_bytes(model: torch.nn.Module, rows: int, src_len: int, tgt_len: int) -> int:
    """What autograd saves for backward in a teacher-forced pass of ``model`` and the loss
    over ``rows`` examples of ``src_len``/``tgt_len`` positions: each saved tensor's base
    once, the parameters left out. ``model`` is on the meta device (or small: the pass is
    real elsewhere)."""
    device = next(model.parameters()).device
    parameters = {id(p) for p in model.parameters()}
    saved: dict[int, torch.Tensor] = {}  # id -> the base, kept alive so ids stay distinct

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        base = view_base(tensor)
        if id(base) not in parameters:
            saved[id(base)] = base
        return tensor

    src = torch.full((rows, src_len), FIRST_CONTENT, device=device)
    tgt = torch.full((rows, tgt_len), FIRST_CONTENT, device=device)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        logits = model.forward(src, tgt)  # forward: a compiled model's own, uncompiled
        token_nll(logits, tgt)
    return sum(t.numel() * t.element_size() for t in saved.values())


def cached_activation_bytes(model, rows: int, src_len: int, tgt_len: int, known: dict) -> int:
    """:func:`activation_bytes`, once per network and batch shape among the estimates
    ``known`` (a sweep's check keeps one for all its jobs). A network is its settings
    (``model.config``) without its seed, its dtype and its mode: what autograd saves does
    not depend on the weights' values, nor on the optimisation. So a sweep's jobs that
    differ only in their seed, learning rate or schedule share one estimate (the
    ``regime`` grid: 15 networks for 864 jobs, where each of its 108 optimisation
    settings had been estimated again, half of its check's time)."""
    network = repr(replace(model.config, init_seed=None))
    key = (network, next(model.parameters()).dtype, model.training, rows, src_len, tgt_len)
    if key not in known:
        known[key] = activation_bytes(model, rows, src_len, tgt_len)
    return known[key]


def split_bytes(datamodule) -> int:
    """The id tensors of the splits (``src``, ``tgt_in``, ``tgt_out`` at the longest
    length, int64), where the settings give the splits' sizes; 0 where they do not."""
    sizes = [
        datamodule.hparams.get(f"{name}_size") for name in ("train", "val", "test", "test_long")
    ]
    examples = sum(size for size in sizes if isinstance(size, int))
    return examples * 3 * datamodule.max_seq_len * 8


def _read_bytes(path: Path) -> int | None:
    try:
        text = path.read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(text) if text.isdigit() else None  # cgroup v2 writes "max" for no limit


def host_bytes_available() -> int | None:
    """The host memory a new allocation can get: ``MemAvailable``, within the limit of
    this process's cgroup (v2 or v1) less what it uses; None where neither is readable."""
    available = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    for limit, usage in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        limited, used = _read_bytes(Path(limit)), _read_bytes(Path(usage))
        if limited is not None and used is not None and limited < 2**62:  # v1: no limit
            available.append(max(0, limited - used))
    return min(available) if available else None


def _on_cuda(trainer: DictConfig) -> bool:
    accelerator = trainer.get("accelerator", "auto")
    return accelerator in ("gpu", "cuda") or (accelerator == "auto" and torch.cuda.is_available())


def machine_bytes(trainer: DictConfig) -> tuple[int | None, str]:
    """The memory one process of the run can use, and what it is."""
    if _on_cuda(trainer):
        free, _ = torch.cuda.mem_get_info()
        return free, "free on the GPU"
    return host_bytes_available(), "available on this machine"


def _processes(trainer: DictConfig) -> int:
    """The processes of a CPU run that each hold a replica (DDP on CPU: one per device)."""
    devices = trainer.get("devices", 1)
    return devices if isinstance(devices, int) and devices > 1 else 1


def _sharded_over(trainer: DictConfig) -> int:
    """The devices FSDP shards the model's part over (1: not sharded)."""
    strategy = trainer.get("strategy", "auto")
    fsdp = "fsdp" in str(strategy.get("_target_", "") if hasattr(strategy, "get") else strategy)
    devices = trainer.get("devices", 1)
    return devices if fsdp and isinstance(devices, int) and devices > 1 else 1


def _sizes(cfg: DictConfig) -> str:
    model = cfg.model
    keys = ("d_model", "d_ff", "num_encoder_layers", "num_decoder_layers")
    return ", ".join(f"model.{key}={model[key]}" for key in keys)


def check_resources(cfg: DictConfig, datamodule, module, known: dict | None = None) -> None:
    """ConfigError in one line when the run's estimated memory exceeds the machine's, the
    parts and the settings that set the largest named; nothing where the machine's memory
    cannot be read. ``datamodule`` and ``module`` are the check's meta-device build;
    ``known``, the activations a sweep's check estimated for its earlier jobs."""
    available, where = machine_bytes(cfg.trainer)
    if available is None:
        return
    train_size = datamodule.hparams.get("train_size")
    rows = datamodule.batch_size
    if isinstance(train_size, int):
        rows = min(rows, train_size)
    length = datamodule.max_seq_len
    parameters = parameter_count(module.model)
    parts = {
        "model": parameters * BYTES_PER_PARAMETER / _sharded_over(cfg.trainer),
        "activations": cached_activation_bytes(
            module.model, rows, length, length, {} if known is None else known
        ),
        "data": 0 if _on_cuda(cfg.trainer) else split_bytes(datamodule),
    }
    processes = 1 if _on_cuda(cfg.trainer) else _processes(cfg.trainer)
    needed = sum(parts.values()) * processes
    if needed <= available:
        return
    largest = max(parts, key=parts.get)
    fix = {
        "model": f"a smaller model ({_sizes(cfg)})",
        "activations": f"a smaller batch (data.batch_size={cfg.data.batch_size}) or model",
        "data": f"fewer examples (data.train_size={datamodule.hparams.get('train_size')})",
    }[largest]
    times = f" x {processes} processes" if processes > 1 else ""
    raise ConfigError(
        f"memory: the run needs about {needed / GB:.1f} GB{times} and {available / GB:.1f} GB "
        f"is {where}: the model's {parameters / 1e6:,.1f} M parameters "
        f"{parts['model'] / GB:.1f} GB (weights, gradients and AdamW's moments), a training "
        f"batch of {rows:,} examples at {length} positions {parts['activations'] / GB:.1f} GB "
        f"of activations, the data's splits {parts['data'] / GB:.1f} GB; allowed: a run "
        f"that fits, by {fix}"
    )
