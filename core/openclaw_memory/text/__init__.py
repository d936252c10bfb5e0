"""Pure text handling, no I/O: Markdown chunking (:mod:`.chunker`), the text prepared for full-text search
and stemming (:mod:`.preparation`), keyword query analysis (:mod:`.query_analysis`), dates of notes
(:mod:`.note_dates`) and of questions (:mod:`.time_ranges`), speakers (:mod:`.speakers`) and citations
(:mod:`.citations`)."""
