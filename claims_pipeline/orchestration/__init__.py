"""Dagster outside the definitions: the instance (its template ships in this package), the batching event log,
and the in-process runner the CLI uses to launch the same jobs the UI launches."""
