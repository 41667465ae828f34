"""One run as Dask graphs, thin: the run driver (:mod:`.run`), the stage drivers
(:mod:`.chunk_stage`, :mod:`.merge_stage`, :mod:`.similarity_stage`), the task functions they
submit (:mod:`.tasks`) and the two-group comparison (:mod:`.compare`).
"""
