"""One job around a fit: build from the config, check it, resume, run and record."""
