"""Where a run executes: cluster settings (:mod:`.spec`), connecting to or starting a cluster
and its failures (:mod:`.connect`), data placement (:mod:`.placement`), traffic counting
(:mod:`.transfer`), the worker-side shard cache (:mod:`.worker_cache`) and the workers a
scheduler has now (:mod:`.workers`).
"""
