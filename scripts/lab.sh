#!/usr/bin/env bash
# Opens JupyterLab on notebooks/, bound to 127.0.0.1 with token authentication.
# JupyterLab refuses to run as root unless told to: add --allow-root only then.
set -euo pipefail
bin=${1:-.venv/bin}
cd "$(dirname "$0")/.."
args=(--notebook-dir=notebooks --ServerApp.ip=127.0.0.1)
if [ "$(id -u)" = 0 ]; then
  args+=(--allow-root)
fi
exec "$bin/jupyter" lab "${args[@]}" "${@:2}"
