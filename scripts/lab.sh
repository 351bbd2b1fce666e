#!/usr/bin/env bash
# Opens JupyterLab on a folder (default notebooks/), bound to 127.0.0.1 with token authentication.
# Usage: scripts/lab.sh BIN [DIR] [extra jupyter lab arguments…]
# JupyterLab refuses to run as root unless told to: add --allow-root only then.
set -euo pipefail
bin=${1:-.venv/bin}
dir=${2:-notebooks}
cd "$(dirname "$0")/.."
args=(--notebook-dir="$dir" --ServerApp.ip=127.0.0.1)
if [ "$(id -u)" = 0 ]; then
  args+=(--allow-root)
fi
exec "$bin/jupyter" lab "${args[@]}" "${@:3}"
