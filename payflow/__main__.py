"""`python -m payflow` is the `payflow` command."""

from payflow.cli import main

main()
