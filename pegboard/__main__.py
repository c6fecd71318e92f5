"""``python -m pegboard`` runs the command line."""

from pegboard.core.cli import main

main()
