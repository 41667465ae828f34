"""What is on disk: the SQLite catalog (:mod:`.catalog`), the range-owned zarr shards
(:mod:`.shards`, raw memory-mapped layout in :mod:`.zarr_raw`, URL stores in :mod:`.remote`),
the compressed text packs (:mod:`.text_packs`) and the writer lock (:mod:`.lock`).
"""
