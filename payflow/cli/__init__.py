"""The `payflow` command line."""

def main() -> None:
    raise SystemExit("payflow: not built yet")
