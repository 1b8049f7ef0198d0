"""The settings (validated config files with defaults) and the home folder's layout."""
