"""Run a learner's command under the class's filter: ``python deploy/confined.py COMMAND ARG...``.

Learners' kernels (the kernelspec deploy/classhub.py writes) and terminals (deploy/jupyterhub_config.py)
start through this file, as the learner, inside their server's confinement: it installs
``confine.deny_ip_sockets`` (no IP socket, no ptrace, no io_uring; inherited by everything the command
starts, and never removable) and then becomes COMMAND. Learner code therefore never listens on an address
a browser reaches, nor reaches the hub's API, the proxy's or another server.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import confine

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: confined.py COMMAND [ARG...]")
    confine.deny_ip_sockets()
    os.execvp(sys.argv[1], sys.argv[1:])
