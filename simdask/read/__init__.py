"""Reading an index: a range's live segments and a query's posting lists
(:mod:`.segment_reads`), a query's matches (:mod:`.query_matches`), the chunks ``max_df``
leaves out (:mod:`.doc_freq`), pairs for people (:mod:`.undirected_pairs`), the most widely
shared passages (:mod:`.boilerplate_passages`) and the MinHash LSH searches
(:mod:`.lsh_search`). No dask."""
