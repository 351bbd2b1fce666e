"""Copy the class hub's own files into deploy/z2jh-values.yaml, so that the values alone configure the hub
pod: `helm upgrade` with the one values file keeps them (a ``--set-file`` forgotten at an upgrade would
drop them).

    python deploy/z2jh_sync.py           # rewrite the hub.extraFiles entries from the files
    python deploy/z2jh_sync.py --check   # exit 1 if the values hold an older copy (tests/hub/test_z2jh.py)

Run it after any change to deploy/classauth.py or deploy/templates/. The rest of the values file, its
comments included, is left as it is.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VALUES = REPO / "deploy" / "z2jh-values.yaml"
POD_DIR = "/usr/local/etc/jupyterhub/classhub"  # on the hub's PYTHONPATH; the templates below it


def files() -> dict[str, tuple[Path, str]]:
    """extraFiles name → (the file in this repository, where the hub pod mounts it)."""
    found = {"classauth": (REPO / "deploy" / "classauth.py", f"{POD_DIR}/classauth.py")}
    for template in sorted((REPO / "deploy" / "templates").glob("*.html")):
        found[f"template-{template.stem}"] = (template, f"{POD_DIR}/templates/{template.name}")
    return found


def synced(text: str) -> str:
    """The values text with every extraFiles entry holding the current file."""
    from ruamel.yaml import YAML
    from ruamel.yaml.scalarstring import LiteralScalarString

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    values = yaml.load(text)
    extra = values["hub"]["extraFiles"]
    for name, (source, mount) in files().items():
        entry = extra.setdefault(name, {})
        entry["mountPath"] = mount
        entry["stringData"] = LiteralScalarString(source.read_text(encoding="utf-8"))
    out = io.StringIO()
    yaml.dump(values, out)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the values hold the current files")
    args = parser.parse_args(argv)
    text = VALUES.read_text(encoding="utf-8")
    new = synced(text)
    if args.check:
        if new != text:
            print(
                "deploy/z2jh-values.yaml holds an older copy of the hub's files: python deploy/z2jh_sync.py",
                file=sys.stderr,
            )
            return 1
        return 0
    VALUES.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
