"""Reports of captures: one results document per capture, written as text, Markdown, HTML,
CSV and JSON (``results``), its figures (``plots``) and side-by-side comparisons of several
captures (``compare``)."""
