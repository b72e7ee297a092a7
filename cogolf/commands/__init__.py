"""Subcommands of the `cogolf` CLI, one module each."""
