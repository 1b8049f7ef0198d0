"""The settings sections, one module per section or group of sections (claims_pipeline/config/settings.py
imports them all)."""
