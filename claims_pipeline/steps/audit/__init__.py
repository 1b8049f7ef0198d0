"""The audit step: the audit of every scope as tables, and the headline numbers computed from them."""
