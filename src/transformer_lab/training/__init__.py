"""What Lightning fits: the LightningModule, its loss, metrics and schedules, and the
Trainer's plugins.
"""
