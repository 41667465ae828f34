"""Test helpers: generated corpora, real cluster processes, documents of every format."""
