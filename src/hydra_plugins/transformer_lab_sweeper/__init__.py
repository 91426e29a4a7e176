"""transformer_lab's Hydra sweeper plugin: Hydra instantiates a sweeper only from a module of
the ``hydra_plugins`` namespace, which it scans (imports) at every start."""
