"""One run as Dask graphs, thin: the run driver (:mod:`.run`), what every stage gets from the
run (:mod:`.context`: ``RunContext``, ``RunOptions``, ``task_key``), the one stage contract and
its driver (:mod:`.stage`), the stages with their task functions (:mod:`.chunk_stage`,
:mod:`.merge_stage`, :mod:`.similarity_stage`); the two-group comparison that drives a run is
:mod:`simdask.comparison`.
"""
