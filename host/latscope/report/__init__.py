"""Reports of captures: one results document per capture (``results``) with per-table
sections (``section``), written in every results format (``formats``), a report directory
(``directory``) with its figures (``plots``), and side-by-side comparisons of several
captures (``compare``)."""
