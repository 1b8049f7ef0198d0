"""The steps of an audit, one module or package each, between the core libraries and the Dagster layer."""
