"""The Markdown files and transcripts in a workspace: finding them (:mod:`.discovery`), opening them safely
(:mod:`.safe_fs`), appending and rewriting them (:mod:`.append`, :mod:`.memory_writes`, :mod:`.records`),
session transcripts (:mod:`.sessions`) and each session's flush counters (:mod:`.session_state`)."""
