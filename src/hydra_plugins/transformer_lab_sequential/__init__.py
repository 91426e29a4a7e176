"""transformer_lab's Hydra sweeper ``hydra/sweeper=sequential``: seeds until decided."""
