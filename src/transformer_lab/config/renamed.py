"""The data settings renamed so that a name says which length it means: a task's length
(words, digits or key-value pairs, in the task's own unit) is ``*_task_len``; the model's
positions stay ``model.max_len``. The one table from the old names to the new: a checkpoint
written before saved the old names (:func:`current_data_settings` maps them), and an old
override on a command line (``data.max_len=5``) is refused naming the new one
(:func:`renamed_data_setting`)."""

RENAMED_DATA_SETTINGS = {
    "min_len": "min_task_len",
    "max_len": "max_task_len",
    "test_long_max_len": "test_long_max_task_len",
    "model_max_len": "model_positions",  # data=pairs: the job passes model.max_len
}


def current_data_settings(saved: dict) -> dict:
    """A checkpoint's saved data settings under this version's names."""
    return {RENAMED_DATA_SETTINGS.get(key, key): value for key, value in saved.items()}


def renamed_data_setting(key: str) -> str | None:
    """The setting to give instead of the dotted ``key`` (``data.max_len`` ->
    ``data.max_task_len``; ``data.model_max_len`` -> ``model.max_len``, which the job
    passes to the data), None if it was not renamed."""
    group, _, name = key.rpartition(".")
    if group != "data" or name not in RENAMED_DATA_SETTINGS:
        return None
    new = RENAMED_DATA_SETTINGS[name]
    return "model.max_len" if new == "model_positions" else f"data.{new}"


def renamed_reason(new: str) -> str:
    """Why an old name is refused, for the error line."""
    return f"now {new} (a task's length is data.*_task_len; model.max_len counts positions)"
