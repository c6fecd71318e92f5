"""``python -m pegboard`` runs the command line."""

from pegboard.core.launch import main

main()
