"""Basics every part may use: text made safe to show, URL forms, and stopping a run when told to. Imports nothing else of the project."""
