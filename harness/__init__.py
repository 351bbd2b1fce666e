"""What the tests and the benchmarks share (not part of attnlib): ``labdriver`` runs JupyterLab in Chromium."""
