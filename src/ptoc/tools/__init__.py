"""Command implementations behind the ``ptoc`` console script."""
