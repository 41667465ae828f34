"""What is on disk: the SQLite catalog (:mod:`.catalog`), the range-owned zarr shards
(the contract in :mod:`.shards`; the leaf backends: local directories in :mod:`.local_store`,
raw memory-mapped layout in :mod:`.zarr_raw`, URL stores in :mod:`.remote`; the factory in
:mod:`.backends`),
the compressed text packs (:mod:`.text_packs`) and the writer lock (:mod:`.lock`).
"""
