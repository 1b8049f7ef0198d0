"""The worklist step: a cost-bounded, fetch-free sample of claims for a reviewer or a judge."""
