"""Pure numpy kernels, no I/O and no Dask: words and chunks (:mod:`.words`), chunk IDs
(:mod:`.hashing`), CSR postings and their merge (:mod:`.postings`), shared-chunk counting
(:mod:`.similarity`).
"""
