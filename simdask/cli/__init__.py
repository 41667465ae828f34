"""The ``simdask`` command: argument parsing and printing only; the work is in the API."""

from simdask.cli.main import main

__all__ = ["main"]
