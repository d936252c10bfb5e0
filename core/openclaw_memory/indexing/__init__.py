"""Turning the files into an index: the sync plan and its run (:mod:`.sync`), the index fingerprint
(:mod:`.fingerprint`), line units embedded beside each chunk (:mod:`.line_units`), the bundled model's
two-tier first index (:mod:`.two_tier`) and a sync's progress (:mod:`.progress`)."""
