"""`python -m cogolf` is the same as the `cogolf` command."""

from cogolf.cli import main

raise SystemExit(main())
