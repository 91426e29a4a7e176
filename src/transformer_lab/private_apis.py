"""Every private API of another library the lab uses, in one place, each with why no public
one does: the rest of the lab calls these functions, never the private names, and
``tests/test_private_apis.py`` holds each to the library versions ``pyproject.toml`` allows,
so that a new version that moves one fails there, by name, rather than in a study or a
benchmark.

- **Optuna** (2.10, which hydra-optuna-sweeper pins below 3): a study's storage, a trial's
  id in it and the study's id have no public accessor. The shared study records heartbeats
  and reads a trial's state in the storage itself, which the study's per-process cache
  (``_CachedStorage``) has not seen change; the pruning callback opens a trial it did not
  ask for, by its number, in the job's process.
- **hydra-optuna-sweeper** (1.2, 1.3): its sweeper is ``_impl.OptunaSweeperImpl``, whose loop
  the shared study replaces while keeping its search space, trial overrides and results
  file (its ``_process_searchspace_config``, ``_parse_sweeper_params_config``,
  ``_get_directions``, ``_configure_trials``), and ``create_params_from_overrides`` parses
  a sweep's overrides into Optuna distributions.
- **torch** (2.4 to 2.13): a view's ``_base``, the tensor whose memory it views, named in
  PyTorch's note on tensor views but private by name; the check of a run's memory counts
  what autograd saves once per base, on the meta device, where no data pointer tells two
  tensors' memory apart.
- **torch.profiler** (2.4 to 2.13): the memory events of a profile, each with its time and
  bytes, are only in ``prof.profiler.kineto_results``; the public ``events()`` aggregates
  memory per operator, without the running total whose peak the benchmark reports.
- **Hydra** (1.3): a job's records (``.hydra/config.yaml``, ``hydra.yaml``,
  ``overrides.yaml``) are written by ``hydra.core.utils._save_config`` with a plain
  ``open(..., "w")`` before the job's function runs, and no hook precedes it; the lab puts
  an atomic write in its place (:mod:`transformer_lab.config.hydra_saves`), pinned by
  tests/config/test_hydra_saves.py.
- **OmegaConf** (2.3): ``OmegaConf.load`` reads YAML with the loader of
  ``omegaconf._utils.get_yaml_loader`` (YAML 1.2's floats such as ``1e-3``, no timestamps,
  a duplicate key refused) on PyYAML's pure-Python parser; no public API takes another
  parser. The lab's records reader puts libyaml's under the same loader
  (:data:`transformer_lab.records.CONFIG_LOADER`), ~10 times faster to parse.

Optuna and the sweeper are an optional extra (``tune``), so they are imported where used.
"""


def storage_of(study):
    """The storage the study ``study`` (an ``optuna.Study``) reads and writes."""
    return study._storage


def uncached_storage(study):
    """The storage under the study's per-process cache, where a trial another process
    ended is seen ended (the cache of Optuna 2.10's RDB storage is ``_CachedStorage``)."""
    storage = study._storage
    return getattr(storage, "_backend", storage)


def trial_id(trial) -> int:
    """The storage's id of ``trial`` (an ``optuna.Trial``): what its records are keyed by."""
    return trial._trial_id


def trial_id_of_number(study, number: int) -> int:
    """The storage's id of the trial numbered ``number`` in ``study``."""
    return study._storage.get_trial_id_from_study_id_trial_number(study._study_id, number)


def optuna_sweeper_class() -> type:
    """hydra-optuna-sweeper's sweeper class, which the shared study subclasses."""
    from hydra_plugins.hydra_optuna_sweeper._impl import OptunaSweeperImpl

    return OptunaSweeperImpl


def params_from_overrides(overrides: list[str]):
    """``(search space, fixed values)`` of a sweep's overrides, as the sweeper parses them."""
    from hydra_plugins.hydra_optuna_sweeper._impl import create_params_from_overrides

    return create_params_from_overrides(overrides)


def view_base(tensor):
    """The tensor whose memory ``tensor`` views, or ``tensor`` itself if it owns it."""
    return tensor._base if tensor._base is not None else tensor


def profiled_events(prof) -> list:
    """The events a ``torch.profiler.profile`` recorded, the ``[memory]`` ones each with its
    ``start_ns()`` and ``nbytes()``."""
    return prof.profiler.kineto_results.events()


def replace_hydra_job_save(save) -> None:
    """Hydra writes each job's records through ``save(cfg, filename, output_dir)`` from now
    on, in this process."""
    import hydra.core.utils

    hydra.core.utils._save_config = save


def omegaconf_yaml_loader() -> type:
    """The PyYAML loader class ``OmegaConf.load`` reads a file with."""
    from omegaconf._utils import get_yaml_loader

    return get_yaml_loader()
