"""The pages step: refresh the cited pages into the cache, and report progress."""
