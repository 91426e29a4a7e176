"""What a run leaves in its folder, written by a job and read by the sweep and the report:
the layout, the records (environment.json, HPARAMS, a sweep's sweep.json) and the one reader.
"""
