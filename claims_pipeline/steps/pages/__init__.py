"""The pages step: refresh the cited pages into the cache, report progress, and say why a page is unreadable."""
