"""The transactional core shared by both platforms: records, pages, storage, time, the log writer.

``core`` imports neither platform. Platforms supply addressing (:mod:`.addressing`) and log
space (:mod:`.space`); the core owns the algorithms.
"""
