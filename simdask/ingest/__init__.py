"""Documents in: sources (files, folders, JSONL) to (key, bytes, hash) (:mod:`.sources`), text
extraction per format (:mod:`.extract`), and the corpus generator (:mod:`.synth`).
"""
