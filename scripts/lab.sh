#!/usr/bin/env bash
# Opens JupyterLab on a folder (default notebooks/), bound to 127.0.0.1 with token authentication.
# Usage: scripts/lab.sh BIN [DIR] [extra jupyter lab arguments…]
# JupyterLab refuses to run as root unless told to: add --allow-root only then.
set -euo pipefail
bin=${1:-.venv/bin}
dir=${2:-notebooks}
cd "$(dirname "$0")/.."
# etc/jupyter_server_config.py: kernel websocket without Nagle (live views answer in ms, not 40 ms more)
args=(--notebook-dir="$dir" --ServerApp.ip=127.0.0.1 --config="$PWD/etc/jupyter_server_config.py")
# etc/labconfig/default_setting_overrides.json: JupyterLab's "Jupyter news" pop-up off
export JUPYTER_CONFIG_PATH="$PWD/etc${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
if [ "$(id -u)" = 0 ]; then
  args+=(--allow-root)
fi
exec "$bin/jupyter" lab "${args[@]}" "${@:3}"
