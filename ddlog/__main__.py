"""`python -m ddlog ...` is the `ddlog` command."""
from ddlog.cli import main

raise SystemExit(main())
