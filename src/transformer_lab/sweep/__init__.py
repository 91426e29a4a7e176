"""The multirun around the jobs: the pre-start check, the sweep's record for its jobs, the
parallel launcher's side, threads, naming, the summary and the optimizer's objective.
"""
