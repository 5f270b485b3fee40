"""From events to sample tables: the pairing rules (``rules``), where events may have been
lost (``spans``), test windows (``windows``), the whole-capture analysis (``pairing``), the
same rules batch by batch in bounded memory (``batch``), exact table statistics
(``statistics``), live statistics of a running capture (``live``), the IRQ loop method
(``loop``), the worst samples explained (``worst``) and a capture file's summary and tables
(``summary``)."""
