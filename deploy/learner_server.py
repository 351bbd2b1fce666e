"""A learner's single-user server (deploy/jupyterhub_config.py's ``Spawner.cmd``): JupyterHub's, made
not dumpable first, so that the learner's own code (kernels and terminals, which run as the same account)
can neither ptrace it nor read or write its memory through /proc: the server holds the learner's hub token
and is the one process of theirs that listens on 127.0.0.1. It runs only the project's code:
``Spawner.disable_user_config`` keeps the learner's ~/.jupyter out of it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import confine

if __name__ == "__main__":
    confine.not_dumpable()
    sys.path.pop(0)  # the server imports nothing from deploy/
    from jupyterhub.singleuser import main

    sys.exit(main())
