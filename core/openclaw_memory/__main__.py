"""``python -m openclaw_memory`` runs the CLI."""

from openclaw_memory.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
