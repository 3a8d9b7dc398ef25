"""Pure reducers over streamed responses: the seed-001 helpers and one observer per lane."""
