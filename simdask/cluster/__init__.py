"""Where a run executes: cluster settings (:mod:`.spec`), connecting to or starting a cluster
and its failures (:mod:`.connect`), data placement (:mod:`.placement`), traffic counting
(:mod:`.transfer`) and the worker-side shard cache (:mod:`.worker_cache`).
"""
