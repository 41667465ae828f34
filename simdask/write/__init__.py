"""What the writer does besides a run's stages: the settings a run uses (:mod:`.settings`),
excluded template texts (:mod:`.exclude`), re-chunking when the exclusions change
(:mod:`.rechunk`) and garbage collection (:mod:`.garbage`)."""
