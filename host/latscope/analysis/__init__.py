"""From events to sample tables: the pairing rules (``rules``), where events may have been
lost (``spans``), the rules applied to events batch by batch in bounded memory, their one
implementation (``batch``), the whole-capture analysis, every sample kept (``pairing``),
exact table statistics (``statistics``), live statistics of a running capture (``live``),
the IRQ loop method (``loop``), the worst samples explained (``worst``) and a capture file's
summary and tables (``summary``)."""
