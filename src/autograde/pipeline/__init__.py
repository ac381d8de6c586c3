"""The pipeline stages as plain functions over files: ingest, pool, shards, qrels, cover, leaderboards, and the scaffolding of every sharded model job."""
