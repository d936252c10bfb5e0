"""Pure text handling, no I/O: Markdown chunking (:mod:`.chunker`), the text prepared for full-text search
and stemming (:mod:`.preparation`), keyword query analysis (:mod:`.query_analysis`), dates of notes
(:mod:`.note_dates`) and of questions (:mod:`.time_ranges`), speakers (:mod:`.speakers`), the context a chunk
is embedded with (:mod:`.chunk_context`) and citations (:mod:`.citations`)."""
