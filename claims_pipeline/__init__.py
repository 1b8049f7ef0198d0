"""claims_pipeline: re-read the pages a markdown corpus cites and say which figures are gone."""
