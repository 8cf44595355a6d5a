"""`python -m ddlog ...` is the `ddlog` command."""
from ddlog.app.cli import main

raise SystemExit(main())
